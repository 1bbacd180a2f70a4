# budget: 300
# #14: the final tree's matmul suites at 16 and 2 threads once more (a second machine after
# round w19), to see how far the 16-thread result moves.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
bash tools/device/matmul_suites.sh "$OUT"
