"""Developer probe (not shipped): float32 -> float16 conversion of 1e7 elements
(np.copyto(out16, x32)) through ggml_cy, torch (out.copy_(x)) and the row variants of
bench/csrc/cvt_lib.c (built to /tmp/cvt_lib.so) on the same memory, blocks taking turns,
7 rounds, at 1, 2, 4 threads and at all. One JSON line per thread count: microseconds
(median). Variants: see cvt_lib.c. "ggml_cy@1" and "torch@1": single calls timed as the
bench times them (a 50 ms pause, two untimed calls, one timed)."""
import ctypes
import os
import sys
import time

import numpy as np

import ggml_cy
from probe_common import block, emit, medians, save

VARIANTS = {"tree": 0, "row16": 1, "row16pf": 2, "row32": 3, "tree_nt": 4, "nocheck16": 5}


def main():
    import torch
    lib = ctypes.CDLL("/tmp/cvt_lib.so")
    lib.gcy_probe_f2h.restype = ctypes.c_double
    lib.gcy_probe_f2h.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_int,
                                  ctypes.c_int, ctypes.c_int]
    allc = int(sys.argv[2]) if len(sys.argv) > 2 else os.cpu_count()
    rows = []
    n = 10_000_000
    x = (np.random.default_rng(n).standard_normal(n) * 1000).astype(np.float32)
    out = np.empty(n, np.float16)
    ref = x.astype(np.float16)
    tx, to = torch.from_numpy(x), torch.from_numpy(out)
    for nth in sorted({1, 2, 4, allc}):
        torch.set_num_threads(nth)
        calls = 20 if nth < 4 else 60
        samples = {}
        for _ in range(7):
            for name, v in VARIANTS.items():
                time.sleep(0.05)
                lib.gcy_probe_f2h(out.ctypes.data, x.ctypes.data, n, nth, 2, v)
                samples.setdefault(name, []).append(
                    lib.gcy_probe_f2h(out.ctypes.data, x.ctypes.data, n, nth, calls, v))
                assert np.array_equal(out.view(np.uint16), ref.view(np.uint16)), name
            for name, f in (("ggml_cy", lambda: ggml_cy.copyto(out, x, n_threads=nth)),
                            ("torch", lambda: to.copy_(tx))):
                time.sleep(0.05)
                f(); f()
                samples.setdefault(name, []).append(block(f, calls))
                # the bench's way (turns_kw): a 50 ms pause, two untimed calls, one timed
                for _ in range(3):
                    time.sleep(0.05)
                    f(); f()
                    samples.setdefault(name + "@1", []).append(block(f, 1))
        emit(rows, {"n": n, "nth": nth, "us": medians(samples, 1e6)})
    save(rows)


if __name__ == "__main__":
    main()
