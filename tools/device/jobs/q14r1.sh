# budget: 430
# Issue 14 on the 16-core host (session of 2026-11-26 pm): after the pool's futex wake, the
# CPU suite, the scaling table and float mul_mat at 16 threads (JSON each), and the thread
# diagnostics (default and long-spin variants).
set -u
OUT=$1
T=$(nproc)
python3 -c "import ggml_cy; ggml_cy.show_config()" 2>&1 | grep -i -E "level|threads|llc" | head -5
timeout 130 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -40
timeout 110 python3 -m bench scaling --quick --threads "$T" --json "$OUT/scaling-$T.json" 2>&1 | grep -E "FAIL|targets:" | head -20
timeout 60 python3 -m bench matmul --quick --threads "$T" --json "$OUT/matmul-$T.json" 2>&1 | grep -E "mul_mat|targets:" | head -20
timeout 90 python3 tools/diag_threads.py --json "$OUT/diag.json" > "$OUT/diag.txt" 2>&1; head -40 "$OUT/diag.txt"
