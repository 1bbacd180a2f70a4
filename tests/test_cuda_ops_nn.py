"""Issue 13's ops on the CUDA backend (cuda/nn.cu, cuda/shape.cu) against the CPU backend:
each graph is built twice in a no_alloc context, placed on the CPU backend and on the CUDA
backend (ggml_cy.backend alloc_ctx_tensors / tensor_set / graph_compute / tensor_get), and
the results compared:

* bitwise: DIAG_MASK_INF, CONCAT, REPEAT, PAD, ARGSORT, TOP_K, ARGMAX (exact ops);
* ggml's normalized mean squared error (test-backend-ops: NMSE <= 1e-7) plus an elementwise
  bound: NORM, RMS_NORM, GROUP_NORM (double sums in another order), SOFT_MAX (CUDA's
  expf), GLU (the activations in double, rounded once, on both sides).

The largest NMSE seen per op is written to $GGML_CY_NMSE_JSON when set (device rounds).
Tests that need no device (the library's answers about nodes) run everywhere the library
was built."""
import atexit
import json
import os

import numpy as np
import pytest

import ggml_cy
from ggml_cy import backend
from ggml_cy.core import optable

T = ggml_cy.GGMLType
RNG = np.random.default_rng(13)
_NMSE = {}


def _record_nmse(op, v):
    _NMSE[op] = max(_NMSE.get(op, 0.0), float(v))


@atexit.register
def _write_nmse():
    path = os.environ.get("GGML_CY_NMSE_JSON")
    if path and _NMSE:
        with open(path, "w") as f:
            json.dump(_NMSE, f, indent=1, sort_keys=True)


def _cuda_lib():
    return pytest.importorskip("ggml_cy.cuda._cuda", reason="built without the CUDA library")


_BE = {}


def _cuda_backend():
    import ggml_cy.cuda as gcuda
    if not gcuda.is_available():
        pytest.skip("no CUDA device")
    if "cuda" not in _BE:
        _BE["cuda"] = gcuda.cuda_init()
    return _BE["cuda"]


def _run(be, inputs, build, repeat=1):
    """inputs: [(numpy array, ggml type)]; build(ctx, *tensors) -> result tensor(s).
    Returns the results (numpy) after `repeat` graph_compute calls."""
    ctx = ggml_cy.Context(mem_size=8 << 20, no_alloc=True)
    ts = [ctx.new_tensor(t, tuple(reversed(a.shape))) for a, t in inputs]
    outs = build(ctx, *ts)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    g = ctx.new_graph()
    for o in outs:
        g.build_forward_expand(o)
    buf = backend.alloc_ctx_tensors(ctx, be)
    for (a, _), t in zip(inputs, ts):
        backend.tensor_set(t, a)
    for _ in range(repeat):
        be.graph_compute(g)
    res = [backend.tensor_get(o) for o in outs]
    del buf
    return res


def _both(inputs, build, repeat=2):
    cuda = _cuda_backend()
    want = _run(backend.cpu_init(2), inputs, build)
    got = _run(cuda, inputs, build, repeat=repeat)   # the 2nd call replays a captured graph
    return got, want


def _bitwise(got, want):
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        gu = np.ascontiguousarray(g).view(f"u{g.dtype.itemsize}")
        wu = np.ascontiguousarray(w).view(f"u{w.dtype.itemsize}")
        bad = np.flatnonzero(gu.ravel() != wu.ravel())
        assert bad.size == 0, (f"{bad.size} of {g.size} differ; first at {bad[0]}: "
                               f"got {g.ravel()[bad[0]]!r}, want {w.ravel()[bad[0]]!r}")


def _nmse(op, got, want, rtol=None, nmse_max=1e-7):
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        g64, w64 = g.astype(np.float64).ravel(), w.astype(np.float64).ravel()
        fin = np.isfinite(w64)
        # non-finite results (masked rows, -inf) must agree exactly
        np.testing.assert_array_equal(np.isfinite(g64), fin)
        np.testing.assert_array_equal(g64[~fin], w64[~fin])
        if not fin.any():
            continue
        d = g64[fin] - w64[fin]
        den = float(np.sum(w64[fin] ** 2))
        err = float(np.sum(d ** 2)) / den if den > 0 else float(np.sum(d ** 2))
        _record_nmse(op, err)
        assert err <= nmse_max, (op, err)
        if rtol is None:
            rtol = {np.float32: 2e-6, np.float64: 1e-13, np.float16: 2e-3}[g.dtype.type]
        np.testing.assert_allclose(g64[fin], w64[fin], rtol=rtol,
                                   atol=rtol * max(1.0, float(np.max(np.abs(w64[fin])))))


def _np(t):
    return {T.F32: np.float32, T.F64: np.float64, T.F16: np.float16, T.I32: np.int32,
            T.I8: np.int8, T.BF16: np.uint16}[t]


def _rand(shape, t, scale=1.0):
    if t in (T.F32, T.F64, T.F16):
        return (RNG.standard_normal(shape) * scale).astype(_np(t))
    if t == T.I32:
        return RNG.integers(-1000, 1000, shape).astype(np.int32)
    if t == T.I8:
        return RNG.integers(-128, 127, shape).astype(np.int8)
    raise ValueError(t)


COLS = [1, 7, 33, 1000, 4097]
FD = [T.F32, T.F64]


# ------------------------------------------------------------------ no device needed
def test_library_answers_per_node():
    _cuda = _cuda_lib()
    ctx = ggml_cy.Context(mem_size=1 << 20, no_alloc=True)
    a = ctx.new_tensor(T.F32, (8, 4))
    h = ctx.new_tensor(T.F16, (8, 4))
    i = ctx.new_tensor(T.I32, (8, 4))
    m = ctx.new_tensor(T.F16, (8, 4))
    yes = [ctx.rms_norm(a, 1e-5), ctx.norm(a, 1e-5), ctx.group_norm(a, 1, 1e-5),
           ctx.soft_max_ext(a, m, 0.5, 0.0), ctx.soft_max(a), ctx.diag_mask_inf(a, 0),
           ctx.swiglu(a), ctx.geglu_split(h, h), ctx.concat(i, i, 1), ctx.repeat(h, ctx.new_tensor(T.F16, (16, 8))),
           ctx.pad_ext_circular(i, 1, 2, 0, 1), ctx.argsort(a, 1), ctx.top_k(a, 3), ctx.argmax(a)]
    for t in yes:
        assert _cuda.supports_node(t), t.op
    # a TOP_K of a long row with a large k: no kernel (clear refusal)
    long = ctx.new_tensor(T.F32, (20000, 2))
    assert not _cuda.supports_node(ctx.top_k(long, 9000))
    assert _cuda.supports_node(ctx.top_k(long, 8192))
    assert _cuda.supports_node(ctx.argsort(long))


def test_table_column_matches_library():
    _cuda = _cuda_lib()
    for name in ("NORM", "RMS_NORM", "GROUP_NORM", "DIAG_MASK_INF", "SOFT_MAX", "GLU",
                 "CONCAT", "REPEAT", "PAD", "ARGSORT", "TOP_K", "ARGMAX"):
        o = optable.BY_NAME[name]
        assert o.cuda, name
        op = optable.number(name)
        if name in ("ARGSORT", "TOP_K", "ARGMAX"):
            assert _cuda.supports_op(op, int(T.I32), int(T.F32), -1)
            assert not _cuda.supports_op(op, int(T.I32), int(T.F16), -1)
            continue
        src1 = int(T.F32) if name == "CONCAT" else -1
        assert _cuda.supports_op(op, int(T.F32), int(T.F32), src1)


# ------------------------------------------------------------------ norms
@pytest.mark.gpu
@pytest.mark.parametrize("t", FD, ids=lambda t: t.name)
@pytest.mark.parametrize("ne0", COLS)
@pytest.mark.parametrize("op", ["norm", "rms_norm"])
def test_norms(op, ne0, t):
    x = _rand((3, 2, ne0), t, 3.0) + 0.5
    got, want = _both([(x, t)], lambda c, a: getattr(c, op)(a, 1e-5))
    _nmse(op, got, want)


@pytest.mark.gpu
@pytest.mark.parametrize("op", ["norm", "rms_norm"])
def test_norms_4d_strided_inplace(op):
    x = _rand((3, 4, 5, 33), T.F32)
    def build(c, a):
        p = c.permute(a, 1, 0, 2, 3)          # rows strided (ne0 = 5 along a's dim 1)
        v = c.view_4d(a, 16, 5, 4, 3, a.nb[1], a.nb[2], a.nb[3], 4)   # row slices
        return (getattr(c, op)(p, 1e-6), getattr(c, op)(v, 1e-6),
                getattr(c, op + "_inplace")(c.cont(p), 1e-6))
    got, want = _both([(x, T.F32)], build)
    _nmse(op, got, want)


@pytest.mark.gpu
@pytest.mark.parametrize("t", FD, ids=lambda t: t.name)
@pytest.mark.parametrize("shape,groups", [((2, 6, 5, 7), 4), ((1, 32, 16, 16), 8),
                                          ((1, 3, 1, 1000), 2)])
def test_group_norm(shape, groups, t):
    x = _rand(shape, t, 2.0) + 1.0
    got, want = _both([(x, t)], lambda c, a: (c.group_norm(a, groups, 1e-6),
                                              c.group_norm(c.permute(a, 1, 0, 2, 3), groups, 1e-6)))
    _nmse("group_norm", got, want)


# ------------------------------------------------------------------ soft_max
def _causal(n_kv, n_q, dtype):
    m = np.zeros((n_q, n_kv), np.float32)
    m[np.triu_indices(n_q, 1, n_kv)] = -np.inf
    return m.astype(dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("t", FD, ids=lambda t: t.name)
@pytest.mark.parametrize("ne0", COLS)
def test_soft_max_plain(ne0, t):
    x = _rand((2, 3, ne0), t, 4.0)
    got, want = _both([(x, t)], lambda c, a: (c.soft_max(a), c.soft_max_ext(a, None, 0.3)))
    _nmse("soft_max", got, want)


@pytest.mark.gpu
@pytest.mark.parametrize("mt", [T.F32, T.F16], ids=lambda t: t.name)
@pytest.mark.parametrize("max_bias", [0.0, 8.0])
@pytest.mark.parametrize("shape,mshape", [((2, 4, 7, 33), (1, 2, 9, 33)),
                                          ((1, 8, 16, 1000), (1, 1, 16, 1000)),
                                          ((1, 6, 5, 4097), (1, 3, 5, 4097)),
                                          ((1, 1, 1, 1), (1, 1, 1, 1))])
def test_soft_max_mask_alibi(shape, mshape, max_bias, mt):
    x = _rand(shape, T.F32, 3.0)
    m = _rand(mshape, mt, 2.0)
    m[..., ::3] = -np.inf                  # masked columns; every row keeps some
    m[..., 0] = 0
    got, want = _both([(x, T.F32), (m, mt)],
                      lambda c, a, mm: c.soft_max_ext(a, mm, 0.125, max_bias))
    _nmse("soft_max", got, want)


@pytest.mark.gpu
def test_soft_max_strided_f64_inplace():
    x = _rand((3, 40, 17), T.F64, 2.0)
    m = _causal(40, 17, np.float32)
    def build(c, a, mm):
        p = c.permute(a, 1, 0, 2, 3)        # rows of 40, strided
        return (c.soft_max_ext(p, None, 0.5), c.soft_max_ext(p, mm, 0.7),
                c.soft_max_ext_inplace(c.cont(c.permute(a, 1, 0, 2, 3)), None, 2.0))
    got, want = _both([(x, T.F64), (m, T.F32)], build)
    _nmse("soft_max", got, want)


# ------------------------------------------------------------------ diag_mask_inf
@pytest.mark.gpu
@pytest.mark.parametrize("t", FD, ids=lambda t: t.name)
@pytest.mark.parametrize("n_past", [0, 3])
def test_diag_mask_inf(n_past, t):
    x = _rand((2, 3, 9, 33), t)
    got, want = _both([(x, t)], lambda c, a: (c.diag_mask_inf(a, n_past),
                                              c.diag_mask_inf(c.permute(a, 1, 0, 2, 3), n_past),
                                              c.diag_mask_inf_inplace(c.cont(a), n_past)))
    _bitwise(got, want)


# ------------------------------------------------------------------ GLU
GLU = ["reglu", "geglu", "swiglu", "geglu_erf", "geglu_quick"]


@pytest.mark.gpu
@pytest.mark.parametrize("t", [T.F32, T.F16, T.F64], ids=lambda t: t.name)
@pytest.mark.parametrize("ne0", [2, 66, 8194])
@pytest.mark.parametrize("name", GLU)
def test_glu_forms(name, ne0, t):
    x = _rand((2, 3, ne0), t, 3.0)
    g = _rand((2, 3, ne0 // 2), t, 2.0)
    def build(c, a, b):
        half = c.view_4d(a, ne0 // 2, a.ne[1], a.ne[2], a.ne[3], a.nb[1], a.nb[2], a.nb[3], 0)
        return (getattr(c, name)(a), getattr(c, name + "_swapped")(a),
                getattr(c, name + "_split")(half, b))
    got, want = _both([(x, t), (g, t)], build)
    _nmse("glu", got, want, rtol={T.F32: 1e-6, T.F16: 1e-3, T.F64: 1e-13}[t])


@pytest.mark.gpu
def test_glu_strided_sources():
    x = _rand((4, 6, 40), T.F32, 3.0)
    def build(c, a):
        p = c.permute(a, 1, 0, 2, 3)              # [6 -> ne0 ... ] rows strided
        q = c.permute(a, 1, 0, 2, 3)
        return (c.swiglu(p), c.geglu_split(p, q), c.reglu_swapped(c.permute(a, 2, 1, 0, 3)))
    got, want = _both([(x, T.F32)], build)
    _nmse("glu", got, want, rtol=1e-6)


# ------------------------------------------------------------------ concat / repeat / pad
@pytest.mark.gpu
@pytest.mark.parametrize("t", [T.F32, T.F16, T.I32, T.I8, T.F64], ids=lambda t: t.name)
@pytest.mark.parametrize("dim", [0, 1, 2, 3])
def test_concat(dim, t):
    a = _rand((2, 3, 4, 33), t)
    bshape = [2, 3, 4, 33]
    bshape[3 - dim] = 5
    b = _rand(tuple(bshape), t)
    def build(c, x, y):
        out = [c.concat(x, y, dim)]
        if dim == 0:
            out.append(c.concat(c.permute(x, 1, 0, 2, 3), c.permute(x, 1, 0, 2, 3), 0))
        return out
    got, want = _both([(a, t), (b, t)], build)
    _bitwise(got, want)


@pytest.mark.gpu
@pytest.mark.parametrize("t", [T.F32, T.F16, T.I8], ids=lambda t: t.name)
def test_repeat(t):
    a = _rand((1, 2, 3, 7), t)
    def build(c, x):
        return (c.repeat_4d(x, 21, 6, 4, 3), c.repeat(c.permute(x, 1, 0, 2, 3),
                                                      c.new_tensor(t, (9, 21, 4, 2))))
    got, want = _both([(a, t)], build)
    _bitwise(got, want)


@pytest.mark.gpu
@pytest.mark.parametrize("t", [T.F32, T.F16, T.I32], ids=lambda t: t.name)
def test_pad(t):
    a = _rand((2, 3, 5, 33), t)
    def build(c, x):
        return (c.pad(x, 3, 2, 1, 1), c.pad_ext(x, 1, 2, 3, 0, 0, 4, 1, 1),
                c.pad_circular(x, 40, 2, 7, 1), c.pad_ext_circular(x, 35, 2, 1, 6, 2, 0, 1, 3),
                c.pad_ext(c.permute(x, 1, 0, 2, 3), 2, 2, 1, 1))
    got, want = _both([(a, t)], build)
    _bitwise(got, want)


# ------------------------------------------------------------------ sorts
def _sort_input(rows, ne0):
    x = RNG.standard_normal((rows, ne0)).astype(np.float32)
    x[:, ::5] = np.round(x[:, ::5])                # ties
    if ne0 > 3:
        x[0, 1] = np.nan
        x[0, 2] = -0.0
        x[0, 3] = 0.0
        x[-1, -1] = np.inf
        x[-1, 0] = -np.inf
    return x


@pytest.mark.gpu
@pytest.mark.parametrize("ne0", COLS + [16384, 20000, 70001])
def test_argsort(ne0):
    x = _sort_input(3, ne0)
    got, want = _both([(x, T.F32)], lambda c, a: (c.argsort(a, 0), c.argsort(a, 1)))
    _bitwise(got, want)


@pytest.mark.gpu
def test_argsort_4d_strided():
    x = RNG.integers(-4, 4, (2, 3, 5, 40)).astype(np.float32)   # many ties
    got, want = _both([(x, T.F32)], lambda c, a: (c.argsort(c.permute(a, 1, 0, 2, 3), 1),
                                                  c.argsort(a, 0)))
    _bitwise(got, want)


@pytest.mark.gpu
@pytest.mark.parametrize("ne0,k", [(1, 1), (7, 3), (1000, 1), (1000, 64), (1000, 100),
                                   (4097, 4097), (20000, 5), (20000, 100), (70001, 8192)])
def test_top_k(ne0, k):
    x = _sort_input(4, ne0)
    got, want = _both([(x, T.F32)], lambda c, a: c.top_k(a, k))
    _bitwise(got, want)


@pytest.mark.gpu
@pytest.mark.parametrize("ne0", COLS + [100000])
def test_argmax(ne0):
    x = _sort_input(6, ne0)
    if ne0 > 8:
        x[1, 4] = np.nan                              # NaN resets the running maximum
        x[2, :] = np.nan                              # all NaN: 0
        x[3, -1] = np.nan                             # trailing NaN
        x[4, :] = -np.inf                             # ties: the last index
        x[5, 3] = x[5, 7] = 50.0
    got, want = _both([(x, T.F32)], lambda c, a: (c.argmax(a), c.argmax(c.transpose(
        c.cont(c.transpose(a))))))
    _bitwise(got, want)


# ------------------------------------------------------------------ refusals, mixed graph
@pytest.mark.gpu
def test_refusals_are_clear():
    from ggml_cy.cuda import _cuda
    be = _cuda_backend()
    ctx = ggml_cy.Context(mem_size=1 << 20, no_alloc=True)
    a = ctx.new_tensor(T.F32, (20000, 2))
    r = ctx.top_k(a, 9000)
    assert not be.supports_op(r)
    g = ctx.new_graph()
    g.build_forward_expand(r)
    buf = backend.alloc_ctx_tensors(ctx, be)
    with pytest.raises(TypeError, match="TOP_K"):
        be.graph_compute(g)
    del buf
    assert isinstance(_cuda.OPS, dict)


@pytest.mark.gpu
def test_mini_transformer_block():
    d, n, f = 64, 16, 96
    x = _rand((n, d), T.F32)
    w = (1.0 + 0.1 * _rand((d,), T.F32)).astype(np.float32)
    wup = (0.1 * _rand((2 * f, d), T.F32)).astype(np.float32)
    mask = _causal(n, n, np.float16)
    def build(c, xx, ww, wu, mm):
        h = c.mul(c.rms_norm(xx, 1e-5), ww)                 # [d, n]
        kq = c.mul_mat(h, h)                                  # [n, n]
        att = c.soft_max_ext(kq, mm, 1.0 / 8.0, 0.0)
        up = c.mul_mat(wu, h)                                 # [2f, n]
        return att, c.swiglu(up)
    got, want = _both([(x, T.F32), (w, T.F32), (wup, T.F32), (mask, T.F16)], build, repeat=3)
    _nmse("block", got, want, rtol=1e-4)
