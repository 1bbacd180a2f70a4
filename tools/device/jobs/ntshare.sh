# budget: 300
# #14: after the many-core share rule (stream_pays: one-pass rows stream beyond usable cores x
# 2 MiB at any thread count on 8+ cores): its tests on the 16-core host, the CPU suite at 16
# and at 2 threads (JSON to commit), nt_probe's 2-thread rows for reference.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_cacheinfo.py tests/test_kernels_par_min.py tests/test_kernels_layout.py 2>&1 | tail -2
python3 -c "from ggml_cy.cpu import _kernels as K; print('share bytes', K._nt_share_bytes(), 'llc', K.llc_info())"
timeout 120 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -30
timeout 120 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -40
