"""Developer probe (not shipped): plain against streaming (non-temporal) stores for the big
eager calls at 1..16 threads on the 16-core host, torch at the same thread count beside
them, libraries taking turns by blocks over 5 rounds. Plain: the LLC rule set out of reach
(llc_bytes huge); streaming: llc_bytes=0 (every output of NT_MIN_BYTES or more streams).
Prints one JSON line per (case, threads)."""

import numpy as np
import torch

import ggml_cy
from probe_common import tuning_kept, block, emit, medians, save
from ggml_cy.cpu import _kernels as K


def cases():
    rng = np.random.default_rng(0)
    a = rng.random(10_000_000, dtype=np.float32)
    b = rng.random(10_000_000, dtype=np.float32)
    o = np.empty_like(a)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    o64 = np.empty_like(a64)
    m = rng.random((4096, 4096), dtype=np.float32)
    v = rng.random(4096, dtype=np.float32)
    om = np.empty_like(m)
    h = np.empty(10_000_000, np.float16)
    a3, b3, o3 = a[:3_000_000], b[:3_000_000], o[:3_000_000]
    T = torch.from_numpy
    yield ("add f32 1e7", lambda: ggml_cy.add(a, b, out=o), lambda: torch.add(T(a), T(b), out=T(o)))
    yield ("add f32 3e6", lambda: ggml_cy.add(a3, b3, out=o3), lambda: torch.add(T(a3), T(b3), out=T(o3)))
    yield ("add f64 1e7", lambda: ggml_cy.add(a64, b64, out=o64), lambda: torch.add(T(a64), T(b64), out=T(o64)))
    yield ("maximum f32 1e7", lambda: ggml_cy.maximum(a, b, out=o), lambda: torch.maximum(T(a), T(b), out=T(o)))
    yield ("(4096,4096)+(4096,)", lambda: ggml_cy.add(m, v, out=om), lambda: torch.add(T(m), T(v), out=T(om)))
    yield ("f32->f16 1e7 copyto", lambda: ggml_cy.copyto(h, a, casting="unsafe"), lambda: T(h).copy_(T(a)))


def main():
    rows = []
    with tuning_kept(K) as old:
        for name, g, tf in cases():
            for nth in (1, 2, 4, 8, 16):
                torch.set_num_threads(nth)
                impls = {"plain": (1 << 50, g), "stream": (0, g), "torch": (None, tf)}
                samples = {k: [] for k in impls}
                for _ in range(5):
                    for k, (llc, f) in impls.items():
                        if llc is not None:
                            K._set_tuning(llc_bytes=llc)
                        with ggml_cy.threads(nth):
                            f(); samples[k].append(block(f, 5))
                K._set_tuning(*old)
                med = medians(samples, 1e3)
                row = {"case": name, "threads": nth, "ms": med,
                       "plain_vs_torch": round(med["torch"] / med["plain"], 3),
                       "stream_vs_torch": round(med["torch"] / med["stream"], 3)}
                emit(rows, row)
    save(rows)


if __name__ == "__main__":
    main()
