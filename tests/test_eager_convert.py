"""copyto, ascontiguousarray and astype (bfloat16 included) against numpy and the core's
float32 <-> bfloat16 helpers."""
import numpy as np
import pytest

import ggml_cy as g
from ggml_cy.ufuncs._eager import _fallback_count

from _eager_helpers import assert_same, assert_same_outcome

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"]


def sample(dtype, shape=(3, 4, 5)):
    rng = np.random.default_rng(7)
    v = rng.standard_normal(shape) * 50
    if np.dtype(dtype).kind == "f":
        v.flat[:4] = [np.nan, -0.0, np.inf, -np.inf]
    return v.astype(dtype) if np.dtype(dtype).kind != "b" else v > 0


def layouts(x):
    yield x
    yield x.T
    yield x[::-1, ::2]
    yield x[:, 1, ::-1]
    yield np.broadcast_to(x[:1], x.shape)


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_astype_all_pairs_all_layouts(src, dst):
    x = sample(src)
    with np.errstate(all="ignore"):
        for v in layouts(x):
            assert_same(g.astype(v, dst), v.astype(dst))
            r = g.astype(v, dst)
            want = v.astype(dst)
            assert r.strides == want.strides     # order 'K', as numpy


def test_astype_copy_false_and_errors():
    x = np.arange(5.0)
    assert g.astype(x, np.float64, copy=False) is x
    assert g.astype(x, np.float64) is not x
    assert_same_outcome(lambda: g.astype(x, "nonsense"), lambda: np.astype(x, "nonsense"))
    with pytest.raises(TypeError):
        g.astype([1.0, 2.0], np.float32)
    with pytest.raises(TypeError):
        g.astype(x, np.float32, from_bfloat16=True)      # not uint16 storage
    with pytest.raises((TypeError, ValueError)):
        g.astype(x, np.float32, copy="maybe")
    with pytest.raises((TypeError, ValueError)):
        g.astype(x, np.float32, n_threads=0)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_astype_other_types_go_to_numpy():
    for x in (np.arange(3, dtype=np.complex64), np.arange(3, dtype=np.uint32),
              np.arange(3, dtype=">i4")):
        for dt in (np.float64, np.int16, np.complex128):
            with np.errstate(all="ignore"):
                assert_same_outcome(lambda: g.astype(x, dt), lambda: x.astype(dt))


def test_astype_cast_warnings_like_numpy():
    x = np.array([np.nan, 1e300, 1.0])
    with pytest.warns(RuntimeWarning, match="encountered in cast"):
        g.astype(x, np.float32)
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError):
            g.astype(x, np.float16)


@pytest.mark.parametrize("src", ["float32", "float64", "float16"])
def test_bfloat16_round_trip_matches_core(src):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(1000) * 10).astype(np.float32)
    x[:6] = [np.nan, np.inf, -np.inf, -0.0, 1.00390625, 1.01171875]  # ties to even
    want = g.float32_to_bfloat16(x.astype(src).astype(np.float32))
    for dt in (g.bfloat16, "bfloat16"):
        got = g.astype(x.astype(src), dt)
        assert got.dtype == np.uint16
        assert np.array_equal(got, want)
        back = g.astype(got, np.float32, from_bfloat16=True)
        assert_same(back, g.bfloat16_to_float32(want))
    assert repr(g.bfloat16) == "ggml_cy.bfloat16"


def test_bfloat16_strided_views():
    x = np.linspace(-3, 3, 60, dtype=np.float32).reshape(6, 10)
    v = x[::-2, ::3].T
    assert np.array_equal(g.astype(v, g.bfloat16), g.float32_to_bfloat16(v))
    b = g.float32_to_bfloat16(x)
    assert_same(g.astype(b.T[::2], np.float32, from_bfloat16=True),
                g.bfloat16_to_float32(b.T[::2]))


@pytest.mark.parametrize("dtype", [None, np.float32, "int16", np.float64])
def test_ascontiguousarray(dtype):
    x = sample("float64")
    for v in layouts(x):
        with np.errstate(all="ignore"):
            assert_same(g.ascontiguousarray(v, dtype=dtype), np.ascontiguousarray(v, dtype=dtype))
            assert g.ascontiguousarray(v, dtype=dtype).flags.c_contiguous
    c = np.arange(4.0)
    assert g.ascontiguousarray(c) is c
    assert_same(g.ascontiguousarray(np.array(2.0)), np.ascontiguousarray(np.array(2.0)))
    assert_same(g.ascontiguousarray(np.float32(2.0)), np.ascontiguousarray(np.float32(2.0)))
    assert_same(g.ascontiguousarray([[1, 2], [3, 4]]), np.ascontiguousarray([[1, 2], [3, 4]]))
    assert_same_outcome(lambda: g.ascontiguousarray(c, dtype="nonsense"),
                        lambda: np.ascontiguousarray(c, dtype="nonsense"))


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("casting", ["same_kind", "unsafe", "safe", "no", "equiv"])
def test_copyto_casting_rules(src, casting):
    x = sample(src, (4, 5))
    for dst_dtype in ("int8", "float32", "float64", "bool"):
        d1 = np.zeros((4, 5), dst_dtype)
        d2 = np.zeros((4, 5), dst_dtype)
        with np.errstate(all="ignore"):
            got = assert_same_outcome(lambda: g.copyto(d1, x.T.T[::-1], casting=casting),
                                      lambda: np.copyto(d2, x.T.T[::-1], casting=casting))
        assert_same(d1, d2)
        if got[0] == "ok":
            assert got[1] is None


def test_copyto_broadcast_overlap_where_and_errors():
    d = np.zeros((3, 4))
    g.copyto(d, np.arange(4.0))
    assert_same(d, np.broadcast_to(np.arange(4.0), (3, 4)).copy())
    # overlapping source and destination: numpy's no-overlap answer
    x = np.arange(10.0)
    y = x.copy()
    g.copyto(x[1:], x[:-1])
    np.copyto(y[1:], y[:-1])
    assert_same(x, y)
    x = np.arange(10.0)
    g.copyto(x, x[::-1])
    assert_same(x, np.arange(10.0)[::-1].copy())
    where = np.array([True, False, True, False])
    d1, d2 = np.zeros(4), np.zeros(4)
    g.copyto(d1, 5.0, where=where)
    np.copyto(d2, 5.0, where=where)
    assert_same(d1, d2)
    ro = np.zeros(3)
    ro.flags.writeable = False
    for dst, src in ((ro, np.ones(3)), (np.zeros(3), np.ones(4)), (np.zeros(3), "abc"),
                     ([0, 0], np.ones(2)), (np.zeros(2, np.int8), 300)):
        assert_same_outcome(lambda: g.copyto(dst, src), lambda: np.copyto(dst, src))
    assert_same_outcome(lambda: g.copyto(np.zeros(3), np.ones(3), casting="bogus"),
                        lambda: np.copyto(np.zeros(3), np.ones(3), casting="bogus"))
    with pytest.raises(TypeError):
        g.copyto(np.zeros(3))


def test_conversions_run_natively():
    x = np.arange(1000, dtype=np.float32).reshape(10, 100).T
    before = _fallback_count()
    g.astype(x, np.float16)
    g.copyto(np.empty((100, 10)), x)
    g.ascontiguousarray(x)
    assert _fallback_count() == before
