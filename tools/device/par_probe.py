"""Developer probe (not shipped): where a parallel region starts to pay off for the eager
memory-bound ops. For add (f32, f64, f16) and maximum f32 at 8K..1M elements, out= given:
one thread (the size threshold set out of reach) against 2, 4, 8 and 16 threads (threshold
set to 1024 elements, so the call's n_threads decides). Prints one JSON line per row."""
import sys

import numpy as np

import ggml_cy
from probe_common import tuning_kept, block, emit, medians, save
from ggml_cy.cpu import _kernels as K


def main():
    tmax = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    rows = []
    counts = [t for t in (2, 4, 8, 16) if t <= tmax]
    with tuning_kept(K) as old:
        for op, dt in (("add", np.float32), ("add", np.float64), ("add", np.float16),
                       ("maximum", np.float32)):
            for n in (8192, 16384, 24576, 32768, 49152, 65536, 131072, 262144, 1048576):
                a = np.random.rand(n).astype(dt)
                b = np.random.rand(n).astype(dt)
                o = np.empty_like(a)
                g = getattr(ggml_cy, op)
                impls = {"t1": (1 << 40, 1)}
                impls.update({f"t{t}": (1024, t) for t in counts})
                calls = max(20, int(2e6 // n))
                samples = {k: [] for k in impls}
                for _ in range(7):
                    for k, (par, nth) in impls.items():
                        K._set_tuning(par_min=par)
                        f = lambda: g(a, b, out=o, n_threads=nth)
                        f(); f()
                        samples[k].append(block(f, calls))
                K._set_tuning(par_min=old[0])
                med = medians(samples, 1e6)
                row = {"op": op, "dtype": np.dtype(dt).name, "n": n, "us": med,
                       "best": min(med, key=med.get)}
                emit(rows, row)
    save(rows)


if __name__ == "__main__":
    main()
