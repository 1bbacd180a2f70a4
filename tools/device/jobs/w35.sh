# budget: 420
# #14: where the AMX engine's dst prefetch (mmx_prefetch_c) stops paying: bench/csrc/
# mmx_parts.c built with -DMMX_PFW_MAX_THREADS=0 (never) and =16 (always), taking turns at
# 2, 4, 8 and 16 threads, three rounds (hash: same bytes); then the package's matmul suites
# (16 and 2 threads) with the default (4 threads or fewer).
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
CF="-O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
gcc $CF -DMMX_PFW_MAX_THREADS=0 bench/csrc/mmx_parts.c -o /tmp/mmx_p0 -lm || exit 1
gcc $CF -DMMX_PFW_MAX_THREADS=16 bench/csrc/mmx_parts.c -o /tmp/mmx_p1 -lm || exit 1
for r in 1 2 3; do
  for t in 2 4 8 16; do
    for s in "4096 4096 64" "1024 1024 1024"; do
      for v in p0 p1; do
        /tmp/mmx_$v $t $s | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, \"shape\": \"$s\", /" \
          | tee -a "$OUT/pfw_ab.jsonl" | grep -E '"mode": "static"' | cut -c1-200
      done
    done
  done
done
bash tools/device/matmul_suites.sh "$OUT"
