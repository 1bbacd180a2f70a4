"""python -m bench quant: ggml's quantized types (issue 12), side by side with gguf-py.

Sections (each a function returning cases; every section's cases share one table):
* dequantize (this file, ``dequant_cases``): Q8_0, Q4_0, Q4_K, Q6_K, IQ4_XS blocks of 16M
  values -> float32 with ggml_cy.dequantize vs gguf.quants.dequantize, checked bitwise;
  bytes = blocks read + floats written. Targets: >= 20x gguf-py and >= 0.5 of the
  non-temporal copy roofline measured in the same run (bench/csrc/roofline.c's copy with
  _mm256_stream_ps: read 4 bytes, write 4 bytes per float, as GB/s of bytes moved).
* more sections: a module ``bench/quant_<name>.py`` with ``cases(env, opts) -> [Case]``
  (or ``<name>_cases``, as bench/quant_quantize.py's ``quantize_cases``)
  (env: {"gc": ggml_cy, "gguf": gguf or None, "np": numpy, "roof_gbps": {...}}) and,
  optionally, ``RATIOS`` (a list of bench._harness.Ratio) and ``LIBS`` (column names); it is
  picked up by SECTIONS below (quantize: ``quant_quantize``, mat-vec: ``quant_matvec``).
"""
from __future__ import annotations

import dataclasses
import importlib
import sys
import time
import warnings

import numpy as np

from bench import _env, _harness, _libs, _report
from bench._harness import Call, Case, Setup, Target

LIBS = ["ggml_cy", "gguf-py"]
N_VALUES = 1 << 24                      # 16M values per case
DEQUANT_TYPES = ["Q8_0", "Q4_0", "Q4_K", "Q6_K", "IQ4_XS"]
# byte offsets of the f16 scales in a block (they are set to finite values: random bytes
# would put NaN/inf scales in ~3% of the blocks, which is not what a model holds)
SCALE_OFFSETS = {"Q8_0": [0], "Q4_0": [0], "Q4_K": [0, 2], "Q6_K": [208], "IQ4_XS": [0]}
# further sections: bench/quant_<name>.py modules (absent ones are skipped)
SECTIONS = ["quant_quantize", "quant_matvec"]


def _n_values(opts):
    return 1 << 16 if opts.smoke else (1 << 22 if opts.quick else N_VALUES)


def random_blocks(gc, type_name, n_values, seed=0):
    """Random blocks of `type_name` holding n_values, with finite scales in [1e-3, 1e-2)."""
    t = gc.GGMLType[type_name]
    nblk = n_values // t.blck_size
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=(nblk, t.type_size), dtype=np.uint8)
    for off in SCALE_OFFSETS.get(type_name, []):
        d = rng.uniform(1e-3, 1e-2, size=nblk).astype(np.float16)
        raw[:, off:off + 2] = d.view(np.uint8).reshape(nblk, 2)
    return raw.reshape(-1)


def _gguf_dequant(gq, qtype, raw2d):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return gq.dequantize(raw2d, qtype)


# ----------------------------------------------------------------------------- roofline
def measure_copy_roofline(roofline, opts):
    """Non-temporal (and plain) float32 copy of 16M values: {variant: {"gbps", ...}}, GB/s
    counting bytes read + written."""
    n = _n_values(opts)

    def setup():
        a = np.random.default_rng(0).random(n, dtype=np.float32)
        c = np.empty_like(a)
        impls = {"plain": Call(roofline.copy_f32, a, c, opts.threads, False),
                 "nontemporal": Call(roofline.copy_f32, a, c, opts.threads, True)}
        if hasattr(roofline, "fill_f32"):   # the write half alone (GB/s below: x2 bytes)
            # a non-zero value: on the 2-core VM, streaming zeros ran 2-3x faster than any
            # other value (0.73-1.2 ms against 2.45-2.53 ms for 64 MB, one process), so a
            # zero fill overstated the write bound of a dequantizer's non-zero output
            impls["fill_nt"] = Call(roofline.fill_f32, c, 1.5, opts.threads).unchecked()
        return Setup(impls, nbytes=2 * a.nbytes, reference=a.copy())
    roof_opts = dataclasses.replace(opts, repeat=max(opts.repeat, 3 if opts.quick else 11))
    res = _harness.measure(Case("copy roofline", setup), roof_opts)
    out = {}
    for variant in ("plain", "nontemporal", "fill_nt"):
        t = res.timings.get(variant)
        if t is not None:
            # fill_nt writes the n floats only: its GB/s counts those bytes (half of copy's)
            gbps = res.gbps(variant) / (2 if variant == "fill_nt" else 1)
            out[variant] = {"gbps": gbps, "median_s": t.median_s, "spread": t.spread}
    out["errors"] = res.errors
    return out


# ----------------------------------------------------------------------------- dequantize
def dequant_cases(env, opts):
    gc, gguf = env["gc"], env["gguf"]
    n = _n_values(opts)
    cases = []
    for name in DEQUANT_TYPES:
        def setup(name=name):
            t = gc.GGMLType[name]
            raw = random_blocks(gc, name, n, seed=int(t))
            out = np.empty(n, np.float32)
            impls = {"ggml_cy": Call(gc.dequantize, raw, t, (n,), out=out,
                                     n_threads=opts.threads).writes(out)}
            skipped = {}
            ref = None
            if gguf is not None:
                from gguf import quants as gq
                qt = gguf.GGMLQuantizationType[name]
                # gguf-py takes rows of bytes; one row of n values
                raw2d = raw.reshape(1, -1)
                impls["gguf-py"] = Call(_gguf_dequant, gq, qt, raw2d).unchecked()
                ref = _gguf_dequant(gq, qt, raw2d).reshape(-1)
            else:
                skipped["gguf-py"] = "gguf not installed"
            # blocks: each library's samples back to back (after a pause and a warm-up
            # call), as a user's loop over a model's tensors runs; taking turns made every
            # ggml_cy sample follow 30-130 ms of gguf-py's numpy passes (its pool asleep,
            # the caches holding gguf-py's temporaries): 2.7-3.2 ms against 1.8-2.6 ms
            return Setup(impls, nbytes=raw.nbytes + 4 * n, reference=ref, skipped=skipped,
                         notes=[f"{name}: {raw.nbytes / n:.4f} bytes/value read, 4 written"],
                         blocks=True, settle_s=0.05, warm_each=2)
        cases.append(Case(f"dequantize {name} -> f32", setup, group="dequantize",
                          params={"type": name, "values": n},
                          targets=[Target("xgguf>=20", "vs_gguf-py", 20.0),
                                   Target("roofNT>=0.5", "vs_roofline_nt", 0.5)]))
    return cases


def write_bound_ratios(fill_gbps):
    """The dequantize cases against the write-only bound (qcpu2): writing 4 bytes per value
    with non-temporal stores at the measured fill rate takes t_fill; "/fillNT" is t_fill
    over ggml_cy's time, "xgguf@fill" gguf-py's time over t_fill (the ceiling of xgguf)."""
    def t_fill(r):
        n = r.case.params.get("values")
        return 4 * n / (fill_gbps * 1e9) if n and r.case.group == "dequantize" else None

    def frac(r):
        tf, t = t_fill(r), r.time("ggml_cy")
        return tf / t if tf and t else None

    def ceiling(r):
        tf, tg = t_fill(r), r.time("gguf-py")
        return tg / tf if tf and tg else None
    return [_harness.Ratio("vs_fill_nt", "/fillNT", frac),
            _harness.Ratio("gguf_ceiling", "xgguf@fill", ceiling)]


# ----------------------------------------------------------------------------- run
def _sections():
    mods = []
    for name in SECTIONS:
        try:
            mods.append(importlib.import_module(f"bench.{name}"))
        except ModuleNotFoundError as exc:
            if exc.name != f"bench.{name}":
                raise
    return mods


def _section_cases(mod):
    """A section module's case builder: cases(), or <name>_cases() (quant_quantize's
    quantize_cases)."""
    fn = getattr(mod, "cases", None)
    if fn is None:
        short = mod.__name__.rsplit(".", 1)[1].replace("quant_", "")
        fn = getattr(mod, f"{short}_cases", None)
    return fn


def build_cases(env, opts):
    cases = dequant_cases(env, opts)
    for mod in env["sections"]:
        fn = _section_cases(mod)
        if fn is not None:
            cases += fn(env, opts)
    return cases


def run(opts, json_path, argv=None, out=None):
    out = out if out is not None else sys.stdout
    t0 = time.perf_counter()
    gc, load_note = _libs.load_ggml_cy()
    gguf = _libs.load_optional("gguf")
    meta = _env.environment(gc, opts.threads, "quant", argv)
    try:
        import importlib.metadata
        meta["versions"]["gguf"] = importlib.metadata.version("gguf")
    except Exception:
        meta["versions"]["gguf"] = None
    roofline, roof_note = _libs.load_roofline(gc)
    sections = _sections()
    libs = list(LIBS)
    for mod in sections:
        libs += [x for x in getattr(mod, "LIBS", []) if x not in libs]
    notes = [f"method  : median per call over >= {opts.repeat} samples after warm-up; "
             f"{opts.threads} threads for ggml_cy (gguf-py is numpy, one thread)",
             "peers   : gguf-py (gguf.quants); results checked bitwise against it"]
    notes += [x for x in (load_note, roof_note) if x]
    if gguf is None:
        notes.append("gguf-py is not installed (pip install gguf): its columns are empty")
    if roofline is not None:
        nt = "AVX _mm256_stream_ps" if roofline.HAVE_NONTEMPORAL else "no AVX: plain loop"
        notes.append(f"roofline: float32 copy of {_n_values(opts) >> 20}M values "
                     f"(bench/csrc/roofline.c, {nt}), GB/s of bytes read + written, "
                     "measured at the start and the end; the better run counts")
    print("\n".join(_env.format_header(meta, notes)), file=out, flush=True)
    if json_path is None:
        json_path = _report.default_json_path("quant", opts)
    roof_runs = []
    if roofline is not None:
        roof_runs.append(measure_copy_roofline(roofline, opts))
    env = {"gc": gc, "gguf": gguf, "np": np, "sections": sections, "roofline": roofline}
    results = _harness.run_cases(build_cases(env, opts), opts)
    if roofline is not None:
        roof_runs.append(measure_copy_roofline(roofline, opts))

    def best(variant):
        vals = [r[variant]["gbps"] for r in roof_runs if r and variant in r]
        return max(vals) if vals else None
    roof_nt, roof_plain = best("nontemporal"), best("plain")
    fill_nt = best("fill_nt")
    ratios = [_harness.speedup("ggml_cy", "gguf-py", header="xgguf")]
    if roof_nt:
        ratios.append(_harness.bandwidth_fraction("ggml_cy", roof_nt, "vs_roofline_nt",
                                                  "/roofNT"))
    if fill_nt:
        ratios += write_bound_ratios(fill_nt)
    for mod in sections:       # a section's own ratios (same key as ours: the same ratio)
        keys = {r.key for r in ratios}
        ratios += [r for r in getattr(mod, "RATIOS", []) if r.key not in keys]
    _harness.evaluate_ratios(results, ratios)
    meta["machine"]["load_average_end"] = _env.load_average()
    meta["runtime_s"] = round(time.perf_counter() - t0, 1)
    meta["roofline"] = {"copy_runs": roof_runs, "nontemporal_gbps": roof_nt,
                        "plain_gbps": roof_plain, "fill_nt_gbps": fill_nt}
    pre = ["ratios  : xgguf = speed-up of ggml_cy over gguf-py; /roofNT = ggml_cy's GB/s "
           "over the non-temporal copy roofline's",
           f"roofline: copy {roof_nt or 0:.1f} GB/s non-temporal, {roof_plain or 0:.1f} GB/s "
           "plain (bytes read + written)"
           + (f"; non-temporal fill {fill_nt:.1f} GB/s (bytes written)" if fill_nt else ""),
           "write   : /fillNT = the time the non-temporal fill takes to write the same float32 "
           "output over ggml_cy's time (1.0: no dequantizer writing that output can be faster); "
           "xgguf@fill = gguf-py's time over that fill time, the highest xgguf any dequantizer "
           "could show in this run",
           f"load    : {meta['machine']['load_average_start']} at start, "
           f"{meta['machine']['load_average_end']} at end (shared machine: noise)"]
    doc = _report.finish(results, libs, ratios, meta, json_path, out, preamble=pre)
    print(f"total {meta['runtime_s']} s", file=out, flush=True)
    return doc
