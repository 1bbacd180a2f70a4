# budget: 400
# #14: the explicit-SIMD float32/float64 rows (kernels_stream.h) peeled to the destination's
# 64-byte boundary too: the add at line offsets 0 and 16 (align_probe.py; its 1-thread rows
# are the clean ones: torch's spinning workers share the 16-thread rows), the per-thread
# trace, then the CPU suite at 16 and 2 threads.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
timeout 100 python3 tools/device/align_probe.py "$OUT/align.json" "$T"
timeout 80 python3 tools/device/dyn_trace_probe.py "$OUT/trace16.json" "$T" | cut -c1-300
timeout 130 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -20
timeout 110 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2.json" 2>&1 | grep -E "targets:|FAIL" | head -24
