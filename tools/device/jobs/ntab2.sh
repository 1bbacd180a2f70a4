# budget: 330
# #14: the many-core share rule A/B on one warm host: the CPU suite at 2 threads with the
# rule off (GGML_CY_LLC_BYTES set to the host's own L3: the rule before) and on, alternating.
set -u
OUT=$1
export PYTHONPATH=.:${PYTHONPATH:-}
L3=$(python3 -c "from ggml_cy.cpu import _kernels as K; print(K.llc_info()[0])")
for r in 1 2; do
  GGML_CY_LLC_BYTES=$L3 timeout 80 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2-off-$r.json" 2>&1 | grep -E "targets:" | sed "s/^/off $r /"
  timeout 80 python3 -m bench cpu --quick --threads 2 --json "$OUT/cpu-2-on-$r.json" 2>&1 | grep -E "targets:" | sed "s/^/on $r /"
done
