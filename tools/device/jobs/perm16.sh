# budget: 420
# #14: the permuted copy's row paths (permute_probe.py: as planned, plain rows, interleaved
# plain rows, the same one run at a time, staged and streamed; torch alongside) at 1, 2 and
# 16 threads, then the CPU suite at 16 and 2 threads with the interleaved rows in the plan.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 120 python3 tools/device/permute_probe.py "$OUT/perm.json" "$T"
timeout 130 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -20
timeout 110 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2.json" 2>&1 | grep -E "targets:|FAIL" | head -24
