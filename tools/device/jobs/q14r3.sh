# budget: 450
# Issue 14 on the 16-core host (2026-11-26 evening): after the home-range chunk schedule, the
# many-thread streaming rule and the new float32 exp/log/log2 and float64 exp/erf kernels:
# the CPU suite and scaling table at 16 threads, the math suite at 16 and 1 threads.
set -u
OUT=$1
T=$(nproc)
timeout 130 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -30
timeout 110 python3 -m bench scaling --quick --threads "$T" --json "$OUT/scaling-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -12
timeout 90 python3 -m bench math --quick --threads "$T" --json "$OUT/math-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -30
timeout 90 python3 -m bench math --quick --threads 1 --json "$OUT/math-1.json" 2>&1 | grep -E "FAIL|targets:" | head -30
