# Developer tool (not shipped), for device jobs: the matmul suite (full) at 16 and then 2
# threads, JSON to OUTDIR/matmul-16.json and matmul-2.json, the case lines and verdicts to
# stdout. Usage (from the repository root, the package built): bash tools/device/matmul_suites.sh OUTDIR
set -u
OUTD=$1
timeout 120 python3 -m bench matmul --threads 16 --json "$OUTD/matmul-16.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
timeout 170 python3 -m bench matmul --threads 2 --json "$OUTD/matmul-2.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
