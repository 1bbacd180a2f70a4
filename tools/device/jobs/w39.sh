# budget: 300
# #14: the AMX engine's panel of b as wide as a task's b up to MMX_NX (mmx_panel_cols) with
# its K block from MMX_PANEL_ELEMS (mmx_panel_k): bench/csrc/mmx_parts.c built at
# NX/PANEL 128/256K (as before: 128 x 2048), 512/512K (512 x 1024), 256/512K (256 x 2048)
# and 512/256K (512 x 512), taking turns, three rounds: 1024^3 at 2 and 16 threads with
# a/b/dst at offset 16 (a context's tensors) and 0, the suite's 4096x4096x64 (M 4096, N 64,
# K 4096) at 2 threads, offset 16; torch's bf16 time alone in each round.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
CF="-O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
gcc $CF -DMMX_NX=128 -DMMX_PANEL_ELEMS=262144 bench/csrc/mmx_parts.c -o /tmp/mmx_v128 -lm || exit 1
gcc $CF -DMMX_NX=512 -DMMX_PANEL_ELEMS=524288 bench/csrc/mmx_parts.c -o /tmp/mmx_v512a -lm || exit 1
gcc $CF -DMMX_NX=256 -DMMX_PANEL_ELEMS=524288 bench/csrc/mmx_parts.c -o /tmp/mmx_v256 -lm || exit 1
gcc $CF -DMMX_NX=512 -DMMX_PANEL_ELEMS=262144 bench/csrc/mmx_parts.c -o /tmp/mmx_v512b -lm || exit 1
for r in 1 2 3; do
  for t in 2 16; do
    for o in 16 0; do
      for v in v128 v512a v256 v512b; do
        MMX_PARTS_OFFSET=$o /tmp/mmx_$v $t 1024 1024 1024 \
          | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /" \
          | tee -a "$OUT/panel.jsonl" | grep -E '"mode": "static"' | cut -c1-200
      done
    done
    python3 tools/device/torch_bf16_time.py $t | sed "s/^{/{\"round\": $r, /" | tee -a "$OUT/panel.jsonl"
  done
  for v in v128 v512a v256 v512b; do
    MMX_PARTS_OFFSET=16 /tmp/mmx_$v 2 4096 64 4096 | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /" \
      | tee -a "$OUT/panel.jsonl" | grep -E '"mode": "static"' | cut -c1-200
  done
  python3 tools/device/torch_bf16_time.py 2 4096 64 4096 | sed "s/^{/{\"round\": $r, /" | tee -a "$OUT/panel.jsonl"
done
