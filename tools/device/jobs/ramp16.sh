# budget: 200
# #14: how calls recover after the bench's 50 ms pause at 16 threads (tools/device/ramp_probe.py
# many): the fused chain against the C loop with streaming stores, add f32 1e6 against torch;
# the pool's after-sleep spreading on and off.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 80 python3 tools/device/ramp_probe.py "$OUT/ramp16-spread.json" many | cut -c1-230
GGML_CY_POOL_SPREAD=0 timeout 80 python3 tools/device/ramp_probe.py "$OUT/ramp16-nospread.json" many | cut -c1-230
