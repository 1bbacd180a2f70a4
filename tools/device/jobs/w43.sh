# budget: 480
# #14: the committed tree (AMX panels of 256 x 2048, tasks dealt from 2 threads, misaligned a
# copied from 2 column pairs as before): the AMX bits tests, then the matmul suites (16 and 2
# threads) for the README's tables.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 120 python3 -m pytest -q -x -p no:cacheprovider tests/test_gemm_amx.py tests/test_gemm_paths.py 2>&1 | tail -2
bash tools/device/matmul_suites.sh "$OUT"
