# budget: 420
# Ran against commit c72943e (mul_mat_ndeal.h dealing every call: bench/results/
# mmndeal-xeon-w28-w32.txt); later commits deal only while the static split is seen to lag.
# #14 (probe): 2- and 4-thread float mul_mat with tasks dealt and one operand whole per
# thread (ggml_cy/cpu/csrc/mul_mat_ndeal.h) against the static split, mm_tune taking turns.
set -u
O=${1:-/tmp/w28}; mkdir -p "$O"
CF="-O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
gcc $CF bench/csrc/mm_tune.c -o /tmp/t_nd5 -lm || exit 1
gcc $CF -DMM_NDEAL_STEPS=3 '-DMM_NDEAL_CUM16={8,12,16}' bench/csrc/mm_tune.c -o /tmp/t_nd3 -lm || exit 1
gcc $CF -DMM_NDEAL_STEPS=1 '-DMM_NDEAL_CUM16={16}' bench/csrc/mm_tune.c -o /tmp/t_nd1 -lm || exit 1
SH="1024 1024 1024 4096 64 4096 2048 512 1024"
for th in 2 4; do
  for r in 1 2 3 4 5; do
    for v in static nd5 nd3 nd1; do
      if [ $v = static ]; then b=/tmp/t_nd5; nd=0; else b=/tmp/t_$v; nd=1; fi
      MM_TUNE_NDEAL=$nd MM_TUNE_TYPES=f32,f16 $b $th $SH | sed "s/^{/{\"v\": \"$v\", \"round\": $r, /" >> "$O/w28.jsonl"
    done
    python3 tools/device/torch_mm_time.py $th $SH | sed "s/^{/{\"v\": \"torch\", \"round\": $r, /" >> "$O/w28.jsonl"
  done
done
python3 - "$O/w28.jsonl" <<'PY'
import json, sys, collections, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
g = collections.defaultdict(list)
for r in rows:
    g[(r["threads"], r["M"], r["N"], r["K"], r.get("type", "f32"), r["v"])].append(r)
for k in sorted(g):
    v = g[k]
    med = statistics.median(x["median_ms"] for x in v)
    bus = [x.get("busiest_ms", 0) / max(x.get("avg_thread_ms", 1), 1e-9) for x in v]
    print(k, "median of medians %.3f" % med, "best %.3f" % min(x["best_ms"] for x in v),
          "medians", [x["median_ms"] for x in v], "busiest/avg %.2f" % statistics.median(bus))
PY
