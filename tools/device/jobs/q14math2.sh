# budget: 300
# Issue 14 on the 16-core host (2026-11-26, session 2): the float64 tanh (simd_math_tanh64.h)
# and float32 gelu_erf (simd_math_gelu32.h) kernels' tests on this CPU (NaN lanes, special
# values), the AMX tests, then the math suite at 16 and 1 threads.
set -u
OUT=$1
export PYTHONPATH=.:${PYTHONPATH:-}
T=$(nproc)
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_simd_math.py tests/test_ops_ulp.py \
  tests/test_gemm_amx.py 2>&1 | tail -4 | tee "$OUT/tests.txt"
timeout 95 python3 -m bench math --quick --threads "$T" --json "$OUT/math-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -30
timeout 95 python3 -m bench math --quick --threads 1 --json "$OUT/math-1.json" 2>&1 | grep -E "FAIL|targets:" | head -30
