# budget: 480
# Ran against commit c72943e (mul_mat_ndeal.h dealing every call: bench/results/
# mmndeal-xeon-w28-w32.txt); later commits deal only while the static split is seen to lag.
# #14: round w29's suites again on another machine (mul_mat_ndeal.h): 2 threads twice, 16 once.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
for r in 1 2; do
  timeout 170 python3 -m bench matmul --threads 2 --json "$OUT/matmul-2-r$r.json" 2>&1 \
    | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
done
timeout 110 python3 -m bench matmul --threads 16 --json "$OUT/matmul-16.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
