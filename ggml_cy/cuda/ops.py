"""ggml_cy.cuda's device arrays and eager operations (the GPU path).

    import ggml_cy, ggml_cy.cuda as gcuda
    if gcuda.is_available():
        a = gcuda.asarray(np.ones((4096, 4096), np.float32))   # host -> device
        b = gcuda.asarray(np.arange(4096, dtype=np.float32))
        c = ggml_cy.add(a, b)          # runs on the device, returns a DeviceTensor
        c.numpy()                      # device -> host

This module always imports. Without the compiled CUDA library (no nvcc at build time, or
GGML_CY_CUDA=0) or without a device, ``is_available()`` is False and every call that needs
the GPU raises RuntimeError saying why. Device errors are Python exceptions: out of memory
is MemoryError, bad shapes ValueError, an op or type the kernels lack TypeError, anything
else ``CudaError`` (a RuntimeError) carrying CUDA's own message.
"""
import numpy as np

from ggml_cy.core import optable
from ggml_cy.cuda import tensor as _tensor
from ggml_cy.cuda.runtime import require as _require, current_device, CudaError
from ggml_cy.cuda.tensor import (BF16, BOOL, F32, U8, DeviceTensor, contiguous_strides,
                                  merge_layouts, np_dtype, type_of, MAXDIMS, quant_traits,
                                  quant_type, quant_row_bytes, contiguous_strides_q, type_name)

__all__ = ["asarray", "empty", "zeros", "from_dlpack", "eager_call", "scaled_op", "copy",
           "astype", "copyto", "to_numpy", "dlpack_capsule", "from_blocks", "dequantize",
           "mul_mat", "get_rows", "blocks_to_numpy"]


# ----------------------------------------------------------------------------- tensors
def empty(shape, dtype=np.float32):
    """An uninitialised contiguous device tensor."""
    c = _require()
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    if len(shape) > MAXDIMS:
        raise ValueError(f"at most {MAXDIMS} dims on the CUDA device")
    t = type_of(dtype)
    size = 1
    for s in shape:
        size *= s
    itemsize = 2 if t == BF16 else np_dtype(t).itemsize
    buf = c.Buffer.alloc(size * itemsize)
    return DeviceTensor(buf, 0, t, shape, contiguous_strides(shape, itemsize))


def zeros(shape, dtype=np.float32):
    x = empty(shape, dtype)
    x.buffer.memset(0, 0, x.nbytes)
    return x


def _float32_to_bf16_bits(a):
    """Round to nearest even (NaN kept quiet), as ggml's fp32 -> bf16."""
    u = np.asarray(a, dtype=np.float32, order="C").view(np.uint32)
    nan = (u & 0x7fffffff) > 0x7f800000
    r = ((u + (0x7fff + ((u >> 16) & 1))) >> 16).astype(np.uint16)
    r[nan] = ((u[nan] >> 16) | 64).astype(np.uint16)
    return r


def asarray(a, dtype=None):
    """Copies a host array (anything np.asarray takes) to the device. dtype='bfloat16'
    converts floats to bfloat16 (a uint16 array is taken as bfloat16 bit patterns)."""
    if isinstance(a, DeviceTensor):
        return a if dtype is None or type_of(dtype) == a.ggml_type else astype(a, dtype)
    c = _require()
    if dtype is not None and type_of(dtype) == BF16:
        host = np.asarray(a)
        bits = host if host.dtype == np.uint16 else _float32_to_bf16_bits(host)
        bits = np.asarray(bits, dtype=np.uint16, order="C")
        t = BF16
    else:
        bits = np.asarray(a, dtype=dtype, order="C")     # keeps 0-d arrays 0-d
        t = type_of(bits.dtype)
    if bits.ndim > MAXDIMS:
        raise ValueError(f"at most {MAXDIMS} dims on the CUDA device, got {bits.ndim}")
    buf = c.Buffer.alloc(bits.nbytes)
    if bits.nbytes:
        buf.set_bytes(0, bits.reshape(-1).view(np.uint8))
    return DeviceTensor(buf, 0, t, bits.shape, contiguous_strides(bits.shape, bits.itemsize))


def to_numpy(x, raw_bfloat16=False):
    if x.is_quantized:
        return to_numpy(dequantize(x))
    if not x.is_contiguous():
        x = copy(x)
    if x.ggml_type == BF16:
        host = np.empty(x.shape, np.uint16)
    else:
        host = np.empty(x.shape, x.dtype)
    if host.nbytes:
        x.buffer.get_bytes(x.offset, host.reshape(-1).view(np.uint8))
    if x.ggml_type == BF16 and not raw_bfloat16:
        host = (host.astype(np.uint32) << 16).view(np.float32)
    return host


# ----------------------------------------------------------------------------- ops
# The op numbers (ggml_cy/csrc/ops_defs.h) come from the compiled extension.
def _ops():
    return _require().OPS


# The eager functions that run on device tensors: every op-table row with cuda=True and an
# eager name (ggml_cy/core/optable.py); the device formulas are in cuda/ops.cuh, unary.cu.
_CUDA_ROWS = [o for o in optable.OPS if o.cuda and o.eager]
_BINARY = {name: o.name for o in _CUDA_ROWS if o.kind == "binary" for name in o.eager}
_UNARY = {name: o.name for o in _CUDA_ROWS
          if o.kind == "unary" and o.style == "ufunc" for name in o.eager}
# ggml's activations: float results (integer input promotes as for numpy.exp); clip has
# its own path below
_ACTIVATIONS = {o.eager[0]: o.name for o in _CUDA_ROWS
                if o.kind == "unary" and o.style in ("activation", "custom") and not o.numpy}

def _float_bits(v):
    return int(np.array(v, np.float32).view(np.int32))


def _is_device(x):
    return getattr(type(x), "__ggml_cy_device__", False)


def _kind(x):
    """What numpy's type resolution sees: a dtype, or the Python type of a weak scalar."""
    if _is_device(x):
        return np_dtype(x.ggml_type)
    if type(x) in (int, float):
        return type(x)
    if type(x) is bool:
        return np.dtype(np.bool_)
    return np.asarray(x).dtype


_loop_cache = {}


def _loop_types(ufunc, args, dtype):
    """ggml types of the inputs and the output of the loop numpy would pick (memoized on
    the operands' kinds: numpy's resolution costs microseconds)."""
    marks = tuple(("d", a.ggml_type) if _is_device(a) else _kind(a) for a in args)
    key = (ufunc, marks, dtype if dtype is None or isinstance(dtype, (str, type)) else np.dtype(dtype))
    hit = _loop_cache.get(key)
    if hit is not None:
        return hit
    kinds = [_kind(a) for a in args]
    want = None
    if dtype is not None:       # numpy's dtype=: the output (and so the loop) type
        want = np.dtype(np.float32) if type_of(dtype) == BF16 else np.dtype(dtype)
    dts = ufunc.resolve_dtypes(tuple(kinds) + (want,))
    ins, out = [type_of(d) for d in dts[:-1]], type_of(dts[-1])
    # bfloat16: when every array operand is bfloat16 and numpy's stand-in loop is float32,
    # the loop runs in bfloat16 (as float16 runs in float16)
    arrays = [a for a in args if _is_device(a) or not type(a) in (int, float, bool)]
    want_bf16 = (dtype is not None and type_of(dtype) == BF16) or (
        arrays and all(_is_device(a) and a.ggml_type == BF16 for a in arrays))
    if want_bf16:
        ins = [BF16 if t == F32 else t for t in ins]
        out = BF16 if out == F32 else out
    if len(_loop_cache) > 4096:
        _loop_cache.clear()
    _loop_cache[key] = (ins, out)
    return ins, out


_scalar_cache = {}


def _dtype_arg(t):
    """The dtype argument naming ggml type t (numpy dtype, or 'bfloat16')."""
    return "bfloat16" if t == BF16 else np_dtype(t)


def _to_device(x, t):
    """x as a device tensor of ggml type t (uploads host data, casts device data)."""
    if _is_device(x):
        if not x.alive:
            raise CudaError("a device tensor argument's buffer was freed")
        return x if x.ggml_type == t else copy(x, _dtype_arg(t))
    if type(x) in (int, float, bool):
        key = (t, type(x), x)
        hit = _scalar_cache.get(key)
        if hit is not None and hit.alive:
            return hit
        if t == BF16:
            dev = asarray(np.float32(x), dtype="bfloat16")
        else:
            dev = asarray(np.asarray(x, dtype=np_dtype(t)))
        if len(_scalar_cache) > 256:
            _scalar_cache.clear()
        _scalar_cache[key] = dev
        return dev
    host = np.asarray(x)
    return asarray(host, dtype="bfloat16" if t == BF16 else np_dtype(t))


def _aligned(x, nd):
    """shape/strides of x right-aligned to nd dims (broadcast dims: extent 1)."""
    pad = nd - x.ndim
    return (1,) * pad + x.shape, (0,) * pad + x.strides


def _check_out(out, shape, t):
    if not _is_device(out):
        raise TypeError("out= must be a ggml_cy.cuda DeviceTensor when computing on the device")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"out has shape {out.shape}, the result has shape {tuple(shape)}")
    return out


_plan_cache = {}


def _descs(target, srcs):
    """Each operand's 4-D (ne, nb), target first, after dim merging over target's shape
    (the sources already broadcast to it); None when more than 4 dims remain. Memoized on
    the operands' shapes and strides."""
    key = ((target.shape, target.strides, target.itemsize),
           tuple((s.shape, s.strides, s.itemsize) for s in srcs))
    hit = _plan_cache.get(key, False)
    if hit is not False:
        return hit
    shape = target.shape
    nd = len(shape)
    if nd == 0:
        descs = [((1, 1, 1, 1), (t.itemsize,) * 4) for t in [target] + list(srcs)]
    else:
        layouts = [(target.shape, target.strides)]
        for x in srcs:
            pad = nd - x.ndim
            layouts.append(((1,) * pad + x.shape, (0,) * pad + x.strides))
        try:
            _, descs = merge_layouts(shape, layouts)
        except ValueError:
            descs = None
    if len(_plan_cache) > 4096:
        _plan_cache.clear()
    _plan_cache[key] = descs
    return descs


def _sub(x, nd, i):
    """Operand x (broadcast to nd dims) at index i of the outermost dim."""
    if x.ndim < nd:
        return x
    return x[0] if x.shape[0] == 1 else x[i]


def _launch(c, op, target, srcs, params=None):
    """One kernel launch for target = op(srcs); an outer loop of launches when the layout
    keeps more than 4 dims after merging (the library's tensors are 4-D)."""
    if target.size == 0:
        return
    descs = _descs(target, srcs)
    if descs is None:
        nd = target.ndim
        for i in range(target.shape[0]):
            _launch(c, op, target[i], [_sub(x, nd, i) for x in srcs], params)
        return
    ne, nb = descs[0]
    d = (target.ggml_type, ne, nb, target.data_ptr)
    ne, nb = descs[1]
    a = (srcs[0].ggml_type, ne, nb, srcs[0].data_ptr)
    if len(srcs) == 2:
        ne, nb = descs[2]
        c.op_forward(op, d, a, (srcs[1].ggml_type, ne, nb, srcs[1].data_ptr), params)
    else:
        c.op_forward(op, d, a, None, params)


_shape_cache = {}


def _broadcast_shape(srcs):
    key = tuple(s.shape for s in srcs)
    hit = _shape_cache.get(key)
    if hit is None:
        try:
            hit = tuple(np.broadcast_shapes(*key))
        except ValueError as exc:
            raise ValueError(f"operands could not be broadcast together: {exc}") from None
        if len(_shape_cache) > 4096:
            _shape_cache.clear()
        _shape_cache[key] = hit
    return hit


def _run(opname, srcs, out_type, out=None, params=None):
    """Runs a ggml op over device tensors srcs (broadcast numpy-style), into a new tensor
    of out_type (or into `out`, casting when its type differs)."""
    c = _require()
    shape = _broadcast_shape(srcs)
    if out is not None:
        _check_out(out, shape, out_type)
    if out is not None and out.ggml_type == out_type:
        target = out
    else:
        target = empty(shape, "bfloat16" if out_type == BF16 else np_dtype(out_type))
    _launch(c, c.OPS[opname], target, srcs, params)
    if out is not None and target is not out:
        copyto(out, target)
        return out
    return target


def copy(x, dtype=None):
    """A contiguous copy (converted to dtype when given; a quantized tensor copies its
    blocks, or dequantizes into a float dtype)."""
    if x.is_quantized:
        if dtype is not None and _quant_or_none(dtype) != x.ggml_type:
            return dequantize(x, dtype)
        target = _empty_quant(x.shape, x.ggml_type)
        _quant_launch(_require().OPS["CPY"], target, x)
        return target
    t = x.ggml_type if dtype is None else type_of(dtype)
    return _run("CPY", [x], t) if x.size else empty(x.shape, "bfloat16" if t == BF16 else np_dtype(t))


def astype(x, dtype, copy=True):
    if x.is_quantized:
        if _quant_or_none(dtype) == x.ggml_type:
            return globals()["copy"](x) if copy else x
        return dequantize(x, dtype)
    t = type_of(dtype)
    if t == x.ggml_type and not copy:
        return x
    return globals()["copy"](x, dtype)


def copyto(dst, src):
    """dst[...] = src (broadcast, converted), on the device."""
    c = _require()
    if type(dst) is DeviceTensor and type(src) is DeviceTensor:
        # the fast path: a plan per (src, dst) layout, as for the eager calls
        key = c.plan_key("copyto", src, None, dst)
        plan = _plans.get(key)
        if plan is None:
            plan = _make_copy_plan(c, dst, src)
            if len(_plans) >= _PLAN_MAX:
                _plans.clear()
            _plans[key] = plan
        if plan is not _NO_PLAN:
            plan.run(src, None, dst)
            return None
    if not _is_device(dst):
        raise TypeError("copyto on the device needs a DeviceTensor destination")
    src = _to_device(src, dst.ggml_type) if not _is_device(src) else src
    shape = dst.shape
    try:
        if np.broadcast_shapes(src.shape, shape) != tuple(shape):
            raise ValueError
    except ValueError:
        raise ValueError(f"could not broadcast input of shape {src.shape} into shape {shape}") from None
    if tuple(src.shape) != tuple(shape):
        # materialize the broadcast through a stride-0 view, then copy
        nd = len(shape)
        sh, st = _aligned(src, nd)
        st = tuple(0 if sh[i] == 1 and shape[i] != 1 else st[i] for i in range(nd))
        src = DeviceTensor(src.buffer, src.offset, src.ggml_type, shape, st)
    _launch(c, c.OPS["CPY"], dst, [src])
    return None


# ----------------------------------------------------------------------------- fast path
# The common eager call -- an elementwise op over device tensors that need no conversion,
# into a new tensor or out= of the result's type -- runs from a prepared launch
# (_cuda.EagerPlan) cached per operand layout: the general path's type resolution,
# broadcasting, dim merging and support checks are done once per layout, and a repeated
# call costs a dict lookup and one C call (issue 14 item 5: host cost per launch).
_plans = {}
_NO_PLAN = False      # cached for layouts the general path handles (casts, > 4 dims, ...)
_PLAN_MAX = 4096


def _fast_call(name, args, kwargs):
    """The result through a cached plan, or None when the general path must run."""
    c = _require()
    r = c.fast_call(_plans, name, args, kwargs, DeviceTensor)
    if r is not c.MISS:
        return r
    return _fast_call_miss(c, name, args, kwargs)


def _fast_call_miss(c, name, args, kwargs):
    """_fast_call for a layout seen the first time: makes (and caches) its plan."""
    if kwargs:
        if len(kwargs) != 1 or "out" not in kwargs:
            return None
        out = kwargs["out"]
        if type(out) is not DeviceTensor:
            return None
    else:
        out = None
    n = len(args)
    if n == 2:
        a, b = args
        if type(a) is not DeviceTensor or type(b) is not DeviceTensor:
            return None
    elif n == 1:
        a, b = args[0], None
        if type(a) is not DeviceTensor:
            return None
    else:
        return None
    key = c.plan_key(name, a, b, out)
    plan = _plans.get(key)
    if plan is None:
        plan = _make_plan(c, name, a, b, out)
        if len(_plans) >= _PLAN_MAX:
            _plans.clear()
        _plans[key] = plan
    if plan is _NO_PLAN:
        return None
    return plan.run(a, b, out)


def _make_plan(c, name, a, b, out):
    """An EagerPlan for this call's layout, or _NO_PLAN (the general path then runs and
    gives its result or its error)."""
    try:
        if a.is_quantized or (b is not None and b.is_quantized) or \
                (out is not None and out.is_quantized):
            return _NO_PLAN
        if b is not None:
            if name not in _BINARY or name == "prelu":
                return _NO_PLAN
            ins, outt = _loop_types(getattr(np, name), (a, b), None)
            srcs = [a, b]
            opname = _BINARY[name]
        else:
            if name in _UNARY:
                ins, outt = _loop_types(getattr(np, name if name != "abs" else "absolute"),
                                        (a,), None)
                opname = _UNARY[name]
            elif name in _ACTIVATIONS and name not in ("leaky_relu", "elu", "scale"):
                ins, outt = _loop_types(np.exp, (a,), None)
                opname = _ACTIVATIONS[name]
            else:
                return _NO_PLAN
            srcs = [a]
        if list(ins) != [x.ggml_type for x in srcs]:
            return _NO_PLAN              # an operand is converted first: the general path
        shape = _broadcast_shape(srcs)
        itemsize = 2 if outt == BF16 else np_dtype(outt).itemsize
        if out is not None:
            if out.ggml_type != outt or tuple(out.shape) != shape:
                return _NO_PLAN
            target = out
        else:
            target = _Layout(shape, contiguous_strides(shape, itemsize), itemsize)
        size = 1
        for n in shape:
            size *= n
        if size == 0:
            return _NO_PLAN
        descs = _descs(target, srcs)
        if descs is None:
            return _NO_PLAN
        op = c.OPS[opname]
        types = [x.ggml_type for x in srcs]
        if not c.supports_op(op, outt, types[0], types[1] if b is not None else -1):
            return _NO_PLAN
        ops = [(t, ne, nb) for t, (ne, nb) in zip([outt] + types, descs)]
        return c.EagerPlan(op, ops[0], ops[1], ops[2] if b is not None else None, None,
                           DeviceTensor, target.shape, target.strides, size * itemsize)
    except Exception:
        return _NO_PLAN


def _make_copy_plan(c, dst, src):
    """An EagerPlan for copyto(dst, src) with equal shapes (any strides, any types the
    copy kernels convert between), or _NO_PLAN."""
    try:
        if dst.is_quantized or src.is_quantized or tuple(dst.shape) != tuple(src.shape) \
                or dst.size == 0:
            return _NO_PLAN
        descs = _descs(dst, [src])
        op = c.OPS["CPY"]
        if descs is None or not c.supports_op(op, dst.ggml_type, src.ggml_type):
            return _NO_PLAN
        (ne_d, nb_d), (ne_s, nb_s) = descs
        return c.EagerPlan(op, (dst.ggml_type, ne_d, nb_d), (src.ggml_type, ne_s, nb_s))
    except Exception:
        return _NO_PLAN


class _Layout:
    """Shape and strides of a result not allocated yet (what _descs reads)."""
    __slots__ = ("shape", "strides", "itemsize")

    def __init__(self, shape, strides, itemsize):
        self.shape, self.strides, self.itemsize = shape, strides, itemsize


def eager_call(name, args, kwargs):
    """The eager API's entry for device tensors: ggml_cy.<name>(*args, **kwargs) computed
    on the device. Type promotion follows numpy (the loop numpy would pick)."""
    r = _fast_call(name, args, kwargs)
    if r is not None:
        return r
    _require()
    if name in _QUANT_EAGER:
        return globals()[name](*args, **(kwargs or {}))
    kwargs = dict(kwargs or {})
    out = kwargs.pop("out", None)
    if isinstance(out, tuple):
        out = out[0] if len(out) == 1 else out
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("n_threads", None)
    if name in _BINARY:
        if len(args) != 2:
            raise TypeError(f"{name} takes 2 arguments, got {len(args)}")
        if name == "prelu":        # float results: promotion as multiply, then as exp
            ins, outt = _loop_types(np.multiply, args, dtype)
            if outt != BF16 and np_dtype(outt).kind != "f":
                outt = type_of(np.exp.resolve_dtypes((np_dtype(outt), None))[1])
                ins = [outt, outt]
        else:
            ins, outt = _loop_types(getattr(np, name), args, dtype)
        srcs = [_to_device(a, t) for a, t in zip(args, ins)]
        return _run(_BINARY[name], srcs, outt, out)
    if name in _UNARY or name in _ACTIVATIONS:
        x = args[0]
        params = None
        if name in _UNARY:
            ins, outt = _loop_types(getattr(np, name if name != "abs" else "absolute"), (x,), dtype)
        else:
            ins, outt = _loop_types(np.exp, (x,), dtype)
            if name == "leaky_relu":
                slope = args[1] if len(args) > 1 else kwargs.pop("negative_slope", 0.01)
                params = [_float_bits(slope)]
            elif name == "elu":
                alpha = args[1] if len(args) > 1 else kwargs.pop("alpha", 1.0)
                params = [_float_bits(alpha)]
            elif name == "scale":
                s = args[1] if len(args) > 1 else kwargs.pop("s")
                params = [_float_bits(s)]
        return _run(_UNARY.get(name) or _ACTIVATIONS[name], [_to_device(x, ins[0])], outt,
                    out, params)
    if name == "clip":
        a, lo, hi = args
        x = a if _is_device(a) else _to_device(a, type_of(np.asarray(a).dtype))
        if _is_device(lo) or _is_device(hi) or np.ndim(lo) or np.ndim(hi):
            # array bounds: maximum then minimum, numpy's order of application
            r = eager_call("maximum", (x, lo), {}) if lo is not None else x
            return eager_call("minimum", (r, hi), {"out": out}) if hi is not None else r
        lo_v = -np.inf if lo is None else float(lo)
        hi_v = np.inf if hi is None else float(hi)
        if np_dtype(x.ggml_type).kind != "f" and x.ggml_type != BF16:
            r = eager_call("maximum", (x, lo), {}) if lo is not None else x
            return eager_call("minimum", (r, hi), {"out": out}) if hi is not None else r
        return _run("CLAMP", [x], x.ggml_type, out, [_float_bits(lo_v), _float_bits(hi_v)])
    if name == "astype":
        x, dt = args
        return astype(x, dt, copy=kwargs.get("copy", True))
    if name == "ascontiguousarray":
        x = args[0]
        if not _is_device(x):
            x = asarray(x)
        r = x.contiguous()
        return r if dtype is None else astype(r, dtype, copy=False)
    if name == "copyto":
        dst, src = args
        if kwargs.get("where", True) is not True:
            raise TypeError("copyto(where=...) is not supported on the CUDA device")
        return copyto(dst, src)
    raise TypeError(f"ggml_cy.{name} is not supported for CUDA device tensors")


_SCALED_OPS = {"add": "ADD", "subtract": "SUB", "multiply": "MUL", "divide": "DIV",
               "maximum": "MAX", "minimum": "MIN"}


def scaled_op(name, a, b, s0, s1, s_out, out=None):
    """int8 ops with per-tensor scales (OpenPPL's quantized form):
    out = saturate_int8(rint((a*s0 <op> b*s1) / s_out)), computed in float32.
    a, b: int8 device tensors (broadcast numpy-style); name: add, subtract, multiply,
    divide, maximum or minimum."""
    c = _require()
    if name not in _SCALED_OPS:
        raise ValueError(f"scaled_op supports {sorted(_SCALED_OPS)}, not {name!r}")
    a = a if _is_device(a) else asarray(np.asarray(a, np.int8))
    b = b if _is_device(b) else asarray(np.asarray(b, np.int8))
    from ggml_cy.cuda.tensor import I8
    if a.ggml_type != I8 or b.ggml_type != I8:
        raise TypeError("scaled_op needs int8 tensors")
    for s, nm in ((s0, "s0"), (s1, "s1"), (s_out, "s_out")):
        if not np.isfinite(s):
            raise ValueError(f"{nm} must be finite, got {s}")
    if s_out == 0:
        raise ValueError("s_out must be nonzero")
    shape = np.broadcast_shapes(a.shape, b.shape)
    target = out if out is not None else empty(shape, np.int8)
    _check_out(target, shape, I8)
    if target.ggml_type != I8:
        raise TypeError("out must be int8")
    nd = len(shape)
    if nd == 0:
        descs = [((1, 1, 1, 1), (1, 1, 1, 1))] * 3
    else:
        _, descs = merge_layouts(shape, [_aligned(target, nd), _aligned(a, nd), _aligned(b, nd)])
    full = [(t.ggml_type, ne, nb, t.data_ptr) for t, (ne, nb) in zip([target, a, b], descs)]
    if target.size:
        c.scaled_i8(c.OPS[_SCALED_OPS[name]], full[0], full[1], full[2], s0, s1, s_out)
    return target


# ----------------------------------------------------------------------------- quantized
# Quantized weights on the device: raw ggml blocks uploaded as they are (from_blocks),
# dequantized on the device (bitwise equal to the CPU and to gguf-py), multiplied (mul_mat:
# a mat-vec kernel for 1-8 columns, a tensor-core GEMM above) and gathered (get_rows).
_QUANT_EAGER = ("dequantize", "mul_mat", "get_rows")


def _quant_or_none(dtype):
    try:
        return quant_type(dtype)
    except TypeError:
        return None


def _empty_quant(shape, t):
    c = _require()
    shape = tuple(int(n) for n in shape)
    if not shape:
        raise ValueError("a quantized tensor has at least one dim (its rows of blocks)")
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    if len(shape) > 4:
        raise ValueError("quantized device tensors have at most 4 dims")
    rows = 1
    for n in shape[:-1]:
        rows *= n
    nbytes = rows * quant_row_bytes(t, shape[-1])
    buf = c.Buffer.alloc(max(nbytes, 1))
    return DeviceTensor(buf, 0, t, shape, contiguous_strides_q(shape, t))


def from_blocks(raw, qtype, shape=None):
    """Uploads raw ggml blocks of a quantized type (what ``ggml_cy.quantize`` returns, or a
    GGUF tensor's bytes) to the device as a quantized DeviceTensor.

    raw: a uint8 array of shape (..., bytes per row) or any bytes-like object; qtype: a
    GGMLType, its number or name ('q4_0'); shape: the tensor's shape in values (by default
    raw's shape with its last dim turned from bytes into values)."""
    t = quant_type(qtype)
    blck, bb = quant_traits(t)
    if isinstance(raw, np.ndarray):
        if raw.dtype != np.uint8:
            raise TypeError(f"raw blocks must be a uint8 array, not {raw.dtype}")
        host = np.ascontiguousarray(raw)
    else:
        try:
            host = np.frombuffer(memoryview(raw).cast("B"), dtype=np.uint8)
        except TypeError:
            raise TypeError(f"raw blocks must be a uint8 array or bytes-like, not "
                            f"{type(raw).__name__}") from None
    if shape is None:
        if host.ndim == 0 or host.shape[-1] % bb:
            raise ValueError(f"the last dim of raw ({host.shape[-1] if host.ndim else 0} bytes) "
                             f"is not a multiple of {type_name(t)}'s {bb}-byte block")
        shape = host.shape[:-1] + (host.shape[-1] // bb * blck,)
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(n) for n in shape)
    if not shape or any(n < 0 for n in shape):
        raise ValueError(f"bad shape {shape} for a quantized tensor")
    rows = 1
    for n in shape[:-1]:
        rows *= n
    need = rows * quant_row_bytes(t, shape[-1])
    if host.size != need:
        raise ValueError(f"{type_name(t)} of shape {shape} takes {need} bytes, raw has {host.size}")
    x = _empty_quant(shape, t)
    if need:
        x.buffer.set_bytes(0, host.reshape(-1))
    return x


def blocks_to_numpy(x):
    """Raw blocks of a quantized device tensor: uint8 array (..., bytes per row)."""
    if not x.is_quantized:
        raise TypeError("blocks() is for quantized device tensors")
    if not x.is_contiguous():
        x = copy(x)
    row = quant_row_bytes(x.ggml_type, x.shape[-1])
    host = np.empty(x.shape[:-1] + (row,), np.uint8)
    if host.size:
        x.buffer.get_bytes(x.offset, host.reshape(-1))
    return host


def _quant_desc(x):
    if x.ndim > 4:
        raise ValueError("quantized device tensors have at most 4 dims")
    return (x.ggml_type, x.ne, x.nb, x.data_ptr)


def _quant_launch(op, target, src, src1=None):
    c = _require()
    if target.size == 0:
        return
    c.op_forward(op, _quant_desc(target), _quant_desc(src),
                 None if src1 is None else _quant_desc(src1))


def _float_out_type(dtype):
    t = type_of(dtype)
    if t not in (F32, BF16, 1):
        raise TypeError(f"quantized tensors dequantize to float32, float16 or bfloat16, not {dtype}")
    return t


def dequantize(x, dtype=np.float32, out=None):
    """A quantized device tensor's values as float32 (or float16/bfloat16), computed on the
    device: bitwise the CPU's ``ggml_cy.dequantize`` and gguf-py's (float32)."""
    c = _require()
    if not _is_device(x):
        raise TypeError("gcuda.dequantize takes a quantized DeviceTensor (see from_blocks)")
    if not x.is_quantized:
        raise TypeError(f"dequantize: the tensor is {type_name(x.ggml_type)}, not a quantized type")
    t = _float_out_type(dtype)
    if out is None:
        out = empty(x.shape, _dtype_arg(t))
    else:
        _check_out(out, x.shape, t)
        if out.ggml_type != t:
            raise TypeError(f"out is {type_name(out.ggml_type)}, dtype asks for {type_name(t)}")
    _quant_launch(c.OPS["CPY"], out, x)
    return out


def mul_mat(a, b, out=None):
    """ggml's mul_mat on the device, in numpy's order: a (..., M, K) weights (quantized,
    float32 or float16), b (..., N, K) float32 -> (..., N, M) float32 = b @ a.T per batch;
    a's batch dims divide b's (broadcast as ggml does)."""
    c = _require()
    if not _is_device(a):
        raise TypeError("mul_mat: a must be a DeviceTensor (quantized weights: from_blocks)")
    b = b if _is_device(b) else asarray(np.asarray(b, np.float32))
    if b.ggml_type != F32:
        raise TypeError(f"mul_mat: b must be float32, not {type_name(b.ggml_type)}")
    if a.ndim < 2 or b.ndim < 2 or a.ndim > 4 or b.ndim > 4:
        raise ValueError(f"mul_mat takes 2- to 4-dim operands, got {a.shape} and {b.shape}")
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"mul_mat: a's rows ({a.shape[-1]}) and b's rows ({b.shape[-1]}) differ")
    nd = max(a.ndim, b.ndim)
    ab = (1,) * (nd - a.ndim) + a.shape[:-2]
    bb = (1,) * (nd - b.ndim) + b.shape[:-2]
    for i, (na, nbb) in enumerate(zip(ab, bb)):
        if na == 0 or nbb % na:
            raise ValueError(f"mul_mat: a's batch dims {a.shape[:-2]} must divide b's {b.shape[:-2]}")
    shape = bb + (b.shape[-2], a.shape[-2])
    if out is None:
        out = empty(shape, np.float32)
    else:
        _check_out(out, shape, F32)
        if out.ggml_type != F32:
            raise TypeError("mul_mat: out must be float32")
    if out.size == 0:
        return out
    if a.is_quantized:
        ad = _quant_desc(a)
    else:
        if a.ggml_type not in (F32, 1):
            raise TypeError(f"mul_mat: a must be quantized, float32 or float16, not {type_name(a.ggml_type)}")
        ad = (a.ggml_type, a.ne, a.nb, a.data_ptr)
    c.op_forward(c.OPS["MUL_MAT"], (F32, out.ne, out.nb, out.data_ptr), ad,
                 (F32, b.ne, b.nb, b.data_ptr))
    return out


def get_rows(table, rows, dtype=np.float32):
    """ggml's get_rows on the device (embedding lookup): table (R, K) or (B, R, K) or
    (C, B, R, K) (quantized, float32, float16 or bfloat16), rows int (n,) / (B, n) /
    (C, B, n) -> (..., n, K) of dtype. Row numbers are checked (IndexError)."""
    c = _require()
    if not _is_device(table):
        raise TypeError("get_rows: table must be a DeviceTensor")
    if table.ndim < 2 or table.ndim > 4:
        raise ValueError(f"get_rows: the table has 2 to 4 dims, got {table.shape}")
    host = None if _is_device(rows) else np.asarray(rows)
    if host is not None:
        if host.dtype.kind not in "iu":
            raise TypeError(f"get_rows: row numbers must be integers, not {host.dtype}")
        if host.ndim != table.ndim - 1:
            raise ValueError(f"get_rows: rows need {table.ndim - 1} dims for a table of shape "
                             f"{table.shape}, got {host.shape}")
        check = host
    else:
        if rows.ndim != table.ndim - 1:
            raise ValueError(f"get_rows: rows need {table.ndim - 1} dims for a table of shape "
                             f"{table.shape}, got {rows.shape}")
        check = rows.numpy()
        if check.dtype.kind not in "iu":
            raise TypeError(f"get_rows: row numbers must be integers, not {check.dtype}")
    if tuple(check.shape[:-1]) != tuple(table.shape[:-2]):
        raise ValueError(f"get_rows: rows of shape {check.shape} do not match the table's "
                         f"batch dims {table.shape[:-2]}")
    R = table.shape[-2]
    if check.size and (check.min() < -R or check.max() >= R):
        raise IndexError(f"get_rows: a row number is out of range for a table of {R} rows")
    t = _float_out_type(dtype)
    out = empty(tuple(check.shape) + (table.shape[-1],), _dtype_arg(t))
    if out.size == 0:
        return out
    idx = asarray(np.where(check < 0, check + R, check).astype(np.int32))
    td = _quant_desc(table) if table.is_quantized else (table.ggml_type, table.ne, table.nb,
                                                         table.data_ptr)
    c.op_forward(c.OPS["GET_ROWS"], (t, out.ne, out.nb, out.data_ptr), td,
                 (idx.ggml_type, idx.ne, idx.nb, idx.data_ptr))
    return out


# ----------------------------------------------------------------------------- DLPack
_DL_CODES = {"f": 2, "i": 0, "u": 1, "b": 6}


def dlpack_capsule(x, stream=None, dl_device=None, copy=None):
    c = _require()
    if x.is_quantized:
        raise BufferError(f"DLPack has no {type_name(x.ggml_type)} dtype (dequantize first)")
    if copy:
        raise BufferError("ggml_cy device tensors export without copies only (copy=True)")
    if dl_device is not None and tuple(dl_device) != (2, c.get_device()):
        raise BufferError(f"cannot export to DLPack device {dl_device}")
    ptr = x.data_ptr
    if stream is not None and stream != -1:
        c.other_wait_stream(int(stream))
    elif stream is None:
        c.other_wait_stream(1)
    if x.ggml_type == BF16:
        code, bits = 4, 16
    else:
        d = np_dtype(x.ggml_type)
        code, bits = _DL_CODES[d.kind], d.itemsize * 8
    isz = x.itemsize
    if any(s % isz for s in x.strides):
        raise BufferError("strides are not a multiple of the element size")
    return c.dlpack_export(x, ptr, c.get_device(), code, bits, x.shape,
                           [s // isz for s in x.strides])


def _type_from_dl(code, bits):
    table = {(2, 32): F32, (2, 16): 1, (2, 64): 28, (4, 16): BF16, (0, 8): 24, (0, 16): 25,
             (0, 32): 26, (0, 64): 27, (1, 8): U8, (6, 8): BOOL, (1, 1): BOOL}
    t = table.get((code, bits))
    if t is None:
        raise TypeError(f"DLPack dtype (code {code}, {bits} bits) is not supported")
    return t


def from_dlpack(x):
    """Wraps another library's CUDA tensor (torch, cupy, ...) without a copy. Host
    (CPU) producers give a numpy array (numpy.from_dlpack)."""
    dev = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else None
    if dev is not None and int(dev[0]) == 1:
        return np.from_dlpack(x)
    c = _require()
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"{type(x).__name__} does not support DLPack (__dlpack__)")
    if isinstance(x, DeviceTensor):
        return x
    try:
        capsule = x.__dlpack__(stream=c.stream_handle())
    except TypeError:
        capsule = x.__dlpack__()
    buf, dtype_dev, dev_id, code, bits, shape, strides, ptr = c.dlpack_import(capsule)
    if dtype_dev != 2:
        buf.free()
        raise TypeError(f"DLPack device type {dtype_dev} is not CUDA memory")
    t = _type_from_dl(code, bits)
    isz = 2 if t == BF16 else np_dtype(t).itemsize
    bstrides = contiguous_strides(shape, isz) if strides is None else tuple(s * isz for s in strides)
    return DeviceTensor(buf, ptr - buf.ptr, t, shape, bstrides)


# DeviceTensor's methods and operators (copies, numpy(), DLPack, + - * ...) call these
# functions; registering them here keeps tensor.py free of any import of this module.
_tensor._OPS = __import__(__name__, fromlist=["_"])
