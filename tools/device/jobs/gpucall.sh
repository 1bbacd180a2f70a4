# budget: 150
# gpucall (issue 14 item 5): host cost of an eager GPU call, layer by layer, against torch;
# then the CUDA tests. Output: $1/profile.json, $1/cprofile_*.pstats, the log.
OUT=$1
timeout 45 python3 tools/device/gpucall_profile.py "$OUT" 2>&1
echo "== GPU tests: eager fast path and allocator =="
timeout 30 python3 -m pytest -q -m gpu tests/test_cuda_eager_fast.py -p no:cacheprovider \
  --tb=short -rf 2>&1 | tail -40
echo "== GPU tests: the rest =="
timeout 70 python3 -m pytest -q -m gpu tests/test_cuda_ops.py tests/test_cuda_errors.py \
  tests/test_cuda_graph.py tests/test_cuda_quant.py tests/test_cuda_nogpu.py -p no:cacheprovider \
  --tb=short -rf 2>&1 | tail -40
