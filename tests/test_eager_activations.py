"""ggml's activations, clip and scale through the eager API: float promotion, parameters,
out=/dtype=, layouts, and the numpy fallback for other types."""
import numpy as np
import pytest

import ggml_cy as g
from ggml_cy.ufuncs import numpy_ref as ref
from ggml_cy.ufuncs._eager import _fallback_count

from _eager_helpers import assert_same, assert_same_outcome

UNARY = ["relu", "sigmoid", "silu", "gelu", "gelu_erf", "gelu_quick", "elu", "hardswish",
         "hardsigmoid", "softplus", "step"]
EXACT = {"relu", "step", "hardsigmoid", "hardswish"}


def data(dtype):
    x = np.linspace(-6, 6, 97)
    x = np.concatenate([x, [0.0, -0.0, 1e-3, -30.0, 30.0]])
    return x.astype(dtype)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_against_reference(name, dtype):
    x = data(dtype)
    got = getattr(g, name)(x)
    want = getattr(ref, name)(x)
    assert got.dtype == want.dtype == np.dtype(dtype)
    tol = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "bool"])
def test_integer_input_promotes_like_exp(name, dtype):
    x = np.arange(-3, 4).astype(dtype) if dtype != "bool" else np.array([True, False])
    r = getattr(g, name)(x)
    assert r.dtype == np.exp(x[:0]).dtype


@pytest.mark.parametrize("name", UNARY)
def test_layouts_out_dtype_and_scalars(name):
    f = getattr(g, name)
    x = data("float32").reshape(2, 51)
    for v in (x.T, x[:, ::-3], np.broadcast_to(x[:1], (4, 51))):
        assert_same(f(v), f(np.ascontiguousarray(v)))
    out = np.empty((2, 51), np.float64)
    assert f(x, out=out) is out
    assert_same(out, f(x).astype(np.float64))
    assert f(x, dtype=np.float64).dtype == np.float64
    r = f(0.5)
    assert type(r) is np.float64
    assert f(np.float32(0.5)).dtype == np.float32
    assert f(np.zeros((0, 3))).shape == (0, 3)


@pytest.mark.parametrize("name", UNARY)
def test_bad_input(name):
    f = getattr(g, name)
    for bad in ("abc", None, object(), np.array(["x"])):
        with pytest.raises((TypeError, ValueError)):
            f(bad)
    with pytest.raises(TypeError):
        f()
    with pytest.raises((TypeError, ValueError)):
        f(np.ones(3), n_threads=-1)
    with pytest.raises(TypeError):
        f(np.ones(3), np.ones(3), np.ones(3))
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        f(np.ones(3), out=ro)
    with pytest.raises(ValueError):
        f(np.ones(3), out=np.zeros(4))


def test_long_double_goes_to_reference():
    x = np.linspace(-2, 2, 9).astype(np.longdouble)
    assert g.relu(x).dtype == np.longdouble
    np.testing.assert_array_equal(g.relu(x), np.where(x > 0, x, 0))


def test_leaky_relu_elu_parameters():
    x = np.linspace(-4, 4, 33, dtype=np.float32)
    np.testing.assert_allclose(g.leaky_relu(x), np.where(x > 0, x, np.float32(0.01) * x),
                               rtol=1e-6)
    np.testing.assert_allclose(g.leaky_relu(x, 0.2), np.where(x > 0, x, np.float32(0.2) * x),
                               rtol=1e-6)
    np.testing.assert_allclose(g.leaky_relu(x, negative_slope=0.5), ref.leaky_relu(x, 0.5),
                               rtol=1e-6)
    np.testing.assert_allclose(g.elu(x, alpha=2.0), ref.elu(x, 2.0), rtol=1e-6)
    for bad in ("x", None, [1.0]):
        with pytest.raises(TypeError):
            g.leaky_relu(x, bad)
        with pytest.raises(TypeError):
            g.scale(x, bad)


def test_prelu_broadcast_slope():
    x = np.linspace(-3, 3, 24).reshape(2, 3, 4)
    slope = np.array([0.1, 0.2, 0.3, 0.4])
    assert_same(g.prelu(x, slope), np.where(x > 0, x, slope * x))
    assert_same(g.prelu(x.astype(np.float32), 0.25),
                np.where(x > 0, x, 0.25 * x).astype(np.float32))
    assert g.prelu(np.arange(-2, 3), 2).dtype == np.float64
    with pytest.raises(ValueError):
        g.prelu(x, np.ones(3))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int8"])
def test_clip_matches_numpy(dtype):
    x = data("float64") * 10
    x = x.astype(dtype)
    for lo, hi in ((-1, 1), (-0.5, 2.5), (None, 3), (-2, None), (3, -3), (0.1, 0.2),
                   (-1e6, 1e6), (np.float32(-1), np.float32(1))):
        with np.errstate(all="ignore"):
            assert_same_outcome(lambda: g.clip(x, lo, hi), lambda: np.clip(x, lo, hi))
            assert_same_outcome(lambda: g.clip(x.T[::-1], lo, hi),
                                lambda: np.clip(x.T[::-1], lo, hi))
    nan = np.array([np.nan, 1.0, -5.0])
    assert_same(g.clip(nan, -1, 1), np.clip(nan, -1, 1))
    assert_same(g.clip(np.arange(5.0), np.zeros(5), 2.0), np.clip(np.arange(5.0), np.zeros(5), 2.0))
    assert_same_outcome(lambda: g.clip(x, None, None), lambda: np.clip(x, None, None))
    out = np.empty_like(x)
    assert g.clamp(x, -1, 1, out=out) is out
    assert_same(g.clip(x, min=-1, max=1), np.clip(x, min=-1, max=1))


def test_clip_float32_runs_natively():
    x = np.linspace(-5, 5, 101, dtype=np.float32)
    before = _fallback_count()
    assert_same(g.clip(x, -1.5, 2), np.clip(x, -1.5, 2))
    assert _fallback_count() == before


def test_scale():
    x = np.linspace(-3, 3, 50, dtype=np.float32)
    assert_same(g.scale(x, 0.5), x * np.float32(0.5))
    assert_same(g.scale(x.astype(np.float64), 0.1), x.astype(np.float64) * 0.1)
    assert g.scale(np.arange(4, dtype=np.int16), 2.0).dtype == np.float32
    np.testing.assert_array_equal(g.scale(x.T, 3), x * np.float32(3))


@pytest.mark.parametrize("bad", ["abc", None, object(), [1, "x"], np.array(["s"])])
def test_bad_input_to_parameterized_functions(bad):
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    for call in (lambda: g.prelu(x, bad), lambda: g.prelu(bad, 0.5),
                 lambda: g.leaky_relu(bad), lambda: g.scale(bad, 2.0),
                 lambda: g.elu(bad), lambda: g.relu(x, out=bad if bad is not None else "x")):
        with pytest.raises((TypeError, ValueError)):
            call()
    for call, ref_call in ((lambda: g.clip(x, bad, 1), lambda: np.clip(x, bad, 1)),
                           (lambda: g.clip(bad, 0, 1), lambda: np.clip(bad, 0, 1))):
        try:
            want = ref_call()
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)):
                call()
        else:
            assert np.array_equal(np.asarray(call()), np.asarray(want))
    with pytest.raises((TypeError, ValueError)):
        g.clip(x, 0, 1, n_threads="2")
