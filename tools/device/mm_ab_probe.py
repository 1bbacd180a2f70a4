"""Developer probe (not shipped): f32 GEMM kernel variants (bench/csrc/mm_ab.c, built into
/tmp/mm_ab.so by tools/device/build_mm_ab.sh) and torch taking turns call by call, one thread
pinned to one CPU, so that whatever else the machine does at that moment hits every variant
alike. Per CPU: each variant's median time and its per-round speed relative to torch
(torch's time / the variant's time in the same round; median and quartiles), also over
the rounds where the first variant ran slow (above 1.15x its fastest call).
MM_AB_THREADS=T (with MM_AB_PACKAGE=1 and MM_AB_VARIANTS=none): the package's paths and torch
at T threads, the process pinned to T CPUs from each listed CPU on (CPUs c..c+T-1).
Usage: [MM_AB_VARIANTS=pf0,pf16,...] python3 mm_ab_probe.py SECONDS_PER_CPU CPUS(comma)
[M N K] > rows.jsonl"""
import ctypes
import json
import os
import sys

import numpy as np
import torch

from probe_common import take_turns

VARIANTS = [v for v in os.environ.get("MM_AB_VARIANTS", "pf0,pf16,kc384,mr8,mr12").split(",")
            if v and v != "none"]
THREADS = int(os.environ.get("MM_AB_THREADS", "1"))
# MM_AB_SETTLE_MS: a pause before every timed call, so that the previous library's pool
# threads (torch's OpenMP threads spin after a call) have let go of the cores
SETTLE_S = float(os.environ.get("MM_AB_SETTLE_MS", "0")) * 1e-3


def aligned(n):
    # (not ggml_cy's aligned_empty: the probe also runs where the package is not built)
    raw = np.empty(n + 16, np.float32)
    off = (-raw.ctypes.data % 64) // 4
    return raw[off:off + n]


def main():
    secs = float(sys.argv[1])
    cpus = [int(c) for c in sys.argv[2].split(",")]
    M, N, K = (int(v) for v in sys.argv[3:6]) if len(sys.argv) > 5 else (1024, 1024, 1024)
    lib = ctypes.CDLL("/tmp/mm_ab.so") if VARIANTS else None
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
    torch.set_num_threads(THREADS)
    calls = {v: (lambda f=fns[v]: f(a.ctypes.data, b.ctypes.data, c.ctypes.data, M, N, K,
                                    work.ctypes.data)) for v in VARIANTS}
    calls["torch"] = lambda: torch.matmul(tb, ta.T, out=tc)
    if os.environ.get("MM_AB_PACKAGE"):   # the package's own paths on the same data
        import ggml_cy
        from probe_common import mul_mat_graph
        graph_call, ctx = mul_mat_graph("f32", a, b, THREADS)
        calls["graph"] = graph_call
        calls["eager"] = lambda: ggml_cy.mul_mat(a, b, out=c, n_threads=THREADS)
    base = VARIANTS[0] if VARIANTS else "eager"   # its slow calls define the "slow" rounds
    calls[base]()
    ref = b.astype(np.float64) @ a.T.astype(np.float64)
    err = float(np.abs(c - ref).max() / np.abs(ref).max())
    names = list(calls)
    for cpu in cpus:
        os.sched_setaffinity(0, set(range(cpu, cpu + THREADS)))
        rounds = take_turns(calls, secs, SETTLE_S)
        fl = 2.0 * M * N * K
        base_min = min(x[base] for x in rounds)
        slow = [x for x in rounds if x[base] > 1.15 * base_min]
        out = {"cpu": cpu, "threads": THREADS, "M": M, "N": N, "K": K, "rounds": len(rounds),
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
