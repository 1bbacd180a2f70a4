"""Device-round probe (cuops2, issue 13): flash_attn_ext on the CUDA backend against the CPU
backend (NMSE) and against torch's scaled_dot_product_attention (time), decode and prompt
shapes. Writes a JSON list to argv[1]. Times: graphs of REP identical flash_attn_ext nodes,
run as a captured CUDA graph; torch: REP calls; both synchronized, median of 15."""
import json
import sys
import time

import numpy as np

import ggml_cy
from ggml_cy import GGMLType as T, backend
import ggml_cy.cuda as gcuda

REP = 20
rng = np.random.default_rng(0)


def build(D, n_q, n_kv, nh, nkv, kvt, causal, rep):
    ctx = ggml_cy.Context(mem_size=1 << 24, no_alloc=True)
    q = ctx.new_tensor(T.F32, (D, n_q, nh, 1))
    k = ctx.new_tensor(kvt, (D, n_kv, nkv, 1))
    v = ctx.new_tensor(kvt, (D, n_kv, nkv, 1))
    m = ctx.new_tensor(T.F16, (n_kv, n_q, 1, 1))
    outs = [ctx.flash_attn_ext(q, k, v, m, 1.0 / np.sqrt(D)) for _ in range(rep)]
    g = ctx.new_graph(4096)
    for o in outs:
        g.build_forward_expand(o)
    return ctx, (q, k, v, m), outs, g


def values(D, n_q, n_kv, nh, nkv, causal):
    qv = rng.standard_normal((1, nh, n_q, D)).astype(np.float32)
    kv = rng.standard_normal((1, nkv, n_kv, D)).astype(np.float16)
    vv = rng.standard_normal((1, nkv, n_kv, D)).astype(np.float16)
    mv = np.zeros((n_q, n_kv), np.float32)
    if causal:
        mv[np.arange(n_kv)[None, :] > (n_kv - n_q + np.arange(n_q))[:, None]] = -np.inf
    return qv, kv, vv, mv.astype(np.float16)


def run(be, D, n_q, n_kv, nh, nkv, causal, rep, vals, timed):
    ctx, ins, outs, g = build(D, n_q, n_kv, nh, nkv, T.F16, causal, rep)
    buf = backend.alloc_ctx_tensors(ctx, be)
    for t, a in zip(ins, vals):
        backend.tensor_set(t, a)
    be.graph_compute(g)
    res = backend.tensor_get(outs[0]).copy()
    ts = []
    if timed:
        be.graph_compute(g)
        gcuda.synchronize() if hasattr(gcuda, "synchronize") else be.synchronize()
        for _ in range(15):
            t0 = time.perf_counter()
            be.graph_compute(g)
            be.synchronize()
            ts.append((time.perf_counter() - t0) / rep)
    del buf
    return res, (float(np.median(ts)) if ts else None)


def nmse(a, b):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    return float(np.sum((a - b) ** 2) / np.sum(b * b))


def main(out):
    import torch
    import torch.nn.functional as F
    cases = [  # D, n_q, n_kv, n_head, n_head_kv, causal
        (128, 1, 4096, 32, 8, False), (128, 1, 16384, 32, 8, False), (64, 1, 4096, 32, 32, False),
        (128, 512, 512, 32, 8, True), (64, 256, 1024, 16, 16, True)]
    rows = []
    cpu = backend.cpu_init(16)
    cu = gcuda.cuda_init()
    for (D, n_q, n_kv, nh, nkv, causal) in cases:
        vals = values(D, n_q, n_kv, nh, nkv, causal)
        g_res, g_t = run(cu, D, n_q, n_kv, nh, nkv, causal, REP, vals, True)
        c_res, _ = run(cpu, D, n_q, n_kv, nh, nkv, causal, 1, vals, False)
        qv, kv, vv, mv = vals
        tq = torch.tensor(qv, device="cuda")
        tk = torch.tensor(kv, device="cuda")
        tv = torch.tensor(vv, device="cuda")
        tm = torch.tensor(mv.astype(np.float32), device="cuda")
        row = {"D": D, "n_q": n_q, "n_kv": n_kv, "n_head": nh, "n_head_kv": nkv, "causal": causal,
               "nmse_cuda_vs_cpu": nmse(g_res, c_res), "ggml_cy_us": g_t * 1e6}
        for name, (qq, kk, vvv) in {"torch_f16": (tq.half(), tk, tv),
                                   "torch_f32": (tq, tk.float(), tv.float())}.items():
            def call():
                return F.scaled_dot_product_attention(qq, kk, vvv, attn_mask=tm.to(qq.dtype),
                                                      scale=1.0 / np.sqrt(D), enable_gqa=nkv != nh)
            o = call()
            ref = o.float().permute(0, 2, 1, 3).cpu().numpy()   # [1, n_q, nh, D] as ggml's
            torch.cuda.synchronize()
            ts = []
            for _ in range(15):
                t0 = time.perf_counter()
                for _ in range(REP):
                    call()
                torch.cuda.synchronize()
                ts.append((time.perf_counter() - t0) / REP)
            row[name + "_us"] = float(np.median(ts)) * 1e6
            row["nmse_cuda_vs_" + name] = nmse(g_res.reshape(ref.shape), ref)
        # bytes of K and V read once: the memory floor
        row["kv_bytes"] = 2 * n_kv * nkv * D * 2
        rows.append(row)
        print(json.dumps(row), flush=True)
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
