"""``ggml_cy.flash_attn``: scaled dot-product attention on numpy arrays (issue 13, ops3).

The eager face of the graph op ``ctx.flash_attn_ext`` (ggml's flash attention: one pass
over the keys per query row with an online softmax, f32 arithmetic, row-parallel on
ggml_cy's threads), in the layout numpy and torch users know:

    q (..., n_head, n_q, d_k), k (..., n_head_kv, n_kv, d_k), v (..., n_head_kv, n_kv, d_v)
    -> (..., n_head, n_q, d_v) float32

with at most one leading batch dim; ``n_head`` a multiple of ``n_head_kv`` (grouped-query
attention: head h reads k/v head ``h // (n_head // n_head_kv)``).
"""
import math

import numpy as np

__all__ = ["flash_attn"]


def _as_4d(x, what, ndim_max=4):
    x = np.asarray(x)
    if x.dtype.kind not in "fiub" or x.dtype.kind == "b" and what != "mask":
        raise TypeError(f"flash_attn: {what} must be a real array, got dtype {x.dtype}")
    if not 2 <= x.ndim <= ndim_max:
        raise ValueError(f"flash_attn: {what} must have 2 to {ndim_max} dims "
                         "((batch,) (heads,) rows, features), got shape "
                         f"{x.shape}")
    return x.reshape((1,) * (4 - x.ndim) + x.shape)


def flash_attn(q, k, v, mask=None, *, scale=None, max_bias=0.0, logit_softcap=0.0,
               n_threads=None):
    """softmax(softcap(scale * q k^T) + mask) v, per head (ggml's flash_attn_ext).

    q (..., n_head, n_q, d_k), k (..., n_head_kv, n_kv, d_k), v (..., n_head_kv, n_kv, d_v):
    2-D to 4-D arrays, with the same leading (batch) dim where present; q is computed in
    float32, k and v are used as float16 when they are float16 and as float32 otherwise.
    mask: None, an additive float array broadcastable to (batch, n_head, n_q, n_kv) (stored
    as float16, as ggml's kernel takes it: -inf masks a key; values beyond float16's range
    saturate to +-inf) or a boolean array (True: attend). scale: default 1/sqrt(d_k).
    max_bias > 0: ALiBi slopes per head times the mask (needs a mask). logit_softcap c != 0:
    scores c * tanh(score / c). Query rows whose keys are all masked give zeros.
    Returns float32 (batch, n_head, n_q, d_v), with q's number of dims."""
    from ggml_cy.core._core import GGMLType
    from ggml_cy.graph.context import Context
    from ggml_cy.cpu.threads import check_num_threads, get_num_threads
    nth = get_num_threads() if n_threads is None else check_num_threads(n_threads)
    q_ndim = np.ndim(q)
    q4, k4, v4 = _as_4d(q, "q"), _as_4d(k, "k"), _as_4d(v, "v")
    B, H, Nq, D = q4.shape
    Bk, Hk, Nkv, Dk = k4.shape
    if Dk != D:
        raise ValueError(f"flash_attn: q {np.shape(q)} and k {np.shape(k)} differ in the "
                         "feature size d_k")
    if v4.shape[:3] != k4.shape[:3]:
        raise ValueError(f"flash_attn: k {np.shape(k)} and v {np.shape(v)} differ in "
                         "batch, heads or keys")
    if Bk != B:
        raise ValueError(f"flash_attn: q {np.shape(q)} and k {np.shape(k)} differ in the "
                         "batch dim")
    if Hk == 0 or H % Hk:
        raise ValueError(f"flash_attn: q's {H} heads are not a multiple of k's {Hk}")
    if scale is None:
        scale = 1.0 / math.sqrt(D) if D > 0 else 1.0
    Dv = v4.shape[3]
    if B * H * Nq * Dv == 0:
        out = np.zeros((B, H, Nq, Dv), np.float32)
        return out.reshape(out.shape[4 - max(q_ndim, 2):])
    kv_type = GGMLType.F16 if k4.dtype == np.float16 and v4.dtype == np.float16 else GGMLType.F32
    kv_dtype = np.float16 if kv_type == GGMLType.F16 else np.float32
    q4 = np.ascontiguousarray(q4, np.float32)
    k4 = np.ascontiguousarray(k4, kv_dtype)
    v4 = np.ascontiguousarray(v4, kv_dtype)
    m4 = None
    if mask is not None:
        m = np.asarray(mask)
        if m.dtype.kind == "b":
            m = np.where(m, np.float16(0), np.float16(-np.inf))
        elif m.dtype.kind not in "fiu":
            raise TypeError(f"flash_attn: mask must be a real or boolean array, got {m.dtype}")
        if m.ndim > 4:
            raise ValueError(f"flash_attn: mask has {m.ndim} dims, at most 4")
        m = m.reshape((1,) * (4 - m.ndim) + m.shape)
        try:
            np.broadcast_shapes(m.shape, (B, H, Nq, Nkv))
        except ValueError:
            raise ValueError(f"flash_attn: mask {np.shape(mask)} does not broadcast to "
                             f"(batch, n_head, n_q, n_kv) = {(B, H, Nq, Nkv)}") from None
        # ggml broadcasts the mask over heads and batch itself; the rows and keys are full
        m4 = np.broadcast_to(m, m.shape[:2] + (Nq, Nkv))
        with np.errstate(over="ignore"):
            m4 = np.ascontiguousarray(m4, np.float16)
    elif max_bias > 0:
        raise ValueError("flash_attn: max_bias > 0 (ALiBi) needs a mask")
    nbytes = q4.nbytes + k4.nbytes + v4.nbytes + 4 * B * H * Nq * Dv
    if m4 is not None:
        nbytes += m4.nbytes
    ctx = Context(nbytes + 64 * 1024 + 16 * Context.tensor_overhead()
                  + Context.graph_overhead(16))
    # ggml's layouts: q [d_k, n_q, n_head, batch] is numpy (B, H, Nq, D) as is
    tq = ctx.tensor_from(q4)
    tk = ctx.tensor_from(k4)
    tv = ctx.tensor_from(v4)
    tm = ctx.tensor_from(m4) if m4 is not None else None
    r = ctx.flash_attn_ext(tq, tk, tv, tm, scale, max_bias, logit_softcap)
    g = ctx.new_graph(16)
    g.build_forward_expand(r)
    g.compute(nth)
    out = np.ascontiguousarray(r.numpy(4).transpose(0, 2, 1, 3))   # (B, Nq, H, Dv) -> (B, H, Nq, Dv)
    return out.reshape(out.shape[4 - max(q_ndim, 2):])
