# budget: 420
# #14 at 2 threads on the 16-core host, 2026-11-27 late: why the allocating float32 ->
# float16 conversion lost to torch's x.to (round u1 0.61x) while the copy into a kept output
# tied: tools/device/astype_probe.py (kept / fresh outputs, numpy's and torch's allocations,
# result addresses, THP setting), then the CPU suite at 2 threads.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 60 python3 tools/device/astype_probe.py "$OUT/astype.json" 2>&1 | tail -8
timeout 60 python3 tools/device/astype_probe.py "$OUT/astype-r2.json" 2>&1 | tail -8
timeout 160 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2.json" 2>&1 | grep -E "FAIL|targets:|roofline:|f32->f16" | head -20
