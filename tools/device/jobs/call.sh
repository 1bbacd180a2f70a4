# budget: 330
# issue 14 (2026-11-29, later): evaluate()'s per-call path in C (expr/_call.pyx) and flat
# groups of one short row on the accumulator machine, on the 16-core Xeon host (Python
# 3.12): the evaluate/fused tests at each level, bench graph at 2 and 16 threads (its 1e3
# and 1e5 rows now also target numpy).
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
for lv in avx2 avx512; do
  GGML_CY_CPU_FEATURES=$lv timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_expr_call.py \
    tests/test_graph_fused.py tests/test_fused_dyn.py tests/test_graph_evaluate.py 2>&1 | tail -1
done
timeout 90 python3 -m bench graph --threads 2 --json "$OUT/graph-2.json" 2>&1 | grep -E "^a\*b|^16-op|FAIL|targets:" | head -12
timeout 90 python3 -m bench graph --threads "$T" --json "$OUT/graph-$T.json" 2>&1 | grep -E "^a\*b|^16-op|FAIL|targets:" | head -12
