# budget: 230
# Issue 12's H200 rows (2026-11-26 evening): only on an H200 (the H100 rows pass and are
# committed): the whole GPU bench (JSON to commit) and the Q4_0 mat-vec probe.
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $name"
case "$name" in *H200*) ;; *) echo "not an H200: skipped"; exit 0;; esac
timeout 150 python3 -m bench gpu --json "$out/gpu.json" 2>&1 | grep -E "dequantize|mul_mat|targets|FAIL"
timeout 60 python3 tools/device/q4mv_probe.py 2>&1 | tee "$out/probe.txt" | grep -E "^ws2 |^cur |ggml_cy"
