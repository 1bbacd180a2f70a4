# budget: 300
# 2026-11-27: after the packed short-row runs (run_rows_srun): kernel tests on the 16-core
# host (AVX-512, 16 threads) and the CPU suite at 16 threads (JSON to commit).
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_kernels_srun.py tests/test_kernels_transpose.py \
  tests/test_kernels_layout.py tests/test_kernels_ops.py tests/test_eager_threads.py 2>&1 | tail -3 | tee "$OUT/tests.txt"
timeout 170 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "^\(|^a.T|^permute|roofline:|FAIL|targets:" | head -24
