# budget: 520
# #14: BF16 tile tasks dealt panel by panel from 9 threads (mmx_compute_dealt: mmx_grid's M
# parts cut 4 times finer where each N part is one converted panel of b, a thread reusing its
# panel for its next task of the same rows): the AMX and dealt tests on the built package,
# bench/csrc/mmx_parts.c's static / dealt modes taking turns at 16, 12 and 2 threads (the
# result's hash must match across modes), torch's bf16 beside them, then the matmul suite at
# 16 and 2 threads.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_amx.py tests/test_gemm_dealt.py 2>&1 | tail -3
gcc -O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc bench/csrc/mmx_parts.c \
  -o /tmp/mmx_parts -lm || echo "mmx_parts: build failed"
for round in 1 2 3; do
  for cfg in "16 16 1024 1024 1024" "0 16 1024 1024 1024" "16 12 1024 1024 1024" "16 2 1024 1024 1024" \
             "16 16 4096 512 1024" "16 16 4096 64 4096"; do
    set -- $cfg
    MMX_PARTS_OFFSET=$1 timeout 30 /tmp/mmx_parts $2 $3 $4 $5 >> "$OUT/mmxparts.jsonl" 2>&1
  done
  for cfg in "16 1024 1024 1024" "2 1024 1024 1024" "16 4096 512 1024"; do
    timeout 30 python3 tools/device/torch_bf16_time.py $cfg >> "$OUT/mmxparts.jsonl" 2>&1
  done
done
python3 tools/device/mmx_parts_summary.py "$OUT/mmxparts.jsonl"
bash tools/device/matmul_suites.sh "$OUT"
