# budget: 200
# Issue 12 after review (2026-11-27): the mat-vec's prefetch as an on/off switch (the unused
# line-by-line kind removed). Quantized/graph GPU tests, the A/B probe, the bench's quant rows.
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 100 python3 -m pytest -q -m gpu -p no:cacheprovider -x tests/test_cuda_quant.py tests/test_cuda_graph.py tests/test_models_llama_gpu.py 2>&1 | tail -2
OUT=$out timeout 60 python3 tools/device/pdl_ab.py 1 2>&1 | grep -E "mul_mat|pair"
GGML_CY_BENCH_GPU_GROUPS=quant timeout 60 python3 -m bench gpu --json "$out/gpu-quant.json" 2>&1 | grep -E "targets|FAIL"
