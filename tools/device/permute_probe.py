"""Developer probe (not shipped): the (0,2,1,3) permuted float32 copy, np.copyto(out,
x.transpose(0,2,1,3)), through each of ggml_cy's row paths against torch's out.copy_(
x.permute(0,2,1,3)) on the same memory, blocks taking turns, 7 rounds, at 1 and 2 threads
and at all. Paths, set through the test hooks:
  plan     what plan_build picks on its own;
  rows     plain stores row by row in the output's order (gathering and interleaving off);
  ilvK     plain stores, K output runs interleaved, source prefetched (streaming rules off);
  ilv1     the same, one run at a time (prefetch only);
  gather   staged and streamed (the streaming rule forced on).
One JSON line per shape and thread count: microseconds (median) and the plans taken."""
import os
import sys
import time

import numpy as np

import ggml_cy
from ggml_cy.cpu import _kernels as K
from probe_common import block, emit, medians, save, tuning_kept

PLAIN = dict(llc_bytes=1 << 40, share_bytes=0, nt_min_bytes=1 << 40)
STREAM = dict(llc_bytes=0, share_bytes=0)
PATHS = {"plan": ({}, {}),
         "rows": (PLAIN, dict(gather=False, ilv=False)),
         "ilv16": (PLAIN, dict(gather=False, ilv=True, ilv_runs=16)),
         "ilv8": (PLAIN, dict(gather=False, ilv=True, ilv_runs=8)),
         "ilv4": (PLAIN, dict(gather=False, ilv=True, ilv_runs=4)),
         "ilv1": (PLAIN, dict(gather=False, ilv=True, ilv_runs=1)),
         "gather": (STREAM, dict(gather=True, ilv=False))}


def main():
    import torch
    allc = int(sys.argv[2]) if len(sys.argv) > 2 else os.cpu_count()
    rows = []
    base_tuning = K._set_tuning()
    base_paths = K._set_fused_paths()
    for shape in ((16, 128, 64, 64), (4, 128, 64, 64), (32, 256, 64, 64)):
        x = np.random.default_rng(0).standard_normal(shape, np.float32)
        v = x.transpose(0, 2, 1, 3)
        out = np.empty(v.shape, np.float32)
        tx, to = torch.from_numpy(x), torch.from_numpy(out)
        ref = np.ascontiguousarray(v)
        for nth in sorted({1, 2, allc}):
            torch.set_num_threads(nth)
            calls = max(3, int(4e8 // x.nbytes))
            samples, plans = {}, {}

            def run_path(name, tuning, paths):
                K._set_tuning(*base_tuning)
                K._set_fused_paths(*base_paths)
                K._set_tuning(**tuning)
                K._set_fused_paths(**paths)
                plans[name] = K._plan_info("CONT", out, v, n_threads=nth)
                f = lambda: ggml_cy.copyto(out, v, n_threads=nth)
                time.sleep(0.05)    # torch's spinning workers off the cores first
                f(); f()
                samples.setdefault(name, []).append(block(f, calls))

            with tuning_kept(K):
                for _ in range(7):
                    for name, (tuning, paths) in PATHS.items():
                        run_path(name, tuning, paths)
                        assert np.array_equal(out, ref)
                    K._set_tuning(*base_tuning)
                    K._set_fused_paths(*base_paths)
                    f = lambda: to.copy_(tx.permute(0, 2, 1, 3))
                    time.sleep(0.05)
                    f(); f()
                    samples.setdefault("torch", []).append(block(f, calls))
            K._set_fused_paths(*base_paths)
            taken = {k: [n for n in ("nt", "gather", "ilv", "srun") if p.get(n)] or ["rows"]
                     for k, p in plans.items()}
            emit(rows, {"shape": list(shape), "nth": nth, "mbytes": 2 * x.nbytes / 1e6,
                        "us": medians(samples, 1e6), "plans": taken})
    save(rows)


if __name__ == "__main__":
    main()
