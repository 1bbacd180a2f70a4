"""Developer probe (not shipped): ggml_cy's 16-thread add (the kernel path alone,
_kernels._time_calls) against plain C on the very same numpy arrays (bench/csrc/add_lib.c,
built by the job into /tmp/add_lib.so: its own copy of the pool with ggml_cy's split, the
pool with a static split, OpenMP), blocks of 20 and of 400 calls taking turns, 7 rounds.
Float32 1e6 and 262144. One JSON line per size and block length (medians in us)."""
import ctypes
import sys

import numpy as np

from ggml_cy.cpu import _kernels as K
from probe_common import emit, save


def main():
    lib = ctypes.CDLL(sys.argv[3] if len(sys.argv) > 3 else "/tmp/add_lib.so")
    f = lib.gcy_probe_add
    f.restype = ctypes.c_double
    f.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_long, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    nth = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    rows = []
    for n in (1000000, 262144):
        a = np.random.rand(n).astype(np.float32)
        b = np.random.rand(n).astype(np.float32)
        o = np.empty_like(a)
        pa, pb, po = (x.ctypes.data for x in (a, b, o))
        for reps in (20, 400):
            impls = {
                "ggml_kern": lambda: K._time_calls("ADD", o, a, b, reps=reps, n_threads=nth),
                "c_pool_dyn": lambda: f(po, pa, pb, n, nth, reps, 0),
                "c_pool_static": lambda: f(po, pa, pb, n, nth, reps, 1),
                "c_omp": lambda: f(po, pa, pb, n, nth, reps, 2),
            }
            samples = {k: [] for k in impls}
            for _ in range(7):
                for k, g in impls.items():
                    g()                      # warm: this split's data placement
                    samples[k].append(g())
            med = {k: round(sorted(v)[3] * 1e6, 2) for k, v in samples.items()}
            assert np.array_equal(o, a + b)
            emit(rows, {"n": n, "nth": nth, "block_calls": reps, "us": med})
    save(rows)


if __name__ == "__main__":
    main()
