# budget: 420
# #14 on the 16-core host, round 6 of 2026-11-27 evening: the accumulator machine with
# 64-byte vectors on AVX-512 builds: machine-group tests, the scaling suite, the graph suite
# at 16 and 2 threads.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_graph_fused.py tests/test_fused_dyn.py tests/test_cacheinfo.py 2>&1 | tail -1
timeout 140 python3 -m bench scaling --quick --json "$OUT/scaling.json" 2>&1 | grep -E "^a\*b|targets:|FAIL" | cut -c1-200 | head -14
timeout 40 python3 -m bench graph --quick --threads "$T" --json "$OUT/graph-$T.json" 2>&1 | grep -E "^a\*b|^16-op|FAIL|targets:" | cut -c1-220 | head -8
timeout 60 python3 -m bench graph --quick --threads 2 --json "$OUT/graph-2.json" 2>&1 | grep -E "^a\*b|^16-op|FAIL|targets:" | cut -c1-220 | head -8
