# budget: 490
# #14 on the 16-core host, round 7 of 2026-11-27 evening (final tree): the full (not --quick)
# CPU, graph and matmul suites at 16 threads, 7 samples a case.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 270 python3 -m bench cpu --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|total" | head -12
timeout 60 python3 -m bench graph --threads "$T" --json "$OUT/graph-$T.json" 2>&1 | grep -E "FAIL|targets:|total" | head -6
timeout 140 python3 -m bench matmul --threads "$T" --json "$OUT/matmul-$T.json" 2>&1 | grep -E "FAIL|targets:|total" | head -8
