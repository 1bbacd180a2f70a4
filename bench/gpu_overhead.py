"""Issue 14 item 5's GPU bench: the host cost of one eager GPU call, ggml_cy against torch.

    python -m bench gpu_overhead     # on a CUDA machine; skipped with a message elsewhere

Every case is a small elementwise call (the device finishes each kernel before the host has
queued the next one), so the time per call is what the host spends on it: argument
handling, type resolution, result allocation, the kernel launch. A sample is a batch of
back-to-back calls followed by one device synchronize, lasting >= 5 ms so that the
synchronize is amortized; the median over samples is reported, libraries interleaved.
Both libraries get the same kind of operands: device tensors they allocated themselves,
results into a preallocated out= or newly allocated (torch's caching allocator, ggml_cy's
block cache). Target: ggml_cy's host time <= torch's (xtorch >= 1).

Results: bench/results/gpu_overhead-<device>.json (the GPU suite's file is left alone).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from bench import _libs, _report
from bench import gpu_frame as gf
from bench._harness import Call, Case, Setup, Target

MIN_SAMPLE_S = 5e-3
TARGET = [Target("host<=torch", "vs_torch", 1.0)]


def _case(env, name, make, group, n_elems, itemsize, n_io):
    """make(torch, gc, gcuda) -> (ggml_cy Call, torch Call, reference array)."""
    torch, gc = env["torch"], env["gc"]
    import ggml_cy.cuda as gcuda

    def setup():
        g_call, t_call, ref = make(torch, gc, gcuda)
        return Setup({"ggml_cy": g_call, "torch": t_call}, nbytes=n_elems * itemsize * n_io,
                     reference=ref, compare=gf.device_compare, sync=env["sync"])

    return Case(name, setup, group=group, params={"n": n_elems}, targets=TARGET)


def _pair(torch, gcuda, shape_a, shape_b, dtype, seed=0):
    rng = np.random.default_rng(seed)
    ha = rng.standard_normal(shape_a).astype(dtype)
    hb = rng.standard_normal(shape_b).astype(dtype)
    return ha, hb, torch.from_numpy(ha).cuda(), torch.from_numpy(hb).cuda(), \
        gcuda.asarray(ha), gcuda.asarray(hb)


def build_cases(env):
    n = 1000

    def add_out(shape_a, shape_b, dtype):
        def make(torch, gc, gcuda):
            ha, hb, ta, tb, ga, gb = _pair(torch, gcuda, shape_a, shape_b, dtype)
            shape = np.broadcast_shapes(shape_a, shape_b)
            to = torch.empty(shape, device="cuda", dtype=getattr(torch, np.dtype(dtype).name))
            go = gcuda.empty(shape, dtype)
            return (Call(gc.add, ga, gb, out=go), Call(torch.add, ta, tb, out=to), ha + hb)
        return make

    def add_new(dtype):
        def make(torch, gc, gcuda):
            ha, hb, ta, tb, ga, gb = _pair(torch, gcuda, (n,), (n,), dtype)
            return Call(gc.add, ga, gb), Call(torch.add, ta, tb), ha + hb
        return make

    def operator_add(torch, gc, gcuda):
        ha, hb, ta, tb, ga, gb = _pair(torch, gcuda, (n,), (n,), np.float32)
        return Call(ga.__add__, gb), Call(ta.__add__, tb), ha + hb

    def unary(gname, tname, fn):
        def make(torch, gc, gcuda):
            ha, hb, ta, tb, ga, gb = _pair(torch, gcuda, (n,), (n,), np.float32)
            ref = fn(ha) if fn is not None else None     # exp: not bitwise numpy's
            return Call(getattr(gc, gname), ga), Call(getattr(torch, tname), ta), ref
        return make

    f32, f16 = np.float32, np.float16
    return [
        _case(env, "add f32 1e3 out=", add_out((n,), (n,), f32), "binary", n, 4, 3),
        _case(env, "add f32 1e3 (new result)", add_new(f32), "binary", n, 4, 3),
        _case(env, "a + b f32 1e3 (operator)", operator_add, "binary", n, 4, 3),
        _case(env, "add f16 1e3 (new result)", add_new(f16), "binary", n, 2, 3),
        _case(env, "add f32 (64,1024)+(1024,) out=", add_out((64, 1024), (1024,), f32),
              "broadcast", 64 * 1024, 4, 2),
        _case(env, "add f32 1M out=", add_out((1 << 20,), (1 << 20,), f32), "binary",
              1 << 20, 4, 3),
        _case(env, "negative f32 1e3 (new result)", unary("negative", "neg", np.negative),
              "unary", n, 4, 2),
        _case(env, "exp f32 1e3 (new result)", unary("exp", "exp", None), "unary", n, 4, 2),
    ]


def run(opts, json_path, argv=None, out=None):
    torch = _libs.load_optional("torch")
    if json_path is None and torch is not None and torch.cuda.is_available():
        json_path = _report.default_json_path(
            "gpu_overhead", opts, tag=torch.cuda.get_device_properties(0).name)
    if not opts.smoke:
        opts = dataclasses.replace(opts, min_sample_s=max(opts.min_sample_s, MIN_SAMPLE_S))
    notes = ["host    : time per call of small eager calls (kernel time < host time): "
             "batches of >= 5 ms + one synchronize; target ggml_cy <= torch (xtorch >= 1)"]
    return gf.run_gpu_suite(build_cases, opts, json_path, argv, out, notes=notes)
