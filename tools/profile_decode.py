"""Developer tool (issue 13, many cores): where a decode step of the bench's model spends
its time, per op kind, at the given thread counts: the graph's steps timed on thread 0 (each
step up to and including its barrier; ggml_cy.cpu._compute.step_profile_*), the whole
graph, and the Python around it (eval minus graph).

    python3 tools/profile_decode.py [--types q4_0,f16] [--threads 1,16] [--steps 40]
"""
import argparse
import collections
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench import model as bm                      # noqa: E402
from ggml_cy.cpu import _compute                   # noqa: E402
from ggml_cy.core._core import op_name             # noqa: E402
from ggml_cy.models.llama import LlamaModel        # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default=os.environ.get("GGML_CY_BENCH_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "ggml_cy", "bench_model"))
    ap.add_argument("--types", default="q4_0")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--steps", type=int, default=40)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(1)
    prompt = [int(t) for t in rng.integers(3, bm.CONFIG["n_vocab"], 128)]
    for wtype in a.types.split(","):
        path = bm.model_file(a.cache, wtype, bm.CONFIG)
        for nt in [int(x) for x in a.threads.split(",")]:
            m = LlamaModel(path, n_ctx=200, n_threads=nt)
            m.eval(prompt, all_logits=False)
            ts = []
            for _ in range(a.steps):
                m.n_past = 128
                t0 = time.perf_counter()
                m.eval([bm.DECODE_TOKEN], all_logits=False)
                ts.append(time.perf_counter() - t0)
            _, graph, inputs, _ = next(v for k, v in m._graphs.items() if k[0] == 1)
            plan = inputs["plan"]
            steps = plan.steps
            nodes = graph.nodes
            tg = []
            for _ in range(a.steps):
                t0 = time.perf_counter()
                graph.compute(plan=plan)
                tg.append(time.perf_counter() - t0)
            _compute.step_profile_start(len(steps))
            for _ in range(a.steps):
                graph.compute(plan=plan)
            prof = _compute.step_profile_stop()
            by = collections.Counter()
            cnt = collections.Counter()
            for (kind, first, count), ns in zip(steps, prof):
                if kind == "fused":
                    key = "fused(" + "+".join(sorted({op_name(nodes[i].op) for i in range(first, first + count)})) + ")"
                else:
                    key = op_name(nodes[first].op) if first < len(nodes) else kind
                    if key.upper() == "MUL_MAT":
                        key += " " + nodes[first].src[0].type.name + " " + "x".join(
                            str(x) for x in nodes[first].src[0].ne[:2])
                by[key] += ns / a.steps
                cnt[key] += 1
            tot = sum(prof) / a.steps
            print(f"== {wtype} threads {nt}: eval {np.median(ts) * 1e3:.3f} ms, graph "
                  f"{np.median(tg) * 1e3:.3f} ms, profiled steps {tot / 1e6:.3f} ms, "
                  f"{len(steps)} steps, {len(plan.barriers)} barriers")
            for k, v in by.most_common(14):
                print(f"   {v / 1e3:9.1f} us  {100 * v / tot:5.1f}%  x{cnt[k]:3d}  {k}")
            m.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
