# budget: 560
# #14 on the 16-core host, round 2 of 2026-11-27: the 16-lane float16 rows (cvt_probe, the
# f16 row tests), the GEMM micro-kernel's C-tile prefetch A/B (mm_tune, MM_PF_C 0/1, 3
# rounds, torch timed the same way between them), then the CPU suite at 2 and 16 threads.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
I="-Iggml_cy/cpu/csrc -Iggml_cy/core/csrc"
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_kernels_f16_rows.py 2>&1 | tail -2
gcc -O3 -march=x86-64-v4 -fopenmp -fPIC -shared $I bench/csrc/cvt_lib.c -o /tmp/cvt_lib.so || exit 1
timeout 100 python3 tools/device/cvt_probe.py "$OUT/cvt.json"
for v in 0 1; do gcc -O3 -march=x86-64-v4 -fopenmp -DMM_PF_C=$v $I bench/csrc/mm_tune.c -o /tmp/mmpc_$v -lm || exit 1; done
for round in 1 2 3; do
  for t in 2 16; do
    for v in 0 1; do
      MM_TUNE_TYPES=f32 OMP_NUM_THREADS=$t timeout -k 2 10 /tmp/mmpc_$v $t 1024 1024 1024 4096 64 4096 | sed "s/^{/{\"pfc\": $v, \"round\": $round, /" >> "$OUT/mm.jsonl"
    done
    timeout -k 2 30 python3 tools/device/torch_mm_time.py $t 1024 1024 1024 4096 64 4096 | sed "s/^{/{\"round\": $round, /" >> "$OUT/mm.jsonl"
  done
done
python3 -c "
import sys, json
for l in open('$OUT/mm.jsonl'):
    d = json.loads(l); print(d.get('lib', 'ggml_cy'), d['threads'], d['round'], d.get('pfc', '-'), d['M'], d['N'], d['K'], d['best_ms'], d['median_ms'])"
timeout 150 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2.json" 2>&1 | grep -E "FAIL|targets:|roofline:|f32->f16" | head -20
timeout 120 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:|f32->f16" | head -20
