"""Developer probe (not shipped): the 4096x4096x1 mat-vec (f32, f16, bf16 weights) through
ggml_cy's graph at THREADS threads, and torch's matmul, timed two ways: calls back to back
(steady state) and single calls the bench's way (50 ms pause, 15 ms of untimed calls, one
timed call), to tell a slow path from a wake-up effect. bench matmul at 16 threads on the
16-core host gave ggml_cy bf16 min 0.30 / median 2.60 ms and f32 0.32 / 1.34 ms while f16
held 0.23-0.27 (bench/results/matmul-xeon-16-e1.json).
Usage: python tools/device/mv_probe.py THREADS OUT.json"""
import json
import sys
import time

import numpy as np

from probe_common import mul_mat_graph


def timings(fn, pause):
    out = []
    if not pause:
        for _ in range(5):
            fn()
        for _ in range(200):
            t0 = time.perf_counter_ns()
            fn()
            out.append(time.perf_counter_ns() - t0)
        return out
    for _ in range(25):
        time.sleep(0.05)
        t_end = time.perf_counter() + 0.015
        k = 0
        while k < 2 or time.perf_counter() < t_end:
            fn()
            k += 1
        t0 = time.perf_counter_ns()
        fn()
        out.append(time.perf_counter_ns() - t0)
    return out


def summary(ts):
    ts = sorted(ts)
    n = len(ts)
    return {"min_us": ts[0] / 1e3, "q1_us": ts[n // 4] / 1e3, "median_us": ts[n // 2] / 1e3,
            "q3_us": ts[3 * n // 4] / 1e3, "max_us": ts[-1] / 1e3,
            "slow_share": sum(t > 2 * ts[0] for t in ts) / n}


def main():
    threads = int(sys.argv[1])
    import ggml_cy
    ggml_cy.set_num_threads(threads)
    try:
        import torch
        torch.set_num_threads(threads)
    except ImportError:
        torch = None
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4096, 4096), dtype=np.float32)
    b = rng.standard_normal((1, 4096), dtype=np.float32)
    res = {"threads": threads}
    for dtype in ("f32", "f16", "bf16"):
        fn, keep = mul_mat_graph(dtype, w, b, threads)
        for mode in ("steady", "pause"):
            s = summary(timings(fn, mode == "pause"))
            res[f"ggml_cy {dtype} {mode}"] = s
            print(f"ggml_cy {dtype:4s} {mode:6s} min {s['min_us']:7.0f} med {s['median_us']:7.0f} "
                  f"q3 {s['q3_us']:7.0f} max {s['max_us']:7.0f} slow {s['slow_share']:.2f}", flush=True)
        if torch is not None:
            tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
            ta = torch.from_numpy(w).to(tdt)
            tb = torch.from_numpy(b).to(tdt)
            tf = lambda: torch.matmul(tb, ta.T)
            for mode in ("steady", "pause"):
                s = summary(timings(tf, mode == "pause"))
                res[f"torch {dtype} {mode}"] = s
                print(f"torch   {dtype:4s} {mode:6s} min {s['min_us']:7.0f} med {s['median_us']:7.0f} "
                      f"q3 {s['q3_us']:7.0f} max {s['max_us']:7.0f} slow {s['slow_share']:.2f}", flush=True)
    json.dump(res, open(sys.argv[2], "w"), indent=1)


if __name__ == "__main__":
    main()
