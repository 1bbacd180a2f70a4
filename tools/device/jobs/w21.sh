# budget: 480
# #14: the packed path's thin tasks (cpu/csrc/mul_mat_thin.h: a not packed for 24..96 rows
# of b). bench/csrc/mm_tune.c built twice (-DMM_THIN_NMAX=0: every task packed as before;
# the default: thin), taking turns at 1, 2 and 16 threads, two rounds; then the package's
# matmul suites at 16 and 2 threads (torch in the same process).
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
CF="-O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
gcc $CF -DMM_THIN_NMAX=0 bench/csrc/mm_tune.c -o /tmp/tune_packed -lm
gcc $CF bench/csrc/mm_tune.c -o /tmp/tune_thin -lm
for r in 1 2; do
  for t in 1 2 16; do
    for v in packed thin; do
      MM_TUNE_TYPES=f32,f16 /tmp/tune_$v $t 4096 64 4096 4096 32 4096 1024 64 1024 4096 96 4096 \
        | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /" | tee -a "$OUT/thin_ab.jsonl" | cut -c1-150
    done
  done
done
bash tools/device/matmul_suites.sh "$OUT"
