# budget: 480
# #14: the f32 mat-vec prefetching only matrices beyond the last-level cache
# (mm_gv_prefetch_for): bench/csrc/mm_tune.c with the rule (a 64 MB matrix on the host's
# 300 MB L3: no prefetch) and with MM_TUNE_GV_LLC=0 (prefetch, as before), taking turns with
# torch at 1, 2 and 16 threads, three rounds; then the package's matmul suites (16 and 2).
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
CF="-O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
gcc $CF bench/csrc/mm_tune.c -o /tmp/tune -lm || exit 1
for r in 1 2 3; do
  for t in 1 2 16; do
    for v in rule pf; do
      if [ $v = pf ]; then export MM_TUNE_GV_LLC=0; else unset MM_TUNE_GV_LLC; fi
      MM_TUNE_TYPES=f32 /tmp/tune $t 4096 1 4096 4096 1 4096 \
        | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /" | tee -a "$OUT/gvrule.jsonl" | cut -c1-140
    done
    unset MM_TUNE_GV_LLC
    python3 tools/device/torch_mm_time.py $t 4096 1 4096 4096 1 4096 | sed "s/^{/{\"round\": $r, /" \
      | tee -a "$OUT/gvrule.jsonl" | cut -c1-140
  done
done
bash tools/device/matmul_suites.sh "$OUT"
