# budget: 400
# #14: a second round of the matmul suites on the session's final code (as w43), the 2-thread
# suite twice.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
bash tools/device/matmul_suites.sh "$OUT"
timeout 170 python3 -m bench matmul --threads 2 --json "$OUT/matmul-2b.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
