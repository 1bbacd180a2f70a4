# budget: 400
# Last round of 2026-11-26 session 3 on the 16-core host (AMX): after the dups refactor
# (mm_tr16 shared with the AMX code, one task grid) and the transpose/permute work: the
# mul_mat/AMX and kernel tests, bench matmul at 16 and 2 threads (3-round blocks), the CPU
# suite and the graph suite at 16 threads.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_paths.py tests/test_gemm_amx.py \
  tests/test_matvec_repack.py tests/test_graph_mul_mat.py tests/test_graph_decode_path.py \
  tests/test_kernels_layout.py tests/test_kernels_f16_fused.py tests/test_eager_threads.py 2>&1 | tail -4 | tee "$OUT/tests.txt"
timeout 90 python3 -m bench matmul --quick --threads "$T" --json "$OUT/matmul-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -12
timeout 90 python3 -m bench matmul --quick --threads 2 --json "$OUT/matmul-2.json" 2>&1 | grep -E "FAIL|targets:" | head -12
timeout 150 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -12
timeout 60 python3 -m bench graph --quick --threads "$T" --json "$OUT/graph-$T.json" 2>&1 | grep -E "^a\*b|FAIL|targets:" | head -8
