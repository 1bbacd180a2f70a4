# budget: 200
# #14 item 3: the f32 kernel's blocking constants at 2 and 16 threads on the 16-core host,
# candidates interleaved over 3 rounds (the host is noisy), bench/csrc/mm_tune.c.
set -u
OUTD=$1
INC="-Iggml_cy/cpu/csrc -Iggml_cy/core/csrc"
CFGS="256_512_192 512_256_96 128_512_192 384_256_96 512_512_96"
for cfg in $CFGS; do
  IFS=_ read kc nc mc <<<"$cfg"
  gcc -O3 -march=x86-64-v4 -fopenmp -DMM_KC=$kc -DMM_NC=$nc -DMM_MC=$mc $INC bench/csrc/mm_tune.c -o /tmp/mmt_$cfg -lm || exit 1
done
for round in 1 2 3; do
  for t in 2 16; do
    for cfg in $CFGS; do
      MM_TUNE_TYPES=f32 OMP_NUM_THREADS=$t timeout -k 2 12 /tmp/mmt_$cfg $t 1024 1024 1024 4096 64 4096 2>&1 | grep '"f32"' | sed "s/^/{\"round\": $round, \"cfg\": \"$cfg\", \"line\": /; s/\$/}/" >> "$OUTD/tune2.jsonl"
    done
  done
done
python3 - "$OUTD/tune2.jsonl" <<'PY'
import json, sys, collections
rows = collections.defaultdict(list)
for l in open(sys.argv[1]):
    d = json.loads(l); x = d["line"]
    rows[(x["threads"], x["M"], x["N"], d["cfg"])].append(x["gflops"])
for k in sorted(rows):
    v = sorted(rows[k]); print(k, "median GF/s %.0f" % v[len(v)//2], [round(a) for a in rows[k]])
PY
