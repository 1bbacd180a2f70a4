# budget: 420
# Issue 12 on the H200 (2026-11-27): the dequantize kernel's warp-staged blocks and
# programmatic dependent launch (dequantize, Q4_0 x1 mat-vec): the quantized GPU tests, the
# A/B probe (PDL on/off, one process), the bench's quant rows.
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 170 python3 -m pytest -q -m gpu -p no:cacheprovider -x tests/test_cuda_quant.py 2>&1 | tail -3
OUT=$out timeout 120 python3 tools/device/pdl_ab.py 1 2>&1 | grep -v "^  "
GGML_CY_BENCH_GPU_GROUPS=quant timeout 90 python3 -m bench gpu --json "$out/gpu-quant.json" 2>&1 | grep -E "dequantize|mul_mat|targets|FAIL"
