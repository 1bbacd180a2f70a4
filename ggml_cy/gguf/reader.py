"""The GGUF reader: ``load(path)`` maps the file and parses it in compiled code
(``_gguf.Parsed``); metadata values are decoded when read, tensors are zero-copy views of
the mapping. Opening reads the header, the metadata and the tensor infos, never the data.
"""
import collections.abc
import importlib
import mmap
import os

import numpy as np

from ggml_cy.core._core import GGMLType, bfloat16_to_float32
from ggml_cy.gguf import _gguf
from ggml_cy.gguf.constants import GGUFError, GGUFValueType

__all__ = ["load", "GGUFFile", "Metadata", "TensorInfo", "ggml_type", "type_name",
           "block_size", "block_bytes", "is_quantized", "GGML_TYPE_NAMES"]

# ggml's type numbers and their traits (ggml_types.h), for every type a file may hold.
GGML_TYPE_NAMES = dict(_gguf.ggml_type_table())   # number -> name ("f32", "q4_K", ...)
_TYPE_OF_NAME = {v.lower(): k for k, v in GGML_TYPE_NAMES.items()}

# numpy storage dtype of the plain (non-quantized) types; BF16 as its 16-bit pattern.
_NATIVE_DTYPE = {0: "f4", 1: "f2", 24: "i1", 25: "i2", 26: "i4", 27: "i8", 28: "f8", 30: "u2"}


def ggml_type(t):
    """ggml's type number of t (a GGMLType, an int, or a name such as 'q4_K' / 'F32');
    ValueError for numbers and names that are not ggml types a file may hold."""
    if isinstance(t, bool):
        raise TypeError(f"a ggml type must be a GGMLType, a type number or a name, not {t!r}")
    if isinstance(t, (int, np.integer)):
        n = int(t)
        if n not in GGML_TYPE_NAMES:
            raise ValueError(f"{n} is not a ggml type number a GGUF file may hold")
        return n
    if isinstance(t, str):
        n = _TYPE_OF_NAME.get(t.lower())
        if n is None:
            raise ValueError(f"unknown ggml type name {t!r}")
        return n
    raise TypeError(f"a ggml type must be a GGMLType, a type number or a name, not "
                    f"{type(t).__name__}")


def _type_obj(n):
    """GGMLType(n) where ggml_cy's enum has the type, else the plain number."""
    try:
        return GGMLType(n)
    except ValueError:
        return n


def type_name(t):
    return GGML_TYPE_NAMES[ggml_type(t)]


def block_size(t):
    return _gguf.type_traits(ggml_type(t))[0]


def block_bytes(t):
    return _gguf.type_traits(ggml_type(t))[1]


def is_quantized(t):
    return bool(_gguf.type_traits(ggml_type(t))[2])


class TensorInfo:
    """One tensor of a GGUF file: ``name``, ``type`` (GGMLType, or ggml's number for types
    ggml_cy's enum lacks), ``type_name``, ``shape`` (numpy order), ``ne`` (ggml order, n_dims
    entries), ``offset`` (from the start of the data section, as in the file),
    ``file_offset`` (from the start of the file), ``nbytes``, ``n_elements``."""
    __slots__ = ("name", "type", "type_name", "ne", "shape", "offset", "file_offset",
                 "nbytes", "n_elements", "info_offset")

    def __init__(self, name, type, ne, offset, data_offset, nbytes, info_offset):
        self.name = name
        self.type = _type_obj(type)
        self.type_name = GGML_TYPE_NAMES[type]
        self.ne = ne
        self.shape = ne[::-1]
        self.offset = offset
        self.file_offset = data_offset + offset
        self.nbytes = nbytes
        self.n_elements = int(np.prod(ne, dtype=np.int64))
        self.info_offset = info_offset

    def __repr__(self):
        return (f"TensorInfo(name={self.name!r}, type={self.type_name}, shape={self.shape}, "
                f"offset={self.offset}, nbytes={self.nbytes})")


class Metadata(collections.abc.Mapping):
    """Read-only mapping key -> value of a GGUF file, in file order. Values are decoded
    when first read: int, float, bool, str; arrays of numbers or bools as 1-D numpy arrays
    (native byte order); arrays of strings as lists of str; arrays of arrays as lists.
    ``type(key)`` gives the GGUFValueType, ``spec(key)`` the full type (see ``_gguf``)."""

    def __init__(self, parsed, keys, buf=None):
        self._p = parsed
        self._bufget = buf          # () -> the file's buffer (raises once closed)
        self._keys = keys
        self._index = {k: i for i, k in enumerate(keys)}
        self._cache = {}

    def __getitem__(self, key):
        i = self._index[key]
        v = self._cache.get(i, self)
        if v is self:
            v = self._p.value(i)
            if isinstance(v, np.ndarray):
                v.flags.writeable = False
            self._cache[i] = v
        return v

    def __iter__(self):
        return iter(self._keys)

    def __len__(self):
        return len(self._keys)

    def __contains__(self, key):
        return key in self._index

    def index(self, key):
        """Position of key in the file (ggml's gguf_find_key), -1 when absent."""
        return self._index.get(key, -1)

    def type(self, key):
        """The GGUFValueType of key's value."""
        return GGUFValueType(self._p.kv_info(self._index[key])[1])

    def array_type(self, key):
        """The element GGUFValueType of an array value (None for scalars)."""
        et = self._p.kv_info(self._index[key])[2]
        return None if et < 0 else GGUFValueType(et)

    def array_len(self, key):
        """The element count of an array value (1 for scalars)."""
        return self._p.kv_info(self._index[key])[3]

    def spec(self, key):
        """The full GGUF type of key's value: a GGUFValueType, or for arrays
        ``(ARRAY, element spec)``; writing ``Value(md[key], md.spec(key))`` reproduces the
        value's bytes."""
        return self._p.spec(self._index[key])

    def encoded(self, key):
        """(GGUFValueType, bytes): key's type and its value exactly as encoded in the file
        (in the file's byte order), for copying an entry without decoding it."""
        i = self._index[key]
        start, end = self._p.value_bytes(i)
        buf = self._bufget()
        return self.type(key), bytes(memoryview(buf)[start:end])

    def offset(self, key):
        """Byte offset of key's entry in the file."""
        return self._p.kv_info(self._index[key])[0]

    def __repr__(self):
        return f"<GGUF metadata: {len(self)} keys>"


class GGUFFile:
    """An open GGUF file (``load(path)``): ``version``, ``alignment``, ``data_offset``,
    ``byteorder`` ('little' or 'big'), ``metadata``, ``tensors`` (name -> TensorInfo, file
    order), ``raw(name)``, ``numpy(name)``. A context manager; ``close()`` releases the
    mapping (arrays handed out keep their part of it alive until they are freed)."""

    def __init__(self, path):
        self._mm = None
        if isinstance(path, (bytes, bytearray, memoryview, np.ndarray)):
            # an in-memory file (tests, fuzzing, data already read)
            self.path = "<memory>"
            # an immutable copy unless given bytes: a buffer changed after parsing could
            # point reads anywhere
            buf = np.frombuffer(path if isinstance(path, bytes) else bytes(path),
                                dtype=np.uint8)
            if buf.size == 0:
                raise _error("magic at byte 0: the file is empty (0 bytes), not a GGUF file",
                             0)
            self._mm = _MemBuffer(buf)
            self._init(buf)
            return
        self.path = os.fspath(path)
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                e = GGUFError("magic at byte 0: the file is empty (0 bytes), not a GGUF file")
                e.offset = 0
                raise e
            self._mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            self._init(self._mm)
        except BaseException:
            self.close()
            raise

    def _init(self, buf):
        p = self._p = _gguf.Parsed(buf)
        self.size = p.size
        self.version = p.version
        self.alignment = p.alignment
        self.data_offset = p.data_offset
        self.byteorder = "big" if p.swapped else "little"
        keys = p.keys()
        if len(set(keys)) != len(keys):
            seen = set()
            for i, k in enumerate(keys):
                if k in seen:
                    raise _error(f"metadata #{i} '{k}' at byte {p.kv_info(i)[0]}: duplicate "
                                 f"key", p.kv_info(i)[0])
                seen.add(k)
        self.metadata = Metadata(p, keys, self._buf)
        names, tab = p.tensor_table()
        if len(set(names)) != len(names):
            seen = set()
            for i, n in enumerate(names):
                if n in seen:
                    raise _error(f"tensor #{i} '{n}' at byte {tab[i, 8]}: duplicate tensor "
                                 f"name", int(tab[i, 8]))
                seen.add(n)
        _check_overlap(names, tab, self.data_offset)
        do = self.data_offset
        self.tensors = {
            n: TensorInfo(n, r[1], tuple(r[2:2 + r[0]]), r[6], do, r[7], r[8])
            for n, r in zip(names, tab.tolist())}

    # ---------------------------------------------------------------- tensors
    def _buf(self):
        if self._mm is None:
            raise ValueError("the GGUF file is closed")
        return self._mm.buf if isinstance(self._mm, _MemBuffer) else self._mm

    def _info(self, name):
        if isinstance(name, TensorInfo):
            name = name.name
        try:
            return self.tensors[name]
        except KeyError:
            raise KeyError(f"no tensor named {name!r} in {self.path}") from None

    def raw(self, name):
        """The tensor's bytes as a read-only uint8 numpy array viewing the mapping (zero
        copy; stored as in the file, so byte-swapped in a big-endian file)."""
        ti = self._info(name)
        return np.frombuffer(self._buf(), dtype=np.uint8, count=ti.nbytes,
                             offset=ti.file_offset)

    def numpy(self, name, dtype=None):
        """The tensor as numpy: plain types as a read-only zero-copy view of the mapping in
        numpy order (BF16 as uint16 bit patterns; '>' dtypes in a big-endian file);
        quantized types dequantized to float32 (or `dtype`) through ggml_cy.quants.
        dtype: convert to it (a copy; BF16 converts its values, not its bit patterns)."""
        ti = self._info(name)
        dt = _NATIVE_DTYPE.get(int(ti.type))
        if dt is None:
            return self._dequantize(ti, dtype)
        dt = np.dtype(("<" if self.byteorder == "little" else ">") + dt)
        arr = np.frombuffer(self._buf(), dtype=dt, count=ti.n_elements,
                            offset=ti.file_offset).reshape(ti.shape)
        if dtype is not None:
            if int(ti.type) == 30 and np.dtype(dtype) != np.uint16:
                # BF16 values, not their bit patterns
                arr = bfloat16_to_float32(arr.astype(np.uint16)).astype(dtype, copy=False)
            else:
                arr = arr.astype(dtype)
        return arr

    def _dequantize(self, ti, dtype):
        if self.byteorder == "big":
            raise ValueError(f"tensor '{ti.name}': the {ti.type_name} blocks of a big-endian "
                             f"file cannot be dequantized; .raw(name) gives its bytes")
        try:
            # ggml_cy.quants (rank 5.2, below this layer) is built concurrently: looked up
            # when first needed, so that this module imports without it
            dequantize = importlib.import_module("ggml_cy.quants").dequantize
        except (ImportError, AttributeError):
            raise NotImplementedError(
                f"tensor '{ti.name}' has the quantized type {ti.type_name}: dequantizing it "
                f"needs ggml_cy.quants, which this build lacks; .raw(name) gives its "
                f"bytes") from None
        kw = {} if dtype is None else {"dtype": dtype}
        return dequantize(self.raw(ti), int(ti.type), ti.shape, **kw)

    # ---------------------------------------------------------------- lifetime
    @property
    def closed(self):
        return self._mm is None

    def close(self):
        """Releases the mapping (numpy arrays from raw()/numpy() keep the memory they view
        alive; the mapping is unmapped when the last of them is freed)."""
        mm, self._mm = self._mm, None
        p = getattr(self, "_p", None)
        if p is not None:
            p.release()
        if mm is not None:
            try:
                mm.close()
            except BufferError:
                pass     # views still export it: unmapped when they die

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        state = "closed" if self.closed else f"{len(self.metadata)} keys, " \
                                             f"{len(self.tensors)} tensors"
        return f"<GGUFFile {self.path!r} v{self.version} {self.byteorder}-endian, {state}>"


class _MemBuffer:
    """Stands for the mapping of an in-memory file."""
    def __init__(self, buf):
        buf = buf.view()
        buf.flags.writeable = False
        self.buf = buf

    def close(self):
        self.buf = None


def _error(msg, offset):
    e = GGUFError(msg)
    e.offset = offset
    return e


def _check_overlap(names, tab, data_offset):
    """Tensors may lie in any order, but no two may share a byte."""
    if len(names) < 2:
        return
    off = tab[:, 6]
    order = np.argsort(off, kind="stable")
    start = off[order]
    end = start + tab[order, 7]
    bad = np.nonzero(start[1:] < end[:-1])[0]
    if bad.size:
        i, j = int(order[bad[0]]), int(order[bad[0] + 1])
        raise _error(f"tensor #{j} '{names[j]}': data at offset {int(off[j])} (byte "
                     f"{data_offset + int(off[j])}) overlaps tensor #{i} '{names[i]}' "
                     f"[{int(off[i])}, {int(off[i] + tab[i, 7])}) (tensor info at byte "
                     f"{int(tab[j, 8])})", int(tab[j, 8]))


def load(path):
    """Opens a GGUF file (a path, or the file's bytes: bytes, bytearray, memoryview, uint8
    array): a GGUFFile (also a context manager). Raises GGUFError (a ValueError naming the
    field and its byte offset) for a malformed file."""
    return GGUFFile(path)
