"""Backends as in ggml (ggml-backend.h), as small Python classes.

ggml's model, kept here:

* a **backend** (``Backend``) runs graphs on one device: ``name``,
  ``get_default_buffer_type()``, ``supports_op(tensor)``, ``graph_compute(graph)``;
* a **buffer type** (``BufferType``) says how to allocate memory the backend can use
  (``alloc_buffer(size)``, ``alignment``, ``max_size``);
* a **buffer** (``Buffer``) is one allocation; tensors are placed in it, and it moves
  bytes in and out of the tensors it holds (``set_tensor`` / ``get_tensor``);
* ``alloc_ctx_tensors(ctx, backend)`` places every tensor of a ``no_alloc`` context in
  one new buffer of the backend's default type (views follow their base);
* ``tensor_set(t, data)`` / ``tensor_get(t)`` move data in and out through t's buffer,
  whatever the device.

The CPU backend (ggml_cy.backend.cpu) and the CUDA backend (ggml_cy.cuda.backend)
subclass these. A new backend subclasses ``Buffer``, ``BufferType`` and ``Backend`` and overrides
``Buffer._alloc`` (plus ``__del__`` to free) / ``set_tensor`` / ``get_tensor`` and
``Backend.graph_compute`` / ``supports_op``; everything else is shared. Each buffer
registers itself under an integer handle that is stored in the tensors' ``buffer`` field,
so ``tensor_set`` finds the right buffer for any tensor. A context keeps the buffers its
tensors live in alive (a tensor can never point into freed memory).
"""
import threading
import weakref

import numpy as np

from ggml_cy.core import _core
from ggml_cy.graph import _graph
from ggml_cy.core._core import Context as _CoreContext, Tensor

__all__ = ["Backend", "BufferType", "Buffer", "alloc_ctx_tensors", "tensor_set", "tensor_get"]

_registry = weakref.WeakValueDictionary()     # buffer handle -> Buffer
_ctx_buffers = weakref.WeakKeyDictionary()    # context -> buffers its tensors live in
_lock = threading.Lock()
_next_handle = [1]


def _pad(n, align):
    return (n + align - 1) // align * align


class Buffer:
    """One allocation of a buffer type. Subclasses provide the memory (``_alloc``,
    ``base``) and the copies (``set_tensor``, ``get_tensor``); ``host_readable`` says
    whether ``Tensor.numpy()`` may look at the memory directly."""
    host_readable = False

    def __init__(self, buft, size):
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
            raise ValueError(f"buffer size must be a non-negative integer, got {size!r}")
        if size > buft.max_size:
            raise ValueError(f"{buft.name}: a buffer of {size} bytes exceeds the maximum "
                             f"of {buft.max_size}")
        self.buft = buft
        self.size = int(size)
        self.base = self._alloc(self.size)     # integer address (device or host)
        with _lock:
            self.handle = _next_handle[0]
            _next_handle[0] += 1
            _registry[self.handle] = self

    def __repr__(self):
        return f"<{type(self).__name__} {self.buft.name} size={self.size}>"

    # --- to override
    def _alloc(self, size):
        raise NotImplementedError

    def set_tensor(self, tensor, data, offset):
        """Copies the bytes of `data` (a C-contiguous uint8 array) to tensor's data at
        byte `offset` (bounds already checked)."""
        raise NotImplementedError

    def get_tensor(self, tensor, offset, size):
        """Returns `size` bytes of tensor's data from byte `offset` as a uint8 array."""
        raise NotImplementedError

    def clear(self, value=0):
        raise NotImplementedError


class BufferType:
    """How a backend allocates memory (ggml_backend_buffer_type)."""
    name = "?"
    alignment = 64
    max_size = 1 << 62
    buffer_class = Buffer

    def alloc_buffer(self, size):
        return self.buffer_class(self, size)

    def get_alloc_size(self, tensor):
        """Bytes a tensor needs in a buffer of this type."""
        return _graph.tensor_nbytes(tensor)

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}>"


class Backend:
    """A device that runs graphs (ggml_backend)."""
    name = "?"

    def get_default_buffer_type(self):
        raise NotImplementedError

    def supports_op(self, tensor):
        """True when graph_compute can run tensor's op with its types."""
        raise NotImplementedError

    def graph_compute(self, graph):
        raise NotImplementedError

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}>"


# ----------------------------------------------------------------------------- placement
def alloc_ctx_tensors(ctx, backend):
    """ggml_backend_alloc_ctx_tensors: places every tensor of the no_alloc context ctx
    that has no data yet in one new buffer of backend's default buffer type, and points
    views at their base. Returns the buffer, or None when every tensor already has data.
    The context keeps the buffer alive."""
    if not isinstance(ctx, _CoreContext):
        raise TypeError(f"ctx must be a ggml_cy Context, not {type(ctx).__name__}")
    if not isinstance(backend, Backend):
        raise TypeError(f"backend must be a ggml_cy Backend, not {type(backend).__name__}")
    if not ctx.no_alloc:
        raise ValueError("alloc_ctx_tensors needs a no_alloc context (its tensors have "
                         "data in the context already)")
    buft = backend.get_default_buffer_type()
    tensors = ctx.tensors()
    todo, offsets, total = [], [], 0
    for t in tensors:
        if not t.has_data and t.view_src is None:
            offsets.append(total)
            todo.append(t)
            total += _pad(buft.get_alloc_size(t), buft.alignment)
    if not todo:
        return None
    buf = buft.alloc_buffer(total)
    for t, off in zip(todo, offsets):
        _graph.place_tensor(t, buf.base + off, buf.handle)
    _init_views(tensors, buf)
    _ctx_buffers.setdefault(ctx, []).append(buf)
    return buf


def _init_views(tensors, buf):
    """Views get their base's data + view_offs (ggml_backend_view_init)."""
    for t in tensors:
        vs = t.view_src
        if not t.has_data and vs is not None and vs.has_data:
            base_buf = _graph.tensor_buffer(vs)
            _graph.place_tensor(t, vs.data_ptr + t.view_offs, base_buf)


def _host_memory_of(handle):
    """The core's buffer hook: what keeps a buffer's host memory alive for arrays from
    Tensor.numpy() (a CPU buffer itself), or None for device memory (numpy() refuses)."""
    buf = _registry.get(handle)
    return buf if buf is not None and buf.host_readable else None


_core.set_buffer_hook(_host_memory_of)


def _buffer_of(tensor, what):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{what}: tensor must be a ggml_cy Tensor, not "
                        f"{type(tensor).__name__}")
    if not tensor.has_data:
        raise ValueError(f"{what}: tensor '{tensor.name}' has no data (place it with "
                         "alloc_ctx_tensors first)")
    handle = _graph.tensor_buffer(tensor)
    if handle == 0:
        return None  # context memory (a tensor of an allocating context)
    buf = _registry.get(handle)
    if buf is None:
        raise RuntimeError(f"{what}: the buffer holding tensor '{tensor.name}' was freed")
    return buf


def _check_range(tensor, offset, size, what):
    nbytes = _graph.tensor_nbytes(tensor)
    for name, v in (("offset", offset), ("size", size)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"{what}: {name} must be a non-negative integer, got {v!r}")
    if offset + size > nbytes:
        raise ValueError(f"{what}: bytes [{offset}, {offset + size}) lie outside tensor "
                         f"'{tensor.name}' of {nbytes} bytes")


def tensor_set(tensor, data, offset=0):
    """ggml_backend_tensor_set: copies the bytes of `data` (a numpy array of the tensor's
    dtype, or any bytes-like object) into tensor's data at byte `offset`.

    A contiguous tensor takes any byte range inside it. A strided tensor (a view with gaps,
    permuted, or walking backwards with negative strides) takes only all of its elements
    at once, in logical order (numpy's C order of ``tensor.shape``), offset 0: they are
    scattered through its strides, and the bytes between them are left alone. A byte
    range of a strided tensor is refused (ValueError): its bytes are not one run."""
    buf = _buffer_of(tensor, "tensor_set")
    if isinstance(data, np.ndarray) and tensor.type.is_quantized:
        # a quantized tensor takes its blocks as bytes (uint8), e.g. ggml_cy.quantize's output
        if data.dtype != np.uint8:
            raise TypeError(f"tensor_set: tensor '{tensor.name}' is {tensor.type}: data must "
                            f"be its blocks as uint8, not {data.dtype}")
        raw = np.ascontiguousarray(data).reshape(-1)
    elif isinstance(data, np.ndarray):
        if data.dtype != tensor.dtype:
            raise TypeError(f"tensor_set: data has dtype {data.dtype}, tensor "
                            f"'{tensor.name}' holds {tensor.dtype}")
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    else:
        try:
            raw = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
        except TypeError:
            raise TypeError(f"tensor_set: data must be a numpy array or bytes-like, not "
                            f"{type(data).__name__}") from None
    if not tensor.is_contiguous:
        _check_whole(tensor, offset, raw.size, "tensor_set")
        _strided_set(tensor, buf, raw)
        return
    _check_range(tensor, offset, raw.size, "tensor_set")
    if buf is None:  # context memory (a tensor of an allocating context)
        _host_bytes(tensor, offset, raw.size)[:] = raw
    else:
        buf.set_tensor(tensor, raw, offset)


def tensor_get(tensor, offset=0, size=None):
    """ggml_backend_tensor_get. With the defaults: a numpy copy of the tensor (its shape
    and dtype); with offset/size: that byte range as a uint8 array (contiguous tensors
    only; a strided tensor is copied out whole, through its strides, any sign)."""
    buf = _buffer_of(tensor, "tensor_get")
    whole = size is None and offset == 0
    if not tensor.is_contiguous:
        if not whole:
            n = _layout(tensor)[4]
            _check_whole(tensor, offset, n if size is None else size, "tensor_get")
        return _strided_get(tensor, buf)
    nbytes = _graph.tensor_nbytes(tensor)
    if size is None:
        size = nbytes - offset if isinstance(offset, (int, np.integer)) else 0
    _check_range(tensor, offset, size, "tensor_get")
    if buf is None:
        raw = _host_bytes(tensor, offset, size).copy()
    else:
        raw = buf.get_tensor(tensor, offset, size)
    if not whole:
        return raw
    return _typed(raw, tensor)


def _typed(raw, tensor):
    """The tensor's bytes as its numpy dtype and shape; a quantized tensor's as uint8 blocks
    in gguf-py's byte shape (rows, bytes per row): ggml_cy.dequantize(raw, tensor.type,
    tensor.shape) gives the values."""
    if tensor.type.is_quantized:
        shape = tuple(tensor.shape)
        row = _core.row_size(tensor.type, shape[-1])
        return np.asarray(raw, dtype=np.uint8).reshape(shape[:-1] + (row,))
    return raw.view(tensor.dtype).reshape(tensor.shape)


# ----------------------------------------------------------------- strided tensors
def _layout(tensor):
    """How a strided tensor's elements lie in memory, in storage units (an element, or a
    block of a quantized type): (units shape, byte strides, unit bytes, (lo, hi) extent
    relative to data_ptr, logical bytes). Rows of a block type must hold whole blocks."""
    ne, nb = tensor.ne, tensor.nb
    t = int(tensor.type)
    blck_size = getattr(_core, "blck_size", None)     # block types (quantized), if known
    blck = int(blck_size(t)) if blck_size is not None else 1
    unit = int(_core.type_size(t))
    if ne[0] % blck:
        raise ValueError(f"tensor '{tensor.name}': ne[0]={ne[0]} is not a whole number of "
                         f"{blck}-element blocks")
    shape = (ne[3], ne[2], ne[1], ne[0] // blck)
    strides = (nb[3], nb[2], nb[1], nb[0])
    lo = hi = 0
    for n, s in zip(shape, strides):
        if n > 0:
            lo += min(0, (n - 1) * s)
            hi += max(0, (n - 1) * s)
    count = int(np.prod(shape, dtype=np.int64))
    if count == 0:
        return shape, strides, unit, (0, 0), 0
    return shape, strides, unit, (lo, hi + unit), count * unit


def _check_whole(tensor, offset, size, what):
    n = _layout(tensor)[4]
    for name, v in (("offset", offset), ("size", size)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"{what}: {name} must be a non-negative integer, got {v!r}")
    if offset != 0 or size != n:
        raise ValueError(
            f"{what}: tensor '{tensor.name}' is strided (nb={tensor.nb}); it moves whole, "
            f"all {tensor.nelements} elements ({n} bytes) at offset 0, in logical order "
            f"(got {size} bytes at offset {offset}); byte ranges need a contiguous tensor")


def _strided_array(extent, tensor):
    """uint8 array over `extent` (the bytes [lo, hi) around tensor's data) indexing the
    tensor's storage units; numpy checks that every unit lies inside the extent."""
    shape, strides, unit, (lo, hi), _ = _layout(tensor)
    return np.ndarray(shape + (unit,), dtype=np.uint8, buffer=extent, offset=-lo,
                      strides=strides + (1,))


def _may_overlap(shape, strides, unit):
    """True unless the units provably lie apart: sorted by |stride|, each stride must
    clear the span of the dims inside it (a zero stride with more than one index, such
    as a broadcast view, overlaps)."""
    span = unit
    for n, s in sorted(((n, abs(s)) for n, s in zip(shape, strides) if n > 1),
                       key=lambda d: d[1]):
        if s < span:
            return True
        span = s * (n - 1) + span
    return False


def _strided_set(tensor, buf, raw):
    shape, strides, unit, (lo, hi), n = _layout(tensor)
    if n == 0:
        return
    if _may_overlap(shape, strides, unit):
        raise ValueError(f"tensor_set: the elements of tensor '{tensor.name}' overlap "
                         f"(nb={tensor.nb}): which value a shared element keeps would be "
                         "arbitrary; write through a view whose elements are distinct")
    src = raw.reshape(shape + (unit,))
    if buf is None or buf.host_readable:
        # host memory: scatter in place (the bytes between elements are not touched)
        _strided_array(_host_bytes(tensor, lo, hi - lo), tensor)[...] = src
    else:
        # device memory: read the extent, scatter, write the extent back
        extent = np.array(buf.get_tensor(tensor, lo, hi - lo), dtype=np.uint8, copy=True)
        _strided_array(extent, tensor)[...] = src
        buf.set_tensor(tensor, extent, lo)


def _strided_get(tensor, buf):
    shape, _, unit, (lo, hi), n = _layout(tensor)
    if n == 0:
        return _typed(np.zeros(0, dtype=np.uint8), tensor)
    if buf is None or buf.host_readable:
        extent = _host_bytes(tensor, lo, hi - lo)
    else:
        extent = buf.get_tensor(tensor, lo, hi - lo)
    units = np.ascontiguousarray(_strided_array(extent, tensor))
    return _typed(units.reshape(-1), tensor)


def _host_bytes(tensor, offset, size):
    import ctypes
    addr = tensor.data_ptr + offset
    if size == 0:
        return np.zeros(0, dtype=np.uint8)
    return np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(addr))
