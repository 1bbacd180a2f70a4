# budget: 400
# issue 14 (2026-11-29, later): where the open host items stand with today's code: the
# matmul suite at 2 threads twice (its f16/bf16 1024^3 rows have flipped between rounds),
# and bench cpu --quick at 2 threads.
set -u
OUT=$1
export PYTHONPATH=.:${PYTHONPATH:-}
for r in 1 2; do
  timeout 150 python3 -m bench matmul --threads 2 --json "$OUT/matmul-2-r$r.json" 2>&1 | grep -E "^mul_mat|FAIL|targets:" | head -14
done
timeout 150 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2-quick.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -16
