# budget: 200
# Issue 14, 16-core host: the scaling table again (round final26 measured the fused chain at
# 1e7 with 16 threads at 7.5 ms, marked noisy, against 1.24 ms in round q14r3) and the CPU suite.
set -u
OUT=$1
export PYTHONPATH=.:${PYTHONPATH:-}
T=$(nproc)
for r in 1 2; do
  timeout 60 python3 -m bench scaling --quick --threads "$T" --json "$OUT/scaling-$T-r$r.json" 2>&1 | grep -E "^a\*b|FAIL|targets:" | cut -c1-60,150- | head -8
done
timeout 60 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -12
