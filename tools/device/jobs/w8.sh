# budget: 200
# #14 item 3: does the f32 GEMM's per-process slowness on the 16-core host follow the pages
# of its scratch and operands, or the moment? tools/device/mm_place_probe.py in 3 fresh
# processes on CPUs 0, 5, 14 (14 ran slowest in w2), then mm_tune pinned in fresh processes
# with its scratch on 4 KiB and on huge pages, taking turns. No package build.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
bash tools/device/build_mm_ab.sh 2> "$OUT/build.err" || { cat "$OUT/build.err"; exit 1; }
I="-Iggml_cy/cpu/csrc -Iggml_cy/core/csrc"
gcc -O3 -march=x86-64-v4 -fopenmp $I bench/csrc/mm_tune.c -o /tmp/mmt -lm || exit 1
for p in 1 2 3; do
  timeout 60 python3 tools/device/mm_place_probe.py 5 0,5,14 6 | tee -a "$OUT/place.jsonl"
done
for r in 1 2 3 4 5 6; do
  for thp in 0 1; do
    MM_TUNE_THP=$thp MM_TUNE_TYPES=f32 OMP_NUM_THREADS=1 timeout 20 taskset -c 5 /tmp/mmt 1 1024 1024 1024 \
      | sed "s/^{/{\"thp\": $thp, \"round\": $r, /" | tee -a "$OUT/tune.jsonl"
  done
done
