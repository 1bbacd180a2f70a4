# budget: 150
# Issue 12: the Q4_0 x1 mat-vec probe, with ggml_cy's own mul_mat timed two ways.
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 60 python3 tools/device/q4mv_probe.py 2>&1 | tee "$out/probe.txt" | grep -v trace
