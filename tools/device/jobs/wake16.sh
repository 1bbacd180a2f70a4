# budget: 540
# #14: the pool after an idle spell (bench/csrc/wake_probe.c: old / yield / spread settings,
# 2 and 16 threads, static and dynamic jobs), the region cost old vs new layout
# (pool_probe.c, old = tools/device/old_gcy_pool.h, the pool before this change, carried
# uncommitted), the 16-thread 1e6 add outside Python (add_probe.c: one, omp, static, dyn,
# start lags), 4K-offset outputs at 1e4; then the CPU suite at 16 threads and at 2 threads
# with the new waits on and off (GGML_CY_POOL_SPREAD=0 GGML_CY_JOB_YIELD_US=0).
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
bash tools/device/build_probes.sh || exit 1   # the C probes, into /tmp
for nth in 2 16; do for dyn in 0 1; do
  timeout 40 /tmp/wake_probe $nth 50000 25 12 $dyn | tee -a "$OUT/wake.jsonl"
done; done
for r in 1 2; do for v in old new; do
  timeout 30 /tmp/pool_$v 2 16 | sed "s/^{/{\"round\": $r, \"layout\": \"$v\", /" | tee -a "$OUT/pool.jsonl"
done; done
for n in 100000 262144 1000000 3000000; do timeout 30 /tmp/add_probe $n 16 | tee -a "$OUT/add.jsonl"; done
for sh in 0 288 3808; do timeout 30 /tmp/add_probe 10000 2 $sh | tee -a "$OUT/add.jsonl"; done
timeout 150 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -30
timeout 100 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2-on.json" 2>&1 | grep -E "targets:" | sed "s/^/on /"
GGML_CY_POOL_SPREAD=0 GGML_CY_JOB_YIELD_US=0 timeout 100 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2-off.json" 2>&1 | grep -E "targets:" | sed "s/^/off /"
