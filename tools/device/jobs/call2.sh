# budget: 200
# issue 14 (2026-11-29, last round): evaluate's fast path with number operands and the FP
# warnings' caller lines, on the host's Python 3.12: the tests at each level, and bench
# graph at 2 threads once more.
set -u
OUT=$1
export PYTHONPATH=.:${PYTHONPATH:-}
for lv in avx2 avx512; do
  GGML_CY_CPU_FEATURES=$lv timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_expr_call.py \
    tests/test_expr_reliability.py tests/test_eco_numexpr.py tests/test_eager_fpe.py tests/test_graph_fused.py 2>&1 | tail -1
done
timeout 60 python3 -m bench graph --threads 2 --json "$OUT/graph-2.json" 2>&1 | grep -E "^a\*b|^16-op|FAIL|targets:" | head -12
