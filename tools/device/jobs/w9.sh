# budget: 420
# #14 item 3: the matmul suite at full strength (not --quick: 7+ samples a case, up to 0.25 s
# of samples per library) at 2 and 16 threads on the 16-core host, where --quick runs
# (3 samples) gave the f32 GEMMs 0.82-0.85x (2 threads) and 0.66x (16 threads, 1024^3);
# the host's topology (which CPUs share a core); the package's graph path and torch alone
# in fresh processes at 2 threads.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
{ lscpu; for c in /sys/devices/system/cpu/cpu[0-9]*; do echo "$(basename $c) siblings $(cat $c/topology/thread_siblings_list 2>/dev/null)"; done; } > "$OUT/topo.txt" 2>&1
grep -E "Thread\(s\)|Core\(s\)|Socket|NUMA node\(s\)" "$OUT/topo.txt"
timeout 170 python3 -m bench matmul --threads 2 --json "$OUT/matmul-2.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL"
timeout 120 python3 -m bench matmul --threads 16 --json "$OUT/matmul-16.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL"
for r in 1 2 3; do
  timeout 30 python3 tools/device/mm_direct.py 2 2>&1 | grep "f32 1024"
  timeout 30 python3 tools/device/torch_mm_time.py 2 1024 1024 1024
done
