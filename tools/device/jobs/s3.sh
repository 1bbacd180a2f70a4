# budget: 300
# #14 on the 16-core host, round 3 of 2026-11-27: bench matmul at 2 and 16 threads with the
# micro-kernel's C-tile prefetch (MM_PF_C=1), then the scaling table (the fused chain).
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 80 python3 -m bench matmul --quick --threads 2 --json "$OUT/matmul-2.json" 2>&1 | grep -E "^mul_mat|targets:|FAIL" | cut -c1-150 | head -16
timeout 80 python3 -m bench matmul --quick --threads "$T" --json "$OUT/matmul-$T.json" 2>&1 | grep -E "^mul_mat|targets:|FAIL" | cut -c1-150 | head -16
timeout 130 python3 -m bench scaling --quick --json "$OUT/scaling.json" 2>&1 | grep -E "targets:|FAIL" | head -12
