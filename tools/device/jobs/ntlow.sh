# budget: 200
# #14: plain against streaming stores for the big eager calls at 1..16 threads on the
# 16-core host, torch beside them (tools/device/nt_probe.py): does the LLC rule (plain stores
# below the LLC, below 8 threads) lose at few threads there?
set -u
OUT=$1
export PYTHONPATH=.:${PYTHONPATH:-}
timeout 180 python3 tools/device/nt_probe.py "$OUT/ntprobe-16.json" 2>&1 | tail -40
