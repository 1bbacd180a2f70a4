# budget: 420
# #14: the 16-thread eager add of 1e6 float32 (tools/device/eager16_probe.py: Python call,
# kernel path alone, 2-D rows, 8/12 threads, spreading off, torch, numpy), the same add in C
# (add_probe.c; when this round ran, also built with -march=x86-64-v4: it timed the same), the
# pool's region cost with the spin's yield every 256 pauses against the pool before
# (pool_probe.c, old = tools/device/old_gcy_pool.h, carried uncommitted), 16-thread calls
# after an idle spell (wake_probe.c), then the CPU suite at 16 threads.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
bash tools/device/build_probes.sh || exit 1   # the C probes, into /tmp
timeout 150 python3 tools/device/eager16_probe.py "$OUT/eager16.json" "$T"
for r in 1 2; do timeout 30 /tmp/add_probe 1000000 16 | tee -a "$OUT/add.jsonl"; done
for r in 1 2 3; do for v in old new; do
  timeout 30 /tmp/pool_$v 2 8 16 | sed "s/^{/{\"round\": $r, \"layout\": \"$v\", /" | tee -a "$OUT/pool.jsonl"
done; done
for dyn in 0 1; do timeout 40 /tmp/wake_probe 16 50000 25 12 $dyn | tee -a "$OUT/wake.jsonl"; done
timeout 150 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -30
