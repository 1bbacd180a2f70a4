# budget: 420
# issue 14 (2026-11-29): the fused machine's streamed blocks (4 vectors on AMD, 8 elsewhere:
# fused_vm_blocks.h) and the cpu bench's in-case STREAM NT column, on the 16-core Xeon host:
# the fused/evaluate tests at each level, bench graph at 2 and 16 threads (the host took 8;
# the 2-thread run of 2026-11-27 said 0.62 of the C loop), bench cpu --quick at 16 threads.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
python3 -c "import ggml_cy; from ggml_cy.cpu import _fused; print('stream vectors', _fused.set_stream_vectors(None))"
for lv in avx2 avx512; do
  GGML_CY_CPU_FEATURES=$lv timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_graph_fused.py \
    tests/test_fused_dyn.py 2>&1 | tail -1
done
timeout 90 python3 -m bench graph --threads 2 --json "$OUT/graph-2.json" 2>&1 | grep -E "^a\*b|^16-op|FAIL|targets:" | head -12
timeout 90 python3 -m bench graph --threads "$T" --json "$OUT/graph-$T.json" 2>&1 | grep -E "^a\*b|^16-op|FAIL|targets:" | head -12
timeout 150 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -16
