# budget: 480
# #14: bf16 weights on the AMX tiles dealt from 2 threads on (mm_amx_takes, _mm_dealt.pxi),
# N parts of several panels cut to one panel each in the dealt grid (mmx_grid_dealt).
# bench/csrc/mmx_parts.c: static (the static split) against dealt (the new grid, dealt), 2
# threads, 1024^3 and the suite's 4096x4096x64 (M 4096, N 64, K 4096) at offset 16 (a
# context's tensors), three rounds, torch's bf16 time alone in each; the AMX bits tests; the
# matmul suites.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 120 python3 -m pytest -q -x -p no:cacheprovider tests/test_gemm_amx.py 2>&1 | tail -2
CF="-O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
gcc $CF bench/csrc/mmx_parts.c -o /tmp/mmx_parts -lm || exit 1
for r in 1 2 3; do
  for s in "1024 1024 1024" "4096 64 4096"; do
    MMX_PARTS_OFFSET=16 /tmp/mmx_parts 2 $s | sed "s/^{/{\"round\": $r, /" \
      | tee -a "$OUT/deal2.jsonl" | grep -E '"mode": "(static|dealt)"' | cut -c1-200
    python3 tools/device/torch_bf16_time.py 2 $s | sed "s/^{/{\"round\": $r, /" | tee -a "$OUT/deal2.jsonl"
  done
done
bash tools/device/matmul_suites.sh "$OUT"
