"""Issue 14 item 3: float mul_mat against torch and numpy (python -m bench matmul).

Cases: weights a in f32, f16, bf16 x three shapes (ggml's names: a [K, M], b [K, N]):
  1024 x 1024 x 1024 (M x K x N), 4096 x 4096 x 64 (a batch of 64 tokens through a
  4096 x 4096 weight) and the mat-vec 4096 x 4096 x 1 (decode).
Columns:
  * ggml_cy  = ctx.mul_mat(a, b) in a graph, graph.compute(n_threads): a f32/f16/bf16,
               b f32, result f32; f32/f16 weights widened exactly, everything in f32;
               bf16 weights by ggml's rule: b rounded to bf16, exact products summed in
               f32 (VDPBF16PS where the CPU has AVX512_BF16).
  * torch    = torch.matmul(b, a.T) with both operands in the weights' dtype (torch's
               native way: for f16/bf16 it rounds b and the result to that dtype, and may
               use bf16/f16 dot-product instructions); the target column: >= 0.9x this.
  * torch f32= torch.matmul(b, a.to(float32).T): ggml's semantics (b and the result f32),
               widening a on every call, as a torch user holding f16/bf16 weights would.
  * numpy    = np.matmul(b, a32.T, out=) on OpenBLAS, a32 the weights already widened to
               f32 outside the timer (numpy has no bf16 and no BLAS for f16).
Rates: GFLOP/s (2*M*N*K per call). Results are checked against float64 numpy with ggml's
test-backend-ops measure (NMSE < 5e-4); every library passes it.
"""
from __future__ import annotations

import contextlib
import sys
import time

import numpy as np

from bench import _env, _harness, _libs, _report
from bench._harness import Call, Case, Setup, Target

LIBS = ["ggml_cy", "torch", "torch f32", "numpy"]
DTYPES = ("f32", "f16", "bf16")


def shapes(opts):
    """(label, M, K, N)."""
    if opts.smoke:
        return [("64x64x64", 64, 64, 64), ("128x128x8", 128, 128, 8), ("128x128x1", 128, 128, 1)]
    return [("1024x1024x1024", 1024, 1024, 1024), ("4096x4096x64", 4096, 4096, 64),
            ("4096x4096x1", 4096, 4096, 1)]


def _bf16_bits(x):
    """float32 -> bf16 bit patterns, round to nearest even (as torch and ggml convert)."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def _weights(dtype, m, k, rng):
    """(stored array for ggml_cy, its exact float32 values)."""
    w = rng.standard_normal((m, k), dtype=np.float32)
    if dtype == "f32":
        return w, w
    if dtype == "f16":
        h = w.astype(np.float16)
        return h, h.astype(np.float32)
    bits = _bf16_bits(w)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32)


def _nmse_compare(result, reference):
    if hasattr(result, "detach"):                   # a torch tensor (maybe bf16 / f16)
        result = result.detach().float().numpy()
    got = np.asarray(result, dtype=np.float64)
    if got.shape != reference.shape:
        return f"shape {got.shape} != {reference.shape}"
    e = float(np.sum((got - reference) ** 2) / max(float(np.sum(reference ** 2)), 1e-300))
    return None if e < 5e-4 else f"NMSE {e:.2g} >= 5e-4 (ggml's tolerance)"


def _graph_call(gc, dtype, stored, b, threads):
    from ggml_cy.graph.context import Context
    m, k = stored.shape
    n = b.shape[0]
    ctx = Context(stored.nbytes + b.nbytes + 4 * m * n + (16 << 20))
    if dtype == "bf16":
        ta = ctx.new_tensor(gc.GGMLType.BF16, (k, m))
        ta.numpy(2)[...] = stored
    else:
        ta = ctx.tensor_from(stored)
    tb = ctx.tensor_from(b)
    r = ctx.mul_mat(ta, tb)
    graph = ctx.new_graph()
    graph.build_forward_expand(r)
    try:
        call = Call(graph.compute, threads, plan=graph.plan(threads))
    except (AttributeError, TypeError):
        call = Call(graph.compute, threads)
    view = r.numpy(2)
    return call.writes(view)                        # graph and view keep the arena alive


def mm_setup(env, dtype, m, k, n):
    gc, th = env["gc"], env["torch"]
    rng = np.random.default_rng(14)
    stored, a32 = _weights(dtype, m, k, rng)
    b = rng.standard_normal((n, k), dtype=np.float32)
    ref = b.astype(np.float64) @ a32.T.astype(np.float64)
    impls, skipped = {}, {}
    impls["ggml_cy"] = _graph_call(gc, dtype, stored, b, env["threads"])
    if th is not None:
        tdt = {"f32": th.float32, "f16": th.float16, "bf16": th.bfloat16}[dtype]
        ta = th.from_numpy(a32).to(tdt)             # exact: a32 holds representable values
        tb = th.from_numpy(b).to(tdt)
        if dtype == "f32":
            tout = th.empty((n, m), dtype=th.float32)
            impls["torch"] = Call(th.matmul, tb, ta.T, out=tout).writes(tout)
            skipped["torch f32"] = "same as torch for f32 weights"
        else:
            impls["torch"] = Call(th.matmul, tb, ta.T)
            impls["torch f32"] = Call(_torch_widen, th, th.from_numpy(b), ta)
    else:
        skipped["torch"] = skipped["torch f32"] = "torch not installed"
    out = np.empty((n, m), np.float32)
    impls["numpy"] = Call(np.matmul, b, a32.T, out=out).writes(out)
    # with several threads the libraries take turns by blocks (harness.turns_kw, as in the
    # cpu and math suites), each block after two untimed calls: taking turns sample by
    # sample with a 0.25 s pause left every pool asleep before each sample (on the 16-core
    # host ggml_cy's bf16 1024^3 measured 1.29 ms in the bench against 0.46-0.49 ms alone in
    # a fresh process: tools/device/mm_direct.py, round mmdirect). The pause before a block
    # stays 0.25 s, not turns_kw's 0.05 s: numpy's OpenBLAS spins ~0.1 s after its GEMMs,
    # and with 0.05 s the next block shared the 16 cores with 16 spinning threads (round
    # bf16r: torch 8.0 ms for nine different cases, ggml_cy f32 1024^3 7.3 ms against 2.2)
    turns = _harness.turns_kw(env["threads"])
    turns["settle_s"] = 0.25
    s = Setup(impls, flops=2 * m * n * k, reference=ref, skipped=skipped,
              compare=_nmse_compare, **turns)
    return s


def _torch_widen(th, b, a):
    return th.matmul(b, a.to(th.float32).T)


def build_cases(env, opts):
    out = []
    for dtype in DTYPES:
        for label, m, k, n in shapes(opts):
            out.append(Case(f"mul_mat {dtype} {label}",
                            (lambda dtype=dtype, m=m, k=k, n=n: mm_setup(env, dtype, m, k, n)),
                            group="mul_mat",
                            params={"dtype": dtype, "m": m, "k": k, "n": n},
                            targets=[Target("torch>=0.9", "vs_torch", 0.9)]))
    return out


def run(opts, json_path, argv=None, out=None):
    out = out if out is not None else sys.stdout
    t0 = time.perf_counter()
    gc, load_note = _libs.load_ggml_cy()
    torch = _libs.load_optional("torch")
    thread_notes = _libs.set_threads(opts.threads, gc, None, torch)
    limits = _libs.blas_limits(opts.threads)
    if limits is not None:
        thread_notes.append(f"numpy BLAS limited to {opts.threads} threads (threadpoolctl)")
    else:
        thread_notes.append("numpy BLAS: threadpoolctl not installed, OpenBLAS default threads")
    env = {"gc": gc, "torch": torch, "threads": opts.threads}
    meta = _env.environment(gc, opts.threads, "matmul", argv)
    meta["thread_setting"] = thread_notes
    notes = [f"          ({'; '.join(thread_notes)})",
             f"method  : median per call over >= {opts.repeat} samples after warm-up, "
             "0.25 s pause before each library's samples; ggml_cy = ctx.mul_mat in a graph "
             "(a f32/f16/bf16, b f32, f32 result); torch = matmul in the weights' dtype; "
             "torch f32 = matmul(b, a.float().T); numpy = OpenBLAS on pre-widened f32 a"]
    notes += [x for x in (load_note,) if x]
    print("\n".join(_env.format_header(meta, notes)), file=out, flush=True)
    if json_path is None:
        json_path = _report.default_json_path("matmul", opts)
    with limits if limits is not None else contextlib.nullcontext():
        results = _harness.run_cases(build_cases(env, opts), opts)
    ratios = [_harness.speedup("ggml_cy", "torch", header="xtorch"),
              _harness.speedup("ggml_cy", "torch f32", key="vs_torch_f32", header="xtorch32"),
              _harness.speedup("ggml_cy", "numpy", header="xnumpy")]
    _harness.evaluate_ratios(results, ratios)
    meta["machine"]["load_average_end"] = _env.load_average()
    meta["runtime_s"] = round(time.perf_counter() - t0, 1)
    pre = ["ratios  : xtorch = torch's time / ggml_cy's (target >= 0.9); xtorch32 = against "
           "torch computing with ggml's semantics; xnumpy = against OpenBLAS; rates GF = "
           "GFLOP/s; '!' = result off ggml's NMSE tolerance; '~' = noisy",
           f"load    : {meta['machine']['load_average_start']} at start, "
           f"{meta['machine']['load_average_end']} at end (shared machine: noise)"]
    doc = _report.finish(results, LIBS, ratios, meta, json_path, out, preamble=pre)
    print(f"total {meta['runtime_s']} s", file=out, flush=True)
    return doc
