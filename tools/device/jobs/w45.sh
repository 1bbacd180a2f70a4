# budget: 480
# #14 and CI: the tree after CI's trim (one smaller permute test shape, bench smoke runs without
# pauses) on the 16-core AMX host: the AMX and gemm tests (the test helper mended last session
# had run only where the tiles skip), then the whole CPU suite (GPU tests skip: built without
# CUDA), so the 16-thread machine sees every test too.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_amx.py tests/test_gemm_paths.py \
  tests/test_gemm_dealt.py 2>&1 | tail -3
timeout 330 python3 -m pytest -q -p no:cacheprovider -m "not gpu" --durations=15 tests 2>&1 \
  | grep -v "^SKIPPED\|^\.\+ *\[" | tail -40
