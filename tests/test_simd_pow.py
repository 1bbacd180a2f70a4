"""The vector forms of power (issue 14 item 2; kernels_elem.h's kern_pow_row_<type>):
float32 (csrc/simd_math_pow32.h) 2^(y log2 x) in float lanes with float pairs at avx512, in
double lanes rounded once at avx2; float64 (csrc/simd_math_pow64.h) the same with log2 x as
a double-double.

Held to 0.6 ulp (float32 at avx512), 0.53 ulp (float32 at avx2) and 0.6 ulp (float64) of
the exact value (the references:
float64 power for float32, exact to 2^-52, and 80-bit long double power for float64, exact
to 2^-63; the x86-64-v2 baseline keeps the C library's pow, like the slow lanes below),
with numpy's special-value results and warnings: the lanes the vector forms do not take
(zeros, infinities, NaN, a negative base to a fractional power, results near or past the
type's range; in float64 also subnormal bases) go through the
C library's pow and the KERN_POW_* rules, as before. Every layout (contiguous, broadcast,
strided, 0-d, in place, any alignment, graph, evaluate, float16) gives the same bits: the
scalar kernel runs the vector code.
"""
import warnings

import numpy as np
import pytest

import ggml_cy

# the vector forms' lanes (y log2 x within the type's normal range): float32 in double lanes
# (avx2) measured 0.51; in float lanes (avx512) 0.576 (the worst: x just below 1 + 2^-5,
# whose r^3 term, computed in floats, is 2^-11.6 of log2 x, times y log2 x near 125);
# float64 0.59 over 2M random bit patterns (log2 x to 2^-64 relative times y log2 x up to
# 1023 adds up to 0.07 ulp to the final rounding's 0.5)
BUDGET_VECTOR = {np.float32: 0.53, np.float64: 0.6}
BUDGET_FLOAT_LANES = 0.6
BUDGET_LIBM = 1.0      # the other lanes: the C library's pow (glibc's powf: up to 0.79 seen)
# the vector forms' limits on t = y log2 x (a normal result)
T_RANGE = {np.float32: (-125.5, 127.5), np.float64: (-1021.5, 1023.5)}
_LD_OK = np.finfo(np.longdouble).nmant >= 63
DTYPES = [np.float32,
          pytest.param(np.float64, marks=pytest.mark.skipif(
              not _LD_OK, reason="needs an 80-bit long double reference"))]


def _vector_level():
    """Whether this dispatch level runs the vector forms (avx2, avx512; the x86-64-v2
    baseline keeps the C library's pow for every lane)."""
    from ggml_cy.core import _startup
    return _startup.dispatch_state.get("level") != "baseline"


def _vector_budget(dt):
    from ggml_cy.core import _startup
    if dt == np.float32 and str(_startup.dispatch_state.get("level")).startswith("avx512"):
        return BUDGET_FLOAT_LANES
    return BUDGET_VECTOR[dt]

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0,
                    -3.0, 1e-45, -1e-45, 1.1754942e-38, 3.4028235e38, -3.4028235e38, 1e-30,
                    1e30, 0.999999, 1.000001, 2.0 ** 24, 2.0 ** 24 + 2, -(2.0 ** 24) - 2,
                    16777215.0, 127.5, 128.0, -126.0, -149.0, -150.0, 0.1, 10.0, 1e10, -1e10,
                    2.0 ** 64, 2.0 ** -64, 1.5, -1.5, 7.0, 0.25],
                   np.float32)


def _ulp_err(got, x, y):
    """|got - exact| in ulps of the exact value, in got's type (reference: float64 power for
    float32, 80-bit long double power for float64)."""
    dt = got.dtype
    wide = np.float64 if dt == np.float32 else np.longdouble
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(wide), y.astype(wide))
        rf = ref.astype(dt)
        fi = np.finfo(dt)
        a = np.maximum(np.abs(rf), fi.smallest_subnormal)
        a = np.where(np.isinf(rf), fi.max, a)
        e = np.abs(got.astype(wide) - ref) / np.spacing(a).astype(wide)
    same = (np.isnan(got) & np.isnan(ref)) | (got.astype(wide) == ref) | \
           (np.isinf(got) & (got == rf))
    return np.where(same, 0.0, np.where(np.isnan(e), np.inf, e)).astype(np.float64)


def _check(x, y):
    """The worst error on the vector form's lanes and on the others (each within its
    budget)."""
    dt = x.dtype.type
    with np.errstate(all="ignore"):
        got = ggml_cy.power(x, y, n_threads=2)
        t = y.astype(np.float64) * np.log2(np.abs(x.astype(np.float64)))
    assert got.dtype == x.dtype
    lo, hi = T_RANGE[dt]
    fast = (t >= lo) & (t <= hi) & (x != 0)
    err = _ulp_err(got, x, y)
    fast_budget = _vector_budget(dt) if _vector_level() else BUDGET_LIBM
    worst = []
    for lanes, budget in ((fast, fast_budget), (~fast, BUDGET_LIBM)):
        e = np.where(lanes, err, 0.0)
        w = int(np.argmax(e))
        assert e[w] <= budget, (f"{x[w]!r} ** {y[w]!r} = {got[w]!r}: {e[w]:.4f} ulp")
        worst.append(float(e[w]))
    return worst


def _random_bits(rng, n, dt):
    """n positive finite dt values over every exponent (subnormals included)."""
    if dt == np.float32:
        return rng.integers(1, 0x7f800000, n, dtype=np.uint32).view(np.float32)
    return rng.integers(1, 0x7ff0000000000000, n, dtype=np.uint64).view(np.float64)


@pytest.mark.parametrize("dt", DTYPES)
def test_accuracy_over_the_whole_range(dt):
    rng = np.random.default_rng(0)
    n = 1 << 18
    lo, hi = T_RANGE[dt]
    # every positive number (subnormals included) to exponents that keep the result near or
    # inside the range
    x = _random_bits(rng, n, dt)
    lx = np.log2(x.astype(np.float64))
    y = (rng.uniform(lo - 25, hi + 3, n) / np.where(np.abs(lx) < 1e-3, 1e-3, lx)).astype(dt)
    _check(x, y)
    # the bench's inputs, and x near 1 to big exponents (log2 x relative there)
    _check((np.abs(3 * rng.standard_normal(n)) + 1e-3).astype(dt),
           (3 * rng.standard_normal(n)).astype(dt))
    for w in (1e-3, 1e-7):
        x = (1 + rng.uniform(-w, w, n)).astype(dt)
        _check(x, (rng.uniform(lo, hi, n) / w).astype(dt))
    # the float-lane form's worst region: x up to 1 + 2^-5 (r up to 2^-5), |t| near 125
    for a, b in ((1.02, 1.03125), (0.97, 0.99)):
        x = rng.uniform(a, b, n).astype(dt)
        lx = np.log2(x.astype(np.float64))
        _check(x, (rng.choice([-1, 1], n) * rng.uniform(100, 125.4, n) / lx).astype(dt))
    # every table interval and its edges (the double forms' 16 in [0.765625, 1.53125), the
    # float-lane form's 32 in [0.75, 1.5))
    k = np.arange(-130, 130) if dt == np.float32 else np.arange(-1070, 1020, 7)
    m = np.unique(np.concatenate([np.linspace(0.765625, 1.53125, 257),
                                  np.linspace(0.75, 1.5, 193)]))
    xe = np.ldexp(m[None, :], k[:, None]).ravel()
    xe = xe[(xe > np.finfo(dt).smallest_subnormal) & (xe < np.finfo(dt).max / 2)].astype(dt)
    _check(xe, np.full(xe.size, 0.7310586, dt))
    _check(xe, (lo * 0.8 / np.maximum(np.abs(np.log2(xe.astype(np.float64))), 1)).astype(dt))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_results_are_exact_where_the_power_is(dt):
    x = np.array([2, 3, 0.5, 10, 1.5, 7, 1, 1, 4, 9, 1024, 0.25, 2, 3], dt)
    y = np.array([10, 2, 3, 7, 2, 3, 1e30, -1e30, 0.5, 0.5, -0.1, -1.5, -1000, 33], dt)
    with np.errstate(all="ignore"):
        got = ggml_cy.power(x, y)
    want = np.array([float(a) ** float(b) for a, b in zip(x, y)]).astype(dt)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("dt", DTYPES)
def test_negative_bases(dt):
    rng = np.random.default_rng(1)
    n = 1 << 16
    x = -(np.abs(rng.standard_normal(n)) * 10 + 1e-3).astype(dt)
    y = rng.integers(-30, 30, n).astype(dt)
    _check(x, y)
    with np.errstate(all="ignore"):
        assert (np.signbit(ggml_cy.power(x, y)) == (y % 2 == 1)).all()
    # even integers beyond 2^24 (every float32 there), fractional exponents: NaN, "invalid"
    big = np.array([2.0 ** 24, 2.0 ** 30, 2.0 ** 24 + 2, 2.0 ** 53, 2.0 ** 52 + 1, 3.0,
                    -2927442156554250.5, 2.0 ** 51 + 0.5, -(2.0 ** 51) - 1, 2.0 ** 51 - 0.5,
                    -(2.0 ** 51) + 1.5, 2.0 ** 50 + 0.25], dt)
    with np.errstate(all="ignore"):
        for base in (-1.0, -1.0000001):
            got = ggml_cy.power(dt(base), big)
            want = np.power(dt(base), big)
            assert np.array_equal(np.isnan(got), np.isnan(want)), (base, big, got, want)
            assert np.array_equal(np.signbit(got), np.signbit(want)), (base, big, got, want)
            assert (_ulp_err(got, np.full_like(big, base), big) <= BUDGET_LIBM).all()
    with np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError):
            ggml_cy.power(np.array([-2.0, 2.0], dt), np.array([0.5, 0.5], dt))


def _warnings_of(fn, x, y):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with np.errstate(all="warn"):
            r = fn(x, y)
    return r, {k for m in w for k in ("overflow", "underflow", "divide", "invalid")
               if k in str(m.message)}


SPECIAL64 = np.concatenate([SPECIAL.astype(np.float64),
                            [5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
                             1e300, 1e-300, 2.0 ** 52 + 1, 2.0 ** 53, -(2.0 ** 53) - 2, 1023.5,
                             1024.0, -1021.5, -1074.0, -1075.0, 1 + 2.0 ** -52, 1 - 2.0 ** -53]])


def _ulps_apart(g, w):
    it = np.int32 if g.dtype == np.float32 else np.int64
    return abs(int(g.view(it)) - int(w.view(it)))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_special_values_and_warnings_are_numpys(dt):
    """Every pair of special values, one pair per call beside two fast lanes: numpy's result
    (NaN, infinities and zeros with their sign exactly, others within 2 ulp: numpy's SVML
    power is within 1 ulp, ours 0.53) and numpy's warnings."""
    sp = SPECIAL if dt == np.float32 else SPECIAL64
    for xv in sp:
        for yv in sp:
            x = np.array([1.5, xv, 2.0], dt)
            y = np.array([2.5, yv, 0.5], dt)
            got, gw = _warnings_of(ggml_cy.power, x, y)
            want, ww = _warnings_of(np.power, x, y)
            assert gw == ww, (xv, yv, gw, ww)
            g, w = got[1], want[1]
            if np.isnan(w) or not np.isfinite(w) or w == 0:
                assert g.tobytes() == w.tobytes() or (np.isnan(g) and np.isnan(w)), (xv, yv, g, w)
            else:
                assert _ulps_apart(g, w) <= 2, (xv, yv, g, w)


EDGES = {np.float32: (-150.0, -149.0, -126.0, -125.5, 127.5, 128.0),
         np.float64: (-1075.0, -1074.0, -1022.0, -1021.5, 1023.5, 1024.0)}


@pytest.mark.parametrize("dt", DTYPES)
def test_the_edges_of_the_fast_range(dt):
    """y log2 x next to the vector forms' limits (float32: -125.5 and 127.5, float64:
    -1021.5 and 1023.5), overflow, the normal and subnormal results near the smallest normal
    and subnormal numbers: numpy's values and warnings."""
    t = np.concatenate([np.linspace(a - 0.01, a + 0.01, 41) for a in EDGES[dt]])
    for base in (2.0, 0.5, 3.0, 1.001, 1e-10):
        x = np.full(t.size, base, dt)
        y = (t / np.log2(np.float64(dt(base)))).astype(dt)
        got, gw = _warnings_of(ggml_cy.power, x, y)
        want, ww = _warnings_of(np.power, x, y)
        assert gw == ww, (base, gw, ww)
        assert np.array_equal(np.isinf(got), np.isinf(want))
        assert np.array_equal(got == 0, want == 0)
        fin = np.isfinite(want) & (want != 0)
        assert max((_ulps_apart(g, w) for g, w in zip(got[fin], want[fin])), default=0) <= 2
        _check(x, y)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_no_flag_from_the_vector_lanes_steps(dt):
    """Inputs whose intermediate steps overflow or underflow in the vector forms (y log2 x
    past the type's range, a subnormal or tiny y times log2 x's parts, huge y with x near 1)
    beside ordinary lanes: numpy's results and warnings, and nothing raised under
    errstate(all="raise") where numpy raises nothing."""
    fi = np.finfo(dt)
    xs = [2.0 ** -100, 2.0 ** 100, 0.5, 3.0, 1 + fi.eps, 1 - fi.epsneg, 1.5, 100.0]
    ys = [fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny, 1e-30, fi.max, -fi.max,
          1e37, -1e37, 2.0 ** 40, 2.0 ** 70]
    x = np.array([a for a in xs for _ in ys] * 2, dt)
    y = np.array([b for _ in xs for b in ys] * 2, dt)
    x[::3], y[::3] = 1.7, 2.3                                    # ordinary lanes among them
    got, gw = _warnings_of(ggml_cy.power, x, y)
    want, ww = _warnings_of(np.power, x, y)
    assert gw == ww, (gw, ww)
    assert np.array_equal(np.isinf(got), np.isinf(want))
    assert np.array_equal(got == 0, want == 0)
    fin = np.isfinite(want) & (want != 0)
    assert max((_ulps_apart(g, w) for g, w in zip(got[fin], want[fin])), default=0) <= 2
    # a broadcast operand, special or not, against a row (the row loop works on the
    # broadcast vector every time: its flags fall inside the dropped window too)
    row = np.array([2.5, -3.0, 0.5, 7.0, -1.0, 100.0, 1e-3, 3.0] * 9, dt)
    for v in (0.0, -0.0, np.inf, -np.inf, np.nan, fi.max, fi.smallest_subnormal, 2.0, -2.0):
        for args in ((dt(v), row), (row, dt(v))):
            got, gw = _warnings_of(ggml_cy.power, *args)
            want, ww = _warnings_of(np.power, *args)
            assert gw == ww, (v, args[0] is row, gw, ww)
            assert np.array_equal(np.isnan(got), np.isnan(want))
    # tiny exponents alone: the results round to 1 and no flag at all
    t = np.array([fi.smallest_subnormal, 1e-30, -1e-30, fi.tiny] * 8, dt)
    b = np.linspace(0.01, 1e6, t.size).astype(dt)
    with np.errstate(all="raise"):
        assert (ggml_cy.power(b, t) == 1).all()


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_every_layout_gives_the_same_bits(dt):
    rng = np.random.default_rng(3)
    x = (np.abs(rng.standard_normal((37, 53))) * 4 + 1e-3).astype(dt)
    y = (rng.standard_normal((37, 53)) * 4).astype(dt)
    x[::7, ::5] *= -1                        # negative bases: slow lanes where y is not integral
    y[::3, ::4] = np.round(y[::3, ::4])
    x[5, :6] = [0.0, np.inf, np.nan, -0.0, 1e-45, 5e-324 if dt == np.float64 else 1e-40]
    with np.errstate(all="ignore"):
        base = ggml_cy.power(x, y)
        assert np.array_equal(ggml_cy.power(np.asfortranarray(x), np.asfortranarray(y)), base,
                              equal_nan=True)
        assert np.array_equal(ggml_cy.power(x[::-1, ::-3], y[::-1, ::-3]), base[::-1, ::-3],
                              equal_nan=True)
        for k in range(1, 40):
            assert np.array_equal(ggml_cy.power(x.ravel()[1:k + 1], y.ravel()[1:k + 1]),
                                  base.ravel()[1:k + 1], equal_nan=True)
        for xv, yv, b in zip(x.ravel()[:300], y.ravel()[:300], base.ravel()[:300]):
            r = np.asarray(ggml_cy.power(dt(xv), dt(yv)))
            assert r.tobytes() == dt(b).tobytes() or (np.isnan(r) and np.isnan(b))
        # broadcast operands: one x to a row of y, a row of x to one y
        row = ggml_cy.power(x[3], y)
        assert np.array_equal(row, np.broadcast_to(
            [[ggml_cy.power(dt(a), dt(b)) for a, b in zip(x[3], yr)] for yr in y],
            y.shape), equal_nan=True)
        assert np.array_equal(ggml_cy.power(x[:, :1], y[7]),
                              ggml_cy.power(np.repeat(x[:, :1], 53, 1), np.tile(y[7], (37, 1))),
                              equal_nan=True)
        assert np.array_equal(ggml_cy.power(dt(2.5), y),
                              ggml_cy.power(np.full_like(y, 2.5), y), equal_nan=True)
        assert np.array_equal(ggml_cy.power(x, dt(1.7)),
                              ggml_cy.power(x, np.full_like(x, 1.7)), equal_nan=True)
        # in place, over either operand
        a, b = x.copy(), y.copy()
        ggml_cy.power(a, b, out=a)
        assert np.array_equal(a, base, equal_nan=True)
        a, b = x.copy(), y.copy()
        ggml_cy.power(a, b, out=b)
        assert np.array_equal(b, base, equal_nan=True)
        # graph and evaluate run the same rows
        ctx = ggml_cy.Context(1 << 22)
        out = ctx.pow(ctx.tensor_from(x), ctx.tensor_from(y))
        g = ctx.new_graph()
        g.build_forward_expand(out)
        g.compute(2)
        assert np.array_equal(out.numpy(), base, equal_nan=True)
        assert np.array_equal(ggml_cy.evaluate("a ** b", a=x, b=y), base, equal_nan=True)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_rows_at_every_alignment_give_the_same_bits(dt):
    rng = np.random.default_rng(7)
    n = 700
    x = (np.abs(rng.standard_normal(n)) * 4 + 1e-3).astype(dt)
    y = (rng.standard_normal(n) * 4).astype(dt)
    x[rng.integers(0, n, 40)] = rng.choice(SPECIAL, 40)
    y[rng.integers(0, n, 40)] = rng.choice(SPECIAL, 40)
    with np.errstate(all="ignore"):
        ref = np.array([ggml_cy.power(dt(a), dt(b)) for a, b in zip(x, y)], dt)
        lanes = 64 // np.dtype(dt).itemsize
        for ko in range(lanes):
            for ki in (0, ko, (ko + 5) % lanes):
                a, b = _offset_view(n, ki, dt), _offset_view(n, (ki + 1) % lanes, dt)
                o = _offset_view(n, ko, dt)
                a[...], b[...] = x, y
                ggml_cy.power(a, b, out=o)
                assert o.tobytes() == ref.tobytes(), (ko, ki)
            a, b = _offset_view(n, ko, dt), _offset_view(n, ko, dt)
            a[...], b[...] = x, y
            ggml_cy.power(a, b, out=a)
            assert a.tobytes() == ref.tobytes(), ("in place", ko)


def _offset_view(n, k, dt):
    """n elements of dt starting k elements past a 64-byte boundary."""
    isz = np.dtype(dt).itemsize
    buf = np.zeros(n * isz + 128, np.uint8)
    s = (-buf.ctypes.data) % 64 + k * isz
    return buf[s:s + n * isz].view(dt)


def test_float16_through_float32():
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    rng = np.random.default_rng(5)
    y = rng.choice(np.array([0.5, 2.0, -1.5, 3.0, 0.3, -7.0], np.float16), h.size)
    with np.errstate(all="ignore"):
        got = ggml_cy.power(h, y)
        want = np.power(h, y)
    assert got.dtype == np.float16
    d = np.abs(got.view(np.int16).astype(np.int32) - want.view(np.int16).astype(np.int32))
    ok = (np.isnan(got) & np.isnan(want)) | (d <= 1)
    assert ok.all(), (h[~ok][:5], y[~ok][:5], got[~ok][:5], want[~ok][:5])
