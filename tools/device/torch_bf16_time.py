"""Developer probe (not shipped): torch's bf16 matmul b @ a.T (both operands bf16, as the
matmul suite's torch column) timed alone: median of 41 calls after 20 untimed.
Usage: python torch_bf16_time.py THREADS [M N K] (default 1024 1024 1024); one JSON line."""
import json
import sys
import time

import torch


def main():
    nth = int(sys.argv[1])
    m, n, k = (int(v) for v in sys.argv[2:5]) if len(sys.argv) >= 5 else (1024, 1024, 1024)
    torch.set_num_threads(nth)
    a = torch.randn(m, k).bfloat16()
    b = torch.randn(n, k).bfloat16()
    for _ in range(20):
        b @ a.T
    ts = []
    for _ in range(41):
        t0 = time.perf_counter()
        b @ a.T
        ts.append(time.perf_counter() - t0)
    ts.sort()
    med = ts[len(ts) // 2]
    print(json.dumps({"lib": "torch bf16", "threads": nth, "shape": "%dx%dx%d" % (m, n, k),
                      "median_ms": round(med * 1e3, 4),
                      "tflops_per_core": round(2 * m * n * k / med / nth * 1e-12, 3)}))


if __name__ == "__main__":
    main()
