"""Developer probe (not shipped): eager add / maximum / multiply at 1e5..1e7 elements on the
16-core host, ggml_cy at several thread counts against torch and numpy in one process, the
libraries taking turns by blocks. Prints one JSON line per (op, dtype, n)."""
import json
import sys

import numpy as np
import torch

import ggml_cy
from probe_common import block


def main():
    torch.set_num_threads(16)
    out = sys.argv[1] if len(sys.argv) > 1 else None
    rows = []
    for op, dt in (("add", np.float32), ("add", np.float64), ("maximum", np.float32),
                   ("add", np.float16)):
        for n in (100_000, 300_000, 1_000_000, 3_000_000, 10_000_000):
            rng = np.random.default_rng(n)
            a = rng.random(n).astype(dt)
            b = rng.random(n).astype(dt)
            o = np.empty_like(a)
            ta, tb, to = (torch.from_numpy(x) for x in (a, b, o))
            g = getattr(ggml_cy, op)
            tf = getattr(torch, op)
            impls = {f"ggml{t}": (lambda t=t: g(a, b, out=o, n_threads=t)) for t in (2, 4, 8, 12, 16)}
            impls["torch16"] = lambda: tf(ta, tb, out=to)
            impls["numpy"] = lambda: getattr(np, op)(a, b, out=o)
            calls = max(3, int(2e7 // n))
            samples = {k: [] for k in impls}
            for _ in range(7):
                for k, f in impls.items():
                    f(); f()
                    samples[k].append(block(f, calls))
            med = {k: sorted(v)[len(v) // 2] * 1e6 for k, v in samples.items()}
            row = {"op": op, "dtype": np.dtype(dt).name, "n": n, "us": med,
                   "best_ggml": min((v, k) for k, v in med.items() if k.startswith("ggml"))[1],
                   "ggml16_vs_torch": med["torch16"] / med["ggml16"],
                   "best_vs_torch": med["torch16"] / min(v for k, v in med.items() if k.startswith("ggml"))}
            rows.append(row)
            print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items() if k != "us"}),
                  {k: round(v, 1) for k, v in med.items()}, flush=True)
    if out:
        json.dump(rows, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
