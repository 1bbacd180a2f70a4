# budget: 430
# Issue 12 on the GPU, second round of 2026-11-26 pm: the warp-specialized Q4_0 x1 mat-vec
# and the finite-scale dequantize; the quantized and model GPU tests, the whole GPU bench
# (its JSON is the one to commit), and the mat-vec probe.
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -x tests/test_cuda_quant.py tests/test_models_llama_gpu.py tests/test_cuda_graph.py 2>&1 | tail -4
timeout 150 python3 -m bench gpu --json "$out/gpu.json" 2>&1 | tail -48
timeout 60 python3 tools/device/q4mv_probe.py 2>&1 | tee "$out/probe.txt" | head -12
