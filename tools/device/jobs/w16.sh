# budget: 480
# #14: the AMX 32 x 32 loop with its tile loads interleaved between the products
# (MMX_INTERLEAVE, mul_mat_amx.h): the AMX tests on the built package (interleaved), then
# bench/csrc/mmx_parts.c built both ways taking turns (16 threads with a 16 bytes past a
# line and aligned, 2 threads; the result's hash must match), torch's bf16 matmul beside
# them, and the matmul suite at 16 and 2 threads.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_amx.py tests/test_gemm_dealt.py 2>&1 | tail -3
for v in 0 1; do
  gcc -O3 -march=x86-64-v4 -fopenmp -DMMX_INTERLEAVE=$v -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc \
    bench/csrc/mmx_parts.c -o /tmp/mmx_parts$v -lm || echo "mmx_parts$v: build failed"
done
TORCHBF="import sys,time,torch;n=int(sys.argv[1]);torch.set_num_threads(n);a=torch.randn(1024,1024).bfloat16();b=torch.randn(1024,1024).bfloat16()
for _ in range(20): b@a.T
ts=[]
for _ in range(41): t=time.perf_counter(); b@a.T; ts.append(time.perf_counter()-t)
ts.sort(); print('{\"lib\": \"torch bf16\", \"threads\": %d, \"median_ms\": %.4f}'%(n,ts[20]*1e3))"
for round in 1 2 3; do
  for v in 0 1; do
    MMX_PARTS_OFFSET=16 timeout 30 /tmp/mmx_parts$v 16 1024 1024 1024 | grep full >> "$OUT/mmxparts.jsonl" 2>&1
    MMX_PARTS_OFFSET=0 timeout 30 /tmp/mmx_parts$v 16 1024 1024 1024 | grep full >> "$OUT/mmxparts.jsonl" 2>&1
    MMX_PARTS_OFFSET=16 timeout 30 /tmp/mmx_parts$v 2 1024 1024 1024 | grep full >> "$OUT/mmxparts.jsonl" 2>&1
    MMX_PARTS_OFFSET=16 timeout 30 /tmp/mmx_parts$v 16 4096 64 4096 | grep full >> "$OUT/mmxparts.jsonl" 2>&1
  done
  timeout 30 python3 -c "$TORCHBF" 16 >> "$OUT/mmxparts.jsonl" 2>&1
  timeout 30 python3 -c "$TORCHBF" 2 >> "$OUT/mmxparts.jsonl" 2>&1
done
python3 - "$OUT/mmxparts.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    try: d = json.loads(l)
    except ValueError: print(l.strip()); continue
    if "lib" in d: print("torch", d["threads"], d["median_ms"]); continue
    print("il%d %5dx%dx%d t%-2d off%-2d %s med %.3f busy %.3f avg %.3f %s" % (d["interleave"], d["M"], d["N"], d["K"],
          d["threads"], d["offset"], d["grid"], d["median_ms"], d["busiest_ms"], d["avg_thread_ms"], d["dst_fnv"]))
PY
timeout 120 python3 -m bench matmul --threads 16 --json "$OUT/matmul-16.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
timeout 170 python3 -m bench matmul --threads 2 --json "$OUT/matmul-2.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
