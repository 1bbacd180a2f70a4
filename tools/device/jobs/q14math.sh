# budget: 200
# Issue 14 on the 16-core host (2026-11-26 evening, last round): the math suite at 16 and 1
# threads after the second float64 erf and float32 gelu_erf kernels.
set -u
OUT=$1
T=$(nproc)
timeout 95 python3 -m bench math --quick --threads "$T" --json "$OUT/math-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -30
timeout 95 python3 -m bench math --quick --threads 1 --json "$OUT/math-1.json" 2>&1 | grep -E "FAIL|targets:" | head -30
