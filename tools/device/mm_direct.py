"""Developer probe (not shipped): ctx.mul_mat timed alone in a fresh process (no torch, no
other library), f32 and bf16 weights, to compare with the C harnesses (bench/csrc/mm_tune.c,
tools/device/amx_probe2.c) and with `python -m bench matmul` on the same host.
Usage: python tools/device/mm_direct.py THREADS [THREADS ...]"""
import sys
import time

import numpy as np

import ggml_cy
from ggml_cy import GGMLType as T
from ggml_cy.graph.context import Context


def case(dtype, m, k, n, threads, reps=15):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((n, k), dtype=np.float32)
    ctx = Context(w.nbytes + b.nbytes + 4 * m * n + (16 << 20))
    if dtype == "bf16":
        bits = ((w.view(np.uint32).astype(np.uint64) + 0x7FFF + ((w.view(np.uint32) >> 16) & 1)) >> 16).astype(np.uint16)
        ta = ctx.new_tensor(T.BF16, (k, m))
        ta.numpy(2)[...] = bits
    else:
        ta = ctx.tensor_from(w)
    r = ctx.mul_mat(ta, ctx.tensor_from(b))
    g = ctx.new_graph()
    g.build_forward_expand(r)
    plan = g.plan(threads)
    for _ in range(3):
        g.compute(threads, plan=plan)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        g.compute(threads, plan=plan)
        ts.append(time.perf_counter() - t0)
    ts.sort()
    addr = ta.data_ptr % 64 if hasattr(ta, "data_ptr") else "?"
    print(f"direct {dtype} {m}x{k}x{n} threads={threads}: median {ts[reps // 2] * 1e6:.0f} us = "
          f"{2 * m * n * k / ts[reps // 2] * 1e-9:.0f} GF/s (min {ts[0] * 1e6:.0f} us) a%64={addr}",
          flush=True)


if __name__ == "__main__":
    for t in [int(x) for x in sys.argv[1:]] or [2]:
        for dt in ("f32", "bf16"):
            for shape in ((1024, 1024, 1024), (4096, 4096, 64)):
                case(dt, *shape, t)
