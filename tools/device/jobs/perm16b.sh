# budget: 100
# #14: the CPU suite at 16 threads with the permuted copy's final plan (plain rows in the
# output's order below the LLC: gathered streaming no longer by the share rule).
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 95 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:|permute" | head -20
