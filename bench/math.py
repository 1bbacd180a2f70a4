"""Issue 14 item 2's bench: the vectorized math functions (csrc/simd_math*.h), float32 and
float64, against numpy, numexpr and torch at one thread count (`--threads`; the issue's
targets: >= numpy at 1 thread, >= torch at equal threads, 1e3 to 1e7 elements).

Every library writes into a preallocated output of the input's type. numpy has no
sigmoid/silu: its column is the composite a user writes (np.exp then the arithmetic, all
with out=); numpy has no erf/gelu*/softplus (no column). power is x ** y (x = |3 N(0,1)| +
1e-3, y = 3 N(0,1); ggml_cy still calls the C library's pow per element: the case shows the
gap). numexpr evaluates its own function or the expression a user writes (sigmoid, silu,
softplus, gelu_quick, power); torch calls its function (aten's gelu, softplus, silu, pow)
with out=. Results are checked against a float64 reference (float32) or numpy's float64
(float64) to 4 ulp before timing. `xbest` is the speed-up of ggml_cy against the fastest
other library of the case.
The JSON goes to bench/results/math-HOST-tN.json (N = the thread count).
"""
from __future__ import annotations

import math
import sys
import time

import numpy as np

from bench import _env, _harness, _libs, _report
from bench._harness import Call, Case, Setup, Target

LIBS = ["ggml_cy", "numpy", "numexpr", "torch"]
PEERS = LIBS[1:]
FUNCS = ["exp", "expm1", "log", "log1p", "log2", "sin", "cos", "tanh", "sigmoid", "silu",
         "erf", "gelu", "gelu_erf", "gelu_quick", "softplus", "power"]
DTYPES = ["float32", "float64"]
SIZES = [1_000, 10_000, 100_000, 1_000_000, 10_000_000]
QUICK_SIZES = [1_000, 100_000, 10_000_000]
SMOKE_SIZES = [1_000]
# numexpr: its own functions, or the expression a user writes
NUMEXPR = {"power": "a ** b", "sigmoid": "1 / (1 + exp(-a))", "silu": "a / (1 + exp(-a))",
           "softplus": "where(a > 0, a + log1p(exp(-a)), log1p(exp(a)))",
           "gelu_quick": "a / (1 + exp(-1.702 * a))"}
NUMEXPR_NONE = ("erf", "gelu", "gelu_erf")
# numpy: np.<name>, or a composite with out= (sigmoid, silu); none for erf and the gelus
NUMPY_NONE = ("erf", "gelu", "gelu_erf", "gelu_quick", "softplus")


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


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _reference(name, a, b=None):
    """float64 (float32 input) / numpy's float64 (float64 input) result; None where the
    only reference is a per-element Python loop and the array is large. b: power's
    exponents."""
    ad = a.astype(np.float64)
    with np.errstate(all="ignore"):
        if name in ("erf", "gelu_erf") and a.size > 200_000:
            return None
        if name == "power":
            r = np.power(ad, b.astype(np.float64))
        elif name in ("sigmoid", "silu", "gelu", "gelu_quick"):
            v = {"gelu": 2 * 0.7978845608028654 * ad * (1 + 0.044715 * ad * ad),
                 "gelu_quick": 1.702 * ad}.get(name, ad)
            e = np.exp(-np.abs(v))
            s = np.where(v >= 0, 1 / (1 + e), e / (1 + e))
            r = s if name == "sigmoid" else ad * s
        elif name == "erf":
            r = _erf(ad)
        elif name == "gelu_erf":
            r = 0.5 * ad * _erfc(-ad / math.sqrt(2.0))
        elif name == "softplus":
            r = np.maximum(ad, 0) + np.log1p(np.exp(-np.abs(ad)))
        else:
            r = getattr(np, name)(ad)
    return r.astype(a.dtype)


def _ulp_compare(result, ref):
    r = np.asarray(result)
    if r.shape != ref.shape or r.dtype != ref.dtype:
        return f"shape/dtype {r.shape} {r.dtype}, expected {ref.shape} {ref.dtype}"
    it = np.int32 if r.dtype == np.float32 else np.int64
    ia = r.view(it).astype(np.int64)
    ib = ref.view(it).astype(np.int64)
    m = np.int64(0x7fffffff if it is np.int32 else 0x7fffffffffffffff)
    ia = np.where(ia < 0, -(ia & m), ia)
    ib = np.where(ib < 0, -(ib & m), ib)
    d = np.abs(ia - ib)
    d = np.where(np.isnan(r) & np.isnan(ref), 0, d)
    worst = int(d.max()) if d.size else 0
    return None if worst <= 4 else f"differs by {worst} ulp"


def _torch_fn(torch, name):
    aten = torch.ops.aten
    return {"silu": aten.silu.out,
            "gelu": lambda x, out: aten.gelu.out(x, approximate="tanh", out=out),
            "gelu_erf": lambda x, out: aten.gelu.out(x, out=out),
            "softplus": lambda x, out: aten.softplus.out(x, 1, 20, out=out),
            "gelu_quick": None, "power": torch.pow}.get(name, getattr(torch, name, None))


def math_case(env, name, n, dtype="float32"):
    def setup():
        rng = np.random.default_rng(n)
        a = (rng.standard_normal(n) * 3).astype(dtype)
        if name.startswith("log") or name == "power":
            a = np.abs(a) + a.dtype.type(1e-3)
        # power: x ** y with y ~ 3 N(0, 1) (results stay finite in float32)
        args = (a, (rng.standard_normal(n) * 3).astype(dtype)) if name == "power" else (a,)
        local = dict(zip("ab", args))
        out = np.empty_like(a)
        impls, skipped = {}, {}
        gc, ne, torch = env["gc"], env["ne"], env["torch"]
        impls["ggml_cy"] = Call(getattr(gc, name), *args, out=out, **env["gc_kw"]).writes(out)
        if name == "sigmoid":
            impls["numpy"] = Call(_np_sigmoid, a, out).writes(out)
        elif name == "silu":
            impls["numpy"] = Call(_np_silu, a, out).writes(out)
        elif name in NUMPY_NONE:
            skipped["numpy"] = "no such function"
        else:
            impls["numpy"] = Call(getattr(np, name), *args, out=out).writes(out)
        if ne is not None and name not in NUMEXPR_NONE:
            expr = NUMEXPR.get(name, f"{name}(a)")
            try:
                ne.evaluate(expr, local_dict={k: v[:4] for k, v in local.items()})
                impls["numexpr"] = Call(ne.evaluate, expr, local_dict=local,
                                        out=out).writes(out)
            except Exception as e:                       # noqa: BLE001 (a missing function)
                skipped["numexpr"] = f"not available: {type(e).__name__}"
        if torch is not None:
            fn = _torch_fn(torch, name)
            if fn is None:
                skipped["torch"] = "no such function"
            else:
                targs = [torch.from_numpy(v) for v in args]
                impls["torch"] = Call(fn, *targs, out=torch.from_numpy(out)).writes(out)
        ref = _reference(name, *args)
        return Setup(impls, nbytes=sum(v.nbytes for v in args) + out.nbytes, reference=ref,
                     compare=_ulp_compare if ref is not None else None, skipped=skipped,
                     **_harness.turns_kw(env.get("threads", 1)))
    targets = [Target("torch>=1", "vs_torch", 1.0)]
    if name not in NUMPY_NONE:
        targets.insert(0, Target("np>=1", "vs_numpy", 1.0))
    short = "f32" if dtype == "float32" else "f64"
    return Case(f"{name} {short} n={fmt_n(n)}", setup, group=f"{name} {short}",
                params={"op": name, "dtype": dtype, "n": n}, targets=targets)


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
    env = {"gc": gc, "ne": ne, "torch": torch, "threads": opts.threads,
           "gc_kw": _libs.ggml_threads_kwargs(gc, opts.threads)}
    meta = _env.environment(gc, opts.threads, "math", argv)
    meta["thread_setting"] = thread_notes
    notes = [f"          ({'; '.join(thread_notes)})",
             "method  : median per call over >= %d samples after warm-up; float32/float64 "
             "input 3*N(0,1) (log*: |x| + 1e-3; power: x ** y, that x, y = 3*N(0,1)); "
             "outputs preallocated%s" % (
                 opts.repeat, "; each library's samples in a block after a 50 ms pause and "
                 "2 untimed calls" if opts.threads > 1 else "")]
    if load_note:
        notes.append(load_note)
    print("\n".join(_env.format_header(meta, notes)), file=out, flush=True)
    if json_path is None and not opts.smoke:
        json_path = _report.default_json_path("math", opts).replace(
            ".json", f"-t{opts.threads}.json")
    sizes = SMOKE_SIZES if opts.smoke else QUICK_SIZES if opts.quick else SIZES
    funcs = FUNCS if not getattr(opts, "only", None) else opts.only
    cases = [math_case(env, f, n, dt) for dt in DTYPES for f in funcs for n in sizes]
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
