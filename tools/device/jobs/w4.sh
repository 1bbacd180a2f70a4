# budget: 420
# #14 item 3 after w3 (the a-panel prefetch, MM_PF_A = 16, now the default): the matmul
# suite at 2 and 16 threads, then the prefetch distance swept with calls taking turns with
# torch on six CPUs (tools/device/mm_ab_probe.py).
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
for t in 2 16; do
  timeout 150 python3 -m bench matmul --quick --threads $t --json "$OUT/matmul-$t.json" 2>&1 \
    | grep -E "^mul_mat|targets:" | cut -c1-160
done
bash tools/device/build_mm_ab.sh 2> "$OUT/build.err" || { cat "$OUT/build.err"; exit 1; }
MM_AB_VARIANTS=pf0,pf8,pf16,pf24,pf32 timeout 60 python3 tools/device/mm_ab_probe.py 4 0,3,6,9,12,15 | tee "$OUT/ab_pf.jsonl" \
  | python3 -c "
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    print(d['cpu'], d['slow_rounds'], {k: v[1] for k, v in d.items() if 'vs_torch' in k})"
