# budget: 500
# #14: the AMX engine's new defaults (panels of 256 x 2048; misaligned a copied only for
# panels of 65+ columns) against the old (128 x 2048, copied from 33), mmx_parts built both
# ways, taking turns in six short rounds at 2 and 16 threads, a/b/dst at offset 16 (a
# context's tensors), 1024^3 and the suite's 4096x4096x64 (M 4096, N 64, K 4096), torch's
# bf16 time alone each round; the AMX bits tests; the matmul suites.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 120 python3 -m pytest -q -x -p no:cacheprovider tests/test_gemm_amx.py 2>&1 | tail -2
CF="-O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
gcc $CF -DMMX_NX=128 -DMMX_PANEL_ELEMS=262144 -DMMX_COPY_MIN_N=33 bench/csrc/mmx_parts.c -o /tmp/mmx_old -lm || exit 1
gcc $CF bench/csrc/mmx_parts.c -o /tmp/mmx_new -lm || exit 1
for r in 1 2 3 4 5 6; do
  for t in 2 16; do
    for s in "1024 1024 1024" "4096 64 4096"; do
      for v in old new; do
        MMX_PARTS_OFFSET=16 /tmp/mmx_$v $t $s | grep -E '"mode": "(static|dealt)"' \
          | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /" >> "$OUT/defaults.jsonl"
      done
      python3 tools/device/torch_bf16_time.py $t $s | sed "s/^{/{\"round\": $r, /" >> "$OUT/defaults.jsonl"
    done
  done
done
python3 - "$OUT/defaults.jsonl" <<'PY'
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
agg = collections.defaultdict(list)
for r in rows:
    if r.get("lib"):
        agg[(r["threads"], r["shape"], "torch")].append(r["median_ms"])
    elif r["mode"] == "dealt":
        agg[(r["threads"], "%dx%dx%d" % (r["M"], r["N"], r["K"]), r["variant"])].append(r["median_ms"])
for k, v in sorted(agg.items()):
    v = sorted(v)
    print(k, "medians over rounds: best %.3f q1 %.3f median %.3f" % (v[0], v[len(v) // 4], v[len(v) // 2]))
PY
bash tools/device/matmul_suites.sh "$OUT"
