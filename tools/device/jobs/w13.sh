# budget: 420
# #14 item 3, the final rule (float mul_mat deals its tasks from 4 threads on): the
# package's dealt against static split at 4 and 8 threads (where the grid's lag weight is
# between none and one task; tools/device/mm_deal_probe.py), then the matmul suite (full)
# at 16 and 2 threads.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
for t in 4 8; do
  timeout 100 python3 tools/device/mm_deal_probe.py $t 24 f32:1024:1024:1024 f32:4096:64:4096 \
    f32:4096:512:4096 f16:1024:1024:1024 bf16:1024:1024:1024 | tee -a "$OUT/deal48.jsonl"
done
timeout 120 python3 -m bench matmul --threads 16 --json "$OUT/matmul-16.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL"
timeout 170 python3 -m bench matmul --threads 2 --json "$OUT/matmul-2.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL"
