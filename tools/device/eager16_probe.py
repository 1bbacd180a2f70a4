"""Developer probe (not shipped): where ggml_cy's 16-thread eager add of ~1e6 float32 loses
time against torch and against the same split in C (bench/csrc/add_probe.c: ~22 us).
For n in 262144, 1e6, 3e6 (float32, out= given), in one process, blocks taking turns:
  py16      ggml_cy.add(a, b, out=o, n_threads=16)          (the bench's call)
  kern16    _kernels._time_calls: the kernel path alone, no Python work
  py16_2d   the same add on (n/1000, 1000) views (row path instead of one split row)
  py8/py12  fewer threads
  nospread  py16 with the pool's CPU spreading off
  torch     torch.add(out=) at 16 threads;  numpy
Prints one JSON line per size (medians in us) and the thread count threads_for picks."""
import sys

import numpy as np

import ggml_cy
from ggml_cy.cpu import _kernels as K
from probe_common import block, emit, medians, save


def main():
    import torch
    nth = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    torch.set_num_threads(nth)
    rows = []
    for n in (262144, 1000000, 3000000):
        a = np.random.rand(n).astype(np.float32)
        b = np.random.rand(n).astype(np.float32)
        o = np.empty_like(a)
        m = n // 1000 * 1000
        a2, b2, o2 = (x[:m].reshape(-1, 1000) for x in (a, b, o))
        ta, tb, to = (torch.from_numpy(x) for x in (a, b, o))
        calls = max(20, int(4e6 // n))
        kreps = calls
        impls = {
            "py16": lambda: ggml_cy.add(a, b, out=o, n_threads=nth),
            "kern16": None,
            "py16_2d": lambda: ggml_cy.add(a2, b2, out=o2, n_threads=nth),
            "py8": lambda: ggml_cy.add(a, b, out=o, n_threads=8),
            "py12": lambda: ggml_cy.add(a, b, out=o, n_threads=12),
            "nospread": lambda: ggml_cy.add(a, b, out=o, n_threads=nth),
            "torch": lambda: torch.add(ta, tb, out=to),
            "numpy": lambda: np.add(a, b, out=o),
        }
        samples = {k: [] for k in impls}
        for _ in range(7):
            for k, f in impls.items():
                if k == "nospread":
                    K._pool_set_spread(False)
                if k == "kern16":
                    K._time_calls("ADD", o, a, b, reps=5, n_threads=nth)
                    samples[k].append(K._time_calls("ADD", o, a, b, reps=kreps, n_threads=nth))
                else:
                    f(); f(); f()
                    samples[k].append(block(f, calls))
                if k == "nospread":
                    K._pool_set_spread(True)
        row = {"n": n, "threads_for": K._threads_for("ADD", o, nth), "us": medians(samples, 1e6)}
        emit(rows, row)
    save(rows)


if __name__ == "__main__":
    main()
