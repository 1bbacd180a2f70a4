"""concat / repeat / pad (pad_ext, circular) / argsort / top_k / argmax (issue 13 item 1):
numpy is the oracle, bitwise (these ops move values or compute indices: no rounding).
Types, 4-D and odd shapes, non-contiguous inputs, threads 1/2/3, fused and unfused
graphs, ties and NaN in the sorts, ggml's argmax tie rule, bad arguments."""
import numpy as np
import pytest

import ggml_cy
from ggml_cy import GGMLType as T
from ggml_cy.graph import _graph
from _graph_helpers import result_of, tensor_of

NP = {T.F32: np.float32, T.F16: np.float16, T.I32: np.int32, T.I16: np.int16,
      T.I8: np.int8, T.F64: np.float64}


_tensor = tensor_of
_run = result_of


def _rand(rng, shape, t):
    if t in (T.I32, T.I16, T.I8):
        return rng.integers(-100, 100, size=shape).astype(NP[t])
    return rng.standard_normal(shape).astype(NP[t])


def _bits(x):
    x = np.ascontiguousarray(x)
    return x.view(f"u{x.dtype.itemsize}")


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.size == want.size:       # Tensor.numpy() drops ggml's outer size-1 dims
        got = got.reshape(want.shape)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
    np.testing.assert_array_equal(_bits(got), _bits(want))


def _transposed(ctx, x, t):
    """A non-contiguous tensor holding x (numpy 4-D): stored transposed (dims 0 and 1 of
    ggml swapped in memory), viewed back with ggml's transpose."""
    mem = np.ascontiguousarray(np.swapaxes(x, -1, -2))
    m = _tensor(ctx, mem, t)
    v = ctx.transpose(m)
    assert not v.is_contiguous or min(x.shape[-2:]) == 1
    return v


TYPES = [T.F32, T.F16, T.I32, T.I8, T.F64]
TID = [t.name for t in TYPES]


# ----------------------------------------------------------------------------- concat
@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("dim", [0, 1, 2, 3])
@pytest.mark.parametrize("t", TYPES, ids=TID)
def test_concat(t, dim, n_threads):
    rng = np.random.default_rng(dim * 10 + int(t))
    base = [3, 5, 4, 7]                    # ggml ne
    nea, neb = list(base), list(base)
    neb[dim] = 2 + dim
    a = _rand(rng, tuple(reversed(nea)), t)
    b = _rand(rng, tuple(reversed(neb)), t)
    ctx = ggml_cy.Context(8 << 20)
    ta = _tensor(ctx, a, t)
    tb = _transposed(ctx, b, t) if dim != 0 else _tensor(ctx, b, t)
    r = ctx.concat(ta, tb, dim)
    assert r.type == t and r.op == _graph.OPS["CONCAT"]
    _same(_run(ctx, r, n_threads), np.concatenate([a, b], axis=3 - dim))


def test_concat_non_contiguous_both_and_fuse():
    rng = np.random.default_rng(1)
    mem = rng.standard_normal((2, 3, 10, 4)).astype(np.float32)
    b = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    a = mem[:, :, ::2, :]
    for fuse in (True, False):
        ctx = ggml_cy.Context(8 << 20)
        tm, tb = _tensor(ctx, mem, T.F32), _tensor(ctx, b, T.F32)
        # every other row of mem (nb1 doubled)
        sa = ctx.view_4d(tm, 4, 5, 3, 2, tm.nb[1] * 2, tm.nb[2], tm.nb[3], 0)
        r = ctx.add(ctx.concat(sa, ctx.scale(tb, 2.0), 0), ctx.concat(sa, tb, 0))
        got = _run(ctx, r, 2, fuse=fuse)
        want = np.concatenate([a, 2 * b], 3) + np.concatenate([a, b], 3)
        np.testing.assert_array_equal(got, want)


def test_concat_bad_arguments():
    ctx = ggml_cy.Context(4 << 20)
    a = ctx.new_tensor(T.F32, (3, 4))
    with pytest.raises(ValueError, match="ne\\[0\\]"):
        ctx.concat(a, ctx.new_tensor(T.F32, (2, 4)), 1)
    with pytest.raises(TypeError, match="one type"):
        ctx.concat(a, ctx.new_tensor(T.F16, (3, 4)), 0)
    for bad in (-1, 4):
        with pytest.raises(ValueError, match="dim"):
            ctx.concat(a, a, bad)
    with pytest.raises(TypeError, match="dim"):
        ctx.concat(a, a, 1.0)
    with pytest.raises(TypeError, match="quantized"):
        q = ctx.new_tensor(T.Q8_0, (32, 2))
        ctx.concat(q, q, 1)
    with pytest.raises(TypeError, match="Tensor"):
        ctx.concat(a, np.zeros((4, 3), np.float32))


# ----------------------------------------------------------------------------- repeat
REPS = [((3, 1, 1, 1), (6, 2, 1, 1)), ((2, 3, 1, 2), (4, 3, 5, 2)), ((5, 1, 2, 1), (5, 4, 2, 3)),
        ((1, 1, 1, 1), (7, 3, 2, 1)), ((4, 3, 2, 1), (4, 3, 2, 1))]


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("nes", REPS, ids=[f"{a}-{b}" for a, b in REPS])
@pytest.mark.parametrize("t", [T.F32, T.F16, T.I32, T.I16], ids=lambda t: t.name)
def test_repeat(t, nes, n_threads):
    nea, neb = nes
    rng = np.random.default_rng(sum(nea))
    a = _rand(rng, tuple(reversed(nea)), t)
    ctx = ggml_cy.Context(8 << 20)
    ta = _tensor(ctx, a, t)
    tb = ctx.new_tensor(T.F32, neb)                 # only its shape counts
    r = ctx.repeat(ta, tb)
    assert r.type == t and list(r.ne) == list(neb)
    reps = tuple(nb // na for na, nb in zip(reversed(nea), reversed(neb)))
    _same(_run(ctx, r, n_threads), np.tile(a, reps))
    r4 = ctx.repeat_4d(_transposed(ctx, a, t), *neb)
    _same(_run(ctx, r4, n_threads), np.tile(a, reps))


def test_repeat_bad_arguments():
    ctx = ggml_cy.Context(4 << 20)
    a = ctx.new_tensor(T.F32, (3, 2))
    with pytest.raises(ValueError, match="tiled"):
        ctx.repeat(a, ctx.new_tensor(T.F32, (4, 2)))
    with pytest.raises(ValueError, match="tiled"):
        ctx.repeat_4d(a, 6, 3, 1, 1)
    with pytest.raises(ValueError, match="negative"):
        ctx.repeat_4d(a, -3, 2, 1, 1)
    with pytest.raises(TypeError, match="quantized"):
        ctx.repeat(ctx.new_tensor(T.Q4_0, (32, 1)), ctx.new_tensor(T.F32, (32, 4)))
    with pytest.raises(TypeError):
        ctx.repeat(a, (6, 2))


# ----------------------------------------------------------------------------- pad
PADS = [(0, 2, 0, 0, 0, 0, 0, 0), (1, 2, 3, 0, 0, 1, 2, 1), (0, 0, 0, 0, 0, 0, 0, 0),
        (4, 0, 0, 5, 2, 2, 0, 0), (2, 7, 1, 4, 0, 0, 1, 0)]


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("pads", PADS, ids=[str(p) for p in PADS])
@pytest.mark.parametrize("t", [T.F32, T.F16, T.I32], ids=lambda t: t.name)
def test_pad_ext(t, pads, n_threads):
    rng = np.random.default_rng(sum(pads))
    a = _rand(rng, (2, 3, 4, 5), t)                 # ne [5, 4, 3, 2]
    ctx = ggml_cy.Context(8 << 20)
    ta = _transposed(ctx, a, t) if n_threads == 2 else _tensor(ctx, a, t)
    r = ctx.pad_ext(ta, *pads)
    width = [(pads[2 * d], pads[2 * d + 1]) for d in range(4)][::-1]
    _same(_run(ctx, r, n_threads), np.pad(a, width))
    # circular: the added values wrap around (np.pad's "wrap"; pads may exceed the size)
    rc = ctx.pad_ext_circular(ta, *pads)
    _same(_run(ctx, rc, n_threads), np.pad(a, width, mode="wrap"))


def test_pad_shorthands():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    ctx = ggml_cy.Context(4 << 20)
    ta = _tensor(ctx, a, T.F32)
    r = ctx.pad(ta, 3, 1)
    assert list(r.op_params[:9]) == [0, 3, 0, 1, 0, 0, 0, 0, 0]       # ggml's layout
    _same(_run(ctx, r, 2), np.pad(a, [(0, 1), (0, 3)]))
    rc = ctx.pad_circular(ta, 2, 4)
    assert rc.op_params[8] == 1
    _same(_run(ctx, rc, 1), np.pad(a, [(0, 4), (0, 2)], mode="wrap"))


def test_pad_bad_arguments():
    ctx = ggml_cy.Context(4 << 20)
    a = ctx.new_tensor(T.F32, (3, 2))
    with pytest.raises(ValueError, match=">= 0"):
        ctx.pad(a, -1)
    with pytest.raises(ValueError, match=">= 0"):
        ctx.pad_ext(a, 0, 0, -2, 0)
    with pytest.raises(TypeError, match="integer"):
        ctx.pad(a, 1.5)
    with pytest.raises(ValueError, match="int32"):
        ctx.pad(a, 2 ** 31)
    with pytest.raises(TypeError, match="quantized"):
        ctx.pad(ctx.new_tensor(T.Q8_0, (32, 2)), 0, 1)
    with pytest.raises(ValueError, match="empty"):
        ctx.pad_circular(ctx.new_tensor(T.F32, (0, 2)), 1)


# ----------------------------------------------------------------------------- sorting
def _ref_argsort(x, descending):
    """Stable order along the last axis, NaN above +inf."""
    x = np.asarray(x, np.float64)
    if not descending:
        return np.argsort(x, axis=-1, kind="stable").astype(np.int32)
    nan_last = (~np.isnan(x)).astype(np.int8)        # NaN first when descending
    key = np.where(np.isnan(x), 0.0, -x)
    out = np.empty(x.shape, np.int32)
    for idx in np.ndindex(x.shape[:-1]):
        out[idx] = np.lexsort((key[idx], nan_last[idx]))
    return out


def _sort_data(rng, shape, kind):
    if kind == "normal":
        return rng.standard_normal(shape).astype(np.float32)
    if kind == "ties":      # few distinct values: long runs of equal keys, +-0
        x = rng.integers(-3, 4, size=shape).astype(np.float32)
        x[x == 0] = rng.choice([0.0, -0.0], size=int((x == 0).sum()))
        return x
    x = rng.standard_normal(shape).astype(np.float32)          # NaN and infinities
    flat = x.reshape(-1)
    n = flat.size
    flat[rng.integers(0, n, n // 7 + 1)] = np.nan
    flat[rng.integers(0, n, n // 11 + 1)] = np.inf
    flat[rng.integers(0, n, n // 11 + 1)] = -np.inf
    return x


SORT_SHAPES = [(1, 1, 1, 1), (1, 1, 3, 17), (2, 3, 5, 33), (1, 1, 2, 1000), (1, 2, 1, 4097)]


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("kind", ["normal", "ties", "nan"])
@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize("shape", SORT_SHAPES, ids=[str(s[-1]) + "x" + str(s[-2]) for s in SORT_SHAPES])
def test_argsort(shape, descending, kind, n_threads):
    rng = np.random.default_rng(shape[-1] + 7 * descending)
    x = _sort_data(rng, shape, kind)
    ctx = ggml_cy.Context(16 << 20)
    tx = _tensor(ctx, x, T.F32)
    r = ctx.argsort(tx, 1 if descending else 0)
    assert r.type == T.I32 and list(r.ne) == list(tx.ne)
    _same(_run(ctx, r, n_threads), _ref_argsort(x, descending))


@pytest.mark.parametrize("n_threads", [1, 3])
def test_argsort_non_contiguous_and_strings(n_threads):
    rng = np.random.default_rng(11)
    x = _sort_data(rng, (2, 3, 40, 9), "ties")
    ctx = ggml_cy.Context(8 << 20)
    tx = _transposed(ctx, x, T.F32)
    _same(_run(ctx, ctx.argsort(tx, "desc"), n_threads), _ref_argsort(x, True))
    _same(_run(ctx, ctx.argsort(tx, ctx.SORT_ORDER_ASC), n_threads), _ref_argsort(x, False))


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("kind", ["normal", "ties", "nan"])
@pytest.mark.parametrize("k", [0, 1, 5, 33])
def test_top_k(k, kind, n_threads):
    rng = np.random.default_rng(k + 100)
    x = _sort_data(rng, (2, 3, 4, 33), kind)
    ctx = ggml_cy.Context(8 << 20)
    tx = _tensor(ctx, x, T.F32) if n_threads != 2 else _transposed(ctx, x, T.F32)
    r = ctx.top_k(tx, k)
    assert r.type == T.I32 and list(r.ne) == [k, 4, 3, 2]
    got = _run(ctx, r, n_threads)
    want = _ref_argsort(x, True)[..., :k]
    _same(got, want)
    # ggml's older form: argsort descending, viewed to k columns
    v = ctx.argsort_top_k(tx, k)
    assert list(v.ne) == [k, 4, 3, 2]
    _same(_run(ctx, v, n_threads), want)


@pytest.mark.parametrize("k", [1, 40, 64, 65, 300])
@pytest.mark.parametrize("kind", ["normal", "ties", "nan", "ascending", "descending"])
def test_top_k_long_rows(kind, k):
    """Long rows: k <= 64 runs a selection buffer, larger k the full sort; ascending input
    is the selection's worst case (every value enters)."""
    rng = np.random.default_rng(k)
    if kind in ("ascending", "descending"):
        x = np.sort(rng.standard_normal((3, 5000)).astype(np.float32), axis=-1)
        x = x if kind == "ascending" else x[:, ::-1].copy()
        x[:, 100:110] = x[:, 100:101]            # a run of equal values
    else:
        x = _sort_data(rng, (3, 5000), kind)
    got = ggml_cy.top_k(x, k, n_threads=2)
    _same(got, _ref_argsort(x, True)[..., :k])


def test_sort_bad_arguments():
    ctx = ggml_cy.Context(4 << 20)
    a = ctx.new_tensor(T.F32, (5, 2))
    for fn in (lambda x: ctx.argsort(x), lambda x: ctx.top_k(x, 1), lambda x: ctx.argmax(x)):
        with pytest.raises(TypeError, match="f32"):
            fn(ctx.new_tensor(T.F16, (5, 2)))
        with pytest.raises(TypeError, match="f32"):
            fn(ctx.new_tensor(T.I32, (5, 2)))
        with pytest.raises(TypeError, match="Tensor"):
            fn(np.zeros((2, 5), np.float32))
    for bad in (2, -1, "up"):
        with pytest.raises((ValueError, TypeError), match="order"):
            ctx.argsort(a, bad)
    for bad in (-1, 6):
        with pytest.raises(ValueError, match="k must be"):
            ctx.top_k(a, bad)
        with pytest.raises(ValueError, match="k must be"):
            ctx.argsort_top_k(a, bad)
    with pytest.raises(TypeError, match="integer"):
        ctx.top_k(a, 2.0)
    with pytest.raises(ValueError, match="matrix"):
        ctx.argmax(ctx.new_tensor(T.F32, (5, 2, 3)))


# ----------------------------------------------------------------------------- argmax
def _ref_argmax_ggml(x):
    """ggml's CPU rule, written from its definition: the running maximum m starts at -inf
    and becomes max(m, v) with v taking over when m > v is false (so a NaN v replaces
    it); the index moves to every position whose value equals the running maximum."""
    out = np.empty(x.shape[0], np.int32)
    for r, row in enumerate(x):
        m, best = -np.inf, 0
        for i, v in enumerate(row.astype(np.float64)):
            m = m if m > v else v
            if m == v:
                best = i
        out[r] = best
    return out


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("kind", ["normal", "ties", "nan"])
def test_argmax(kind, n_threads):
    rng = np.random.default_rng(5)
    x = _sort_data(rng, (37, 129), kind)
    ctx = ggml_cy.Context(8 << 20)
    tx = _tensor(ctx, x, T.F32) if n_threads != 2 else _transposed(ctx, x, T.F32)
    r = ctx.argmax(tx)
    assert r.type == T.I32 and list(r.ne) == [37, 1, 1, 1]
    got = _run(ctx, r, n_threads)
    _same(got, _ref_argmax_ggml(x))
    if kind == "normal":          # no ties, no NaN: numpy's answer
        _same(got, np.argmax(x, axis=-1).astype(np.int32))


def test_argmax_ggml_rules_by_hand():
    rows = np.array([[1, 3, 3, 2], [5, np.nan, 1, 0], [np.nan, np.nan, np.nan, np.nan],
                     [-np.inf, -np.inf, -np.inf, -np.inf], [0, -0.0, 0, -1]], np.float32)
    got = ggml_cy.argmax(rows)
    # ties: the last index; a NaN becomes the running maximum and the next value replaces
    # it ([5, nan, 1, 0] -> 2: ggml's MAX macro)
    _same(got, np.array([2, 2, 0, 3, 2], np.int32))


# ----------------------------------------------------------------------------- eager
@pytest.mark.parametrize("n_threads", [1, 2])
def test_eager_sorting(n_threads):
    rng = np.random.default_rng(12)
    x = _sort_data(rng, (4, 6, 50), "ties")
    for axis in (-1, 0, 1):
        xm = np.moveaxis(x, axis, -1)
        for desc in (False, True):
            got = ggml_cy.argsort(x, axis=axis, descending=desc, n_threads=n_threads)
            assert got.dtype == np.int32 and got.shape == x.shape
            _same(got, np.moveaxis(_ref_argsort(xm, desc), -1, axis))
        got = ggml_cy.top_k(x, 3, axis=axis, n_threads=n_threads)
        _same(got, np.moveaxis(_ref_argsort(xm, True)[..., :3], -1, axis))
        got = ggml_cy.argmax(x, axis=axis, n_threads=n_threads)
        want = _ref_argmax_ggml(xm.reshape(-1, xm.shape[-1])).reshape(xm.shape[:-1])
        _same(got, want)
    # float16 and small integers convert exactly; a strided input is fine
    h = rng.standard_normal((3, 20)).astype(np.float16)[:, ::2]
    _same(ggml_cy.argsort(h), np.argsort(h, kind="stable").astype(np.int32))
    i8 = rng.integers(-5, 5, (3, 20)).astype(np.int8)
    _same(ggml_cy.argsort(i8), np.argsort(i8, kind="stable").astype(np.int32))
    # 1-D
    _same(ggml_cy.argmax(np.array([1.0, 4.0, 2.0], np.float32)), np.array(1, np.int32))
    _same(ggml_cy.top_k(np.array([1.0, 4.0, 2.0], np.float32), 2), np.array([1, 2], np.int32))


def test_eager_sorting_bad_arguments():
    x = np.zeros((3, 4), np.float32)
    for fn in (ggml_cy.argsort, ggml_cy.argmax, lambda v: ggml_cy.top_k(v, 1)):
        with pytest.raises(TypeError, match="float32"):
            fn(x.astype(np.float64))
        with pytest.raises(TypeError, match="float32"):
            fn(x.astype(np.int64))
        with pytest.raises(ValueError, match="0-d"):
            fn(np.float32(1.0))
    with pytest.raises(np.exceptions.AxisError):
        ggml_cy.argsort(x, axis=2)
    with pytest.raises(TypeError, match="axis"):
        ggml_cy.argsort(x, axis=1.0)
    with pytest.raises(TypeError, match="descending"):
        ggml_cy.argsort(x, descending="yes")
    with pytest.raises(ValueError, match="k must be"):
        ggml_cy.top_k(x, 5)
    with pytest.raises(TypeError, match="k must be"):
        ggml_cy.top_k(x, None)
    with pytest.raises(ValueError, match="empty"):
        ggml_cy.argmax(np.zeros((3, 0), np.float32))
    with pytest.raises(ValueError, match="n_threads"):
        ggml_cy.argmax(x, n_threads=0)
