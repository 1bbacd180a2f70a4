# budget: 250
# #14 on the 16-core host, last round of 2026-11-27: the CPU suite at 16 and 2 threads with
# the harness's 15 ms warm-up after each pause (bench/_harness.py, Setup.warm_s).
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 110 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -16
timeout 130 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -16
