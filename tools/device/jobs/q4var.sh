# budget: 150
# issue 12: the Q4_0 one-column GPU mat-vec variants (GGML_CY_Q4MMV: default half-block
# kernel, staged rows with f32 b, staged rows with Q8_0 b) -- the quant group of the GPU
# bench for each, and the quantized mul_mat tests for the staged ones.
out=$1
for v in default f32 int8; do
  echo "== GGML_CY_Q4MMV=$v"
  GGML_CY_Q4MMV=$v GGML_CY_BENCH_GPU_GROUPS=quant timeout 40 python3 -m bench gpu \
      --json "$out/gpu-quant-$v.json" 2>&1 | grep -E "mul_mat Q4_0|NMSE" | head -8
done
for v in f32 int8; do
  GGML_CY_Q4MMV=$v timeout 30 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_cuda_quant.py \
      -k "mul_mat" 2>&1 | tail -3
done
