# budget: 480
# #14 on the 16-core host, round 3 of 2026-11-27 evening: a graph of one fused group
# (evaluate) on an optional-helper job with its blocks dealt in chunks (_compute.run_fused_dyn):
# the scaling suite (fused chain against the C loop at 1..16 threads) and the graph suite at
# 16 threads; then the mat-vec probe (steady state against the bench's pause pattern).
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_fused_dyn.py tests/test_pool_dyn.py 2>&1 | tail -2
timeout 140 python3 -m bench scaling --quick --json "$OUT/scaling.json" 2>&1 | grep -E "^a\*b|targets:|FAIL" | cut -c1-200 | head -16
timeout 70 python3 -m bench graph --quick --threads "$T" --json "$OUT/graph-$T.json" 2>&1 | grep -E "^a\*b|FAIL|targets:" | head -8
timeout 90 python3 tools/device/mv_probe.py "$T" "$OUT/mvprobe-$T.json" 2>&1 | tail -14
timeout 60 python3 tools/device/mv_probe.py 2 "$OUT/mvprobe-2.json" 2>&1 | tail -14
