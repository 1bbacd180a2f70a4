# budget: 420
# Issue 14 on the 16-core host (2026-11-26 session 3): after the one-pass streamed rows
# (kernels_stream.h) and the bench's 3-round block protocol: the kernel layout tests, the
# CPU suite, the scaling table (twice) and the graph suite at 16 threads.
set -u
OUT=$1
export PYTHONPATH=.:${PYTHONPATH:-}
T=$(nproc)
python3 -c "import ggml_cy; ggml_cy.show_config()" | grep -E "dispatch|cache" | tee "$OUT/config.txt"
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_kernels_layout.py tests/test_kernels_f16_fused.py 2>&1 | tail -3 | tee "$OUT/tests.txt"
timeout 150 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "roofline|FAIL|targets:" | head -14
for r in 1 2; do
  timeout 70 python3 -m bench scaling --quick --threads "$T" --json "$OUT/scaling-$T-r$r.json" 2>&1 | grep -E "^a\*b|FAIL|targets:" | cut -c1-60,150- | head -8
done
timeout 90 python3 -m bench graph --quick --threads "$T" --json "$OUT/graph-$T.json" 2>&1 | grep -E "^a\*b|FAIL|targets:" | head -10
