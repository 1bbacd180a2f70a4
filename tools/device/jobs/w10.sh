# budget: 150
# #14 item 3 at 16 threads (round w9, full suite: f32 1024^3 0.83x torch, bf16 0.71x): the
# f32 kernel in the C harness (OpenMP threads) with the shipped grid (mm_grid) against
# other grids, split statically or dealt from a shared counter (MM_TUNE_GRID, MM_TUNE_DYN),
# with the busiest and the average thread's time per call; torch alongside. Also 2 threads.
# No package build.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
gcc -O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc bench/csrc/mm_tune.c -o /tmp/mmt -lm || exit 1
S="1024 1024 1024"
for r in 1 2 3; do
  for v in "" "4,4" "8,8" "4,4 dyn" "8,8 dyn" "4,16 dyn" "16,8 dyn" "8,16 dyn"; do
    g=${v% dyn}; d=0; [ "$v" != "$g" ] && d=1
    MM_TUNE_GRID=$g MM_TUNE_DYN=$d MM_TUNE_TYPES=f32 timeout 20 /tmp/mmt 16 $S | sed "s/^{/{\"round\": $r, /" | tee -a "$OUT/grid16.jsonl"
  done
  MM_TUNE_TYPES=bf16 timeout 20 /tmp/mmt 16 $S | sed "s/^{/{\"round\": $r, /" | tee -a "$OUT/grid16.jsonl"
  timeout 30 python3 tools/device/torch_mm_time.py 16 $S | sed "s/^{/{\"round\": $r, /" | tee -a "$OUT/grid16.jsonl"
  for v in "" "2,4 dyn" "4,4 dyn" "2,8 dyn"; do
    g=${v% dyn}; d=0; [ "$v" != "$g" ] && d=1
    MM_TUNE_GRID=$g MM_TUNE_DYN=$d MM_TUNE_TYPES=f32 timeout 20 /tmp/mmt 2 $S | sed "s/^{/{\"round\": $r, /" | tee -a "$OUT/grid2.jsonl"
  done
  timeout 30 python3 tools/device/torch_mm_time.py 2 $S | sed "s/^{/{\"round\": $r, /" | tee -a "$OUT/grid2.jsonl"
done
