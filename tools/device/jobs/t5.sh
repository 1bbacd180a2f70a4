# budget: 500
# #14 on the 16-core host, round 5 of 2026-11-27 evening (last): accumulator-machine groups
# stream under the socket-share rule at every thread count (one pass from registers); the
# suites that bound it: scaling, graph at 16 threads, cpu at 16 and 2 threads.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 40 python3 -m pytest -q -p no:cacheprovider tests/test_cacheinfo.py tests/test_fused_dyn.py tests/test_expr_scratch.py 2>&1 | tail -1
timeout 140 python3 -m bench scaling --quick --json "$OUT/scaling.json" 2>&1 | grep -E "^a\*b|targets:|FAIL" | cut -c1-200 | head -14
timeout 40 python3 -m bench graph --quick --threads "$T" --json "$OUT/graph-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -6
timeout 100 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -10
timeout 130 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2.json" 2>&1 | grep -E "FAIL|targets:" | head -10
