# budget: 300
# #14: how calls recover after the bench's 50 ms pause on the 16-core host
# (tools/device/ramp_probe.py), with the pool's after-sleep spreading on and off, then bench
# matmul at 2 threads with spreading off (compare matmul-xeon-2-s3.json).
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 60 python3 tools/device/ramp_probe.py "$OUT/ramp-spread.json" | cut -c1-220
GGML_CY_POOL_SPREAD=0 timeout 60 python3 tools/device/ramp_probe.py "$OUT/ramp-nospread.json" | cut -c1-220
GGML_CY_POOL_SPREAD=0 timeout 80 python3 -m bench matmul --quick --threads 2 --json "$OUT/matmul-2-nospread.json" 2>&1 | grep -E "^mul_mat|targets:" | cut -c1-150
