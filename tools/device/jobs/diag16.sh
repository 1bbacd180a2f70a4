# budget: 150
# issue 14: where the eager ops and evaluate stop scaling on this host (knob variants).
timeout 145 python3 tools/diag_threads.py --json "$1/diag16.json" 2>&1 | tail -50
