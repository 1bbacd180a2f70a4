# budget: 150
# #14: the AMX tile loop's own rate per core (bench/csrc/mmx_loop.c: operands in L1 / L2,
# no packing), at 1, 2 and 16 threads, against torch's bf16 1024^3 per core at 1 and 16
# threads. Needs no package build: bash tools/device/jobs/w18.sh OUTDIR
set -u
OUT=$1
gcc -O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc bench/csrc/mmx_loop.c \
  -o /tmp/mmx_loop || echo "mmx_loop: build failed"
for round in 1 2; do
  for nth in 1 2 16; do
    for nc in 32 128 512; do timeout 10 /tmp/mmx_loop $nth $nc >> "$OUT/mmxloop.jsonl" 2>&1; done
    timeout 30 python3 tools/device/torch_bf16_time.py $nth >> "$OUT/mmxloop.jsonl" 2>&1
  done
done
cat "$OUT/mmxloop.jsonl"
