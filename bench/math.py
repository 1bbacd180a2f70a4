"""Issue 14 item 2's bench: the vectorized math functions (csrc/simd_math.h) against numpy,
numexpr and torch at one thread count (`--threads`; the issue's targets: >= numpy at 1
thread, >= torch at equal threads, 1e3 to 1e7 elements).

Every library writes into a preallocated float32 output. numpy has no sigmoid/silu: its
column is the composite a user writes (np.exp then the arithmetic, all with out=); numexpr
evaluates the same expression; torch calls torch.sigmoid / aten's silu with out=. Results
are checked against numpy's (or the float64 formula for sigmoid/silu) to 4 ulp before
timing. `xbest` is the speed-up of ggml_cy against the fastest other library of the case.
The JSON goes to bench/results/math-HOST-tN.json (N = the thread count).
"""
from __future__ import annotations

import sys
import time

import numpy as np

from bench import _env, _harness, _libs, _report
from bench._harness import Call, Case, Setup, Target

LIBS = ["ggml_cy", "numpy", "numexpr", "torch"]
PEERS = LIBS[1:]
FUNCS = ["exp", "log", "sin", "cos", "tanh", "sigmoid", "silu"]
SIZES = [1_000, 10_000, 100_000, 1_000_000, 10_000_000]
QUICK_SIZES = [1_000, 100_000, 10_000_000]
SMOKE_SIZES = [1_000]
NUMEXPR = {"sigmoid": "1 / (1 + exp(-a))", "silu": "a / (1 + exp(-a))"}


def fmt_n(n):
    exp = len(str(n)) - 1
    mant = n / 10**exp
    return f"{mant:g}e{exp}"


def _np_sigmoid(a, out):
    np.negative(a, out=out)
    np.exp(out, out=out)
    np.add(out, 1, out=out)
    return np.reciprocal(out, out=out)


def _np_silu(a, out):
    np.negative(a, out=out)
    np.exp(out, out=out)
    np.add(out, 1, out=out)
    return np.divide(a, out, out=out)


def _reference(name, a):
    ad = a.astype(np.float64)
    with np.errstate(all="ignore"):
        if name in ("sigmoid", "silu"):
            s = 1 / (1 + np.exp(-ad))
            return (ad * s if name == "silu" else s).astype(np.float32)
        return getattr(np, name)(ad).astype(np.float32)


def _ulp_compare(result, ref):
    r = np.asarray(result)
    if r.shape != ref.shape or r.dtype != ref.dtype:
        return f"shape/dtype {r.shape} {r.dtype}, expected {ref.shape} {ref.dtype}"
    ia = r.view(np.int32).astype(np.int64)
    ib = ref.view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7fffffff), ia)
    ib = np.where(ib < 0, -(ib & 0x7fffffff), ib)
    d = np.abs(ia - ib)
    d = np.where(np.isnan(r) & np.isnan(ref), 0, d)
    worst = int(d.max()) if d.size else 0
    return None if worst <= 4 else f"differs by {worst} ulp"


def math_case(env, name, n):
    def setup():
        rng = np.random.default_rng(n)
        a = (rng.standard_normal(n) * 3).astype(np.float32)
        if name == "log":
            a = np.abs(a) + np.float32(1e-3)
        out = np.empty_like(a)
        impls, skipped = {}, {}
        gc, ne, torch = env["gc"], env["ne"], env["torch"]
        impls["ggml_cy"] = Call(getattr(gc, name), a, out=out, **env["gc_kw"]).writes(out)
        if name == "sigmoid":
            impls["numpy"] = Call(_np_sigmoid, a, out).writes(out)
        elif name == "silu":
            impls["numpy"] = Call(_np_silu, a, out).writes(out)
        else:
            impls["numpy"] = Call(getattr(np, name), a, out=out).writes(out)
        if ne is not None:
            impls["numexpr"] = Call(ne.evaluate, NUMEXPR.get(name, f"{name}(a)"),
                                    local_dict={"a": a}, out=out).writes(out)
        if torch is not None:
            ta, to = torch.from_numpy(a), torch.from_numpy(out)
            if name == "silu":
                impls["torch"] = Call(torch.ops.aten.silu.out, ta, out=to).writes(out)
            else:
                impls["torch"] = Call(getattr(torch, name), ta, out=to).writes(out)
        return Setup(impls, nbytes=a.nbytes + out.nbytes, reference=_reference(name, a),
                     compare=_ulp_compare, skipped=skipped)
    targets = [Target("np>=1", "vs_numpy", 1.0), Target("torch>=1", "vs_torch", 1.0)]
    return Case(f"{name} f32 n={fmt_n(n)}", setup, group=f"{name} f32",
                params={"op": name, "dtype": "float32", "n": n}, targets=targets)


def best_peer_ratio():
    def fn(r):
        t = r.time("ggml_cy")
        peers = [r.time(p) for p in PEERS if r.time(p)]
        return min(peers) / t if t and peers else None
    return _harness.Ratio("vs_best", "xbest", fn)


def run(opts, json_path, argv=None, out=None):
    out = out if out is not None else sys.stdout
    t0 = time.perf_counter()
    gc, load_note = _libs.load_ggml_cy()
    ne, torch = _libs.load_optional("numexpr"), _libs.load_optional("torch")
    thread_notes = _libs.set_threads(opts.threads, gc, ne, torch)
    env = {"gc": gc, "ne": ne, "torch": torch,
           "gc_kw": _libs.ggml_threads_kwargs(gc, opts.threads)}
    meta = _env.environment(gc, opts.threads, "math", argv)
    meta["thread_setting"] = thread_notes
    notes = [f"          ({'; '.join(thread_notes)})",
             "method  : median per call over >= %d samples after warm-up; float32 input "
             "3*N(0,1) (log: |x| + 1e-3); outputs preallocated" % opts.repeat]
    if load_note:
        notes.append(load_note)
    print("\n".join(_env.format_header(meta, notes)), file=out, flush=True)
    if json_path is None and not opts.smoke:
        json_path = _report.default_json_path("math", opts).replace(
            ".json", f"-t{opts.threads}.json")
    sizes = SMOKE_SIZES if opts.smoke else QUICK_SIZES if opts.quick else SIZES
    cases = [math_case(env, f, n) for f in FUNCS for n in sizes]
    results = _harness.run_cases(cases, opts)
    ratios = [_harness.speedup("ggml_cy", "numpy", header="xnumpy"),
              _harness.speedup("ggml_cy", "torch", header="xtorch"),
              _harness.speedup("ggml_cy", "numexpr", header="xnumexpr"),
              best_peer_ratio()]
    _harness.evaluate_ratios(results, ratios)
    meta["machine"]["load_average_end"] = _env.load_average()
    meta["runtime_s"] = round(time.perf_counter() - t0, 1)
    pre = ["ratios  : xLIB = LIB's time / ggml_cy's (speed-up of ggml_cy); xbest = against "
           "the fastest of numpy, numexpr and torch for that case",
           f"load    : {meta['machine']['load_average_start']} at start, "
           f"{meta['machine']['load_average_end']} at end (shared machine: noise)"]
    doc = _report.finish(results, LIBS, ratios, meta, json_path, out, preamble=pre)
    print(f"total {meta['runtime_s']} s", file=out, flush=True)
    return doc
