# budget: 200
# #14 item 3: is the package slower than the C harnesses on this host? ctx.mul_mat alone in
# a fresh process (tools/device/mm_direct.py) next to mm_tune (f32) and amx_probe2 (bf16).
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
INC="-Iggml_cy/cpu/csrc -Iggml_cy/core/csrc"
gcc -O3 -march=x86-64-v4 -fopenmp $INC bench/csrc/mm_tune.c -o /tmp/mmt -lm
gcc -O3 -march=x86-64-v4 -fopenmp -I ggml_cy/cpu/csrc tools/device/amx_probe2.c -o /tmp/p2 -lm
for r in 1 2; do
  for t in 2 16; do
    timeout 60 python3 tools/device/mm_direct.py $t 2>&1 | tee -a "$out/direct.txt"
    MM_TUNE_TYPES=f32 OMP_NUM_THREADS=$t timeout 20 /tmp/mmt $t 1024 1024 1024 4096 64 4096 2>&1 | cut -c1-120 | tee -a "$out/direct.txt"
    OMP_NUM_THREADS=$t PROBE_SPEED_ONLY=1 PROBE_A_OFFSET=48 timeout 20 /tmp/p2 2>&1 | grep mmx | head -2 | tee -a "$out/direct.txt"
  done
done
