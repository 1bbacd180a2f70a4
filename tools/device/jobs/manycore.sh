# budget: 150
# manycore (issue 14 item 1): the CPU suite at 16 threads on the GPU machine's host, plus
# what the kernels measured about the machine (LLC, dispatch level).
set -u
OUT=$1
python3 -c "import ggml_cy; ggml_cy.show_config()" >"$OUT/config.txt" 2>&1
lscpu >"$OUT/lscpu.txt" 2>&1
for d in /sys/devices/system/cpu/cpu0/cache/index*; do
  echo "$d $(cat $d/level $d/type $d/size $d/shared_cpu_list 2>/dev/null | tr '\n' ' ')"
done >"$OUT/caches.txt"
numactl -H >"$OUT/numa.txt" 2>&1 || true
cat "$OUT/config.txt"
T=$(nproc)
timeout 120 python3 -m bench cpu --quick --threads "$T" --json "$OUT/cpu-$T.json" 2>&1 | tail -95
