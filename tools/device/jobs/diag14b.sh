# budget: 200
# Issue 14 on the 16-core host (2026-11-26 evening): the failing CPU rows at 16/12/8 threads
# against torch, libraries taking turns by blocks over 5 rounds, three knob variants.
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
lscpu | grep -E "Model name|Thread|Core|Socket|NUMA node|L3" 
timeout 190 python3 tools/diag_rows16.py --json "$out/diag_rows16.json"
