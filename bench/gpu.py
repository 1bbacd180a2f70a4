"""Issue 5's GPU bench: ggml_cy's CUDA kernels side by side with torch in one process.

    python -m bench gpu            # on a CUDA machine; skipped with a message elsewhere

Bandwidth cases (contiguous adds, broadcasts, permute and transpose copies) are timed on the
device with CUDA events: a GPU sleep is queued first so that the host gets ahead, then a
batch of launches runs back to back between two events (kernel time, not Python launch
overhead, for both libraries). Per case the inputs rotate over enough buffer sets to exceed
the L2 cache several times. GB/s counts bytes read + written once (each input read once,
the output written once). Each sample is one batch; the median over samples is reported,
libraries interleaved sample by sample.

The 64-op graph case is about launch overhead, so it is timed on the host (the harness's
method: batches of calls, a device synchronize, median): ggml_cy replays the captured CUDA
graph of 64 chained small ops, torch runs the same 64 ops eagerly; the time is per op.
"""
from __future__ import annotations

import math
import statistics
import sys
import time

import numpy as np

from bench import _env, _harness, _report
from bench import gpu_frame as gf
from bench._harness import Call, Case, CaseResult, Setup, Target, Timing

GRAPH_OPS = 64
GRAPH_N = 4096          # elements per op in the graph case ("small")


# ----------------------------------------------------------------------------- timing
class EventTimer:
    """Times `launch(i)` batches on the device. make_events() -> (start, end) objects with
    record() and a way to read the elapsed milliseconds."""

    def __init__(self, torch, gcuda):
        self.torch = torch
        self.gcuda = gcuda
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        self.clock_hz = (getattr(props, "clock_rate", 0) or 1_800_000) * 1e3

    def sample(self, lib, launch, n_calls, host_s):
        """Seconds per call for n_calls back-to-back launches."""
        torch = self.torch
        # queue a GPU sleep long enough for the host to queue every launch behind it
        torch.cuda._sleep(int(self.clock_hz * (n_calls * host_s * 1.5 + 1e-4)))
        if lib == "torch":
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for i in range(n_calls):
                launch(i)
            e.record()
            e.synchronize()
            ms = s.elapsed_time(e)
        else:
            s, e = self.gcuda.Event(), self.gcuda.Event()
            s.record()
            for i in range(n_calls):
                launch(i)
            e.record()
            ms = s.elapsed_ms(e)
        return ms * 1e-3 / n_calls


def measure_events(case, opts, timer):
    """CaseResult for a bandwidth case: setup() -> (Setup, {lib: launch(i)})."""
    res = CaseResult(case)
    try:
        setup, launches = case.setup()
    except Exception as exc:
        res.skipped = {"*": f"setup failed: {type(exc).__name__}: {exc}"}
        return res
    res.nbytes, res.per_op = setup.nbytes, 1
    res.notes.extend(setup.notes)
    torch = timer.torch
    plan = {}
    for lib, launch in launches.items():
        try:
            out = launch(0)                          # warm-up, and the result to check
            torch.cuda.synchronize()
            timer.gcuda.synchronize()
            if setup.reference is not None:
                msg = gf.device_compare(out, setup.reference)
                if msg:
                    res.mismatches[lib] = msg
            t0 = time.perf_counter()                 # host cost of one launch
            for i in range(8):
                launch(i)
            host_s = (time.perf_counter() - t0) / 8
            torch.cuda.synchronize()
            timer.gcuda.synchronize()
            est = timer.sample(lib, launch, 4, host_s)
            n_calls = int(min(200, max(4, math.ceil(1e-3 / max(est, 1e-7)))))
            plan[lib] = (n_calls, host_s)
        except Exception as exc:
            res.errors[lib] = f"{type(exc).__name__}: {exc}"
    samples = {lib: [] for lib in plan}
    n_samples = 1 if opts.smoke else max(opts.repeat, 15)
    for r in range(n_samples):
        libs = list(plan)
        libs = libs[r % len(libs):] + libs[:r % len(libs)] if libs else libs
        for lib in libs:
            n_calls, host_s = plan[lib]
            samples[lib].append(timer.sample(lib, launches[lib], n_calls, host_s))
    for lib, xs in samples.items():
        if xs:
            q1, q3 = _harness._quartiles(xs)
            res.timings[lib] = Timing(statistics.median(xs), min(xs), q1, q3, len(xs), plan[lib][0])
            res.notes.append(f"{lib}: host {plan[lib][1] * 1e6:.1f} us per launch")
    return res


# ----------------------------------------------------------------------------- cases
def _rotation(bytes_per_set, l2_bytes, smoke):
    """Buffer sets to rotate over so that a batch touches > 4x the L2 cache."""
    if smoke:
        return 1
    return int(min(16, max(1, math.ceil(4 * l2_bytes / max(bytes_per_set, 1)))))


def _binary_case(env, name, sa, sb, dtype, group, targets):
    torch, gc, gcuda = env["torch"], env["gc"], env["gcuda"]
    tdt = getattr(torch, np.dtype(dtype).name)

    def setup():
        n_out = int(np.prod(sa))
        n_b = int(np.prod(sb))
        isz = np.dtype(dtype).itemsize
        per_set = (2 * n_out + n_b) * isz
        k = _rotation(per_set, env["l2"], env["opts"].smoke)
        ta = [torch.randn(sa, device="cuda", dtype=tdt) for _ in range(k)]
        tb = [torch.randn(sb, device="cuda", dtype=tdt) for _ in range(k)]
        to = [torch.empty(sa, device="cuda", dtype=tdt) for _ in range(k)]
        ga = [gc.from_dlpack(t) for t in ta]         # the same data, no copy
        gb = [gc.from_dlpack(t) for t in tb]
        go = [gcuda.empty(sa, dtype) for _ in range(k)]
        ref = (ta[0].float() + tb[0].float()).to(tdt).cpu().numpy()
        launches = {
            "ggml_cy": lambda i: gc.add(ga[i % k], gb[i % k], out=go[i % k]),
            "torch": lambda i: torch.add(ta[i % k], tb[i % k], out=to[i % k]),
        }
        return Setup({}, nbytes=per_set, reference=ref,
                     notes=[f"{k} rotating buffer sets"]), launches

    params = {"op": "add", "dtype": np.dtype(dtype).name, "shape_a": sa, "shape_b": sb}
    return Case(name, setup, group=group, params=params, targets=targets)


def _copy_case(env, name, shape, axes, group, targets):
    torch, gc, gcuda = env["torch"], env["gc"], env["gcuda"]

    def setup():
        n = int(np.prod(shape))
        per_set = 2 * n * 4
        k = _rotation(per_set, env["l2"], env["opts"].smoke)
        ts = [torch.randn(shape, device="cuda") for _ in range(k)]
        tperm = [t.permute(*axes) for t in ts]
        to = [torch.empty(tuple(tperm[0].shape), device="cuda") for _ in range(k)]
        gs = [gc.from_dlpack(t).transpose(axes) for t in ts]
        go = [gcuda.empty(tuple(tperm[0].shape), np.float32) for _ in range(k)]
        ref = tperm[0].contiguous().cpu().numpy()

        def g_launch(i):
            gcuda.copyto(go[i % k], gs[i % k])
            return go[i % k]

        def t_launch(i):
            return to[i % k].copy_(tperm[i % k])

        return Setup({}, nbytes=per_set, reference=ref,
                     notes=[f"{k} rotating buffer sets"]), {"ggml_cy": g_launch, "torch": t_launch}

    return Case(name, setup, group=group, params={"op": "copy", "shape": shape, "axes": axes},
                targets=targets)


def _graph_case(env):
    torch, gc, gcuda = env["torch"], env["gc"], env["gcuda"]

    def setup():
        from ggml_cy import backend
        ctx = gc.Context(mem_size=1 << 22, no_alloc=True)
        x = ctx.new_tensor_1d(gc.GGMLType.F32, GRAPH_N)
        y = ctx.new_tensor_1d(gc.GGMLType.F32, GRAPH_N)
        z = x
        builders = [ctx.add, ctx.mul, ctx.sub, ctx.add]
        for i in range(GRAPH_OPS):
            z = builders[i % 4](z, y)
        g = ctx.new_graph()
        g.build_forward_expand(z)
        be = gcuda.cuda_init()
        buf = backend.alloc_ctx_tensors(ctx, be)
        xv = np.random.default_rng(0).uniform(0.5, 1.0, GRAPH_N).astype(np.float32)
        yv = np.random.default_rng(1).uniform(0.9, 1.1, GRAPH_N).astype(np.float32)
        backend.tensor_set(x, xv)
        backend.tensor_set(y, yv)
        be.graph_compute(g)
        be.graph_compute(g)                     # second call: captured, then replayed
        ops = [np.add, np.multiply, np.subtract, np.add]
        zr = xv
        for i in range(GRAPH_OPS):
            zr = ops[i % 4](zr, yv)
        tx = torch.from_numpy(xv).cuda()
        ty = torch.from_numpy(yv).cuda()
        tops = [torch.add, torch.mul, torch.sub, torch.add]

        def torch_chain():
            t = tx
            for i in range(GRAPH_OPS):
                t = tops[i % 4](t, ty)
            return t

        def ggml_graph():
            be.graph_compute(g)
            return z

        def check(result, reference):
            if isinstance(result, gc.Tensor):
                gcuda.synchronize()
                result = backend.tensor_get(result)
            return gf.device_compare(result, reference)

        keep = (ctx, buf)                       # noqa: F841 (alive while timed)
        notes = [f"{GRAPH_OPS} chained add/mul/sub ops on {GRAPH_N} float32; ggml_cy: captured "
                 "CUDA graph replayed (graph_compute), torch: eager; time per op, host clock",
                 f"ggml_cy graph replayed: {be.last_replayed}"]

        def sync():
            torch.cuda.synchronize()
            gcuda.synchronize()
        return Setup({"ggml_cy": Call(ggml_graph), "torch": Call(torch_chain)},
                     nbytes=GRAPH_OPS * 3 * GRAPH_N * 4, per_op=GRAPH_OPS, reference=zr,
                     compare=check, sync=sync, notes=notes)

    return Case(f"graph {GRAPH_OPS} ops x {GRAPH_N} f32 (per op)", setup, group="graph",
                params={"ops": GRAPH_OPS, "n": GRAPH_N},
                targets=[Target("per-op<=0.5x", "vs_torch", 2.0)])


def _ceiling_case(env):
    """A large contiguous device-to-device copy: the memory ceiling both libraries share."""
    torch, gc, gcuda = env["torch"], env["gc"], env["gcuda"]
    n = 1 << 27

    def setup():
        ts, to = torch.randn(n, device="cuda"), torch.empty(n, device="cuda")
        gs, go = gc.from_dlpack(ts), gcuda.empty((n,), np.float32)

        def g_launch(i):
            gcuda.copyto(go, gs)
            return go

        return Setup({}, nbytes=2 * n * 4, reference=ts.cpu().numpy()), {
            "ggml_cy": g_launch, "torch": lambda i: to.copy_(ts)}

    return Case("ceiling: d2d copy 512 MiB f32", setup, group="ceiling", params={"n": n})


# ----------------------------------------------------------------------------- quantized
# Issue 12's GPU rows: dequantize 16M values (blocks read + float32 written, against the
# d2d copy ceiling measured in the same run) and mat-vec with quantized 4096x4096 weights
# against torch's float16 mat-vec of the same shape.
QUANT_DEQ = ["Q8_0", "Q4_0", "Q4_K", "Q6_K", "IQ4_XS"]
QUANT_N = 1 << 24
# byte offsets of each type's float16 scales (set to 1/16 so that values are moderate)
_SCALE_OFFSETS = {"Q8_0": [0], "Q4_0": [0], "Q4_K": [0, 2], "Q6_K": [208], "IQ4_XS": [0]}


def _quant_blocks(gc, name, rows, ne0, seed):
    t = gc.GGMLType[name]
    raw = np.random.default_rng(seed).integers(0, 256, (rows, ne0 // t.blck_size * t.type_size),
                                                dtype=np.uint8)
    blocks = raw.reshape(-1, t.type_size)
    for off in _SCALE_OFFSETS[name]:
        blocks[:, off:off + 2] = np.array([0x2C00], np.uint16).view(np.uint8)
    return raw


def _dequant_case(env, name):
    gc, gcuda = env["gc"], env["gcuda"]

    def setup():
        rows, ne0 = QUANT_N // 4096, 4096
        t = gc.GGMLType[name]
        raw_bytes = rows * ne0 // t.blck_size * t.type_size
        per_set = raw_bytes + QUANT_N * 4
        k = _rotation(per_set, env["l2"], env["opts"].smoke)
        raws = [_quant_blocks(gc, name, rows, ne0, i) for i in range(k)]
        xs = [gcuda.from_blocks(r, name) for r in raws]
        outs = [gcuda.empty((rows, ne0), np.float32) for _ in range(k)]
        ref = None
        deq = getattr(gc, "dequantize", None)
        if deq is not None:
            ref = np.asarray(deq(raws[0], t, (rows, ne0)))
        return Setup({}, nbytes=per_set, reference=ref,
                     notes=[f"{k} rotating buffer sets; bytes = blocks read + float32 written"]), {
            "ggml_cy": lambda i: gcuda.dequantize(xs[i % k], out=outs[i % k])}

    return Case(f"dequantize {name} 16M -> f32", setup, group="quant",
                params={"op": "dequantize", "type": name, "n": QUANT_N},
                targets=[Target("copy>=0.8", "of_copy", 0.8)])


def _matvec_case(env, name, n_cols, targets):
    torch, gc, gcuda = env["torch"], env["gc"], env["gcuda"]
    M = K = 4096

    def setup():
        t = gc.GGMLType[name]
        q_bytes = M * K // t.blck_size * t.type_size
        k = _rotation(q_bytes, env["l2"], env["opts"].smoke)
        raws = [_quant_blocks(gc, name, M, K, 100 + i) for i in range(k)]
        ws = [gcuda.from_blocks(r, name) for r in raws]
        xh = np.random.default_rng(5).standard_normal((n_cols, K)).astype(np.float32)
        x = gcuda.asarray(xh)
        outs = [gcuda.empty((n_cols, M), np.float32) for _ in range(k)]
        # torch: the same weights in float16, its mat-vec (matmul) of the same shape
        kt = _rotation(M * K * 2, env["l2"], env["opts"].smoke)
        w0 = gcuda.dequantize(ws[0]).numpy()
        tw = [torch.from_numpy(w0).to("cuda", torch.float16) for _ in range(kt)]
        tx = torch.from_numpy(xh.T.copy()).to("cuda", torch.float16)
        to = [torch.empty((M, n_cols), device="cuda", dtype=torch.float16) for _ in range(kt)]
        got = gcuda.mul_mat(ws[0], x).numpy().astype(np.float64)
        ref = xh.astype(np.float64) @ w0.astype(np.float64).T
        nmse = float(np.sum((got - ref) ** 2) / np.sum(ref ** 2))
        notes = [f"{k} rotating weight sets ({q_bytes / 1e6:.1f} MB each), torch {kt} float16 "
                 f"sets ({M * K * 2 / 1e6:.1f} MB); GB/s counts the weight bytes read",
                 f"ggml_cy NMSE vs float64 of the dequantized weights: {nmse:.2e}"]
        return Setup({}, nbytes=q_bytes, reference=None, notes=notes), {
            "ggml_cy": lambda i: gcuda.mul_mat(ws[i % k], x, out=outs[i % k]),
            "torch": lambda i: torch.matmul(tw[i % kt], tx, out=to[i % kt])}

    return Case(f"mul_mat {name} {M}x{K} x{n_cols} (torch: f16)", setup, group="quant",
                params={"op": "mul_mat", "type": name, "m": M, "k": K, "n": n_cols},
                targets=targets)


def quant_cases(env):
    cases = [_dequant_case(env, name) for name in QUANT_DEQ]
    cases.append(_matvec_case(env, "Q4_0", 1, [Target("torch>=2", "vs_torch", 2.0)]))
    for name in ("Q8_0", "Q4_K", "Q6_K"):
        cases.append(_matvec_case(env, name, 1, []))
    cases.append(_matvec_case(env, "Q4_0", 8, []))
    cases.append(_matvec_case(env, "Q4_0", 512, []))     # the tensor-core GEMM path
    return cases


# ----------------------------------------------------------------------------- nn rows
# Issue 13's row ops (cuda/nn.cu) through the CUDA backend (a one-node graph, replayed as
# a captured CUDA graph) against torch eager: rms_norm (torch.nn.functional.rms_norm) and
# soft_max_ext with an f16 causal mask and a scale (torch: softmax(x * scale + mask), the
# eager spelling of the same thing) on 4096 rows of 4096 f32.
NN_N = 4096


def _nn_case(env, op):
    torch, gc, gcuda = env["torch"], env["gc"], env["gcuda"]
    n, eps, scale = NN_N, 1e-6, 0.125

    def setup():
        from ggml_cy import backend
        mask_bytes = n * n * 2 if op == "soft_max_ext" else 0
        per_set = 2 * n * n * 4
        k = _rotation(per_set, env["l2"], env["opts"].smoke)
        rng = np.random.default_rng(3)
        host = rng.standard_normal((n, n)).astype(np.float32) * 3
        causal = np.triu(np.full((n, n), -np.inf, np.float32), 1)
        be = gcuda.cuda_init()
        ctx = gc.Context(mem_size=1 << 22, no_alloc=True)
        xs = [ctx.new_tensor(gc.GGMLType.F32, (n, n)) for _ in range(k)]
        if op == "rms_norm":
            outs = [ctx.rms_norm(x, eps) for x in xs]
        else:
            mask = ctx.new_tensor(gc.GGMLType.F16, (n, n))
            outs = [ctx.soft_max_ext(x, mask, scale, 0.0) for x in xs]
        graphs = []
        for o in outs:
            g = ctx.new_graph()
            g.build_forward_expand(o)
            graphs.append(g)
        buf = backend.alloc_ctx_tensors(ctx, be)
        for x in xs:
            backend.tensor_set(x, host)
        if op != "rms_norm":
            backend.tensor_set(mask, causal.astype(np.float16))
        tx = [torch.from_numpy(host).cuda() for _ in range(k)]
        tmask = torch.from_numpy(causal).cuda()
        F = torch.nn.functional
        if op == "rms_norm":
            def t_launch(i):
                return F.rms_norm(tx[i % k], (n,), eps=eps)
            x64 = host.astype(np.float64)
            ref = x64 / np.sqrt(np.mean(x64 * x64, axis=1, keepdims=True) + eps)
        else:
            def t_launch(i):
                return torch.softmax(tx[i % k] * scale + tmask, dim=-1)
            z = host.astype(np.float64) * scale + causal
            z = np.exp(z - z.max(axis=1, keepdims=True))
            ref = z / z.sum(axis=1, keepdims=True)

        def g_launch(i):
            be.graph_compute(graphs[i % k])
            return outs[i % k]

        g_launch(0)
        g_launch(0)                              # captured from the second call on
        got = backend.tensor_get(outs[0]).astype(np.float64)
        tgot = t_launch(0).cpu().numpy().astype(np.float64)
        den = float(np.sum(ref * ref))
        nm = [float(np.sum((v - ref) ** 2)) / den for v in (got, tgot)]
        keep = (ctx, buf)                        # noqa: F841 (alive while timed)
        notes = [f"{k} rotating buffer sets; GB/s counts x read + y written"
                 + (" + the f16 mask read" if mask_bytes else ""),
                 f"NMSE vs float64 numpy: ggml_cy {nm[0]:.2e}, torch {nm[1]:.2e}",
                 f"ggml_cy graph replayed: {be.last_replayed}"]
        return Setup({}, nbytes=per_set + mask_bytes, reference=None, notes=notes), {
            "ggml_cy": g_launch, "torch": t_launch}

    label = "rms_norm" if op == "rms_norm" else "soft_max_ext (f16 causal mask, scale)"
    return Case(f"{label} {n}x{n} f32", setup, group="nn", params={"op": op, "n": n},
                targets=[Target("torch>=1", "vs_torch", 1.0)])


def nn_cases(env):
    return [_nn_case(env, "rms_norm"), _nn_case(env, "soft_max_ext")]

# --- issue 13 (cuops2): flash_attn_ext decode on the CUDA backend vs torch's SDPA
def _attn_case(env, D, n_kv, nh, nkv):
    torch, gc, gcuda = env["torch"], env["gc"], env["gcuda"]
    T = gc.GGMLType

    def setup():
        from ggml_cy import backend
        import torch.nn.functional as F
        kv_bytes = 2 * n_kv * nkv * D * 2
        k = _rotation(kv_bytes, env["l2"], env["opts"].smoke)
        be = gcuda.cuda_init()
        rng = np.random.default_rng(3)
        qh = rng.standard_normal((nh, D)).astype(np.float32)
        kh = [rng.standard_normal((nkv, n_kv, D)).astype(np.float16) for _ in range(k)]
        vh = [rng.standard_normal((nkv, n_kv, D)).astype(np.float16) for _ in range(k)]
        keep, graphs, outs = [], [], []
        for i in range(k):
            ctx = gc.Context(mem_size=1 << 20, no_alloc=True)
            q = ctx.new_tensor(T.F32, (D, 1, nh, 1))
            kt = ctx.new_tensor(T.F16, (D, n_kv, nkv, 1))
            vt = ctx.new_tensor(T.F16, (D, n_kv, nkv, 1))
            m = ctx.new_tensor(T.F16, (n_kv, 1, 1, 1))
            o = ctx.flash_attn_ext(q, kt, vt, m, 1.0 / math.sqrt(D))
            g = ctx.new_graph()
            g.build_forward_expand(o)
            buf = backend.alloc_ctx_tensors(ctx, be)
            for t, a in ((q, qh), (kt, kh[i]), (vt, vh[i]), (m, np.zeros((1, n_kv), np.float16))):
                backend.tensor_set(t, a)
            be.graph_compute(g)
            be.graph_compute(g)            # captured: later launches replay it
            keep.append((ctx, buf))
            graphs.append(g)
            outs.append(o)
        got = backend.tensor_get(outs[0]).reshape(nh, D).astype(np.float64)
        tq = torch.from_numpy(qh).to("cuda", torch.float16).reshape(1, nh, 1, D)
        tk = [torch.from_numpy(x).to("cuda").unsqueeze(0) for x in kh]
        tv = [torch.from_numpy(x).to("cuda").unsqueeze(0) for x in vh]
        gqa = nh != nkv

        def t_call(i):
            return F.scaled_dot_product_attention(tq, tk[i % k], tv[i % k], scale=1.0 / math.sqrt(D),
                                                  enable_gqa=gqa)
        ref = t_call(0).float().reshape(nh, D).cpu().numpy().astype(np.float64)
        nmse = float(np.sum((got - ref) ** 2) / np.sum(ref ** 2))
        notes = [f"one query, {nh} heads, {nkv} k/v heads, {n_kv} keys, head size {D}, f16 k/v "
                 f"({kv_bytes / 1e6:.1f} MB, {k} rotating sets); ggml_cy: f32 q, f16 mask, a "
                 "replayed one-node graph; torch: f16 q, no mask (its fastest path); GB/s counts "
                 "the k/v bytes",
                 f"NMSE ggml_cy vs torch: {nmse:.2e}"]
        keep_alive = (keep, tk, tv)

        def g_call(i):
            be.graph_compute(graphs[i % k])
            return keep_alive
        return Setup({}, nbytes=kv_bytes, reference=None, notes=notes), {
            "ggml_cy": g_call, "torch": t_call}

    return Case(f"flash_attn_ext decode D{D} {nh}/{nkv} heads {n_kv} keys f16", setup, group="attn",
                params={"op": "flash_attn_ext", "D": D, "n_kv": n_kv, "n_head": nh, "n_head_kv": nkv})


def attn_cases(env):
    return [_attn_case(env, 128, 4096, 32, 8), _attn_case(env, 128, 16384, 32, 8),
            _attn_case(env, 64, 4096, 32, 32)]
# --- end issue 13 (cuops2)


def copy_fraction_ratio(results):
    """GB/s over the d2d copy ceiling measured in this run (ggml_cy's copy)."""
    ceil = next((r.gbps("ggml_cy") for r in results if r.case.group == "ceiling"), None)
    return _harness.bandwidth_fraction("ggml_cy", ceil, "of_copy", "xcopy")


def build_cases(env):
    quick = env["opts"].quick
    cases = [_ceiling_case(env)]
    import os
    groups = os.environ.get("GGML_CY_BENCH_GPU_GROUPS")   # e.g. "quant": only those rows
    if groups:
        want = set(groups.split(","))
        return (cases + (quant_cases(env) if "quant" in want else [])
                + (nn_cases(env) if "nn" in want else [])
                + (attn_cases(env) if "attn" in want else []))   # (cuops1, cuops2)
    sizes = [1 << 20, 1 << 24] if quick else [1 << 20, 1 << 24, 1 << 27]
    t_contig = [Target("torch>=0.95", "vs_torch", 0.95)]
    for dt in (np.float32, np.float16):
        for n in sizes:
            label = f"{n >> 20}M"
            cases.append(_binary_case(env, f"add {np.dtype(dt).name} {label}", (n,), (n,), dt,
                                      "contiguous", t_contig))
    bshapes = [((4096, 4096), (4096,)), ((4096, 4096), (4096, 1)),
               ((32, 64, 56, 56), (1, 64, 1, 1)), ((8, 512, 4096), (512, 4096))]
    for dt, thr in ((np.float32, 1.1), (np.float16, 1.5)):
        for sa, sb in bshapes:
            cases.append(_binary_case(env, f"add {np.dtype(dt).name} {sa}+{sb}", sa, sb, dt,
                                      "broadcast", [Target(f"torch>={thr}", "vs_torch", thr)]))
    cases.append(_copy_case(env, "permute copy (16,128,64,64) (0,2,1,3) f32",
                            (16, 128, 64, 64), (0, 2, 1, 3), "copy", []))
    cases.append(_copy_case(env, "transpose copy 4096x4096 f32", (4096, 4096), (1, 0), "copy",
                            [Target("torch>=2.5", "vs_torch", 2.5)]))
    cases.append(_graph_case(env))
    cases.extend(quant_cases(env))
    cases.extend(nn_cases(env))
    cases.extend(attn_cases(env))   # (cuops2)
    return cases


def _measure_all(cases, opts, timer):
    results = []
    stream = opts.progress_stream()
    for case in cases:
        t0 = time.perf_counter()
        if case.group == "graph":
            res = _harness.measure(case, opts)
        else:
            res = measure_events(case, opts, timer)
        results.append(res)
        if stream is not None:
            times = ", ".join(f"{lib} {res.time(lib) * 1e6:.2f} us" for lib in res.timings)
            print(f"  {case.name}: {times or res.skipped or res.errors} "
                  f"({time.perf_counter() - t0:.1f} s)", file=stream, flush=True)
    return results


def run(opts, json_path, argv=None, out=None):
    out = out if out is not None else sys.stdout
    from bench import _libs
    gc, load_note = _libs.load_ggml_cy()
    torch = _libs.load_optional("torch")
    reason = gf.no_device_reason(gc, torch)
    if reason is not None:
        print(f"bench gpu: skipped: {reason}", file=out, flush=True)
        return None
    import ggml_cy.cuda as gcuda
    device = gf.device_info(torch, gc)
    info = gcuda.device_info()
    device["ggml_cy_device"] = info["name"]
    device["l2_bytes"] = info["l2_cache_bytes"]
    meta = _env.environment(gc, opts.threads, "gpu", argv, extra={"device": device})
    header = [f"device  : {device.get('name')} (compute capability {device.get('capability')}, "
              f"{device.get('memory_gib')} GiB, {device.get('multiprocessors')} SMs, L2 "
              f"{info['l2_cache_bytes'] >> 20} MiB), torch CUDA {device.get('torch_cuda')}",
              "method  : bandwidth cases: CUDA events around a batch of launches queued behind "
              "a GPU sleep (kernel time), median over samples, inputs rotated beyond L2; "
              "graph case: host clock + synchronize; GB/s = bytes read + written / median"]
    if load_note:
        header.append(load_note)
    print("\n".join(_env.format_header(meta, header)), file=out, flush=True)
    if json_path is None:
        json_path = _report.default_json_path("gpu", opts, tag=device.get("name"))
    env = {"gc": gc, "gcuda": gcuda, "torch": torch, "opts": opts,
           "l2": info["l2_cache_bytes"] or (50 << 20)}
    t0 = time.perf_counter()
    results = _measure_all(build_cases(env), opts, EventTimer(torch, gcuda))
    ratios = gf.torch_ratios() + [copy_fraction_ratio(results)]
    _harness.evaluate_ratios(results, ratios)
    meta["runtime_s"] = round(time.perf_counter() - t0, 1)
    pre = ["ratios  : xtorch = torch's time / ggml_cy's (above 1: ggml_cy faster); "
           "'!' = result differs from the reference"]
    doc = _report.finish(results, gf.GPU_LIBS, ratios, meta, json_path, out, preamble=pre)
    print(f"total {meta['runtime_s']} s", file=out, flush=True)
    return doc
