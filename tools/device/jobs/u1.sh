# budget: 470
# #14 on the 16-core host, round 1 of 2026-11-27 night: the SIMD math rows' head to the
# output's 64-byte boundary and the cheaper float32 expm1 (math at 1 thread), the float32 ->
# float16 row (cpu at 2 threads: f32->f16 copyto/astype 1e7), matmul at 2 threads on this
# tree (round t1's misses), and the host's CPU topology (which CPUs share a core).
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
{ lscpu; for c in /sys/devices/system/cpu/cpu[0-9]*; do echo "$(basename $c) $(cat $c/topology/thread_siblings_list 2>/dev/null) core $(cat $c/topology/core_id 2>/dev/null)"; done; } > "$OUT/topo.txt" 2>&1
grep -E "Thread|Core|Socket|NUMA node" "$OUT/topo.txt" | head -6
timeout 30 python3 -m pytest -q -p no:cacheprovider tests/test_simd_math.py -k "alignment or layout" tests/test_kernels_f16_rows.py 2>&1 | tail -1
timeout 130 python3 -m bench math --quick --threads 1 --json "$OUT/math-1.json" 2>&1 | grep -E "targets:|FAIL" | head -12
timeout 120 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2.json" 2>&1 | grep -E "FAIL|targets:" | head -10
timeout 110 python3 -m bench matmul --quick --threads 2 --json "$OUT/matmul-2.json" 2>&1 | grep -E "^mul_mat|targets:|FAIL" | cut -c1-150 | head -16
