# budget: 150
# manycore (issue 14 item 1): thread scaling (1, 2, 4, 8, 16) of add, broadcast add and the
# fused a*b+c*d-e at 1e7 and 1e8 against numpy/numexpr/torch and the hand-fused C loops.
set -u
OUT=$1
T=$(nproc)
timeout 140 python3 -m bench scaling --quick --threads "$T" --json "$OUT/scaling-$T.json" 2>&1 | tail -60
