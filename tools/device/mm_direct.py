"""Developer probe (not shipped): ctx.mul_mat timed alone in a fresh process (no torch, no
other library), f32 and bf16 weights, to compare with the C harnesses (bench/csrc/mm_tune.c,
tools/device/amx_probe2.c) and with `python -m bench matmul` on the same host.
Usage: python tools/device/mm_direct.py THREADS [THREADS ...]"""
import sys
import time

import numpy as np

from probe_common import mul_mat_graph


def case(dtype, m, k, n, threads, reps=15):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((n, k), dtype=np.float32)
    call, ctx = mul_mat_graph(dtype, w, b, threads)
    for _ in range(3):
        call()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        call()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    print(f"direct {dtype} {m}x{k}x{n} threads={threads}: median {ts[reps // 2] * 1e6:.0f} us = "
          f"{2 * m * n * k / ts[reps // 2] * 1e-9:.0f} GF/s (min {ts[0] * 1e6:.0f} us)",
          flush=True)


if __name__ == "__main__":
    for t in [int(x) for x in sys.argv[1:]] or [2]:
        for dt in ("f32", "bf16"):
            for shape in ((1024, 1024, 1024), (4096, 4096, 64)):
                case(dt, *shape, t)
