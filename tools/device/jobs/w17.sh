# budget: 480
# #14: the AMX product's a rows prefetched a sub-block ahead (MMX_PF_A) and b panels of 256
# columns (MMX_NX; a re-read half as often): the AMX tests on the built package (NX 128,
# prefetch on), then bench/csrc/mmx_parts.c built four ways taking turns (the result's hash
# must match), torch's bf16 matmul beside them, and the matmul suite at 16 and 2 threads.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_amx.py tests/test_gemm_dealt.py 2>&1 | tail -3
V="128_0 128_1 256_0 256_1"
for v in $V; do
  gcc -O3 -march=x86-64-v4 -fopenmp -DMMX_NX=${v%_*} -DMMX_PF_A=${v#*_} -Iggml_cy/cpu/csrc \
    -Iggml_cy/core/csrc bench/csrc/mmx_parts.c -o /tmp/mp_$v -lm || echo "mp_$v: build failed"
done
TORCHBF="import sys,time,torch;n=int(sys.argv[1]);m,nn,k=[int(x) for x in sys.argv[2:5]];torch.set_num_threads(n);a=torch.randn(m,k).bfloat16();b=torch.randn(nn,k).bfloat16()
for _ in range(20): b@a.T
ts=[]
for _ in range(41): t=time.perf_counter(); b@a.T; ts.append(time.perf_counter()-t)
ts.sort(); print('{\"lib\": \"torch bf16\", \"threads\": %d, \"shape\": \"%dx%dx%d\", \"median_ms\": %.4f}'%(n,m,nn,k,ts[20]*1e3))"
for round in 1 2 3; do
  for v in $V; do
    for cfg in "16 16 1024 1024 1024" "0 16 1024 1024 1024" "16 2 1024 1024 1024" "0 2 1024 1024 1024" \
               "16 16 4096 64 4096" "16 16 4096 1 4096" "16 2 4096 1 4096"; do
      set -- $cfg
      MMX_PARTS_OFFSET=$1 timeout 30 /tmp/mp_$v $2 $3 $4 $5 | grep full >> "$OUT/mmxparts.jsonl" 2>&1
    done
  done
  for cfg in "16 1024 1024 1024" "2 1024 1024 1024" "16 4096 64 4096" "16 4096 1 4096" "2 4096 1 4096"; do
    timeout 30 python3 -c "$TORCHBF" $cfg >> "$OUT/mmxparts.jsonl" 2>&1
  done
done
python3 - "$OUT/mmxparts.jsonl" <<'PY'
import json, sys, collections
rows = collections.defaultdict(list)
for l in open(sys.argv[1]):
    try: d = json.loads(l)
    except ValueError: print(l.strip()); continue
    if "lib" in d: rows[("torch", d["threads"], d["shape"])].append(d["median_ms"]); continue
    key = ("%dx%dx%d" % (d["M"], d["N"], d["K"]), d["threads"], d["offset"], d["nx"], d["pf_a"], d["grid"], d["dst_fnv"])
    rows[key].append(d["median_ms"])
for k in sorted(rows, key=str): print(k, " ".join("%.3f" % v for v in rows[k]))
PY
timeout 120 python3 -m bench matmul --threads 16 --json "$OUT/matmul-16.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
timeout 170 python3 -m bench matmul --threads 2 --json "$OUT/matmul-2.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
