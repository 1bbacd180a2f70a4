"""Developer tool (issue 14, many cores): the fused a*b + c*d - e at 1e7 (and 1e8 with
--big) on all threads, ggml_cy's evaluate under fused-executor variants (block size,
streaming stores on/off) against the hand-fused C loops (plain, non-temporal) of
bench/roofline, all in one process, taking turns by blocks over several rounds.

    python3 tools/diag_fused16.py [--json PATH] [--big]

Prints the median over rounds of each block's median (microseconds) with [min-max]."""
import json
import os
import statistics
import sys
import time

from _diag_timing import block

ROUNDS = int(os.environ.get("DIAG_ROUNDS", "5"))


def main():
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import numpy as np
    import ggml_cy as gc
    from ggml_cy.cpu import _fused
    from bench import roofline
    roof = roofline.load()
    nt = len(os.sched_getaffinity(0))
    n = 10**8 if "--big" in sys.argv else 10**7
    rng = np.random.default_rng(0)
    arrs = {k: rng.standard_normal(n).astype(np.float32) for k in "abcde"}
    out = np.empty(n, np.float32)
    expr = "a*b + c*d - e"

    def ev_variant(blk, stream):
        def setup():
            _fused.set_block_elements(blk)
            _fused.set_streaming(stream)
            gc.evaluate(expr, out=out, n_threads=nt - 1, **arrs)   # forces a new plan
            gc.evaluate(expr, out=out, n_threads=nt, **arrs)
        return setup, lambda: gc.evaluate(expr, out=out, n_threads=nt, **arrs)

    variants = {}
    for blk in (2048, 8192, 32768, 131072):
        for stream in (True, False):
            variants[f"ggml b={blk} {'nt' if stream else 'plain'}"] = ev_variant(blk, stream)
    args = [arrs[k] for k in "abcde"] + [out, nt]
    variants["C loop"] = (None, lambda: roof.fused_abcde_f32(*args, False))
    variants["C loop NT"] = (None, lambda: roof.fused_abcde_f32(*args, True))
    runs = {k: [] for k in variants}
    for _ in range(ROUNDS):
        for name, (setup, fn) in variants.items():
            if setup:
                setup()
            time.sleep(0.05)
            runs[name].append(block(fn, 4e-3, 100, 9))
    res = {k: [statistics.median(v), min(v), max(v)] for k, v in runs.items()}
    best_c = min(res["C loop"][0], res["C loop NT"][0])
    print(f"fused {expr} n={n:.0e} threads={nt} (median of {ROUNDS} rounds [min-max], us; "
          f"/Cbest = C best time / this)")
    for k, (m, lo, hi) in res.items():
        print(f"{k:24s} {m:9.1f} [{lo:.0f}-{hi:.0f}]  {best_c / m:4.2f}")
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump({"n": n, "threads": nt, "results": res}, f, indent=1)


if __name__ == "__main__":
    main()
