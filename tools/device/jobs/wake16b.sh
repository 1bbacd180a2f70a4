# budget: 540
# #14: which of the new waits (yields inside the spin, the yield phase before sleeping,
# spreading) costs 16-thread static jobs after an idle spell (bench/csrc/wake_probe.c, all
# five settings, twice); ggml_cy's add against plain C on the same arrays in one process
# (addlib_probe.py + bench/csrc/add_lib.c); the graph suite at 16 threads with the yield
# phase on (default) and off (GGML_CY_JOB_YIELD_US=0), alternating.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
bash tools/device/build_probes.sh || exit 1   # the C probes, into /tmp
for r in 1 2; do for dyn in 0 1; do
  timeout 60 /tmp/wake_probe 16 50000 25 12 $dyn | sed "s/^{/{\"round\": $r, /" | tee -a "$OUT/wake.jsonl"
done; done
timeout 120 python3 tools/device/addlib_probe.py "$OUT/addlib.json" "$T" /tmp/add_lib.so
for r in 1 2; do
  timeout 110 python3 -m bench graph --quick --threads "$T" --json "$OUT/graph-on-$r.json" 2>&1 | grep -E "targets:|FAIL" | head -8 | sed "s/^/on $r /"
  GGML_CY_JOB_YIELD_US=0 timeout 110 python3 -m bench graph --quick --threads "$T" --json "$OUT/graph-off-$r.json" 2>&1 | grep -E "targets:|FAIL" | head -8 | sed "s/^/off $r /"
done
