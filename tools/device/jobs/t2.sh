# budget: 420
# #14 on the 16-core host, round 2 of 2026-11-27 evening (same machine, no rebuild): matmul at
# 16 threads and the math suite at 16 and 1 threads with the harness warm-up.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 90 python3 -m bench matmul --quick --threads "$T" --json "$OUT/matmul-$T.json" 2>&1 | grep -E "^mul_mat|targets:|FAIL" | cut -c1-150 | head -16
timeout 120 python3 -m bench math --quick --threads "$T" --json "$OUT/math-$T.json" 2>&1 | grep -E "targets:|FAIL" | head -12
timeout 120 python3 -m bench math --quick --threads 1 --json "$OUT/math-1.json" 2>&1 | grep -E "targets:|FAIL" | head -12
