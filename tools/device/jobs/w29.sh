# budget: 560
# Ran against commit c72943e (mul_mat_ndeal.h dealing every call: bench/results/
# mmndeal-xeon-w28-w32.txt); later commits deal only while the static split is seen to lag.
# #14: the package with mul_mat_ndeal.h (2..4 threads: tasks dealt, one operand whole per
# thread): its tests on the host, then the matmul suites at 2, 4 and 16 threads.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_ndeal.py tests/test_gemm_dealt.py \
  tests/test_gemm_thin.py 2>&1 | tail -3
timeout 170 python3 -m bench matmul --threads 2 --json "$OUT/matmul-2.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
timeout 110 python3 -m bench matmul --threads 4 --json "$OUT/matmul-4.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
timeout 110 python3 -m bench matmul --threads 16 --json "$OUT/matmul-16.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
