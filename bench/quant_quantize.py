"""Quantize rows of issue 12's bench: float32 -> ggml blocks, ggml_cy vs gguf-py.

Cases (16M float32 values, 4096 x 4096, standard normal):
* quantize Q8_0 and Q4_0: ggml_cy.quantize vs gguf.quants.quantize (target: >= 20x), both
  bitwise equal (checked on every run);
* quantize Q4_K, Q6_K: ggml_cy's rate only (gguf-py has no K-quant quantizer); the
  reference algorithm's least-squares search is compute bound, hence far below memory speed.
GB/s counts float32 bytes read + blocks written. "copy" (np.copyto of the same float32
input) shows the memory's pace in the same run: quantizing reads as much and writes less.

``quantize_cases(env, opts)`` gives the cases (bench/quant.py's suite adds them to its own);
``run()`` runs them alone: ``python -m bench quant_quantize``.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from bench import _env, _harness, _libs, _report
from bench._harness import Call, Case, Setup, Target

LIBS = ["ggml_cy", "gguf-py", "copy"]


def _shape(opts):
    if opts.smoke:
        return (64, 256)
    return (4096, 4096)


def quantize_cases(env, opts):
    gc, gguf = env["gc"], env.get("gguf")
    shape = _shape(opts)
    n = shape[0] * shape[1]
    label = f"{n // (1 << 20)}M" if n >= 1 << 20 else str(n)
    cases = []
    for name in ("Q8_0", "Q4_0", "Q4_K", "Q6_K"):
        def setup(name=name):
            x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
            out = gc.quantize(x, name)
            impls = {"ggml_cy": Call(gc.quantize, x, name, out=out,
                                     n_threads=opts.threads).writes(out)}
            # memory's pace: copying the same float32 input once (np.copyto, 1 thread)
            dst = np.empty_like(x)
            impls["copy"] = Call(np.copyto, dst, x).unchecked()
            skipped = {}
            ref = None
            if gguf is not None and name in ("Q8_0", "Q4_0"):
                from gguf.quants import quantize as gq
                qt = gguf.GGMLQuantizationType[name]
                impls["gguf-py"] = Call(gq, x, qt)
                ref = gq(x, qt)
            else:
                skipped["gguf-py"] = ("no K-quant quantizer in gguf-py" if gguf is not None
                                      else "gguf-py not installed")
            return Setup(impls, nbytes=x.nbytes + out.nbytes, reference=ref,
                         skipped=skipped,
                         notes=[] if ref is not None else ["rate only"])
        targets = [Target("gguf-py>=20", "vs_gguf-py", 20.0)] if name in ("Q8_0", "Q4_0") else []
        cases.append(Case(f"quantize {name} {label}", setup, group="quantize",
                          params={"type": name, "n": n}, targets=targets))
    return cases


RATIOS = [_harness.speedup("ggml_cy", "gguf-py", header="xgguf-py"),
          _harness.speedup("ggml_cy", "copy", header="xcopy")]


def run(opts, json_path, argv=None, out=None):
    out = out if out is not None else sys.stdout
    t0 = time.perf_counter()
    gc, load_note = _libs.load_ggml_cy()
    gguf = _libs.load_optional("gguf")
    env = {"gc": gc, "gguf": gguf}
    meta = _env.environment(gc, opts.threads, "quant_quantize", argv)
    notes = [f"method  : median per call over >= {opts.repeat} samples after warm-up; "
             f"{opts.threads} threads for ggml_cy (gguf-py is numpy, single-threaded)"]
    notes += [x for x in (load_note,) if x]
    print("\n".join(_env.format_header(meta, notes)), file=out, flush=True)
    if json_path is None:
        json_path = _report.default_json_path("quant_quantize", opts)
    results = _harness.run_cases(quantize_cases(env, opts), opts)
    _harness.evaluate_ratios(results, RATIOS)
    meta["machine"]["load_average_end"] = _env.load_average()
    meta["runtime_s"] = round(time.perf_counter() - t0, 1)
    pre = ["ratios  : xgguf-py = speed-up of ggml_cy over gguf-py (bitwise-equal blocks); "
           "xcopy = time of copying the float32 input once (np.copyto) / ggml_cy's time "
           "(memory's pace; its GB/s column counts the quantize case's bytes)",
           f"load    : {meta['machine']['load_average_start']} at start, "
           f"{meta['machine']['load_average_end']} at end (shared machine: noise)"]
    doc = _report.finish(results, LIBS, RATIOS, meta, json_path, out, preamble=pre)
    print(f"total {meta['runtime_s']} s", file=out, flush=True)
    return doc
