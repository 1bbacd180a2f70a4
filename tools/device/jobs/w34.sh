# budget: 420
# (ran at b9797ea, where the default was: always; MMX_PFW=0 is now MMX_PFW_MAX_THREADS=0)
# #14: the AMX engine's C stores (mul_mat_amx.h mmx_prefetch_c: the next 32 x 32 block's dst
# lines prefetched for writing). bench/csrc/mmx_parts.c built with -DMMX_PFW=0 (as before)
# and with the default, taking turns at 2 and 16 threads, three rounds (hash: same bytes);
# the host's AMX bits tests; then the package's matmul suites (16 and 2 threads).
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 60 python3 -m pytest -q -x -p no:cacheprovider tests/test_gemm_amx.py 2>&1 | tail -2
CF="-O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
gcc $CF -DMMX_PFW=0 bench/csrc/mmx_parts.c -o /tmp/mmx_p0 -lm || exit 1
gcc $CF bench/csrc/mmx_parts.c -o /tmp/mmx_p1 -lm || exit 1
for r in 1 2 3; do
  for t in 2 16; do
    for s in "4096 4096 64" "1024 1024 1024" "4096 1024 4096"; do
      for v in p0 p1; do
        /tmp/mmx_$v $t $s | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, \"shape\": \"$s\", /" \
          | tee -a "$OUT/pfw_ab.jsonl" | grep -E '"mode": "(static|full)"' | cut -c1-220
      done
    done
  done
done
bash tools/device/matmul_suites.sh "$OUT"
