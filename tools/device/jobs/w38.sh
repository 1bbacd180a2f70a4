# budget: 500
# #14: the AMX engine copying misaligned a once per task (mmx_prepack_a) instead of once per
# panel of b. bench/csrc/mmx_parts.c built with -DMMX_APRE_MAX=0 (p0: per-panel copies, as
# before) and with the default (p1), 1024^3 at 2 and 16 threads, a/b/dst at offsets 0/0,
# 16/16 (a context's tensors) and 16/0 (dst aligned), taking turns, three rounds, with
# torch's bf16 time alone in each round; the host's AMX bits tests; the matmul suites.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 120 python3 -m pytest -q -x -p no:cacheprovider tests/test_gemm_amx.py 2>&1 | tail -2
CF="-O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
gcc $CF -DMMX_APRE_MAX=0 bench/csrc/mmx_parts.c -o /tmp/mmx_p0 -lm || exit 1
gcc $CF bench/csrc/mmx_parts.c -o /tmp/mmx_p1 -lm || exit 1
for r in 1 2 3; do
  for t in 2 16; do
    for o in "0 0" "16 16" "16 0"; do
      set -- $o
      for v in p0 p1; do
        MMX_PARTS_OFFSET=$1 MMX_PARTS_OFFSET_C=$2 /tmp/mmx_$v $t 1024 1024 1024 \
          | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /" \
          | tee -a "$OUT/apre.jsonl" | grep -E '"mode": "(static|copya)"' | cut -c1-250
      done
    done
    python3 tools/device/torch_bf16_time.py $t | sed "s/^{/{\"round\": $r, /" | tee -a "$OUT/apre.jsonl"
  done
done
bash tools/device/matmul_suites.sh "$OUT"
