"""Developer probe (not shipped): why the allocating float32 -> float16 conversion of 1e7
elements (ggml_cy.astype against torch's x.to(float16)) lost on the 16-core host at 2
threads (round u1: 2.75 against 1.68 ms) while the copy into a kept output tied (3.05 against
torch's copy_ 2.88). Times, in blocks as the bench takes them (a 50 ms pause, 30 ms of
untimed calls, then single timed calls; 3 rounds, order rotating), the conversion into kept
and fresh outputs allocated by numpy and by torch, and the allocations alone. Also prints
whether consecutive fresh results reuse one address (heap) or not (fresh mmap), and the
machine's transparent-huge-page setting. One JSON line per thread count (microseconds)."""
import os
import sys
import time

import numpy as np

import ggml_cy
from probe_common import block, emit, medians, save


def pointers(make, k=4):
    """Data addresses of k results made one after another, each dropped before the next."""
    out = []
    for _ in range(k):
        r = make()
        out.append(hex(r.ctypes.data if isinstance(r, np.ndarray) else r.data_ptr()))
        del r
    return out


def main():
    import torch
    allc = int(sys.argv[2]) if len(sys.argv) > 2 else os.cpu_count()
    n = 10_000_000
    x = (np.random.default_rng(n).standard_normal(n) * 1000).astype(np.float32)
    out = np.empty(n, np.float16)
    ref = x.astype(np.float16)
    tx, to = torch.from_numpy(x), torch.from_numpy(out)
    rows = []
    for p in ("enabled", "defrag"):
        try:
            with open(f"/sys/kernel/mm/transparent_hugepage/{p}") as f:
                emit(rows, {"thp_" + p: f.read().strip()})
        except OSError as e:
            emit(rows, {"thp_" + p: str(e)})
    for nth in sorted({2, allc}):
        torch.set_num_threads(nth)
        variants = {
            "np.empty": lambda: np.empty(n, np.float16),
            "np.empty+fill": lambda: np.empty(n, np.float16).fill(0),
            "torch.empty+fill": lambda: torch.empty(n, dtype=torch.float16).fill_(0),
            "ggml_cy.astype": lambda: ggml_cy.astype(x, np.float16, n_threads=nth),
            "torch.to": lambda: tx.to(torch.float16),
            "ggml_cy.copyto kept": lambda: ggml_cy.copyto(out, x, n_threads=nth),
            "torch.copy_ kept": lambda: to.copy_(tx),
            "ggml_cy.copyto np.empty": lambda: ggml_cy.copyto(np.empty(n, np.float16), x,
                                                              n_threads=nth),
            "ggml_cy.copyto torch.empty": lambda: ggml_cy.copyto(
                torch.empty(n, dtype=torch.float16).numpy(), x, n_threads=nth),
            "torch.empty.copy_": lambda: torch.empty(n, dtype=torch.float16).copy_(tx),
        }
        assert np.array_equal(ggml_cy.astype(x, np.float16, n_threads=nth).view(np.uint16),
                              ref.view(np.uint16))
        names = list(variants)
        samples = {}
        for r in range(3):
            k = r % len(names)
            for name in names[k:] + names[:k]:
                f = variants[name]
                time.sleep(0.05)
                t_end = time.perf_counter() + 0.03
                while time.perf_counter() < t_end:
                    f()
                for _ in range(7):
                    samples.setdefault(name, []).append(block(f, 1))
        emit(rows, {"n": n, "nth": nth, "us": medians(samples, 1e6)})
        emit(rows, {"nth": nth, "addresses": {
            "ggml_cy.astype": pointers(lambda: ggml_cy.astype(x, np.float16, n_threads=nth)),
            "torch.to": pointers(lambda: tx.to(torch.float16)),
            "np.empty": pointers(lambda: np.empty(n, np.float16))}})
    save(rows)


if __name__ == "__main__":
    main()
