# budget: 200
# Issue 12 on an H100 after the H200 rounds of 2026-11-27 (warp-staged dequantize, PDL, the
# mat-vec's weight prefetch): the quantized GPU tests, the A/B probe (one round), the whole
# GPU bench (JSON to commit).
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 60 python3 -m pytest -q -m gpu -p no:cacheprovider -x tests/test_cuda_quant.py 2>&1 | tail -2
OUT=$out timeout 60 python3 tools/device/pdl_ab.py 1 2>&1 | grep -v "^  "
timeout 85 python3 -m bench gpu --json "$out/gpu.json" 2>&1 | grep -E "dequantize|mul_mat|targets|FAIL|total"
