# budget: 300
# #14 item 3: the AMX engine inside the package on the Xeon host: its tests, the float
# mul_mat tests, and bench matmul at 16 and 2 threads (JSON to commit).
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
python3 -c "import ggml_cy; ggml_cy.show_config()" | grep -E "dispatch|BF16" | tee "$out/config.txt"
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_amx.py tests/test_gemm_paths.py \
  tests/test_matvec_repack.py tests/test_graph_mul_mat.py 2>&1 | tail -25 | tee "$out/tests.txt"
timeout 80 python3 -m bench matmul --quick --threads 16 --json "$out/matmul-16.json" 2>&1 | tail -16
timeout 80 python3 -m bench matmul --quick --threads 2 --json "$out/matmul-2.json" 2>&1 | tail -16
