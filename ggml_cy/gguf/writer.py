"""The GGUF writer.

``save(path, metadata, tensors)`` writes a whole file; ``GGUFWriter`` streams one: declare
the metadata and every tensor's name, type and shape (``add_metadata``,
``add_tensor_info``), then ``write_tensor`` the tensors' bytes one at a time, in the order
they were declared, so a file larger than memory can be written (``copy_metadata``
copies another file's metadata unchanged, for tools that rewrite a model). The layout is gguf-py's
and ggml's: header, metadata, tensor infos, padding to the alignment, then each tensor at
an aligned offset followed by padding to the alignment.

Metadata values: int, float, bool, str, lists/tuples/1-D numpy arrays of those, and
lists of lists (arrays of arrays). Their GGUF type is inferred (bool -> BOOL; int ->
INT32, or INT64 / UINT64 when it does not fit; float -> FLOAT32; numpy scalars and arrays
-> their dtype; str -> STRING; all-int lists by the same rule on their range) or given
explicitly: ``Value(v, type)`` in the mapping, ``types={key: type}``, or
``add_metadata(key, v, type=...)``. A type is a GGUFValueType (or its number or name,
'uint8'); an array's is ``(ARRAY, element type)`` or simply its element type;
the element type of an array of arrays is one type for every inner array or a list of
one type per element (what ``Metadata.spec`` returns).

Tensors: numpy arrays of ggml's plain types (float32, float16, float64, int8/16/32/64),
ggml_cy Tensors (any type), and raw data with its type: ``RawTensor(type, shape, data)``
(or the tuple ``(type, shape, data)``) -- ``shape`` in numpy order, ``data`` the blocks'
bytes (quantized types) or an array converted to the type (plain types; float data for
BF16 is rounded to nearest even). ggml_cy's own U8 and BOOL types are never written.
"""
import collections
import os
import struct

import numpy as np

from ggml_cy.core._core import Tensor, float32_to_bfloat16
from ggml_cy.gguf.constants import (DEFAULT_ALIGNMENT, GGUF_MAGIC, GGUF_VERSION,
                                    MAX_ALIGNMENT, MAX_ARRAY_DEPTH, MAX_KEY_LENGTH,
                                    MAX_NAME_LENGTH, GGUFValueType)
from ggml_cy.gguf.reader import GGML_TYPE_NAMES, block_bytes, block_size, ggml_type

__all__ = ["save", "GGUFWriter", "Value", "RawTensor"]

V = GGUFValueType
Value = collections.namedtuple("Value", "value type")
Value.__doc__ = "A metadata value with its GGUF type given explicitly."
RawTensor = collections.namedtuple("RawTensor", "type shape data")
RawTensor.__doc__ = ("A tensor given as its ggml type, its shape (numpy order) and its data "
                     "(the raw blocks of a quantized type, or an array of a plain type).")

_FMT = {V.UINT8: "B", V.INT8: "b", V.UINT16: "H", V.INT16: "h", V.UINT32: "I",
        V.INT32: "i", V.FLOAT32: "f", V.BOOL: "?", V.UINT64: "Q", V.INT64: "q",
        V.FLOAT64: "d"}
_INT_RANGE = {V.UINT8: (0, 2**8 - 1), V.INT8: (-2**7, 2**7 - 1), V.UINT16: (0, 2**16 - 1),
              V.INT16: (-2**15, 2**15 - 1), V.UINT32: (0, 2**32 - 1),
              V.INT32: (-2**31, 2**31 - 1), V.UINT64: (0, 2**64 - 1),
              V.INT64: (-2**63, 2**63 - 1)}
_VT_OF_DTYPE = {np.dtype(k): v for k, v in (
    ("u1", V.UINT8), ("i1", V.INT8), ("u2", V.UINT16), ("i2", V.INT16), ("u4", V.UINT32),
    ("i4", V.INT32), ("f4", V.FLOAT32), ("?", V.BOOL), ("u8", V.UINT64), ("i8", V.INT64),
    ("f8", V.FLOAT64))}
_DTYPE_OF_VT = {v: k for k, v in _VT_OF_DTYPE.items()}
# numpy dtype -> ggml type number of the plain types (uint16 means BF16 only when asked)
_GGML_OF_DTYPE = {np.dtype("f4"): 0, np.dtype("f2"): 1, np.dtype("i1"): 24,
                  np.dtype("i2"): 25, np.dtype("i4"): 26, np.dtype("i8"): 27,
                  np.dtype("f8"): 28}
_DTYPE_OF_GGML = {v: k for k, v in _GGML_OF_DTYPE.items()}
_DTYPE_OF_GGML[30] = np.dtype("u2")     # BF16 bit patterns


# ============================================================================ value types
def _vtype(t):
    if isinstance(t, GGUFValueType):
        return t
    if isinstance(t, str):
        try:
            return V[t.upper()]
        except KeyError:
            raise ValueError(f"unknown GGUF value type {t!r}") from None
    if isinstance(t, (int, np.integer)) and not isinstance(t, bool):
        try:
            return V(int(t))
        except ValueError:
            raise ValueError(f"unknown GGUF value type number {int(t)}") from None
    raise TypeError(f"a GGUF value type must be a GGUFValueType, its number or its name, "
                    f"not {t!r}")


def _norm_spec(spec, depth=0):
    """A spec as GGUFValueType | (ARRAY, elem) with elem a spec or a list of specs."""
    if depth > MAX_ARRAY_DEPTH:
        raise ValueError(f"a GGUF type nests arrays more than {MAX_ARRAY_DEPTH} deep")
    if isinstance(spec, tuple):
        if len(spec) != 2 or _vtype(spec[0]) != V.ARRAY:
            raise ValueError(f"an array type is (GGUFValueType.ARRAY, element type), not "
                             f"{spec!r}")
        elem = spec[1]
        if isinstance(elem, list):
            return (V.ARRAY, [_norm_spec(e, depth + 1) for e in elem])
        return (V.ARRAY, _norm_spec(elem, depth + 1))
    return _vtype(spec)


def _int_vtype(lo, hi):
    for t in (V.INT32, V.INT64, V.UINT64):
        a, b = _INT_RANGE[t]
        if a <= lo and hi <= b:
            return t
    raise ValueError(f"integer {lo if lo < _INT_RANGE[V.INT64][0] else hi} does not fit in "
                     f"any GGUF integer type")


def _is_seq(v):
    return isinstance(v, (list, tuple)) or (isinstance(v, np.ndarray) and v.ndim >= 1)


def infer_type(value, depth=0):
    """The GGUF type spec ggml_cy gives a Python value (see the module docstring)."""
    if isinstance(value, Value):
        return _norm_spec(value.type)
    if depth > MAX_ARRAY_DEPTH:
        raise ValueError(f"a metadata value nests arrays more than {MAX_ARRAY_DEPTH} deep")
    if isinstance(value, (bool, np.bool_)):
        return V.BOOL
    if isinstance(value, np.generic):
        t = _VT_OF_DTYPE.get(value.dtype)
        if t is None:
            raise TypeError(f"numpy {value.dtype} has no GGUF value type")
        return t
    if isinstance(value, int):
        return _int_vtype(value, value)
    if isinstance(value, float):
        return V.FLOAT32
    if isinstance(value, str):
        return V.STRING
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return infer_type(value[()], depth)
        if value.ndim > 1:
            raise ValueError(f"a metadata array is 1-D (use lists of arrays for nesting), "
                             f"got shape {value.shape}")
        t = _VT_OF_DTYPE.get(value.dtype.newbyteorder("=") if value.dtype.byteorder == ">"
                             else value.dtype)
        if t is None:
            raise TypeError(f"numpy {value.dtype} has no GGUF value type")
        return (V.ARRAY, t)
    if isinstance(value, (list, tuple)):
        if len(value) == 0:
            raise ValueError("the element type of an empty array cannot be inferred: give "
                             "it explicitly (Value([], (GGUFValueType.ARRAY, type)))")
        if all(isinstance(x, str) for x in value):
            return (V.ARRAY, V.STRING)
        if all(isinstance(x, (bool, np.bool_)) for x in value):
            return (V.ARRAY, V.BOOL)
        if all(isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))
               for x in value):
            ints = [int(x) for x in value]
            return (V.ARRAY, _int_vtype(min(ints), max(ints)))
        if all(isinstance(x, (int, float, np.integer, np.floating)) and
               not isinstance(x, (bool, np.bool_)) for x in value):
            return (V.ARRAY, V.FLOAT32)
        if all(_is_seq(x) for x in value):
            specs = [infer_type(x, depth + 1) for x in value]
            if all(s == specs[0] for s in specs):
                return (V.ARRAY, specs[0])
            return (V.ARRAY, specs)
        raise TypeError("a metadata array holds elements of one kind (all str, all bool, "
                        "all numbers, or all arrays)")
    raise TypeError(f"{type(value).__name__} is not a GGUF metadata value")


# ============================================================================ encoding
def _pack_scalar(v, t, bo, what):
    if t in _INT_RANGE:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{what}: {t} needs an integer, got {v!r}")
        a, b = _INT_RANGE[t]
        if not a <= int(v) <= b:
            raise ValueError(f"{what}: {int(v)} is out of range for {t}")
        return struct.pack(bo + _FMT[t], int(v))
    if t == V.BOOL:
        if not isinstance(v, (bool, np.bool_)) and v not in (0, 1):
            raise TypeError(f"{what}: bool needs True/False, got {v!r}")
        return b"\x01" if v else b"\x00"
    if t in (V.FLOAT32, V.FLOAT64):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                                 np.floating)):
            raise TypeError(f"{what}: {t} needs a number, got {v!r}")
        try:
            return struct.pack(bo + _FMT[t], float(v))
        except OverflowError:
            raise ValueError(f"{what}: {v!r} is out of range for {t}") from None
    if t == V.STRING:
        if not isinstance(v, str):
            raise TypeError(f"{what}: string needs a str, got {type(v).__name__}")
        b = v.encode("utf-8")
        return struct.pack(bo + "Q", len(b)) + b
    raise AssertionError(t)


def _pack_array(v, elem, bo, what, out, depth=0):
    if not _is_seq(v):
        raise TypeError(f"{what}: an array value must be a list, tuple or 1-D numpy array, "
                        f"not {type(v).__name__}")
    n = len(v)
    et = elem[0] if isinstance(elem, tuple) else (V.ARRAY if isinstance(elem, list) else elem)
    out.append(struct.pack(bo + "IQ", int(et), n))
    if et == V.STRING:
        q = struct.Struct(bo + "Q").pack
        try:
            enc = [s.encode("utf-8") for s in v]
        except AttributeError:
            raise TypeError(f"{what}: an array of strings holds str only") from None
        out.append(b"".join([q(len(b)) + b for b in enc]))
    elif et == V.ARRAY:
        if isinstance(elem, list) and len(elem) != n:
            raise ValueError(f"{what}: {len(elem)} element types for {n} elements")
        if depth >= MAX_ARRAY_DEPTH:
            raise ValueError(f"{what}: arrays nest more than {MAX_ARRAY_DEPTH} deep")
        for i, x in enumerate(v):
            if isinstance(elem, list):
                sub = elem[i]
            elif isinstance(elem, tuple):
                sub = elem
            else:
                sub = infer_type(x, depth + 1)
            if not isinstance(sub, tuple):
                raise ValueError(f"{what}[{i}]: an element of an array of arrays must have "
                                 f"an array type, not {sub}")
            _pack_array(x, sub[1], bo, f"{what}[{i}]", out, depth + 1)
    else:
        out.append(_pack_numbers(v, et, bo, what))


def _pack_numbers(v, et, bo, what):
    dt = _DTYPE_OF_VT[et].newbyteorder(bo)
    if not isinstance(v, np.ndarray):
        # a list or tuple: check the Python values (numpy would guess a dtype)
        if et in _INT_RANGE or et == V.BOOL:
            if et == V.BOOL:
                ok = all(isinstance(x, (bool, np.bool_)) or
                         (isinstance(x, (int, np.integer)) and x in (0, 1)) for x in v)
            else:
                ok = all(isinstance(x, (int, np.integer)) and
                         not isinstance(x, (bool, np.bool_)) for x in v)
            if not ok:
                raise TypeError(f"{what}: {et} elements must be "
                                f"{'True/False' if et == V.BOOL else 'integers'}")
            ints = [int(x) for x in v]
            if et != V.BOOL and ints:
                lo, hi = _INT_RANGE[et]
                mn, mx = min(ints), max(ints)
                if mn < lo or mx > hi:
                    raise ValueError(f"{what}: {mn if mn < lo else mx} is out of range for "
                                     f"{et}")
            return np.array(ints, dtype=np.uint8 if et == V.BOOL else dt).tobytes()
        if not all(isinstance(x, (int, float, np.integer, np.floating)) and
                   not isinstance(x, (bool, np.bool_)) for x in v):
            raise TypeError(f"{what}: {et} elements must be numbers")
        v = np.array([float(x) for x in v], dtype=np.float64)
    a = v
    if a.ndim != 1:
        raise ValueError(f"{what}: a {et} array must be 1-D, got shape {a.shape}")
    if a.size == 0:
        return b""
    kind = a.dtype.kind
    if et in _INT_RANGE:
        if kind not in "iu":
            raise TypeError(f"{what}: {et} elements must be integers, got {a.dtype}")
        lo, hi = _INT_RANGE[et]
        mn, mx = int(a.min()), int(a.max())
        if mn < lo or mx > hi:
            raise ValueError(f"{what}: {mn if mn < lo else mx} is out of range for {et}")
        return a.astype(dt).tobytes()
    if et == V.BOOL:
        if kind != "b" and (kind not in "iu" or a.min() < 0 or a.max() > 1):
            raise TypeError(f"{what}: bool elements must be True/False")
        return a.astype(np.uint8).tobytes()
    if kind not in "iuf":
        raise TypeError(f"{what}: {et} elements must be numbers, got {a.dtype}")
    with np.errstate(over="ignore"):
        b = a.astype(dt)
    if not np.array_equal(np.isinf(b), np.isinf(a.astype(np.float64))):
        raise ValueError(f"{what}: a value is out of range for {et}")
    return b.tobytes()


def encode_value(value, spec, byteorder="little", what="value"):
    """The bytes of a metadata value (type field included) for its spec."""
    bo = "<" if byteorder == "little" else ">"
    if isinstance(value, Value):
        value = value.value
    spec = _norm_spec(spec)
    out = []
    if isinstance(spec, tuple):
        out.append(struct.pack(bo + "I", int(V.ARRAY)))
        _pack_array(value, spec[1], bo, what, out)
    elif spec == V.ARRAY:
        out.append(struct.pack(bo + "I", int(V.ARRAY)))
        _pack_array(value, infer_type(value)[1] if _is_seq(value) else V.ARRAY, bo, what,
                    out)
    else:
        if _is_seq(value):
            # a list given with a scalar type: an array of that type
            out.append(struct.pack(bo + "I", int(V.ARRAY)))
            _pack_array(value, spec, bo, what, out)
        else:
            out.append(struct.pack(bo + "I", int(spec)))
            out.append(_pack_scalar(value, spec, bo, what))
    return b"".join(out)


def _key_bytes(key, bo):
    if not isinstance(key, str):
        raise TypeError(f"a metadata key must be a str, not {type(key).__name__}")
    b = key.encode("utf-8")
    if not b or len(b) > MAX_KEY_LENGTH:
        raise ValueError(f"a metadata key is 1 to {MAX_KEY_LENGTH} bytes of UTF-8, got "
                         f"{len(b)} bytes")
    return struct.pack(bo + "Q", len(b)) + b


# ============================================================================ tensors
def _pad(n, a):
    return (n + a - 1) // a * a


_TOFILE_MIN = 1 << 20
_WRITE_PIECE = 64 << 20     # bytes per tofile call of a big tensor (signal checks between)


def _nbytes(t, ne):
    bs, bb = block_size(t), block_bytes(t)
    if ne[0] % bs:
        raise ValueError(f"ne[0] = {ne[0]} is not a multiple of {GGML_TYPE_NAMES[t]}'s block "
                         f"size {bs}")
    n = ne[0] // bs * bb
    for x in ne[1:]:
        n *= x
    return n


def _check_shape(shape, what):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        raise TypeError(f"{what}: shape must be a tuple of ints, not {shape!r}") from None
    if not 1 <= len(shape) <= 4:
        raise ValueError(f"{what}: a ggml tensor has 1 to 4 dims, got shape {shape}")
    for x in shape:
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
            raise TypeError(f"{what}: shape must be a tuple of ints, not {shape!r}")
        if x <= 0:
            raise ValueError(f"{what}: every dimension must be positive, got shape {shape}")
        if x >= 2**63:
            raise ValueError(f"{what}: dimension {x} overflows int64")
    return tuple(int(x) for x in shape)


def _as_bytes(data, what):
    """A uint8 view of a bytes-like object or a C-contiguous array."""
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    try:
        return np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
    except TypeError:
        raise TypeError(f"{what}: data must be bytes-like or a numpy array, not "
                        f"{type(data).__name__}") from None


def _plain_array(arr, t, what):
    """arr converted to plain ggml type t's storage dtype (native byte order)."""
    dt = _DTYPE_OF_GGML[t]
    arr = np.asarray(arr)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{what}: numpy {arr.dtype} cannot be stored as "
                        f"{GGML_TYPE_NAMES[t]}")
    if t == 30 and arr.dtype != np.uint16:
        arr = float32_to_bfloat16(np.asarray(arr, dtype=np.float32))
    return np.ascontiguousarray(arr, dtype=dt)


def _tensor_source(data, what):
    """(type number, shape, source) of a tensor given in any accepted form; source is a
    plain numpy array, a uint8 array of raw blocks, or a ggml_cy Tensor."""
    if isinstance(data, Tensor):
        t = int(data.type)
        if t not in GGML_TYPE_NAMES:
            raise ValueError(f"{what}: ggml_cy's own type {data.type} is never written to "
                             f"a GGUF file (ggml has no such type)")
        return t, _check_shape(tuple(data.shape) or (1,), what), data
    if isinstance(data, np.generic):
        data = np.asarray(data)
    if isinstance(data, np.ndarray):
        dt = data.dtype.newbyteorder("=") if data.dtype.byteorder == ">" else data.dtype
        t = _GGML_OF_DTYPE.get(dt)
        if t is None:
            hint = (" (uint16 data: give RawTensor('bf16', shape, data) for bfloat16 bit "
                    "patterns)" if dt == np.uint16 else
                    " (raw quantized blocks: give RawTensor(type, shape, data))"
                    if dt == np.uint8 else "")
            raise TypeError(f"{what}: numpy {data.dtype} is not a ggml type a GGUF file "
                            f"holds{hint}")
        shape = _check_shape(data.shape or (1,), what)
        return t, shape, np.ascontiguousarray(data, dtype=dt).reshape(shape)
    if isinstance(data, tuple) and len(data) == 3:
        t, shape, raw = data
        t = ggml_type(t)
        shape = _check_shape(shape, what)
        ne = shape[::-1]
        nbytes = _nbytes(t, ne)
        if t in _DTYPE_OF_GGML and isinstance(raw, np.ndarray) and raw.dtype != np.uint8:
            arr = _plain_array(raw, t, what)
            if arr.size * arr.itemsize != nbytes:
                raise ValueError(f"{what}: {arr.size} elements for shape {shape}")
            return t, shape, arr.reshape(shape)
        if raw is None:
            return t, shape, None
        b = _as_bytes(raw, what)
        if b.size != nbytes:
            raise ValueError(f"{what}: {GGML_TYPE_NAMES[t]} of shape {shape} takes {nbytes} "
                             f"bytes, the data has {b.size}")
        return t, shape, b
    raise TypeError(f"{what}: a tensor is a numpy array, a ggml_cy Tensor or "
                    f"RawTensor(type, shape, data), not {type(data).__name__}")


def _tensor_bytes(t, src, nbytes, bo, what):
    """The bytes to write for a tensor source, in the file's byte order."""
    if isinstance(src, Tensor):
        from ggml_cy.backend import tensor_get
        if src.is_contiguous:
            b = tensor_get(src, 0, nbytes)
        elif t in _DTYPE_OF_GGML:
            b = np.ascontiguousarray(tensor_get(src))
        else:
            raise ValueError(f"{what}: a non-contiguous quantized tensor cannot be written")
        if bo == ">" and t in _DTYPE_OF_GGML:
            b = np.asarray(b).reshape(-1).view(_DTYPE_OF_GGML[t]).byteswap()
        return _as_bytes(b, what)
    if src.dtype != np.uint8 and bo == ">" and src.dtype.itemsize > 1:
        src = src.byteswap()
    b = _as_bytes(src, what)
    if b.size != nbytes:
        raise ValueError(f"{what}: the data has {b.size} bytes, the tensor takes {nbytes}")
    return b


# ============================================================================ the writer
class GGUFWriter:
    """Writes a GGUF file in one pass (see the module docstring).

    ``w = GGUFWriter(path, alignment=None, byteorder='little')``; ``w.add_metadata(key,
    value, type=None)``; ``w.add_tensor_info(name, type, shape)`` for every tensor (or
    ``w.add_tensor(name, data)`` to declare it and keep its data for ``write_tensors``);
    ``w.write_header()`` writes header, metadata and tensor infos; then
    ``w.write_tensor(name, data)`` for each declared tensor in order (data: the tensor's
    bytes, an array of its type, or a ggml_cy Tensor); ``w.close()``. A context manager:
    leaving the block closes the file (and removes it when an exception left it
    incomplete). alignment: None for 32, or general.alignment's value if the metadata has
    it."""

    def __init__(self, path, alignment=None, byteorder="little"):
        if byteorder not in ("little", "big"):
            raise ValueError(f"byteorder must be 'little' or 'big', not {byteorder!r}")
        if alignment is not None:
            self._check_alignment(alignment)
        self._bo = "<" if byteorder == "little" else ">"
        self.byteorder = byteorder
        self._alignment = alignment
        self._kv = {}            # key -> encoded entry
        self._tensors = {}       # name -> [type, shape, nbytes, offset, source]
        self._order = []
        self._next = 0
        self._header_written = False
        self._closed = False
        if hasattr(path, "write"):
            self._f, self._own, self.path = path, False, None
        else:
            self.path = os.fspath(path)
            self._f, self._own = open(self.path, "wb"), True
        self._pos = 0

    @staticmethod
    def _check_alignment(a):
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or a <= 0 \
                or a & (a - 1) or a > MAX_ALIGNMENT:
            raise ValueError(f"alignment must be a power of two from 1 to {MAX_ALIGNMENT}, "
                             f"got {a!r}")

    @property
    def alignment(self):
        return DEFAULT_ALIGNMENT if self._alignment is None else int(self._alignment)

    def _not_started(self, what):
        if self._closed:
            raise ValueError("the GGUF writer is closed")
        if self._header_written:
            raise ValueError(f"{what}: the header is written already; declare everything "
                             f"before write_header()")

    # ---------------------------------------------------------------- declarations
    def add_metadata(self, key, value, type=None):
        """Adds one metadata entry (type inferred unless given; see the module doc)."""
        self._not_started("add_metadata")
        kb = _key_bytes(key, self._bo)
        if key in self._kv:
            raise ValueError(f"duplicate metadata key {key!r}")
        if type is None:
            spec = infer_type(value)
        else:
            spec = _norm_spec(type)
        if key == "general.alignment":
            v = value.value if isinstance(value, Value) else value
            if spec != V.UINT32 and not (spec in (V.INT32, V.INT64, V.UINT64) and type is None):
                raise ValueError(f"general.alignment must be uint32, not {spec}")
            spec = V.UINT32
            self._check_alignment(v)
            if self._alignment is not None and int(v) != self.alignment:
                raise ValueError(f"general.alignment {v} conflicts with alignment="
                                 f"{self._alignment}")
            if self._tensors:
                raise ValueError("set general.alignment before declaring tensors")
            self._alignment = int(v)
        self._kv[key] = kb + encode_value(value, spec, self.byteorder, f"metadata {key!r}")

    add = add_metadata

    def copy_metadata(self, src, exclude=()):
        """Adds every metadata entry of the open GGUFFile `src` (in its order, skipping the
        keys in `exclude`) with its exact GGUF type: byte for byte when the byte orders
        match, no value decoded (a 150k-token vocabulary copies in milliseconds).
        ``ggml-cy quantize``-style tools: copy_metadata(src, exclude={'general.file_type'}),
        add_metadata the new values, add_tensor_info each tensor, write_header,
        write_tensor one at a time."""
        from ggml_cy.gguf.reader import GGUFFile
        if not isinstance(src, GGUFFile):
            raise TypeError(f"src must be an open GGUFFile (ggml_cy.gguf.load), not "
                            f"{builtin_type(src).__name__}")
        self._not_started("copy_metadata")
        exclude = set(exclude)
        md = src.metadata
        for k in md:
            if k in exclude:
                continue
            if k == "general.alignment" or src.byteorder != self.byteorder:
                self.add_metadata(k, md[k], md.spec(k))
                continue
            if k in self._kv:
                raise ValueError(f"duplicate metadata key {k!r}")
            vt, payload = md.encoded(k)
            self._kv[k] = (_key_bytes(k, self._bo) + struct.pack(self._bo + "I", int(vt))
                           + payload)

    def add_tensor_info(self, name, type, shape, data=None):
        """Declares a tensor: its name, ggml type (GGMLType, number or name) and shape
        (numpy order). Its data is given later to write_tensor (or now, kept for
        write_tensors)."""
        self._not_started("add_tensor_info")
        what = f"tensor {name!r}"
        if not isinstance(name, str):
            raise TypeError(f"a tensor name must be a str, not {builtin_type(name).__name__}")
        nb = name.encode("utf-8")
        if len(nb) > MAX_NAME_LENGTH:
            raise ValueError(f"{what}: the name is {len(nb)} bytes; ggml's limit is "
                             f"{MAX_NAME_LENGTH}")
        if name in self._tensors:
            raise ValueError(f"duplicate tensor name {name!r}")
        t, shape, src = _tensor_source((type, shape, data), what)
        self._declare(name, t, shape, src)

    def add_tensor(self, name, data):
        """Declares a tensor from its data (numpy array, ggml_cy Tensor, RawTensor or
        (type, shape, data)) and keeps the data for write_tensors()."""
        self._not_started("add_tensor")
        if not isinstance(name, str):
            raise TypeError(f"a tensor name must be a str, not {builtin_type(name).__name__}")
        what = f"tensor {name!r}"
        nb = name.encode("utf-8")
        if len(nb) > MAX_NAME_LENGTH:
            raise ValueError(f"{what}: the name is {len(nb)} bytes; ggml's limit is "
                             f"{MAX_NAME_LENGTH}")
        if name in self._tensors:
            raise ValueError(f"duplicate tensor name {name!r}")
        t, shape, src = _tensor_source(data, what)
        self._declare(name, t, shape, src)

    def _declare(self, name, t, shape, src):
        nbytes = _nbytes(t, shape[::-1])
        off = 0
        if self._order:
            last = self._tensors[self._order[-1]]
            off = last[3] + _pad(last[2], self.alignment)
        self._tensors[name] = [t, shape, nbytes, off, src]
        self._order.append(name)

    # ---------------------------------------------------------------- writing
    def _write(self, b):
        if self._own and isinstance(b, np.ndarray) and b.nbytes >= _TOFILE_MIN:
            # numpy's tofile (stdio's fwrite on a dup of the descriptor) measured clearly
            # faster than io's write of the same buffer for large tensors (bench gguf)
            # in pieces, so that Ctrl-C (KeyboardInterrupt) is seen between them during a
            # big write instead of at its end (issue 17)
            raw = np.ascontiguousarray(b).reshape(-1).view(np.uint8)
            for i in range(0, raw.size, _WRITE_PIECE):
                raw[i:i + _WRITE_PIECE].tofile(self._f)
        else:
            self._f.write(b)
        self._pos += len(b) if isinstance(b, bytes) else memoryview(b).nbytes

    def header_bytes(self):
        """Header, metadata and tensor infos as they will be written (no padding)."""
        bo = self._bo
        kv = dict(self._kv)
        if self._alignment is not None and self.alignment != DEFAULT_ALIGNMENT \
                and "general.alignment" not in kv:
            kv["general.alignment"] = (_key_bytes("general.alignment", bo) +
                                       encode_value(self.alignment, V.UINT32,
                                                    self.byteorder))
        parts = [GGUF_MAGIC, struct.pack(bo + "IQQ", GGUF_VERSION, len(self._order),
                                         len(kv))]
        parts.extend(kv.values())
        for name in self._order:
            t, shape, nbytes, off, _ = self._tensors[name]
            nb = name.encode("utf-8")
            ne = shape[::-1]
            parts.append(struct.pack(bo + "Q", len(nb)) + nb +
                         struct.pack(bo + "I" + "Q" * len(ne) + "IQ", len(ne), *ne, t, off))
        return b"".join(parts)

    def write_header(self):
        """Writes the header, the metadata and the tensor infos (and the padding up to
        the data section when there are tensors)."""
        self._not_started("write_header")
        h = self.header_bytes()
        if self._order:
            h += b"\0" * (_pad(len(h), self.alignment) - len(h))
        self._write(h)
        self._data_start = self._pos
        self._header_written = True

    def write_tensor(self, name, data=None):
        """Writes the data of the next declared tensor (name must be that tensor's):
        its raw bytes (bytes-like or uint8 array), an array of its plain type, or a
        ggml_cy Tensor; None for the data given when it was declared."""
        if self._closed:
            raise ValueError("the GGUF writer is closed")
        if not self._header_written:
            self.write_header()
        if self._next >= len(self._order):
            raise ValueError(f"write_tensor({name!r}): every declared tensor is written")
        want = self._order[self._next]
        if name != want:
            raise ValueError(f"write_tensor({name!r}): the next tensor to write is {want!r} "
                             f"(tensors are written in the order they were declared)")
        t, shape, nbytes, off, src = self._tensors[want]
        what = f"tensor {name!r}"
        if data is None:
            if src is None:
                raise ValueError(f"{what}: no data given")
        elif isinstance(data, Tensor):
            if int(data.type) != t or tuple(data.shape) != shape:
                raise ValueError(f"{what}: declared {GGML_TYPE_NAMES[t]} {shape}, the Tensor "
                                 f"is {data.type} {tuple(data.shape)}")
            src = data
        elif isinstance(data, np.ndarray) and data.dtype != np.uint8 and t in _DTYPE_OF_GGML:
            src = _plain_array(data, t, what)
        else:
            src = _as_bytes(data, what)
        b = _tensor_bytes(t, src, nbytes, self._bo, what)
        self._write(b)
        pad = _pad(nbytes, self.alignment) - nbytes
        if pad:
            self._write(b"\0" * pad)
        self._tensors[want][4] = None       # let the data go
        self._next += 1

    def write_tensors(self):
        """Writes every remaining tensor from the data given when it was declared."""
        while self._next < len(self._order):
            self.write_tensor(self._order[self._next])

    def close(self):
        """Finishes the file: writes the header if nothing was written yet; every declared
        tensor must have been written (ValueError otherwise)."""
        if self._closed:
            return
        try:
            if not self._header_written:
                self.write_header()
            if self._next < len(self._order):
                raise ValueError(f"close(): tensor {self._order[self._next]!r} and "
                                 f"{len(self._order) - self._next - 1} more were declared "
                                 f"but not written")
        finally:
            self._closed = True
            if self._own:
                self._f.close()
            else:
                self._f.flush()

    def _abort(self):
        self._closed = True
        if self._own:
            self._f.close()
            try:
                os.unlink(self.path)
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self._abort()
        else:
            try:
                self.close()
            except BaseException:
                self._abort()
                raise


builtin_type = type


def save(path, metadata=None, tensors=None, alignment=None, byteorder="little", types=None):
    """Writes a GGUF file: metadata (mapping key -> value; Value(v, type) to give a type),
    tensors (mapping name -> numpy array / ggml_cy Tensor / RawTensor(type, shape, data),
    or an iterable of (name, tensor) pairs), alignment (None: 32 or the metadata's
    general.alignment), byteorder ('little' or 'big'), types (key -> GGUF type)."""
    metadata = {} if metadata is None else metadata
    types = {} if types is None else types
    if not hasattr(metadata, "items"):
        raise TypeError(f"metadata must be a mapping, not {builtin_type(metadata).__name__}")
    if tensors is None:
        items = []
    elif hasattr(tensors, "items"):
        items = list(tensors.items())
    else:
        items = list(tensors)
    with GGUFWriter(path, alignment=alignment, byteorder=byteorder) as w:
        if "general.alignment" in metadata:
            w.add_metadata("general.alignment", metadata["general.alignment"],
                           types.get("general.alignment"))
        for k, v in metadata.items():
            if k != "general.alignment":
                w.add_metadata(k, v, types.get(k))
        for item in items:
            if not (isinstance(item, tuple) and len(item) == 2):
                raise TypeError("tensors must be a mapping name -> tensor or (name, tensor) "
                                "pairs")
            w.add_tensor(*item)
        w.write_header()
        w.write_tensors()
