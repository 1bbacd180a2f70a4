# budget: 240
# #14 item 3: bench matmul at 16 and 2 threads (BF16 on AMX, K sub-block 512), then the f32
# kernel's blocking constants swept at 2 threads on the 16-core host (bench/csrc/mm_tune.c).
set -u
OUTD=$1
export PYTHONPATH=.:${PYTHONPATH:-}
timeout -k 2 70 python3 -m bench matmul --quick --threads 16 --json "$OUTD/matmul-16.json" > "$OUTD/matmul-16.txt" 2>&1
timeout -k 2 70 python3 -m bench matmul --quick --threads 2 --json "$OUTD/matmul-2.json" > "$OUTD/matmul-2.txt" 2>&1
grep -E "^mul_mat|targets" "$OUTD/matmul-16.txt" "$OUTD/matmul-2.txt" | cut -c1-60,150-
INC="-Iggml_cy/cpu/csrc -Iggml_cy/core/csrc"
for cfg in "256 512 192" "256 256 96" "128 512 192" "512 256 96" "256 1024 96" "384 384 48" "192 768 144"; do
  set -- $cfg
  gcc -O3 -march=x86-64-v4 -fopenmp -DMM_KC=$1 -DMM_NC=$2 -DMM_MC=$3 $INC bench/csrc/mm_tune.c -o /tmp/mm_tune -lm || continue
  echo "# KC=$1 NC=$2 MC=$3" >> "$OUTD/tune.jsonl"
  OMP_NUM_THREADS=2 timeout -k 2 15 /tmp/mm_tune 2 1024 1024 1024 4096 64 4096 >> "$OUTD/tune.jsonl" 2>&1
done
grep -h gflops "$OUTD/tune.jsonl" | python3 -c "
import sys, json
for l in sys.stdin:
    d = json.loads(l)
    if d.get('type') in ('f32', 0, 'F32'): print(d['KC'], d['NC'], d['MC'], d['M'], d['N'], d['K'], d['type'], d['gflops'])" 
