# budget: 240
# #14 item 3 on the 16-core host, where the f32 GEMM ran ~0.8x torch at 2 threads (round v2):
# does a taller micro-kernel tile (12 x 32, 14 x 32) help there? bench/csrc/mm_mr_probe.c
# at 1 and 2 threads, 3 rounds, torch timed the same way between them. No package build.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
for mr in 8 12 14; do
  gcc -O3 -march=x86-64-v4 -fopenmp -DMR=$mr bench/csrc/mm_mr_probe.c -o /tmp/mr$mr || exit 1
done
for round in 1 2 3; do
  for t in 1 2; do
    for mr in 8 12 14; do
      OMP_NUM_THREADS=$t timeout 30 /tmp/mr$mr $t 1024 1176 1024 | tee -a "$OUT/mr.txt"
      OMP_NUM_THREADS=$t timeout 30 /tmp/mr$mr $t 4096 168 4096 | tee -a "$OUT/mr.txt"
    done
    timeout 60 python3 tools/device/torch_mm_time.py $t 1024 1176 1024 4096 168 4096 | tee -a "$OUT/mr.txt"
  done
done
