# budget: 300
# #14 at 2 threads on the 16-core host: the f32 -> f16 row variants against torch
# (tools/device/cvt_probe.py), the f32 mat-vec's software prefetch distance and the f32 GEMM
# kernel alone (bench/csrc/mm_tune.c) against torch's matmul timed the same way, 3 rounds.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
I="-Iggml_cy/cpu/csrc -Iggml_cy/core/csrc"
gcc -O3 -march=x86-64-v4 -fopenmp -fPIC -shared $I bench/csrc/cvt_lib.c -o /tmp/cvt_lib.so || exit 1
timeout 100 python3 tools/device/cvt_probe.py "$OUT/cvt.json"
for pf in 512 1024 2048 4096 8192; do
  gcc -O3 -march=x86-64-v4 -fopenmp -DMM_GV_PREFETCH=$pf $I bench/csrc/mm_tune.c -o /tmp/mmpf_$pf -lm || exit 1
done
for round in 1 2 3; do
  for pf in 512 1024 2048 4096 8192; do
    MM_TUNE_TYPES=f32,f16 OMP_NUM_THREADS=2 timeout -k 2 10 /tmp/mmpf_$pf 2 4096 1 4096 | sed "s/^{/{\"pf\": $pf, \"round\": $round, /" >> "$OUT/mv.jsonl"
  done
  MM_TUNE_TYPES=f32 OMP_NUM_THREADS=2 timeout -k 2 10 /tmp/mmpf_2048 2 1024 1024 1024 | sed "s/^{/{\"round\": $round, /" >> "$OUT/mv.jsonl"
  timeout -k 2 30 python3 tools/device/torch_mm_time.py 2 4096 1 4096 1024 1024 1024 | sed "s/^{/{\"round\": $round, /" >> "$OUT/mv.jsonl"
done
cat "$OUT/mv.jsonl" | python3 -c "
import sys, json
for l in sys.stdin:
    d = json.loads(l); print(d.get('lib', 'ggml_cy'), d.get('type', 'f32'), d['round'], d.get('pf', '-'), d['M'], d['N'], d['K'], d['best_ms'], d['median_ms'])"
# the fused chain at 16 threads: block size and streaming variants against the C loops
DIAG_ROUNDS=3 timeout -k 2 60 python3 tools/diag_fused16.py --json "$OUT/diagfused-1e7.json"
DIAG_ROUNDS=3 timeout -k 2 90 python3 tools/diag_fused16.py --big --json "$OUT/diagfused-1e8.json"
