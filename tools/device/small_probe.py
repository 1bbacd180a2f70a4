"""Developer probe (not shipped): eager add / maximum at 1e3..1e5 elements on the 16-core
host, one process, the libraries taking turns by blocks: ggml_cy with a fresh result and
with out=, at its default thread choice and at n_threads=1, against numpy and torch (fresh
and out=). Also the minor page faults per call (getrusage), to tell the cost of a fresh
result's pages from the kernel's. Prints one JSON line per (op, dtype, n)."""
import json
import resource
import sys
import time

import numpy as np
import torch

import ggml_cy


def block(f, calls):
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t = time.perf_counter()
    for _ in range(calls):
        f()
    dt = (time.perf_counter() - t) / calls
    return dt, (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / calls


def main():
    torch.set_num_threads(int(sys.argv[2]) if len(sys.argv) > 2 else 16)
    ggml_cy.set_num_threads(int(sys.argv[2]) if len(sys.argv) > 2 else 16)
    rows = []
    for op in ("add", "maximum"):
        for dt in (np.float32, np.float64):
            for n in (1000, 10_000, 30_000, 100_000):
                rng = np.random.default_rng(n)
                a = rng.random(n).astype(dt)
                b = rng.random(n).astype(dt)
                o = np.empty_like(a)
                ta, tb, to = (torch.from_numpy(x) for x in (a, b, o))
                g, tf, nf = getattr(ggml_cy, op), getattr(torch, op), getattr(np, op)
                impls = {
                    "ggml": lambda: g(a, b), "ggml_out": lambda: g(a, b, out=o),
                    "ggml1": lambda: g(a, b, n_threads=1),
                    "ggml1_out": lambda: g(a, b, out=o, n_threads=1),
                    "numpy": lambda: nf(a, b), "numpy_out": lambda: nf(a, b, out=o),
                    "torch": lambda: tf(ta, tb), "torch_out": lambda: tf(ta, tb, out=to)}
                calls = max(20, int(2e6 // n))
                samples = {k: [] for k in impls}
                faults = {k: [] for k in impls}
                for _ in range(9):
                    for k, f in impls.items():
                        f(); f()
                        t, fl = block(f, calls)
                        samples[k].append(t)
                        faults[k].append(fl)
                med = {k: round(sorted(v)[len(v) // 2] * 1e6, 3) for k, v in samples.items()}
                flt = {k: round(sorted(v)[len(v) // 2], 2) for k, v in faults.items()}
                row = {"op": op, "dtype": np.dtype(dt).name, "n": n, "us": med, "faults": flt}
                rows.append(row)
                print(json.dumps(row), flush=True)
    if len(sys.argv) > 1:
        json.dump({"rows": rows}, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
