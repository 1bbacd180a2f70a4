# budget: 420
# #14: shared packed panels (cpu/csrc/mul_mat_share.h: every panel of a and b packed once per
# call, by the first task that needs it) against each task packing its own.
# bench/csrc/mm_tune.c, MM_TUNE_SHARE=0/1 taking turns, two rounds: 16 threads with the dealt
# tasks (the package's mode there: mm_compute_dealt's grid, and 4x4 / 16x16 grids dealt), 2
# threads with the static split (mm_compute) and dealt 2x2 / 4x4 grids; torch beside.
# (-DMM_SHARE_MAX_BYTES=128 MiB: the 4096x512x4096 product's 75 MiB of panels shared too.)
set -u
OUT=$1
CF="-O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
gcc $CF -DMM_SHARE_MAX_BYTES='((size_t)128<<20)' bench/csrc/mm_tune.c -o /tmp/tune -lm || exit 1
S="1024 1024 1024 2048 2048 2048 4096 512 4096 1024 256 1024"
one() {  # label threads env...
  local lab=$1 t=$2; shift 2
  env "$@" MM_TUNE_TYPES=f32,f16 /tmp/tune $t $S \
    | sed "s/^{/{\"mode\": \"$lab\", \"round\": $r, /" | tee -a "$OUT/share_ab.jsonl" \
    | python3 -c "
import json,sys
for l in sys.stdin:
    d=json.loads(l); print(d['mode'], d['threads'], d['M'], d['N'], d['K'], d['type'], d['share'], d['best_ms'], d['median_ms'], d['busiest_ms'], d['avg_thread_ms'])"
}
for r in 1 2; do
  one dealt 16 MM_TUNE_DYN=1 MM_TUNE_SHARE=0
  one dealt 16 MM_TUNE_DYN=1 MM_TUNE_SHARE=1
  one d4x4 16 MM_TUNE_DYN=1 MM_TUNE_GRID=4,4 MM_TUNE_SHARE=1
  one d16x16 16 MM_TUNE_DYN=1 MM_TUNE_GRID=16,16 MM_TUNE_SHARE=1
  python3 tools/device/torch_mm_time.py 16 $S | tee -a "$OUT/share_ab.jsonl"
  one static 2 MM_TUNE_SHARE=0
  one static 2 MM_TUNE_SHARE=1
  one d2x2 2 MM_TUNE_DYN=1 MM_TUNE_GRID=2,2 MM_TUNE_SHARE=1
  one d4x4 2 MM_TUNE_DYN=1 MM_TUNE_GRID=4,4 MM_TUNE_SHARE=1
  python3 tools/device/torch_mm_time.py 2 $S | tee -a "$OUT/share_ab.jsonl"
done
