"""Issue 13 ops (ops3), CPU: set_rows, flash_attn_ext, and the GQA / batched forms of
mul_mat and get_rows a model runner uses.

References are float64 numpy written here. Tolerances: bitwise where the op only moves or
converts values (set_rows into f32/f16/bf16, and into quantized types: the blocks
ggml_cy.quantize makes); normalized mean squared error (ggml's test-backend-ops measure)
below 1e-7 for flash_attn_ext and mul_mat, which compute in f32 (test-backend-ops uses
5e-4 for flash_attn_ext, whose CPU kernel rounds q and the V sum to f16).
Shapes include odd sizes and 4-D batches, inputs permuted and strided views, threads
1/2/3, fuse on and off, and bad arguments (clear TypeError/ValueError/IndexError)."""
import itertools

import numpy as np
import pytest

import ggml_cy
from ggml_cy import GGMLType as T
from ggml_cy.graph.context import Context, PREC_DEFAULT, PREC_F32


def nmse(got, want):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    d = float(np.sum(want * want))
    return float(np.sum((got - want) ** 2)) / (d if d > 0 else 1.0)


def run(ctx, t, n_threads=1, fuse=True):
    g = ctx.new_graph()
    g.build_forward_expand(t)
    g.compute(n_threads, fuse=fuse)
    return g


def put(ctx, arr, type=None):
    """A tensor holding arr (numpy shape = ne reversed), as type (f16/bf16/f32/i32/i64)."""
    if type == T.BF16:
        return ctx.tensor_from(ggml_cy.float32_to_bfloat16(np.asarray(arr, np.float32)),
                               type=T.BF16)
    return ctx.tensor_from(np.asarray(arr), type=type)


def as_type_values(arr, t):
    """The float64 values a float array takes when stored as type t (f32/f16/bf16)."""
    arr = np.asarray(arr, np.float32)
    if t == T.F16:
        return arr.astype(np.float16).astype(np.float64)
    if t == T.BF16:
        return ggml_cy.bfloat16_to_float32(ggml_cy.float32_to_bfloat16(arr)).astype(np.float64)
    return arr.astype(np.float64)


# ====================================================================== set_rows

SR_DST = [T.F32, T.F16, T.BF16, T.Q8_0, T.Q4_0, T.Q4_K, T.Q6_K]


def _sr_expected_bytes(a0_raw, rows_f32, ids, t, ne0):
    """a's raw bytes after set_rows: a0_raw (R, row_bytes) per (i3, i2) slice."""
    out = a0_raw.copy()
    if t == T.F32:
        new = rows_f32.astype(np.float32).view(np.uint8)
    elif t == T.F16:
        new = rows_f32.astype(np.float16).view(np.uint8)
    elif t == T.BF16:
        new = ggml_cy.float32_to_bfloat16(rows_f32.astype(np.float32)).view(np.uint8)
    else:
        new = ggml_cy.quantize(rows_f32.astype(np.float32), t)
    new = new.reshape(rows_f32.shape[:-1] + (-1,))
    for idx in np.ndindex(ids.shape[:-1]):
        for i, r in enumerate(ids[idx]):
            out[idx + (r,)] = new[idx + (i,)]
    return out


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("idt", [np.int32, np.int64])
@pytest.mark.parametrize("btype", [T.F32, T.F16])
@pytest.mark.parametrize("t", SR_DST, ids=lambda t: t.name)
def test_set_rows_types(t, btype, idt, n_threads):
    rng = np.random.default_rng(int(t) * 7 + (btype == T.F16) + 2 * (idt == np.int64))
    ne0 = 256 if t in (T.Q4_K, T.Q6_K) else 96
    R, n, ne2, ne3 = 9, 4, 3, 2
    ctx = Context(32 << 20)
    a = ctx.new_tensor(t, (ne0, R, ne2, ne3))
    a_raw0 = rng.integers(0, 256, size=a.raw().shape, dtype=np.uint8)
    if t == T.F16 or t == T.BF16:       # keep the untouched rows finite (readable)
        a_raw0 = np.zeros_like(a_raw0)
    if t.is_quantized:                  # valid blocks everywhere
        a_raw0 = ggml_cy.quantize(rng.standard_normal((ne3, ne2, R, ne0)).astype(np.float32), t)
    a.raw()[...] = a_raw0
    rows = rng.standard_normal((ne3, ne2, n, ne0)).astype(np.float32)
    if btype == T.F16:
        rows = rows.astype(np.float16).astype(np.float32)
    b = put(ctx, rows, btype)
    ids = np.stack([rng.permutation(R)[:n] for _ in range(ne3 * ne2)]).reshape(ne3, ne2, n)
    c = put(ctx, ids.astype(idt))
    r = ctx.set_rows(a, b, c)
    assert r.type == t and r.ne == a.ne and r.data_ptr == a.data_ptr
    run(ctx, r, n_threads)
    want = _sr_expected_bytes(a_raw0, rows, ids, t, ne0)
    np.testing.assert_array_equal(a.raw(), want)


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_set_rows_broadcast_ids_and_views(n_threads, fuse):
    # c [n, 1, 2] broadcast over b [ne0, n, 3, 2] by modulo; b is a permuted view; a is a
    # strided view (every other row of a bigger tensor); c a strided view.
    rng = np.random.default_rng(3)
    ne0, R, n, ne2, ne3 = 33, 7, 5, 3, 2
    ctx = Context(16 << 20)
    big = put(ctx, np.zeros((ne3, ne2, 2 * R, ne0), np.float32))
    a = big.view_4d(ne0, R, ne2, ne3, 2 * big.nb[1], big.nb[2], big.nb[3], offset=big.nb[1])
    rows = rng.standard_normal((ne3, n, ne2, ne0)).astype(np.float32)   # [ne0, ne2, n, ne3]
    bt = put(ctx, rows)
    b = bt.permute(0, 2, 1, 3)                                           # [ne0, n, ne2, ne3]
    ids = np.stack([rng.permutation(R)[:n] for _ in range(2)]).reshape(2, 1, n)
    # ids [n, 1, 2] whose elements are 8 bytes apart (the even i32 slots of a buffer)
    buf = ctx.new_tensor(T.I32, (2 * n, 1, 2))
    buf.numpy(4)[0, :, 0, ::2] = ids[:, 0, :]
    pairs = ctx.view_4d(buf, 1, n, 2, 1, 8, buf.nb[2], buf.nb[2] * 2)    # [1, n, 2, 1]
    c = ctx.permute(pairs, 1, 0, 2, 3)                                   # [n, 1, 2, 1]
    assert c.ne == (n, 1, 2, 1) and c.nb[0] == 8
    r = ctx.set_rows(a, b, c)
    run(ctx, r, n_threads, fuse)
    want = np.zeros((ne3, ne2, R, ne0))
    src = rows.transpose(0, 2, 1, 3)                                     # (ne3, ne2, n, ne0)
    for i3 in range(ne3):
        for i2 in range(ne2):
            for i in range(n):
                want[i3, i2, ids[i3 % 2, 0, i]] = src[i3, i2, i]
    np.testing.assert_array_equal(a.numpy(4), want.astype(np.float32))
    # the rows between a's rows are untouched
    assert not big.numpy(4)[:, :, 0::2].any()


def test_set_rows_is_a_view_and_chains():
    # set_rows's result is a view of a: a later op reads the updated a (ggml's KV cache)
    ctx = Context(8 << 20)
    a = put(ctx, np.zeros((4, 8), np.float32))
    b = put(ctx, np.ones((2, 8), np.float32))
    c = put(ctx, np.array([3, 1], np.int32))
    r = ctx.set_rows(a, b, c)
    s = ctx.sum_rows(r)
    run(ctx, s, 2)
    np.testing.assert_array_equal(s.numpy().ravel(), [0, 8, 0, 8])
    assert r.view_src.data_ptr == a.data_ptr


def test_set_rows_bad_arguments():
    ctx = Context(8 << 20)
    a = ctx.new_tensor(T.F32, (8, 4))
    b = ctx.new_tensor(T.F32, (8, 2))
    c = ctx.new_tensor(T.I32, (2,))
    with pytest.raises(TypeError, match="f32 or f16"):
        ctx.set_rows(a, ctx.new_tensor(T.I32, (8, 2)), c)
    with pytest.raises(TypeError, match="i32 or i64"):
        ctx.set_rows(a, b, ctx.new_tensor(T.F32, (2,)))
    with pytest.raises(TypeError, match="set_rows: a"):
        ctx.set_rows(ctx.new_tensor(T.I32, (8, 4)), b, c)
    with pytest.raises(ValueError, match="do not match"):
        ctx.set_rows(a, ctx.new_tensor(T.F32, (7, 2)), c)
    with pytest.raises(ValueError, match="do not match"):
        ctx.set_rows(a, b, ctx.new_tensor(T.I32, (3,)))
    with pytest.raises(ValueError, match="do not match"):
        ctx.set_rows(ctx.new_tensor(T.F32, (8, 4, 3)), ctx.new_tensor(T.F32, (8, 2, 3)),
                     ctx.new_tensor(T.I32, (2, 2)))
    with pytest.raises(ValueError, match="do not match"):
        ctx.set_rows(ctx.new_tensor(T.Q8_0, (64, 4)), ctx.new_tensor(T.F32, (48, 2)), c)
    with pytest.raises(TypeError, match="cannot quantize"):
        ctx.set_rows(ctx.new_tensor(T.IQ2_XXS, (256, 4)), ctx.new_tensor(T.F32, (256, 2)), c)
    with pytest.raises(ValueError, match="adjacent"):
        ctx.set_rows(a, ctx.new_tensor(T.F32, (2, 8)).transpose(), c)
    with pytest.raises(TypeError, match="Tensor"):
        ctx.set_rows(a, np.zeros((2, 8), np.float32), c)
    # ids out of range at compute time: IndexError, not a crash
    for bad in (4, -1):
        ctx2 = Context(8 << 20)
        a2 = put(ctx2, np.zeros((4, 8), np.float32))
        r = ctx2.set_rows(a2, put(ctx2, np.ones((2, 8), np.float32)),
                          put(ctx2, np.array([0, bad], np.int64)))
        with pytest.raises(IndexError, match="out of range"):
            run(ctx2, r, 2)


# ====================================================================== flash_attn_ext

def fa_reference(q, k, v, mask, scale, max_bias, softcap):
    """float64 attention with ggml's semantics. numpy shapes (ggml ne reversed):
    q (B, H, Nq, D), k (B, Hk, Nkv, D), v (B, Hv, Nkv, Dv), mask (m3, m2, >=Nq, >=Nkv) or
    None. Returns (B, Nq, H, Dv): ggml's permuted result [Dv, H, Nq, B]."""
    B, H, Nq, D = q.shape
    Nkv = k.shape[2]
    out = np.zeros((B, Nq, H, v.shape[3]))
    n_head_log2 = 1 << int(np.floor(np.log2(H)))
    m0 = 2.0 ** (-max_bias / n_head_log2)
    m1 = 2.0 ** (-(max_bias / 2.0) / n_head_log2)
    for b in range(B):
        for h in range(H):
            kk = k[b, h // (H // k.shape[1])]
            vv = v[b, h // (H // v.shape[1])]
            s = scale * (q[b, h] @ kk.T)
            if softcap:
                s = softcap * np.tanh(s / softcap)
            if mask is not None:
                slope = 1.0
                if max_bias > 0:
                    slope = m0 ** (h + 1) if h < n_head_log2 else m1 ** (2 * (h - n_head_log2) + 1)
                mm = mask[b % mask.shape[0], h % mask.shape[1], :Nq, :Nkv]
                s = s + slope * mm
            with np.errstate(invalid="ignore"):
                mx = np.max(s, axis=1, keepdims=True)
                e = np.exp(s - np.where(np.isfinite(mx), mx, 0))
            e[~np.isfinite(s)] = 0.0
            den = e.sum(axis=1, keepdims=True)
            p = np.divide(e, den, out=np.zeros_like(e), where=den > 0)
            out[b, :, h] = p @ vv
    return out


def fa_case(rng, *, D=64, Dv=None, Nq=7, Nkv=19, H=4, Hk=2, B=1, kv_type=T.F16,
            mask="causal", mask_pad=0, m2=1, m3=1, scale=None, max_bias=0.0, softcap=0.0,
            n_threads=2, fuse=True, permuted=False, prec=None):
    Dv = D if Dv is None else Dv
    scale = 1.0 / np.sqrt(D) if scale is None else scale
    ctx = Context(64 << 20)
    qv = rng.standard_normal((B, H, Nq, D)).astype(np.float32)
    kvals = rng.standard_normal((B, Hk, Nkv, D)).astype(np.float32)
    vvals = rng.standard_normal((B, Hk, Nkv, Dv)).astype(np.float32)
    if permuted:
        # as a model builds them: q [D, H, Nq] permuted to [D, Nq, H]; k and v views of a
        # cache [D, Hk, Nkv_max] permuted to [D, Nkv, Hk]
        qt = put(ctx, qv.transpose(0, 2, 1, 3))
        q = ctx.permute(qt, 0, 2, 1, 3)
        kc = put(ctx, np.concatenate([kvals, np.zeros_like(kvals[:, :, :3])], axis=2)
                 .transpose(0, 2, 1, 3), kv_type)
        vc = put(ctx, np.concatenate([vvals, np.zeros_like(vvals[:, :, :3])], axis=2)
                 .transpose(0, 2, 1, 3), kv_type)
        k = ctx.permute(ctx.view_4d(kc, D, Hk, Nkv, B, kc.nb[1], kc.nb[2], kc.nb[3]), 0, 2, 1, 3)
        v = ctx.permute(ctx.view_4d(vc, Dv, Hk, Nkv, B, vc.nb[1], vc.nb[2], vc.nb[3]), 0, 2, 1, 3)
        assert not q.is_contiguous and not k.is_contiguous
    else:
        q = put(ctx, qv)
        if kv_type.is_quantized:
            k = ctx.tensor_from(ggml_cy.quantize(kvals, kv_type), type=kv_type,
                                ne=(D, Nkv, Hk, B))
            v = ctx.tensor_from(ggml_cy.quantize(vvals, kv_type), type=kv_type,
                                ne=(Dv, Nkv, Hk, B))
        else:
            k = put(ctx, kvals, kv_type)
            v = put(ctx, vvals, kv_type)
    if kv_type.is_quantized:
        kref = ggml_cy.dequantize(ggml_cy.quantize(kvals, kv_type), kv_type, kvals.shape)
        vref = ggml_cy.dequantize(ggml_cy.quantize(vvals, kv_type), kv_type, vvals.shape)
        kref, vref = kref.astype(np.float64), vref.astype(np.float64)
    else:
        kref, vref = as_type_values(kvals, kv_type), as_type_values(vvals, kv_type)
    m = mref = None
    if mask is not None:
        rows = Nq + mask_pad
        mref = np.zeros((m3, m2, rows, Nkv + mask_pad), np.float32)
        if mask == "causal":
            past = Nkv - Nq
            for i in range(Nq):
                mref[..., i, past + i + 1:Nkv] = -np.inf
        mref[..., :Nkv] += rng.uniform(-1, 0, size=mref[..., :Nkv].shape).astype(np.float32)
        mref = mref.astype(np.float16)
        m = put(ctx, mref)
        mref = mref.astype(np.float64)
    r = ctx.flash_attn_ext(q, k, v, m, scale, max_bias, softcap)
    if prec is not None:
        ctx.flash_attn_ext_set_prec(r, prec)
    assert r.ne == (Dv, H, Nq, B) and r.type == T.F32
    run(ctx, r, n_threads, fuse)
    want = fa_reference(qv.astype(np.float64), kref, vref, mref, scale, max_bias, softcap)
    return r.numpy(4), want


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("shape", [
    dict(D=64, Nq=7, Nkv=19, H=4, Hk=2, B=1),       # GQA 2:1
    dict(D=40, Nq=1, Nkv=37, H=6, Hk=1, B=2),       # MQA, one-token decode, batch 2
    dict(D=80, Dv=48, Nq=13, Nkv=13, H=3, Hk=3, B=1),
    dict(D=16, Nq=5, Nkv=1, H=2, Hk=2, B=3),
    # keys in several blocks of 64 (the kernel's FA_KB), the last one partial
    dict(D=64, Nq=1, Nkv=200, H=12, Hk=4, B=1),     # a decode step, GQA 3:1
    dict(D=32, Nq=9, Nkv=150, H=4, Hk=2, B=1),
], ids=["gqa", "mqa_decode", "dv_ne_dk", "one_key", "decode_blocks", "prompt_blocks"])
def test_flash_attn_shapes(shape, n_threads):
    rng = np.random.default_rng(sum(shape.values()) + n_threads)
    mask = "causal" if shape["Nkv"] >= shape["Nq"] else "random"
    got, want = fa_case(rng, mask=mask, n_threads=n_threads, **shape)
    assert nmse(got, want) < 1e-7


@pytest.mark.parametrize("kv_type", [T.F16, T.F32, T.BF16, T.Q8_0, T.Q4_0],
                         ids=lambda t: t.name)
def test_flash_attn_kv_types(kv_type):
    rng = np.random.default_rng(int(kv_type) + 11)
    got, want = fa_case(rng, D=64, Nq=6, Nkv=33, H=4, Hk=2, B=2, kv_type=kv_type)
    assert nmse(got, want) < 1e-7


@pytest.mark.parametrize("opts", [
    dict(mask=None),
    dict(mask="random", mask_pad=64 - 7, m2=4, m3=2, B=2),        # padded, per head/batch
    dict(mask="random", m2=2, B=2),
    dict(mask="causal", max_bias=8.0, H=8, Hk=2),                   # ALiBi
    dict(mask="causal", max_bias=4.0, H=6, Hk=3),                   # n_head not 2^k
    dict(mask="causal", softcap=30.0, scale=0.5),
    dict(mask="causal", softcap=2.0, scale=1.0),
    dict(mask="causal", prec=PREC_F32),
], ids=["nomask", "padded_mask", "mask_heads", "alibi", "alibi6", "softcap30", "softcap2",
        "prec_f32"])
def test_flash_attn_options(opts):
    rng = np.random.default_rng(len(str(opts)))
    kw = dict(D=32, Nq=7, Nkv=21, H=4, Hk=2, B=1)
    kw.update(opts)
    got, want = fa_case(rng, **kw)
    assert nmse(got, want) < 1e-7


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("n_threads", [1, 3])
def test_flash_attn_permuted_views(n_threads, fuse):
    rng = np.random.default_rng(5)
    got, want = fa_case(rng, D=32, Nq=5, Nkv=11, H=4, Hk=2, B=2, permuted=True,
                        n_threads=n_threads, fuse=fuse)
    assert nmse(got, want) < 1e-7


def test_flash_attn_fully_masked_row_is_zero():
    ctx = Context(8 << 20)
    q = put(ctx, np.ones((1, 1, 2, 8), np.float32))
    k = put(ctx, np.ones((1, 1, 3, 8), np.float32), T.F16)
    v = put(ctx, np.arange(24, dtype=np.float32).reshape(1, 1, 3, 8), T.F16)
    m = np.zeros((1, 1, 2, 3), np.float16)
    m[0, 0, 1, :] = -np.inf
    r = ctx.flash_attn_ext(q, k, v, put(ctx, m), 1.0, 0.0, 0.0)
    run(ctx, r, 1)
    out = r.numpy(4)                                 # (B, Nq, H, Dv)
    np.testing.assert_allclose(out[0, 0, 0], np.arange(24).reshape(3, 8).mean(0), rtol=1e-6)
    assert not out[0, 1].any()


@pytest.mark.parametrize("kv_type", [T.F16, T.F32])
def test_flash_attn_masked_blocks_then_keys(kv_type):
    # whole blocks of 64 keys masked for every row (skipped), then a block with live keys;
    # a row with no live key at all gives zeros; huge and tiny scores stay finite
    ctx = Context(16 << 20)
    rng = np.random.default_rng(5)
    D, Nkv = 32, 200
    qv = rng.standard_normal((1, 2, 3, D)).astype(np.float32) * 4
    kv = rng.standard_normal((1, 1, Nkv, D)).astype(np.float32)
    vv = rng.standard_normal((1, 1, Nkv, D)).astype(np.float32)
    m = np.full((1, 1, 3, Nkv), -np.inf, np.float16)
    m[0, 0, 0, 130:135] = 0                  # row 0: keys of the third block only
    m[0, 0, 1, 5] = 0                        # row 1: one key of the first block, one late
    m[0, 0, 1, 199] = 0
    r = ctx.flash_attn_ext(put(ctx, qv), put(ctx, kv, kv_type), put(ctx, vv, kv_type),
                           put(ctx, m), 1.0, 0.0, 0.0)
    run(ctx, r, 1)
    got = r.numpy(4)
    kref, vref = as_type_values(kv, kv_type), as_type_values(vv, kv_type)
    want = fa_reference(qv.astype(np.float64), kref, vref, m.astype(np.float64), 1.0, 0.0, 0.0)
    np.testing.assert_allclose(got[:, :2], want[:, :2], rtol=2e-5, atol=2e-6)
    assert not got[0, 2].any()               # row 2: every key masked


def test_flash_attn_prec():
    ctx = Context(8 << 20)
    q = ctx.new_tensor(T.F32, (8, 2, 2))
    k = ctx.new_tensor(T.F16, (8, 3, 1))
    r = ctx.flash_attn_ext(q, k, k, None, 0.5, 0.0, 0.0)
    assert Context.flash_attn_ext_get_prec(r) == PREC_DEFAULT
    ctx.flash_attn_ext_set_prec(r, PREC_F32)
    assert ctx.flash_attn_ext_get_prec(r) == PREC_F32
    assert r.op_params[3] == 10
    from ggml_cy.graph import _graph
    assert _graph.op_params_float(r, 0) == 0.5
    for bad in (1, "f32", 10.0, True):
        with pytest.raises(ValueError, match="prec"):
            ctx.flash_attn_ext_set_prec(r, bad)
    with pytest.raises(ValueError, match="not a flash_attn_ext"):
        ctx.flash_attn_ext_set_prec(q, PREC_F32)


def test_flash_attn_bad_arguments():
    ctx = Context(8 << 20)
    q = ctx.new_tensor(T.F32, (16, 3, 4, 1))
    k = ctx.new_tensor(T.F16, (16, 5, 2, 1))
    v = ctx.new_tensor(T.F16, (8, 5, 2, 1))
    m = ctx.new_tensor(T.F16, (5, 3))
    fa = ctx.flash_attn_ext
    assert fa(q, k, v, m, 1.0, 0.0, 0.0).ne == (8, 4, 3, 1)
    with pytest.raises(TypeError, match="q must be f32"):
        fa(ctx.new_tensor(T.F16, (16, 3, 4, 1)), k, v)
    with pytest.raises(TypeError, match="k must be"):
        fa(q, ctx.new_tensor(T.I32, (16, 5, 2, 1)), v)
    with pytest.raises(TypeError, match="mask must be f16"):
        fa(q, k, v, ctx.new_tensor(T.F32, (5, 3)))
    with pytest.raises(ValueError, match="head size"):
        fa(q, ctx.new_tensor(T.F16, (15, 5, 2, 1)), v)
    with pytest.raises(ValueError, match="number of keys"):
        fa(q, k, ctx.new_tensor(T.F16, (8, 4, 2, 1)))
    with pytest.raises(ValueError, match="grouped-query"):
        fa(q, ctx.new_tensor(T.F16, (16, 5, 3, 1)), ctx.new_tensor(T.F16, (8, 5, 3, 1)))
    with pytest.raises(ValueError, match="ne\\[3\\]"):
        fa(ctx.new_tensor(T.F32, (16, 3, 4, 2)), k, v)
    with pytest.raises(ValueError, match="cover"):
        fa(q, k, v, ctx.new_tensor(T.F16, (4, 3)))
    with pytest.raises(ValueError, match="cover"):
        fa(q, k, v, ctx.new_tensor(T.F16, (5, 2)))
    with pytest.raises(ValueError, match="broadcast"):
        fa(q, k, v, ctx.new_tensor(T.F16, (5, 3, 3)))
    with pytest.raises(ValueError, match="contiguous"):
        fa(q, k, v, ctx.permute(ctx.new_tensor(T.F16, (3, 5)), 1, 0, 2, 3))
    with pytest.raises(ValueError, match="ALiBi"):
        fa(q, k, v, None, 1.0, 8.0, 0.0)
    with pytest.raises(ValueError, match="adjacent"):
        fa(ctx.transpose(ctx.new_tensor(T.F32, (3, 16, 4, 1))), k, v)
    with pytest.raises(TypeError, match="real number"):
        fa(q, k, v, m, "1.0")
    with pytest.raises(TypeError, match="Tensor"):
        fa(q, k, np.zeros(3))


# ====================================================================== mul_mat (GQA)

def mm_ref(a, b):
    """a (ne03, ne02, M, K), b (ne13, ne12, N, K) -> (ne13, ne12, N, M), ggml's broadcast:
    src0 matrix i12 // (ne12 / ne02), i13 // (ne13 / ne03)."""
    r2, r3 = b.shape[1] // a.shape[1], b.shape[0] // a.shape[0]
    a = np.repeat(np.repeat(a, r2, axis=1), r3, axis=0)
    return b @ np.swapaxes(a, -1, -2)


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("t", [T.F32, T.F16, T.BF16, T.Q8_0, T.Q4_0, T.Q4_K, T.Q6_K],
                         ids=lambda t: t.name)
def test_mul_mat_broadcast_dims_2_3(t, n_threads):
    # a [K, M, 2, 3] against b [K, N, 8, 6]: r2 = 4 (GQA), r3 = 2
    rng = np.random.default_rng(int(t) + 100)
    K = 256 if t in (T.Q4_K, T.Q6_K) else 64
    M, N = 5, 3
    av = rng.standard_normal((3, 2, M, K)).astype(np.float32)
    bv = rng.standard_normal((6, 8, N, K)).astype(np.float32)
    ctx = Context(32 << 20)
    if t.is_quantized:
        a = ctx.tensor_from(ggml_cy.quantize(av, t), type=t, ne=(K, M, 2, 3))
        aref = ggml_cy.dequantize(ggml_cy.quantize(av, t), t, av.shape).astype(np.float64)
    else:
        a = put(ctx, av, t)
        aref = as_type_values(av, t)
    b = put(ctx, bv)
    r = ctx.mul_mat(a, b)
    assert r.ne == (M, N, 8, 6)
    run(ctx, r, n_threads)
    # BF16 weights: ggml's rule rounds b to bf16 (mul_mat_bf16.h)
    want = mm_ref(aref, as_type_values(bv, T.BF16 if t == T.BF16 else T.F32))
    # quantized weights: ggml's integer dot products quantize b as well (q8 rows)
    tol = 1e-7 if not t.is_quantized else 2e-4
    assert nmse(r.numpy(4), want) < tol


@pytest.mark.parametrize("t", [T.F32, T.F16, T.BF16, T.Q8_0], ids=lambda t: t.name)
def test_mul_mat_attention_layout(t):
    # kq = mul_mat(k, q) with k [D, Nkv, Hk] a permuted cache view and q [D, Nq, H] a
    # permuted view: the layout llama.cpp's non-flash attention uses (H = 4 Hk)
    rng = np.random.default_rng(int(t) + 9)
    D, Nkv, Nq, Hk, H = 32, 9, 4, 2, 8
    ctx = Context(16 << 20)
    kv = rng.standard_normal((Nkv, Hk, D)).astype(np.float32)          # cache [D, Hk, Nkv]
    if t.is_quantized:
        kc = ctx.tensor_from(ggml_cy.quantize(kv, t), type=t, ne=(D, Hk, Nkv))
        kref = ggml_cy.dequantize(ggml_cy.quantize(kv, t), t, kv.shape).astype(np.float64)
    else:
        kc = put(ctx, kv, t)
        kref = as_type_values(kv, t)
    k = ctx.permute(kc, 0, 2, 1, 3)                                     # [D, Nkv, Hk]
    qv = rng.standard_normal((Nq, H, D)).astype(np.float32)
    q = ctx.permute(put(ctx, qv), 0, 2, 1, 3)                          # [D, Nq, H]
    r = ctx.mul_mat(k, q)
    assert r.ne == (Nkv, Nq, H, 1)
    run(ctx, r, 2)
    qref = as_type_values(qv, T.BF16 if t == T.BF16 else T.F32)    # BF16: b rounded
    want = mm_ref(kref.transpose(1, 0, 2)[None], qref.transpose(1, 0, 2)[None])
    assert nmse(r.numpy(4), want) < (1e-7 if not t.is_quantized else 2e-4)


def test_mul_mat_broadcast_bad():
    ctx = Context(8 << 20)
    with pytest.raises(ValueError, match="broadcast"):
        ctx.mul_mat(ctx.new_tensor(T.F32, (8, 4, 3)), ctx.new_tensor(T.F32, (8, 2, 4)))
    with pytest.raises(ValueError, match="broadcast"):
        ctx.mul_mat(ctx.new_tensor(T.F16, (8, 4, 1, 2)), ctx.new_tensor(T.F32, (8, 2, 1, 3)))


# ====================================================================== get_rows (3-D ids)

@pytest.mark.parametrize("t", [T.F32, T.F16, T.BF16], ids=lambda t: t.name)
def test_get_rows_batched_views(t):
    # table a [ne0, R, 2, 3] as a permuted view; ids [n, 2, 3] as a permuted view
    rng = np.random.default_rng(int(t))
    ne0, R, n = 24, 6, 5
    tab = rng.standard_normal((3, R, 2, ne0)).astype(np.float32)        # [ne0, 2, R, 3]
    ctx = Context(8 << 20)
    at = put(ctx, tab, t)
    a = ctx.permute(at, 0, 2, 1, 3)                                     # [ne0, R, 2, 3]
    ids = rng.integers(0, R, size=(3, n, 2)).astype(np.int32)           # [2, n, 3]
    b = ctx.permute(put(ctx, ids), 1, 0, 2, 3)                          # [n, 2, 3]
    r = ctx.get_rows(a, b)
    assert r.ne == (ne0, n, 2, 3)
    run(ctx, r, 3)
    vals = as_type_values(tab, t)
    got = r.numpy(4)
    for k in range(3):
        for j in range(2):
            np.testing.assert_array_equal(got[k, j], vals[k, :, j][ids[k, :, j]])


# ====================================================================== cont, every layout

PLAIN = [T.F32, T.F64, T.F16, T.BF16, T.I8, T.I16, T.I32, T.I64, T.U8, T.BOOL]


def _plain_values(rng, t, shape):
    if t == T.BOOL:
        return rng.integers(0, 2, size=shape).astype(bool)
    if t == T.BF16:
        return ggml_cy.float32_to_bfloat16(rng.standard_normal(shape).astype(np.float32))
    dt = t.numpy_dtype
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt)
    return rng.standard_normal(shape).astype(dt)


@pytest.mark.parametrize("t", PLAIN, ids=lambda t: t.name)
def test_cont_every_permutation(t):
    rng = np.random.default_rng(int(t) + 1)
    ne = (5, 3, 4, 2)
    vals = _plain_values(rng, t, tuple(reversed(ne)))
    ctx = Context(16 << 20)
    src = ctx.tensor_from(vals, type=t)
    base = vals
    outs = []
    for axes in itertools.permutations(range(4)):
        v = ctx.permute(src, *axes)
        c = ctx.cont(v)
        outs.append((axes, v, c))
    g = ctx.new_graph(2048)
    for _, _, c in outs:
        g.build_forward_expand(c)
    for n_threads in (1, 3):
        g.compute(n_threads)
        for axes, v, c in outs:
            assert c.is_contiguous and c.ne == v.ne
            # permute: dim i goes to axes[i]; numpy order reversed
            np_axes = [0] * 4
            for i, ax in enumerate(axes):
                np_axes[3 - ax] = 3 - i
            want = np.ascontiguousarray(np.transpose(base, np_axes))
            got = c.raw().view(want.dtype).reshape(want.shape)
            np.testing.assert_array_equal(got.view(f"u{want.dtype.itemsize}"),
                                          want.view(f"u{want.dtype.itemsize}"),
                                          err_msg=f"{t.name} axes {axes}")


@pytest.mark.parametrize("t", [T.F32, T.F16, T.I8, T.BOOL], ids=lambda t: t.name)
def test_cont_strided_views(t):
    rng = np.random.default_rng(int(t) + 2)
    ne = (9, 7, 5, 3)
    vals = _plain_values(rng, t, tuple(reversed(ne)))
    ctx = Context(16 << 20)
    src = ctx.tensor_from(vals)
    es = src.nb[0]
    nb = src.nb
    # (ne of the view, nb1..3, offset in elements) -> the numpy slice it equals
    cases = [
        ((4, 3, 2, 2), (nb[1] * 2, nb[2] * 2, nb[3]), 1, lambda x: x[:2, :4:2, :6:2, 1:5]),
        ((9, 7, 5, 1), (nb[1], nb[2], nb[3]), 0, lambda x: x[:1]),
        ((3, 7, 1, 3), (nb[1], nb[2], nb[3]), 6, lambda x: x[:, :1, :, 6:9]),
        ((2, 2, 2, 2), (nb[1] * 3, nb[2] * 2, nb[3] * 2), 2, lambda x: x[::2, :4:2, :6:3, 2:4]),
    ]
    views = []
    for vne, vnb, off, sl in cases:
        v = ctx.view_4d(src, *vne, *vnb, offset=off * es)
        views.append((ctx.cont(ctx.transpose(v)), sl, True))
        views.append((ctx.cont(v), sl, False))
    g = ctx.new_graph()
    for c, _, _ in views:
        g.build_forward_expand(c)
    for fuse in (True, False):
        g.compute(3, fuse=fuse)
        for c, sl, tr in views:
            want = sl(vals)
            if tr:
                want = np.swapaxes(want, -1, -2)
            got = c.numpy(4)
            np.testing.assert_array_equal(got, np.ascontiguousarray(want))


def _np_permute(x, axes):
    """numpy counterpart of ggml_permute(x, *axes) on an array in numpy order (ne
    reversed): ggml dim i goes to position axes[i]."""
    np_axes = [0] * 4
    for i, ax in enumerate(axes):
        np_axes[3 - ax] = 3 - i
    return np.ascontiguousarray(np.transpose(x, np_axes))


QCONT = [T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K,
         T.Q8_1, T.TQ1_0, T.TQ2_0, T.MXFP4]


@pytest.mark.parametrize("t", QCONT, ids=lambda t: t.name)
def test_cont_quantized_layouts(t):
    # every permutation of dims 1..3 (rows of whole blocks stay rows) and a strided row
    # view: cont copies the blocks (same type) and dequantizing copies agree bitwise
    rng = np.random.default_rng(int(t) + 3)
    ne0 = 2 * t.blck_size
    ne = (ne0, 3, 4, 2)
    try:
        raw = ggml_cy.quantize(rng.standard_normal((2, 4, 3, ne0)).astype(np.float32), t)
    except (TypeError, ValueError):
        pytest.skip(f"no quantizer for {t.name}")
    ctx = Context(16 << 20)
    src = ctx.tensor_from(raw, type=t, ne=ne)
    raw4 = src.raw()                                        # (2, 4, 3, row_bytes)
    cases = []
    for axes in itertools.permutations((1, 2, 3)):
        full = (0,) + axes
        cases.append((ctx.permute(src, *full), _np_permute(raw4, full)))
    sv = ctx.view_4d(src, ne0, 2, 2, 2, src.nb[1], src.nb[2] * 2, src.nb[3],
                     offset=src.nb[1])
    cases.append((sv, np.ascontiguousarray(raw4[:, 0:4:2, 1:3])))
    pv = ctx.permute(sv, 0, 3, 1, 2)
    cases.append((pv, _np_permute(raw4[:, 0:4:2, 1:3], (0, 3, 1, 2))))
    outs = [(ctx.cont(v), ctx.cpy(v, ctx.new_tensor(T.F32, v.ne)), want) for v, want in cases]
    g = ctx.new_graph()
    for c, f, _ in outs:
        g.build_forward_expand(c)
        g.build_forward_expand(f)
    for n_threads in (1, 3):
        g.compute(n_threads)
        for c, f, want in outs:
            assert c.type == t and c.is_contiguous
            np.testing.assert_array_equal(c.raw(), want)
            deq = ggml_cy.dequantize(want, t, want.shape[:-1] + (ne0,))
            np.testing.assert_array_equal(f.numpy(4), deq)


def test_cont_quantized_transposed_is_refused():
    # a transposed quantized view has no rows of blocks: a clear error, never a crash
    ctx = Context(8 << 20)
    src = ctx.new_tensor(T.Q8_0, (64, 4))
    with pytest.raises((ValueError, TypeError)):
        c = ctx.cont(ctx.transpose(src))
        run(ctx, c, 1)


# ====================================================================== ggml_cy.flash_attn

def _sdpa_ref(q, k, v, mask, scale, softcap=0.0):
    """(B, H, Nq, D) layout reference through fa_reference's (B, Nq, H, Dv) result."""
    m = None if mask is None else np.broadcast_to(mask, mask.shape[:2] + (q.shape[2], k.shape[2]))
    return fa_reference(q, k, v, m, scale, 0.0, softcap).transpose(0, 2, 1, 3)


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("kv_dtype", [np.float16, np.float32, np.float64])
def test_eager_flash_attn(kv_dtype, n_threads):
    rng = np.random.default_rng(7)
    B, H, Hk, Nq, Nkv, D, Dv = 2, 6, 3, 5, 9, 24, 16
    q = rng.standard_normal((B, H, Nq, D))
    k = rng.standard_normal((B, Hk, Nkv, D)).astype(kv_dtype)
    v = rng.standard_normal((B, Hk, Nkv, Dv)).astype(kv_dtype)
    keep = np.tril(np.ones((Nq, Nkv), bool), Nkv - Nq)
    got = ggml_cy.flash_attn(q, k, v, keep, n_threads=n_threads)
    assert got.shape == (B, H, Nq, Dv) and got.dtype == np.float32
    kk = k.astype(np.float32 if kv_dtype == np.float64 else kv_dtype).astype(np.float64)
    vv = v.astype(np.float32 if kv_dtype == np.float64 else kv_dtype).astype(np.float64)
    add = np.where(keep, 0.0, -np.inf)[None, None]
    want = _sdpa_ref(q.astype(np.float32).astype(np.float64), kk, vv, add, 1 / np.sqrt(D))
    assert nmse(got, want) < 1e-7
    # an additive mask per head, a softcap, an explicit scale
    add = rng.uniform(-2, 0, size=(1, H, Nq, Nkv)).astype(np.float16)
    got = ggml_cy.flash_attn(q, k, v, add, scale=0.3, logit_softcap=5.0, n_threads=n_threads)
    want = _sdpa_ref(q.astype(np.float32).astype(np.float64), kk, vv,
                     add.astype(np.float64), 0.3, 5.0)
    assert nmse(got, want) < 1e-7


def test_eager_flash_attn_ranks():
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((4, 8)), rng.standard_normal((6, 8)),
               rng.standard_normal((6, 3)))
    got = ggml_cy.flash_attn(q, k, v)
    s = (q @ k.T) / np.sqrt(8)
    p = np.exp(s - s.max(1, keepdims=True))
    want = (p / p.sum(1, keepdims=True)) @ v
    assert got.shape == (4, 3) and nmse(got, want) < 1e-7
    got3 = ggml_cy.flash_attn(q[None].repeat(2, 0), k[None], v[None])
    assert got3.shape == (2, 4, 3) and nmse(got3, np.stack([want, want])) < 1e-7
    assert ggml_cy.flash_attn(q[:0], k, v).shape == (0, 3)


def test_eager_flash_attn_bad_input():
    q, k, v = np.zeros((2, 4, 8)), np.zeros((2, 5, 8)), np.zeros((2, 5, 8))
    with pytest.raises(ValueError, match="d_k"):
        ggml_cy.flash_attn(q, np.zeros((2, 5, 7)), v)
    with pytest.raises(ValueError, match="heads"):
        ggml_cy.flash_attn(np.zeros((3, 4, 8)), k, v)
    with pytest.raises(ValueError, match="keys"):
        ggml_cy.flash_attn(q, k, np.zeros((2, 6, 8)))
    with pytest.raises(ValueError, match="batch"):
        ggml_cy.flash_attn(np.zeros((2, 2, 4, 8)), np.zeros((3, 2, 5, 8)),
                           np.zeros((3, 2, 5, 8)))
    with pytest.raises(ValueError, match="dims"):
        ggml_cy.flash_attn(np.zeros(8), k, v)
    with pytest.raises(ValueError, match="broadcast"):
        ggml_cy.flash_attn(q, k, v, np.zeros((3, 5)))
    with pytest.raises(ValueError, match="ALiBi"):
        ggml_cy.flash_attn(q, k, v, max_bias=1.0)
    with pytest.raises(TypeError, match="real"):
        ggml_cy.flash_attn(q.astype(complex), k, v)
    with pytest.raises(TypeError, match="real"):
        ggml_cy.flash_attn(q, k, v, np.zeros((4, 5), complex))
    with pytest.raises(TypeError):
        ggml_cy.flash_attn(q, k, v, n_threads=0.5)
    with pytest.raises(ValueError):
        ggml_cy.flash_attn(q, k, v, n_threads=0)


def test_get_rows_i32_table():
    # ggml gathers i32 tables into i32 rows (bits copied)
    rng = np.random.default_rng(9)
    tab = rng.integers(-2**31, 2**31 - 1, size=(2, 7, 5), dtype=np.int32)   # [5, 7, 2]
    ids = rng.integers(0, 7, size=(2, 4)).astype(np.int32)                  # [4, 2]
    ctx = Context(4 << 20)
    r = ctx.get_rows(put(ctx, tab), put(ctx, ids))
    assert r.type == T.I32 and r.ne == (5, 4, 2, 1)
    run(ctx, r, 2)
    for j in range(2):
        np.testing.assert_array_equal(r.numpy(4)[0, j], tab[j][ids[j]])
    with pytest.raises(TypeError, match="k must be"):
        ctx.flash_attn_ext(ctx.new_tensor(T.F32, (5, 2)), put(ctx, tab), put(ctx, tab))


def test_kv_cache_step_on_the_backend():
    # a decode step as a model runner builds it, on a no_alloc context placed by the CPU
    # backend: set_rows writes this token's k/v into f16 caches, flash_attn_ext reads the
    # caches through views of the filled part
    from ggml_cy import backend as B
    D, H, Hk, n_ctx, pos = 16, 4, 2, 8, 5
    rng = np.random.default_rng(12)
    ctx = Context(1 << 20, no_alloc=True)
    kc = ctx.new_tensor(T.F16, (D * Hk, n_ctx))
    vc = ctx.new_tensor(T.F16, (D * Hk, n_ctx))
    kcur = ctx.new_tensor(T.F32, (D * Hk, 1))
    vcur = ctx.new_tensor(T.F32, (D * Hk, 1))
    q = ctx.new_tensor(T.F32, (D, 1, H))
    idx = ctx.new_tensor(T.I64, (1,))
    ks = ctx.set_rows(kc, kcur, idx)
    vs = ctx.set_rows(vc, vcur, idx)
    kv = ctx.permute(ctx.view_3d(ks, D, Hk, pos + 1, 2 * D, ks.nb[1]), 0, 2, 1, 3)
    vv = ctx.permute(ctx.view_3d(vs, D, Hk, pos + 1, 2 * D, vs.nb[1]), 0, 2, 1, 3)
    r = ctx.flash_attn_ext(q, kv, vv, None, 0.25, 0.0, 0.0)
    backend = B.cpu_init(2)
    B.alloc_ctx_tensors(ctx, backend)
    kvals = rng.standard_normal((n_ctx, Hk * D)).astype(np.float16)
    vvals = rng.standard_normal((n_ctx, Hk * D)).astype(np.float16)
    B.tensor_set(kc, kvals)
    B.tensor_set(vc, vvals)
    knew = rng.standard_normal((1, Hk * D)).astype(np.float32)
    vnew = rng.standard_normal((1, Hk * D)).astype(np.float32)
    qv = rng.standard_normal((H, 1, D)).astype(np.float32)
    B.tensor_set(kcur, knew)
    B.tensor_set(vcur, vnew)
    B.tensor_set(q, qv)
    B.tensor_set(idx, np.array([pos], np.int64))
    g = Context(1 << 20).new_graph().build_forward_expand(r)
    assert backend.supports_op(r) and backend.supports_op(ks)
    backend.graph_compute(g)
    kvals[pos], vvals[pos] = knew[0].astype(np.float16), vnew[0].astype(np.float16)
    np.testing.assert_array_equal(B.tensor_get(kc), kvals)
    kref = kvals[:pos + 1].astype(np.float64).reshape(pos + 1, Hk, D).transpose(1, 0, 2)[None]
    vref = vvals[:pos + 1].astype(np.float64).reshape(pos + 1, Hk, D).transpose(1, 0, 2)[None]
    want = fa_reference(qv[None].astype(np.float64), kref, vref, None, 0.25, 0.0, 0.0)
    assert nmse(B.tensor_get(r).reshape(want.shape), want) < 1e-7


@pytest.mark.parametrize("seed", range(12))
def test_flash_attn_random_configs(seed):
    # random shapes (odd sizes, GQA ratios, batches), k/v types, masks and options
    rng = np.random.default_rng(1000 + seed)
    Hk = int(rng.integers(1, 4))
    H = Hk * int(rng.integers(1, 4))
    kv_type = [T.F16, T.F32, T.BF16, T.Q8_0][seed % 4]
    D = 32 * int(rng.integers(1, 3)) if kv_type == T.Q8_0 else int(rng.integers(1, 70))
    Nkv = int(rng.integers(1, 40))
    Nq = int(rng.integers(1, Nkv + 1))
    B = int(rng.integers(1, 3))
    mask = [None, "causal", "random"][seed % 3]
    kw = dict(D=D, Nq=Nq, Nkv=Nkv, H=H, Hk=Hk, B=B, kv_type=kv_type, mask=mask,
              n_threads=int(rng.integers(1, 4)), fuse=bool(seed % 2),
              softcap=float(rng.choice([0.0, 3.0])), scale=float(rng.uniform(0.05, 1.0)))
    if mask is not None:
        kw.update(m2=int(rng.choice([1, H])), m3=int(rng.choice([1, B])),
                  mask_pad=int(rng.integers(0, 3)), max_bias=float(rng.choice([0.0, 8.0])))
    got, want = fa_case(rng, **kw)
    assert nmse(got, want) < 1e-7, kw


@pytest.mark.parametrize("t", [T.F32, T.F16, T.BF16], ids=lambda t: t.name)
def test_get_rows_transposed_table(t):
    # a table whose rows are columns of a stored matrix (nb0 = a row stride)
    rng = np.random.default_rng(int(t) + 50)
    stored = rng.standard_normal((12, 7)).astype(np.float32)     # ne [7, 12]
    ctx = Context(4 << 20)
    a = ctx.transpose(put(ctx, stored, t))                        # ne [12, 7], rows = columns
    ids = np.array([6, 0, 3, 3], np.int32)
    r = ctx.get_rows(a, put(ctx, ids))
    run(ctx, r, 2)
    np.testing.assert_array_equal(r.numpy(), as_type_values(stored, t).T[ids])


def test_cuda_library_supports_these_ops():
    # (cuops2) CUDA kernels in cuda/attn.cu and cuda/rows.cu; quantized K/V and quantized
    # set_rows destinations are refused there (supports_op says no; compute fails clearly)
    try:
        from ggml_cy.cuda import _cuda
        from ggml_cy.graph import _graph
        fa, sr = _graph.OPS["FLASH_ATTN_EXT"], _graph.OPS["SET_ROWS"]
        ok = [_cuda.supports_op(fa, int(T.F32), int(T.F32), int(T.F16)),
              _cuda.supports_op(sr, int(T.F16), int(T.F32), int(T.I64)),
              _cuda.supports_op(fa, int(T.F32), int(T.F32), int(T.Q8_0)),
              _cuda.supports_op(sr, int(T.Q8_0), int(T.F32), int(T.I64))]
    except (ImportError, OSError, RuntimeError) as e:
        pytest.skip(f"no CUDA library: {e}")
    assert ok == [True, True, False, False]
