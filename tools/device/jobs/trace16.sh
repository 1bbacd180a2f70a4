# budget: 480
# #14: the 16-thread eager add traced per thread (tools/device/dyn_trace_probe.py), the same
# add in C (add_probe.c), the pool's region cost old vs new (pool_probe.c; old =
# tools/device/old_gcy_pool.h, the pool before this session, carried uncommitted), calls
# after an idle spell (wake_probe.c), the eager probe, then the CPU suite at 16 threads.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
mkdir -p /tmp/oldpool && cp tools/device/old_gcy_pool.h /tmp/oldpool/gcy_pool.h
gcc -O3 -march=native -Iggml_cy/cpu/csrc bench/csrc/wake_probe.c -o /tmp/wake_probe -lpthread || exit 1
gcc -O3 -march=native -fopenmp -Iggml_cy/cpu/csrc bench/csrc/add_probe.c -o /tmp/add_probe -lpthread || exit 1
gcc -O2 -fopenmp -I/tmp/oldpool bench/csrc/pool_probe.c -o /tmp/pool_old -lpthread || exit 1
gcc -O2 -fopenmp -Iggml_cy/cpu/csrc bench/csrc/pool_probe.c -o /tmp/pool_new -lpthread || exit 1
timeout 120 python3 tools/device/dyn_trace_probe.py "$OUT/trace16.json" "$T"
for r in 1 2; do timeout 30 /tmp/add_probe 1000000 16 | tee -a "$OUT/add.jsonl"; done
for r in 1 2 3; do for v in old new; do
  timeout 30 /tmp/pool_$v 2 8 16 | sed "s/^{/{\"round\": $r, \"layout\": \"$v\", /" | tee -a "$OUT/pool.jsonl"
done; done
for dyn in 0 1; do timeout 40 /tmp/wake_probe 16 50000 25 12 $dyn | tee -a "$OUT/wake.jsonl"; done
timeout 150 python3 tools/device/eager16_probe.py "$OUT/eager16.json" "$T"
timeout 150 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -30
