# budget: 330
# #14 item 3 after the bf16mm merge (ggml's rule for BF16, VDPBF16PS, AMX): the mul_mat and
# model tests on the Xeon (AMX engine), the GPU BF16 model tests, bench matmul at 16 and 2.
set -u
OUT=$1
export PYTHONPATH=.:${PYTHONPATH:-}
python3 -c "import ggml_cy; ggml_cy.show_config()" | grep -E "dispatch|BF16" | tee "$OUT/config.txt"
timeout 150 python3 -m pytest -q -p no:cacheprovider -x tests/test_gemm_paths.py tests/test_gemm_amx.py \
  tests/test_matvec_repack.py tests/test_graph_mul_mat.py tests/test_models_llama.py tests/test_graph_decode_path.py \
  tests/test_ops_rows_attn.py tests/test_models_llama_gpu.py 2>&1 | tail -6 | tee "$OUT/tests.txt"
timeout 80 python3 -m bench matmul --quick --threads 16 --json "$OUT/matmul-16.json" 2>&1 | grep -E "^mul_mat|targets" | cut -c1-40,150-
timeout 80 python3 -m bench matmul --quick --threads 2 --json "$OUT/matmul-2.json" 2>&1 | grep -E "^mul_mat|targets" | cut -c1-40,150-
