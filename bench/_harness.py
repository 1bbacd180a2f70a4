"""Timing and the case model shared by every suite (cpu, graph, gpu).

A suite is a list of `Case`s. A case's `setup()` builds its arrays (lazily, so only one
case's memory is alive at a time) and returns a `Setup`: one `Call` per library, the bytes one
call reads + writes, and optionally a reference result to check every library against.

Timing (`measure`), per library:
  1. warm-up calls (page faults, caches, thread pools, JIT-ed expression caches), and a check
     of the first result against the reference;
  2. calibration: calls are batched `inner` at a time until one sample lasts at least
     `min_sample_s`, so the timer's own cost (~50 ns) is amortized at 1 and 16 elements;
  3. samples taken round-robin over the libraries, the first one rotating each round (a
     burst of noise from another process, or OpenMP threads of the previous library still
     spinning, then hit every library rather than one), at least `repeat` samples each, more
     for fast cases up to `budget_s` of samples per library;
  4. the median per call is reported (and min, quartile spread).
The garbage collector is off while sampling (as in timeit).
"""
from __future__ import annotations

import dataclasses
import gc
import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

perf_counter_ns = time.perf_counter_ns


# ----------------------------------------------------------------------------- options
@dataclass
class Options:
    """How hard to measure. `quick` and `smoke` only shrink the work, never change what it is."""
    threads: int = 2
    repeat: int = 7              # minimum samples per library (median of at least these)
    budget_s: float = 0.25       # sampling time per library per case (fast cases take more samples)
    min_sample_s: float = 2e-4   # a sample batches calls until it lasts this long
    max_samples: int = 101
    warmup: int = 1               # the calibration call warms up once more
    quick: bool = False          # fewer sizes and samples: a first look in < 30 s
    smoke: bool = False          # tiny arrays and one sample: exercises the code (tests, CI)
    progress: object = "stderr"  # where progress lines go: a stream, "stderr" (sys.stderr
    #                              when printing, so redirection works), or None (silent)

    def progress_stream(self):
        return sys.stderr if self.progress == "stderr" else self.progress

    @classmethod
    def make(cls, threads, repeat=None, quick=False, smoke=False, progress="stderr"):
        if smoke:
            return cls(threads=threads, repeat=repeat or 1, budget_s=0.0, min_sample_s=0.0,
                       max_samples=1, warmup=1, quick=True, smoke=True, progress=progress)
        if quick:
            return cls(threads=threads, repeat=repeat or 3, budget_s=0.02, min_sample_s=1e-4,
                       max_samples=21, warmup=1, quick=True, progress=progress)
        return cls(threads=threads, repeat=repeat or 7, progress=progress)


# ----------------------------------------------------------------------------- the model
class Call:
    """A function with its arguments bound; timed as `func(*args, **kwargs)`, no lambda layer
    (a lambda would add ~50 ns per call, which matters at 16 elements)."""
    __slots__ = ("func", "args", "kwargs", "check", "output")

    def __init__(self, func, *args, **kwargs):
        self.func, self.args, self.kwargs = func, args, kwargs
        self.check = True   # compare the result with Setup.reference
        self.output = None  # the array to check instead of the return value

    def unchecked(self):
        """This call's result is not comparable (a roofline loop, a different algorithm)."""
        self.check = False
        return self

    def writes(self, array):
        """Check `array` after the call (for calls returning None, like np.copyto)."""
        self.output = array
        return self

    def __call__(self):
        return self.func(*self.args, **self.kwargs)


@dataclass
class Setup:
    """What one case measures: the calls, and what one call moves."""
    impls: dict                        # library name -> Call (a library missing: leave it out)
    nbytes: int = 0                    # bytes read + written by one call (for GB/s)
    flops: int = 0                     # floating-point operations of one call (for GFLOP/s)
    per_op: int = 1                    # report time per op: median / per_op (replayed graphs)
    reference: Optional[np.ndarray] = None  # numpy's answer; every checked result must match
    compare: Optional[Callable] = None      # compare(result, reference) -> None or a message
    sync: Optional[Callable] = None         # called before the timer stops (device sync)
    notes: list = field(default_factory=list)
    skipped: dict = field(default_factory=dict)  # library -> why it is not measured
    # pause before a library's sample when another library ran just before: thread pools
    # that busy-wait after a call (OpenBLAS spins ~0.1 s) would otherwise take a core from
    # whichever library runs next
    settle_s: float = 0.0
    # untimed calls of the same library right before each of its samples when several
    # libraries take turns: they outlast the other library's spinning threads and wake this
    # library's own (a pause, settle_s, instead leaves every thread asleep and the first
    # call pays for waking them: measured 3-4x on a model's decode step)
    warm_each: int = 0
    # with blocks: keep making those untimed calls until this long has passed (at least
    # warm_each calls). After a pause every library's calls come back to speed over several
    # milliseconds, not two calls: on the 16-core host, after 50 ms, calls 1..8 of
    # f32 -> f16 1e7 at 2 threads took ggml_cy 3323 3086 2195 1589 1438 1418 .. us and torch
    # 2833 2604 1712 1365 1308 1307 .. us, and the fused a*b + c*d - e 1e7 at 16 threads
    # 3070 2939 2294 1559 1344 .. us against the hand-fused C loop's 2572 2518 1804 1268 1199
    # .. us, even with the caller spinning through the pause (tools/device/ramp_probe.py,
    # bench/results/rampprobe-xeon-*.json, ramp16-xeon-*.json). Samples taken from the third
    # call measured that ramp, the same for every library only in its shape.
    warm_s: float = 0.0
    # take every sample of one library before the next library's (after settle_s and
    # warm_each calls once per library) instead of taking turns sample by sample: for
    # multi-threaded calls whose speed depends on warm cores and threads (a model's decode
    # step: a pause before every sample cost ggml_cy 20-40% on the 16-core host)
    blocks: bool = False
    # with blocks: split each library's samples into this many rounds, the order rotating
    # from round to round, so that a burst of another tenant's load on a shared machine (the
    # 2-core VM's bandwidth swings ~2x within seconds) hits several libraries' samples
    # instead of one library's whole block; the median is over all of a library's samples
    rounds: int = 1


def turns_kw(threads):
    """Setup keywords for a case run at `threads`: with more than one thread, each library's
    samples in a block after a 50 ms pause and 15 ms of untimed calls (at least two; see
    Setup.warm_s for the ramp that follows a pause). Taking turns sample by
    sample, the other libraries' spinning pool threads (torch's and numexpr's OpenMP,
    OpenBLAS) held the cores through ggml_cy's samples and its workers woke late: 2-thread
    sigmoid float64 1e5 on the 2-core VM 146 us against ~50 alone; 16-thread add f32 1e6 on
    the 16-core host 275 us against 50 alone (tools/diag_threads.py, same round)."""
    if threads > 1:
        return {"blocks": True, "settle_s": 0.05, "warm_each": 2, "warm_s": 0.015, "rounds": 3}
    return {}


def _sample_blocks(setup, plan, samples, res, sync):
    """Setup.blocks: each library's samples back to back, libraries one after another, in
    Setup.rounds rounds (each library's share of its samples per round; the order rotates)."""
    libs = list(plan)
    rounds = max(1, min(setup.rounds, min((plan[lib][1] for lib in libs), default=1)))
    for r in range(rounds):
        k = r % len(libs) if libs else 0
        for lib in libs[k:] + libs[:k]:
            if lib in res.errors:
                continue
            n = plan[lib][1] * (r + 1) // rounds - plan[lib][1] * r // rounds
            if setup.settle_s > 0 and len(plan) > 1:
                time.sleep(setup.settle_s)
            try:
                t_warm = time.perf_counter() + setup.warm_s
                k = 0
                while k < max(setup.warm_each, 1) or (time.perf_counter() < t_warm and k < 10000):
                    setup.impls[lib]()
                    k += 1
                if sync is not None:
                    sync()
                inner = plan[lib][0]
                for _ in range(n):
                    samples[lib].append(_sample_ns(setup.impls[lib], inner, sync) * 1e-9 / inner)
            except Exception as exc:
                res.errors[lib] = f"{type(exc).__name__}: {exc}"
                plan[lib][1] = 0


@dataclass
class Target:
    """A goal from the issues: ratio `key` of the case's result must be >= `threshold`."""
    label: str          # short, shown in the table, e.g. "roof>=0.9"
    key: str            # a ratio key, e.g. "vs_roofline", "vs_numpy"
    threshold: float


@dataclass
class Case:
    name: str                           # the table's row label
    setup: Callable[[], Setup]          # builds arrays and calls; run right before timing
    group: str = ""
    params: dict = field(default_factory=dict)  # recorded in JSON (op, dtype, shape, n ...)
    targets: list = field(default_factory=list)


@dataclass
class Timing:
    median_s: float
    min_s: float
    q1_s: float
    q3_s: float
    samples: int
    inner: int

    @property
    def spread(self):
        """Interquartile range over the median: how noisy this measurement was."""
        return (self.q3_s - self.q1_s) / self.median_s if self.median_s > 0 else 0.0


@dataclass
class CaseResult:
    case: Case
    nbytes: int = 0
    flops: int = 0
    per_op: int = 1
    timings: dict = field(default_factory=dict)   # library -> Timing
    skipped: dict = field(default_factory=dict)   # library -> reason
    errors: dict = field(default_factory=dict)    # library -> exception text
    mismatches: dict = field(default_factory=dict)  # library -> how the result differs
    notes: list = field(default_factory=list)
    ratios: dict = field(default_factory=dict)    # key -> float (filled by the suite)
    targets: list = field(default_factory=list)   # [(Target, value or None, passed or None)]

    def time(self, lib):
        """Median seconds per op (per call unless the case is a replayed multi-op graph)."""
        t = self.timings.get(lib)
        return None if t is None else t.median_s / self.per_op

    def gbps(self, lib):
        t = self.timings.get(lib)
        if t is None or not self.nbytes or t.median_s <= 0:
            return None
        return self.nbytes / t.median_s / 1e9

    def gflops(self, lib):
        t = self.timings.get(lib)
        if t is None or not self.flops or t.median_s <= 0:
            return None
        return self.flops / t.median_s / 1e9


# ----------------------------------------------------------------------------- ratios
@dataclass
class Ratio:
    """A ratio column: `fn(result)` -> float or None."""
    key: str
    header: str
    fn: Callable


def speedup(lib, base, key=None, header=None):
    """How many times faster `lib` is than `base` (base time / lib time)."""
    def fn(r):
        t, tb = r.time(lib), r.time(base)
        return tb / t if t and tb else None
    return Ratio(key or f"vs_{base}", header or f"x{base}", fn)


def bandwidth_fraction(lib, ref_gbps, key, header):
    """`lib`'s GB/s over a reference bandwidth (a roofline measured in the same run)."""
    def fn(r):
        g = r.gbps(lib)
        return g / ref_gbps if g and ref_gbps else None
    return Ratio(key, header, fn)


def bandwidth_vs_lib(lib, ref_lib, key, header):
    """`lib`'s GB/s over another column's GB/s in the same case (e.g. a fused C loop)."""
    def fn(r):
        g, gr = r.gbps(lib), r.gbps(ref_lib)
        return g / gr if g and gr else None
    return Ratio(key, header, fn)


def speedup_vs_best(lib, peers, key="vs_best", header="xbest"):
    """`lib`'s speed-up over the FASTEST of `peers` measured in this case (that peer's
    time / lib's time): >= 1 means no peer beat it (issue 14's column)."""
    def fn(r):
        t = r.time(lib)
        times = [r.time(p) for p in peers]
        times = [x for x in times if x]
        return min(times) / t if t and times else None
    return Ratio(key, header, fn)


def bandwidth_vs_best_lib(lib, ref_libs, key, header):
    """`lib`'s GB/s over the best GB/s of several reference columns (e.g. the fused C loop
    with plain and with non-temporal stores: whichever this machine runs faster)."""
    def fn(r):
        g = r.gbps(lib)
        refs = [x for x in (r.gbps(x) for x in ref_libs) if x]
        return g / max(refs) if g and refs else None
    return Ratio(key, header, fn)


def evaluate_ratios(results, ratios):
    """Fill every result's ratios and target verdicts (after all cases ran)."""
    for r in results:
        r.ratios = {}
        for ratio in ratios:
            v = ratio.fn(r)
            if v is not None:
                r.ratios[ratio.key] = v
        r.targets = []
        for t in r.case.targets:
            v = r.ratios.get(t.key)
            r.targets.append((t, v, None if v is None else v >= t.threshold))


# ----------------------------------------------------------------------------- timing
def default_compare(result, reference):
    """None when `result` equals numpy's `reference` (bitwise where possible, NaN-aware),
    else a short description of the difference."""
    try:
        got = np.asarray(result)
    except Exception as exc:  # e.g. a device tensor: the suite should pass its own compare
        return f"result not comparable ({type(exc).__name__})"
    if got.shape != reference.shape:
        return f"shape {got.shape} != numpy's {reference.shape}"
    if got.dtype != reference.dtype:
        return f"dtype {got.dtype} != numpy's {reference.dtype}"
    if reference.dtype.kind in "fc":
        if np.array_equal(got, reference, equal_nan=True):
            return None
        diff = np.abs(got.astype(np.float64) - reference.astype(np.float64))
        worst = float(np.nanmax(diff)) if diff.size else 0.0
        return f"differs from numpy: max |diff| {worst:.3g}"
    if np.array_equal(got, reference):
        return None
    return f"differs from numpy in {int(np.count_nonzero(got != reference))} elements"


def _sample_ns(call, inner, sync):
    """One timed sample: `inner` back-to-back calls (+ sync), in nanoseconds."""
    func, args, kwargs = call.func, call.args, call.kwargs
    rng = range(inner)
    if kwargs:
        t0 = perf_counter_ns()
        for _ in rng:
            func(*args, **kwargs)
    else:
        t0 = perf_counter_ns()
        for _ in rng:
            func(*args)
    if sync is not None:
        sync()
    return perf_counter_ns() - t0


def _calibrate(call, opts, sync):
    """Calls per sample so that a sample lasts >= min_sample_s, and the seconds per call."""
    inner = 1
    t = _sample_ns(call, 1, sync) * 1e-9
    while t * inner < opts.min_sample_s and inner < 1_000_000:
        inner = min(1_000_000, max(inner * 2, math.ceil(opts.min_sample_s / max(t, 1e-9))))
        t = _sample_ns(call, inner, sync) * 1e-9 / inner
    return inner, t


def _quartiles(xs):
    if len(xs) < 2:
        return xs[0], xs[0]
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], q[2]


def measure(case, opts):
    """Set the case up, warm up, check and time every library; returns a CaseResult."""
    res = CaseResult(case)
    try:
        setup = case.setup()
    except Exception as exc:  # a missing API or an unsupported shape: skip the whole case
        res.skipped = {"*": f"setup failed: {type(exc).__name__}: {exc}"}
        return res
    res.nbytes, res.flops, res.per_op = setup.nbytes, setup.flops, setup.per_op
    res.skipped.update(setup.skipped)
    res.notes.extend(setup.notes)
    compare = setup.compare or default_compare
    sync = setup.sync
    if opts.smoke:
        # a smoke run exercises the code and times nothing: the pauses and the warm-up ramp
        # that keep figures honest (settle_s, warm_s) only made the test suite wait
        setup.settle_s = setup.warm_s = 0.0

    plan = {}  # library -> [inner, n_samples]
    for lib, call in setup.impls.items():
        try:
            result = None
            for _ in range(max(1, opts.warmup)):
                t0 = perf_counter_ns()
                result = call()
                if sync is not None:
                    sync()
                t_warm = (perf_counter_ns() - t0) * 1e-9
            if call.check and setup.reference is not None:
                got = result if call.output is None else call.output
                msg = compare(got, setup.reference)
                if msg:
                    res.mismatches[lib] = msg
            del result
            if t_warm >= max(opts.min_sample_s, 1e-3):  # slow enough: one call per sample
                inner, t = 1, t_warm
            else:
                inner, t = _calibrate(call, opts, sync)
        except Exception as exc:
            res.errors[lib] = f"{type(exc).__name__}: {exc}"
            continue
        n = int(opts.budget_s / max(t * inner, 1e-9))
        plan[lib] = [inner, max(opts.repeat, min(opts.max_samples, n))]

    samples = {lib: [] for lib in plan}
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        pending = list(plan)
        rounds = 0
        if setup.blocks:
            _sample_blocks(setup, plan, samples, res, sync)
            pending = []
        while pending:
            # rotate who goes first, so that an order effect (a previous library's threads
            # still spinning, caches it left) is shared out instead of always hitting one
            k = rounds % len(pending)
            rounds += 1
            for lib in pending[k:] + pending[:k]:
                inner = plan[lib][0]
                if setup.settle_s > 0 and len(plan) > 1:
                    time.sleep(setup.settle_s)
                if setup.warm_each > 0 and len(plan) > 1:
                    try:
                        for _ in range(setup.warm_each):
                            setup.impls[lib]()
                        if sync is not None:
                            sync()
                    except Exception as exc:
                        res.errors[lib] = f"{type(exc).__name__}: {exc}"
                        plan[lib][1] = 0
                        continue
                try:
                    samples[lib].append(_sample_ns(setup.impls[lib], inner, sync) * 1e-9 / inner)
                except Exception as exc:  # failed after a good warm-up: report, do not time
                    res.errors[lib] = f"{type(exc).__name__}: {exc}"
                    plan[lib][1] = 0
            pending = [lib for lib in pending
                       if lib not in res.errors and len(samples[lib]) < plan[lib][1]]
    finally:
        if gc_was_on:
            gc.enable()

    for lib, xs in samples.items():
        if lib in res.errors or not xs:
            continue
        q1, q3 = _quartiles(xs)
        res.timings[lib] = Timing(statistics.median(xs), min(xs), q1, q3, len(xs), plan[lib][0])
    del setup
    return res


def run_cases(cases, opts, summarize=None):
    """Measure every case in order, printing one progress line per case on opts.progress."""
    results = []
    t_start = time.perf_counter()
    for i, case in enumerate(cases, 1):
        res = measure(case, opts)
        results.append(res)
        stream = opts.progress_stream()
        if stream is not None:
            line = summarize(res) if summarize else _default_progress(res)
            elapsed = time.perf_counter() - t_start
            print(f"[{i:3d}/{len(cases)} {elapsed:6.1f}s] {case.name}: {line}",
                  file=stream, flush=True)
    return results


def _default_progress(res):
    from bench._report import fmt_time  # late import: _report imports this module
    parts = [f"{lib} {fmt_time(res.time(lib))}" for lib in res.timings]
    parts += [f"{lib} ERROR" for lib in res.errors]
    parts += [f"{lib} MISMATCH" for lib in res.mismatches]
    if "*" in res.skipped:
        parts.append(f"skipped ({res.skipped['*']})")
    return ", ".join(parts)


def as_dict(obj):
    """dataclass -> plain dict for JSON."""
    return dataclasses.asdict(obj)
