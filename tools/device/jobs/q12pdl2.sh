# budget: 380
# Issue 12 on the H200 (2026-11-27), round 2: the Q4_0 x1 mat-vec also asks L2 for its weight
# rows before its PDL wait. Quantized GPU tests, the A/B probe (2 rounds), the whole GPU bench.
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 100 python3 -m pytest -q -m gpu -p no:cacheprovider -x tests/test_cuda_quant.py tests/test_cuda_graph.py 2>&1 | tail -3
OUT=$out timeout 90 python3 tools/device/pdl_ab.py 2 2>&1 | grep -v "^  "
timeout 180 python3 -m bench gpu --json "$out/gpu.json" 2>&1 | grep -E "dequantize|mul_mat|targets|FAIL|total"
