# budget: 400
# #14: the gemm tests on the host CPU (AMX, AVX512_BF16): the thin tasks, and the VDPBF16PS
# micro-kernel after its accumulators moved into MM_ACC16_ZERO (GGML_CY_NO_AMX=1 sends BF16
# weights to it instead of the tiles).
set -u
OUT=$1
T="tests/test_gemm_thin.py tests/test_gemm_paths.py tests/test_gemm_dealt.py tests/test_gemm_amx.py tests/test_graph_mul_mat.py"
python3 -c "import ggml_cy; ggml_cy.show_config()" 2>&1 | grep -i "level\|bf16\|amx" | head -5
python3 -m pytest -q -p no:cacheprovider $T 2>&1 | tail -3
GGML_CY_NO_AMX=1 python3 -c "import ggml_cy; ggml_cy.show_config()" 2>&1 | grep -i "bf16" | head -2
GGML_CY_NO_AMX=1 python3 -m pytest -q -p no:cacheprovider $T 2>&1 | tail -3
