# budget: 420
# Issue 12 on the GPU (session of 2026-11-26 pm): the quantized CUDA tests (bitwise dequantize
# after the finite-scale fast path), where the Q4_0 x1 mat-vec spends its time
# (tools/device/q4mv_probe.py), and the bench's quant rows (GGML_CY_BENCH_GPU_GROUPS=quant).
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -x tests/test_cuda_quant.py 2>&1 | tail -6
timeout 90 python3 tools/device/q4mv_probe.py 2>&1 | tee "$out/probe.txt"
GGML_CY_BENCH_GPU_GROUPS=quant timeout 170 python3 -m bench gpu --json "$out/gpu_quant.json" 2>&1 | tail -32
