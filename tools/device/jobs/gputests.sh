# budget: 320
# Every GPU-marked test (regression guard for the CUDA backend after CPU-side changes); the
# whole suite takes 3-5 minutes on an H100 (test_cuda_ops alone ~1500 cases).
set -o pipefail
timeout 310 python3 -m pytest -q -m gpu -p no:cacheprovider -x --maxfail=20 tests 2>&1 | tail -25
