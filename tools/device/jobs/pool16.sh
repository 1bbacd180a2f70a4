# budget: 420
# #14: the worker pool's fixed cost per region on the 16-core host (bench/csrc/pool_probe.c),
# the hot words on one cache line (old, from the commit before) against one line each (new),
# and an OpenMP region, 3 alternations; then par_probe and the CPU suite at 16 threads with
# the new layout (run_all.sh builds first: pass --no-build only when nothing changed).
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
mkdir -p /tmp/oldpool
# the layout before: gcy_pool.h of commit 1349347 (git show 1349347:ggml_cy/cpu/csrc/gcy_pool.h), carried as tools/device/old_gcy_pool.h for the run (not committed)
cp tools/device/old_gcy_pool.h /tmp/oldpool/gcy_pool.h
gcc -O2 -fopenmp -I/tmp/oldpool bench/csrc/pool_probe.c -o /tmp/pool_old -lpthread || exit 1
gcc -O2 -fopenmp -Iggml_cy/cpu/csrc bench/csrc/pool_probe.c -o /tmp/pool_new -lpthread || exit 1
for r in 1 2 3; do
  for v in old new; do /tmp/pool_$v 2 4 8 16 | sed "s/^{/{\"round\": $r, \"layout\": \"$v\", /" | tee -a "$OUT/pool.jsonl"; done
done
timeout 100 python3 tools/device/par_probe.py "$OUT/par-$T.json" "$T" 2>&1 | grep '"float32"\|"float64"' | grep '"add"'
timeout 120 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -30
