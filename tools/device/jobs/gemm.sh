# budget: 150
# helper gemm (issue 14 item 3): float mul_mat against torch/numpy at 16 threads on the
# device's host CPU, then a sweep of the kernel's blocking constants (bench/csrc/mm_tune.c).
set -u
OUTD=$1
lscpu > "$OUTD/lscpu.txt" 2>&1
timeout -k 2 60 python3 -m bench matmul --quick --threads 16 --json "$OUTD/matmul-16.json" \
    > "$OUTD/matmul-16.txt" 2>&1
tail -16 "$OUTD/matmul-16.txt"
INC="-Iggml_cy/cpu/csrc -Iggml_cy/core/csrc"
for cfg in "256 512 192 0" "128 512 192 0" "384 512 96 0" "256 256 96 0" "256 1024 192 0" \
           "512 256 96 0" "256 512 192 64"; do
  set -- $cfg
  pf=""; [ "$4" != 0 ] && pf="-DMM_PREFETCH=$4"
  gcc -O3 -march=x86-64-v4 -fopenmp -DMM_KC=$1 -DMM_NC=$2 -DMM_MC=$3 $pf $INC \
      bench/csrc/mm_tune.c -o /tmp/mm_tune -lm || continue
  echo "# KC=$1 NC=$2 MC=$3 PF=$4" >> "$OUTD/tune.jsonl"
  timeout -k 2 10 /tmp/mm_tune 16 1024 1024 1024 4096 64 4096 >> "$OUTD/tune.jsonl" 2>&1
done
grep -h gflops "$OUTD/tune.jsonl" | python3 -c "
import sys, json
for l in sys.stdin:
    d = json.loads(l); print(d['KC'], d['NC'], d['MC'], d['M'], d['N'], d['K'], d['type'], d['gflops'])"
