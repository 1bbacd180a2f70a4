# budget: 470
# #14: (1) where the BF16 product on the AMX tiles spends its time at 16 threads
# (bench/csrc/mmx_parts.c: the task, only its b conversion, only its a copies; a at 0 and 16
# bytes past a cache line), torch's bf16 matmul beside it; (2) whether the 2-thread misses
# follow where the threads run: the matmul suite at 2 threads as is, then with the process
# held to two CPUs (taskset), taking turns.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
gcc -O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc bench/csrc/mmx_parts.c \
  -o /tmp/mmx_parts -lm || echo "mmx_parts: build failed"
for round in 1 2; do
  for off in 0 16; do
    MMX_PARTS_OFFSET=$off timeout 30 /tmp/mmx_parts 16 1024 1024 1024 >> "$OUT/mmxparts.jsonl" 2>&1
  done
  MMX_PARTS_OFFSET=16 MMX_PARTS_GRID=4,8 timeout 30 /tmp/mmx_parts 16 1024 1024 1024 >> "$OUT/mmxparts.jsonl" 2>&1
  MMX_PARTS_OFFSET=16 timeout 30 /tmp/mmx_parts 2 1024 1024 1024 >> "$OUT/mmxparts.jsonl" 2>&1
  timeout 30 python3 tools/device/torch_bf16_time.py 16 >> "$OUT/mmxparts.jsonl" 2>&1
  timeout 30 python3 tools/device/torch_bf16_time.py 2 >> "$OUT/mmxparts.jsonl" 2>&1
done
cat "$OUT/mmxparts.jsonl"
timeout 170 python3 -m bench matmul --threads 2 --json "$OUT/matmul-2.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL"
timeout 170 taskset -c 2,3 python3 -m bench matmul --threads 2 --json "$OUT/matmul-2-pinned.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL"
