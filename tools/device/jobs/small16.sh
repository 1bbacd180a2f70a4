# budget: 400
# #14: small eager calls on the 16-core host: where a parallel region pays off
# (tools/device/par_probe.py), fresh result vs out= and page faults per call
# (tools/device/small_probe.py); then the CPU suite at 16 threads (JSON to commit).
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
timeout 100 python3 tools/device/par_probe.py "$OUT/par-$T.json" "$T" 2>&1 | tail -40
timeout 60 python3 tools/device/small_probe.py "$OUT/small-$T.json" "$T" 2>&1 | tail -20
timeout 220 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -30
