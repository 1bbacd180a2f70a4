# budget: 150
# #14 item 3 (bf16 mul_mat on the Xeon host): the AMX probe (tools/device/amx_probe.c) at 16
# and 2 threads, and torch's bf16 matmul rates in the same job.
out=$1
gcc -O3 -march=native -mamx-tile -mamx-bf16 -fopenmp tools/device/amx_probe.c -o /tmp/amx_probe -lm \
  || { echo "compile failed"; gcc --version | head -1; exit 1; }
lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|MHz|L2|L3" | tee "$out/lscpu.txt"
for t in 16 2; do
  echo "== OMP_NUM_THREADS=$t"
  OMP_NUM_THREADS=$t OMP_PROC_BIND=close timeout 50 /tmp/amx_probe 9 2>&1 | tee -a "$out/amx.txt"
done
timeout 60 python3 - <<'PY' 2>&1 | tee "$out/torch.txt"
import time, torch
for t in (16, 2):
    torch.set_num_threads(t)
    for (M, K, N) in ((1024, 1024, 1024), (4096, 4096, 64), (4096, 4096, 1)):
        a = torch.randn(M, K).to(torch.bfloat16); b = torch.randn(N, K).to(torch.bfloat16)
        for _ in range(3): torch.matmul(b, a.T)
        ts = []
        for _ in range(9):
            t0 = time.perf_counter(); torch.matmul(b, a.T); ts.append(time.perf_counter() - t0)
        ts.sort()
        print(f"torch bf16 {M}x{K}x{N} threads={t}: median {ts[4]*1e6:.1f} us = "
              f"{2*M*N*K/ts[4]*1e-9:.0f} GFLOP/s (min {ts[0]*1e6:.1f} us)")
print(torch.__config__.show().split("\n")[:3])
PY
