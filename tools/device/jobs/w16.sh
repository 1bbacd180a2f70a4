# budget: 480
# #14: the AMX 32 x 32 loop with its tile loads interleaved between the products
# (MMX_INTERLEAVE, mul_mat_amx.h): the AMX tests on the built package (interleaved), then
# bench/csrc/mmx_parts.c built both ways taking turns (16 threads with a 16 bytes past a
# line and aligned, 2 threads; the result's hash must match), torch's bf16 matmul beside
# them, and the matmul suite at 16 and 2 threads.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_amx.py tests/test_gemm_dealt.py 2>&1 | tail -3
for v in 0 1; do
  gcc -O3 -march=x86-64-v4 -fopenmp -DMMX_INTERLEAVE=$v -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc \
    bench/csrc/mmx_parts.c -o /tmp/mmx_parts$v -lm || echo "mmx_parts$v: build failed"
done
for round in 1 2 3; do
  for v in 0 1; do
    MMX_PARTS_OFFSET=16 timeout 30 /tmp/mmx_parts$v 16 1024 1024 1024 | grep full >> "$OUT/mmxparts.jsonl" 2>&1
    MMX_PARTS_OFFSET=0 timeout 30 /tmp/mmx_parts$v 16 1024 1024 1024 | grep full >> "$OUT/mmxparts.jsonl" 2>&1
    MMX_PARTS_OFFSET=16 timeout 30 /tmp/mmx_parts$v 2 1024 1024 1024 | grep full >> "$OUT/mmxparts.jsonl" 2>&1
    MMX_PARTS_OFFSET=16 timeout 30 /tmp/mmx_parts$v 16 4096 64 4096 | grep full >> "$OUT/mmxparts.jsonl" 2>&1
  done
  timeout 30 python3 tools/device/torch_bf16_time.py 16 >> "$OUT/mmxparts.jsonl" 2>&1
  timeout 30 python3 tools/device/torch_bf16_time.py 2 >> "$OUT/mmxparts.jsonl" 2>&1
done
python3 tools/device/mmx_parts_summary.py "$OUT/mmxparts.jsonl"
bash tools/device/matmul_suites.sh "$OUT"
