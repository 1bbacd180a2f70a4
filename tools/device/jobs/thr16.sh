# budget: 200
# 2026-11-27: eager add/maximum at 1e5..1e7 on the 16-core host at 2..16 threads against torch
# at 16 (tools/device/thr_probe.py): does a per-size thread cap beat torch where 16 do not?
set -u
OUTD=$1
export PYTHONPATH=.:${PYTHONPATH:-}
timeout -k 2 190 python3 tools/device/thr_probe.py "$OUTD/thr16.json"
