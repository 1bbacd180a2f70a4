# budget: 480
# #14: the 16-thread eager add traced per thread (tools/device/dyn_trace_probe.py), the same
# add in C (add_probe.c), the pool's region cost old vs new (pool_probe.c; old =
# tools/device/old_gcy_pool.h, the pool before this session, carried uncommitted), calls
# after an idle spell (wake_probe.c), the eager probe, then the CPU suite at 16 threads.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
bash tools/device/build_probes.sh || exit 1   # the C probes, into /tmp
timeout 120 python3 tools/device/dyn_trace_probe.py "$OUT/trace16.json" "$T"
for r in 1 2; do timeout 30 /tmp/add_probe 1000000 16 | tee -a "$OUT/add.jsonl"; done
for r in 1 2 3; do for v in old new; do
  timeout 30 /tmp/pool_$v 2 8 16 | sed "s/^{/{\"round\": $r, \"layout\": \"$v\", /" | tee -a "$OUT/pool.jsonl"
done; done
for dyn in 0 1; do timeout 40 /tmp/wake_probe 16 50000 25 12 $dyn | tee -a "$OUT/wake.jsonl"; done
timeout 150 python3 tools/device/eager16_probe.py "$OUT/eager16.json" "$T"
timeout 150 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -30
