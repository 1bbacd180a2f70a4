# budget: 500
# (ran at 0457b0c; the 12-row tile was withdrawn in c410ba0, so MM_TILE12 no longer exists)
# #14: the 12-row f32 tile (mul_mat.h mm_micro12: two 12 x 32 tiles over three 8-wide b
# panels; a read 2/3 as often per flop). bench/csrc/mm_tune.c built with -DMM_TILE12=0 (8-row
# tiles, as before) and with the default (12-row), taking turns with torch at 1, 2 and 16
# threads, three rounds; the host's bits tests; then the package's matmul suites (16 and 2).
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 60 python3 -m pytest -q -x -p no:cacheprovider tests/test_gemm_paths.py 2>&1 | tail -2
CF="-O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
gcc $CF -DMM_TILE12=0 bench/csrc/mm_tune.c -o /tmp/tune_t8 -lm || exit 1
gcc $CF bench/csrc/mm_tune.c -o /tmp/tune_t12 -lm || exit 1
for r in 1 2 3; do
  for t in 1 2 16; do
    for v in t8 t12; do
      MM_TUNE_TYPES=f32,f16 /tmp/tune_$v $t 1024 1024 1024 2048 512 1024 4096 4096 64 \
        | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /" | tee -a "$OUT/tile12_ab.jsonl" | cut -c1-150
    done
    python3 tools/device/torch_mm_time.py $t 1024 1024 1024 2048 512 1024 4096 4096 64 | sed "s/^/r$r torch $t: /" \
      | tee -a "$OUT/torch.txt" | cut -c1-150
  done
done
bash tools/device/matmul_suites.sh "$OUT"
