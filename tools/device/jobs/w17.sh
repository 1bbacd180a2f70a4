# budget: 480
# #14: the AMX product's a rows prefetched a sub-block ahead (MMX_PF_A) and b panels of 256
# columns (MMX_NX; a re-read half as often): the AMX tests on the built package (NX 128,
# prefetch on), then bench/csrc/mmx_parts.c built four ways taking turns (the result's hash
# must match), torch's bf16 matmul beside them, and the matmul suite at 16 and 2 threads.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_amx.py tests/test_gemm_dealt.py 2>&1 | tail -3
V="128_0 128_1 256_0 256_1"
for v in $V; do
  gcc -O3 -march=x86-64-v4 -fopenmp -DMMX_NX=${v%_*} -DMMX_PF_A=${v#*_} -Iggml_cy/cpu/csrc \
    -Iggml_cy/core/csrc bench/csrc/mmx_parts.c -o /tmp/mp_$v -lm || echo "mp_$v: build failed"
done
for round in 1 2 3; do
  for v in $V; do
    for cfg in "16 16 1024 1024 1024" "0 16 1024 1024 1024" "16 2 1024 1024 1024" "0 2 1024 1024 1024" \
               "16 16 4096 64 4096" "16 16 4096 1 4096" "16 2 4096 1 4096"; do
      set -- $cfg
      MMX_PARTS_OFFSET=$1 timeout 30 /tmp/mp_$v $2 $3 $4 $5 | grep full >> "$OUT/mmxparts.jsonl" 2>&1
    done
  done
  for cfg in "16 1024 1024 1024" "2 1024 1024 1024" "16 4096 64 4096" "16 4096 1 4096" "2 4096 1 4096"; do
    timeout 30 python3 tools/device/torch_bf16_time.py $cfg >> "$OUT/mmxparts.jsonl" 2>&1
  done
done
python3 tools/device/mmx_parts_summary.py "$OUT/mmxparts.jsonl"
bash tools/device/matmul_suites.sh "$OUT"
