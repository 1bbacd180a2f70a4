# budget: 200
# #14 item 3 after w10 (16 threads, 1024^3: the busiest thread ~40% above the average with
# the shipped static split; 8x8 tasks dealt from a counter 12-15% faster, at torch's
# level): candidate grids for dealt tasks against the shipped static split, three shapes,
# 2 and 16 threads, torch alongside (C harness, OpenMP threads). No package build.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
gcc -O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc bench/csrc/mm_tune.c -o /tmp/mmt -lm || exit 1
one() {  # threads "M N K" grid-variant...
  local t=$1 s=$2; shift 2
  for v in "$@"; do
    g=${v% dyn}; d=0; [ "$v" != "$g" ] && d=1; [ "$g" = ship ] && g=""
    MM_TUNE_GRID=$g MM_TUNE_DYN=$d MM_TUNE_TYPES=f32 timeout 20 /tmp/mmt $t $s | sed "s/^{/{\"round\": $r, /" >> "$OUT/grids.jsonl"
  done
  set -- $s
  timeout 30 python3 tools/device/torch_mm_time.py $t $1 $2 $3 | sed "s/^{/{\"round\": $r, /" >> "$OUT/grids.jsonl"
}
for r in 1 2 3; do
  one 16 "1024 1024 1024" ship "4,4 dyn" "8,8 dyn" "8,4 dyn"
  one 2 "1024 1024 1024" ship "2,1 dyn" "2,4 dyn" "2,2 dyn"
  one 16 "4096 64 4096" ship "16,1 dyn" "32,1 dyn" "64,1 dyn"
  one 2 "4096 64 4096" ship "2,1 dyn" "4,1 dyn" "8,1 dyn"
  one 16 "4096 512 4096" ship "8,2 dyn" "16,2 dyn" "16,4 dyn"
  one 2 "4096 512 4096" ship "2,1 dyn" "4,1 dyn" "8,1 dyn"
done
python3 - "$OUT/grids.jsonl" <<'PY'
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
acc = collections.defaultdict(list)
for d in rows:
    key = (d["M"], d["N"], d["K"], d["threads"], d.get("grid", "torch") if "lib" not in d else "torch")
    acc[key].append(d["median_ms"])
for k, v in sorted(acc.items()):
    print(*k, "medians", v)
PY
