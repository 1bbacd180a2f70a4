# budget: 300
# w46: LlamaModel's upload now asks the CUDA backend (supports_op on a bf16 mul_mat probe
# node) whether to widen BF16 matrices; the GPU llama tests and the CPU llama tests on the
# device's CUDA build.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
python3 -m pytest -v -p no:cacheprovider tests/test_models_llama_gpu.py tests/test_models_llama.py \
  >"$OUT/pytest.log" 2>&1
grep -v " PASSED" "$OUT/pytest.log" | tail -30
grep -c " PASSED" "$OUT/pytest.log"
