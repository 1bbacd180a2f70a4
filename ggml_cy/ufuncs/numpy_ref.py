"""numpy formulas of ggml's activations: the eager API's fallback for inputs its kernels do
not take (long double, lists, subclasses), with the same argument handling (out=, dtype=,
float promotion as numpy.exp does). Tests may use them as a readable reference too.

The formulas follow ggml's CPU definitions (ggml-cpu vec.h / unary-ops), with the
semantics ggml_cy's kernels give them: a NaN input gives NaN (relu, step, leaky_relu and
hardsigmoid too, where ggml's comparisons would give 0); softplus switches to x above 20.
"""
import math

import numpy as np


def _prepare(x, dtype):
    """x as an array of the float type the result will have."""
    a = np.asarray(x)
    if dtype is not None:
        return a.astype(np.exp.resolve_dtypes((a.dtype, None),
                                              signature=(None, np.dtype(dtype)),
                                              casting="same_kind")[0], copy=False)
    if a.dtype.kind in "biu":
        return a.astype(np.exp.resolve_dtypes((a.dtype, None))[1])
    if a.dtype.kind not in "f":
        raise TypeError(f"ggml_cy activations need real numbers, not dtype {a.dtype}")
    return a


def _finish(result, out, like):
    result = np.asarray(result, dtype=like.dtype)
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError("out must be an array or a 1-tuple holding one")
        out = out[0]
    if out is None:
        return result[()] if result.ndim == 0 else result
    if not isinstance(out, np.ndarray):
        raise TypeError("return arrays must be of ArrayType")
    np.copyto(out, result, casting="same_kind")
    return out


def _unary(formula):
    def activation(x, out=None, dtype=None):
        a = _prepare(x, dtype)
        with np.errstate(all="ignore"):
            r = formula(a)
            r = np.where(np.isnan(a), a, r)     # NaN in, NaN out
        return _finish(r, out, a)
    activation.__name__ = formula.__name__
    activation.__doc__ = formula.__doc__
    return activation


def _half(a):
    return a.dtype.type(0.5)


@_unary
def relu(a):
    """x if x > 0 else 0"""
    return np.where(a > 0, a, a.dtype.type(0))


@_unary
def sigmoid(a):
    """1 / (1 + exp(-x))"""
    one = a.dtype.type(1)
    return one / (one + np.exp(-a))


@_unary
def silu(a):
    """x / (1 + exp(-x))"""
    return a / (a.dtype.type(1) + np.exp(-a))


@_unary
def gelu(a):
    """0.5 x (1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2)))"""
    t = a.dtype.type
    c = t(math.sqrt(2.0 / math.pi))
    return _half(a) * a * (t(1) + np.tanh(c * a * (t(1) + t(0.044715) * a * a)))


@_unary
def gelu_erf(a):
    """0.5 x (1 + erf(x / sqrt 2))"""
    erf = np.vectorize(math.erf, otypes=[np.float64])
    t = a.dtype.type
    return (_half(a) * a * (t(1) + erf(a / t(math.sqrt(2.0))).astype(a.dtype))).astype(a.dtype)


@_unary
def erf(a):
    """the error function (math.erf per element)"""
    f = np.vectorize(math.erf, otypes=[np.float64])
    return f(a).astype(a.dtype)


@_unary
def gelu_quick(a):
    """x * sigmoid(1.702 x)"""
    t = a.dtype.type
    return a * (t(1) / (t(1) + np.exp(t(-1.702) * a)))


@_unary
def hardswish(a):
    """x * min(1, max(0, (x + 3) / 6))"""
    t = a.dtype.type
    return a * np.minimum(t(1), np.maximum(t(0), (a + t(3)) / t(6)))


@_unary
def hardsigmoid(a):
    """min(1, max(0, (x + 3) / 6))"""
    t = a.dtype.type
    return np.minimum(t(1), np.maximum(t(0), (a + t(3)) / t(6)))


@_unary
def softplus(a):
    """log(1 + exp(x)), x itself above 20"""
    t = a.dtype.type
    return np.where(a > t(20), a, np.log1p(np.exp(np.minimum(a, t(20)))))


@_unary
def step(a):
    """1 if x > 0 else 0"""
    return (a > 0).astype(a.dtype)


def elu(x, alpha=1.0, out=None, dtype=None):
    """x if x > 0 else alpha * (exp(x) - 1)"""
    a = _prepare(x, dtype)
    t = a.dtype.type
    with np.errstate(all="ignore"):
        r = np.where(a > 0, a, t(alpha) * np.expm1(np.where(a > 0, t(0), a)))
    return _finish(r, out, a)


def leaky_relu(x, negative_slope=0.01, out=None, dtype=None):
    """ggml's formula: (x > 0 ? x : 0) + slope * (x < 0 ? x : 0), NaN kept; the slope is a float32
    for float32/float16 data (ggml's op_params), the full double for wider data"""
    a = _prepare(x, dtype)
    t = a.dtype.type
    slope = t(np.float32(negative_slope)) if a.dtype.itemsize <= 4 else t(negative_slope)
    zero = t(0)
    with np.errstate(all="ignore"):
        r = np.where(a > 0, a, zero) + slope * np.where(a < 0, a, zero)
    r = np.where(np.isnan(a), a, r)
    return _finish(r, out, a)


def prelu(x, slope, out=None, dtype=None):
    """x if x > 0 else slope * x, slope broadcast"""
    xa, sa = np.asarray(x), np.asarray(slope)

    def key(v, a):   # Python int/float are weak (NEP 50), as in np.multiply
        return type(v) if type(v) in (int, float) else a.dtype
    d = np.multiply.resolve_dtypes((key(x, xa), key(slope, sa), None))[2] \
        if dtype is None else dtype
    a = _prepare(np.zeros((), d), dtype)
    xa = xa.astype(a.dtype, copy=False)
    sa = sa.astype(a.dtype, copy=False)
    return _finish(np.where(xa > 0, xa, sa * xa), out, a)


def scale(x, s, out=None, dtype=None):
    """x * s (s as a float32 for float32/float16 data, as ggml does)"""
    a = _prepare(x, dtype)
    if a.dtype.itemsize <= 4:
        r = (a.astype(np.float32) * np.float32(s)).astype(a.dtype)
    else:
        r = a * a.dtype.type(s)
    return _finish(r, out, a)


def float32_to_bfloat16(a):
    """bfloat16 storage (uint16) of a, round to nearest even (ggml_cy.core._core's helper)."""
    from ggml_cy.core._core import float32_to_bfloat16 as conv
    return conv(a)


def bfloat16_to_float32(a):
    """float32 values of bfloat16 storage (uint16)."""
    from ggml_cy.core._core import bfloat16_to_float32 as conv
    return conv(a)
