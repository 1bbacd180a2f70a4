"""The eager numpy-style API behaves as numpy's ufuncs at the API level: out=, dtype=,
casting and shape errors, read-only outputs, overlap, scalars and NEP 50, 0-d and empty
inputs, dtypes handed to numpy, many dims. (The op x dtype x layout matrix and the
hypothesis properties live in the tests helper's files.)"""
import numpy as np
import pytest

import ggml_cy as g
from ggml_cy import ufuncs
from ggml_cy.ufuncs._eager import _fallback_count

from _eager_helpers import TRANSCENDENTAL, assert_same, assert_same_outcome, native

BINARY = [n for n in ufuncs.BINARY]
UNARY = [n for n in ufuncs.UNARY]


def pair(name):
    return getattr(g, name), getattr(np, name)


# --------------------------------------------------------------------------- native path
def test_float_add_runs_natively():
    """The kernels' first ops (add/sub/mul/div in float32/float64) take the fast path."""
    a = np.arange(1, 17, dtype=np.float32)
    for name in ("add", "subtract", "multiply", "divide"):
        for dt in (np.float32, np.float64):
            assert native(name, dt, dt), (name, dt)
            x = a.astype(dt)
            before = _fallback_count()
            assert_same(getattr(g, name)(x, x[::-1]), getattr(np, name)(x, x[::-1]))
            assert _fallback_count() == before


def test_aliases_are_numpy_aliases():
    assert g.true_divide is g.divide
    assert g.mod is g.remainder
    assert g.abs is g.absolute
    assert g.clamp is g.clip


# --------------------------------------------------------------------------- scalars
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "maximum",
                                  "greater", "equal", "floor_divide", "remainder"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "float16",
                                   "float32", "float64", "bool"])
@pytest.mark.parametrize("scalar", [2, -1, 300, 2.5, True, np.float32(1.5), np.int16(7),
                                    np.float64(-0.0), 2**70])
def test_scalar_promotion_nep50(name, dtype, scalar):
    """Python scalars are weak (NEP 50), numpy scalars strong; out-of-range Python ints
    raise numpy's OverflowError (int8 array + 300)."""
    gf, nf = pair(name)
    x = np.array([0, 1, 5, 100], dtype=np.int64).astype(dtype)
    with np.errstate(all="ignore"):
        assert_same_outcome(lambda: gf(x, scalar), lambda: nf(x, scalar))
        assert_same_outcome(lambda: gf(scalar, x), lambda: nf(scalar, x))


def test_int8_plus_300_overflow_error():
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for int8"):
        g.add(np.zeros(3, np.int8), 300)


@pytest.mark.parametrize("a,b", [(1.0, 2.0), (3, 4), (np.float32(1), 2), (True, 2.5),
                                 (np.array(1.5), np.array(2.0, np.float32))])
def test_all_scalar_inputs_give_numpy_scalars(a, b):
    assert_same(g.add(a, b), np.add(a, b))
    assert_same(g.multiply(a, b), np.multiply(a, b))


def test_float32_scalar_overflow_warns_like_numpy():
    x = np.ones(3, np.float32)
    with pytest.warns(RuntimeWarning, match="overflow encountered in cast"):
        r = g.add(x, 1e300)
    assert_same(r, np.full(3, np.inf, np.float32))


# --------------------------------------------------------------------------- 0-d, empty
@pytest.mark.parametrize("name", BINARY)
def test_zero_d_and_empty(name):
    gf, nf = pair(name)
    z = np.array(2.5)
    e = np.zeros((0, 3))
    # power: numpy's float loop is SVML's pow on AVX-512 machines, within 1 ulp of libm's
    ulp = 2 if name == "power" else 0
    with np.errstate(all="ignore"):
        assert_same_outcome(lambda: gf(z, z), lambda: nf(z, z), ulp)
        assert_same_outcome(lambda: gf(e, np.ones(3)), lambda: nf(e, np.ones(3)))
        assert_same_outcome(lambda: gf(e, z), lambda: nf(e, z))


@pytest.mark.parametrize("name", UNARY)
def test_unary_zero_d_and_empty(name):
    gf, nf = pair(name)
    with np.errstate(all="ignore"):
        for x in (np.array(0.5), np.zeros((2, 0)), np.float32(3.0), np.array(7, np.int16)):
            assert_same_outcome(lambda: gf(x), lambda: nf(x),
                                max_ulp=2 if name in TRANSCENDENTAL else 0)


# --------------------------------------------------------------------------- out=
def test_out_returns_out_and_accepts_tuple():
    a = np.arange(6.0).reshape(2, 3)
    out = np.empty((2, 3))
    assert g.add(a, 1.0, out=out) is out
    assert g.add(a, 1.0, out=(out,)) is out
    assert_same(out, a + 1.0)
    assert_same(g.add(a, 1.0, out=(None,)), a + 1.0)
    z = np.empty(())
    assert g.add(np.array(1.0), 2.0, out=z) is z     # 0-d out stays an array


def test_out_same_kind_cast_and_refusals():
    a = np.arange(6.0)
    out32 = np.empty(6, np.float32)
    assert_same(g.multiply(a, 1.5, out=out32), np.multiply(a, 1.5, out=np.empty(6, np.float32)))
    for bad_out in (np.empty(6, np.int32), np.empty(6, np.bool_)):
        assert_same_outcome(lambda: g.add(a, a, out=bad_out), lambda: np.add(a, a, out=bad_out))
    assert_same_outcome(lambda: g.sqrt(a, out=np.empty(6, np.int64)),
                        lambda: np.sqrt(a, out=np.empty(6, np.int64)))


def test_out_broadcasts_inputs_to_its_shape():
    a = np.arange(3.0)
    out = np.zeros((2, 3))
    assert_same(g.add(a, 1.0, out=out), np.add(a, 1.0, out=np.zeros((2, 3))))
    for bad in (np.zeros(1), np.zeros((3, 1)), np.zeros(4)):
        assert_same_outcome(lambda: g.add(a, 1.0, out=bad), lambda: np.add(a, 1.0, out=bad))


def test_read_only_out_and_bad_out_types():
    a = np.arange(3.0)
    ro = np.zeros(3)
    ro.flags.writeable = False
    assert_same_outcome(lambda: g.add(a, a, out=ro), lambda: np.add(a, a, out=ro))
    assert_same_outcome(lambda: g.negative(a, out=ro), lambda: np.negative(a, out=ro))
    for bad in ([0.0, 0.0, 0.0], "x", (np.zeros(3), np.zeros(3)), 3.0):
        assert_same_outcome(lambda: g.add(a, a, out=bad), lambda: np.add(a, a, out=bad))
    bcast = np.broadcast_to(np.zeros(1), (3,))
    assert_same_outcome(lambda: g.add(a, a, out=bcast), lambda: np.add(a, a, out=bcast))


def test_read_only_and_broadcast_inputs():
    a = np.arange(12.0).reshape(3, 4)
    a.flags.writeable = False
    b = np.broadcast_to(np.arange(4.0), (3, 4))
    assert_same(g.add(a, b), np.add(a, b))
    assert_same(g.multiply(a[::-1, ::-2], b[:, ::2]), np.multiply(a[::-1, ::-2], b[:, ::2]))


@pytest.mark.parametrize("shift", [-2, -1, 1, 2])
def test_overlapping_out_gives_no_overlap_answer(shift):
    def run(mod):
        x = np.arange(20.0)
        if shift > 0:
            mod.add(x[:-shift], x[shift:], out=x[shift:])
        else:
            mod.add(x[-shift:], 1.0, out=x[:shift])
        return x
    assert_same(run(g), run(np))


def test_overlapping_out_reversed_and_in_place():
    x = np.arange(10.0)
    y = x.copy()
    g.multiply(x[::-1], 2.0, out=x)
    np.multiply(y[::-1], 2.0, out=y)
    assert_same(x, y)
    x = np.arange(10.0)
    assert g.add(x, x, out=x) is x
    assert_same(x, np.arange(10.0) * 2)
    # out aliasing a broadcast input
    x = np.arange(6.0).reshape(2, 3)
    y = x.copy()
    g.add(x[:1], x, out=x)
    np.add(y[:1], y, out=y)
    assert_same(x, y)


# --------------------------------------------------------------------------- dtype=
@pytest.mark.parametrize("dtype", [np.float32, "float64", np.int32, "int8", bool, "f2"])
def test_dtype_argument(dtype):
    a = np.arange(5, dtype=np.int64)
    b = np.linspace(0, 2, 5)
    for name in ("add", "multiply", "maximum", "less"):
        gf, nf = pair(name)
        assert_same_outcome(lambda: gf(a, a, dtype=dtype), lambda: nf(a, a, dtype=dtype))
        assert_same_outcome(lambda: gf(a, b, dtype=dtype), lambda: nf(a, b, dtype=dtype))
    assert_same_outcome(lambda: g.sqrt(b, dtype=dtype), lambda: np.sqrt(b, dtype=dtype))


def test_bad_dtype_argument():
    a = np.arange(3.0)
    for bad in ("nonsense", 3.5, object()):
        assert_same_outcome(lambda: g.add(a, a, dtype=bad), lambda: np.add(a, a, dtype=bad))


# --------------------------------------------------------------------------- shapes
def test_bad_shapes_raise_numpys_error():
    assert_same_outcome(lambda: g.add(np.zeros(3), np.zeros(4)),
                        lambda: np.add(np.zeros(3), np.zeros(4)))
    assert_same_outcome(lambda: g.less(np.zeros((2, 3)), np.zeros((3, 2))),
                        lambda: np.less(np.zeros((2, 3)), np.zeros((3, 2))))


def test_many_dims_with_mixed_broadcasting():
    rng = np.random.default_rng(0)
    for nd in (5, 6, 9, 16, 32):
        shape_a = [int(v) for v in rng.integers(1, 3, nd)]
        shape_b = [s if rng.random() < 0.5 else 1 for s in shape_a]
        a = rng.standard_normal(shape_a)
        b = rng.standard_normal(shape_b[rng.integers(0, 3):]).astype(np.float32)
        a_view = a[(slice(None, None, -1),) * 2]   # negative strides on two dims
        for name in ("add", "subtract", "maximum", "greater"):
            gf, nf = pair(name)
            assert_same(gf(a_view, b), nf(a_view, b))
            assert_same(gf(b, a.transpose()[..., ::-1].transpose()),
                        nf(b, a.transpose()[..., ::-1].transpose()))
        assert_same(g.negative(a_view), np.negative(a_view))


def test_non_contiguous_layouts():
    a = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
    for view in (a.T, a[::2, ::-1, 1::3], a.transpose(1, 0, 2), a[:, 2, :], a[..., None, :]):
        assert_same(g.add(view, 1.0), np.add(view, 1.0))
        assert_same(g.multiply(view, view), np.multiply(view, view))
        r = g.add(view, view)
        assert r.flags.c_contiguous or r.flags.f_contiguous or r.ndim > 1


# --------------------------------------------------------------------------- handed to numpy
@pytest.mark.parametrize("x", [
    np.arange(3, dtype=np.complex128) + 1j,
    np.array([1, 2, 3], dtype=object),
    np.arange(3, dtype=np.longdouble),
    np.arange(3, dtype=np.uint32),
    np.arange(3, dtype=">f8"),
    np.array(["2024-01-01"], dtype="datetime64[D]"),
    np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0]),
    np.array([[1.0, 2.0]]).view(np.recarray),       # an ndarray subclass
    [1.0, 2.0, 3.0],
    (1, 2, 3),
])
def test_other_types_get_numpys_answer(x):
    for name in ("add", "multiply", "equal", "maximum", "subtract"):
        gf, nf = pair(name)
        got = assert_same_outcome(lambda: gf(x, x), lambda: nf(x, x))
        if got[0] == "ok":
            assert type(got[1]) is type(nf(x, x))
    assert_same_outcome(lambda: g.negative(x), lambda: np.negative(x))


def test_numpy_only_keywords_go_to_numpy():
    a = np.arange(5.0)
    out = np.zeros(5)
    where = np.array([True, False, True, False, True])
    assert_same(g.add(a, 1.0, out=out.copy(), where=where),
                np.add(a, 1.0, out=out.copy(), where=where))
    assert_same(g.add(a, 1, casting="unsafe", dtype=np.int32),
                np.add(a, 1, casting="unsafe", dtype=np.int32))
    assert_same_outcome(lambda: g.add(a, 1.0, bogus=1), lambda: np.add(a, 1.0, bogus=1))


def test_errors_from_numpy_type_rules():
    b = np.array([True, False])
    assert_same_outcome(lambda: g.subtract(b, b), lambda: np.subtract(b, b))
    assert_same_outcome(lambda: g.negative(b), lambda: np.negative(b))
    i = np.arange(3)
    assert_same_outcome(lambda: g.power(i, -1), lambda: np.power(i, -1))


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("name", BINARY)
def test_binary_bad_input(name):
    gf, nf = pair(name)
    a = np.arange(3.0)
    for bad in (None, "abc", {"a": 1}, object()):
        assert_same_outcome(lambda: gf(a, bad), lambda: nf(a, bad))
    with pytest.raises(TypeError):
        gf(a)
    with pytest.raises(TypeError):
        gf(a, a, a, a)
    for bad in (0, -1, "2", 1.5, True):
        with pytest.raises((TypeError, ValueError)):
            gf(a, a, n_threads=bad)


@pytest.mark.parametrize("name", UNARY)
def test_unary_bad_input(name):
    gf, nf = pair(name)
    for bad in (None, "abc", object()):
        assert_same_outcome(lambda: gf(bad), lambda: nf(bad))
    with pytest.raises(TypeError):
        gf()
    with pytest.raises((TypeError, ValueError)):
        gf(np.arange(3.0), n_threads=0)


def test_n_threads_per_call():
    a = np.linspace(-3, 3, 10001)
    for n in (1, 2, 3, np.int64(2)):
        assert_same(g.multiply(a, a, n_threads=n), a * a)
        assert_same(g.exp(a, n_threads=n), np.exp(a), max_ulp=2)


def test_n_threads_limits_on_the_int_fast_path():
    """A plain int n_threads is checked in C (no Python call); the limits and messages are
    those of ggml_cy.cpu.threads.check_num_threads for every other kind of value."""
    from ggml_cy.cpu.threads import MAX_THREADS
    a = np.arange(5.0)
    assert_same(g.add(a, a, n_threads=MAX_THREADS), a + a)
    for bad, err in ((0, ValueError), (-1, ValueError), (MAX_THREADS + 1, ValueError),
                     (2**63, ValueError), (-(2**70), ValueError), (True, TypeError),
                     (2.0, TypeError), ("2", TypeError)):
        with pytest.raises(err, match="n_threads must be"):
            g.add(a, a, n_threads=bad)


def test_device_dispatch_hook(monkeypatch):
    """An argument whose type says __ggml_cy_device__ goes to ggml_cy.cuda.eager_call."""
    import sys
    import types

    class FakeDeviceTensor:
        __ggml_cy_device__ = True

    calls = []
    fake = types.ModuleType("ggml_cy.cuda")
    fake.eager_call = lambda name, args, kwargs: calls.append((name, args, kwargs)) or "dev"
    monkeypatch.setitem(sys.modules, "ggml_cy.cuda", fake)
    monkeypatch.setattr(g, "cuda", fake, raising=False)
    t = FakeDeviceTensor()
    assert g.add(t, 1.0) == "dev"
    assert g.exp(t) == "dev"
    assert g.relu(t) == "dev"
    assert g.astype(t, np.float32) == "dev"
    assert [c[0] for c in calls] == ["add", "exp", "relu", "astype"]


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
@pytest.mark.parametrize("dtype", ["uint8", "int8", "float32", "float16", "bool"])
def test_only_python_scalars_are_strong(dtype):
    """With no array operand numpy converts Python scalars to int64/float64 (not weak):
    np.absolute(0, dtype=np.uint8) is a casting error."""
    for args in ((0,), (2.5,), (-3,)):
        for name in ("absolute", "sign", "negative"):
            gf, nf = pair(name)
            assert_same_outcome(lambda: gf(*args, dtype=dtype), lambda: nf(*args, dtype=dtype))
    for a, b in ((1, 2), (1, 2.5), (True, 3), (2**70, 1)):
        assert_same_outcome(lambda: g.add(a, b, dtype=dtype), lambda: np.add(a, b, dtype=dtype))
        assert_same_outcome(lambda: g.add(a, b), lambda: np.add(a, b))


def test_misaligned_and_odd_memory():
    """float32 data at an odd byte offset, and views of foreign buffers."""
    buf = np.zeros(4 * 1001 + 1, np.uint8)
    a = buf[1:].view(np.float32)
    a[:] = np.arange(1001)
    assert not a.flags.aligned
    assert_same(g.add(a, a), np.add(a, a))
    assert_same(g.astype(a, np.float64), a.astype(np.float64))
    out = buf[1:].view(np.float32)
    assert_same(g.multiply(a, 2.0, out=out), np.multiply(np.arange(1001, dtype=np.float32), 2.0))
    raw = np.frombuffer(bytearray(b"\x00\x00\x80\x3f" * 8), np.float32)   # writable
    assert_same(g.add(raw, 1.0), np.add(raw, 1.0))
    ro = np.frombuffer(b"\x00\x00\x80\x3f" * 8, np.float32)               # read-only
    assert_same(g.add(ro, 1.0), np.add(ro, 1.0))
    assert_same_outcome(lambda: g.add(ro, 1.0, out=ro), lambda: np.add(ro, 1.0, out=ro))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_integer_power(dtype):
    """Non-negative scalar or unsigned exponents run natively; negative ones raise numpy's
    ValueError; wrap-around equals numpy's."""
    x = np.arange(-20, 20).astype(dtype)
    for e in (0, 1, 2, 3, 7, 40, True):
        before = _fallback_count()
        assert_same(g.power(x, e), np.power(x, e))
        assert _fallback_count() == before
    with np.errstate(all="ignore"):
        assert_same(g.power(x, np.arange(40).astype(np.uint8)),
                    np.power(x, np.arange(40).astype(np.uint8)))
    assert_same_outcome(lambda: g.power(x, -1), lambda: np.power(x, -1))
    assert_same_outcome(lambda: g.power(x, x), lambda: np.power(x, x))
