"""Shared pieces of the device probes (developer tools, not shipped): a timed block of calls
and the one-JSON-line-per-row output. The probes run as scripts (python3 tools/device/x.py),
so this folder is on sys.path and `import probe_common` finds this file."""
import contextlib
import json
import sys
import time


def block(f, calls):
    """Seconds per call of `calls` back-to-back calls of f."""
    t = time.perf_counter()
    for _ in range(calls):
        f()
    return (time.perf_counter() - t) / calls


def take_turns(calls, secs, settle_s=0.0):
    """Calls every function of `calls` ({name: f}) once to warm up, then in rounds for
    `secs` seconds, the first one rotating each round (optionally after a pause before
    each call); returns the rounds, each {name: seconds of its call}."""
    names = list(calls)
    for f in calls.values():
        f()
    rounds = []
    t_end = time.perf_counter() + secs
    r = 0
    while time.perf_counter() < t_end:
        row = {}
        for v in names[r % len(names):] + names[:r % len(names)]:
            if settle_s > 0:
                time.sleep(settle_s)
            t0 = time.perf_counter()
            calls[v]()
            row[v] = time.perf_counter() - t0
        rounds.append(row)
        r += 1
    return rounds


def emit(rows, row):
    """Keeps the row and prints it as one JSON line (flushed: a killed run keeps its rows)."""
    rows.append(row)
    print(json.dumps(row), flush=True)


def save(rows):
    """Writes {"rows": rows} to the path given as the first argument, if any."""
    if len(sys.argv) > 1:
        json.dump({"rows": rows}, open(sys.argv[1], "w"), indent=1)


def medians(samples, scale):
    """{name: median of its samples x scale (1e6: microseconds), 3 decimals}."""
    return {k: round(sorted(v)[len(v) // 2] * scale, 3) for k, v in samples.items()}


@contextlib.contextmanager
def tuning_kept(kernels):
    """Runs the block with ggml_cy's size thresholds as the probe sets them, and puts the
    previous values back afterwards (also when the probe fails): yields the previous tuple."""
    old = kernels._set_tuning()
    try:
        yield old
    finally:
        kernels._set_tuning(*old)


def mul_mat_graph(dtype, w, b, threads):
    """A graph of one ctx.mul_mat of weights w ((M, K) float32, stored as dtype: "f32",
    "f16" or "bf16", rounded to nearest even) by b ((N, K) float32), planned for `threads`.
    Returns (a call computing it, the context that keeps its memory alive)."""
    import numpy as np
    from ggml_cy import GGMLType as T
    from ggml_cy.graph.context import Context
    m, k = w.shape
    ctx = Context(w.nbytes + b.nbytes + 4 * m * b.shape[0] + (32 << 20))
    if dtype == "bf16":
        u = w.view(np.uint32).astype(np.uint64)
        bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        ta = ctx.new_tensor(T.BF16, (k, m))
        ta.numpy(2)[...] = bits
    elif dtype == "f16":
        ta = ctx.tensor_from(w.astype(np.float16))
    else:
        ta = ctx.tensor_from(w)
    r = ctx.mul_mat(ta, ctx.tensor_from(b))
    g = ctx.new_graph()
    g.build_forward_expand(r)
    plan = g.plan(threads)
    return (lambda: g.compute(threads, plan=plan)), ctx
