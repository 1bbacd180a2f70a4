"""float32 power's vector form (issue 14 item 2, csrc/simd_math_pow32.h, kernels_elem.h's
kern_pow_row_f32): 2^(y log2 x) in double lanes, rounded once.

Held to 0.53 ulp of the exact value (float64 power is exact to 2^-52 here, far below what
is measured; the x86-64-v2 baseline keeps powf, like the slow lanes below), with numpy's special-value results and warnings: the lanes the vector form
does not take (zeros, infinities, NaN, a negative base to a fractional power, results near
or past the float32 range) go through the C library's powf and the KERN_POW_* rules, as
before. Every layout (contiguous, broadcast, strided, 0-d, in place, any alignment, graph,
evaluate, float16) gives the same bits: the scalar kernel runs the vector code.
"""
import warnings

import numpy as np
import pytest

import ggml_cy

BUDGET_VECTOR = 0.53   # the vector form's lanes: |y log2 x| within [-125.5, 127.5]
BUDGET_LIBM = 1.0      # the other lanes: the C library's powf (glibc's: 0.55 ulp measured here)


def _vector_level():
    """Whether this dispatch level runs the vector form (avx2, avx512; the x86-64-v2
    baseline keeps powf for every lane)."""
    from ggml_cy.core import _startup
    return _startup.dispatch_state.get("level") != "baseline"

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0,
                    -3.0, 1e-45, -1e-45, 1.1754942e-38, 3.4028235e38, -3.4028235e38, 1e-30,
                    1e30, 0.999999, 1.000001, 2.0 ** 24, 2.0 ** 24 + 2, -(2.0 ** 24) - 2,
                    16777215.0, 127.5, 128.0, -126.0, -149.0, -150.0, 0.1, 10.0, 1e10, -1e10,
                    2.0 ** 64, 2.0 ** -64, 1.5, -1.5, 7.0, 0.25],
                   np.float32)


def _ulp_err(got, x, y):
    """|got - exact| in float32 ulps of the exact value (the float64 power, good to 2^-52)."""
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), y.astype(np.float64))
        rf = ref.astype(np.float32)
        a = np.maximum(np.abs(rf), np.finfo(np.float32).smallest_subnormal)
        a = np.where(np.isinf(rf), np.finfo(np.float32).max, a)
        e = np.abs(got.astype(np.float64) - ref) / np.spacing(a).astype(np.float64)
    same = (np.isnan(got) & np.isnan(ref)) | (got.astype(np.float64) == ref) | \
           (np.isinf(got) & (got == rf))
    return np.where(same, 0.0, np.where(np.isnan(e), np.inf, e))


def _check(x, y):
    """The worst error on the vector form's lanes and on the others (each within its
    budget)."""
    with np.errstate(all="ignore"):
        got = ggml_cy.power(x, y, n_threads=2)
        t = y.astype(np.float64) * np.log2(np.abs(x.astype(np.float64)))
    assert got.dtype == np.float32
    fast = (t >= -125.5) & (t <= 127.5) & (x != 0)
    err = _ulp_err(got, x, y)
    worst = []
    fast_budget = BUDGET_VECTOR if _vector_level() else BUDGET_LIBM
    for lanes, budget in ((fast, fast_budget), (~fast, BUDGET_LIBM)):
        e = np.where(lanes, err, 0.0)
        w = int(np.argmax(e))
        assert e[w] <= budget, (f"{x[w]!r} ** {y[w]!r} = {got[w]!r} (exact "
                                f"{float(x[w]) ** float(y[w])!r}): {e[w]:.4f} ulp")
        worst.append(float(e[w]))
    return worst


def test_accuracy_over_the_whole_range():
    rng = np.random.default_rng(0)
    n = 1 << 18
    # every positive float32 (subnormals included) to exponents that keep the result in range
    x = rng.integers(1, 0x7f800000, n, dtype=np.uint32).view(np.float32)
    lx = np.log2(x.astype(np.float64))
    y = (rng.uniform(-150, 130, n) / np.where(np.abs(lx) < 1e-3, 1e-3, lx)).astype(np.float32)
    _check(x, y)
    # the bench's inputs, and x near 1 to big exponents (log2 x relative there)
    _check((np.abs(3 * rng.standard_normal(n)) + 1e-3).astype(np.float32),
           (3 * rng.standard_normal(n)).astype(np.float32))
    x = (1 + rng.uniform(-1e-3, 1e-3, n)).astype(np.float32)
    _check(x, rng.uniform(-8e4, 8e4, n).astype(np.float32))
    # every table interval and its edges
    k = np.arange(-130, 130)
    m = np.linspace(0.765625, 1.53125, 257)
    xe = np.ldexp(m[None, :], k[:, None]).ravel()
    xe = xe[(xe > 1e-45) & (xe < 3e38)].astype(np.float32)
    _check(xe, np.full(xe.size, 0.7310586, np.float32))
    _check(xe, np.float32(-100.0 / np.maximum(np.abs(np.log2(xe.astype(np.float64))), 1)))


def test_results_are_exact_where_the_power_is():
    x = np.array([2, 3, 0.5, 10, 1.5, 7, 1, 1, 4, 9, 1024, 0.25], np.float32)
    y = np.array([10, 2, 3, 7, 2, 3, 1e30, -1e30, 0.5, 0.5, -0.1, -1.5], np.float32)
    with np.errstate(all="ignore"):
        got = ggml_cy.power(x, y)
    want = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    assert np.array_equal(got, want)


def test_negative_bases():
    rng = np.random.default_rng(1)
    n = 1 << 16
    x = -(np.abs(rng.standard_normal(n)) * 10 + 1e-3).astype(np.float32)
    y = rng.integers(-30, 30, n).astype(np.float32)
    _check(x, y)
    with np.errstate(all="ignore"):
        assert (np.signbit(ggml_cy.power(x, y)) == (y % 2 == 1)).all()
    # even integers beyond 2^24 (every float32 there), fractional exponents: NaN, "invalid"
    big = np.array([2.0 ** 24, 2.0 ** 30, 2.0 ** 24 + 2], np.float32)
    with np.errstate(all="ignore"):
        got = ggml_cy.power(np.float32(-1.0), big)
    assert np.array_equal(got, np.ones(3, np.float32))
    with np.errstate(invalid="raise"):
        with pytest.raises(FloatingPointError):
            ggml_cy.power(np.array([-2.0, 2.0], np.float32), np.array([0.5, 0.5], np.float32))


def _warnings_of(fn, x, y):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with np.errstate(all="warn"):
            r = fn(x, y)
    return r, {k for m in w for k in ("overflow", "underflow", "divide", "invalid")
               if k in str(m.message)}


def test_special_values_and_warnings_are_numpys():
    """Every pair of SPECIAL values, one pair per call beside two fast lanes: numpy's result
    (NaN, infinities and zeros with their sign exactly, others within 2 ulp: numpy's SVML
    power is within 1 ulp, ours 0.53) and numpy's warnings."""
    for xv in SPECIAL:
        for yv in SPECIAL:
            x = np.array([1.5, xv, 2.0], np.float32)
            y = np.array([2.5, yv, 0.5], np.float32)
            got, gw = _warnings_of(ggml_cy.power, x, y)
            want, ww = _warnings_of(np.power, x, y)
            assert gw == ww, (xv, yv, gw, ww)
            g, w = got[1], want[1]
            if np.isnan(w) or not np.isfinite(w) or w == 0:
                assert g.tobytes() == w.tobytes() or (np.isnan(g) and np.isnan(w)), (xv, yv, g, w)
            else:
                d = abs(int(g.view(np.int32)) - int(w.view(np.int32)))
                assert d <= 2, (xv, yv, g, w)


def test_the_edges_of_the_fast_range():
    """|y log2 x| next to 125.5 and 127.5 (the vector form's limits), overflow, the normal
    and subnormal results near 2^-126 and 2^-149: numpy's values and warnings."""
    t = np.concatenate([np.linspace(a - 0.01, a + 0.01, 41) for a in
                        (-150.0, -149.0, -126.0, -125.5, 127.5, 128.0)])
    for base in (2.0, 0.5, 3.0, 1.001, 1e-10):
        x = np.full(t.size, base, np.float32)
        y = np.float32(t / np.log2(np.float64(np.float32(base))))
        got, gw = _warnings_of(ggml_cy.power, x, y)
        want, ww = _warnings_of(np.power, x, y)
        assert gw == ww, (base, gw, ww)
        assert np.array_equal(np.isinf(got), np.isinf(want))
        assert np.array_equal(got == 0, want == 0)
        fin = np.isfinite(want) & (want != 0)
        d = np.abs(got[fin].view(np.int32).astype(np.int64) - want[fin].view(np.int32))
        assert d.max(initial=0) <= 2, base
        _check(x, y)


def test_every_layout_gives_the_same_bits():
    rng = np.random.default_rng(3)
    x = (np.abs(rng.standard_normal((37, 53))) * 4 + 1e-3).astype(np.float32)
    y = (rng.standard_normal((37, 53)) * 4).astype(np.float32)
    x[::7, ::5] *= -1                        # negative bases: slow lanes where y is not integral
    y[::3, ::4] = np.round(y[::3, ::4])
    x[5, :5] = [0.0, np.inf, np.nan, -0.0, 1e-45]
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
            r = np.asarray(ggml_cy.power(np.float32(xv), np.float32(yv)))
            assert r.view(np.uint32) == np.float32(b).view(np.uint32)
            # broadcast operands: one x to a row of y, a row of x to one y
        row = ggml_cy.power(x[3], y)
        assert np.array_equal(row, np.broadcast_to(
            [[ggml_cy.power(np.float32(a), np.float32(b)) for a, b in zip(x[3], yr)] for yr in y],
            y.shape), equal_nan=True)
        assert np.array_equal(ggml_cy.power(x[:, :1], y[7]),
                              ggml_cy.power(np.repeat(x[:, :1], 53, 1), np.tile(y[7], (37, 1))),
                              equal_nan=True)
        assert np.array_equal(ggml_cy.power(np.float32(2.5), y),
                              ggml_cy.power(np.full_like(y, 2.5), y), equal_nan=True)
        assert np.array_equal(ggml_cy.power(x, np.float32(1.7)),
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


def test_rows_at_every_alignment_give_the_same_bits():
    rng = np.random.default_rng(7)
    n = 700
    x = (np.abs(rng.standard_normal(n)) * 4 + 1e-3).astype(np.float32)
    y = (rng.standard_normal(n) * 4).astype(np.float32)
    x[rng.integers(0, n, 40)] = rng.choice(SPECIAL, 40)
    y[rng.integers(0, n, 40)] = rng.choice(SPECIAL, 40)
    with np.errstate(all="ignore"):
        ref = np.array([ggml_cy.power(np.float32(a), np.float32(b)) for a, b in zip(x, y)],
                       np.float32)
        for ko in range(16):
            for ki in (0, ko, (ko + 5) % 16):
                a, b, o = _offset_view(n, ki), _offset_view(n, (ki + 1) % 16), _offset_view(n, ko)
                a[...], b[...] = x, y
                ggml_cy.power(a, b, out=o)
                assert o.tobytes() == ref.tobytes(), (ko, ki)
            a, b = _offset_view(n, ko), _offset_view(n, ko)
            a[...], b[...] = x, y
            ggml_cy.power(a, b, out=a)
            assert a.tobytes() == ref.tobytes(), ("in place", ko)


def _offset_view(n, k):
    buf = np.zeros(n * 4 + 128, np.uint8)
    s = (-buf.ctypes.data) % 64 + k * 4
    return buf[s:s + n * 4].view(np.float32)


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
