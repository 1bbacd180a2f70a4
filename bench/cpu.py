"""Issue 3's CPU benchmark: ggml_cy's eager functions against numpy, numexpr, torch and a
STREAM-style roofline, all in one process with the same thread count. Cases whose output
exceeds the last-level cache also time the non-temporal STREAM add in their own turns (the
STREAM NT column), which their /roofNT ratio is taken against.

Every library writes into a preallocated output (`out=`; np.copyto / Tensor.copy_ for copies)
so that page faults of fresh outputs do not dominate; one allocating add at 1e7 shows what
they cost. Every library's result is checked against numpy's before it is timed.
"""
from __future__ import annotations

import dataclasses
import sys
import time

import numpy as np

from bench import _env, _harness, _libs, _report
from bench._harness import Call, Case, Setup, Target

LIBS = ["ggml_cy", "numpy", "numexpr", "torch", "STREAM NT"]

SIZES = [1, 16, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 32_000_000]
QUICK_SIZES = [16, 10_000, 1_000_000, 10_000_000]
SMOKE_SIZES = [1, 16, 1_000]
ROOFLINE_ELEMENTS = 64 * 2**20 // 4   # three 64 MiB float32 arrays, as STREAM sizes them


@dataclasses.dataclass
class BinaryOp:
    name: str                  # numpy's (and ggml_cy's) function name
    numexpr: str | None        # the same op as a numexpr expression of a and b
    torch: str                 # the torch function name
    zeros: bool = False        # inputs with many zeros (logical ops)


OPS = [
    BinaryOp("add", "a + b", "add"),
    BinaryOp("multiply", "a * b", "mul"),
    BinaryOp("maximum", "maximum(a, b)", "maximum"),
    BinaryOp("greater", "a > b", "gt"),
    BinaryOp("logical_and", "(a != 0) & (b != 0)", "logical_and", zeros=True),
]
ADD = OPS[0]

DTYPE_SHORT = {np.float32: "f32", np.float64: "f64", np.float16: "f16"}


@dataclasses.dataclass
class Env:
    """The libraries of this run and how ggml_cy takes its thread count."""
    gc: object
    ne: object
    torch: object
    threads: int
    gc_kw: dict
    llc: int | None = None


def fmt_n(n):
    """1, 16, 1e3, 3.2e7: the sizes as the issue writes them."""
    if n < 1000:
        return str(n)
    exp = len(str(n)) - 1
    mant = n / 10**exp
    return f"{mant:g}e{exp}"


def random_array(rng, shape, dtype, zeros=False):
    x = rng.random(shape, dtype=np.float32) * 2 - 1
    if zeros:
        x[rng.random(shape) < 0.25] = 0
    return x.astype(dtype, copy=False)


def _ggml_func(env, name, skipped):
    f = getattr(env.gc, name, None) if env.gc is not None else None
    if f is None and env.gc is not None:
        skipped["ggml_cy"] = f"ggml_cy.{name} is not available yet"
    return f


# ----------------------------------------------------------------------------- setups
def binary_setup(env, op, a, b, allocate=False):
    """One binary op on any numpy operands (broadcast, transposed views...)."""
    ufunc = getattr(np, op.name)
    ref = ufunc(a, b)
    out = np.empty_like(ref)
    impls, skipped = {}, {}
    f = _ggml_func(env, op.name, skipped)
    kw = {} if allocate else {"out": out}
    if f is not None:
        impls["ggml_cy"] = Call(f, a, b, **kw, **env.gc_kw)
    impls["numpy"] = Call(ufunc, a, b, **kw)
    if env.ne is not None:
        if op.numexpr is None or ref.dtype == np.float16 or a.dtype == np.float16:
            skipped["numexpr"] = "numexpr has no float16"
        else:
            impls["numexpr"] = Call(env.ne.evaluate, op.numexpr,
                                    local_dict={"a": a, "b": b}, **kw)
    if env.torch is not None:
        ta, tb = env.torch.from_numpy(a), env.torch.from_numpy(b)
        tkw = {} if allocate else {"out": env.torch.from_numpy(out)}
        impls["torch"] = Call(getattr(env.torch, op.torch), ta, tb, **tkw)
    nbytes = a.nbytes + b.nbytes + out.nbytes
    return Setup(impls, nbytes=nbytes, reference=ref, skipped=skipped, **_harness.turns_kw(env.threads))


def copy_setup(env, src, dtype=None, allocate=False):
    """A layout copy or dtype conversion of `src` into a fresh contiguous array."""
    dtype = np.dtype(dtype or src.dtype)
    ref = np.ascontiguousarray(src).astype(dtype, copy=False)
    out = np.empty(ref.shape, dtype)
    impls, skipped = {}, {}
    convert = dtype != src.dtype
    if allocate:
        name = "astype" if convert else "ascontiguousarray"
        f = _ggml_func(env, name, skipped)
        if f is not None:
            impls["ggml_cy"] = Call(f, src, dtype) if convert else Call(f, src)
        impls["numpy"] = (Call(np.ndarray.astype, src, dtype) if convert
                          else Call(np.ascontiguousarray, src))
    else:
        f = _ggml_func(env, "copyto", skipped)
        if f is not None:
            impls["ggml_cy"] = Call(f, out, src).writes(out)
        impls["numpy"] = Call(np.copyto, out, src).writes(out)
    if env.torch is not None:
        ts = env.torch.from_numpy(src)
        tdtype = getattr(env.torch, dtype.name)
        if allocate:
            impls["torch"] = (Call(ts.to, tdtype) if convert
                              else Call(env.torch.Tensor.contiguous, ts))
        else:
            impls["torch"] = Call(env.torch.from_numpy(out).copy_, ts).writes(out)
    return Setup(impls, nbytes=src.nbytes + out.nbytes, reference=ref, skipped=skipped,
                 **_harness.turns_kw(env.threads))


# ----------------------------------------------------------------------------- cases
PEERS = ["numpy", "numexpr", "torch"]
# issue 14: from 1e3 elements on, no peer at the same thread count may be faster
BEST = Target("best>=1", "vs_best", 1.0)
# issue 14: outputs beyond the last-level cache reach 0.85 of the non-temporal STREAM add
NT_TARGET = Target("roofNT>=0.85", "vs_roofline_nt", 0.85)


def llc_bytes(gc):
    """The last-level cache ggml_cy measured at import (None when it cannot say)."""
    try:
        return int(gc.cpu._kernels.llc_info()[0])
    except Exception:
        return None


def _beyond_llc(env, out_bytes):
    return [NT_TARGET] if env.llc and out_bytes > env.llc else []


def _size_targets(op, dtype, n, env=None):
    targets = []
    if n == 16:
        targets.append(Target("16-el time<=2x np", "vs_numpy", 0.5))
    if n >= 1000:
        targets.append(Target("np>=1", "vs_numpy", 1.0))
        targets.append(BEST)
        if env is not None:
            out_item = 1 if op.name in ("greater", "logical_and") else np.dtype(dtype).itemsize
            targets += _beyond_llc(env, n * out_item)
    if op is ADD and dtype == np.float32 and n >= 10_000_000:
        targets.append(Target("roof>=0.9", "vs_roofline", 0.9))
    if op is ADD and dtype == np.float16 and n >= 1_000_000:
        targets.append(Target("np>=20", "vs_numpy", 20.0))
    return targets


def sweep_case(env, op, dtype, n):
    def setup():
        rng = np.random.default_rng(n)
        a = random_array(rng, n, dtype, op.zeros)
        b = random_array(rng, n, dtype, op.zeros)
        return binary_setup(env, op, a, b)
    dt = DTYPE_SHORT[dtype]
    return Case(f"{op.name} {dt} n={fmt_n(n)}", setup, group=f"{op.name} {dt}",
                params={"op": op.name, "dtype": np.dtype(dtype).name, "n": n},
                targets=_size_targets(op, dtype, n, env))


def alloc_add_case(env, n):
    def setup():
        rng = np.random.default_rng(n)
        a, b = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
        s = binary_setup(env, ADD, a, b, allocate=True)
        s.notes.append("allocating: every library returns a fresh array (page faults included)")
        return s
    return Case(f"add f32 n={fmt_n(n)} allocating", setup, group="alloc",
                params={"op": "add", "dtype": "float32", "n": n, "out": "allocated"},
                targets=[Target("np>=1", "vs_numpy", 1.0), BEST])


def shape_case(env, label, a_shape, b_shape, smoke, transpose_a=False, targets=()):
    """A broadcast (or transposed-operand) float32 add; shapes shrink in smoke runs."""
    if smoke:
        a_shape = tuple(min(d, 6) for d in a_shape)
        b_shape = tuple(1 if d == 1 else min(d, 6) for d in b_shape)

    def setup():
        rng = np.random.default_rng(len(a_shape))
        a = random_array(rng, a_shape, np.float32)
        b = random_array(rng, b_shape, np.float32)
        return binary_setup(env, ADD, a.T if transpose_a else a, b)
    out_bytes = 4 * int(np.prod(np.broadcast_shapes(a_shape, b_shape)))
    return Case(label, setup, group="broadcast",
                params={"op": "add", "dtype": "float32", "a": list(a_shape), "b": list(b_shape),
                        "a_transposed": transpose_a},
                targets=[Target("np>=1", "vs_numpy", 1.0), BEST, *targets,
                         *_beyond_llc(env, out_bytes)])


def permute_case(env, smoke, allocate, full=(16, 128, 64, 64)):
    """The (0,2,1,3) permute copy; full=(4,128,64,64) (8 MiB each way) stays in a
    server's or this VM's L3, where the rows run with plain stores (kern_copy_rows)."""
    shape = (2, 3, 4, 5) if smoke else full

    def setup():
        x = random_array(np.random.default_rng(7), shape, np.float32)
        s = copy_setup(env, x.transpose(0, 2, 1, 3), allocate=allocate)
        s.notes.append("permute copy to axes (0,2,1,3): copyto(out, x.transpose(0,2,1,3)) and "
                       "ascontiguousarray(x.transpose(0,2,1,3)); torch: out.copy_(x.permute) "
                       "and x.permute(...).contiguous()")
        return s
    how = "ascontiguousarray" if allocate else "copyto"
    return Case(f"permute ({','.join(map(str, full))}) {how[:8]}", setup, group="copy",
                params={"op": how, "shape": list(shape), "axes": [0, 2, 1, 3]},
                targets=[Target("np>=1", "vs_numpy", 1.0), BEST])


def convert_case(env, n, allocate):
    def setup():
        x = random_array(np.random.default_rng(n), n, np.float32) * 1000
        return copy_setup(env, x, np.float16, allocate=allocate)
    how = "astype" if allocate else "copyto"
    return Case(f"f32->f16 n={fmt_n(n)} {how}", setup, group="copy",
                params={"op": how, "from": "float32", "to": "float16", "n": n},
                targets=[Target("np>=1", "vs_numpy", 1.0), Target("np>=8", "vs_numpy", 8.0),
                         BEST, *_beyond_llc(env, 2 * n)])


def build_cases(env, opts):
    sizes = SMOKE_SIZES if opts.smoke else QUICK_SIZES if opts.quick else SIZES
    big = 1000 if opts.smoke else 10_000_000
    cases = [sweep_case(env, op, np.float32, n) for op in OPS for n in sizes]
    cases += [sweep_case(env, ADD, dt, n) for dt in (np.float64, np.float16) for n in sizes]
    cases.append(alloc_add_case(env, big))
    bcast = [Target("roof>=0.85", "vs_roofline", 0.85)]
    cases += [
        shape_case(env, "(4096,4096)+(4096,)", (4096, 4096), (4096,), opts.smoke, targets=bcast),
        shape_case(env, "(4096,4096)+(4096,1)", (4096, 4096), (4096, 1), opts.smoke,
                   targets=bcast),
        shape_case(env, "(32,64,56,56)+(1,64,1,1)", (32, 64, 56, 56), (1, 64, 1, 1),
                   opts.smoke, targets=bcast),
        shape_case(env, "(8,512,4096)+(512,4096)", (8, 512, 4096), (512, 4096), opts.smoke,
                   targets=bcast),
        # short rows (issue 14): one row-function call per 16-value row cost more than the
        # row's data before the packed runs (run_rows_srun)
        shape_case(env, "(1048576,16)+(16,)", (1048576, 16), (16,), opts.smoke, targets=bcast),
        shape_case(env, "(1048576,16)+(1048576,1)", (1048576, 16), (1048576, 1), opts.smoke,
                   targets=bcast),
        shape_case(env, "a.T+b (4096,4096)", (4096, 4096), (4096, 4096), opts.smoke,
                   transpose_a=True, targets=[Target("np>=10", "vs_numpy", 10.0)]),
        permute_case(env, opts.smoke, allocate=False),
        permute_case(env, opts.smoke, allocate=True),
        permute_case(env, opts.smoke, allocate=False, full=(4, 128, 64, 64)),
        convert_case(env, big, allocate=False),
        convert_case(env, big, allocate=True),
    ]
    return cases


# ----------------------------------------------------------------------------- roofline
# The STREAM add with non-temporal stores, timed inside each case that has NT_TARGET, in the
# same turns as the libraries (Setup.rounds): the 2-core VM's bandwidth moves ~2x within a
# run (this session's quick run: 46 GB/s at its start, 82 at its end), so a figure from the
# start or end of the run, set against a case timed minutes apart, said 0.57-0.72 where the
# same kernels measured 0.89-1.00 against the loop timed in turns with them.
IN_CASE_ROOF = "STREAM NT"


def with_case_roofline(case, roofline, threads):
    """`case` with the non-temporal STREAM add over three float32 arrays of the case's own
    byte count (so its GB/s is comparable) added as one more column of the case."""
    make = case.setup

    def setup():
        s = make()
        n = max(16, s.nbytes // 12)
        a, b = np.ones(n, np.float32), np.full(n, 2.0, np.float32)
        c = np.empty_like(a)
        s.impls[IN_CASE_ROOF] = Call(roofline.stream_add_f32, a, b, c, threads,
                                     True).unchecked()
        return s
    return dataclasses.replace(case, setup=setup)


def roofline_nt_fraction(lib, run_gbps):
    """/roofNT: `lib`'s GB/s over the in-case STREAM NT add's where the case timed one, else
    over the run's (best of start and end)."""
    def fn(r):
        g, roof = r.gbps(lib), r.gbps(IN_CASE_ROOF) or run_gbps
        return g / roof if g and roof else None
    return _harness.Ratio("vs_roofline_nt", "/roofNT", fn)


def measure_roofline(roofline, opts):
    """STREAM add, plain and non-temporal stores: {variant: {"gbps", "median_s", ...}}."""
    n = 1 << 14 if opts.smoke else ROOFLINE_ELEMENTS
    threads = opts.threads

    def setup():
        rng = np.random.default_rng(0)
        a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        c = np.empty_like(a)
        impls = {"plain": Call(roofline.stream_add_f32, a, b, c, threads, False),
                 "nontemporal": Call(roofline.stream_add_f32, a, b, c, threads, True)}
        return Setup(impls, nbytes=3 * a.nbytes, reference=a + b)
    roof_opts = dataclasses.replace(opts, repeat=max(opts.repeat, 3 if opts.quick else 11))
    res = _harness.measure(Case("roofline", setup), roof_opts)
    out = {}
    for variant in ("plain", "nontemporal"):
        t = res.timings.get(variant)
        if t is not None:
            out[variant] = {"gbps": res.gbps(variant), "median_s": t.median_s,
                            "min_s": t.min_s, "spread": t.spread}
    out["errors"] = res.errors
    out["mismatches"] = res.mismatches
    return out


def _best_gbps(runs, variant):
    vals = [r[variant]["gbps"] for r in runs if r and variant in r]
    return max(vals) if vals else None


# ----------------------------------------------------------------------------- run
def run(opts, json_path, argv=None, out=None):
    out = out if out is not None else sys.stdout
    t0 = time.perf_counter()
    gc, load_note = _libs.load_ggml_cy()
    np_ne, torch = _libs.load_optional("numexpr"), _libs.load_optional("torch")
    thread_notes = _libs.set_threads(opts.threads, gc, np_ne, torch)
    roofline, roof_note = _libs.load_roofline(gc)
    env = Env(gc, np_ne, torch, opts.threads, _libs.ggml_threads_kwargs(gc, opts.threads),
              llc_bytes(gc))
    meta = _env.environment(gc, opts.threads, "cpu", argv)
    meta["thread_setting"] = thread_notes
    notes = [f"          ({'; '.join(thread_notes)})",
             "method  : median per call over >= %d samples after warm-up (calls batched to "
             ">= %.0f µs per sample); outputs preallocated (out=, np.copyto, Tensor.copy_) "
             "unless the case says 'allocating'/'astype'/'ascontiguousarray'; GB/s = bytes "
             "read + written / median" % (opts.repeat, opts.min_sample_s * 1e6)]
    if roofline is not None:
        nt = "AVX _mm256_stream_ps" if roofline.HAVE_NONTEMPORAL else "no AVX: plain loop"
        notes.append(f"roofline: STREAM add c=a+b over three 64 MiB float32 arrays, "
                     f"{opts.threads} threads, plain stores and non-temporal stores ({nt}); "
                     "measured at start and end, the better of the two used for ratios")
    for note in (load_note, roof_note):
        if note:
            notes.append(note)
    print("\n".join(_env.format_header(meta, notes)), file=out, flush=True)
    if json_path is None:
        json_path = _report.default_json_path("cpu", opts)

    roof_runs = []
    if roofline is not None:
        roof_runs.append(measure_roofline(roofline, opts))
        _print_roofline("roofline (start)", roof_runs[-1], opts)
    cases = build_cases(env, opts)
    if roofline is not None and roofline.HAVE_NONTEMPORAL:
        cases = [with_case_roofline(c, roofline, opts.threads) if NT_TARGET in c.targets
                 else c for c in cases]
    results = _harness.run_cases(cases, opts)
    if roofline is not None:
        roof_runs.append(measure_roofline(roofline, opts))
        _print_roofline("roofline (end)", roof_runs[-1], opts)
    plain, nt = _best_gbps(roof_runs, "plain"), _best_gbps(roof_runs, "nontemporal")
    ratios = [
        _harness.speedup("ggml_cy", "numpy", header="xnumpy"),
        _harness.speedup("ggml_cy", "torch", header="xtorch"),
        _harness.speedup_vs_best("ggml_cy", PEERS),
        _harness.bandwidth_fraction("ggml_cy", plain, "vs_roofline", "/roof"),
        roofline_nt_fraction("ggml_cy", nt),
    ]
    _harness.evaluate_ratios(results, ratios)
    meta["machine"]["load_average_end"] = _env.load_average()
    meta["runtime_s"] = round(time.perf_counter() - t0, 1)
    pre = [f"roofline: plain {_report.fmt_rate(plain)} GB/s, non-temporal "
           f"{_report.fmt_rate(nt)} GB/s (best of start/end; {opts.threads} threads)",
           "ratios  : xnumpy, xtorch = speed-up of ggml_cy (their time / ggml_cy's); xbest = "
           "over the fastest of numpy/numexpr/torch in that case; "
           "/roof, /roofNT = ggml_cy GB/s / roofline GB/s (/roofNT: the STREAM NT column's, "
           "timed in the case, where it has one); '!' = result differs from numpy; "
           "'~' = noisy (quartile spread > 30% of the median)",
           f"load    : {meta['machine']['load_average_start']} at start, "
           f"{meta['machine']['load_average_end']} at end (shared machine: noise)"]
    if env.llc:
        pre.append(f"LLC     : {env.llc / 2**20:g} MiB (ggml_cy's measurement; roofNT>=0.85 "
                   "applies to outputs beyond it)")
    extra = {"roofline": {"runs": roof_runs, "plain_gbps": plain, "nontemporal_gbps": nt,
                          "elements": ROOFLINE_ELEMENTS},
             "llc_bytes": env.llc}
    doc = _report.finish(results, LIBS, ratios, meta, json_path, out, extra=extra,
                         preamble=pre)
    print(f"total {meta['runtime_s']} s", file=out, flush=True)
    return doc


def _print_roofline(label, r, opts):
    stream = opts.progress_stream()
    if stream is None:
        return
    parts = [f"{v} {_report.fmt_rate(r[v]['gbps'])} GB/s" for v in ("plain", "nontemporal")
             if v in r]
    print(f"{label}: " + ", ".join(parts) + (f" errors {r['errors']}" if r["errors"] else ""),
          file=stream, flush=True)
