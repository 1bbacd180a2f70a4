"""Developer probe (not shipped): the package's 2..4-thread float mul_mat
(ggml_cy/cpu/csrc/mul_mat_ndeal.h) four ways, eager calls with out= taking turns in one
process: "static" (the plain split, _kernels._set_mm_dealing(False)), "split" (the timed
split through the counters, _set_ndeal(0)), "dealt" (_set_ndeal(1)) and "auto" (by the
measured lag, the default; its running mean carried across its own rounds). With --hog CPU a
busy child process pinned to that CPU shares a core with one of the threads for the whole
run (a machine with other work on it). Usage:
  python3 mm_ndeal_probe.py THREADS ROUNDS [--hog CPU] DTYPE:M:N:K [DTYPE:M:N:K ...]
One JSON line per case: each way's quartiles of its per-round medians (ms), and the share of
auto's calls that were dealt."""
import json
import os
import subprocess
import sys
import time

import numpy as np

import ggml_cy
from ggml_cy.cpu import _kernels, _mul_mat


def timed(f, calls=5):
    ts = []
    for _ in range(calls):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def case(threads, rounds, dtype, m, n, k):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((m, k), dtype=np.float32)
    w = w.astype(np.float16) if dtype == "f16" else w
    b = rng.standard_normal((n, k), dtype=np.float32)
    out = np.empty((n, m), np.float32)

    def call():
        ggml_cy.mul_mat(w, b, out=out, n_threads=threads)
    ways = {"static": [], "split": [], "dealt": [], "auto": []}
    auto_mean, auto_dealt, auto_calls = 0, 0, 0
    for _ in range(rounds):
        for way in ways:
            _kernels._set_mm_dealing(way != "static")
            if way == "auto":
                _mul_mat._set_ndeal(-1, auto_mean)
                ts = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    call()
                    ts.append(time.perf_counter() - t0)
                    auto_calls += 1
                    auto_dealt += _mul_mat._ndeal_state()[1]
                ways[way].append(float(np.median(ts)))
                auto_mean = _mul_mat._ndeal_state()[0]
            else:
                _mul_mat._set_ndeal({"split": 0, "dealt": 1}.get(way, -1), 0)
                ways[way].append(timed(call))
    _kernels._set_mm_dealing(True)
    _mul_mat._set_ndeal(-1, 0)
    row = {"threads": threads, "dtype": dtype, "M": m, "N": n, "K": k, "rounds": rounds,
           "auto_dealt_share": round(auto_dealt / max(auto_calls, 1), 2)}
    for way, v in ways.items():
        row[way] = [round(x * 1e3, 3) for x in np.percentile(v, [25, 50, 75])]
    print(json.dumps(row), flush=True)


def main():
    args = sys.argv[1:]
    threads, rounds = int(args[0]), int(args[1])
    rest = args[2:]
    hog = None
    if rest[:1] == ["--hog"]:
        cpu = int(rest[1])
        rest = rest[2:]
        hog = subprocess.Popen([sys.executable, "-c",
                                f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"])
        time.sleep(0.3)
    try:
        for spec in rest:
            dtype, m, n, k = spec.split(":")
            case(threads, rounds, dtype, int(m), int(n), int(k))
    finally:
        if hog is not None:
            hog.kill()


if __name__ == "__main__":
    main()
