# budget: 420
# #14: the 16-thread eager add of 1e6 float32 (tools/device/eager16_probe.py: Python call,
# kernel path alone, 2-D rows, 8/12 threads, spreading off, torch, numpy), the same add in C
# built like ggml_cy's avx512 level (-march=x86-64-v4) and for this CPU (add_probe.c), the
# pool's region cost with the spin's yield every 256 pauses against the pool before
# (pool_probe.c, old = tools/device/old_gcy_pool.h, carried uncommitted), 16-thread calls
# after an idle spell (wake_probe.c), then the CPU suite at 16 threads.
set -u
OUT=$1 T=$(nproc)
export PYTHONPATH=.:${PYTHONPATH:-}
mkdir -p /tmp/oldpool && cp tools/device/old_gcy_pool.h /tmp/oldpool/gcy_pool.h
gcc -O3 -march=native -Iggml_cy/cpu/csrc bench/csrc/wake_probe.c -o /tmp/wake_probe -lpthread || exit 1
gcc -O3 -march=native -fopenmp -Iggml_cy/cpu/csrc bench/csrc/add_probe.c -o /tmp/add_native -lpthread || exit 1
gcc -O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc bench/csrc/add_probe.c -o /tmp/add_v4 -lpthread || exit 1
gcc -O2 -fopenmp -I/tmp/oldpool bench/csrc/pool_probe.c -o /tmp/pool_old -lpthread || exit 1
gcc -O2 -fopenmp -Iggml_cy/cpu/csrc bench/csrc/pool_probe.c -o /tmp/pool_new -lpthread || exit 1
timeout 150 python3 tools/device/eager16_probe.py "$OUT/eager16.json" "$T"
for v in native v4 native v4; do timeout 30 /tmp/add_$v 1000000 16 | sed "s/^{/{\"build\": \"$v\", /" | tee -a "$OUT/add.jsonl"; done
for r in 1 2 3; do for v in old new; do
  timeout 30 /tmp/pool_$v 2 8 16 | sed "s/^{/{\"round\": $r, \"layout\": \"$v\", /" | tee -a "$OUT/pool.jsonl"
done; done
for dyn in 0 1; do timeout 40 /tmp/wake_probe 16 50000 25 12 $dyn | tee -a "$OUT/wake.jsonl"; done
timeout 150 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | grep -E "FAIL|targets:|roofline:" | head -30
