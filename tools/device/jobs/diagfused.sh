# budget: 150
# Issue 14 on the 16-core host: the fused chain at 1e7 on all threads, evaluate's block size
# and streaming variants against the hand-fused C loops, by blocks over 5 rounds.
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
timeout 140 python3 tools/diag_fused16.py --json "$out/diag_fused16.json"
