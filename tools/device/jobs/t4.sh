# budget: 560
# #14 on the 16-core host, round 4 of 2026-11-27 evening: evaluate keeping its untouched
# scratch (graph suite), the CPU suite at 16 threads after the dyn refactor, the math suite
# at 16 threads (200 s: with the pause and warm-up per block it outgrew 120 s), then a
# placement probe for the 2-thread GEMM: mm_tune (ggml_cy's kernel under OpenMP) and torch
# at 1 and 2 threads, unpinned and pinned to CPU pairs, 3 rounds.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 30 python3 -m pytest -q -p no:cacheprovider tests/test_expr_scratch.py tests/test_fused_dyn.py 2>&1 | tail -1
timeout 40 python3 -m bench graph --quick --threads "$T" --json "$OUT/graph-$T.json" 2>&1 | grep -E "^a\*b|^16-op|FAIL|targets:" | cut -c1-220 | head -8
timeout 100 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -10
timeout 200 python3 -m bench math --quick --threads "$T" --json "$OUT/math-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -12
INC="-Iggml_cy/cpu/csrc -Iggml_cy/core/csrc"
gcc -O3 -march=x86-64-v4 -fopenmp $INC bench/csrc/mm_tune.c -o /tmp/mm_tune -lm || exit 1
for round in 1 2 3; do
  for pin in none 0 0,1 0,8 4,5 6,14; do
    n=2; [ "$pin" = 0 ] && n=1
    pre=""; [ "$pin" != none ] && pre="taskset -c $pin"
    MM_TUNE_TYPES=f32 OMP_NUM_THREADS=$n OMP_PROC_BIND=$([ "$pin" = none ] && echo false || echo true) \
      timeout -k 2 10 $pre /tmp/mm_tune $n 1024 1024 1024 2>&1 | grep gflops | sed "s/^/{\"round\": $round, \"pin\": \"$pin\", \"lib\": \"ggml_cy\", \"line\": /; s/\$/}/" >> "$OUT/place.jsonl"
    timeout -k 2 20 $pre python3 tools/device/torch_mm_time.py $n 1024 1024 1024 2>&1 | grep gflops | sed "s/^/{\"round\": $round, \"pin\": \"$pin\", \"lib\": \"torch\", \"line\": /; s/\$/}/" >> "$OUT/place.jsonl"
  done
done
python3 - "$OUT/place.jsonl" <<'PY'
import json, sys, collections
rows = collections.defaultdict(list)
for l in open(sys.argv[1]):
    d = json.loads(l)
    rows[(d["pin"], d["lib"])].append(d["line"]["gflops"])
for k in sorted(rows):
    print(k, [round(x) for x in rows[k]])
PY
