"""Developer probe (not shipped): does a float32 add's speed depend on where its arrays
start within a cache line? Arrays carved out of a page-aligned buffer at offsets 0 and 16
bytes (numpy's large arrays sit at 16), out= given, ggml_cy against numpy and torch
(torch.from_numpy: the same memory), blocks taking turns, 7 rounds. Sizes and thread
counts: 1e4 and 1e5 on one thread, 262144 and 1e6 on all. One JSON line per case."""
import os
import sys

import numpy as np

import ggml_cy
from probe_common import block, emit, save


def carve(n, off, dt=np.float32):
    isz = np.dtype(dt).itemsize
    buf = np.empty(n * isz + 8192, np.uint8)
    start = (-buf.ctypes.data) % 4096 + off
    return buf[start:start + n * isz].view(dt)


def main():
    import torch
    allc = int(sys.argv[2]) if len(sys.argv) > 2 else os.cpu_count()
    rows = []
    for n, nth in ((10000, 1), (100000, 1), (262144, allc), (1000000, allc)):
        torch.set_num_threads(nth)
        for off in (0, 16):
            a, b, o = (carve(n, off) for _ in range(3))
            a[:] = np.random.rand(n)
            b[:] = np.random.rand(n)
            ta, tb, to = (torch.from_numpy(x) for x in (a, b, o))
            calls = max(20, int(2e7 // n))
            impls = {"ggml_cy": lambda: ggml_cy.add(a, b, out=o, n_threads=nth),
                     "numpy": lambda: np.add(a, b, out=o),
                     "torch": lambda: torch.add(ta, tb, out=to)}
            samples = {k: [] for k in impls}
            for _ in range(7):
                for k, f in impls.items():
                    f(); f()
                    samples[k].append(block(f, calls))
            med = {k: round(sorted(v)[3] * 1e6, 3) for k, v in samples.items()}
            emit(rows, {"n": n, "nth": nth, "offset": off, "us": med})
    save(rows)


if __name__ == "__main__":
    main()
