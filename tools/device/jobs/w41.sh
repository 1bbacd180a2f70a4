# budget: 300
# #14: where the AMX engine's 2-thread time goes when the host is quiet. The host flips
# between fast and slow periods of seconds (rounds w38-w40), so the variants take turns in
# ten short rounds and each run reports its fastest and first-quartile calls as well
# (bench/csrc/mmx_parts.c): c1 (as shipped: misaligned a copied per sub-block), c0
# (-DMMX_COPY_MISALIGNED=0: tiles loaded from a in place), v256 / v512 (panels of 256 x 2048
# / 512 x 1024); a/b/dst at offset 16 (a context's tensors), c1 also at offset 0; 1024^3 and
# the suite's 4096x4096x64 (M 4096, N 64, K 4096); torch's bf16 time alone each round.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
CF="-O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
gcc $CF bench/csrc/mmx_parts.c -o /tmp/mmx_c1 -lm || exit 1
gcc $CF -DMMX_COPY_MISALIGNED=0 bench/csrc/mmx_parts.c -o /tmp/mmx_c0 -lm || exit 1
gcc $CF -DMMX_NX=256 -DMMX_PANEL_ELEMS=524288 bench/csrc/mmx_parts.c -o /tmp/mmx_v256 -lm || exit 1
gcc $CF -DMMX_NX=512 -DMMX_PANEL_ELEMS=524288 bench/csrc/mmx_parts.c -o /tmp/mmx_v512 -lm || exit 1
for r in 1 2 3 4 5 6 7 8 9 10; do
  for s in "1024 1024 1024" "4096 64 4096"; do
    for v in c1 c0 v256 v512 c1z; do
      o=16; b=$v; [ $v = c1z ] && { o=0; b=c1; }
      MMX_PARTS_OFFSET=$o /tmp/mmx_$b 2 $s | grep -E '"mode": "(static|dealt|packb|copya)"' \
        | sed "s/^{/{\"variant\": \"$v\", \"round\": $r, /" >> "$OUT/fast.jsonl"
    done
    python3 tools/device/torch_bf16_time.py 2 $s | sed "s/^{/{\"round\": $r, /" >> "$OUT/fast.jsonl"
  done
  echo "round $r done"
done
python3 - "$OUT/fast.jsonl" <<'PY'
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
agg = collections.defaultdict(list)
for r in rows:
    if r.get("lib"):
        agg[(r["shape"], "torch", "-")].append(r["median_ms"])
    elif r["mode"] == "dealt":
        agg[("%dx%dx%d" % (r["M"], r["N"], r["K"]), r["variant"], "dealt")].append(
            (r["min_ms"], r["q1_ms"], r["median_ms"]))
for k, v in sorted(agg.items()):
    if k[1] == "torch":
        v = sorted(v); print(k, "medians: min %.3f q1 %.3f med %.3f" % (v[0], v[len(v)//4], v[len(v)//2]))
    else:
        mins = sorted(x[0] for x in v); q1s = sorted(x[1] for x in v); meds = sorted(x[2] for x in v)
        print(k, "min %.3f  best q1 %.3f  best median %.3f  median of medians %.3f" % (mins[0], q1s[0], meds[0], meds[len(meds)//2]))
PY
