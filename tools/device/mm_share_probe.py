"""Developer probe (not shipped): the package's float mul_mat with its packed panels shared
by the threads (the default where tasks are dealt; csrc/mul_mat_share.h) against every task
packing its own (_kernels._set_mm_sharing(False)), graph and eager paths, and torch (f32
weights), calls taking turns in one process. Usage:
  python3 mm_share_probe.py THREADS ROUNDS DTYPE:M:N:K [DTYPE:M:N:K ...]   (M x K weights)
One JSON line per case: each variant's quartiles (ms). MM_PROBE_NO_TORCH=1 leaves torch out
(its idle OpenMP threads spin for a while after each call, beside ours)."""
import json
import os
import sys
import time

import numpy as np
import torch

import ggml_cy
from ggml_cy.cpu import _kernels
from probe_common import mul_mat_graph


def case(threads, rounds, dtype, m, n, k):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((n, k), dtype=np.float32)
    c = np.empty((n, m), np.float32)
    g, ctx = mul_mat_graph(dtype, w, b, threads)
    wa = w.astype(np.float16) if dtype == "f16" else w
    torch.set_num_threads(threads)
    tw, tb = torch.from_numpy(w), torch.from_numpy(b)     # torch: f32 weights
    tout = torch.empty((n, m))

    def with_sharing(flag, f):
        def call():
            _kernels._set_mm_sharing(flag)
            f()
        return call
    eager = lambda: ggml_cy.mul_mat(wa, b, out=c, n_threads=threads)  # noqa: E731
    calls = {"graph_shared": with_sharing(True, g), "graph_private": with_sharing(False, g),
             "eager_shared": with_sharing(True, eager),
             "eager_private": with_sharing(False, eager),
             "torch": lambda: torch.matmul(tb, tw.T, out=tout)}
    if os.environ.get("MM_PROBE_NO_TORCH") == "1":
        del calls["torch"]
    names = list(calls)
    for f in calls.values():
        f()
        f()
    res = {v: [] for v in names}
    for r in range(rounds):
        for v in names[r % len(names):] + names[:r % len(names)]:
            t0 = time.perf_counter()
            calls[v]()
            res[v].append(time.perf_counter() - t0)
    _kernels._set_mm_sharing(True)
    out = {"torch_in_turns": "torch" in calls, "threads": threads, "dtype": dtype, "M": m, "N": n, "K": k, "rounds": rounds}
    for v, ts in res.items():
        ts.sort()
        q = len(ts)
        out[v] = [round(ts[q // 4] * 1e3, 3), round(ts[q // 2] * 1e3, 3),
                  round(ts[3 * q // 4] * 1e3, 3)]
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    th, rounds = int(sys.argv[1]), int(sys.argv[2])
    for spec in sys.argv[3:]:
        dt, m, n, k = spec.split(":")
        case(th, rounds, dt, int(m), int(n), int(k))
