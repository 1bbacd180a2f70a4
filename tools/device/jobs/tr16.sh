# budget: 330
# 2026-11-26 session 3, after the fused transposed bands and gathered rows (branch tr) and
# the shared transpose body: kernel tests on the 16-core host (AVX-512, 16 threads), the
# CPU suite at 16 threads and the scaling table.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_kernels_transpose.py tests/test_kernels_layout.py \
  tests/test_kernels_ops.py tests/test_gemm_amx.py tests/test_gemm_paths.py tests/test_eager_threads.py 2>&1 | tail -3 | tee "$OUT/tests.txt"
timeout 150 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "^a.T|^permute|roofline:|FAIL|targets:" | head -16
timeout 60 python3 -m bench scaling --quick --threads "$T" --json "$OUT/scaling-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -6
