"""Host cost of one eager GPU call, layer by layer (developer tool, not shipped; issue 14
item 5). Run on the GPU machine from the repository root:

    python3 tools/device/gpucall_profile.py OUTDIR

Every row is the host time of one call: batches of back-to-back calls with no
synchronization inside a batch (small tensors, so the device keeps up and the launch queue
never fills), a synchronize after each batch (not counted), median over batches. The rows
peel the ggml_cy call apart from the public entry (ggml_cy.add) down to the bare C launch,
with torch (and cupy when present) in the same run; then a cProfile of the public call and
the CPU 16-element eager call against numpy. Results go to OUTDIR/profile.json and stdout.
"""
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.getcwd())

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
BATCH = 2000
BATCHES = 7
rows = {}


def timeit(name, fn, sync=None, batch=BATCH, batches=BATCHES):
    try:
        for _ in range(50):
            fn()
        if sync:
            sync()
        xs = []
        for _ in range(batches):
            t0 = time.perf_counter()
            for _ in range(batch):
                fn()
            xs.append((time.perf_counter() - t0) / batch)
            if sync:
                sync()
        us = statistics.median(xs) * 1e6
        rows[name] = {"us": round(us, 3), "min_us": round(min(xs) * 1e6, 3)}
        print(f"  {name:58s} {us:8.2f} us  (min {min(xs) * 1e6:.2f})", flush=True)
    except Exception as exc:
        rows[name] = {"error": f"{type(exc).__name__}: {exc}"}
        print(f"  {name:58s} ERROR {type(exc).__name__}: {exc}", flush=True)


def section(fn, *args):
    try:
        fn(*args)
    except Exception:
        import traceback
        traceback.print_exc()


def main():
    import ggml_cy as gc
    import ggml_cy.cuda as gcuda
    from ggml_cy.cuda import ops as gops, tensor as gten
    import torch
    try:
        import cupy
    except ImportError:
        cupy = None
    c = gcuda._require()
    dev = torch.cuda.get_device_properties(0)
    print(f"device: {dev.name}; torch {torch.__version__}; cupy {getattr(cupy, '__version__', None)}")
    print(f"python {sys.version.split()[0]}; numpy {np.__version__}; cpus {os.cpu_count()}")

    def sync():
        torch.cuda.synchronize()
        gcuda.synchronize()

    for n in (1000, 1 << 20):
        section(layers, gc, gcuda, gops, gten, torch, cupy, c, sync, n)
    section(profile, gc, gcuda, sync)
    section(cpu16, gc, torch)
    with open(os.path.join(OUT, "profile.json"), "w") as f:
        json.dump({"device": dev.name, "rows": rows}, f, indent=1)


def layers(gc, gcuda, gops, gten, torch, cupy, c, sync, n):
    if True:
        print(f"\n== add float32, {n} elements ==", flush=True)
        ha = np.random.default_rng(0).standard_normal(n).astype(np.float32)
        hb = np.random.default_rng(1).standard_normal(n).astype(np.float32)
        ta, tb = torch.from_numpy(ha).cuda(), torch.from_numpy(hb).cuda()
        to = torch.empty_like(ta)
        ga, gb = gcuda.asarray(ha), gcuda.asarray(hb)
        go = gcuda.empty((n,), np.float32)
        gd = gc.from_dlpack(ta) if hasattr(gc, "from_dlpack") else gcuda.from_dlpack(ta)
        sfx = f" n={n}"
        timeit("torch.add(a, b, out=o)" + sfx, lambda: torch.add(ta, tb, out=to), sync)
        timeit("torch.add(a, b)  (allocates)" + sfx, lambda: torch.add(ta, tb), sync)
        timeit("torch a + b" + sfx, lambda: ta + tb, sync)
        timeit("torch a.add_(b)" + sfx, lambda: to.add_(tb), sync)
        if cupy is not None:
            ca, cb = cupy.asarray(ha), cupy.asarray(hb)
            co = cupy.empty_like(ca)
            timeit("cupy.add(a, b, out=o)" + sfx, lambda: cupy.add(ca, cb, out=co), sync)
            timeit("cupy a + b" + sfx, lambda: ca + cb, sync)
        timeit("gc.add(a, b, out=o)" + sfx, lambda: gc.add(ga, gb, out=go), sync)
        timeit("gc.add(a, b)  (allocates)" + sfx, lambda: gc.add(ga, gb), sync)
        timeit("gc a + b  (DeviceTensor.__add__)" + sfx, lambda: ga + gb, sync)
        timeit("gc.add(dlpack(torch a), b, out=o)" + sfx, lambda: gc.add(gd, gb, out=go), sync)
        fast = getattr(gops, "_fast_call", None)
        if fast is not None:        # the same calls with the fast path switched off
            gops._fast_call = lambda *a: None
            try:
                timeit("general path: gc.add(a, b, out=o)" + sfx, lambda: gc.add(ga, gb, out=go), sync)
                timeit("general path: gc.add(a, b)" + sfx, lambda: gc.add(ga, gb), sync)
            finally:
                gops._fast_call = fast
        if n != 1000:
            return
        if fast is not None:
            kw = {"out": go}
            timeit("  ops._fast_call('add', (a, b), {out})", lambda: fast("add", (ga, gb), kw), sync)
            timeit("  ops._fast_call('add', (a, b), {})", lambda: fast("add", (ga, gb), {}), sync)
            plan = gops._plans.get(c.plan_key("add", ga, gb, go))
            timeit("  plan.run(a, b, out)", lambda: plan.run(ga, gb, go), sync)
            plan2 = gops._plans.get(c.plan_key("add", ga, gb, None))
            timeit("  plan.run(a, b, None)  (allocates)", lambda: plan2.run(ga, gb, None), sync)
            timeit("  c.plan_key('add', a, b, out)", lambda: c.plan_key("add", ga, gb, go))
            if hasattr(c, "fast_call"):
                DT = gten.DeviceTensor
                timeit("  c.fast_call(plans, 'add', (a, b), {out})",
                       lambda: c.fast_call(gops._plans, "add", (ga, gb), kw, DT), sync)
            # the C call's parts: a view op (the call and the stream lookup only)
            vd = (0, (n, 1, 1, 1), (4, 4 * n, 4 * n, 4 * n), go.data_ptr)
            timeit("  c.op_forward(NONE view op) (no checks, no launch)",
                   lambda: c.op_forward(0, vd, vd))
            ta2 = torch.empty_like(ta)
            gs = gcuda.asarray(np.ones((32, 32), np.float32)).T
            go2 = gcuda.empty((32, 32), np.float32)
            ts = torch.ones((32, 32), device="cuda").T
            to2 = torch.empty((32, 32), device="cuda")
            timeit("  gcuda.copyto(o, a) contiguous", lambda: gcuda.copyto(go, ga), sync)
            timeit("  torch o.copy_(a) contiguous", lambda: ta2.copy_(ta), sync)
            timeit("  gcuda.copyto(o, a.T) 32x32", lambda: gcuda.copyto(go2, gs), sync)
            timeit("  torch o.copy_(a.T) 32x32", lambda: to2.copy_(ts), sync)
            timeit("  gc.negative(a)", lambda: gc.negative(ga), sync)
            timeit("  torch.neg(a)", lambda: torch.neg(ta), sync)
        F32 = gten.F32
        kw = {"out": go}
        timeit("  gcuda.eager_call('add', (a, b), {out})", lambda: gcuda.eager_call("add", (ga, gb), kw), sync)
        timeit("  gcuda.eager_call('add', (a, b), {})", lambda: gcuda.eager_call("add", (ga, gb), {}), sync)
        timeit("  ops._run('ADD', [a, b], F32, out)", lambda: gops._run("ADD", [ga, gb], F32, go), sync)
        timeit("  ops._run('ADD', [a, b], F32)  (allocates)", lambda: gops._run("ADD", [ga, gb], F32), sync)
        op = c.OPS["ADD"]
        timeit("  ops._launch(c, ADD, out, [a, b])", lambda: gops._launch(c, op, go, [ga, gb]), sync)
        d, a, b = go.desc(), ga.desc(), gb.desc()
        timeit("  c.op_forward(ADD, d, a, b)  (prebuilt tuples)", lambda: c.op_forward(op, d, a, b), sync)
        timeit("  c.op_forward(ADD, d, a, b, None)", lambda: c.op_forward(op, d, a, b, None), sync)
        print("  -- pieces --")
        timeit("  ops._require()", gops._require)
        timeit("  ops._loop_types(np.add, (a, b), None)", lambda: gops._loop_types(np.add, (ga, gb), None))
        timeit("  ops._to_device(a, F32)", lambda: gops._to_device(ga, F32))
        timeit("  ops._broadcast_shape([a, b])", lambda: gops._broadcast_shape([ga, gb]))
        timeit("  ops._check_out(out, shape, F32)", lambda: gops._check_out(go, (n,), F32))
        timeit("  ops._descs(out, [a, b])", lambda: gops._descs(go, [ga, gb]))
        timeit("  out.data_ptr", lambda: go.data_ptr)
        timeit("  out.desc()", go.desc)
        timeit("  out.itemsize + shape + strides", lambda: (go.itemsize, go.shape, go.strides))
        timeit("  gcuda.empty((n,), float32) (+free at drop)", lambda: gcuda.empty((n,), np.float32), sync)
        timeit("  c.Buffer.alloc(4000) (+free at drop)", lambda: c.Buffer.alloc(4000), sync)
        timeit("  DeviceTensor(buf, 0, F32, shape, strides)",
               lambda: gten.DeviceTensor(go.buffer, 0, F32, (n,), (4,)))
        timeit("  c.range_valid(ptr, 4000)  (C call, mutex + map)", lambda: c.range_valid(go.data_ptr, 4000))
        timeit("  c.get_device()  (cudaGetDevice)", c.get_device)
        timeit("  c.stream_handle()", c.stream_handle)
        timeit("  'from ggml_cy import cuda' in a function", _imp)
        timeit("  c.synchronize() (idle device)", c.synchronize, batch=200)
        timeit("  torch.cuda.synchronize() (idle device)", torch.cuda.synchronize, batch=200)



def profile(gc, gcuda, sync):
    print("\n== cProfile: 20000 x gc.add(a, b, out=o), n=1000 (top 30 by tottime) ==")
    ha = np.ones(1000, np.float32)
    ga, gb, go = gcuda.asarray(ha), gcuda.asarray(ha), gcuda.empty((1000,), np.float32)
    for label, fn in (("out", lambda: gc.add(ga, gb, out=go)), ("alloc", lambda: gc.add(ga, gb))):
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(20000):
            fn()
        pr.disable()
        sync()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(30)
        print(f"-- {label} --")
        print(s.getvalue())
        pstats.Stats(pr).dump_stats(os.path.join(OUT, f"cprofile_{label}.pstats"))



def cpu16(gc, torch):
    print("\n== CPU eager call, 16 elements ==")
    a16 = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    b16 = np.random.default_rng(1).standard_normal(16).astype(np.float32)
    o16 = np.empty_like(a16)
    timeit("np.add(a, b) f32 16", lambda: np.add(a16, b16), batch=20000)
    timeit("gc.add(a, b) f32 16", lambda: gc.add(a16, b16), batch=20000)
    timeit("np.add(a, b, out=o) f32 16", lambda: np.add(a16, b16, out=o16), batch=20000)
    timeit("gc.add(a, b, out=o) f32 16", lambda: gc.add(a16, b16, out=o16), batch=20000)
    ta16, tb16 = torch.from_numpy(a16), torch.from_numpy(b16)
    timeit("torch.add(a, b) cpu f32 16", lambda: torch.add(ta16, tb16), batch=20000)


def _imp():
    from ggml_cy import cuda  # noqa: F401


if __name__ == "__main__":
    main()
