# budget: 120
# #14 item 3 after w5/w6 (the graph path at one thread 0.62-0.80x torch on the host, the
# bare kernel 0.86-0.97x in w3/w4 on other instances): in one process, calls taking turns,
# the bare kernel (ctypes), the package's graph and eager paths on the same data, and torch.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
bash tools/device/build_mm_ab.sh 2> "$OUT/build.err" || { cat "$OUT/build.err"; exit 1; }
show() { python3 -c "
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    print(d['cpu'], d['M'], d['N'], d['rounds'], {k: v for k, v in d.items() if 'median' in k}, {k: v[1] for k, v in d.items() if 'vs_torch' in k and 'slow' not in k})"; }
MM_AB_PACKAGE=1 MM_AB_VARIANTS=pf16,pf0 timeout 60 python3 tools/device/mm_ab_probe.py 8 0,5,10 | tee "$OUT/ab_pkg1024.jsonl" | show
MM_AB_PACKAGE=1 MM_AB_VARIANTS=pf16,pf0 timeout 40 python3 tools/device/mm_ab_probe.py 6 5 4096 64 4096 | tee "$OUT/ab_pkg4096x64.jsonl" | show
