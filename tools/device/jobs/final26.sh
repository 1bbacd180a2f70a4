# budget: 400
# Issue 14 on the 16-core host, last round of 2026-11-26 session 2 (bf16mm + AMX + mvf32
# merged): mul_mat/model tests (gguf carried as a wheel; GPU BF16 model tests included),
# bench matmul at 16 and 2 threads, the CPU suite and the scaling table at 16 threads.
set -u
OUT=$1
export PYTHONPATH=.:${PYTHONPATH:-}
T=$(nproc)
python3 -c "import ggml_cy; ggml_cy.show_config()" | grep -E "dispatch|BF16" | tee "$OUT/config.txt"
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_paths.py tests/test_gemm_amx.py \
  tests/test_matvec_repack.py tests/test_graph_mul_mat.py tests/test_models_llama.py tests/test_graph_decode_path.py \
  tests/test_ops_rows_attn.py tests/test_models_llama_gpu.py tests/test_eager_threads.py tests/test_rel_fork.py 2>&1 | tail -8 | tee "$OUT/tests.txt"
timeout 80 python3 -m bench matmul --quick --threads "$T" --json "$OUT/matmul-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -12
timeout 80 python3 -m bench matmul --quick --threads 2 --json "$OUT/matmul-2.json" 2>&1 | grep -E "FAIL|targets:" | head -12
timeout 60 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -12
timeout 60 python3 -m bench scaling --quick --threads "$T" --json "$OUT/scaling-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -8
