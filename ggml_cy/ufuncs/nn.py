"""Transformer row ops as numpy-style functions (issue 13, ops1): norms, softmax, GLU.

Each call builds a one-node ggml graph over the numpy memory (no copy of the input, the
result written straight into the returned array) and runs it on ggml_cy's CPU kernels
(cpu/csrc/ops_norm.h) with ``n_threads`` threads (default: ``ggml_cy.get_num_threads()``).

    rms_norm(x, eps=1e-6)            x / sqrt(mean(x**2, axis=-1) + eps)
    layer_norm(x, eps=1e-5)          (x - mean) / sqrt(var + eps) over the last axis (ggml_norm,
                                     no affine weights)
    group_norm(x, n_groups, eps=1e-5)   ggml_group_norm: x (..., C, H, W), the C channels in
                                     n_groups groups of ceil(C / n_groups), each normalized
                                     over its channels * H * W values
    softmax(x, axis=-1)              exp(x - max) / sum(exp(x - max)) along axis (an int or
                                     None for the whole array)
    swiglu(x, g=None, swapped=False) silu(x) * g; with g None, x's last axis holds [x, g]
                                     (ggml's fused form; swapped: [g, x]); same for
    geglu, reglu, geglu_erf, geglu_quick  (gelu tanh approximation, relu, gelu erf form,
                                     x * sigmoid(1.702 x))

Types as numpy's float functions (np.exp): float32 and float64 compute in their own
precision, float16 (and bool, int8, uint8) through float32 with a float16 result, int16 to
float32, other integers to float64. Anything else (complex, object, ...) is a TypeError.
Split-form GLU operands broadcast against each other.
"""
import operator

import numpy as np

from ggml_cy.core import _core
from ggml_cy.core._core import GGMLType
from ggml_cy.cpu.threads import check_num_threads, get_num_threads
from ggml_cy.graph import _graph
from ggml_cy.graph.context import Context

__all__ = ["rms_norm", "layer_norm", "group_norm", "softmax",
           "swiglu", "geglu", "reglu", "geglu_erf", "geglu_quick"]

_GTYPE = {np.dtype(np.float32): GGMLType.F32, np.dtype(np.float64): GGMLType.F64}
_MEM = 8 * _core.tensor_overhead() + Context.graph_overhead(8) + 4096


def _result_dtype(name, *arrays):
    """numpy's float-function promotion (np.exp): the result dtype, and the dtype the
    kernels compute in."""
    for a in arrays:
        if a.dtype.kind not in "biuf":
            raise TypeError(f"{name}: arrays of dtype {a.dtype} are not supported (real "
                            "floating-point or integer data)")
    rt = np.result_type(*[a.dtype for a in arrays], np.float16)
    if rt not in (np.float16, np.float32, np.float64):
        raise TypeError(f"{name}: dtype {rt} is not supported (float16, float32, float64)")
    return rt, (np.dtype(np.float64) if rt == np.float64 else np.dtype(np.float32))


def _threads(n_threads):
    return get_num_threads() if n_threads is None else check_num_threads(n_threads)


def _leaf(ctx, arr, ctype):
    """A tensor header over arr's memory (ne reversed from the shape, byte strides)."""
    ne = list(reversed(arr.shape)) + [1] * (4 - arr.ndim)
    nb = list(reversed(arr.strides)) + [0] * (4 - arr.ndim)
    t = ctx.new_tensor(_GTYPE[ctype], tuple(ne))
    _graph.set_layout(t, arr.ctypes.data, nb)
    return t


def _run(build, arrays, ctype, out_shape, n_threads):
    """Computes build(ctx, *leafs) over arrays (at most 4-D, of dtype ctype) into a new
    C-contiguous array of out_shape."""
    out = np.empty(out_shape, dtype=ctype)
    if out.size == 0 or any(a.size == 0 for a in arrays):
        return out
    ctx = Context(_MEM, no_alloc=True)
    leafs = [_leaf(ctx, a, ctype) for a in arrays]
    r = build(ctx, *leafs)
    _graph.set_layout(r, out.ctypes.data,
                      list(reversed(out.strides)) + [0] * (4 - out.ndim))
    g = ctx.new_graph(8)
    g.build_forward_expand(r)
    g.compute(n_threads)
    return out


def _as_rows(arr, keep):
    """arr with its leading dims merged so that it has at most 4 (the last `keep` kept)."""
    if arr.ndim <= 4:
        return arr
    return arr.reshape((-1,) + arr.shape[arr.ndim - keep:])


def _row_op(name, x, build, n_threads):
    arr = np.asarray(x)
    rt, ct = _result_dtype(name, arr)
    nt = _threads(n_threads)
    shape = arr.shape
    a = _as_rows(arr.reshape(1) if arr.ndim == 0 else arr, 3).astype(ct, copy=False)
    out = _run(build, [a], ct, a.shape, nt).reshape(shape)
    return out.astype(rt, copy=False)


def _eps(eps, name):
    from ggml_cy.graph.context import _eps as check
    return check(eps, name)


def rms_norm(x, eps=1e-6, *, n_threads=None):
    """x / sqrt(mean(x**2, axis=-1, keepdims=True) + eps) (ggml_rms_norm), eps >= 0."""
    eps = _eps(eps, "rms_norm")
    return _row_op("rms_norm", x, lambda ctx, a: ctx.rms_norm(a, eps), n_threads)


def layer_norm(x, eps=1e-5, *, n_threads=None):
    """(x - mean) / sqrt(var + eps) over the last axis (ggml_norm; no affine weights)."""
    eps = _eps(eps, "layer_norm")
    return _row_op("layer_norm", x, lambda ctx, a: ctx.norm(a, eps), n_threads)


def group_norm(x, n_groups, eps=1e-5, *, n_threads=None):
    """ggml_group_norm on x of shape (..., C, H, W) (at least 3-D): the C channels in
    n_groups groups of ceil(C / n_groups) consecutive channels (the last group may be
    smaller, or groups past C empty), each group of each leading index normalized over its
    channels * H * W values: (x - mean) / sqrt(var + eps)."""
    from ggml_cy.graph.context import _int_in
    n_groups = _int_in(n_groups, "group_norm: n_groups", 1)
    eps = _eps(eps, "group_norm")
    arr = np.asarray(x)
    if arr.ndim < 3:
        raise ValueError(f"group_norm: x must have at least 3 dimensions (..., C, H, W), "
                         f"got shape {arr.shape}")
    return _row_op("group_norm", arr, lambda ctx, a: ctx.group_norm(a, n_groups, eps),
                   n_threads)


def softmax(x, axis=-1, *, n_threads=None):
    """exp(x - max) / sum(exp(x - max)) along axis (scipy.special.softmax's meaning;
    axis=None: over the whole array). Computed by ggml_soft_max on rows of the last axis
    (another axis is moved there: a copy)."""
    arr = np.asarray(x)
    if axis is None:
        return softmax(arr.reshape(-1), -1, n_threads=n_threads).reshape(arr.shape)
    if isinstance(axis, bool) or not hasattr(axis, "__index__"):
        raise TypeError(f"softmax: axis must be an integer or None, not "
                        f"{type(axis).__name__}")
    axis = operator.index(axis)
    nd = max(arr.ndim, 1)
    if not -nd <= axis < nd:
        raise np.exceptions.AxisError(axis, nd) if hasattr(np, "exceptions") else \
            ValueError(f"softmax: axis {axis} is out of bounds for {nd} dimensions")
    if arr.ndim == 0 or axis % nd == nd - 1:
        return _row_op("softmax", arr, lambda ctx, a: ctx.soft_max(a), n_threads)
    moved = np.moveaxis(arr, axis, -1)
    out = _row_op("softmax", moved, lambda ctx, a: ctx.soft_max(a), n_threads)
    return np.moveaxis(out, -1, axis)


def _glu(name, op, x, g, swapped, n_threads):
    if not isinstance(swapped, (bool, np.bool_)):
        raise TypeError(f"{name}: swapped must be a bool, not {type(swapped).__name__}")
    nt = _threads(n_threads)
    arr = np.asarray(x)
    if g is None:
        rt, ct = _result_dtype(name, arr)
        if arr.ndim == 0 or arr.shape[-1] % 2:
            raise ValueError(f"{name}: the fused form needs an even last axis ([x, g] "
                             f"halves), got shape {arr.shape}")
        shape = arr.shape[:-1] + (arr.shape[-1] // 2,)
        a = _as_rows(arr, 3).astype(ct, copy=False)
        out = _run(lambda ctx, t: ctx.glu(t, op, bool(swapped)), [a], ct,
                   a.shape[:-1] + (a.shape[-1] // 2,), nt)
        return out.reshape(shape).astype(rt, copy=False)
    if swapped:
        raise ValueError(f"{name}: swapped is for the fused form (g=None) only")
    garr = np.asarray(g)
    rt, ct = _result_dtype(name, arr, garr)
    try:
        a, b = np.broadcast_arrays(arr, garr)
    except ValueError:
        raise ValueError(f"{name}: x {arr.shape} and g {garr.shape} do not broadcast") \
            from None
    shape = a.shape
    if a.ndim == 0:
        a, b = a.reshape(1), b.reshape(1)
    a = _as_rows(a, 3).astype(ct, copy=False)
    b = _as_rows(b, 3).astype(ct, copy=False)
    out = _run(lambda ctx, s, t: ctx.glu_split(s, t, op), [a, b], ct, a.shape, nt)
    return out.reshape(shape).astype(rt, copy=False)


def _make_glu(name, formula):
    def fn(x, g=None, *, swapped=False, n_threads=None):
        return _glu(name, name, x, g, swapped, n_threads)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{formula} * g (ggml_{name}). With g None, x's last axis holds the two "
                  f"halves [x, g] (swapped=True: [g, x]) and the result has half its "
                  f"length; else x and g broadcast.")
    return fn


swiglu = _make_glu("swiglu", "silu(x)")
geglu = _make_glu("geglu", "gelu(x) (tanh approximation)")
reglu = _make_glu("reglu", "relu(x)")
geglu_erf = _make_glu("geglu_erf", "gelu(x) (erf form)")
geglu_quick = _make_glu("geglu_quick", "x * sigmoid(1.702 x)")
