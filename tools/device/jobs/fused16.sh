# budget: 420
# #14: the fused chain at 16 threads with nothing else in the process (fused16_probe.py:
# evaluate against the hand-fused C loop) and in the graph and scaling suites.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
timeout 100 python3 tools/device/fused16_probe.py "$OUT/fused16.json" "$T"
timeout 120 python3 -m bench graph --quick --threads "$T" --json "$OUT/graph-$T.json" 2>&1 | grep -E "targets:|FAIL|a\*b" | head -8
timeout 150 python3 -m bench scaling --quick --json "$OUT/scaling.json" 2>&1 | grep -E "targets:|FAIL" | head -12
timeout 100 python3 tools/device/fused16_probe.py "$OUT/fused16-after.json" "$T"
