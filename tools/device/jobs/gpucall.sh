# budget: 150
# gpucall (issue 14 item 5): host cost of an eager GPU call, layer by layer, against torch
# (tools/device/gpucall_profile.py); the gpu_overhead bench suite; the CUDA tests.
# Output: $1/profile.json, $1/cprofile_*.pstats, $1/gpu_overhead.json, the log.
OUT=$1
timeout 35 python3 tools/device/gpucall_profile.py "$OUT" 2>&1
echo "== bench gpu_overhead =="
timeout 25 python3 -m bench gpu_overhead --json "$OUT/gpu_overhead.json" 2>&1 | tail -30
echo "== GPU tests: eager fast path and allocator =="
timeout 25 python3 -m pytest -q -m gpu tests/test_cuda_eager_fast.py -p no:cacheprovider \
  --tb=short -rf 2>&1 | tail -40
echo "== GPU tests: the rest =="
timeout 60 python3 -m pytest -q -m gpu tests/test_cuda_ops.py tests/test_cuda_errors.py \
  tests/test_cuda_graph.py tests/test_cuda_quant.py tests/test_cuda_nogpu.py -p no:cacheprovider \
  --tb=short -rf 2>&1 | tail -40
