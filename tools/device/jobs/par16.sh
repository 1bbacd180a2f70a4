# budget: 300
# #14: after the byte-aware parallel threshold (threads_for: PAR_MIN_ELEMS 32768, 8-byte
# types from PAR_MIN_BYTES): its test, then the CPU suite at 16 and at 2 threads (JSON to
# commit), and the eager sizes around the thresholds at the default thread choice.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_kernels_par_min.py tests/test_pool_dyn.py 2>&1 | tail -2
timeout 120 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -30
timeout 120 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -30
