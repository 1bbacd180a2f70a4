"""Shared helpers for the op tests: numpy is the oracle.

* dtypes and input generators rich in special values (signed zeros, infinities, NaNs with
  payloads, subnormals, extreme magnitudes, integer min/max, zero divisors);
* operand layouts (transposed, negative strides, broadcast views, read-only, overlapping out);
* bitwise and ulp comparison that explain a mismatch (which elements, inputs, and whether
  only NaN payloads differ);
* references for ggml's activations, computed in long double and rounded once;
* a float64-exact round-to-nearest-even bfloat16 conversion;
* running numpy and ggml_cy side by side with identical warnings/exception capture.
"""
import os
import warnings

import numpy as np

# A module-level size switch: GGML_CY_TEST_SIZE=small trims the large cases (CI default is
# "full", which still runs the whole op-test suite in a few minutes on 2 cores).
SIZE = os.environ.get("GGML_CY_TEST_SIZE", "full")
LARGE_N = 200_003 if SIZE == "full" else 65_537  # odd: leaves a vector tail on every thread
MID_N = 100_003 if SIZE == "full" else 65_537  # the other large layouts: still threaded

FLOAT_DTYPES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16)]
INT_DTYPES = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8)]
BOOL_DTYPE = np.dtype(np.bool_)
NATIVE_DTYPES = FLOAT_DTYPES + INT_DTYPES + [BOOL_DTYPE]
NATIVE_IDS = [d.name for d in NATIVE_DTYPES]

_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_INT_OF_SIZE = {2: np.int16, 4: np.int32, 8: np.int64}


# --------------------------------------------------------------------------------------
# input values
# --------------------------------------------------------------------------------------
def _float_specials(dt):
    fi = np.finfo(dt)
    ibits = _UINT_OF_SIZE[dt.itemsize]
    # NaNs with a payload and with the sign bit, built from bit patterns
    exp_mask = {2: 0x7C00, 4: 0x7F800000, 8: 0x7FF0000000000000}[dt.itemsize]
    sign = {2: 0x8000, 4: 0x80000000, 8: 0x8000000000000000}[dt.itemsize]
    nan_payload = np.array(exp_mask | (1 << (fi.nmant - 1)) | 0x5, ibits).view(dt)
    neg_nan = np.array(sign | exp_mask | (1 << (fi.nmant - 1)), ibits).view(dt)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -3.0, 7.0, -7.0,
            0.1, -0.1, 10.0, 100.0, -1000.0,
            np.inf, -np.inf, np.nan, -np.nan,
            fi.smallest_subnormal, -fi.smallest_subnormal,
            fi.smallest_normal, -fi.smallest_normal,
            fi.smallest_normal - fi.smallest_subnormal,  # largest subnormal
            fi.max, -fi.max, fi.max / 2, fi.eps, 1 + fi.eps, 1 - fi.epsneg,
            float(fi.max) ** 0.5 if dt.itemsize > 2 else 200.0]
    with np.errstate(over="ignore"):  # finfo values are exact in float64
        arr = np.array([float(v) for v in vals], dtype=np.float64).astype(dt)
    arr = np.concatenate([arr, np.array([nan_payload, neg_nan], dtype=dt)])
    return arr


def _int_specials(dt):
    ii = np.iinfo(dt)
    vals = {0, 1, 2, 3, 7, ii.max, ii.max - 1, ii.min, ii.min + 1, ii.max // 2}
    if ii.min < 0:
        vals |= {-1, -2, -3, -7, ii.min // 2}
    return np.array(sorted(vals), dtype=dt)


def special_values(dtype):
    """The special values of a dtype, each once."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return _float_specials(dt)
    if dt.kind == "b":
        return np.array([False, True])
    return _int_specials(dt)


def random_values(dtype, n, rng, specials=True, finite=False, low=None, high=None):
    """n values of `dtype`: random over a wide range, with the special values sprinkled in."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        fi = np.finfo(dt)
        lo_exp = -8 if low is None else low
        hi_exp = (min(int(fi.maxexp * 0.3), 30)) if high is None else high
        mag = 10.0 ** rng.uniform(lo_exp, hi_exp, n)
        x = (rng.standard_normal(n) * mag)
        with np.errstate(over="ignore"):
            x = x.astype(dt)
        # some small integers and exact halves (rint/floor/remainder corner cases)
        k = n // 8
        x[:k] = (rng.integers(-20, 21, k) / 2).astype(dt)
    elif dt.kind == "b":
        x = rng.integers(0, 2, n).astype(dt)
    else:
        ii = np.iinfo(dt)
        lo = ii.min if low is None else low
        hi = ii.max if high is None else high
        x = rng.integers(lo, hi, n, endpoint=True, dtype=dt)
        k = n // 4  # small values make products and quotients interesting
        x[:k] = rng.integers(max(lo, -9), min(hi, 9), k, endpoint=True).astype(dt)
    if specials and n:
        s = special_values(dt)
        if finite and dt.kind == "f":
            s = s[np.isfinite(s)]
        if low is not None or high is not None:
            s = s[(s >= (low if low is not None else s.min()))
                  & (s <= (high if high is not None else s.max()))]
        idx = rng.choice(n, size=min(n, len(s) * 2), replace=False)
        x[idx] = np.resize(s, len(idx))
    return x


def pair_with_specials(dtype):
    """Two flat arrays covering every pair of special values (the full cross product)."""
    s = special_values(dtype)
    a = np.repeat(s, len(s))
    b = np.tile(s, len(s))
    return a, b


# --------------------------------------------------------------------------------------
# bitwise / ulp comparison
# --------------------------------------------------------------------------------------
def bits(x):
    """The raw bits of an array as unsigned ints (bool as uint8), for bitwise comparison."""
    x = np.asarray(x)
    if not x.flags.c_contiguous:  # (np.ascontiguousarray would make 0-d arrays 1-d)
        x = x.copy()
    if x.dtype.kind == "b":
        return x.view(np.uint8)
    if x.dtype.kind in "iuf":
        return x.view(_UINT_OF_SIZE[x.dtype.itemsize])
    return x


def _isnan(x):
    return np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)


def _describe(idx, got, exp, inputs, limit=6):
    lines = []
    for i in idx[:limit]:
        i = tuple(int(v) for v in i)
        ins = []
        for name, arr in inputs:
            try:
                v = np.broadcast_to(arr, got.shape)[i]
                ins.append(f"{name}={v!r}")
            except Exception:
                pass
        g, e = got[i], exp[i]
        gb, eb = bits(np.asarray(g)), bits(np.asarray(e))
        lines.append(f"  at {i}: {' '.join(ins)} -> expected {e!r} (0x{int(eb):x}) "
                     f"got {g!r} (0x{int(gb):x})")
    return "\n".join(lines)


def check_kind(got, expected):
    """numpy returns a scalar for 0-d results without out=, an ndarray otherwise."""
    ge, gg = isinstance(expected, np.ndarray), isinstance(got, np.ndarray)
    assert ge == gg, (f"result kind: numpy gives {type(expected).__name__}, "
                      f"ggml_cy gives {type(got).__name__}")


def numpy_free_choices(op, inputs, shape):
    """Elements where numpy's own answer depends on where the element sits in the array, so
    no implementation can match it bit for bit (measured on numpy 2.4, x86-64):
    * both operands NaN: add/multiply return the first operand's NaN in the unrolled vector
      body and the second's in the scalar tail (np.add(full(17, nan1), full(17, nan2)) gives
      16 x nan1 then nan2), and the second's again for array-op-scalar;
    * fmax/fmin of +0 and -0: the sign of the zero follows the same body/tail pattern.
    Returns a boolean mask (any NaN is accepted there; for fmax/fmin either zero), or None.
    Everything else, including one NaN operand (its payload must come through) and
    maximum/minimum of signed zeros (numpy is consistent there), stays bitwise."""
    if len(inputs) != 2:
        return None
    try:
        a, b = (np.broadcast_to(np.asarray(v), shape) for _, v in inputs)
    except ValueError:
        return None
    if a.dtype.kind != "f" and b.dtype.kind != "f":
        return None
    with np.errstate(invalid="ignore"):
        mask = _isnan(a) & _isnan(b)
        if op in ("fmax", "fmin"):
            mask = mask | ((a == 0) & (b == 0))
    return mask


def assert_bitwise(got, expected, inputs=(), what="", nan_payload=True, free=None):
    """Same dtype, same shape, same bits (NaN payloads and signed zeros count; with
    nan_payload=False any NaN matches any NaN, for references computed on another layout,
    where numpy's own choice between two NaN operands differs). `free`: a mask of elements
    where numpy's own choice is arbitrary (numpy_free_choices): there any NaN matches a NaN
    and either zero matches a zero."""
    exp = np.asarray(expected)
    g = np.asarray(got)
    assert g.dtype == exp.dtype, f"{what} dtype: expected {exp.dtype}, got {g.dtype}"
    assert g.shape == exp.shape, f"{what} shape: expected {exp.shape}, got {g.shape}"
    if exp.dtype.kind not in "biuf" or exp.dtype.itemsize not in _UINT_OF_SIZE:
        # long double (padding bytes hold garbage), objects, strings: equal values
        eq = exp.dtype.kind in "fc"
        assert np.array_equal(g, exp, equal_nan=eq), f"{what} values differ"
        return
    bad = bits(g) != bits(exp)
    if not nan_payload:
        bad &= ~(_isnan(g) & _isnan(exp))
    if free is not None and exp.dtype.kind == "f" and free.shape == bad.shape:
        with np.errstate(invalid="ignore"):
            bad &= ~(free & ((_isnan(g) & _isnan(exp)) | ((g == 0) & (exp == 0))))
    if bad.any():
        nan_only = bool(np.all(_isnan(g)[bad] & _isnan(exp)[bad]))
        idx = np.argwhere(bad)
        raise AssertionError(
            f"{what} {int(bad.sum())} of {bad.size} elements differ bitwise"
            f"{' (NaN payload/sign only)' if nan_only else ''}:\n"
            + _describe(idx, g, exp, inputs))


def _ordered(x):
    """Float bits mapped to integers that are ordered like the floats (+0 and -0 -> 0)."""
    ib = _INT_OF_SIZE[x.dtype.itemsize]
    i = np.array(x, copy=True).view(ib).astype(np.int64)
    mag = i & np.int64(np.iinfo(ib).max)
    return np.where(i < 0, -mag, mag)


def ulp_distance(a, b):
    """Elementwise distance in units in the last place of their (common float) dtype.
    NaN vs NaN is 0, NaN vs number is inf; +0 and -0 are equal."""
    a = np.asarray(a)
    b = np.asarray(b)
    assert a.dtype == b.dtype and a.dtype.kind == "f", (a.dtype, b.dtype)
    oa, ob = _ordered(a), _ordered(b)
    same_sign = (oa >= 0) == (ob >= 0)
    with np.errstate(over="ignore"):
        d_same = np.abs(oa - ob).astype(np.float64)
    d_cross = np.abs(oa).astype(np.float64) + np.abs(ob).astype(np.float64)
    d = np.where(same_sign, d_same, d_cross)
    na, nb = np.isnan(a), np.isnan(b)
    d = np.where(na & nb, 0.0, d)
    d = np.where(na ^ nb, np.inf, d)
    return d


def assert_ulp(got, expected, max_ulp, inputs=(), what="", exact=None):
    """Same dtype and shape, values within max_ulp; returns the measured maximum.

    `exact` (optional, the correctly rounded values): an element further than max_ulp from
    numpy still passes when it is at least as close to the exact value as numpy's own
    result is (numpy's float32 log is 3 ulp off at some inputs; a more accurate answer is
    not a defect). The returned maximum is always the plain distance to numpy."""
    exp = np.asarray(expected)
    g = np.asarray(got)
    assert g.dtype == exp.dtype, f"{what} dtype: expected {exp.dtype}, got {g.dtype}"
    assert g.shape == exp.shape, f"{what} shape: expected {exp.shape}, got {g.shape}"
    if exp.size == 0:
        return 0.0
    if exp.dtype.itemsize not in _INT_OF_SIZE:  # long double: handed to numpy, so equal
        assert np.array_equal(g, exp, equal_nan=True), f"{what} values differ"
        return 0.0
    d = ulp_distance(g, exp)
    worst = float(d.max())
    bad = d > max_ulp
    if exact is not None and bad.any():
        ex = np.asarray(exact)
        bad &= ~(ulp_distance(g, ex) <= ulp_distance(exp, ex))
    if bad.any():
        idx = np.argwhere(bad)
        order = np.argsort(-d[tuple(idx.T)], kind="stable")
        raise AssertionError(
            f"{what} max ulp distance {worst:g} > {max_ulp} at {len(idx)} of {d.size} "
            f"{'(and further from the exact value than numpy) ' if exact is not None else ''}"
            f"elements:\n" + _describe(idx[order], g, exp, inputs))
    return worst


# --------------------------------------------------------------------------------------
# running numpy and ggml_cy the same way
# --------------------------------------------------------------------------------------
class Outcome:
    """What a call did: its value or exception, and the RuntimeWarnings it emitted."""

    def __init__(self, value=None, exc=None, warns=()):
        self.value, self.exc, self.warns = value, exc, frozenset(warns)

    def __repr__(self):
        return f"Outcome(exc={self.exc!r}, warns={sorted(self.warns)})"


def run(thunk):
    """Call thunk() under np.errstate(all='warn'), recording warnings and any exception."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with np.errstate(all="warn"):
            try:
                value = thunk()
                exc = None
            except Exception as e:  # noqa: BLE001 - we compare exceptions with numpy's
                value, exc = None, e
    warns = {(w.category.__name__, str(w.message)) for w in rec
             if issubclass(w.category, RuntimeWarning)}
    return Outcome(value, exc, warns)


def public_exc_type(exc):
    """The first class in an exception's MRO that users can name (builtins or numpy's public
    modules): numpy raises private subclasses such as _UFuncOutputCastingError."""
    for cls in type(exc).__mro__:
        mod = cls.__module__
        if mod == "builtins" or mod in ("numpy", "numpy.exceptions"):
            return cls
    return Exception


def assert_same_exception(got, expected, check_message=False, what=""):
    assert got.exc is not None, (f"{what} numpy raises {type(expected.exc).__name__}: "
                                 f"{expected.exc}; ggml_cy returned a result")
    base = public_exc_type(expected.exc)
    assert isinstance(got.exc, base), (
        f"{what} numpy raises {type(expected.exc).__name__} ({base.__name__}): "
        f"{expected.exc!s}; ggml_cy raises {type(got.exc).__name__}: {got.exc!s}")
    if check_message:
        assert str(got.exc) == str(expected.exc), (
            f"{what} message: numpy {str(expected.exc)!r}, ggml_cy {str(got.exc)!r}")


def compare_outcomes(got, expected, exact=True, max_ulp=0, inputs=(), what="",
                     check_message=False, check_warnings=True, out=None, op=None,
                     exact_values=None):
    """The whole contract for one call: same exception type (and message when asked), or
    same result kind, dtype, shape and bits (or ulp), `out` returned, same warnings."""
    if expected.exc is not None:
        assert_same_exception(got, expected, check_message, what)
        return None
    if got.exc is not None:
        raise AssertionError(f"{what} numpy returns a result; ggml_cy raises "
                             f"{type(got.exc).__name__}: {got.exc}") from got.exc
    if out is not None:
        assert got.value is out, f"{what} the result must be the `out` array itself"
    check_kind(got.value, expected.value)
    worst = 0.0
    if exact:
        free = None
        if op is not None:
            free = numpy_free_choices(op, inputs, np.shape(expected.value))
        assert_bitwise(got.value, expected.value, inputs, what, free=free)
    else:
        worst = assert_ulp(got.value, expected.value, max_ulp, inputs, what,
                           exact=exact_values)
    if check_warnings:
        assert got.warns == expected.warns, (
            f"{what} warnings: numpy {sorted(expected.warns)}, ggml_cy {sorted(got.warns)}")
    return worst


# --------------------------------------------------------------------------------------
# references for ggml's activations (long double, rounded once to the input dtype)
# --------------------------------------------------------------------------------------
LD = np.longdouble
_SQRT2 = np.sqrt(LD(2))
_SQRT_2_OVER_PI = np.sqrt(LD(2) / np.arccos(LD(-1)))
_SQRTPI = np.sqrt(np.arccos(LD(-1)))


def erfc_ld(z):
    """erfc in long double: a positive-term series for |z| < 1.25 (no cancellation in erf, and
    1 - erf loses < 4 bits there), a continued fraction above, 2 - erfc(-z) below -1.25."""
    z = np.asarray(z, dtype=LD)
    out = np.empty_like(z)
    az = np.abs(z)
    small = az < 1.25
    if small.any():
        zs = z[small]
        z2 = zs * zs
        term = zs.copy()
        s = zs.copy()
        for n in range(1, 120):
            term = term * (2 * z2) / LD(2 * n + 1)
            s = s + term
        erf = LD(2) / _SQRTPI * np.exp(-z2) * s
        out[small] = 1 - erf
    big = ~small
    if big.any():
        zb = az[big]
        t = zb.copy()
        for k in range(300, 0, -1):  # converged to 1e-20 from z = 1.25 up
            t = zb + LD(k) / LD(2) / t
        with np.errstate(under="ignore"):
            ec = np.exp(-zb * zb) / _SQRTPI / t
        out[big] = np.where(z[big] > 0, ec, 2 - ec)
    return out


def _sigmoid_ld(x):
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))
    # stable both ways: 1/(1+e^-x) for x >= 0, e^x/(1+e^x) below
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _softplus_ld(x):
    with np.errstate(over="ignore"):
        return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def activation_reference(name, x, *params):
    """ggml's activation `name` of float array x, exact math in long double, rounded once to
    x.dtype. Parameters are used at the precision given (callers pass them as numpy would see
    them). ggml's definitions (ggml-cpu/vec.h) fix the piecewise conventions: relu(x) = x if
    x > 0 else 0, step(x) = 1 if x > 0 else 0, elu with alpha 1 uses expm1."""
    xl = np.asarray(x).astype(LD)
    dt = np.asarray(x).dtype
    with np.errstate(all="ignore"):
        if name == "relu":
            r = np.where(xl > 0, xl, LD(0))
        elif name == "step":
            r = np.where(xl > 0, LD(1), LD(0))
        elif name == "sigmoid":
            r = _sigmoid_ld(xl)
        elif name == "silu":
            r = xl * _sigmoid_ld(xl)
        elif name == "gelu":
            inner = _SQRT_2_OVER_PI * xl * (1 + LD("0.044715") * xl * xl)
            r = LD(0.5) * xl * (1 + np.tanh(inner))
            # for very negative x, 1 + tanh cancels: use 1 + tanh(u) = 2 / (1 + e^{-2u})
            r = np.where(inner < -1, xl * np.exp(2 * inner) / (1 + np.exp(2 * inner)), r)
        elif name == "gelu_erf":
            r = LD(0.5) * xl * erfc_ld(-xl / _SQRT2)
        elif name == "gelu_quick":
            r = xl * _sigmoid_ld(LD("1.702") * xl)
        elif name == "elu":
            r = np.where(xl > 0, xl, np.expm1(xl))
        elif name == "hardsigmoid":
            r = np.minimum(LD(1), np.maximum(LD(0), (xl + 3) / 6))
        elif name == "hardswish":
            r = xl * np.minimum(LD(1), np.maximum(LD(0), (xl + 3) / 6))
        elif name == "softplus":
            r = _softplus_ld(xl)
        elif name == "leaky_relu":
            (slope,) = params
            r = np.where(xl > 0, xl, LD(slope) * xl)
        else:
            raise KeyError(name)
        # keep NaN inputs NaN in the reference for the smooth functions
        r = np.where(np.isnan(xl), xl, r)
        return r.astype(dt)


ACTIVATIONS = ["relu", "sigmoid", "silu", "gelu", "gelu_erf", "gelu_quick", "elu",
               "hardswish", "hardsigmoid", "softplus", "step"]

# Bounds for "ulp within" checks.
ULP_BOUND = {"float32": 2, "float64": 2, "float16": 1}
# float32 activations whose float-lane forms (csrc/simd_math.h, simd_math_act32.h) stack
# roundings on exp's: their own budgets (README "Math functions": sigmoid 2.5, softplus 2.5,
# silu / gelu / gelu_quick 3.5 ulp of the exact value; gelu_erf 3.5 at avx512, simd_math_gelu32.h)
# as a distance from the rounded value
ACT_ULP_F32 = {"sigmoid": 3, "softplus": 3, "silu": 4, "gelu": 4, "gelu_quick": 4, "gelu_erf": 4}
# float64 sigmoid / silu (plain double lanes, simd_math_f64.h): within 2.5 / 3 ulp
ACT_ULP_F64 = {"sigmoid": 3, "silu": 3}


# --------------------------------------------------------------------------------------
# bfloat16, exactly (round to nearest even from the float64 value)
# --------------------------------------------------------------------------------------
def float_to_bf16_bits(x):
    """bfloat16 bits (uint16) of float16/32/64 values, rounded once to nearest-even from the
    exact value (computed in float64, where every step below is exact). NaN -> quiet NaN
    keeping the sign (the payload is not compared); overflow -> inf."""
    x = np.asarray(x)
    v = x.astype(np.float64)
    out = np.zeros(v.shape, np.uint16)
    fin = np.isfinite(v)
    with np.errstate(all="ignore"):
        a = np.abs(v)
        e = np.floor(np.log2(np.where(a > 0, a, 1.0)))
        # log2 can be off by one near powers of two: fix the exponent exactly
        e = np.where(np.ldexp(1.0, e.astype(int)) > a, e - 1, e)
        e = np.where(np.ldexp(1.0, (e + 1).astype(int)) <= a, e + 1, e)
        e = np.maximum(e, -126)  # bfloat16 subnormals share 2^-126's quantum
        q_exp = (e - 7).astype(int)
        r = np.rint(np.ldexp(v, -q_exp))  # exact scaling, then RNE to an integer
        rv = np.ldexp(r, q_exp)
        f32 = rv.astype(np.float32)  # exact (or inf past bfloat16's max)
    b = (f32.view(np.uint32) >> 16).astype(np.uint16)
    out[fin] = b[fin]
    out[np.isposinf(v)] = 0x7F80
    out[np.isneginf(v)] = 0xFF80
    nan = np.isnan(v)
    out[nan] = np.where(np.signbit(v[nan]), 0xFFC0, 0x7FC0)
    return out


def bf16_bits_to_float64(b):
    b = np.asarray(b, dtype=np.uint16)
    with np.errstate(invalid="ignore"):  # signaling NaNs are quieted
        return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def assert_bf16_equal(got_bits, exp_bits, inputs=(), what=""):
    """bfloat16 bit arrays equal; any NaN matches any NaN of the same sign."""
    g = np.asarray(got_bits).view(np.uint16)
    e = np.asarray(exp_bits).view(np.uint16)
    assert g.shape == e.shape, f"{what} shape {g.shape} != {e.shape}"
    gn = ((g & 0x7FFF) > 0x7F80)
    en = ((e & 0x7FFF) > 0x7F80)
    bad = np.where(en, ~gn | ((g >> 15) != (e >> 15)), g != e)
    if bad.any():
        idx = np.argwhere(bad)
        lines = []
        for i in idx[:6]:
            i = tuple(int(v) for v in i)
            ins = " ".join(f"{n}={np.broadcast_to(a, g.shape)[i]!r}" for n, a in inputs)
            lines.append(f"  at {i}: {ins} -> expected 0x{int(e[i]):04x} got 0x{int(g[i]):04x}")
        raise AssertionError(f"{what} {int(bad.sum())} of {bad.size} bfloat16 values differ:\n"
                             + "\n".join(lines))


# --------------------------------------------------------------------------------------
# layouts
# --------------------------------------------------------------------------------------
def strided_like(x, layout, rng=None):
    """A view with x's values and shape but a different memory layout."""
    x = np.asarray(x)
    if layout == "contiguous" or x.ndim == 0:
        return x.copy()
    if layout == "transposed":  # Fortran order: x == base.T
        return np.asfortranarray(x)
    if layout == "negstride":
        base = np.empty(x.shape[:-1] + (2 * x.shape[-1],), x.dtype) if x.ndim else x
        v = base[..., ::-2][::-1] if x.ndim >= 1 else base
        v[...] = x
        return v
    if layout == "sliced":
        shape = tuple(2 * n + 1 for n in x.shape)
        base = np.zeros(shape, x.dtype)
        sl = tuple(slice(1, 1 + 2 * n, 2) for n in x.shape)
        base[sl] = x
        return base[sl]
    if layout == "readonly":
        y = x.copy()
        y.setflags(write=False)
        return y
    raise KeyError(layout)
