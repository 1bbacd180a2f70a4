"""Issue 14's thread-scaling table: the same cases at 1, 2, 4, 8, 16 ... threads (up to
--threads, default the usable cores), every library given the same count each time.

Cases (float32, preallocated outputs):
  * add n=1e7: ggml_cy.add(out=), numpy (one thread whatever the count), numexpr, torch,
    and STREAM's add in C with plain and with non-temporal stores (bench/csrc/roofline.c);
  * (4096,4096)+(4096,): the broadcast add;
  * a*b + c*d - e at 1e7: ggml_cy.evaluate (fused), numexpr, torch's natural expression
    (temporaries), the hand-fused C loop plain and non-temporal, compiled in this run;
  * the same at 1e8 on machines with at least 8 usable cores (beyond a many-core Xeon's
    LLC: 2.4 GB of arrays).

Ratio columns: xbest = speed-up over the fastest of numpy/numexpr/torch; /Cbest = ggml_cy's
GB/s over the faster C loop's; xT1 = ggml_cy's own speed-up over its 1-thread time.
Targets at the highest thread count (issue 14): best>=1; fused /Cbest>=0.85; outputs beyond
the LLC: the add within 0.85 of the non-temporal C add.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from bench import _env, _harness, _libs, _report
from bench._harness import Call, Case, Setup, Target

LIBS = ["ggml_cy", "numpy", "numexpr", "torch", "C loop", "C loop NT"]
PEERS = ["numpy", "numexpr", "torch"]
FUSED_EXPR = "a*b + c*d - e"


def thread_counts(max_threads):
    """1, 2, 4, 8, 16, ... up to max_threads, plus max_threads itself."""
    out, t = [], 1
    while t < max_threads:
        out.append(t)
        t *= 2
    out.append(max_threads)
    return out


class _Arrays:
    """One cached set of inputs (the same arrays for every thread count of a case: a 1e8
    case would spend seconds drawing random numbers again)."""

    def __init__(self):
        self.key, self.value = None, None

    def get(self, key, make):
        if self.key != key:
            self.key, self.value = None, None     # free the old set first
            self.value = make()
            self.key = key
        return self.value


_CACHE = _Arrays()


def _set_threads(env, t):
    _libs.set_threads(t, env["gc"], env["ne"], env["torch"])


def add_setup(env, t, n, shape_b=None):
    _set_threads(env, t)

    def make():
        rng = np.random.default_rng(1)
        shape = (n,) if shape_b is None else n
        a = rng.random(shape, dtype=np.float32)
        b = rng.random(shape if shape_b is None else shape_b, dtype=np.float32)
        return a, b, np.empty(shape, np.float32), a + b
    a, b, out, ref = _CACHE.get(("add", n, shape_b), make)
    gc, ne, th, roof = env["gc"], env["ne"], env["torch"], env["roofline"]
    impls = {"ggml_cy": Call(gc.add, a, b, out=out).writes(out),
             "numpy": Call(np.add, a, b, out=out).writes(out)}
    if ne is not None:
        impls["numexpr"] = Call(ne.evaluate, "a + b", local_dict={"a": a, "b": b},
                                out=out).writes(out)
    if th is not None:
        impls["torch"] = Call(th.add, th.from_numpy(a), th.from_numpy(b),
                              out=th.from_numpy(out)).writes(out)
    if roof is not None and shape_b is None:
        impls["C loop"] = Call(roof.stream_add_f32, a, b, out, t, False).writes(out)
        impls["C loop NT"] = Call(roof.stream_add_f32, a, b, out, t, True).writes(out)
    nbytes = a.nbytes + b.nbytes + out.nbytes
    return Setup(impls, nbytes=nbytes, reference=ref, **_harness.turns_kw(t))


def fused_setup(env, t, n):
    _set_threads(env, t)

    def make():
        rng = np.random.default_rng(2)
        arrays = {k: rng.random(n, dtype=np.float32) * 0.5 + 0.75 for k in "abcde"}
        a, b, c, d, e = (arrays[k] for k in "abcde")
        ref = a * b
        ref += c * d
        ref -= e
        return arrays, np.empty(n, np.float32), ref
    arrays, out, ref = _CACHE.get(("fused", n), make)
    gc, ne, th, roof = env["gc"], env["ne"], env["torch"], env["roofline"]
    impls = {"ggml_cy": Call(gc.evaluate, FUSED_EXPR, out=out, **arrays).writes(out)}
    if n <= 10_000_000:      # numpy's temporaries at 1e8: seconds per call, no news
        impls["numpy"] = Call(eval, compile(FUSED_EXPR, "<expr>", "eval"), {}, arrays)
    if ne is not None:
        impls["numexpr"] = Call(ne.evaluate, FUSED_EXPR, local_dict=arrays,
                                out=out).writes(out)
    if th is not None:
        ta = {k: th.from_numpy(v) for k, v in arrays.items()}
        impls["torch"] = Call(_torch_fused, th, ta, th.from_numpy(out)).writes(out)
    if roof is not None:
        args = [arrays[k] for k in "abcde"] + [out, t]
        # unchecked: the C compiler may contract a*b + c*d into an FMA (other rounding)
        impls["C loop"] = Call(roof.fused_abcde_f32, *args, False).unchecked()
        impls["C loop NT"] = Call(roof.fused_abcde_f32, *args, True).unchecked()
    nbytes = sum(v.nbytes for v in arrays.values()) + out.nbytes
    s = Setup(impls, nbytes=nbytes, reference=ref, **_harness.turns_kw(t))
    s.notes.append("fused: torch = torch.sub(a*b + c*d, e, out=) (what a torch user writes: "
                   "temporaries); GB/s counts 5 inputs + 1 output once")
    return s


def _torch_fused(th, t, out):
    return th.sub(t["a"] * t["b"] + t["c"] * t["d"], t["e"], out=out)


def build_cases(env, opts, counts):
    n_add = 1000 if opts.smoke else 10_000_000
    side = 8 if opts.smoke else 4096
    fused_sizes = [1000] if opts.smoke else [10_000_000]
    if not opts.smoke and _env.usable_cores() >= 8:
        fused_sizes.append(100_000_000)
    top = counts[-1]
    llc = env["llc"]
    cases = []

    def targets(t, extra=()):
        return [Target("best>=1", "vs_best", 1.0), *extra] if t == top else []

    for t in counts:
        beyond = [Target("CNT>=0.85", "vs_c_nt", 0.85)] if llc and 4 * n_add > llc else []
        cases.append(Case(f"add n={n_add:.0e} t={t}".replace("e+0", "e"),
                          lambda t=t: add_setup(env, t, n_add), group="add",
                          params={"case": "add", "n": n_add, "threads": t},
                          targets=targets(t, beyond)))
    for t in counts:
        cases.append(Case(f"({side},{side})+({side},) t={t}",
                          lambda t=t: add_setup(env, t, (side, side), (side,)),
                          group="broadcast",
                          params={"case": "broadcast", "shape": [side, side], "threads": t},
                          targets=targets(t)))
    for n in fused_sizes:
        for t in counts:
            cases.append(Case(f"{FUSED_EXPR} n={n:.0e} t={t}".replace("e+0", "e"),
                              lambda t=t, n=n: fused_setup(env, t, n), group=f"fused {n:.0e}",
                              params={"case": "fused", "n": n, "threads": t},
                              targets=targets(t, [Target("Cbest>=0.85", "vs_c_best", 0.85)])))
    return cases


def _self_scaling(results):
    """xT1: ggml_cy's time at 1 thread over its time here, per case family."""
    base = {}
    for r in results:
        key = (r.case.group, r.case.params.get("n"))
        if r.case.params.get("threads") == 1 and r.time("ggml_cy"):
            base[key] = r.time("ggml_cy")

    def fn(r):
        t1, t = base.get((r.case.group, r.case.params.get("n"))), r.time("ggml_cy")
        return t1 / t if t1 and t else None
    return _harness.Ratio("vs_t1", "xT1", fn)


def run(opts, json_path, argv=None, out=None):
    out = out if out is not None else sys.stdout
    t0 = time.perf_counter()
    gc, load_note = _libs.load_ggml_cy()
    ne, torch = _libs.load_optional("numexpr"), _libs.load_optional("torch")
    roofline, roof_note = _libs.load_roofline(gc)
    counts = thread_counts(opts.threads)
    try:
        llc = int(gc.cpu._kernels.llc_info()[0])
    except Exception:
        llc = None
    env = {"gc": gc, "ne": ne, "torch": torch, "roofline": roofline, "llc": llc}
    meta = _env.environment(gc, opts.threads, "scaling", argv)
    meta["thread_counts"] = counts
    notes = [f"threads : {', '.join(map(str, counts))} (ggml_cy.set_num_threads, "
             "numexpr.set_num_threads, torch.set_num_threads and the C loops' OpenMP count "
             "set before each case; numpy is single-threaded)",
             "method  : median per call after warm-up; outputs preallocated"]
    if llc:
        notes.append(f"LLC     : {llc / 2**20:g} MiB (ggml_cy's measurement)")
    notes += [x for x in (load_note, roof_note) if x]
    print("\n".join(_env.format_header(meta, notes)), file=out, flush=True)
    if json_path is None:
        json_path = _report.default_json_path("scaling", opts)
    try:
        results = _harness.run_cases(build_cases(env, opts, counts), opts)
    finally:
        _CACHE.key, _CACHE.value = None, None
        _libs.set_threads(opts.threads, gc, ne, torch)
    ratios = [
        _harness.speedup_vs_best("ggml_cy", PEERS),
        _harness.speedup("ggml_cy", "torch", header="xtorch"),
        _harness.bandwidth_vs_best_lib("ggml_cy", ["C loop", "C loop NT"], "vs_c_best",
                                       "/Cbest"),
        _harness.bandwidth_vs_lib("ggml_cy", "C loop NT", "vs_c_nt", "/CNT"),
        _self_scaling(results),
    ]
    _harness.evaluate_ratios(results, ratios)
    meta["machine"]["load_average_end"] = _env.load_average()
    meta["runtime_s"] = round(time.perf_counter() - t0, 1)
    pre = ["ratios  : xbest = ggml_cy's speed-up over the fastest of numpy/numexpr/torch; "
           "xtorch over torch; /Cbest = ggml_cy GB/s over the faster C loop (plain or NT); "
           "/CNT over the non-temporal C loop; xT1 = ggml_cy's speed-up over its own 1-thread "
           "time",
           f"load    : {meta['machine']['load_average_start']} at start, "
           f"{meta['machine']['load_average_end']} at end"]
    doc = _report.finish(results, LIBS, ratios, meta, json_path, out, preamble=pre,
                         extra={"llc_bytes": llc, "thread_counts": counts})
    print(f"total {meta['runtime_s']} s", file=out, flush=True)
    return doc
