# budget: 150
# Issue 12 on the H200 (2026-11-27), round 4: the mat-vec prefetches only behind a PDL kernel.
# The A/B probe (one round) and the whole GPU bench (JSON to commit).
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
OUT=$out timeout 60 python3 tools/device/pdl_ab.py 1 2>&1 | grep -v "^  "
timeout 85 python3 -m bench gpu --json "$out/gpu.json" 2>&1 | grep -E "dequantize|mul_mat|targets|FAIL|total"
