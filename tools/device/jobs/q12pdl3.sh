# budget: 300
# Issue 12 on the H200 (2026-11-27), round 3: the mat-vec's prefetch kinds (none, line by line,
# bulk) with PDL on, PDL off, alone and behind a kernel without PDL; the quantized and graph
# GPU tests.
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 100 python3 -m pytest -q -m gpu -p no:cacheprovider -x tests/test_cuda_quant.py tests/test_cuda_graph.py 2>&1 | tail -3
OUT=$out timeout 180 python3 tools/device/pdl_ab.py 2 2>&1 | grep -v "^  "
