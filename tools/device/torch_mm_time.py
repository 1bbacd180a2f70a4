"""Developer probe (not shipped): torch.matmul(b, a.T, out=) timed the way mm_tune.c times
ggml_cy's kernel (best and median of >= 5 calls over >= 0.5 s), so a device job can put the
two side by side. Usage: python torch_mm_time.py THREADS M N K [M N K ...]; one JSON line each."""
import json
import sys
import time

import numpy as np
import torch


def main():
    nth = int(sys.argv[1])
    torch.set_num_threads(nth)
    dims = [int(v) for v in sys.argv[2:]]
    for i in range(0, len(dims) - 2, 3):
        m, n, k = dims[i:i + 3]
        rng = np.random.default_rng(1)
        a = torch.from_numpy(rng.standard_normal((m, k), dtype=np.float32))
        b = torch.from_numpy(rng.standard_normal((n, k), dtype=np.float32))
        out = torch.empty((n, m))
        ts, t_start = [], time.perf_counter()
        while len(ts) < 64 and (len(ts) < 5 or time.perf_counter() - t_start < 0.5):
            t0 = time.perf_counter()
            torch.matmul(b, a.T, out=out)
            ts.append(time.perf_counter() - t0)
        ts.sort()
        print(json.dumps({"lib": "torch", "M": m, "N": n, "K": k, "threads": nth,
                          "best_ms": round(ts[0] * 1e3, 4), "median_ms": round(ts[len(ts) // 2] * 1e3, 4),
                          "gflops": round(2 * m * n * k / ts[0] / 1e9, 1)}), flush=True)


if __name__ == "__main__":
    main()
