# budget: 500
# #14 item 3: float mul_mat tasks dealt to the threads (mm_compute_dealt, the default now)
# against the static split, in the package (graph and eager, taking turns in one process,
# tools/device/mm_deal_probe.py) at 16 and 2 threads; then the matmul suite (full) at 16
# and 2 threads.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 120 python3 tools/device/mm_deal_probe.py 16 40 f32:1024:1024:1024 f32:4096:64:4096 \
  f32:4096:512:4096 bf16:1024:1024:1024 f16:1024:1024:1024 | tee "$OUT/deal16.jsonl"
timeout 100 python3 tools/device/mm_deal_probe.py 2 16 f32:1024:1024:1024 f32:4096:64:4096 \
  bf16:1024:1024:1024 | tee "$OUT/deal2.jsonl"
timeout 120 python3 -m bench matmul --threads 16 --json "$OUT/matmul-16.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL"
timeout 170 python3 -m bench matmul --threads 2 --json "$OUT/matmul-2.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL"
