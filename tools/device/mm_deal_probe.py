"""Developer probe (not shipped): the package's float mul_mat with its tasks dealt
(the default) against the static split (_kernels._set_mm_dealing(False)), graph and eager
paths, calls taking turns in one process. Usage:
  python3 mm_deal_probe.py THREADS ROUNDS DTYPE:M:N:K [DTYPE:M:N:K ...]   (M x K weights)
One JSON line per case: each variant's median and quartiles (ms)."""
import json
import sys
import time

import numpy as np

import ggml_cy
from ggml_cy.cpu import _kernels
from probe_common import mul_mat_graph


def case(threads, rounds, dtype, m, n, k):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((n, k), dtype=np.float32)
    c = np.empty((n, m), np.float32)
    g, ctx = mul_mat_graph(dtype, w, b, threads)
    if dtype == "bf16":
        u = w.view(np.uint32).astype(np.uint64)
        wa, how = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16), {"type": "bf16"}
    else:
        wa, how = (w.astype(np.float16) if dtype == "f16" else w), {}

    def with_dealing(flag, f):
        def call():
            _kernels._set_mm_dealing(flag)
            f()
        return call
    eager = lambda: ggml_cy.mul_mat(wa, b, out=c, n_threads=threads, **how)  # noqa: E731
    calls = {"graph_dealt": with_dealing(True, g), "graph_static": with_dealing(False, g),
             "eager_dealt": with_dealing(True, eager), "eager_static": with_dealing(False, eager)}
    names = list(calls)
    for f in calls.values():
        f()
        f()
    res = {v: [] for v in names}
    for r in range(rounds):
        for v in names[r % 4:] + names[:r % 4]:
            t0 = time.perf_counter()
            calls[v]()
            res[v].append(time.perf_counter() - t0)
    _kernels._set_mm_dealing(True)
    out = {"threads": threads, "dtype": dtype, "M": m, "N": n, "K": k, "rounds": rounds}
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
