"""Developer probe (not shipped): how a call's time recovers after a pause, the way the bench
samples (turns_kw: a 50 ms pause, two untimed calls, then the timed ones). For the f32 -> f16
copy of 1e7 elements and the f32 1024^3 mul_mat, ggml_cy against torch at 1 and 2 threads:
9 times, a pause (50 ms sleep, or 50 ms of the caller spinning), then 8 calls timed one by
one; the median per call index. One JSON line per (case, library, threads, pause).
Run it twice, with GGML_CY_POOL_SPREAD=0 and unset, to see the pool's after-sleep moves.
With "many" as the second argument: at all threads, evaluate("a*b + c*d - e") on 1e7
float32 against the bench's hand-fused C loop (non-temporal stores), and add f32 1e6
against torch, the same way."""
import os
import sys
import time

import numpy as np

import ggml_cy
from probe_common import emit, save


def pause(kind):
    if kind == "sleep":
        time.sleep(0.05)
    else:
        t = time.perf_counter()
        while time.perf_counter() - t < 0.05:
            pass


def ramp(rows, cname, libs, nth, spread):
    for kind in ("sleep", "spin"):
        per = {lib: [[] for _ in range(8)] for lib in libs}
        for _ in range(9):
            for lib, f in libs.items():
                pause(kind)
                for i in range(8):
                    t = time.perf_counter()
                    f()
                    per[lib][i].append(time.perf_counter() - t)
        for lib in libs:
            med = [round(sorted(v)[len(v) // 2] * 1e6, 1) for v in per[lib]]
            emit(rows, {"case": cname, "lib": lib, "nth": nth, "pause": kind,
                        "spread": spread, "us_by_call": med})


def many(rows, spread):
    import torch
    from bench import roofline
    roof = roofline.load()
    nth = os.cpu_count()
    torch.set_num_threads(nth)
    rng = np.random.default_rng(1)
    n = 10_000_000
    arrs = {k: rng.random(n, dtype=np.float32) for k in "abcde"}
    out = np.empty(n, np.float32)
    args = [arrs[k] for k in "abcde"] + [out, nth]
    ramp(rows, "a*b+c*d-e 1e7", {
        "ggml_cy": lambda: ggml_cy.evaluate("a*b + c*d - e", out=out, n_threads=nth, **arrs),
        "C loop NT": lambda: roof.fused_abcde_f32(*args, True)}, nth, spread)
    a, b = arrs["a"][:1_000_000], arrs["b"][:1_000_000]
    o = np.empty(1_000_000, np.float32)
    ta, tb, to = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(o)
    ramp(rows, "add f32 1e6", {
        "ggml_cy": lambda: ggml_cy.add(a, b, out=o, n_threads=nth),
        "torch": lambda: torch.add(ta, tb, out=to)}, nth, spread)


def main():
    import torch
    rows = []
    if len(sys.argv) > 2 and sys.argv[2] == "many":
        many(rows, os.environ.get("GGML_CY_POOL_SPREAD", "default"))
        save(rows)
        return
    n = 10_000_000
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    o16 = np.empty(n, np.float16)
    tx, to = torch.from_numpy(x), torch.from_numpy(o16)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((1024, 1024), np.float32)
    b = rng.standard_normal((1024, 1024), np.float32)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    tout = torch.empty((1024, 1024))
    spread = os.environ.get("GGML_CY_POOL_SPREAD", "default")
    for nth in (1, 2):
        torch.set_num_threads(nth)
        cases = {
            "f32->f16": {"ggml_cy": lambda: ggml_cy.copyto(o16, x, n_threads=nth),
                         "torch": lambda: to.copy_(tx)},
            "mul_mat 1024^3": {"ggml_cy": lambda: ggml_cy.mul_mat(a, b, n_threads=nth),
                               "torch": lambda: torch.matmul(tb, ta.T, out=tout)},
        }
        for cname, libs in cases.items():
            ramp(rows, cname, libs, nth, spread)
    save(rows)


if __name__ == "__main__":
    main()
