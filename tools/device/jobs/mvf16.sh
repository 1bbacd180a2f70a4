# budget: 330
# 2026-11-27: after the F16 mat-vec's 16-bit transpose (mvf16): the mul_mat tests on the
# 16-core host (AVX-512), then bench matmul at 2 and 16 threads (JSON to commit).
set -u
OUTD=$1
export PYTHONPATH=.:${PYTHONPATH:-}
timeout -k 2 90 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_paths.py tests/test_matvec_repack.py \
  2>&1 | tail -2 | tee "$OUTD/tests.txt"
timeout -k 2 110 python3 -m bench matmul --quick --threads 2 --json "$OUTD/matmul-2.json" > "$OUTD/matmul-2.txt" 2>&1
timeout -k 2 110 python3 -m bench matmul --quick --threads 16 --json "$OUTD/matmul-16.json" > "$OUTD/matmul-16.txt" 2>&1
grep -E "^mul_mat|targets" "$OUTD/matmul-2.txt" "$OUTD/matmul-16.txt" | cut -c1-60,150-
