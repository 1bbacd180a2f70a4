# budget: 480
# #14, session of 2026-11-27 afternoon: where the 16-core host stands after kern_copy_rows and
# the one-pass broadcast runs: the CPU suite at 16 and 2 threads, the scaling table (fused chain).
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 120 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -20
timeout 150 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -20
timeout 130 python3 -m bench scaling --quick --json "$OUT/scaling.json" 2>&1 | grep -E "targets:|FAIL" | head -12
timeout 70 python3 -m bench matmul --quick --threads 2 --json "$OUT/matmul-2.json" 2>&1 | grep -E "targets:|FAIL" | head -12
