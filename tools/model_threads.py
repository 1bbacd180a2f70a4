#!/usr/bin/env python3
"""Decode and prompt speed of ggml_cy.models.llama per CPU thread count (developer tool:
how the graph executor scales; ``python -m bench model`` is the benchmark).

    python tools/model_threads.py [--cache DIR] [--types f16,q4_0] [--threads 1,2]
                                  [--steps 32] [--prompt 128]

Uses the bench's model files (bench/model.py writes them into --cache, default the bench's
cache folder; missing ones are written). Prints per type and thread count: the median
and minimum decode step (ms) over --steps steps after a --prompt-token prompt, and the
prompt's tokens/s.
"""
import argparse
import os
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None):
    from bench import model as bm
    from ggml_cy.models.llama import LlamaModel
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=os.environ.get("GGML_CY_BENCH_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "ggml_cy", "bench_model"))
    ap.add_argument("--types", default="f16,q4_0")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--prompt", type=int, default=128)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(1)
    prompt = [int(t) for t in rng.integers(3, bm.CONFIG["n_vocab"], a.prompt)]
    for wtype in a.types.split(","):
        path = bm.model_file(a.cache, wtype, bm.CONFIG)
        for nt in [int(x) for x in a.threads.split(",")]:
            m = LlamaModel(path, n_ctx=a.prompt + a.steps + 8, n_threads=nt)
            m.eval(prompt[:8], all_logits=False)         # warm-up (graphs, pages)
            m.reset()
            t0 = time.perf_counter()
            m.eval(prompt, all_logits=False)
            pp = time.perf_counter() - t0
            ts = []
            for _ in range(a.steps):
                t0 = time.perf_counter()
                m.eval([bm.DECODE_TOKEN], all_logits=False)
                ts.append(time.perf_counter() - t0)
            # the decode graph alone (no Python around it), and its barrier count
            _, graph, inputs, _ = next(v for k, v in m._graphs.items() if k[0] == 1)
            plan = inputs["plan"]
            tg = []
            for _ in range(a.steps):
                t0 = time.perf_counter()
                graph.compute(plan=plan)
                tg.append(time.perf_counter() - t0)
            m.close()
            print(f"{wtype:5s} threads {nt:3d}: decode median {np.median(ts) * 1e3:7.2f} ms "
                  f"min {min(ts) * 1e3:7.2f} ms ({1 / np.median(ts):7.1f} tok/s); graph "
                  f"only {np.median(tg) * 1e3:7.2f} ms, {len(plan.barriers)} barriers; "
                  f"prompt {a.prompt / pp:8.1f} tok/s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
