# budget: 200
# Issue 12 on the GPU: the Q4_0 mat-vec's back-to-back time and the whole GPU bench (its
# JSON is the one to commit). Run after gputests (the GPU-marked tests).
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
timeout 30 python3 tools/device/q4mmv_profile.py Q4_0 Q8_0 2>&1 | tee "$out/times.txt"
timeout 160 python3 -m bench gpu --json "$out/gpu.json" 2>&1 | tail -45
