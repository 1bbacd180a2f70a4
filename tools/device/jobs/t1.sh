# budget: 420
# #14 on the 16-core host, round 1 of 2026-11-27 evening: the suites not yet re-run since the
# harness warm-up (Setup.warm_s): scaling (the fused chain against the C loop), graph at 16
# threads, matmul at 2 threads.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 140 python3 -m bench scaling --quick --json "$OUT/scaling.json" 2>&1 | grep -E "targets:|FAIL" | head -12
timeout 70 python3 -m bench graph --quick --threads "$T" --json "$OUT/graph-$T.json" 2>&1 | grep -E "^a\*b|FAIL|targets:" | head -8
timeout 90 python3 -m bench matmul --quick --threads 2 --json "$OUT/matmul-2.json" 2>&1 | grep -E "^mul_mat|targets:|FAIL" | cut -c1-150 | head -16
