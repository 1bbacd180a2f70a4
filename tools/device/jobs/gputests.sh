# budget: 170
# Every GPU-marked test (regression guard for the CUDA backend after CPU-side changes).
timeout 160 python3 -m pytest -q -m gpu -p no:cacheprovider -x --maxfail=20 tests 2>&1 | tail -25
