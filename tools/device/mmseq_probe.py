"""Developer probe (not shipped): GEMM calls one by one after a pause, libraries taking turns
(the bench's matmul blocks: a 0.25 s pause, then calls), to see where ggml_cy's 2-thread
GEMMs lose inside `python -m bench matmul` on the 16-core host while alone in a fresh process
they ran at torch's speed (README, bench-matmul-table). Per library and round: the times of
calls 1..CALLS after the pause (ms). Usage:
  python mmseq_probe.py OUT.json THREADS DTYPE(f32|bf16) M K N PAUSE LIBS(ggml,torch,numpy)"""
import json
import sys
import time

import numpy as np

from probe_common import mul_mat_graph

CALLS, ROUNDS = 10, 6


def main():
    out, nt, dtype = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    m, k, n = (int(x) for x in sys.argv[4:7])
    pause, libs = float(sys.argv[7]), sys.argv[8].split(",")
    rng = np.random.default_rng(1)
    w = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((n, k), dtype=np.float32)
    fs, keep = {}, []
    if "ggml" in libs:
        f, kp = mul_mat_graph(dtype, w, b, nt)
        fs["ggml"] = f
        keep.append(kp)
    if "torch" in libs:
        import torch
        torch.set_num_threads(nt)
        tdt = torch.bfloat16 if dtype == "bf16" else torch.float32
        tw, tb = torch.from_numpy(w).to(tdt), torch.from_numpy(b).to(tdt)
        fs["torch"] = lambda: torch.matmul(tb, tw.T)
    if "numpy" in libs:
        from threadpoolctl import threadpool_limits
        threadpool_limits(nt)
        no = np.empty((n, m), np.float32)
        fs["numpy"] = lambda: np.matmul(b, w.T, out=no)
    res = {name: [] for name in fs}
    for r in range(ROUNDS):
        order = list(fs)[r % len(fs):] + list(fs)[:r % len(fs)]
        for name in order:
            time.sleep(pause)
            ts = []
            for _ in range(CALLS):
                t0 = time.perf_counter()
                fs[name]()
                ts.append(round((time.perf_counter() - t0) * 1e3, 3))
            res[name].append(ts)
    row = {"threads": nt, "dtype": dtype, "shape": [m, k, n], "pause": pause, "libs": libs,
           "ms": res,
           "median_from_call3": {k: float(np.median(np.array(v)[:, 2:])) for k, v in res.items()},
           "median_call1": {k: float(np.median(np.array(v)[:, 0])) for k, v in res.items()}}
    print(json.dumps({k: row[k] for k in ("threads", "dtype", "pause", "libs",
                                          "median_call1", "median_from_call3")}), flush=True)
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
