# budget: 300
# #14: the f32 mat-vec at 2 threads (0.81-0.84x torch in rounds w33-w35): the software
# prefetch distance of mm_gemv_block_skew (MM_GV_PREFETCH, bytes along each of the 16 rows;
# 0 = none), bench/csrc/mm_tune.c built per distance, taking turns with torch at 1 and 2
# threads, four rounds.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
CF="-O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
for p in 0 1024 2048 4096 8192; do
  gcc $CF -DMM_GV_PREFETCH=$p bench/csrc/mm_tune.c -o /tmp/tune_$p -lm || exit 1
done
for r in 1 2 3 4; do
  for t in 1 2; do
    for p in 0 1024 2048 4096 8192; do
      MM_TUNE_TYPES=f32 /tmp/tune_$p $t 4096 1 4096 4096 1 4096 \
        | sed "s/^{/{\"pf\": $p, \"round\": $r, /" | tee -a "$OUT/gvpf.jsonl" | cut -c1-140
    done
    python3 tools/device/torch_mm_time.py $t 4096 1 4096 4096 1 4096 | sed "s/^{/{\"round\": $r, /" \
      | tee -a "$OUT/gvpf.jsonl" | cut -c1-140
  done
done
