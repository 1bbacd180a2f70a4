"""Issue 4's graph benchmark: fused elementwise evaluation and mul_mat.

Cases (float32, the same thread count everywhere):
  * a*b + c*d - e at 1e7 elements: ggml_cy.evaluate (the eager fused entry), the same
    expression as a ggml graph (ctx.mul/add/sub, graph.compute), numexpr, numpy's plain
    expression (temporaries and all, as a user writes it), and a fused C loop
    (bench._roofline.fused_abcde_f32, plain and non-temporal stores) as the bound;
  * a 16-op elementwise chain over five arrays (CHAIN below), same libraries minus the C loop;
  * mul_mat 1024x1024x1024: a ggml graph with ctx.mul_mat against numpy's `@` (OpenBLAS).
numpy's BLAS gets the same thread count through threadpoolctl when it is installed; without
it OpenBLAS uses its default (all cores) unless OPENBLAS_NUM_THREADS was set before Python
started, and the header says which.
"""
from __future__ import annotations

import contextlib
import inspect
import sys
import time

import numpy as np

from bench import _env, _harness, _libs, _report
from bench._harness import Call, Case, Setup, Target

LIBS = ["ggml_cy", "graph", "numexpr", "numpy", "torch", "C loop", "C loop NT"]

FUSED_EXPR = "a*b + c*d - e"
# The 16-op chain: ((((a*b)+c)-d)*e) ... cycling through * + - * over the five arrays, only
# arrays (no scalar constants) so that every library computes in float32.
CHAIN_OPS = [("*", "b"), ("+", "c"), ("-", "d"), ("*", "e"), ("+", "a"), ("*", "b"),
             ("-", "c"), ("*", "d"), ("+", "e"), ("*", "a"), ("-", "b"), ("*", "c"),
             ("+", "d"), ("*", "e"), ("-", "a"), ("*", "b")]
NAMES = "abcde"


def chain_expr(ops=CHAIN_OPS):
    expr = "a"
    for op, var in ops:
        expr = f"({expr} {op} {var})"
    return expr


def _inputs(n, seed):
    # values near 1 keep a 16-op chain of products and sums far from overflow
    rng = np.random.default_rng(seed)
    return {k: (rng.random(n, dtype=np.float32) * 0.5 + 0.75) for k in NAMES}


# ----------------------------------------------------------------------------- ggml_cy adapters
def _evaluate_call(gc, expr, arrays, out):
    """ggml_cy.evaluate(expr, a=..., ...), with out= when its signature has one."""
    evaluate = getattr(gc, "evaluate", None)
    if evaluate is None:
        return None, "ggml_cy.evaluate is not available yet"
    try:
        takes_out = "out" in inspect.signature(evaluate).parameters
    except (TypeError, ValueError):
        takes_out = False
    if takes_out:
        return Call(evaluate, expr, out=out, **arrays).writes(out), None
    return Call(evaluate, expr, **arrays), None


def _new_graph(gc, ctx):
    maker = getattr(ctx, "new_graph", None)
    if maker is not None:
        return maker()
    for owner in (gc, getattr(gc, "_graph", None)):
        maker = getattr(owner, "new_graph", None) if owner is not None else None
        if maker is not None:
            return maker(ctx)
    raise AttributeError("no new_graph (ctx.new_graph or ggml_cy.new_graph)")


def _compute_call(graph, threads):
    """graph.compute(n_threads), reusing one plan when compute takes plan=."""
    try:
        plan = graph.plan(threads)
        return Call(graph.compute, threads, plan=plan)
    except (AttributeError, TypeError):
        return Call(graph.compute, threads)


def graph_call(gc, arrays, build, threads, n_nodes, node_bytes):
    """A ggml graph over copies of `arrays`: build(ctx, tensors) -> result tensor.

    Returns (Call timing graph.compute with .writes(result view), None) or (None, reason)."""
    if not hasattr(gc, "Context"):
        return None, "ggml_cy.Context is not available"
    try:
        # the arena holds the inputs and one result per node (fused intermediates are
        # allocated but never written), plus headers, the graph and the work buffer
        mem = sum(a.nbytes for a in arrays.values()) + n_nodes * node_bytes + 64 * 2**20
        ctx = gc.Context(mem_size=int(mem))
        tensors = {k: ctx.tensor_from(v) for k, v in arrays.items()}
        result = build(ctx, tensors)
        graph = _new_graph(gc, ctx)
        graph.build_forward_expand(result)
        call = _compute_call(graph, threads)
        view = result.numpy()
    except AttributeError as exc:
        return None, f"graph API not available yet ({exc})"
    return call.writes(view), None


_CTX_OP = {"*": "mul", "+": "add", "-": "sub"}


def _build_fused(ctx, t):
    return ctx.sub(ctx.add(ctx.mul(t["a"], t["b"]), ctx.mul(t["c"], t["d"])), t["e"])


def _build_chain(ctx, t):
    x = t["a"]
    for op, var in CHAIN_OPS:
        x = getattr(ctx, _CTX_OP[op])(x, t[var])
    return x


# ----------------------------------------------------------------------------- cases
def elementwise_setup(env, expr, build, n_nodes, n, seed, c_loop=False, fresh=False):
    """fresh: ggml_cy.evaluate and numexpr return a new array each call (no out=), as most
    calls are written; the per-call cost then includes the result's allocation."""
    arrays = _inputs(n, seed)
    ref = eval(expr, {}, dict(arrays))  # numpy, float32 throughout
    out = np.empty_like(ref)
    impls, skipped = {}, {}
    gc = env["gc"]
    call, why = _evaluate_call(gc, expr, arrays, None if fresh else out)
    if call is not None:
        impls["ggml_cy"] = call
    else:
        skipped["ggml_cy"] = why
    call, why = graph_call(gc, arrays, build, env["threads"], n_nodes, out.nbytes)
    if call is not None:
        impls["graph"] = call
    else:
        skipped["graph"] = why
    if env["ne"] is not None:
        impls["numexpr"] = (Call(env["ne"].evaluate, expr, local_dict=arrays) if fresh else
                            Call(env["ne"].evaluate, expr, local_dict=arrays, out=out))
    code = compile(expr, "<bench expr>", "eval")
    impls["numpy"] = Call(eval, code, {}, arrays)
    if env["torch"] is not None:
        # torch's eager ops on the same arrays (temporaries, as a torch user writes it)
        targs = {k: env["torch"].from_numpy(v) for k, v in arrays.items()}
        impls["torch"] = Call(eval, code, {}, targs).unchecked()
    roof = env["roofline"]
    if c_loop and roof is not None:
        args = [arrays[k] for k in NAMES] + [out, env["threads"]]
        # unchecked: the compiler may contract a*b + c*d into an FMA (different rounding)
        impls["C loop"] = Call(roof.fused_abcde_f32, *args, False).unchecked()
        impls["C loop NT"] = Call(roof.fused_abcde_f32, *args, True).unchecked()
    nbytes = sum(a.nbytes for a in arrays.values()) + out.nbytes
    # with several threads the libraries take turns by blocks, as in the cpu, math and
    # scaling suites (harness.turns_kw): sample by sample, torch's and numexpr's spinning
    # pool threads held the cores through ggml_cy's samples (16-core host, round nt16:
    # evaluate 1e7 5.4 ms here against 1.7 ms in the scaling suite's blocks)
    s = Setup(impls, nbytes=nbytes, reference=ref, skipped=skipped,
              **_harness.turns_kw(env["threads"]))
    s.notes.append("numpy runs the plain expression (allocating temporaries); GB/s counts "
                   "the 5 inputs + 1 output once, whatever a library moves in between")
    return s


def fused_case(env, n, targets=None, fresh=False):
    if targets is None:   # issue 4's targets, at 1e7; issue 14's against the C loop
        targets = [Target("numexpr>=2", "vs_numexpr", 2.0), Target("np>=4.5", "vs_numpy", 4.5),
                   Target("Cbest>=0.85", "vs_c_best", 0.85)]
    name = f"{FUSED_EXPR} n={n:.0e}".replace("e+0", "e") + (" new result" if fresh else "")
    return Case(name,
                lambda: elementwise_setup(env, FUSED_EXPR, _build_fused, 4, n, 1,
                                          c_loop=not fresh, fresh=fresh),
                group="fused", params={"expr": FUSED_EXPR, "n": n, "dtype": "float32",
                                       "out": "new" if fresh else "given"},
                targets=targets)


NUMBER_EXPR = "a*x + b"


def number_setup(env, n):
    """evaluate() with a Python number among its operands (x = 2.5), a new result each
    call: the fast path keys the number by kind and converts it per call (it took the full
    path every time before 2026-11-29: 16 us at 1e3)."""
    arrays = {k: v for k, v in _inputs(n, 5).items() if k in "ab"}
    values = dict(arrays, x=2.5)
    ref = eval(NUMBER_EXPR, {}, dict(values))      # numpy: float32 (x is weak)
    impls, skipped = {}, {}
    call, why = _evaluate_call(env["gc"], NUMBER_EXPR, values, None)
    if call is not None:
        impls["ggml_cy"] = call
    else:
        skipped["ggml_cy"] = why
    if env["ne"] is not None:
        # (numexpr types the Python float as a double: a float64 result, so unchecked)
        impls["numexpr"] = Call(env["ne"].evaluate, NUMBER_EXPR, local_dict=values).unchecked()
    code = compile(NUMBER_EXPR, "<bench expr>", "eval")
    impls["numpy"] = Call(eval, code, {}, values)
    if env["torch"] is not None:
        targs = dict({k: env["torch"].from_numpy(v) for k, v in arrays.items()}, x=2.5)
        impls["torch"] = Call(eval, code, {}, targs).unchecked()
    return Setup(impls, nbytes=3 * arrays["a"].nbytes, reference=ref, skipped=skipped,
                 **_harness.turns_kw(env["threads"]))


def number_case(env, n):
    return Case(f"{NUMBER_EXPR} n={n:.0e} x a number".replace("e+0", "e"),
                lambda: number_setup(env, n), group="fused",
                params={"expr": NUMBER_EXPR, "n": n, "dtype": "float32", "out": "new",
                        "x": 2.5},
                targets=[Target("numexpr>=1", "vs_numexpr", 1.0),
                         Target("np>=1", "vs_numpy", 1.0)])


def chain_case(env, n):
    expr = chain_expr()
    return Case(f"16-op chain n={n:.0e}".replace("e+0", "e"),
                lambda: elementwise_setup(env, expr, _build_chain, len(CHAIN_OPS), n, 2),
                group="chain",
                params={"expr": expr, "n": n, "dtype": "float32"},
                targets=[Target("np>=4", "vs_numpy", 4.0)])


def mul_mat_setup(env, m, n, k):
    """ggml convention: a is ne [k, m] (numpy (m, k)), b is ne [k, n] (numpy (n, k)),
    result ne [m, n] (numpy (n, m)) = b @ a.T."""
    rng = np.random.default_rng(3)
    a = rng.random((m, k), dtype=np.float32) - 0.5
    b = rng.random((n, k), dtype=np.float32) - 0.5
    ref = b @ a.T
    out = np.empty_like(ref)
    impls, skipped = {}, {}
    call, why = graph_call(env["gc"], {"a": a, "b": b},
                           lambda ctx, t: ctx.mul_mat(t["a"], t["b"]), env["threads"],
                           1, out.nbytes)
    if call is not None:
        impls["ggml_cy"] = call
    else:
        skipped["ggml_cy"] = why
    impls["numpy"] = Call(np.matmul, b, a.T, out=out)
    if env["torch"] is not None:
        th = env["torch"]
        impls["torch"] = Call(th.matmul, th.from_numpy(b), th.from_numpy(a).T,
                              out=th.from_numpy(out))
    # OpenBLAS's workers busy-wait ~0.1 s after a call: without a pause the library timed
    # next ran on one free core (seen: ggml_cy 30 ms after numpy, 14 ms on its own)
    s = Setup(impls, flops=2 * m * n * k, reference=ref, skipped=skipped,
              compare=_close_compare, settle_s=0.25)
    s.notes.append("mul_mat: each sample starts after a 0.25 s pause, so no library runs "
                   "while another's thread pool is still spinning")
    s.notes.append("mul_mat: ggml_cy column = ctx.mul_mat in a graph, graph.compute; "
                   "numpy = np.matmul(b, a.T, out=) on OpenBLAS; results compared to 1e-4 "
                   "relative (summation order differs)")
    return s


def _close_compare(result, reference):
    got = np.asarray(result)
    if got.shape != reference.shape:
        return f"shape {got.shape} != numpy's {reference.shape}"
    scale = float(np.max(np.abs(reference))) or 1.0
    err = float(np.max(np.abs(got - reference))) / scale
    return None if err <= 1e-4 else f"max error {err:.2g} of max |value|"


def mul_mat_case(env, size):
    return Case(f"mul_mat {size}x{size}x{size}", lambda: mul_mat_setup(env, size, size, size),
                group="mul_mat", params={"m": size, "n": size, "k": size, "dtype": "float32"},
                targets=[Target("np>=0.5", "vs_numpy", 0.5)])


def build_cases(env, opts):
    n = 1000 if opts.smoke else 10_000_000
    size = 32 if opts.smoke else 1024
    # small sizes: evaluate()'s per-call cost (the cached graph found by the operands'
    # layout, re-pointed, one parallel region: expr/_call.pyx) against numexpr's and
    # numpy's; never slower than either (issue 14: no peer faster from 1e3 elements on)
    def small_targets():
        return [Target("numexpr>=1", "vs_numexpr", 1.0), Target("np>=1", "vs_numpy", 1.0)]
    small = [] if opts.smoke else [
        fused_case(env, m, targets=small_targets()) for m in (1_000, 100_000)]
    # the same at 1e3 without out=: the result's allocation is part of the call (a
    # cache-line-aligned array, core._core.aligned_empty)
    small += [] if opts.smoke else [fused_case(env, 1_000, targets=small_targets(), fresh=True),
                                    number_case(env, 1_000)]
    return small + [fused_case(env, n), chain_case(env, n), mul_mat_case(env, size)]


# ----------------------------------------------------------------------------- run
def run(opts, json_path, argv=None, out=None):
    out = out if out is not None else sys.stdout
    t0 = time.perf_counter()
    gc, load_note = _libs.load_ggml_cy()
    ne, torch = _libs.load_optional("numexpr"), _libs.load_optional("torch")
    thread_notes = _libs.set_threads(opts.threads, gc, ne, torch)
    roofline, roof_note = _libs.load_roofline(gc)
    limits = _libs.blas_limits(opts.threads)
    if limits is not None:
        thread_notes.append(f"numpy BLAS limited to {opts.threads} threads (threadpoolctl)")
    else:
        thread_notes.append("numpy BLAS: threadpoolctl not installed, OpenBLAS default threads "
                            "(set OPENBLAS_NUM_THREADS before starting Python to choose)")
    env = {"gc": gc, "ne": ne, "torch": torch, "roofline": roofline, "threads": opts.threads}
    meta = _env.environment(gc, opts.threads, "graph", argv)
    meta["thread_setting"] = thread_notes
    notes = [f"          ({'; '.join(thread_notes)})",
             f"method  : median per call over >= {opts.repeat} samples after warm-up; "
             "ggml_cy = ggml_cy.evaluate (fused, eager); graph = the same ops as a ggml "
             "graph (graph.compute); C loop = one fused pass in C (the bound)",
             f"chain   : {chain_expr()}"]
    notes += [x for x in (load_note, roof_note) if x]
    print("\n".join(_env.format_header(meta, notes)), file=out, flush=True)
    if json_path is None:
        json_path = _report.default_json_path("graph", opts)

    with limits if limits is not None else contextlib.nullcontext():
        results = _harness.run_cases(build_cases(env, opts), opts)
    ratios = [
        _harness.speedup("ggml_cy", "numexpr", header="xnumexpr"),
        _harness.speedup("ggml_cy", "numpy", header="xnumpy"),
        _harness.speedup_vs_best("ggml_cy", ["numexpr", "numpy", "torch"]),
        _harness.bandwidth_vs_lib("ggml_cy", "C loop", "vs_c_loop", "/Cloop"),
        # issue 14: against the faster of the two hand-fused C loops (plain / NT stores)
        _harness.bandwidth_vs_best_lib("ggml_cy", ["C loop", "C loop NT"], "vs_c_best",
                                       "/Cbest"),
        _harness.speedup("graph", "numpy", key="graph_vs_numpy", header="graph/np"),
    ]
    _harness.evaluate_ratios(results, ratios)
    meta["machine"]["load_average_end"] = _env.load_average()
    meta["runtime_s"] = round(time.perf_counter() - t0, 1)
    pre = ["ratios  : xnumexpr, xnumpy = speed-up of ggml_cy.evaluate (mul_mat: of the graph); "
           "xbest = over the fastest of numexpr/numpy/torch; "
           "/Cloop = its GB/s over the fused C loop's (/Cbest: the faster of plain and NT "
           "C loops); graph/np = the graph's speed-up over "
           "numpy; rates in GB/s, GF = GFLOP/s; '!' = result differs from numpy; "
           "'~' = noisy (quartile spread > 30% of the median)",
           f"load    : {meta['machine']['load_average_start']} at start, "
           f"{meta['machine']['load_average_end']} at end (shared machine: noise)"]
    doc = _report.finish(results, LIBS, ratios, meta, json_path, out, preamble=pre)
    print(f"total {meta['runtime_s']} s", file=out, flush=True)
    return doc
