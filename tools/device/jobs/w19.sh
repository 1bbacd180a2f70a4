# budget: 520
# #14: BF16 tile tasks dealt panel by panel from 9 threads (mmx_compute_dealt: mmx_grid's M
# parts cut 4 times finer where each N part is one converted panel of b, a thread reusing its
# panel for its next task of the same rows): the AMX and dealt tests on the built package,
# bench/csrc/mmx_parts.c's static / dealt modes taking turns at 16, 12 and 2 threads (the
# result's hash must match across modes), torch's bf16 beside them, then the matmul suite at
# 16 and 2 threads.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_amx.py tests/test_gemm_dealt.py 2>&1 | tail -3
gcc -O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc bench/csrc/mmx_parts.c \
  -o /tmp/mmx_parts -lm || echo "mmx_parts: build failed"
TORCHBF="import sys,time,torch;n=int(sys.argv[1]);m,nn,k=[int(x) for x in sys.argv[2:5]];torch.set_num_threads(n);a=torch.randn(m,k).bfloat16();b=torch.randn(nn,k).bfloat16()
for _ in range(20): b@a.T
ts=[]
for _ in range(41): t=time.perf_counter(); b@a.T; ts.append(time.perf_counter()-t)
ts.sort(); print('{\"lib\": \"torch bf16\", \"threads\": %d, \"shape\": \"%dx%dx%d\", \"median_ms\": %.4f}'%(n,m,nn,k,ts[20]*1e3))"
for round in 1 2 3; do
  for cfg in "16 16 1024 1024 1024" "0 16 1024 1024 1024" "16 12 1024 1024 1024" "16 2 1024 1024 1024" \
             "16 16 4096 512 1024" "16 16 4096 64 4096"; do
    set -- $cfg
    MMX_PARTS_OFFSET=$1 timeout 30 /tmp/mmx_parts $2 $3 $4 $5 >> "$OUT/mmxparts.jsonl" 2>&1
  done
  for cfg in "16 1024 1024 1024" "2 1024 1024 1024" "16 4096 512 1024"; do
    timeout 30 python3 -c "$TORCHBF" $cfg >> "$OUT/mmxparts.jsonl" 2>&1
  done
done
python3 - "$OUT/mmxparts.jsonl" <<'PY'
import json, sys, collections
rows = collections.defaultdict(list)
for l in open(sys.argv[1]):
    try: d = json.loads(l)
    except ValueError: print(l.strip()); continue
    if "lib" in d: rows[("torch", d["shape"], d["threads"])].append(d["median_ms"]); continue
    if d["mode"] in ("packb", "copya"): continue
    key = ("%dx%dx%d" % (d["M"], d["N"], d["K"]), d["threads"], d["offset"], d["mode"], d["dst_fnv"])
    rows[key].append("%.3f/%.3f" % (d["median_ms"], d["busiest_ms"]))
for k in sorted(rows, key=str): print(k, " ".join(map(str, rows[k])))
PY
timeout 120 python3 -m bench matmul --threads 16 --json "$OUT/matmul-16.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
timeout 170 python3 -m bench matmul --threads 2 --json "$OUT/matmul-2.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
