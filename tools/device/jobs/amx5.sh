# budget: 120
# #14 item 3: mul_mat_amx.h with weights rows off a 64-byte boundary (copied into an aligned
# panel) against aligned rows (in place), at 16 and 2 threads; correctness on the tiles.
out=$1
gcc -O3 -march=x86-64-v4 -fopenmp -I ggml_cy/cpu/csrc tools/device/amx_probe2.c -o /tmp/p5 -lm || exit 1
OMP_NUM_THREADS=16 OMP_PROC_BIND=close timeout 30 /tmp/p5 2>&1 | grep -E "correct|NO|same" | tee "$out/correct.txt"
for t in 16 2; do
  for off in 0 16 0 16; do
    OMP_NUM_THREADS=$t OMP_PROC_BIND=close PROBE_SPEED_ONLY=1 PROBE_A_OFFSET=$off timeout 25 /tmp/p5 2>&1 | grep mmx | tee -a "$out/amx5.txt"
  done
done
