"""ggml's GGUF API (ggml/include/gguf.h) as thin names over ``GGUFFile``.

``gguf_init_from_file(path, no_alloc=False, ctx=False)`` opens a file. With ``ctx=True`` it
also creates a ggml_cy Context holding one tensor per tensor info, named as in the file,
and returns ``(gguf_ctx, ctx)``:

* ``no_alloc=False``: the tensors have their data (copied from the file; ``mmap=True``
  points them instead into a private copy-on-write mapping of the file -- no copy, and
  writes to a tensor stay in memory, never reaching the file);
* ``no_alloc=True``: the tensors are descriptors without data; place them with
  ``ggml_cy.backend.alloc_ctx_tensors(ctx, backend)`` (CPU or CUDA) and copy the bytes in
  with ``gguf_load_tensors(gguf_ctx, ctx)`` -- the way llama.cpp loads a model.

The accessors take the gguf context first, as in ggml: ``gguf_get_n_kv(g)``,
``gguf_find_key(g, key)`` (-1 when absent), ``gguf_get_val_u32(g, i)`` ... A value read
with the wrong accessor raises TypeError (ggml aborts); an index out of range IndexError.
"""
import mmap as _mmap

import numpy as np

from ggml_cy.backend import base as _backend_base
from ggml_cy.backend import tensor_set
from ggml_cy.backend.cpu import CpuBuffer, CpuBufferType
from ggml_cy.core import _core
from ggml_cy.graph import _graph
from ggml_cy.graph.context import Context
from ggml_cy.gguf.constants import GGUFValueType as V
from ggml_cy.gguf.reader import GGUFFile, _NATIVE_DTYPE

__all__ = ["GGUFContext", "gguf_init_from_file", "gguf_free", "gguf_load_tensors",
           "gguf_type_name", "gguf_get_version", "gguf_get_alignment", "gguf_get_data_offset",
           "gguf_get_n_kv", "gguf_find_key", "gguf_get_key", "gguf_get_kv_type",
           "gguf_get_arr_type", "gguf_get_arr_n", "gguf_get_arr_data", "gguf_get_arr_str",
           "gguf_get_val", "gguf_get_val_u8", "gguf_get_val_i8", "gguf_get_val_u16",
           "gguf_get_val_i16", "gguf_get_val_u32", "gguf_get_val_i32", "gguf_get_val_f32",
           "gguf_get_val_u64", "gguf_get_val_i64", "gguf_get_val_f64", "gguf_get_val_bool",
           "gguf_get_val_str", "gguf_get_n_tensors", "gguf_find_tensor",
           "gguf_get_tensor_offset", "gguf_get_tensor_name", "gguf_get_tensor_type",
           "gguf_get_tensor_size"]

_TYPE_NAMES = {V.UINT8: "u8", V.INT8: "i8", V.UINT16: "u16", V.INT16: "i16",
               V.UINT32: "u32", V.INT32: "i32", V.FLOAT32: "f32", V.BOOL: "bool",
               V.STRING: "str", V.ARRAY: "arr", V.UINT64: "u64", V.INT64: "i64",
               V.FLOAT64: "f64"}


class GGUFContext:
    """ggml's gguf_context: an open GGUF file (``.file``: the GGUFFile) with its keys and
    tensors by index."""

    def __init__(self, f):
        self.file = f
        self.keys = list(f.metadata)
        self.tensor_names = list(f.tensors)
        self._tindex = {n: i for i, n in enumerate(self.tensor_names)}

    def close(self):
        self.file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"<GGUFContext {self.file.path!r}: {len(self.keys)} keys, "
                f"{len(self.tensor_names)} tensors>")


def _g(g):
    if not isinstance(g, GGUFContext):
        raise TypeError(f"expected a GGUFContext (from gguf_init_from_file), not "
                        f"{type(g).__name__}")
    return g


def _index(n, i, what):
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
        raise TypeError(f"{what} must be an int, not {type(i).__name__}")
    if not 0 <= i < n:
        raise IndexError(f"{what} {i} is out of range (0 to {n - 1})")
    return int(i)


def _key(g, key_id):
    return _g(g).keys[_index(len(g.keys), key_id, "key_id")]


# ---------------------------------------------------------------------------- opening
class _MappedBuffer(CpuBuffer):
    """A CPU buffer over a private (copy-on-write) mapping of a whole GGUF file."""

    def __init__(self, buft, mm):
        self._mm = mm
        super().__init__(buft, len(mm))

    def _alloc(self, size):
        self._mem = np.frombuffer(self._mm, dtype=np.uint8)
        self._offset = 0
        return self._mem.ctypes.data


def _pad(n, a=64):
    return (n + a - 1) // a * a


def gguf_init_from_file(path, no_alloc=False, ctx=False, mmap=False):
    """Opens a GGUF file: a GGUFContext, or with ctx=True ``(gguf_ctx, ggml_ctx)`` (see the
    module docstring). Raises GGUFError for a malformed file."""
    for name, v in (("no_alloc", no_alloc), ("ctx", ctx), ("mmap", mmap)):
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, not {v!r}")
    if mmap and no_alloc:
        raise ValueError("mmap=True places the tensors in the file mapping; no_alloc=True "
                         "leaves them for a backend: choose one")
    f = GGUFFile(path)
    g = GGUFContext(f)
    if not ctx:
        return g
    try:
        return g, _make_context(g, bool(no_alloc), bool(mmap))
    except BaseException:
        f.close()
        raise


def _make_context(g, no_alloc, use_mmap):
    f = g.file
    infos = list(f.tensors.values())
    overhead = _core.tensor_overhead()
    meta = len(infos) * (overhead + 64) + 4096
    if no_alloc or use_mmap:
        ctx = Context(mem_size=meta, no_alloc=True)
    else:
        ctx = Context(mem_size=meta + sum(_pad(ti.nbytes) for ti in infos))
    if f.byteorder == "big" and not no_alloc:
        bad = [ti.name for ti in infos if int(ti.type) not in _NATIVE_DTYPE]
        if bad or use_mmap:
            raise ValueError(f"{f.path}: a big-endian file's tensors "
                             f"{'cannot be mapped' if use_mmap else 'of quantized types'} "
                             f"into a little-endian context ({(bad or [infos[0].name])[0]!r})")
    tensors = [ctx.new_tensor(int(ti.type), ti.ne, name=ti.name) for ti in infos]
    if no_alloc:
        return ctx
    if use_mmap:
        with open(f.path, "rb") as fh:
            mm = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY)
        buf = _MappedBuffer(CpuBufferType(), mm)
        for t, ti in zip(tensors, infos):
            _graph.place_tensor(t, buf.base + ti.file_offset, buf.handle)
        _backend_base._ctx_buffers.setdefault(ctx, []).append(buf)
        return ctx
    for t, ti in zip(tensors, infos):
        tensor_set(t, _native_bytes(f, ti))
    return ctx


def _native_bytes(f, ti):
    """The tensor's bytes in native (little-endian) order, as a memoryview."""
    if f.byteorder == "big":
        a = f.numpy(ti.name)
        return memoryview(a.astype(a.dtype.newbyteorder("=")).reshape(-1).view(np.uint8))
    return memoryview(f.raw(ti.name))


def gguf_load_tensors(g, ctx):
    """Copies each tensor's bytes from the file into the tensor of the same name in ctx
    (placed by alloc_ctx_tensors on any backend): llama.cpp's load step. Returns the
    number of tensors copied."""
    f = _g(g).file
    n = 0
    for ti in f.tensors.values():
        try:
            t = ctx.get_tensor(ti.name)
        except (KeyError, ValueError):
            t = None
        if t is None:
            continue
        if f.byteorder == "big" and int(ti.type) not in _NATIVE_DTYPE:
            raise ValueError(f"tensor '{ti.name}': quantized data of a big-endian file "
                             f"cannot be loaded")
        tensor_set(t, _native_bytes(f, ti))
        n += 1
    return n


def gguf_free(g):
    """Closes the file (ggml's gguf_free)."""
    _g(g).close()


def gguf_type_name(t):
    """ggml's gguf_type_name: 'u8', 'str', 'arr', ..."""
    return _TYPE_NAMES[V(t)]


# ---------------------------------------------------------------------------- header
def gguf_get_version(g):
    return _g(g).file.version


def gguf_get_alignment(g):
    return _g(g).file.alignment


def gguf_get_data_offset(g):
    return _g(g).file.data_offset


# ---------------------------------------------------------------------------- metadata
def gguf_get_n_kv(g):
    return len(_g(g).keys)


def gguf_find_key(g, key):
    """Index of key, or -1."""
    return _g(g).file.metadata.index(key)


def gguf_get_key(g, key_id):
    return _key(g, key_id)


def gguf_get_kv_type(g, key_id):
    return g.file.metadata.type(_key(g, key_id))


def gguf_get_arr_type(g, key_id):
    k = _key(g, key_id)
    t = g.file.metadata.array_type(k)
    if t is None:
        raise TypeError(f"key '{k}' holds a {g.file.metadata.type(k)}, not an array")
    return t


def gguf_get_arr_n(g, key_id):
    gguf_get_arr_type(g, key_id)
    return g.file.metadata.array_len(_key(g, key_id))


def gguf_get_arr_data(g, key_id):
    """The elements of an array of numbers or bools, as a numpy array (ggml refuses
    arrays of strings here; so does this)."""
    et = gguf_get_arr_type(g, key_id)
    if et in (V.STRING, V.ARRAY):
        raise TypeError(f"key '{_key(g, key_id)}' is an array of {et}s; use "
                        f"gguf_get_arr_str / gguf_get_val")
    return g.file.metadata[_key(g, key_id)]


def gguf_get_arr_str(g, key_id, i):
    et = gguf_get_arr_type(g, key_id)
    if et != V.STRING:
        raise TypeError(f"key '{_key(g, key_id)}' is an array of {et}, not of strings")
    arr = g.file.metadata[_key(g, key_id)]
    return arr[_index(len(arr), i, "element index")]


def gguf_get_val(g, key_id):
    """Any value, decoded (ggml_cy's addition)."""
    return g.file.metadata[_key(g, key_id)]


def _getter(vt):
    def get(g, key_id):
        k = _key(g, key_id)
        t = g.file.metadata.type(k)
        if t != vt:
            raise TypeError(f"key '{k}' holds a {t}, not a {vt} (use "
                            f"gguf_get_val_{_TYPE_NAMES[t]})")
        return g.file.metadata[k]
    get.__name__ = f"gguf_get_val_{_TYPE_NAMES[vt]}"
    get.__doc__ = f"The {vt} value of entry key_id (TypeError for another type)."
    return get


gguf_get_val_u8 = _getter(V.UINT8)
gguf_get_val_i8 = _getter(V.INT8)
gguf_get_val_u16 = _getter(V.UINT16)
gguf_get_val_i16 = _getter(V.INT16)
gguf_get_val_u32 = _getter(V.UINT32)
gguf_get_val_i32 = _getter(V.INT32)
gguf_get_val_f32 = _getter(V.FLOAT32)
gguf_get_val_u64 = _getter(V.UINT64)
gguf_get_val_i64 = _getter(V.INT64)
gguf_get_val_f64 = _getter(V.FLOAT64)
gguf_get_val_bool = _getter(V.BOOL)
gguf_get_val_str = _getter(V.STRING)


# ---------------------------------------------------------------------------- tensors
def gguf_get_n_tensors(g):
    return len(_g(g).tensor_names)


def gguf_find_tensor(g, name):
    """Index of the tensor called name, or -1."""
    return _g(g)._tindex.get(name, -1)


def _tinfo(g, tensor_id):
    names = _g(g).tensor_names
    return g.file.tensors[names[_index(len(names), tensor_id, "tensor_id")]]


def gguf_get_tensor_offset(g, tensor_id):
    """Offset of the tensor's data from the start of the data section."""
    return _tinfo(g, tensor_id).offset


def gguf_get_tensor_name(g, tensor_id):
    return _tinfo(g, tensor_id).name


def gguf_get_tensor_type(g, tensor_id):
    return _tinfo(g, tensor_id).type


def gguf_get_tensor_size(g, tensor_id):
    """Bytes of the tensor's data."""
    return _tinfo(g, tensor_id).nbytes
