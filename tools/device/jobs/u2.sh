# budget: 480
# #14 on the 16-core host, round 2 of 2026-11-27 night (final tree): small eager calls keep
# the GIL, the SIMD math rows' head, the float32 -> float16 row; cpu and math at 16 threads
# (the one-thread 1e3-1e4 calls of rounds t4/t7) and the graph suite at 16 threads.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 110 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -10
timeout 210 python3 -m bench math --quick --threads "$T" --json "$OUT/math-$T.json" 2>&1 | grep -E "targets:|FAIL" | head -12
timeout 50 python3 -m bench graph --quick --threads "$T" --json "$OUT/graph-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -6
