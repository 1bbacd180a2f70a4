"""rope_ext / rope (issue 13 item 1): ggml's rotary embedding with YaRN scaling, normal and
NeoX modes, partial rotation, f32 and f16, against a float64 numpy implementation written
here from the formulas (RoFormer's rotation, YaRN's ramp and magnitude scaling as ggml
parametrizes them). Tolerance: ggml's test-backend-ops NMSE, 1e-7 for f32; f16 results
carry f16 rounding (NMSE ~1e-7 alone), so 1e-6 there. Non-contiguous inputs, threads
1/2/3, fused and unfused graphs, in-place forms, ggml's op_params layout, bad arguments."""
import math

import numpy as np
import pytest

import ggml_cy
from ggml_cy import GGMLType as T
from ggml_cy.graph import _graph
from _graph_helpers import result_of, tensor_of

NMSE_F32 = 1e-7
NMSE_F16 = 1e-6


# ----------------------------------------------------------------------------- reference
def yarn_corr_dims(n_dims, n_ctx_orig, base, beta_fast, beta_slow):
    """The pair index range [lo, hi] over which YaRN blends interpolation into
    extrapolation: the dimension d where a wavelength fits n_ctx_orig / beta times,
    solving n_ctx_orig = 2 pi beta base^(2d / n_dims) for d."""
    def dim(beta):
        return n_dims * math.log(n_ctx_orig / (2 * math.pi * beta)) / (2 * math.log(base))
    lo = max(0.0, math.floor(dim(beta_fast)))
    hi = min(n_dims - 1.0, math.ceil(dim(beta_slow)))
    return lo, hi


def rope_ref(x, pos, n_dims, mode=0, n_ctx_orig=0, base=10000.0, freq_scale=1.0,
             ext_factor=0.0, attn_factor=1.0, beta_fast=0.0, beta_slow=0.0, ff=None):
    """x: (..., tokens, heads, head) float64; pos: (tokens,). Returns float64."""
    x = np.asarray(x, np.float64)
    half = n_dims // 2
    k = np.arange(half, dtype=np.float64)
    freq = base ** (-2.0 * k / n_dims)
    if ff is not None:
        freq = freq / np.asarray(ff, np.float64)[:half]
    extrap = np.asarray(pos, np.float64)[:, None] * freq[None, :]       # (tokens, half)
    interp = freq_scale * extrap
    if ext_factor != 0.0:
        lo, hi = yarn_corr_dims(n_dims, n_ctx_orig, base, beta_fast, beta_slow)
        ramp = 1.0 - np.clip((k - lo) / max(0.001, hi - lo), 0.0, 1.0)
        mix = ramp * ext_factor
        theta = interp * (1 - mix) + extrap * mix
        mscale = attn_factor * (1.0 + 0.1 * math.log(1.0 / freq_scale))
    else:
        theta = interp
        mscale = attn_factor
    cos = (np.cos(theta) * mscale)[:, None, :]                           # (tokens, 1, half)
    sin = (np.sin(theta) * mscale)[:, None, :]
    if mode == 0:
        i0, i1 = 2 * np.arange(half), 2 * np.arange(half) + 1
    else:
        i0, i1 = np.arange(half), np.arange(half) + half
    out = x.copy()
    x0, x1 = x[..., i0], x[..., i1]
    out[..., i0] = x0 * cos - x1 * sin
    out[..., i1] = x0 * sin + x1 * cos
    return out


def nmse(got, want):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    return float(np.sum((got - want) ** 2) / max(np.sum(want ** 2), 1e-300))


# ----------------------------------------------------------------------------- graph helpers
_tensor = tensor_of
_run = result_of


def _inputs(rng, shape, dtype, n_tok, spread=300):
    x = rng.standard_normal(shape).astype(dtype)
    pos = rng.integers(-5, spread, size=n_tok).astype(np.int32)
    pos[0] = 0
    return x, pos


YARN = dict(n_ctx_orig=4096, base=10000.0, freq_scale=0.25, ext_factor=1.0,
            attn_factor=0.9, beta_fast=32.0, beta_slow=1.0)
LONG = dict(n_ctx_orig=8192, base=500000.0, freq_scale=0.125, ext_factor=0.5,
            attn_factor=1.1, beta_fast=24.0, beta_slow=2.0)


def _ext_args(n_dims, mode, p):
    return (n_dims, mode, p.get("n_ctx_orig", 0), p.get("base", 10000.0),
            p.get("freq_scale", 1.0), p.get("ext_factor", 0.0), p.get("attn_factor", 1.0),
            p.get("beta_fast", 0.0), p.get("beta_slow", 0.0))


# shape (numpy order: batch, tokens, heads, head), n_dims
SHAPES = [((1, 6, 4, 64), 64), ((1, 5, 3, 10), 6), ((1, 7, 2, 7), 4), ((2, 5, 3, 32), 32),
          ((3, 4, 1, 130), 128)]


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("params", [{}, YARN, LONG], ids=["plain", "yarn", "long"])
@pytest.mark.parametrize("mode", [0, 2], ids=["normal", "neox"])
@pytest.mark.parametrize("shape,n_dims", SHAPES, ids=[f"{s[-1]}-{n}-b{s[0]}" for s, n in SHAPES])
def test_rope_ext_f32(shape, n_dims, mode, params, n_threads):
    rng = np.random.default_rng(hash((shape, n_dims, mode)) % 2 ** 32)
    x, pos = _inputs(rng, shape, np.float32, shape[1])
    ctx = ggml_cy.Context(8 << 20)
    a, b = _tensor(ctx, x, T.F32), _tensor(ctx, pos, T.I32)
    r = ctx.rope_ext(a, b, None, *_ext_args(n_dims, mode, params))
    assert r.type == T.F32 and list(r.ne) == list(a.ne)
    got = _run(ctx, r, n_threads).reshape(shape)
    want = rope_ref(x, pos, n_dims, mode, **params)
    assert nmse(got, want) < NMSE_F32
    # the values past n_dims are copied bit for bit
    np.testing.assert_array_equal(got[..., n_dims:], x[..., n_dims:])


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("params", [{}, YARN], ids=["plain", "yarn"])
@pytest.mark.parametrize("mode", [0, 2], ids=["normal", "neox"])
@pytest.mark.parametrize("shape,n_dims", SHAPES[:3], ids=["64", "10-6", "7-4"])
def test_rope_ext_f16(shape, n_dims, mode, params, n_threads):
    rng = np.random.default_rng(7)
    x, pos = _inputs(rng, shape, np.float16, shape[1])
    ctx = ggml_cy.Context(8 << 20)
    a, b = _tensor(ctx, x, T.F16), _tensor(ctx, pos, T.I32)
    r = ctx.rope_ext(a, b, None, *_ext_args(n_dims, mode, params))
    assert r.type == T.F16
    got = _run(ctx, r, n_threads).reshape(shape)
    assert got.dtype == np.float16
    want = rope_ref(x.astype(np.float64), pos, n_dims, mode, **params)
    assert nmse(got, want) < NMSE_F16
    np.testing.assert_array_equal(got[..., n_dims:].view(np.uint16),
                                  x[..., n_dims:].view(np.uint16))


@pytest.mark.parametrize("mode", [0, 2], ids=["normal", "neox"])
@pytest.mark.parametrize("params", [{}, YARN], ids=["plain", "yarn"])
def test_rope_freq_factors(mode, params):
    rng = np.random.default_rng(3)
    shape, n_dims = (1, 9, 4, 48), 32
    x, pos = _inputs(rng, shape, np.float32, 9)
    ff = rng.uniform(1.0, 8.0, size=20).astype(np.float32)      # more than n_dims/2: ok
    ctx = ggml_cy.Context(8 << 20)
    a, b, c = _tensor(ctx, x, T.F32), _tensor(ctx, pos, T.I32), _tensor(ctx, ff, T.F32)
    r = ctx.rope_ext(a, b, c, *_ext_args(n_dims, mode, params))
    got = _run(ctx, r, 2).reshape(shape)
    assert nmse(got, rope_ref(x, pos, n_dims, mode, ff=ff, **params)) < NMSE_F32
    # and the factors matter
    assert nmse(got, rope_ref(x, pos, n_dims, mode, **params)) > 1e-3


def test_rope_shorthand_is_rope_ext_defaults_and_op_params():
    rng = np.random.default_rng(4)
    x, pos = _inputs(rng, (1, 5, 2, 16), np.float32, 5)
    ctx = ggml_cy.Context(8 << 20)
    a, b = _tensor(ctx, x, T.F32), _tensor(ctx, pos, T.I32)
    r1 = ctx.rope(a, b, 8, 2)
    r2 = ctx.rope_ext(a, b, None, 8, 2, 0, 10000.0, 1.0, 0.0, 1.0, 0.0, 0.0)
    assert r1.op == r2.op == _graph.OPS["ROPE"]
    assert list(r1.op_params) == list(r2.op_params)
    g = ctx.new_graph()
    g.build_forward_expand(r1)
    g.build_forward_expand(r2)
    g.compute(1)
    np.testing.assert_array_equal(r1.numpy(), r2.numpy())
    assert nmse(r1.numpy().reshape(x.shape), rope_ref(x, pos, 8, 2)) < NMSE_F32
    # ggml's op_params layout: [0] n_past, [1] n_dims, [2] mode, [3] n_ctx, [4] n_ctx_orig,
    # [5..10] freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow
    r3 = ctx.rope_ext(a, b, None, 8, 0, 4096, 500000.0, 0.5, 1.0, 0.75, 32.0, 1.0)
    p = list(r3.op_params)
    assert p[:5] == [0, 8, 0, 0, 4096] and p[11:] == [0] * 5
    floats = [_graph.op_params_float(r3, i) for i in range(5, 11)]
    assert floats == [500000.0, 0.5, 1.0, 0.75, 32.0, 1.0]


@pytest.mark.parametrize("mode", [0, 2], ids=["normal", "neox"])
@pytest.mark.parametrize("t", [T.F32, T.F16], ids=["f32", "f16"])
def test_rope_non_contiguous(mode, t):
    """a permuted view (tokens and heads swapped in memory) and a transposed one whose
    head values are strided (nb0 != element size: ggml's CPU kernel refuses those)."""
    rng = np.random.default_rng(5)
    dt = np.float32 if t == T.F32 else np.float16
    tol = NMSE_F32 if t == T.F32 else NMSE_F16
    n_tok, n_head, d = 6, 3, 16
    ctx = ggml_cy.Context(8 << 20)
    # memory holds [d, tokens, heads] (numpy (heads, tokens, d)); viewed as [d, heads, tokens]
    mem = rng.standard_normal((n_head, n_tok, d)).astype(dt)
    m = _tensor(ctx, mem, t)
    a = ctx.permute(m, 0, 2, 1, 3)
    assert list(a.ne[:3]) == [d, n_head, n_tok]
    pos = rng.integers(0, 200, n_tok).astype(np.int32)
    b = _tensor(ctx, pos, T.I32)
    r = ctx.rope_ext(a, b, None, 12, mode, 4096, 10000.0, 0.5, 1.0, 1.0, 32.0, 1.0)
    got = _run(ctx, r, 2).reshape(n_tok, n_head, d)
    x = mem.transpose(1, 0, 2)                                     # (tokens, heads, d)
    want = rope_ref(x, pos, 12, mode, 4096, 10000.0, 0.5, 1.0, 1.0, 32.0, 1.0)
    assert nmse(got, want) < tol
    # strided head values: memory numpy (d, tokens, heads), ne [heads, tokens, d],
    # permuted to [d, heads, tokens]: dim 0 has the largest stride
    mem2 = rng.standard_normal((d, n_tok, n_head)).astype(dt)
    m2 = _tensor(ctx, mem2, t)
    v = ctx.permute(m2, 1, 2, 0, 3)
    assert list(v.ne[:3]) == [d, n_head, n_tok] and v.nb[0] != np.dtype(dt).itemsize
    r2 = ctx.rope_ext(v, b, None, 16, mode)
    got2 = _run(ctx, r2, 3).reshape(n_tok, n_head, d)
    x2 = mem2.transpose(1, 2, 0)
    assert nmse(got2, rope_ref(x2, pos, 16, mode)) < tol


@pytest.mark.parametrize("fuse", [True, False])
def test_rope_in_a_graph_with_elementwise_ops(fuse):
    """rope between elementwise nodes (the fused executor groups those around it), and
    the in-place forms (the result overlaps a: computed through a temporary)."""
    rng = np.random.default_rng(6)
    x, pos = _inputs(rng, (1, 8, 4, 32), np.float32, 8)
    ctx = ggml_cy.Context(8 << 20)
    a, b = _tensor(ctx, x, T.F32), _tensor(ctx, pos, T.I32)
    s = ctx.scale(a, 2.0)
    r = ctx.rope_ext(s, b, None, 32, 2, 0, 10000.0, 1.0, 0.0, 1.0, 0.0, 0.0)
    out = ctx.add(r, a)
    got = _run(ctx, out, 3, fuse=fuse).reshape(x.shape)
    want = rope_ref(2.0 * x.astype(np.float64), pos, 32, 2) + x
    assert nmse(got, want) < NMSE_F32
    # in place: the result is a view of a, written into a's memory
    ctx2 = ggml_cy.Context(8 << 20)
    a2, b2 = _tensor(ctx2, x, T.F32), _tensor(ctx2, pos, T.I32)
    ri = ctx2.rope_ext_inplace(a2, b2, None, 16, 0)
    assert ri.view_src is not None
    g2 = ctx2.new_graph()
    g2.build_forward_expand(ri)
    assert [s[0] for s in g2.plan(2, fuse=fuse).steps] == ["node"]   # no temporary copy
    _run(ctx2, ri, 2, fuse=fuse)
    assert nmse(a2.numpy().reshape(x.shape), rope_ref(x, pos, 16, 0)) < NMSE_F32
    ctx3 = ggml_cy.Context(8 << 20)
    a3, b3 = _tensor(ctx3, x, T.F32), _tensor(ctx3, pos, T.I32)
    _run(ctx3, ctx3.rope_inplace(a3, b3, 32, 2), 1, fuse=fuse)
    assert nmse(a3.numpy().reshape(x.shape), rope_ref(x, pos, 32, 2)) < NMSE_F32


def test_rope_large_positions_and_single_token():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 1, 8, 128)).astype(np.float32)
    for p in (0, 1, 4095, 32767):
        pos = np.array([p], np.int32)
        got = ggml_cy.rope(x[0], pos, mode="neox")
        # float32 angles of ggml's running product: NMSE grows with the position
        assert nmse(got, rope_ref(x[0], pos, 128, 2)) < (NMSE_F32 if p < 5000 else 1e-5)


# ----------------------------------------------------------------------------- eager
@pytest.mark.parametrize("n_threads", [1, 2])
def test_eager_rope(n_threads):
    rng = np.random.default_rng(9)
    x, pos = _inputs(rng, (2, 5, 3, 24), np.float32, 5)
    got = ggml_cy.rope(x, pos, 16, mode="neox", freq_base=5000.0, freq_scale=0.5,
                       ext_factor=1.0, attn_factor=1.0, beta_fast=32.0, beta_slow=1.0,
                       n_ctx_orig=2048, n_threads=n_threads)
    assert got.shape == x.shape and got.dtype == np.float32
    want = rope_ref(x, pos, 16, 2, 2048, 5000.0, 0.5, 1.0, 1.0, 32.0, 1.0)
    assert nmse(got, want) < NMSE_F32
    # 3-D input, default n_dims (whole head), normal mode, freq factors
    ff = rng.uniform(1, 4, 12)
    got3 = ggml_cy.rope(x[1], pos, freq_factors=ff)
    assert nmse(got3, rope_ref(x[1], pos, 24, 0, ff=ff)) < NMSE_F32
    # float16 stays float16; a non-contiguous input is fine
    h = x.astype(np.float16)[:, ::-1]
    got16 = ggml_cy.rope(h, pos, mode=2)
    assert got16.dtype == np.float16
    assert nmse(got16, rope_ref(h.astype(np.float64), pos, 24, 2)) < NMSE_F16
    # float64 is computed in float32
    got64 = ggml_cy.rope(x.astype(np.float64), pos)
    assert got64.dtype == np.float32


def test_eager_rope_bad_arguments():
    x = np.zeros((4, 2, 8), np.float32)
    pos = np.arange(4)
    with pytest.raises(ValueError, match="shape"):
        ggml_cy.rope(np.zeros((4, 8), np.float32), pos)
    with pytest.raises(ValueError, match="one per token"):
        ggml_cy.rope(x, np.arange(3))
    with pytest.raises(TypeError, match="integers"):
        ggml_cy.rope(x, np.arange(4.0))
    with pytest.raises(TypeError, match="real"):
        ggml_cy.rope(x.astype(np.complex64), pos)
    with pytest.raises(ValueError, match="mode"):
        ggml_cy.rope(x, pos, mode="glm")
    with pytest.raises(ValueError, match="n_dims"):
        ggml_cy.rope(x, pos, 9)
    with pytest.raises(ValueError, match="n_dims"):
        ggml_cy.rope(x, pos, 10)
    with pytest.raises(ValueError, match="int32"):
        ggml_cy.rope(x, np.array([0, 1, 2, 2 ** 40]))
    with pytest.raises(ValueError, match="freq factors"):
        ggml_cy.rope(x, pos, freq_factors=np.ones(3))
    with pytest.raises(ValueError):
        ggml_cy.rope(x, pos, n_threads=0)


# ----------------------------------------------------------------------------- bad arguments
def test_rope_builder_bad_arguments():
    ctx = ggml_cy.Context(4 << 20)
    a = ctx.new_tensor(T.F32, (16, 2, 5))
    b = ctx.new_tensor(T.I32, (5,))
    with pytest.raises(TypeError, match="f32 or f16"):
        ctx.rope_ext(ctx.new_tensor(T.I32, (16, 2, 5)), b, None, 16)
    with pytest.raises(TypeError, match="f32 or f16"):
        ctx.rope_ext(ctx.new_tensor(T.Q8_0, (32, 2, 5)), b, None, 16)
    with pytest.raises(TypeError, match="i32 vector"):
        ctx.rope_ext(a, ctx.new_tensor(T.F32, (5,)), None, 16)
    with pytest.raises(TypeError, match="i32 vector"):
        ctx.rope_ext(a, ctx.new_tensor(T.I32, (5, 2)), None, 16)
    with pytest.raises(ValueError, match="one position per token"):
        ctx.rope_ext(a, ctx.new_tensor(T.I32, (4,)), None, 16)
    for bad in (0, -2, 7, 18):
        with pytest.raises(ValueError, match="n_dims"):
            ctx.rope_ext(a, b, None, bad)
    with pytest.raises(TypeError, match="n_dims"):
        ctx.rope_ext(a, b, None, 16.0)
    with pytest.raises(TypeError, match="n_dims"):
        ctx.rope_ext(a, b, None)
    with pytest.raises(ValueError, match="no longer supported"):
        ctx.rope_ext(a, b, None, 16, 1)
    for bad_mode in (8, 24, 40, 4):
        with pytest.raises(ValueError, match="mode"):
            ctx.rope_ext(a, b, None, 16, bad_mode)
    with pytest.raises(TypeError, match="freq factors"):
        ctx.rope_ext(a, b, ctx.new_tensor(T.F16, (8,)), 16)
    with pytest.raises(ValueError, match="freq factors"):
        ctx.rope_ext(a, b, ctx.new_tensor(T.F32, (7,)), 16)
    with pytest.raises(ValueError, match="n_ctx_orig"):
        ctx.rope_ext(a, b, None, 16, 0, -1)
    with pytest.raises(TypeError, match="freq_base"):
        ctx.rope_ext(a, b, None, 16, 0, 0, "big")
    with pytest.raises(TypeError, match="Tensor"):
        ctx.rope_ext(np.zeros((5, 2, 16), np.float32), b, None, 16)
    with pytest.raises(TypeError, match="Tensor"):
        ctx.rope(a, np.arange(5), 16)
    # nothing was recorded by the failed calls: a good call still works
    r = ctx.rope(a, b, 16)
    assert r.op == _graph.OPS["ROPE"]


def test_rope_has_no_cuda_kernel_row():
    from ggml_cy.core import optable
    assert optable.BY_NAME["ROPE"].cuda != ()   # (cuops2) cuda/rope.cu
    # the shape/sort ops have CUDA kernels (cuda/shape.cu, tests/test_cuda_ops_nn.py)
    for name in ("CONCAT", "REPEAT", "PAD"):
        assert optable.BY_NAME[name].cuda == ("any",)
    for name in ("ARGSORT", "TOP_K", "ARGMAX"):
        assert optable.BY_NAME[name].cuda == ("f32",)
