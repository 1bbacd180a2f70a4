# budget: 200
# #14 item 3: mul_mat_amx.h variants (K sub-block MMX_KS, B prefetch MMX_PF) through
# tools/device/amx_probe2.c at 16 and 2 threads (the package's task grid), torch alongside.
out=$1
for v in "256 1" "256 0" "512 1" "2048 1" "2048 0" "128 1"; do
  set -- $v
  gcc -O3 -march=x86-64-v4 -fopenmp -I ggml_cy/cpu/csrc -DMMX_KS=$1 -DMMX_PF=$2 tools/device/amx_probe2.c -o /tmp/p_$1_$2 -lm || exit 1
done
OMP_NUM_THREADS=16 OMP_PROC_BIND=close timeout 30 /tmp/p_256_1 2>&1 | grep -E "correct|NO" | tee "$out/correct.txt"
for t in 16 2; do
  for v in "256 1" "256 0" "512 1" "2048 1" "2048 0" "128 1"; do
    set -- $v
    OMP_NUM_THREADS=$t OMP_PROC_BIND=close PROBE_SPEED_ONLY=1 timeout 25 /tmp/p_$1_$2 2>&1 | grep mmx | tee -a "$out/amx4.txt"
  done
done
timeout 40 python3 - <<'PY' 2>&1 | tee "$out/torch.txt"
import time, torch
for t in (16, 2):
    torch.set_num_threads(t)
    for (M, K, N) in ((1024, 1024, 1024), (4096, 4096, 64)):
        a = torch.randn(M, K).to(torch.bfloat16); b = torch.randn(N, K).to(torch.bfloat16)
        for _ in range(3): torch.matmul(b, a.T)
        ts = []
        for _ in range(15):
            t0 = time.perf_counter(); torch.matmul(b, a.T); ts.append(time.perf_counter() - t0)
        ts.sort()
        print(f"torch bf16 {M}x{K}x{N} threads={t}: median {ts[7]*1e6:.1f} us = "
              f"{2*M*N*K/ts[7]*1e-9:.0f} GFLOP/s (min {ts[0]*1e6:.1f} us)")
PY
