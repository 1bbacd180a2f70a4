"""Developer tool (device rounds, issue 12): runs the quantized GPU mat-vec and torch's f16
mat-vec a few times each so that `ncu` can report their kernels' durations and limiters.

    ncu --set full -k regex:'mmv|gemv|gemm' -c 12 python3 tools/device/q4mmv_profile.py

Also prints the kernels' back-to-back time with CUDA events (the bench's method, in short),
and that of an empty kernel of the same grid (the launch floor)."""
import sys
import time

import numpy as np
import torch

import ggml_cy as gc
import ggml_cy.cuda as gcuda

M = K = 4096
types = sys.argv[1:] or ["Q4_0"]
rng = np.random.default_rng(1)
xh = rng.standard_normal((1, K)).astype(np.float32)
x = gcuda.asarray(xh)
for name in types:
    t = gc.GGMLType[name]
    raw = rng.integers(0, 256, (M, K // t.blck_size * t.type_size), dtype=np.uint8)
    blocks = raw.reshape(-1, t.type_size)
    if name in ("Q4_0", "Q8_0"):
        blocks[:, 0:2] = np.array([0x2C00], np.uint16).view(np.uint8)
    w = gcuda.from_blocks(raw, name)
    out = gcuda.empty((1, M), np.float32)
    for _ in range(4):
        gcuda.mul_mat(w, x, out=out)
    gcuda.synchronize()
    n = 200
    torch.cuda._sleep(int(1.8e9 * 3e-3))
    s, e = gcuda.Event(), gcuda.Event()
    s.record()
    for _ in range(n):
        gcuda.mul_mat(w, x, out=out)
    e.record()
    print(f"{name} x1 back-to-back (L2-resident weights): {s.elapsed_ms(e) * 1e3 / n:.2f} us")
w0 = torch.randn(M, K, device="cuda", dtype=torch.float16)
tx = torch.randn(K, 1, device="cuda", dtype=torch.float16)
to = torch.empty(M, 1, device="cuda", dtype=torch.float16)
for _ in range(4):
    torch.matmul(w0, tx, out=to)
torch.cuda.synchronize()
torch.cuda._sleep(int(1.8e9 * 3e-3))
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
s.record()
for _ in range(200):
    torch.matmul(w0, tx, out=to)
e.record()
e.synchronize()
print(f"torch f16 x1 back-to-back (L2-resident): {s.elapsed_time(e) * 1e3 / 200:.2f} us")
# the launch floor: an empty kernel of the mat-vec's grid (1024 CTAs of 128 threads)
try:
    import cupy as cp
    k = cp.RawKernel(r'extern "C" __global__ void nop(float * p) { if (p == 0) p[0] = 1; }', "nop")
    dummy = cp.zeros(1, cp.float32)
    for _ in range(4):
        k((1024,), (128,), (dummy,))
    cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record()
    for _ in range(200):
        k((1024,), (128,), (dummy,))
    e.record()
    e.synchronize()
    print(f"empty kernel 1024x128 back-to-back: {cp.cuda.get_elapsed_time(s, e) * 1e3 / 200:.2f} us")
except Exception as exc:  # cupy missing: the floor is not measured
    print("empty kernel: not measured:", exc)
time.sleep(0.1)
