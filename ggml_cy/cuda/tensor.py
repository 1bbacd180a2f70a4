"""DeviceTensor: a view of device memory described the numpy way (shape, byte strides,
offset into a Buffer) and the ggml way (ne/nb, reversed). Up to 7 dims are kept; the ggml
descriptors (4 dims) are made by merging dims at op time (OpenPPL's dim merging).

This module holds the layout logic; copies, numpy(), DLPack and operators are carried
out by ggml_cy.cuda.ops, which registers itself in ``_OPS`` when it is imported (the
package imports it), so this module never imports the modules above it.
"""
import operator

import numpy as np

from ggml_cy.cuda import runtime as _runtime

_OPS = None   # ggml_cy.cuda.ops, set by that module at its import

MAXDIMS = 7

# ggml's type numbers (core_defs.h)
F32, F16, I8, I16, I32, I64, F64, BF16, U8, BOOL = 0, 1, 24, 25, 26, 27, 28, 30, 128, 129

_NP_OF_TYPE = {F32: np.dtype(np.float32), F16: np.dtype(np.float16), F64: np.dtype(np.float64),
               I8: np.dtype(np.int8), I16: np.dtype(np.int16), I32: np.dtype(np.int32),
               I64: np.dtype(np.int64), U8: np.dtype(np.uint8), BOOL: np.dtype(np.bool_)}
_TYPE_OF_NP = {v: k for k, v in _NP_OF_TYPE.items()}
_SIZE = {F32: 4, F16: 2, F64: 8, I8: 1, I16: 2, I32: 4, I64: 8, U8: 1, BOOL: 1, BF16: 2}
_NAME = {F32: "float32", F16: "float16", F64: "float64", I8: "int8", I16: "int16",
         I32: "int32", I64: "int64", U8: "uint8", BOOL: "bool", BF16: "bfloat16"}


# ---------------------------------------------------------------- quantized types
# A quantized device tensor keeps its shape in values (the last dim a multiple of the block
# size) and numpy-style byte strides whose last entry is the bytes of one block (ggml's nb[0]
# = type_size): views by rows share the buffer; the last dim is never cut inside a row.
def quant_traits(t):
    """(values per block, bytes per block) of a quantized ggml type number, or None."""
    hit = _QTRAITS.get(t, False)
    if hit is False:
        from ggml_cy.core import _core
        try:
            gt = _core.GGMLType(int(t))
            hit = (gt.blck_size, gt.type_size) if gt.is_quantized else None
        except (ValueError, TypeError, AttributeError):
            hit = None
        _QTRAITS[t] = hit
    return hit


_QTRAITS = {}


def quant_type(qtype):
    """ggml type number of a quantized type: a GGMLType, its number, or its name ('q4_0',
    'Q4_K'); TypeError for anything else."""
    from ggml_cy.core import _core
    t = None
    if isinstance(qtype, str):
        t = getattr(_core.GGMLType, qtype.upper(), None)
        if t is None:
            t = getattr(_core.GGMLType, qtype, None)
    elif isinstance(qtype, (int, np.integer)) and not isinstance(qtype, bool):
        t = int(qtype)
    if t is None or quant_traits(int(t)) is None:
        raise TypeError(f"{qtype!r} is not a quantized ggml type")
    return int(t)


def quant_row_bytes(t, ne0):
    blck, bb = quant_traits(t)
    if ne0 % blck:
        raise ValueError(f"a row of {type_name(t)} holds a multiple of {blck} values (its block "
                         f"size), not {ne0}")
    return ne0 // blck * bb


def contiguous_strides_q(shape, t):
    """Packed strides of a quantized tensor (last entry: bytes per block)."""
    blck, bb = quant_traits(t)
    if not shape:
        return ()
    strides, acc = [bb], bb * (shape[-1] // blck)
    for n in reversed(shape[:-1]):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def type_name(t):
    if t in _NAME:
        return _NAME[t]
    from ggml_cy.core import _core
    try:
        return str(_core.GGMLType(t))
    except ValueError:
        return f"type {t}"


def type_of(dtype):
    """ggml type number of a numpy dtype or the string 'bfloat16'; TypeError otherwise."""
    if isinstance(dtype, str) and dtype in ("bfloat16", "bf16"):
        return BF16
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"unsupported dtype {dtype!r} for the CUDA device") from None
    t = _TYPE_OF_NP.get(d.newbyteorder("=") if d.byteorder not in "=|" else d)
    if t is None:
        raise TypeError(f"unsupported dtype {d} for the CUDA device (supported: float32, "
                        "float16, bfloat16, float64, int8, int16, int32, int64, uint8, bool)")
    return t


def np_dtype(t):
    """numpy dtype of a ggml type (float32 stands in for bfloat16 in type resolution)."""
    return _NP_OF_TYPE.get(t, np.dtype(np.float32))


def contiguous_strides(shape, itemsize):
    strides, acc = [], itemsize
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def merge_layouts(shape, operands):
    """Merges the dims of an iteration space (numpy order) shared by several operands.

    shape: the output shape; operands: list of (shape_k, strides_k) already aligned to len(shape)
    (broadcast dims have extent 1). Returns (shape, [(ne, nb)...]) with ggml's 4-D ne/nb per
    operand, or raises ValueError when more than 4 dims remain after merging.
    """
    dims = [i for i, n in enumerate(shape) if n != 1]
    out_shape = [shape[i] for i in dims]
    ops = [([s[i] for i in dims], [st[i] for i in dims]) for s, st in operands]
    k = len(out_shape) - 2
    while k >= 0:   # try to merge dim k (outer) with dim k+1 (inner), innermost first
        ok = True
        for s, st in ops:
            full = s[k] == out_shape[k] and s[k + 1] == out_shape[k + 1] and \
                st[k] == st[k + 1] * s[k + 1]
            bcast = s[k] == 1 and s[k + 1] == 1
            if not (full or bcast):
                ok = False
                break
        if ok:
            out_shape[k] *= out_shape[k + 1]
            del out_shape[k + 1]
            for s, st in ops:
                s[k] *= s[k + 1]
                st[k] = st[k + 1]
                del s[k + 1], st[k + 1]
        k -= 1
    if len(out_shape) > 4:
        raise ValueError(f"operation needs {len(out_shape)} dims after merging; the CUDA "
                         "kernels take at most 4")
    result = []
    for s, st in ops:
        ne = list(reversed(s)) + [1] * (4 - len(s))
        nb = list(reversed(st))
        while len(nb) < 4:
            nb.append(nb[-1] * ne[len(nb) - 1] if nb else 0)
        result.append((tuple(ne), tuple(nb)))
    return out_shape, result


class DeviceTensor:
    """An array in CUDA device memory.

    shape/strides/dtype follow numpy (strides in bytes); ne/nb are ggml's (innermost
    first). Views (indexing, transpose, reshape of contiguous data) share the buffer.
    Elementwise arithmetic (``a + b``, ``ggml_cy.add(a, b)``) runs on the device and
    returns a new DeviceTensor; ``.numpy()`` copies back to the host.
    """
    __ggml_cy_device__ = True
    __array_priority__ = 1000     # numpy defers binary operators to us
    __slots__ = ("_buf", "_offset", "_type", "_shape", "_strides", "__weakref__")

    def __init__(self, buf, offset, gtype, shape, strides):
        if len(shape) > MAXDIMS:
            raise ValueError(f"at most {MAXDIMS} dims on the CUDA device, got {len(shape)}")
        self._buf = buf
        self._offset = int(offset)
        self._type = gtype
        self._shape = tuple(int(n) for n in shape)
        self._strides = tuple(int(s) for s in strides)

    # ------------------------------------------------------------ description
    @property
    def buffer(self):
        return self._buf

    @property
    def offset(self):
        """Byte offset of element 0 inside the buffer."""
        return self._offset

    @property
    def ggml_type(self):
        return self._type

    @property
    def dtype(self):
        """numpy dtype, or the string 'bfloat16' (numpy has none); a quantized tensor's
        ggml type name ('q4_0', ...)."""
        if self._type not in _SIZE:
            return type_name(self._type)
        return "bfloat16" if self._type == BF16 else _NP_OF_TYPE[self._type]

    @property
    def itemsize(self):
        if self._type not in _SIZE:
            raise TypeError(f"a {type_name(self._type)} tensor stores blocks of "
                            f"{quant_traits(self._type)[0]} values: it has no item size")
        return _SIZE[self._type]

    @property
    def is_quantized(self):
        return self._type not in _SIZE

    @property
    def shape(self):
        return self._shape

    @property
    def strides(self):
        return self._strides

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def size(self):
        n = 1
        for s in self._shape:
            n *= s
        return n

    @property
    def nbytes(self):
        if self.is_quantized:
            return self.size // quant_traits(self._type)[0] * quant_traits(self._type)[1]
        return self.size * self.itemsize

    @property
    def ne(self):
        """ggml's element counts (innermost first, 4 entries); ValueError above 4 dims."""
        if self.ndim > 4:
            raise ValueError("ne/nb describe at most 4 dims")
        return tuple(reversed(self._shape)) + (1,) * (4 - self.ndim)

    @property
    def nb(self):
        if self.ndim > 4:
            raise ValueError("ne/nb describe at most 4 dims")
        nb = list(reversed(self._strides))
        ne = list(reversed(self._shape))
        if not nb:
            nb, ne = [quant_traits(self._type)[1] if self.is_quantized else self.itemsize], [1]
        while len(nb) < 4:
            nb.append(nb[-1] * ne[len(nb) - 1])
            ne.append(1)
        return tuple(nb)

    @property
    def data_ptr(self):
        """Device address of element 0 (raises once the buffer was freed)."""
        if not self._buf.alive:
            CudaError = _runtime.CudaError
            raise CudaError("this device tensor's buffer was freed")
        return self._buf.ptr + self._offset

    @property
    def alive(self):
        return self._buf.alive

    def is_contiguous(self):
        if self.is_quantized:
            return self._strides == contiguous_strides_q(self._shape, self._type) or self.size == 0
        return self._strides == contiguous_strides(self._shape, self.itemsize) or self.size <= 1

    def desc(self):
        """(type, ne, nb, data pointer) for 4-D-or-less tensors (the op descriptor)."""
        return (self._type, self.ne, self.nb, self.data_ptr)

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d device tensor")
        return self._shape[0]

    def __repr__(self):
        state = "" if self._buf.alive else ", freed"
        return (f"DeviceTensor(shape={self._shape}, dtype={type_name(self._type)}, "
                f"ne={self.ne if self.ndim <= 4 else '?'}{state})")

    def __bool__(self):
        if self.size != 1:
            raise ValueError("the truth value of a device tensor with more than one element "
                             "is ambiguous")
        return bool(self.numpy().reshape(()))

    # ------------------------------------------------------------ views
    def _view(self, offset, shape, strides):
        return DeviceTensor(self._buf, offset, self._type, shape, strides)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(range(self.ndim))[::-1]
        axes = tuple(operator.index(a) % self.ndim if self.ndim else a for a in axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"axes {axes} are not a permutation of {self.ndim} dims")
        if self.is_quantized and self.ndim and axes[-1] != self.ndim - 1:
            raise ValueError("a quantized tensor's last dim (its rows of blocks) stays last")
        return self._view(self._offset, [self._shape[a] for a in axes],
                          [self._strides[a] for a in axes])

    permute = transpose

    @property
    def T(self):
        return self.transpose()

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = [operator.index(s) for s in shape]
        if shape.count(-1) > 1:
            raise ValueError("only one dimension can be -1")
        if -1 in shape:
            rest = 1
            for s in shape:
                if s != -1:
                    rest *= s
            if rest == 0 or self.size % rest:
                raise ValueError(f"cannot reshape size {self.size} into {tuple(shape)}")
            shape[shape.index(-1)] = self.size // rest
        n = 1
        for s in shape:
            if s < 0:
                raise ValueError(f"negative dimension in {tuple(shape)}")
            n *= s
        if n != self.size:
            raise ValueError(f"cannot reshape size {self.size} into {tuple(shape)}")
        src = self if self.is_contiguous() else self.copy()
        if self.is_quantized:
            if not shape or shape[-1] % quant_traits(self._type)[0]:
                raise ValueError(f"a {type_name(self._type)} tensor's last dim must be a multiple "
                                 f"of {quant_traits(self._type)[0]} (whole blocks)")
            return src._view(src._offset, shape, contiguous_strides_q(shape, self._type))
        return src._view(src._offset, shape, contiguous_strides(shape, self.itemsize))

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        n_ell = sum(1 for k in key if k is Ellipsis)
        if n_ell > 1:
            raise IndexError("an index can only have a single ellipsis")
        n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
        if n_real > self.ndim:
            raise IndexError(f"too many indices: {n_real} for {self.ndim} dims")
        if n_ell == 0:
            key = key + (Ellipsis,)
        if self.is_quantized:
            self._check_quant_key(key, n_real)
        shape, strides = [], []
        offset = self._offset
        d = 0
        for k in key:
            if k is Ellipsis:
                for _ in range(self.ndim - n_real):
                    shape.append(self._shape[d])
                    strides.append(self._strides[d])
                    d += 1
            elif k is None:
                shape.append(1)
                strides.append(0)
            elif isinstance(k, slice):
                start, stop, step = k.indices(self._shape[d])
                length = len(range(start, stop, step))
                offset += start * self._strides[d] if length else 0
                shape.append(length)
                strides.append(self._strides[d] * step)
                d += 1
            else:
                try:
                    i = operator.index(k)
                except TypeError:
                    raise IndexError("device tensors take basic indices only (ints, slices, "
                                     "None, ...)") from None
                n = self._shape[d]
                if i < -n or i >= n:
                    raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
                offset += (i % n) * self._strides[d]
                d += 1
        return self._view(offset, shape, strides)

    def _check_quant_key(self, key, n_real):
        """Quantized tensors take row views: the last dim is kept whole."""
        d = 0
        for k in key:
            if k is Ellipsis:
                d += self.ndim - n_real
            elif k is None:
                continue
            else:
                if d == self.ndim - 1 and not (isinstance(k, slice) and
                                               k.indices(self._shape[d]) == (0, self._shape[d], 1)):
                    raise IndexError("a quantized tensor is indexed by rows: its last dim "
                                     "(blocks) cannot be cut")
                d += 1

    def __setitem__(self, key, value):
        """x[key] = value: a device copy (broadcast, converted) into the view x[key]."""
        _OPS.copyto(self[key], value)

    # ------------------------------------------------------------ data
    def numpy(self, raw_bfloat16=False):
        """A host copy (numpy array). bfloat16 comes back as float32 (exact), or as its
        uint16 bit patterns with raw_bfloat16=True. A quantized tensor comes back
        dequantized to float32 (on the device); ``blocks()`` gives its raw bytes."""
        return _OPS.to_numpy(self, raw_bfloat16)

    def blocks(self):
        """The raw blocks of a quantized tensor as a host uint8 array of shape
        (..., bytes per row)."""
        return _OPS.blocks_to_numpy(self)

    get = numpy

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a device tensor reaches the host only as a copy (copy=False)")
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def copy(self):
        return _OPS.copy(self)

    def contiguous(self):
        return self if self.is_contiguous() else self.copy()

    def astype(self, dtype, copy=True):
        return _OPS.astype(self, dtype, copy=copy)

    def free(self):
        """Frees the underlying buffer now (every view of it becomes unusable)."""
        self._buf.free()

    # ------------------------------------------------------------ DLPack
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return _OPS.dlpack_capsule(self, stream, dl_device, copy)

    def __dlpack_device__(self):
        return (2, _runtime.current_device())

    # ------------------------------------------------------------ operators
    def _binary(self, name, other, reflected=False):
        args = (other, self) if reflected else (self, other)
        return _OPS.eager_call(name, args, {})

    def __add__(self, o): return self._binary("add", o)
    def __radd__(self, o): return self._binary("add", o, True)
    def __sub__(self, o): return self._binary("subtract", o)
    def __rsub__(self, o): return self._binary("subtract", o, True)
    def __mul__(self, o): return self._binary("multiply", o)
    def __rmul__(self, o): return self._binary("multiply", o, True)
    def __truediv__(self, o): return self._binary("divide", o)
    def __rtruediv__(self, o): return self._binary("divide", o, True)
    def __floordiv__(self, o): return self._binary("floor_divide", o)
    def __rfloordiv__(self, o): return self._binary("floor_divide", o, True)
    def __mod__(self, o): return self._binary("remainder", o)
    def __rmod__(self, o): return self._binary("remainder", o, True)
    def __pow__(self, o): return self._binary("power", o)
    def __rpow__(self, o): return self._binary("power", o, True)
    def __eq__(self, o): return self._binary("equal", o)
    def __ne__(self, o): return self._binary("not_equal", o)
    def __lt__(self, o): return self._binary("less", o)
    def __le__(self, o): return self._binary("less_equal", o)
    def __gt__(self, o): return self._binary("greater", o)
    def __ge__(self, o): return self._binary("greater_equal", o)
    def __and__(self, o): return self._binary("logical_and", o)
    def __or__(self, o): return self._binary("logical_or", o)
    def __xor__(self, o): return self._binary("logical_xor", o)
    __hash__ = None

    def __neg__(self):
        return _OPS.eager_call("negative", (self,), {})

    def __abs__(self):
        return _OPS.eager_call("absolute", (self,), {})

    def __invert__(self):
        if self._type != BOOL:
            raise TypeError("~ on device tensors is defined for bool tensors only")
        return _OPS.eager_call("logical_not", (self,), {})
