# budget: 300
# #14: the committed thin tasks (MM_THIN_NMAX 64) through the package's matmul suites at 16
# and 2 threads once more (round w21 ran them with 96; the suite's shapes take the same paths).
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
bash tools/device/matmul_suites.sh "$OUT"
