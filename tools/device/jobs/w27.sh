# budget: 300
# #14 (probe): the 2-thread matmul bimodality on the host -- CPU pairs bound with taskset.
set -u
# 2-thread f32 1024^3 (mm_tune, static split) with the two OpenMP threads bound to a CPU pair,
# and one thread per CPU: does the host's speed depend on which CPUs run the product?
CF="-O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc -Ibench/csrc"
gcc $CF bench/csrc/mm_tune.c -o /tmp/tune -lm || exit 1
for r in 1 2; do
  for c in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
    echo -n "r$r one cpu $c: "; taskset -c $c env OMP_PROC_BIND=true MM_TUNE_TYPES=f32 /tmp/tune 1 512 512 1024 | python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print(d['best_ms'], d['median_ms'])"
  done
  for p in 0,1 0,2 0,8 0,15 1,2 2,3 4,5 6,7 8,9 10,11 12,13 14,15 3,12 5,10 7,9; do
    echo -n "r$r pair $p: "; taskset -c $p env OMP_PROC_BIND=close OMP_PLACES=cores MM_TUNE_TYPES=f32 /tmp/tune 2 1024 1024 1024 | python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print(d['best_ms'], d['median_ms'], d['busiest_ms'], d['avg_thread_ms'])"
  done
done
for p in 0,1 2,3 0,8; do echo -n "torch pair $p: "; taskset -c $p python3 tools/device/torch_mm_time.py 2 1024 1024 1024 | cut -c1-120; done
