# budget: 120
# #14 item 3: ggml_cy/cpu/csrc/mul_mat_amx.h through tools/device/amx_probe2.c (correctness on
# real tiles, the bit promises, speed at 16 and 2 threads) and torch's bf16 matmul, same job.
out=$1
gcc -O3 -march=x86-64-v4 -fopenmp -I ggml_cy/cpu/csrc tools/device/amx_probe2.c -o /tmp/amx_probe2 -lm \
  || { echo "compile failed"; exit 1; }
for t in 16 2; do
  echo "== OMP_NUM_THREADS=$t"
  OMP_NUM_THREADS=$t OMP_PROC_BIND=close timeout 40 /tmp/amx_probe2 2>&1 | tee -a "$out/amx2.txt"
done
timeout 50 python3 - <<'PY' 2>&1 | tee "$out/torch.txt"
import time, torch
for t in (16, 2):
    torch.set_num_threads(t)
    for (M, K, N) in ((1024, 1024, 1024), (4096, 4096, 64), (4096, 4096, 1)):
        a = torch.randn(M, K).to(torch.bfloat16); b = torch.randn(N, K).to(torch.bfloat16)
        for _ in range(3): torch.matmul(b, a.T)
        ts = []
        for _ in range(15):
            t0 = time.perf_counter(); torch.matmul(b, a.T); ts.append(time.perf_counter() - t0)
        ts.sort()
        print(f"torch bf16 {M}x{K}x{N} threads={t}: median {ts[7]*1e6:.1f} us = "
              f"{2*M*N*K/ts[7]*1e-9:.0f} GFLOP/s (min {ts[0]*1e6:.1f} us)")
PY
