"""Developer probe (not shipped): evaluate("a*b + c*d - e") at all threads against the
bench's hand-fused C loop (bench/roofline.py, plain and non-temporal stores) with nothing
else in the process (the graph suite measures ~0.5 of the loop at 16 threads, the scaling
suite ~0.85), blocks of calls taking turns, 7 rounds, out= given; 1e7 and 3e7 float32.
One JSON line per size (medians in ms, and evaluate over the faster loop)."""
import sys

import numpy as np

import ggml_cy
from bench import roofline
from probe_common import block, emit, medians, save


def main():
    nth = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    roof = roofline.load()
    rows = []
    for n in (10_000_000, 30_000_000):
        rng = np.random.default_rng(1)
        arrs = [rng.random(n, dtype=np.float32) for _ in range(5)]
        out = np.empty(n, np.float32)
        a, b, c, d, e = arrs
        impls = {
            "evaluate": lambda: ggml_cy.evaluate("a*b + c*d - e", a=a, b=b, c=c, d=d, e=e,
                                                 out=out, n_threads=nth),
            "c_plain": lambda: roof.fused_abcde_f32(a, b, c, d, e, out, nth, False),
            "c_nt": lambda: roof.fused_abcde_f32(a, b, c, d, e, out, nth, True),
        }
        calls = 10 if n <= 10_000_000 else 4
        samples = {k: [] for k in impls}
        for _ in range(7):
            for k, f in impls.items():
                f(); f()
                samples[k].append(block(f, calls))
        med = medians(samples, 1e3)
        emit(rows, {"n": n, "nth": nth, "ms": med,
                    "evaluate_vs_best_loop": round(min(med["c_plain"], med["c_nt"]) / med["evaluate"], 3)})
    save(rows)


if __name__ == "__main__":
    main()
