# budget: 240
# #14 item 3 at 2 threads: w2's C harness (mm_tune, OpenMP threads) ran the f32 kernel at
# 2 threads as fast as torch (1024^3: 305 against 293-320 GFLOP/s, pinned), while the
# matmul suite's graph calls take 10-14 ms against torch's 7-11. Same instance, same
# shapes: the package's graph path alone (tools/device/mm_direct.py), the C harness, torch;
# unpinned, pinned to a pair, the pool's spreading off, and one thread.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
gcc -O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc bench/csrc/mm_tune.c -o /tmp/mm_tune -lm || exit 1
S="1024 1024 1024 4096 64 4096"
for r in 1 2 3; do
  echo "== round $r"
  timeout 30 python3 tools/device/mm_direct.py 2 2>&1 | grep f32
  MM_TUNE_TYPES=f32 timeout 30 /tmp/mm_tune 2 $S | cut -c1-120
  timeout 30 python3 tools/device/torch_mm_time.py 2 $S
done
echo "== pool spreading off"
for r in 1 2; do GGML_CY_POOL_SPREAD=0 timeout 30 python3 tools/device/mm_direct.py 2 2>&1 | grep f32; done
echo "== pinned to CPUs 5,6"
for r in 1 2; do
  timeout 30 taskset -c 5,6 python3 tools/device/mm_direct.py 2 2>&1 | grep f32
  MM_TUNE_TYPES=f32 timeout 30 taskset -c 5,6 /tmp/mm_tune 2 $S | cut -c1-120
  timeout 30 taskset -c 5,6 python3 tools/device/torch_mm_time.py 2 $S
done
echo "== one thread, pinned to CPU 5"
timeout 30 taskset -c 5 python3 tools/device/mm_direct.py 1 2>&1 | grep f32
MM_TUNE_TYPES=f32 timeout 30 taskset -c 5 /tmp/mm_tune 1 $S | cut -c1-120
timeout 30 taskset -c 5 python3 tools/device/torch_mm_time.py 1 $S
