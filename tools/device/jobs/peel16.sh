# budget: 540
# #14: contiguous rows peeled to the destination's 64-byte boundary (_kernels.pyx.tp,
# line_peel): ggml_cy against plain C on the same arrays (addlib_probe.py), the add at cache
# line offsets 0 and 16 against numpy and torch (align_probe.py), the per-thread trace, then
# the CPU suite at 16 and 2 threads.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
bash tools/device/build_probes.sh || exit 1   # the C probes, into /tmp
timeout 100 python3 tools/device/addlib_probe.py "$OUT/addlib.json" "$T" /tmp/add_lib.so
timeout 100 python3 tools/device/align_probe.py "$OUT/align.json" "$T"
timeout 80 python3 tools/device/dyn_trace_probe.py "$OUT/trace16.json" "$T" | cut -c1-400
timeout 130 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -20
timeout 110 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2.json" 2>&1 | grep -E "targets:|FAIL" | head -24
