"""Section of `python -m bench quant` (bench/quant.py): issue 12's mat-vec benchmark: mul_mat with quantized weights (ggml's scheme: b quantized
to the vec-dot partner, integer SIMD dots) against numpy's float32 matmul of the same shape.

Cases: 4096 x 4096 weights in Q4_0, Q8_0, Q4_K, Q6_K times 1 and 8 columns.
  * ggml_cy = ggml_cy.mul_mat(raw blocks, b, type, out=) (eager; the graph runs the same
    kernel, ctx.mul_mat);
  * numpy   = np.matmul(b, W.T, out=) with W the dequantized weights as float32 (OpenBLAS).
Rates: GFLOP/s (2*M*N*K per call) and, as ratio columns, the weight bytes read per second
(the quantized blocks for ggml_cy, the float32 matrix for numpy). Targets (issue 12):
Q4_0 and Q8_0 >= 2x numpy, Q4_K and Q6_K >= 1.5x (python -m bench quant, which picks this module up as a section: ``cases``, ``RATIOS``, ``LIBS``).
"""
from __future__ import annotations

import contextlib

import numpy as np

from bench import _harness
from bench._harness import Call, Case, Setup, Target, Ratio

LIBS = ["numpy"]            # ggml_cy's column is the quant suite's
TARGETS = {"Q4_0": 2.0, "Q8_0": 2.0, "Q4_K": 1.5, "Q6_K": 1.5}


def _weights(gc, tname, m, k, rng):
    """(raw blocks, float32 dequantized weights): ggml_cy.quantize of normal values when it
    knows the type, else random blocks with small float16 scales."""
    t = gc.GGMLType[tname]
    w = rng.standard_normal((m, k), dtype=np.float32)
    quantize = getattr(gc, "quantize", None)
    raw = None
    if quantize is not None:
        with contextlib.suppress(Exception):
            raw = np.ascontiguousarray(quantize(w, t))
    if raw is None:
        bs, ts = t.blck_size, t.type_size
        raw = rng.integers(0, 256, size=(m, k // bs, ts), dtype=np.uint8)
        off = {"Q4_0": 0, "Q8_0": 0, "Q4_K": 0, "Q6_K": 208}[tname]
        raw[:, :, off:off + 2] = (rng.uniform(0.002, 0.02, size=(m, k // bs))
                                  .astype(np.float16).view(np.uint8).reshape(m, k // bs, 2))
        if tname == "Q4_K":
            raw[:, :, 2:4] = raw[:, :, 0:2]
        raw = raw.reshape(m, -1)
    deq = getattr(gc, "dequantize", None)
    if deq is not None:
        wf = deq(raw, t, (m, k))
    else:
        import gguf
        wf = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType(int(t)))
    return raw, np.ascontiguousarray(wf, dtype=np.float32)


def _nmse_compare(result, reference):
    got = np.asarray(result, dtype=np.float64)
    if got.shape != reference.shape:
        return f"shape {got.shape} != {reference.shape}"
    ref = reference.astype(np.float64)
    e = float(np.sum((got - ref) ** 2) / max(np.sum(ref ** 2), 1e-300))
    return None if e < 5e-4 else f"NMSE {e:.2g} >= 5e-4 (ggml's tolerance)"


def mat_vec_setup(env, tname, m, k, n):
    gc = env["gc"]
    rng = np.random.default_rng(12)
    raw, wf = _weights(gc, tname, m, k, rng)
    b = rng.standard_normal((n, k), dtype=np.float32)
    ref = (b.astype(np.float64) @ wf.T.astype(np.float64))
    out_q = np.empty((n, m), np.float32)
    out_n = np.empty((n, m), np.float32)
    impls = {"ggml_cy": Call(gc.mul_mat, raw, b, tname, out=out_q, n_threads=env["threads"])
             .writes(out_q),
             "numpy": Call(np.matmul, b, wf.T, out=out_n).writes(out_n)}
    s = Setup(impls, flops=2 * m * n * k, reference=ref, compare=_nmse_compare, settle_s=0.25,
              warm_each=1)   # after the pause (OpenBLAS's spin), wake the library's own threads
    s.notes.append(f"{tname}: weights {raw.nbytes / 2**20:.1f} MiB quantized, "
                   f"{wf.nbytes / 2**20:.1f} MiB as float32")
    _WBYTES[(tname, n)] = (raw.nbytes, wf.nbytes)
    return s


# weight bytes per case (quantized, float32), filled by the setups for the ratio columns
_WBYTES = {}


def cases(env, opts):
    """The mat-vec cases (env: bench/quant.py's; threads from opts)."""
    env = dict(env, threads=opts.threads)
    m = k = 256 if opts.smoke else 4096
    out = []
    for n in (1, 8):
        for tname, thr in TARGETS.items():
            out.append(Case(f"mul_mat {tname} {m}x{k} x{n}",
                            (lambda tname=tname, n=n: mat_vec_setup(env, tname, m, k, n)),
                            group="quant_mul_mat",
                            params={"type": tname, "m": m, "k": k, "n": n},
                            targets=[Target(f"np>={thr}", "vs_numpy", thr)]))
    return out


def _wgbps(lib, idx):
    def fn(r):
        t = r.time(lib)
        wb = _WBYTES.get((r.case.params.get("type"), r.case.params.get("n")))
        return wb[idx] / t / 1e9 if t and wb else None
    return fn


RATIOS = [_harness.speedup("ggml_cy", "numpy", header="xnumpy"),
          Ratio("weight_gbps", "wGB/s", _wgbps("ggml_cy", 0)),
          Ratio("numpy_weight_gbps", "np wGB/s", _wgbps("numpy", 1))]
