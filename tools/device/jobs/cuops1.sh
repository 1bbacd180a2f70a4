# budget: 120
# cuops1 (issue 13 item 1): issue 13's ops on the CUDA backend against the CPU backend
# (tests/test_cuda_ops_nn.py: norms, soft_max, diag_mask_inf, GLU, concat/repeat/pad,
# argsort/top_k/argmax, a mini transformer block), the earlier CUDA graph/op tests (the
# compute.cu restructure must not break them), then rms_norm / soft_max_ext vs torch.
# Output: $1/junit_*.xml, $1/nmse.json, $1/gpu_nn.json.
OUT=$1
export GGML_CY_NMSE_JSON=$OUT/nmse.json
echo "== tests/test_cuda_ops_nn.py =="
timeout 55 python3 -m pytest -q -m gpu tests/test_cuda_ops_nn.py --maxfail=40 -p no:cacheprovider \
  --junitxml="$OUT/junit_nn.xml" 2>&1 | tail -60
echo "== earlier CUDA tests =="
timeout 30 python3 -m pytest -q -m gpu tests/test_cuda_graph.py tests/test_cuda_errors.py \
  tests/test_cuda_ops.py -x -p no:cacheprovider --junitxml="$OUT/junit_old.xml" 2>&1 | tail -15
echo "== bench gpu (nn rows) =="
GGML_CY_BENCH_GPU_GROUPS=nn timeout 30 python3 -m bench gpu --quick --json "$OUT/gpu_nn.json" 2>&1 | tail -20
