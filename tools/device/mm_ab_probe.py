"""Developer probe (not shipped): f32 GEMM kernel variants (bench/csrc/mm_ab.c, built into
/tmp/mm_ab.so by tools/device/build_mm_ab.sh) and torch taking turns call by call, one thread
pinned to one CPU, so that whatever else the machine does at that moment hits every variant
alike. Per CPU: each variant's median time and its per-round speed relative to torch
(torch's time / the variant's time in the same round; median and quartiles), also over
the rounds where the first variant ran slow (above 1.15x its fastest call).
Usage: [MM_AB_VARIANTS=pf0,pf16,...] python3 mm_ab_probe.py SECONDS_PER_CPU CPUS(comma)
[M N K] > rows.jsonl"""
import ctypes
import json
import os
import sys
import time

import numpy as np
import torch

VARIANTS = os.environ.get("MM_AB_VARIANTS", "pf0,pf16,kc384,mr8,mr12").split(",")
BASE = VARIANTS[0]   # the variant whose slow calls define the "slow" rounds


def aligned(n):
    # (not ggml_cy's aligned_empty: the probe also runs where the package is not built)
    raw = np.empty(n + 16, np.float32)
    off = (-raw.ctypes.data % 64) // 4
    return raw[off:off + n]


def main():
    secs = float(sys.argv[1])
    cpus = [int(c) for c in sys.argv[2].split(",")]
    M, N, K = (int(v) for v in sys.argv[3:6]) if len(sys.argv) > 5 else (1024, 1024, 1024)
    lib = ctypes.CDLL("/tmp/mm_ab.so")
    fns = {}
    for v in VARIANTS:
        f = getattr(lib, "mm_ab_" + v)
        f.restype = None
        f.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64] * 3 + [ctypes.c_void_p]
        fns[v] = f
    rng = np.random.default_rng(1)
    a = aligned(M * K).reshape(M, K)
    b = aligned(N * K).reshape(N, K)
    c = aligned(M * N).reshape(N, M)
    a[...] = rng.standard_normal((M, K), dtype=np.float32)
    b[...] = rng.standard_normal((N, K), dtype=np.float32)
    work = aligned(1 << 20)
    ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(c)
    torch.set_num_threads(1)
    calls = {v: (lambda f=fns[v]: f(a.ctypes.data, b.ctypes.data, c.ctypes.data, M, N, K,
                                    work.ctypes.data)) for v in VARIANTS}
    calls["torch"] = lambda: torch.matmul(tb, ta.T, out=tc)
    if os.environ.get("MM_AB_PACKAGE"):   # the package's own paths on the same data
        import ggml_cy
        from probe_common import mul_mat_graph
        graph_call, ctx = mul_mat_graph("f32", a, b, 1)
        calls["graph"] = graph_call
        calls["eager"] = lambda: ggml_cy.mul_mat(a, b, out=c, n_threads=1)
    calls[BASE]()
    ref = b.astype(np.float64) @ a.T.astype(np.float64)
    err = float(np.abs(c - ref).max() / np.abs(ref).max())
    names = list(calls)
    for cpu in cpus:
        os.sched_setaffinity(0, {cpu})
        for f in calls.values():
            f()
        rounds = []
        t_end = time.perf_counter() + secs
        r = 0
        while time.perf_counter() < t_end:
            order = names[r % len(names):] + names[:r % len(names)]
            row = {}
            for v in order:
                t0 = time.perf_counter()
                calls[v]()
                row[v] = time.perf_counter() - t0
            rounds.append(row)
            r += 1
        fl = 2.0 * M * N * K
        base_min = min(x[BASE] for x in rounds)
        slow = [x for x in rounds if x[BASE] > 1.15 * base_min]
        out = {"cpu": cpu, "M": M, "N": N, "K": K, "rounds": len(rounds),
               "slow_rounds": len(slow), "base_rel_err": err}
        for v in names:
            ts = sorted(x[v] for x in rounds)
            out[v + "_gflops_median"] = round(fl / ts[len(ts) // 2] / 1e9, 1)
            out[v + "_gflops_best"] = round(fl / ts[0] / 1e9, 1)
            if v == "torch":
                continue
            for label, rs in (("", rounds), ("slow_", slow)):
                q = sorted(x["torch"] / x[v] for x in rs)
                if q:
                    out[label + v + "_vs_torch"] = [round(q[len(q) // 4], 3), round(q[len(q) // 2], 3),
                                                    round(q[3 * len(q) // 4], 3)]
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
