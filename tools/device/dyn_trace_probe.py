"""Developer probe (not shipped): where a 16-thread eager add's time goes, per thread, with
compute_parallel's trace on (_kernels._dyn_trace): when each thread starts after the call
begins, how long it works, how many chunks of its own range and of others' it takes, and
the caller's plan time and whole call; the kernel path alone (_time_calls, no Python).
Sizes 16384 (threshold forced down), 262144, 1e6, 3e6 float32. One JSON line per size."""
import sys

import numpy as np

from ggml_cy.cpu import _kernels as K
from probe_common import tuning_kept, emit, save


def main():
    nth = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    rows = []
    with tuning_kept(K) as old:
        for n in (16384, 262144, 1000000, 3000000):
            K._set_tuning(par_min=1024 if n < 32768 else old[0])
            a = np.random.rand(n).astype(np.float32)
            b = np.random.rand(n).astype(np.float32)
            o = np.empty_like(a)
            reps = max(50, int(2e7 // n))
            K._time_calls("ADD", o, a, b, reps=reps, n_threads=nth)   # warm: pages, L2s, pool
            plain = sorted(K._time_calls("ADD", o, a, b, reps=reps, n_threads=nth) for _ in range(5))[2]
            K._dyn_trace(True)
            traced = K._time_calls("ADD", o, a, b, reps=reps, n_threads=nth)
            tr = K._dyn_trace(False)
            threads = [t for t in tr if t["thread"] != "caller"]
            caller = [t for t in tr if t["thread"] == "caller"]
            row = {"n": n, "nth": nth, "call_us": round(plain * 1e6, 2),
                   "traced_call_us": round(traced * 1e6, 2),
                   "caller": {k: round(v, 3) for k, v in caller[0].items() if k != "thread"} if caller else None,
                   "lag_us": [round(t["lag_us"], 2) for t in threads],
                   "work_us": [round(t["work_us"], 2) for t in threads],
                   "own": [round(t["own"], 2) for t in threads],
                   "stolen": [round(t["stolen"], 2) for t in threads],
                   "joined_per_call": [round(t["calls"] / reps, 3) for t in threads]}
            emit(rows, row)
    save(rows)


if __name__ == "__main__":
    main()
