# ggml_cy core: the context arena, its object list, tensors and views (ggml.c's
# ggml_init / ggml_new_object / ggml_new_tensor_impl / ggml_view_impl, minus the aborts).
# The structs and the C-level API are documented in _core.pxd. No kernel code lives here.

from cpython.buffer cimport (PyObject_CheckBuffer, PyObject_GetBuffer, PyBuffer_Release,
                             PyBUF_WRITABLE, PyBUF_ANY_CONTIGUOUS)
from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t, uint64_t, INT64_MAX, SIZE_MAX
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memcpy, memset, strcmp
from cpython.ref cimport Py_INCREF

cimport numpy as cnp
import enum
import operator
import weakref
from collections import namedtuple

import numpy as np


cnp.import_array()

cdef extern from "core_checked.h" nogil:
    int gcy_mul_i64(int64_t a, int64_t b, int64_t * out)
    int gcy_add_i64(int64_t a, int64_t b, int64_t * out)
    int gcy_add_size(size_t a, size_t b, size_t * out)

cdef extern from "quant_blocks.h" nogil:
    size_t ggml_cy_block_struct_size(int type)

# The view ops come from the one op enum (the graph treats views as ops).
from ggml_cy.core._ops cimport (GGML_OP_NONE, GGML_OP_VIEW, GGML_OP_RESHAPE, GGML_OP_PERMUTE,
                                GGML_OP_TRANSPOSE, GGML_OP_COUNT)

# Owned pools are aligned to a cache line (and so to GGML_MEM_ALIGN).
cdef enum:
    POOL_ALIGN = 64


# ====================================================================== element types

class GGMLType(enum.IntEnum):
    """ggml's element and block types, with ggml's numbers (U8 and BOOL are ggml_cy
    additions). Quantized types store blocks of ``blck_size`` values in ``type_size``
    bytes (ggml-common.h's block structs; ggml_cy/core/csrc/quant_blocks.h)."""
    F32 = GGML_TYPE_F32
    F16 = GGML_TYPE_F16
    I8 = GGML_TYPE_I8
    I16 = GGML_TYPE_I16
    I32 = GGML_TYPE_I32
    I64 = GGML_TYPE_I64
    F64 = GGML_TYPE_F64
    BF16 = GGML_TYPE_BF16
    U8 = GGML_TYPE_U8
    BOOL = GGML_TYPE_BOOL
    # quantized (ggml's numbers)
    Q4_0 = GGML_TYPE_Q4_0
    Q4_1 = GGML_TYPE_Q4_1
    Q5_0 = GGML_TYPE_Q5_0
    Q5_1 = GGML_TYPE_Q5_1
    Q8_0 = GGML_TYPE_Q8_0
    Q8_1 = GGML_TYPE_Q8_1
    Q2_K = GGML_TYPE_Q2_K
    Q3_K = GGML_TYPE_Q3_K
    Q4_K = GGML_TYPE_Q4_K
    Q5_K = GGML_TYPE_Q5_K
    Q6_K = GGML_TYPE_Q6_K
    Q8_K = GGML_TYPE_Q8_K
    IQ2_XXS = GGML_TYPE_IQ2_XXS
    IQ2_XS = GGML_TYPE_IQ2_XS
    IQ3_XXS = GGML_TYPE_IQ3_XXS
    IQ1_S = GGML_TYPE_IQ1_S
    IQ4_NL = GGML_TYPE_IQ4_NL
    IQ3_S = GGML_TYPE_IQ3_S
    IQ2_S = GGML_TYPE_IQ2_S
    IQ4_XS = GGML_TYPE_IQ4_XS
    IQ1_M = GGML_TYPE_IQ1_M
    TQ1_0 = GGML_TYPE_TQ1_0
    TQ2_0 = GGML_TYPE_TQ2_0
    MXFP4 = GGML_TYPE_MXFP4
    NVFP4 = GGML_TYPE_NVFP4
    Q1_0 = GGML_TYPE_Q1_0
    Q2_0 = GGML_TYPE_Q2_0

    @property
    def size(self):
        """Bytes per element of a plain type; bytes per block of a quantized type (ggml's
        ggml_type_size)."""
        return <int>ggml_cy_block_bytes(self.value)

    @property
    def blck_size(self):
        """Values per block (1 for plain types; ggml_blck_size)."""
        return <int>ggml_cy_blck_size(self.value)

    @property
    def type_size(self):
        """Bytes per block (ggml_type_size)."""
        return <int>ggml_cy_block_bytes(self.value)

    @property
    def is_quantized(self):
        return bool(ggml_cy_is_quantized(self.value))

    @property
    def numpy_dtype(self):
        """numpy dtype of the storage (uint16 for BF16, which numpy lacks). Quantized types
        have none (TypeError): their data are blocks of bytes."""
        try:
            return _NUMPY_DTYPE[self]
        except KeyError:
            raise TypeError(f"{self} is a quantized type: its storage is blocks of "
                            f"{self.type_size} bytes, not a numpy dtype") from None

    def __str__(self):
        return ggml_type_name(self.value).decode()


# numpy storage dtype per type; BF16 is stored as its 16-bit pattern.
_NUMPY_DTYPE = {
    GGMLType.F32: np.dtype(np.float32), GGMLType.F16: np.dtype(np.float16),
    GGMLType.F64: np.dtype(np.float64), GGMLType.BF16: np.dtype(np.uint16),
    GGMLType.I8: np.dtype(np.int8), GGMLType.I16: np.dtype(np.int16),
    GGMLType.I32: np.dtype(np.int32), GGMLType.I64: np.dtype(np.int64),
    GGMLType.U8: np.dtype(np.uint8), GGMLType.BOOL: np.dtype(np.bool_),
}
# numpy type number of each ggml type's storage (for PyArray_New)
cdef int _npy_typenum(int type) noexcept nogil:
    if type == GGML_TYPE_F32: return cnp.NPY_FLOAT32
    if type == GGML_TYPE_F16: return cnp.NPY_FLOAT16
    if type == GGML_TYPE_F64: return cnp.NPY_FLOAT64
    if type == GGML_TYPE_BF16: return cnp.NPY_UINT16
    if type == GGML_TYPE_I8: return cnp.NPY_INT8
    if type == GGML_TYPE_I16: return cnp.NPY_INT16
    if type == GGML_TYPE_I32: return cnp.NPY_INT32
    if type == GGML_TYPE_I64: return cnp.NPY_INT64
    if type == GGML_TYPE_U8: return cnp.NPY_UINT8
    if type == GGML_TYPE_BOOL: return cnp.NPY_BOOL
    return -1

# numpy dtype -> ggml type for tensor_from (uint16 is absent on purpose: it is ambiguous,
# pass type=GGMLType.BF16 to store bfloat16 bit patterns).
_TYPE_OF_DTYPE = {dt: t for t, dt in _NUMPY_DTYPE.items() if t != GGMLType.BF16}
_TYPE_OF_NAME = {str(t): t for t in GGMLType}
_TYPE_OF_NAME.update({t.name.lower(): t for t in GGMLType})


def type_size(type):
    """Bytes per element of a plain type, bytes per block of a quantized one
    (ggml_type_size)."""
    return <int>ggml_cy_block_bytes(_as_type(type))


def blck_size(type):
    """Values per block (ggml_blck_size): 1 for plain types, 32 for Q4_0, 256 for Q4_K..."""
    return <int>ggml_cy_blck_size(_as_type(type))


def row_size(type, ne0):
    """Bytes of a row of ne0 values (ggml_row_size). ValueError when ne0 is negative or not
    a multiple of the type's block size."""
    t = _as_type(type)
    if isinstance(ne0, bool) or not isinstance(ne0, (int, np.integer)):
        raise TypeError(f"ne0 must be an int, not {ne0!r}")
    n = int(ne0)
    bs = ggml_cy_blck_size(t)
    if n < 0:
        raise ValueError(f"ne0 must be >= 0, not {n}")
    if n % bs:
        raise ValueError(f"a row of {t} holds a multiple of {bs} values (its block size), "
                         f"not {n}")
    r = ggml_cy_row_size(t, n) if n <= INT64_MAX else -1
    if r < 0:
        raise OverflowError(f"row_size({t}, {n}) does not fit in 64 bits")
    return int(r)


def _block_struct_size(type):
    """sizeof the C block struct of a quantized type (quant_blocks.h); 0 for plain types.
    For tests: it must equal type_size."""
    return <int>ggml_cy_block_struct_size(_as_type(type))


def numpy_dtype(type):
    """numpy storage dtype of a ggml type (uint16 for BF16)."""
    return _NUMPY_DTYPE[_as_type(type)]


def _as_type(obj):
    """A GGMLType from a GGMLType, its number, its name ('f32', 'bf16') or a numpy
    dtype-like (np.float32, 'float32'). TypeError/ValueError otherwise."""
    if isinstance(obj, GGMLType):
        return obj
    if obj is None or isinstance(obj, bool):   # np.dtype(None) would mean float64
        raise TypeError(f"a ggml type must be a GGMLType, an int, a type name or a numpy "
                        f"dtype, not {obj!r}")
    if isinstance(obj, (int, np.integer)):
        try:
            return GGMLType(int(obj))
        except ValueError:
            raise ValueError(f"unknown ggml type number {int(obj)}") from None
    if isinstance(obj, str) and obj.lower() in _TYPE_OF_NAME:
        return _TYPE_OF_NAME[obj.lower()]
    try:
        dt = np.dtype(obj)
    except TypeError:
        raise TypeError(f"a ggml type must be a GGMLType, an int, a type name or a numpy "
                        f"dtype, not {obj!r}") from None
    return _type_of_dtype(dt)


def _type_of_dtype(dt):
    t = _TYPE_OF_DTYPE.get(dt.newbyteorder("=") if dt.byteorder not in "=|" else dt)
    if t is None:
        hint = " (for bfloat16 bit patterns pass type=GGMLType.BF16)" if dt == np.uint16 else ""
        raise TypeError(f"numpy dtype {dt} has no ggml type{hint}")
    return t


# ====================================================================== C-level helpers

cdef inline int64_t _type_size(int type) noexcept nogil:
    # bytes per element (plain types) or per block (quantized types); 0: not a type
    return <int64_t>ggml_cy_block_bytes(type) if ggml_cy_type_known(type) else 0


cdef inline int64_t _blocks0(int type, int64_t ne0) noexcept nogil:
    # dim 0 counted in blocks (ne0 itself for plain types); -1 when ne0 cuts a block
    cdef int64_t bs = ggml_cy_blck_size(type)
    if bs <= 0 or ne0 % bs != 0:
        return -1
    return ne0 // bs


cdef int core_contiguous_strides(int type, const int64_t * ne, int64_t * nb) noexcept nogil:
    cdef int i
    cdef int64_t total, n0
    if not ggml_cy_type_known(type):
        return -1
    # A dim of 0 elements strides like a dim of 1 (numpy keeps such strides arbitrary;
    # this keeps nb non-decreasing so an empty tensor is neither permuted nor transposed).
    # Quantized types: nb[0] is the block size in bytes and dim 0 counts blocks (ggml).
    nb[0] = _type_size(type)
    if ne[0] < 0:
        return -1
    n0 = _blocks0(type, ne[0])
    if n0 < 0:
        return -1
    if gcy_mul_i64(nb[0], n0 if n0 else 1, &nb[1]):
        return -1
    for i in range(2, GGML_MAX_DIMS):
        if ne[i - 1] < 0 or gcy_mul_i64(nb[i - 1], ne[i - 1] if ne[i - 1] else 1, &nb[i]):
            return -1
    # the full byte size must fit as well
    if ne[3] < 0 or gcy_mul_i64(nb[3], ne[3] if ne[3] else 1, &total):
        return -1
    return 0


cdef int64_t core_nelements(const ggml_tensor * t) noexcept nogil:
    return t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]


cdef inline int64_t core_nelements_ne(const int64_t * ne) noexcept nogil:
    return ne[0] * ne[1] * ne[2] * ne[3]


cdef int64_t core_nrows(const ggml_tensor * t) noexcept nogil:
    return t.ne[1] * t.ne[2] * t.ne[3]


cdef bint core_is_contiguous(const ggml_tensor * t) noexcept nogil:
    # ggml_is_contiguous: dims of size 1 may carry any stride.
    cdef int64_t next_nb = _type_size(t.type)
    cdef int i
    if core_nelements(t) == 0:
        return True   # no element, no layout (numpy agrees)
    for i in range(GGML_MAX_DIMS):
        if t.ne[i] != 1:
            if t.nb[i] != next_nb:
                return False
            # dim 0 of a quantized type counts blocks
            next_nb *= (t.ne[i] // ggml_cy_blck_size(t.type)) if i == 0 else t.ne[i]
    return True


cdef int core_extent(int type, const int64_t * ne, const int64_t * nb,
                     int64_t * lo, int64_t * hi) noexcept nogil:
    cdef int i
    cdef int64_t span, n
    lo[0] = 0
    hi[0] = 0
    for i in range(GGML_MAX_DIMS):
        if ne[i] < 0:
            return -1
    for i in range(GGML_MAX_DIMS):
        if ne[i] == 0:
            return 0
    hi[0] = _type_size(type)
    if hi[0] <= 0:
        return -1
    for i in range(GGML_MAX_DIMS):
        # dim 0 of a quantized type counts blocks (a view never cuts one)
        n = ne[i] if i else _blocks0(type, ne[0])
        if n < 0:
            return -1
        if gcy_mul_i64(n - 1, nb[i], &span):
            return -1
        if span >= 0:
            if gcy_add_i64(hi[0], span, hi):
                return -1
        elif gcy_add_i64(lo[0], span, lo):
            return -1
    return 0


cdef int64_t core_nbytes(const ggml_tensor * t) noexcept nogil:
    cdef int64_t lo, hi
    if core_extent(t.type, t.ne, t.nb, &lo, &hi) != 0:
        return -1
    return hi - lo


cdef void core_init_header(ggml_tensor * t, int type, const int64_t * ne,
                           const int64_t * nb, void * data) noexcept nogil:
    # nb may be NULL: contiguous strides are filled in.
    memset(t, 0, sizeof(ggml_tensor))
    t.type = type
    cdef int i
    for i in range(GGML_MAX_DIMS):
        t.ne[i] = ne[i]
    if nb != NULL:
        for i in range(GGML_MAX_DIMS):
            t.nb[i] = nb[i]
    else:
        core_contiguous_strides(type, t.ne, t.nb)
    t.data = data


cdef void core_set_name(ggml_tensor * t, const char * name) noexcept nogil:
    cdef size_t n = 0
    while n < GGML_MAX_NAME - 1 and name[n] != 0:
        n += 1
    if name[n] != 0:
        # cut: step back to the start of the UTF-8 character that does not fit
        while n > 0 and (<unsigned char>name[n] & 0xC0) == 0x80:
            n -= 1
    memset(t.name, 0, GGML_MAX_NAME)
    memcpy(t.name, name, n)


cdef ggml_object * core_new_object(ggml_context * ctx, int type, size_t size,
                                   size_t * needed, size_t * available) noexcept nogil:
    cdef size_t cur_end = 0
    cdef size_t avail, size_needed, total
    cdef ggml_object * obj
    if ctx.objects_end != NULL:
        cur_end = ctx.objects_end.offs + ctx.objects_end.size
    avail = ctx.mem_size - cur_end if ctx.mem_size > cur_end else 0
    if available != NULL:
        available[0] = avail
    if gcy_add_size(size, GGML_MEM_ALIGN - 1, &size_needed):
        if needed != NULL:
            needed[0] = SIZE_MAX
        return NULL
    size_needed -= size_needed % GGML_MEM_ALIGN
    if gcy_add_size(size_needed, GGML_OBJECT_SIZE, &total):
        if needed != NULL:
            needed[0] = SIZE_MAX
        return NULL
    if needed != NULL:
        needed[0] = total
    if ctx.mem_buffer == NULL or total > avail:
        return NULL
    obj = <ggml_object *>(<char *>ctx.mem_buffer + cur_end)
    obj.offs = cur_end + GGML_OBJECT_SIZE
    obj.size = size_needed
    obj.next = NULL
    obj.type = type
    memset(obj.padding, 0, sizeof(obj.padding))
    if ctx.objects_end != NULL:
        ctx.objects_end.next = obj
    else:
        ctx.objects_begin = obj
    ctx.objects_end = obj
    ctx.n_objects += 1
    return obj


# ====================================================================== errors

class ContextMemoryError(MemoryError):
    """A context's pool cannot hold a new object. The context stays usable.

    Attributes: needed (bytes the object needs, header included), available (bytes left).
    """

    def __init__(self, needed, available, mem_size=None, used=None):
        self.needed = needed
        self.available = available
        self.mem_size = mem_size
        self.used = used
        where = "" if mem_size is None else f" (pool of {mem_size} bytes, {used} used)"
        super().__init__(f"ggml_cy context out of memory: needed {needed} bytes, "
                         f"available {available} bytes{where}")


cdef raise_no_space(Context ctx, size_t needed, size_t available):
    if needed == SIZE_MAX:
        raise OverflowError("object size overflows size_t")
    raise ContextMemoryError(needed, available, ctx.ctx.mem_size, _used_mem(&ctx.ctx))


cdef inline size_t _used_mem(const ggml_context * c) noexcept nogil:
    if c.objects_end == NULL:
        return 0
    return c.objects_end.offs + c.objects_end.size


def tensor_overhead():
    """Fixed bytes per tensor in a context: object header + tensor struct (data excluded).
    A tensor with nbytes of data uses tensor_overhead() + nbytes rounded up to 16."""
    return GGML_OBJECT_SIZE + GGML_TENSOR_SIZE


def object_overhead():
    """Bytes of the header in front of every object in a context (ggml_object)."""
    return GGML_OBJECT_SIZE



# ====================================================================== argument parsing

cdef int64_t _as_dim(obj, what) except? -1:
    """A non-negative element count. TypeError/ValueError/OverflowError otherwise."""
    if isinstance(obj, bool):
        raise TypeError(f"{what} must be an integer, not bool")
    try:
        v = operator.index(obj)
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {type(obj).__name__}") from None
    if v < 0:
        raise ValueError(f"{what} must be >= 0, got {v}")
    if v > INT64_MAX:
        raise OverflowError(f"{what} = {v} does not fit in int64")
    return v


cdef int64_t _as_int64(obj, what) except? -1:
    """Any int64 (strides, offsets). TypeError/OverflowError otherwise."""
    if isinstance(obj, bool):
        raise TypeError(f"{what} must be an integer, not bool")
    try:
        v = operator.index(obj)
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {type(obj).__name__}") from None
    if not -INT64_MAX - 1 <= v <= INT64_MAX:
        raise OverflowError(f"{what} = {v} does not fit in int64")
    return v


cdef int _as_ne(obj, int64_t * ne) except -1:
    """Fills ne[4] (missing dims = 1) from an int or a sequence of 1..4 ints; returns n."""
    cdef ggml_tensor * src
    cdef int i
    if isinstance(obj, Tensor):
        src = (<Tensor>obj).ptr()
        for i in range(GGML_MAX_DIMS):
            ne[i] = src.ne[i]
        return GGML_MAX_DIMS
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, bool):
        obj = (obj,)
    try:
        dims = list(obj)
    except TypeError:
        raise TypeError(f"ne must be a sequence of 1 to 4 integers, not "
                        f"{type(obj).__name__}") from None
    if not 1 <= len(dims) <= GGML_MAX_DIMS:
        raise ValueError(f"ne must have 1 to {GGML_MAX_DIMS} entries, got {len(dims)}")
    for i in range(GGML_MAX_DIMS):
        ne[i] = _as_dim(dims[i], f"ne[{i}]") if i < len(dims) else 1
    return len(dims)


cdef str _fmt4(const int64_t * v):
    return f"[{v[0]}, {v[1]}, {v[2]}, {v[3]}]"


cdef bytes _name_bytes(name):
    if not isinstance(name, str):
        raise TypeError(f"a tensor name must be str, not {type(name).__name__}")
    b = name.encode("utf-8")
    if len(b) > GGML_MAX_NAME - 1:
        raise ValueError(f"tensor name is {len(b)} bytes in UTF-8; at most "
                         f"{GGML_MAX_NAME - 1} fit")
    if b"\0" in b:
        raise ValueError("tensor name must not contain NUL characters")
    return b


# ====================================================================== the context

# Context -> {id(kept context): its generation when first kept} (see keep_alive). Kept
# outside the struct so that modules compiled against _core.pxd see a stable layout.
_DEP_GENERATION = weakref.WeakKeyDictionary()

ObjectInfo = namedtuple("ObjectInfo", ["type", "offs", "size"])
ObjectInfo.__doc__ = "One entry of a context's object list: type, payload offset, padded size."


cdef _init_owned(Context self, int64_t size):
    # calloc: fresh pools read as zeros, and large ones come as lazily mapped pages
    cdef void * raw = calloc(1, <size_t>size + POOL_ALIGN)
    if raw == NULL:
        raise MemoryError(f"cannot allocate a context pool of {size} bytes")
    self._owned_raw = raw
    cdef size_t addr = <size_t>raw
    self.ctx.mem_buffer = <void *>((addr + POOL_ALIGN - 1) & ~(<size_t>POOL_ALIGN - 1))
    self.ctx.mem_size = <size_t>size
    self.ctx.mem_buffer_owned = True

cdef _init_external(Context self, buf, int64_t size):
    if not PyObject_CheckBuffer(buf):
        raise TypeError(f"mem_buffer must support the buffer protocol (numpy array, "
                        f"bytearray, mmap), not {type(buf).__name__}")
    try:
        PyObject_GetBuffer(buf, &self._view, PyBUF_WRITABLE | PyBUF_ANY_CONTIGUOUS)
    except (BufferError, ValueError) as e:   # numpy says ValueError, others BufferError
        raise ValueError(f"mem_buffer must be a writable, contiguous buffer: {e}") from e
    cdef size_t length = <size_t>self._view.len
    if size < 0:
        size = <int64_t>length
    elif <size_t>size > length:
        PyBuffer_Release(&self._view)
        raise ValueError(f"mem_size = {size} is larger than mem_buffer ({length} bytes)")
    self._has_view = True
    cdef size_t addr = <size_t>self._view.buf
    cdef size_t skip = (GGML_MEM_ALIGN - addr % GGML_MEM_ALIGN) % GGML_MEM_ALIGN
    self.ctx.mem_buffer = <void *>(addr + skip)
    self.ctx.mem_size = <size_t>size - skip if <size_t>size > skip else 0
    self.ctx.mem_buffer_owned = False


cdef size_t _SCRATCH_MAX = 64 << 20
cdef char * _scratch = NULL
cdef size_t _scratch_size = 0
cdef bint _scratch_busy = False


cdef int scratch_take(size_t n, char ** out) except -1:
    global _scratch, _scratch_size, _scratch_busy
    if n == 0:
        n = 1
    if not _scratch_busy and n <= _SCRATCH_MAX:
        if _scratch_size < n:
            free(_scratch)
            _scratch_size = 0
            _scratch = <char *> malloc(n)
            if _scratch == NULL:
                raise MemoryError(f"work buffer of {n} bytes")
            _scratch_size = n
        _scratch_busy = True
        out[0] = _scratch
        return 1
    out[0] = <char *> malloc(n)
    if out[0] == NULL:
        raise MemoryError(f"work buffer of {n} bytes")
    return 2


cdef void scratch_give(int src, char * p) noexcept:
    global _scratch_busy
    if src == 1:
        _scratch_busy = False
    else:
        free(p)


cdef class Context:
    """ggml's context: one memory pool from which tensors (and graphs, work buffers) are
    carved, each as [32-byte object header][payload padded to 16 bytes].

    Context(mem_size, mem_buffer=None, no_alloc=False)

    mem_size: pool bytes. mem_buffer: an optional writable, contiguous buffer (numpy
    array, bytearray, mmap, ...) to use as the pool; the context keeps it alive (and
    exported) until the context is freed. When its start is not 16-byte aligned the pool
    starts at the next aligned byte (and is that much smaller). mem_size may be None with
    a mem_buffer (use all of it). no_alloc: tensors get headers only (data NULL) for
    later placement in a backend buffer.
    """

    def __cinit__(self, *args, **kwargs):
        # Subclasses may take other constructor arguments: the pool is set up in __init__.
        memset(&self.ctx, 0, sizeof(ggml_context))
        self._owned_raw = NULL
        self._has_view = False
        self._deps = []
        self.generation = 0

    def __init__(self, mem_size=None, mem_buffer=None, no_alloc=False):
        if self._owned_raw != NULL or self._has_view:
            raise RuntimeError("Context.__init__ may only run once")
        cdef int64_t size = -1
        if mem_size is not None:
            size = _as_dim(mem_size, "mem_size")
            if <uint64_t>size > SIZE_MAX - POOL_ALIGN:
                raise OverflowError(f"mem_size = {size} is too large")
        elif mem_buffer is None:
            raise TypeError("Context() needs mem_size (or a mem_buffer to use whole)")
        if not isinstance(no_alloc, (bool, int, np.bool_)):
            raise TypeError(f"no_alloc must be a bool, not {type(no_alloc).__name__}")
        if mem_buffer is None:
            _init_owned(self, size)
        else:
            _init_external(self, mem_buffer, size)
        self.ctx.no_alloc = bool(no_alloc)

    def __dealloc__(self):
        if self._has_view:
            PyBuffer_Release(&self._view)
            self._has_view = False
        if self._owned_raw != NULL:
            free(self._owned_raw)
            self._owned_raw = NULL

    cdef int check_ready(self) except -1:
        if self._owned_raw == NULL and not self._has_view:
            raise RuntimeError("Context is not initialised (a subclass must call "
                               "super().__init__(mem_size, ...))")
        return 0

    cdef int keep_alive(self, Context other) except -1:
        # Flattened: a view of a view may point two contexts away (view_src). The
        # generation each context had when first kept is remembered, so wrappers of its
        # headers reached through this context go stale when it is reset (see _wrap_in).
        if other is self:
            return 0
        mine = _DEP_GENERATION.setdefault(self, {})
        theirs = _DEP_GENERATION.get(other, {})
        cdef Context c
        for obj in [other] + other._deps:
            c = <Context>obj
            if c is not self and id(c) not in mine:
                self._deps.append(c)
                mine[id(c)] = c.generation if c is other else theirs.get(id(c), c.generation)
        return 0

    # ---------------------------------------------------------------- pool state
    @property
    def mem_size(self):
        """Usable bytes of the pool."""
        return self.ctx.mem_size

    @property
    def mem_buffer_ptr(self):
        """Address of the (16-byte aligned) start of the pool."""
        return <size_t>self.ctx.mem_buffer

    @property
    def mem_buffer_owned(self):
        """True when the context allocated its pool itself."""
        return bool(self.ctx.mem_buffer_owned)

    @property
    def no_alloc(self):
        """When true, new tensors get a header only (data NULL). Settable (ggml_set_no_alloc)."""
        return bool(self.ctx.no_alloc)

    @no_alloc.setter
    def no_alloc(self, value):
        if not isinstance(value, (bool, int, np.bool_)):
            raise TypeError(f"no_alloc must be a bool, not {type(value).__name__}")
        self.ctx.no_alloc = bool(value)

    @property
    def n_objects(self):
        """Objects in the pool (tensors, graphs, work buffers)."""
        return self.ctx.n_objects

    @property
    def n_tensors(self):
        """Tensor objects in the pool."""
        cdef ggml_object * obj = self.ctx.objects_begin
        cdef int n = 0
        while obj != NULL:
            n += obj.type == GGML_OBJECT_TYPE_TENSOR
            obj = obj.next
        return n

    def used_mem(self):
        """Bytes of the pool in use: end of the last object (headers and padding included)."""
        return _used_mem(&self.ctx)

    @staticmethod
    def tensor_overhead():
        """Fixed bytes per tensor (object header + tensor struct); see the module function."""
        return GGML_OBJECT_SIZE + GGML_TENSOR_SIZE

    def reset(self):
        """Drops every object (ggml_reset). Wrappers of the dropped tensors raise
        RuntimeError from now on; arrays from their .numpy() keep valid (reusable) memory."""
        self.ctx.objects_begin = NULL
        self.ctx.objects_end = NULL
        self.ctx.n_objects = 0
        self.generation += 1
        self._deps = []
        _DEP_GENERATION.pop(self, None)

    def objects(self):
        """The object list in order, as ObjectInfo(type, offs, size) tuples."""
        out = []
        cdef ggml_object * obj = self.ctx.objects_begin
        while obj != NULL:
            out.append(ObjectInfo(obj.type, obj.offs, obj.size))
            obj = obj.next
        return out

    def _new_raw_object(self, int type, size):
        """Appends an object of `size` payload bytes (tests and tools; the graph uses
        core_new_object). Returns its ObjectInfo."""
        self.check_ready()
        if type not in (GGML_OBJECT_TYPE_TENSOR, GGML_OBJECT_TYPE_GRAPH,
                        GGML_OBJECT_TYPE_WORK_BUFFER):
            raise ValueError(f"unknown object type {type}")
        cdef int64_t n = _as_dim(size, "size")
        cdef size_t needed, available
        cdef ggml_object * obj = core_new_object(&self.ctx, type, <size_t>n, &needed,
                                                 &available)
        if obj == NULL:
            raise_no_space(self, needed, available)
        return ObjectInfo(obj.type, obj.offs, obj.size)

    def __iter__(self):
        """Iterates over the context's tensors in creation order (other objects skipped)."""
        cdef unsigned long long gen = self.generation
        cdef ggml_object * obj = self.ctx.objects_begin
        while obj != NULL:
            if self.generation != gen:
                raise RuntimeError("context was reset during iteration")
            if obj.type == GGML_OBJECT_TYPE_TENSOR:
                yield wrap_tensor(self, <ggml_tensor *>(<char *>self.ctx.mem_buffer + obj.offs))
                if self.generation != gen:
                    raise RuntimeError("context was reset during iteration")
            obj = obj.next

    def tensors(self):
        """List of the context's tensors in creation order."""
        return list(self)

    def get_tensor(self, name):
        """The first tensor named `name` (ggml_get_tensor); KeyError when there is none."""
        cdef bytes b = _name_bytes(name)
        cdef const char * cname = b
        cdef ggml_object * obj = self.ctx.objects_begin
        cdef ggml_tensor * t
        while obj != NULL:
            if obj.type == GGML_OBJECT_TYPE_TENSOR:
                t = <ggml_tensor *>(<char *>self.ctx.mem_buffer + obj.offs)
                if strcmp(t.name, cname) == 0:
                    return wrap_tensor(self, t)
            obj = obj.next
        raise KeyError(name)

    def __repr__(self):
        return (f"{type(self).__name__}(mem_size={self.ctx.mem_size}, "
                f"used={_used_mem(&self.ctx)}, n_objects={self.ctx.n_objects}, "
                f"no_alloc={bool(self.ctx.no_alloc)})")

    def __reduce__(self):  # (pkg) a Context is not pickled: see the message
        raise TypeError(
            f"cannot pickle a {type(self).__name__}: it is a memory arena whose tensors may "
            "alias each other (views), hold graphs and work buffers, and may live in a "
            "caller's buffer. Pickle its tensors instead (each Tensor pickles by value into "
            "a fresh Context), e.g. {t.name: t for t in ctx}, or their arrays (t.numpy()).")

    # ---------------------------------------------------------------- tensors
    def new_tensor(self, type, ne, name=None):
        """New tensor of `type` with element counts ne (1 to 4 entries, ne[0] innermost)."""
        cdef int64_t cne[4]
        cdef int t = _as_type(type)
        cdef int n = _as_ne(ne, cne)
        cdef bytes b = None if name is None else _name_bytes(name)
        cdef ggml_tensor * p = core_new_tensor(self, t, n, cne)
        if b is not None:
            core_set_name(p, b)
        return wrap_tensor(self, p)

    def new_tensor_1d(self, type, ne0):
        return self.new_tensor(type, (ne0,))

    def new_tensor_2d(self, type, ne0, ne1):
        return self.new_tensor(type, (ne0, ne1))

    def new_tensor_3d(self, type, ne0, ne1, ne2):
        return self.new_tensor(type, (ne0, ne1, ne2))

    def new_tensor_4d(self, type, ne0, ne1, ne2, ne3):
        return self.new_tensor(type, (ne0, ne1, ne2, ne3))

    def tensor_from(self, array, type=None, name=None, ne=None):
        """New tensor holding a copy of `array` (at most 4-D): ne is the shape reversed.
        type: None for the array's own dtype, else the tensor's type (the array is
        converted; float data given for BF16 is rounded to nearest even).

        Quantized types take raw blocks: `array` is uint8 (or bytes) holding the blocks, in
        gguf-py's byte shape (innermost dim = bytes per row, e.g. the output of
        ggml_cy.quantize or gguf's ReaderTensor.data), or any shape with `ne` given (ggml
        order, ne[0] a multiple of the block size); the byte count must match exactly.
        To quantize float data use ggml_cy.quantize."""
        self.check_ready()
        if self.ctx.no_alloc:
            raise RuntimeError("tensor_from needs data, but this context is no_alloc")
        if isinstance(array, (bytes, bytearray, memoryview)):
            array = np.frombuffer(array, dtype=np.uint8)
        arr = np.asarray(array)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"numpy dtype {arr.dtype} has no ggml type")
        if arr.ndim > GGML_MAX_DIMS:
            raise ValueError(f"a ggml tensor has at most {GGML_MAX_DIMS} dims; the array "
                             f"has shape {arr.shape}")
        if type is None:
            t = _type_of_dtype(arr.dtype)
        else:
            t = _as_type(type)
        if t.is_quantized:
            return _tensor_from_blocks(self, arr, t, ne, name)
        if ne is not None:
            raise TypeError("tensor_from: ne= is for the raw blocks of a quantized type; "
                            "a plain array's shape gives ne")
        if t == GGMLType.BF16:
            if arr.dtype != np.uint16:
                arr = float32_to_bfloat16(arr)
        arr = np.asarray(arr, dtype=_NUMPY_DTYPE[t], order="C")
        cdef int64_t cne[4]
        cdef int i
        for i in range(GGML_MAX_DIMS):
            cne[i] = arr.shape[arr.ndim - 1 - i] if i < arr.ndim else 1
        cdef bytes b = None if name is None else _name_bytes(name)
        cdef ggml_tensor * p = core_new_tensor(self, t, GGML_MAX_DIMS, cne)
        cdef cnp.ndarray carr = arr
        if arr.nbytes:
            memcpy(p.data, cnp.PyArray_DATA(carr), <size_t>arr.nbytes)
        if b is not None:
            core_set_name(p, b)
        return wrap_tensor(self, p)

    # ---------------------------------------------------------------- views (ggml style)
    def view_tensor(self, Tensor a not None):
        """A view with a's ne and nb (ggml_view_tensor)."""
        return _wrap_view(self, a, core_view_tensor(self, _arg(self, a)))

    def view_1d(self, Tensor a not None, ne0, offset=0):
        return _view_nd(self, a, 1, (ne0,), (), offset)

    def view_2d(self, Tensor a not None, ne0, ne1, nb1, offset=0):
        return _view_nd(self, a, 2, (ne0, ne1), (nb1,), offset)

    def view_3d(self, Tensor a not None, ne0, ne1, ne2, nb1, nb2, offset=0):
        return _view_nd(self, a, 3, (ne0, ne1, ne2), (nb1, nb2), offset)

    def view_4d(self, Tensor a not None, ne0, ne1, ne2, ne3, nb1, nb2, nb3, offset=0):
        return _view_nd(self, a, 4, (ne0, ne1, ne2, ne3), (nb1, nb2, nb3), offset)

    def reshape(self, Tensor a not None, ne):
        """a with element counts ne (a sequence, or a tensor whose ne to copy, as in
        ggml_reshape); a must be contiguous and the element count must not change."""
        return _reshape(self, a, ne)

    def reshape_1d(self, Tensor a not None, ne0):
        return _reshape(self, a, (ne0,))

    def reshape_2d(self, Tensor a not None, ne0, ne1):
        return _reshape(self, a, (ne0, ne1))

    def reshape_3d(self, Tensor a not None, ne0, ne1, ne2):
        return _reshape(self, a, (ne0, ne1, ne2))

    def reshape_4d(self, Tensor a not None, ne0, ne1, ne2, ne3):
        return _reshape(self, a, (ne0, ne1, ne2, ne3))

    def permute(self, Tensor a not None, *axes):
        """ggml_permute: dim i of a becomes dim axes[i] of the result. axes: 1 to 4 ints
        (or one sequence); missing trailing axes stay in place."""
        return _permute(self, a, axes)

    def transpose(self, Tensor a not None):
        """ggml_transpose: swaps dims 0 and 1 (a view)."""
        return _permute(self, a, (1, 0, 2, 3), GGML_OP_TRANSPOSE, b" (transposed)")


# ====================================================================== C factories

cdef ggml_tensor * core_new_tensor(Context ctx, int type, int n_dims,
                                   const int64_t * ne) except NULL:
    cdef int64_t full_ne[4]
    cdef int64_t nb[4]
    cdef int i
    cdef size_t data_size = 0, size, needed, available
    ctx.check_ready()
    if not ggml_cy_type_known(type):
        raise ValueError(f"unknown ggml type number {type}")
    if not 1 <= n_dims <= GGML_MAX_DIMS:
        raise ValueError(f"n_dims must be 1 to {GGML_MAX_DIMS}, got {n_dims}")
    for i in range(GGML_MAX_DIMS):
        full_ne[i] = ne[i] if i < n_dims else 1
        if full_ne[i] < 0:
            raise ValueError(f"ne must be >= 0, got {_fmt4(full_ne)}")
    if full_ne[0] % ggml_cy_blck_size(type) != 0:
        raise ValueError(f"ne[0] of a {ggml_type_name(type).decode()} tensor must be a "
                         f"multiple of its block size {ggml_cy_blck_size(type)}, got "
                         f"{_fmt4(full_ne)}")
    if core_contiguous_strides(type, full_ne, nb) != 0:
        raise OverflowError(f"a {ggml_type_name(type).decode()} tensor of ne "
                            f"{_fmt4(full_ne)} has more than 2**63 bytes")
    if not ctx.ctx.no_alloc and core_nelements_ne(full_ne) != 0:
        data_size = <size_t>(nb[3] * full_ne[3])
    if gcy_add_size(data_size, GGML_TENSOR_SIZE, &size):
        raise OverflowError("tensor size overflows size_t")
    cdef ggml_object * obj = core_new_object(&ctx.ctx, GGML_OBJECT_TYPE_TENSOR, size,
                                             &needed, &available)
    if obj == NULL:
        raise_no_space(ctx, needed, available)
    cdef char * payload = <char *>ctx.ctx.mem_buffer + obj.offs
    cdef ggml_tensor * t = <ggml_tensor *>payload
    core_init_header(t, type, full_ne, nb,
                     NULL if ctx.ctx.no_alloc else <void *>(payload + GGML_TENSOR_SIZE))
    return t


cdef ggml_tensor * core_new_view(Context ctx, ggml_tensor * a, int n_dims,
                                 const int64_t * ne, const int64_t * nb, int64_t offset,
                                 int op) except NULL:
    cdef int64_t full_ne[4]
    cdef int64_t full_nb[4]
    cdef int64_t lo, hi, plo, phi, first, last, abs_offs
    cdef int i
    cdef size_t needed, available
    ctx.check_ready()
    if a == NULL:
        raise ValueError("cannot view a NULL tensor")
    if not 1 <= n_dims <= GGML_MAX_DIMS:
        raise ValueError(f"n_dims must be 1 to {GGML_MAX_DIMS}, got {n_dims}")
    cdef int64_t qbs = ggml_cy_blck_size(a.type), qts = _type_size(a.type)
    for i in range(GGML_MAX_DIMS):
        full_ne[i] = ne[i] if i < n_dims else 1
        if i < n_dims:
            full_nb[i] = nb[i]
        elif gcy_mul_i64(full_nb[i - 1], full_ne[i - 1] // qbs if i == 1 else full_ne[i - 1],
                         &full_nb[i]):
            # trailing dims of size 1 get contiguous-style strides (as in ggml_view_2d);
            # a size-1 dim's stride is never used, so an unrepresentable one is replaced
            full_nb[i] = full_nb[i - 1]
        if full_ne[i] < 0:
            raise ValueError(f"view ne must be >= 0, got {_fmt4(full_ne)}")
    if qbs > 1:
        # a view of a quantized tensor takes whole blocks: rows of whole blocks, contiguous
        # within a row, every block starting on a block boundary of the parent's data
        if (full_ne[0] % qbs != 0 or full_nb[0] != qts or offset % qts != 0
                or full_nb[1] % qts or full_nb[2] % qts or full_nb[3] % qts):
            raise ValueError(
                f"a view of a {ggml_type_name(a.type).decode()} tensor must not cut its "
                f"blocks of {qbs} values ({qts} bytes): ne[0] a multiple of {qbs}, nb[0] = "
                f"{qts}, offset and strides multiples of {qts}; got ne={_fmt4(full_ne)} "
                f"nb={_fmt4(full_nb)} offset={offset}")
    if core_extent(a.type, full_ne, full_nb, &lo, &hi) != 0:
        raise OverflowError(f"view ne={_fmt4(full_ne)} nb={_fmt4(full_nb)} spans more "
                            f"than 2**63 bytes")
    # the element count must fit too: a zero stride keeps the extent small while
    # ne[0]*...*ne[3] overflows (found by tests/test_fuzz_views.py)
    cdef int64_t count = 1
    for i in range(GGML_MAX_DIMS):
        if gcy_mul_i64(count, full_ne[i], &count):
            if core_nelements_ne(full_ne) == 0:
                count = 0
                break
            raise OverflowError(f"view ne={_fmt4(full_ne)} has more than 2**63 elements")
    if core_extent(a.type, a.ne, a.nb, &plo, &phi) != 0:
        raise OverflowError("parent tensor extent overflows")
    if gcy_add_i64(offset, lo, &first) or gcy_add_i64(offset, hi, &last):
        raise OverflowError(f"view offset {offset} overflows")
    if (hi > lo and (first < plo or last > phi)) or (hi == lo and not plo <= offset <= phi):
        raise ValueError(
            f"view ne={_fmt4(full_ne)} nb={_fmt4(full_nb)} at offset {offset} touches bytes "
            f"[{first}, {last}) outside its parent ne={_fmt4(a.ne)} nb={_fmt4(a.nb)} "
            f"(bytes [{plo}, {phi}))")
    # resolve to the base tensor (a view's view_src is never itself a view)
    cdef ggml_tensor * base = a
    abs_offs = offset
    if a.view_src != NULL:
        base = a.view_src
        abs_offs = offset + <int64_t>a.view_offs
    if abs_offs < 0:
        raise ValueError(f"view offset {offset} lies before the start of the base tensor")
    cdef ggml_object * obj = core_new_object(&ctx.ctx, GGML_OBJECT_TYPE_TENSOR,
                                             GGML_TENSOR_SIZE, &needed, &available)
    if obj == NULL:
        raise_no_space(ctx, needed, available)
    cdef ggml_tensor * t = <ggml_tensor *>(<char *>ctx.ctx.mem_buffer + obj.offs)
    core_init_header(t, a.type, full_ne, full_nb,
                     NULL if a.data == NULL else <void *>(<char *>a.data + offset))
    t.view_src = base
    t.view_offs = <size_t>abs_offs
    # a view lives in its parent's backend buffer (ggml_backend_view_init). Data and buffer
    # come from the live parent header, never from base: base may sit in another context
    # that was reset since, and is only recorded, not read.
    t.buffer = a.buffer
    t.op = op
    t.src[0] = a
    return t


cdef ggml_tensor * core_view_tensor(Context ctx, ggml_tensor * a) except NULL:
    if a == NULL:
        raise ValueError("cannot view a NULL tensor")
    return core_new_view(ctx, a, GGML_MAX_DIMS, a.ne, a.nb, 0, GGML_OP_NONE)


cdef inline bint _in_pool(Context c, const void * p) noexcept:
    cdef size_t start = <size_t>c.ctx.mem_buffer
    return start != 0 and start <= <size_t>p < start + c.ctx.mem_size


cdef int _check_foreign_data(Context ctx, ggml_tensor * t) except -1:
    """RuntimeError when t (a tensor of ctx) is a view whose data or base header lies in
    another context that was reset since ctx first pointed into it: that memory now
    belongs to whatever the other context holds next (issue 17: such views used to keep
    reading and writing it)."""
    cdef Context d
    gens = None
    for obj in ctx._deps:
        d = <Context>obj
        if gens is None:
            gens = _DEP_GENERATION.get(ctx, {})
        if d.generation == gens.get(id(d), d.generation):
            continue
        if _in_pool(d, t.data) or (t.view_src != NULL and _in_pool(d, t.view_src)):
            raise RuntimeError("tensor is a view into another context that was reset "
                               "since the view was made; the memory it pointed at is gone")
    return 0


cdef int core_check_foreign_tensors(Context ctx, ggml_tensor ** ts, int n) except -1:
    """RuntimeError when one of the n tensors (reached from ctx: a graph's nodes and
    leafs) has its header, data, base or a source in a context that ctx points into and
    that was reset since. Cheap when none of ctx's contexts was reset."""
    cdef Context d
    cdef ggml_tensor * t
    cdef int i, k
    if not ctx._deps:
        return 0
    gens = _DEP_GENERATION.get(ctx, {})
    stale = [obj for obj in ctx._deps
             if (<Context>obj).generation != gens.get(id(obj), (<Context>obj).generation)]
    for obj in stale:
        d = <Context>obj
        for i in range(n):
            t = ts[i]
            if t == NULL:
                continue
            hit = (_in_pool(d, t) or _in_pool(d, t.data)
                   or (t.view_src != NULL and _in_pool(d, t.view_src)))
            for k in range(GGML_MAX_SRC):
                if t.src[k] != NULL and (_in_pool(d, t.src[k]) or _in_pool(d, t.src[k].data)):
                    hit = True
            if hit:
                raise RuntimeError(
                    f"tensor '{t.name.decode('utf-8', 'replace')}' of this graph uses memory "
                    "of a context that was reset since the graph was built; build it again")
    return 0


cdef Tensor _wrap_in(Context ctx, ggml_tensor * p):
    """Wrapper of header p reached from a tensor of ctx (a source or view_src): owned by
    the context whose pool holds p, ctx itself or one it keeps alive. A kept context
    reset since ctx first pointed into it yields a stale wrapper (RuntimeError on use)
    rather than one over reused memory."""
    cdef Tensor w
    if _in_pool(ctx, p):
        return wrap_tensor(ctx, p)
    for d in ctx._deps:
        if _in_pool(<Context>d, p):
            w = wrap_tensor(<Context>d, p)
            w.generation = _DEP_GENERATION.get(ctx, {}).get(id(d), w.generation)
            return w
    return wrap_tensor(ctx, p)


cdef Tensor wrap_tensor(Context ctx, ggml_tensor * t):
    cdef Tensor w = Tensor.__new__(Tensor)
    w.t = t
    w.owner = ctx
    w.generation = ctx.generation
    return w


# ====================================================================== view helpers

cdef ggml_tensor * _arg(Context ctx, Tensor a) except NULL:
    """a's header, checked live; a tensor of another context keeps that context alive."""
    cdef ggml_tensor * p = a.ptr()
    ctx.keep_alive(a.owner)
    return p


cdef _set_view_name(ggml_tensor * t, const ggml_tensor * a, bytes suffix):
    # ggml names views "<parent> (view)" and so on
    cdef bytes full = <bytes>a.name + suffix
    core_set_name(t, full)


cdef Tensor _wrap_view(Context ctx, Tensor a, ggml_tensor * t):
    _set_view_name(t, a.t, b" (view)")
    return wrap_tensor(ctx, t)


cdef Tensor _view_nd(Context ctx, Tensor a, int n, tuple ne, tuple nb_upper, offset):
    cdef int64_t cne[4]
    cdef int64_t cnb[4]
    cdef int i
    cdef ggml_tensor * pa = _arg(ctx, a)
    for i in range(n):
        cne[i] = _as_dim(ne[i], f"ne{i}")
    cnb[0] = _type_size(pa.type)
    for i in range(1, n):
        cnb[i] = _as_int64(nb_upper[i - 1], f"nb{i}")
    cdef int64_t off = _as_int64(offset, "offset")
    cdef ggml_tensor * t = core_new_view(ctx, pa, n, cne, cnb, off, GGML_OP_VIEW)
    # ggml stores the view's offset in op_params (as size_t; int64 here)
    memcpy(t.op_params, &off, sizeof(int64_t))
    _set_view_name(t, pa, b" (view)")
    return wrap_tensor(ctx, t)


cdef Tensor _reshape(Context ctx, Tensor a, ne):
    cdef int64_t cne[4]
    cdef int64_t cnb[4]
    cdef ggml_tensor * pa = _arg(ctx, a)
    _as_ne(ne, cne)
    if not core_is_contiguous(pa):
        raise ValueError(f"reshape needs a contiguous tensor; got ne={_fmt4(pa.ne)} "
                         f"nb={_fmt4(pa.nb)} (copy it with cont first)")
    cdef int64_t n_new
    if (gcy_mul_i64(cne[0], cne[1], &n_new) or gcy_mul_i64(n_new, cne[2], &n_new)
            or gcy_mul_i64(n_new, cne[3], &n_new)):
        raise OverflowError(f"ne {_fmt4(cne)} has more than 2**63 elements")
    if n_new != core_nelements(pa):
        raise ValueError(f"cannot reshape ne={_fmt4(pa.ne)} ({core_nelements(pa)} elements) "
                         f"into ne={_fmt4(cne)} ({n_new} elements)")
    if core_contiguous_strides(pa.type, cne, cnb) != 0:
        raise ValueError(f"cannot reshape a {ggml_type_name(pa.type).decode()} tensor into "
                         f"ne={_fmt4(cne)}: ne[0] must be a multiple of its block size "
                         f"{ggml_cy_blck_size(pa.type)}")
    cdef ggml_tensor * t = core_new_view(ctx, pa, GGML_MAX_DIMS, cne, cnb, 0, GGML_OP_RESHAPE)
    _set_view_name(t, pa, b" (reshaped)")
    return wrap_tensor(ctx, t)


cdef Tensor _permute(Context ctx, Tensor a, axes, int op=GGML_OP_PERMUTE,
                     bytes suffix=b" (permuted)"):
    if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
        axes = axes[0]
    try:
        axes = list(axes)
    except TypeError:
        raise TypeError(f"permute axes must be integers, not {type(axes).__name__}") from None
    if not 1 <= len(axes) <= GGML_MAX_DIMS:
        raise ValueError(f"permute takes 1 to {GGML_MAX_DIMS} axes, got {len(axes)}")
    cdef int ax[4]
    cdef int i
    cdef int64_t v
    for i in range(GGML_MAX_DIMS):
        v = _as_int64(axes[i], f"axis{i}") if i < len(axes) else i
        if not 0 <= v < GGML_MAX_DIMS:
            raise ValueError(f"permute axis {v} is out of range 0..3 (axes {axes})")
        ax[i] = <int>v
    if len({ax[0], ax[1], ax[2], ax[3]}) != GGML_MAX_DIMS:
        raise ValueError(f"permute axes {[ax[0], ax[1], ax[2], ax[3]]} repeat an axis")
    cdef ggml_tensor * pa = _arg(ctx, a)
    cdef int64_t cne[4]
    cdef int64_t cnb[4]
    if ggml_cy_is_quantized(pa.type) and ax[0] != 0:
        raise ValueError(f"cannot move dim 0 of a {ggml_type_name(pa.type).decode()} tensor "
                         f"(its rows are blocks of {ggml_cy_blck_size(pa.type)} values); "
                         f"axes {[ax[0], ax[1], ax[2], ax[3]]}")
    for i in range(GGML_MAX_DIMS):
        cne[ax[i]] = pa.ne[i]
        cnb[ax[i]] = pa.nb[i]
    cdef ggml_tensor * t = core_new_view(ctx, pa, GGML_MAX_DIMS, cne, cnb, 0, op)
    if op == GGML_OP_PERMUTE:
        for i in range(GGML_MAX_DIMS):
            t.op_params[i] = ax[i]
    _set_view_name(t, pa, suffix)
    return wrap_tensor(ctx, t)


# ====================================================================== backend buffers

_buffer_hook = None


def set_buffer_hook(fn):
    """Installs fn(buffer_handle:int) -> object, consulted by Tensor.numpy() for tensors
    placed in a backend buffer (ggml_tensor.buffer != NULL). fn returns an object that
    keeps the buffer's host memory alive (it becomes part of the array's base), or None
    when the memory is not host-readable (device memory): numpy() then raises
    RuntimeError instead of handing out an array over device memory. Without a hook,
    numpy() trusts that placed data is host memory. None removes the hook."""
    global _buffer_hook
    if fn is not None and not callable(fn):
        raise TypeError("set_buffer_hook needs a callable or None")
    _buffer_hook = fn


_ufunc_hook = None


def set_ufunc_hook(fn):
    """Installs fn(ufunc, method, inputs, kwargs) -> result, called by
    Tensor.__array_ufunc__ with tensors already replaced by numpy views (the eager layer
    installs ggml_cy's functions). None: numpy computes."""
    global _ufunc_hook
    if fn is not None and not callable(fn):
        raise TypeError("set_ufunc_hook needs a callable or None")
    _ufunc_hook = fn


def _array_ufunc(ufunc, method, inputs, kwargs):
    args = tuple(x.numpy() if isinstance(x, Tensor) else x for x in inputs)
    out = kwargs.get("out")
    out_tensors = None
    if out is not None:
        outs = out if isinstance(out, tuple) else (out,)
        if any(isinstance(o, Tensor) for o in outs):
            for o in outs:
                if isinstance(o, Tensor) and ggml_cy_is_quantized((<Tensor>o).ptr().type):
                    raise TypeError(f"a {o.type} tensor cannot be a ufunc's out= (its "
                                    f"numpy() is a dequantized copy); quantize with "
                                    f"ggml_cy.quantize and write its raw() instead")
            out_tensors = outs
            kwargs = dict(kwargs)
            kwargs["out"] = tuple(o.numpy() if isinstance(o, Tensor) else o for o in outs)
    if _ufunc_hook is not None:
        result = _ufunc_hook(ufunc, method, args, kwargs)
    else:
        result = getattr(ufunc, method)(*args, **kwargs)
    if out_tensors is not None:
        if isinstance(result, tuple):
            return tuple(t if isinstance(t, Tensor) else r
                         for t, r in zip(out_tensors, result))
        return out_tensors[0] if isinstance(out_tensors[0], Tensor) else result
    return result


# ====================================================================== op names for repr

_BUILTIN_OP_NAMES = {GGML_OP_NONE: "NONE", GGML_OP_VIEW: "VIEW", GGML_OP_RESHAPE: "RESHAPE",
                     GGML_OP_PERMUTE: "PERMUTE", GGML_OP_TRANSPOSE: "TRANSPOSE"}
_op_namer = None


def set_op_namer(fn):
    """Installs fn(op:int) -> str used by Tensor.op_name and repr (the kernel layer owns
    the op name table; the core knows only the view ops). None restores the default."""
    global _op_namer
    if fn is not None and not callable(fn):
        raise TypeError("set_op_namer needs a callable or None")
    _op_namer = fn


def op_name(int op):
    """Name of an op number ("ADD", "VIEW", ...), or "OP<n>" when unknown."""
    if _op_namer is not None:
        try:
            name = _op_namer(op)
        except Exception:
            name = None
        if name and name != "?":
            return str(name)
    return _BUILTIN_OP_NAMES.get(op, f"OP{op}")


# ====================================================================== the tensor

cdef class Tensor:
    """A ggml tensor living in a Context's pool (made by the context, never directly).

    ne/nb are ggml's element counts and byte strides, ne[0] innermost; shape/strides
    are numpy's (reversed, trailing 1s of ne dropped). The wrapper keeps its context
    alive; after ctx.reset() it raises RuntimeError on use.
    """

    def __init__(self, *args, **kwargs):
        raise TypeError("Tensor objects are made by a Context: ctx.new_tensor(...), "
                        "ctx.tensor_from(array)")

    cdef ggml_tensor * ptr(self) except NULL:
        if self.t == NULL or self.owner is None:
            raise RuntimeError("tensor is not attached to a context")
        if self.owner.generation != self.generation:
            raise RuntimeError("tensor belongs to a context that was reset since it was "
                               "made; its header is gone")
        if self.owner._deps:
            _check_foreign_data(self.owner, self.t)
        return self.t

    # ---------------------------------------------------------------- identity
    def __eq__(self, other):
        if not isinstance(other, Tensor):
            return NotImplemented
        cdef Tensor o = other
        return o.t == self.t and o.owner is self.owner and o.generation == self.generation

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self):
        return hash((<size_t>self.t, self.generation, id(self.owner)))

    @property
    def context(self):
        """The Context that holds this tensor."""
        return self.owner

    # ---------------------------------------------------------------- description
    @property
    def name(self):
        return self.ptr().name.decode("utf-8", "replace")

    @name.setter
    def name(self, value):
        cdef bytes b = _name_bytes(value)
        core_set_name(self.ptr(), b)

    @property
    def type(self):
        return GGMLType(self.ptr().type)

    @property
    def dtype(self):
        """numpy storage dtype (uint16 for BF16). A quantized tensor has none (TypeError):
        numpy() gives its float32 values, raw() its uint8 blocks."""
        t = GGMLType(self.ptr().type)
        if t.is_quantized:
            raise TypeError(f"a {t} tensor has no numpy storage dtype (its data are blocks "
                            f"of {t.blck_size} values): numpy() gives float32 values, "
                            f"raw() the uint8 bytes")
        return _NUMPY_DTYPE[t]

    @property
    def ne(self):
        cdef ggml_tensor * t = self.ptr()
        return (t.ne[0], t.ne[1], t.ne[2], t.ne[3])

    @property
    def nb(self):
        cdef ggml_tensor * t = self.ptr()
        return (t.nb[0], t.nb[1], t.nb[2], t.nb[3])

    @property
    def ndim(self):
        """ggml_n_dims: 1 + index of the last ne that is not 1 (at least 1)."""
        cdef ggml_tensor * t = self.ptr()
        return _ndim(t)

    @property
    def shape(self):
        cdef ggml_tensor * t = self.ptr()
        cdef int n = _ndim(t)
        return tuple(t.ne[n - 1 - i] for i in range(n))

    @property
    def strides(self):
        cdef ggml_tensor * t = self.ptr()
        cdef int n = _ndim(t)
        return tuple(t.nb[n - 1 - i] for i in range(n))

    @property
    def nbytes(self):
        """Bytes spanned by the data (ggml_nbytes)."""
        return core_nbytes(self.ptr())

    @property
    def nelements(self):
        return core_nelements(self.ptr())

    @property
    def nrows(self):
        return core_nrows(self.ptr())

    @property
    def is_contiguous(self):
        return bool(core_is_contiguous(self.ptr()))

    @property
    def is_permuted(self):
        cdef ggml_tensor * t = self.ptr()
        return bool(t.nb[0] > t.nb[1] or t.nb[1] > t.nb[2] or t.nb[2] > t.nb[3])

    @property
    def is_transposed(self):
        cdef ggml_tensor * t = self.ptr()
        return bool(t.nb[0] > t.nb[1])

    @property
    def data_ptr(self):
        """Address of the first element (0 for a header without data)."""
        return <size_t>self.ptr().data

    @property
    def has_data(self):
        return self.ptr().data != NULL

    @property
    def op(self):
        """ggml_op number of the op producing this tensor (0 = NONE)."""
        return self.ptr().op

    @property
    def op_name(self):
        return op_name(self.ptr().op)

    @property
    def op_params(self):
        """The 16 int32 op parameter slots."""
        cdef ggml_tensor * t = self.ptr()
        return tuple(t.op_params[i] for i in range(GGML_MAX_OP_PARAMS // 4))

    @property
    def flags(self):
        return self.ptr().flags

    @property
    def src(self):
        """Op sources (None for holes), trailing empty slots dropped."""
        cdef ggml_tensor * t = self.ptr()
        cdef int n = GGML_MAX_SRC
        while n > 0 and t.src[n - 1] == NULL:
            n -= 1
        return tuple(None if t.src[i] == NULL else _wrap_in(self.owner, t.src[i])
                     for i in range(n))

    @property
    def view_src(self):
        """The base tensor this view looks into (never a view), or None."""
        cdef ggml_tensor * t = self.ptr()
        if t.view_src == NULL:
            return None
        return _wrap_in(self.owner, t.view_src)

    @property
    def view_offs(self):
        """Byte offset of this view inside view_src's data."""
        return self.ptr().view_offs

    def __repr__(self):
        if self.t == NULL or self.owner is None:
            return "<Tensor (detached)>"
        if self.owner.generation != self.generation:
            return "<Tensor (stale: its context was reset)>"
        cdef ggml_tensor * t = self.t
        extra = ""
        if t.view_src != NULL:
            extra = f", view_of={t.view_src.name.decode('utf-8', 'replace')!r}+{t.view_offs}"
        if t.data == NULL:
            extra += ", no data"
        return (f"Tensor(name={self.name!r}, type={ggml_type_name(t.type).decode()}, "
                f"ne={_fmt4(t.ne)}, nb={_fmt4(t.nb)}, op={op_name(t.op)}{extra})")

    # ---------------------------------------------------------------- numpy
    def numpy(self, ndim=None):
        """A zero-copy numpy view of the data (shape = ne reversed). The array keeps the
        tensor and its context alive. ndim: number of dims to show (default self.ndim;
        larger values add leading 1s, 0 gives a 0-d array for one element)."""
        cdef ggml_tensor * t = self.ptr()
        if ggml_cy_is_quantized(t.type):
            return _dequantized(self, ndim)
        base = _data_base(self, t)
        cdef int n = _ndim(t)
        cdef int want = n
        if ndim is not None:
            want = _as_dim(ndim, "ndim")
            if want > GGML_MAX_DIMS:
                raise ValueError(f"ndim must be 0 to {GGML_MAX_DIMS}, got {want}")
            if want < n and not (want == 0 and n == 1 and t.ne[0] == 1):
                raise ValueError(f"ndim={want} is too small for ne={_fmt4(t.ne)}")
        cdef cnp.npy_intp dims[4]
        cdef cnp.npy_intp strides[4]
        cdef int i
        for i in range(want):
            dims[i] = t.ne[want - 1 - i]
            strides[i] = t.nb[want - 1 - i]
        cdef cnp.ndarray arr = cnp.PyArray_New(np.ndarray, want, dims, _npy_typenum(t.type),
                                               strides, t.data, 0, cnp.NPY_ARRAY_WRITEABLE,
                                               None)
        cnp.PyArray_UpdateFlags(arr, cnp.NPY_ARRAY_UPDATE_ALL)
        cnp.set_array_base(arr, base)
        return arr

    def raw(self):
        """The tensor's bytes as a zero-copy uint8 array (it keeps the tensor alive), in
        gguf-py's byte shape: ne reversed with the innermost dim counted in bytes
        (row_size(type, ne0)), e.g. (rows, row_bytes) for a 2-D Q4_0 tensor. For every type;
        the way to read or write the blocks of a quantized tensor (numpy() dequantizes)."""
        cdef ggml_tensor * t = self.ptr()
        base = _data_base(self, t)
        cdef int n = _ndim(t), i
        cdef cnp.npy_intp dims[4]
        cdef cnp.npy_intp strides[4]
        for i in range(n):
            dims[i] = t.ne[n - 1 - i]
            strides[i] = t.nb[n - 1 - i]
        # innermost dim: bytes of a row (dims of 0 elements: no bytes)
        dims[n - 1] = (t.ne[0] // ggml_cy_blck_size(t.type)) * _type_size(t.type)
        strides[n - 1] = 1
        if t.nb[0] != _type_size(t.type) and t.ne[0] > ggml_cy_blck_size(t.type):
            raise ValueError(f"raw() needs rows of adjacent elements; this tensor has "
                             f"nb={_fmt4(t.nb)} (copy it with cont first)")
        cdef cnp.ndarray arr = cnp.PyArray_New(np.ndarray, n, dims, cnp.NPY_UINT8, strides,
                                               t.data, 0, cnp.NPY_ARRAY_WRITEABLE, None)
        cnp.PyArray_UpdateFlags(arr, cnp.NPY_ARRAY_UPDATE_ALL)
        cnp.set_array_base(arr, base)
        return arr

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            if copy is False:
                raise ValueError("a dtype change needs a copy, but copy=False")
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    # ---------------------------------------------------------------- numpy protocols (eco)
    # The buffer protocol, DLPack and __array_ufunc__ all go through the zero-copy numpy
    # view (numpy()): same memory, shape = ne reversed, byte strides = nb reversed, and
    # the view keeps the tensor and its context alive. bf16 data shows as uint16 bits.
    def __getbuffer__(self, Py_buffer *buffer, int flags):
        """memoryview(t), np.frombuffer(t, ...): zero-copy, writable (context memory is),
        strided as the tensor is; a consumer that asks for contiguous memory of a
        non-contiguous view gets BufferError."""
        if ggml_cy_is_quantized(self.ptr().type):
            # numpy() of a quantized tensor is a dequantized copy, not this memory; raising
            # here also makes np.asarray(t) take __array__ (the float32 values)
            raise BufferError(f"a {self.type} tensor exports no buffer (its data are "
                              f"blocks): memoryview(t.raw()) gives the bytes, t.numpy() "
                              f"the values")
        arr = self.numpy()
        cdef Py_buffer *inner = <Py_buffer *> calloc(1, sizeof(Py_buffer))
        if inner == NULL:
            raise MemoryError()
        try:
            PyObject_GetBuffer(arr, inner, flags)
        except BaseException:
            free(inner)
            raise
        buffer.buf = inner.buf
        buffer.len = inner.len
        buffer.itemsize = inner.itemsize
        buffer.readonly = inner.readonly
        buffer.ndim = inner.ndim
        buffer.format = inner.format
        buffer.shape = inner.shape
        buffer.strides = inner.strides
        buffer.suboffsets = inner.suboffsets
        buffer.internal = <void *> inner
        buffer.obj = self

    def __releasebuffer__(self, Py_buffer *buffer):
        cdef Py_buffer *inner = <Py_buffer *> buffer.internal
        if inner != NULL:
            PyBuffer_Release(inner)
            free(inner)
            buffer.internal = NULL

    def __dlpack_device__(self):
        """(kDLCPU, 0): context memory is host memory."""
        self.numpy()          # raises for device memory / headers without data
        return (1, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export of the host data without a copy (torch.from_dlpack(t),
        np.from_dlpack(t)): the capsule holds the tensor and its context alive."""
        if stream is not None:
            raise BufferError("stream must be None for CPU tensors")
        if dl_device is not None and tuple(dl_device) != (1, 0):
            raise BufferError(f"a CPU tensor cannot be exported to device {dl_device}")
        if copy:
            raise BufferError("copy=True: ggml_cy exports its memory without copies; "
                              "copy the result instead")
        if ggml_cy_is_quantized(self.ptr().type):
            raise BufferError(f"a {self.type} tensor has no DLPack dtype (its data are "
                              f"blocks); export numpy() (dequantized float32) or raw()")
        arr = self.numpy()
        if max_version is None:
            return arr.__dlpack__()
        return arr.__dlpack__(max_version=max_version)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """np.add(t, x) and every other numpy ufunc on a tensor: the tensors are replaced
        by their zero-copy numpy views and the call goes to ggml_cy's function of the same
        name (ggml_cy.add...) when there is one, else to numpy. The result is a new numpy
        array, as for ndarray inputs; a tensor given as out= is written in place and
        returned."""
        return _array_ufunc(ufunc, method, inputs, kwargs)

    # ---------------------------------------------------------------- views
    def view_1d(self, ne0, offset=0):
        """ggml_view_1d: ne0 elements from byte `offset`."""
        return _view_nd(self.owner, self, 1, (ne0,), (), offset)

    def view_2d(self, ne0, ne1, nb1, offset=0):
        return _view_nd(self.owner, self, 2, (ne0, ne1), (nb1,), offset)

    def view_3d(self, ne0, ne1, ne2, nb1, nb2, offset=0):
        return _view_nd(self.owner, self, 3, (ne0, ne1, ne2), (nb1, nb2), offset)

    def view_4d(self, ne0, ne1, ne2, ne3, nb1, nb2, nb3, offset=0):
        return _view_nd(self.owner, self, 4, (ne0, ne1, ne2, ne3), (nb1, nb2, nb3), offset)

    def reshape(self, *ne):
        """A contiguous reshape, ne in ggml order: t.reshape(ne0, ne1) or t.reshape((ne0, ne1))."""
        if len(ne) == 1 and not isinstance(ne[0], (int, np.integer)):
            ne = ne[0]
        self.ptr()
        return _reshape(self.owner, self, ne)

    def reshape_1d(self, ne0):
        return self.reshape((ne0,))

    def reshape_2d(self, ne0, ne1):
        return self.reshape((ne0, ne1))

    def reshape_3d(self, ne0, ne1, ne2):
        return self.reshape((ne0, ne1, ne2))

    def reshape_4d(self, ne0, ne1, ne2, ne3):
        return self.reshape((ne0, ne1, ne2, ne3))

    # ---------------------------------------------------------------- pickling (pkg)
    def __reduce__(self):
        """Pickles by value: type, ne (contiguous strides), name and the data bytes; the
        copy unpickles into a fresh Context of the owner's class, made for it alone. A view
        becomes a contiguous copy; op, sources and view links are not kept. Quantized
        (block) types travel as their raw bytes."""
        cdef ggml_tensor * t = self.ptr()
        if t.data == NULL:
            raise TypeError("cannot pickle a tensor without data (a no_alloc header): "
                            "pickle its shape and type, or the tensor after allocation")
        ne = (t.ne[0], t.ne[1], t.ne[2], t.ne[3])
        cdef int64_t n
        if t.buffer == NULL and core_is_contiguous(t):
            n = core_nbytes(t)
            data = (<char *>t.data)[:n] if n > 0 else b""
        elif t.type in _NUMPY_DTYPE:
            try:
                arr = self.numpy(GGML_MAX_DIMS)
            except RuntimeError as e:
                raise TypeError(f"cannot pickle this tensor: {e}") from None
            data = np.ascontiguousarray(arr).tobytes()
        else:
            raise TypeError(f"cannot pickle a non-contiguous view of a {GGMLType(t.type).name} "
                            "tensor: make a contiguous copy first (ctx.cont)")
        return (_unpickle_tensor, (type(self.owner), int(t.type), ne,
                                   t.name.decode("utf-8", "replace"), data))

    def permute(self, *axes):
        """ggml_permute: dim i goes to position axes[i]."""
        self.ptr()
        return _permute(self.owner, self, axes)

    def transpose(self):
        """ggml_transpose: swap dims 0 and 1."""
        self.ptr()
        return _permute(self.owner, self, (1, 0, 2, 3), GGML_OP_TRANSPOSE, b" (transposed)")


cdef object _data_base(Tensor self, ggml_tensor * t):
    """What an array over t's data must keep alive (the tensor, the context holding the
    memory, the backend buffer); RuntimeError when there is no host data."""
    if t.data == NULL:
        raise RuntimeError("tensor has no data (a no_alloc header not placed in a buffer)")
    base = self
    if not _in_pool(self.owner, t.data):
        # a view into another context's pool: the array must hold that context
        # itself, since this context forgets it on reset()
        for d in self.owner._deps:
            if _in_pool(<Context>d, t.data):
                base = (self, d)
                break
    if t.buffer != NULL and _buffer_hook is not None:
        keeper = _buffer_hook(<size_t>t.buffer)
        if keeper is None:
            raise RuntimeError("tensor data lives in device memory; copy it out with "
                               "ggml_cy.backend.tensor_get")
        base = (base, keeper)   # the array keeps the tensor and the buffer alive
    return base


# ====================================================================== quantized data

_dequant_hook = None


def set_dequantize_hook(fn):
    """Installs fn(raw, type, shape) -> float32 ndarray of `shape`, the dequantizer that
    Tensor.numpy() of a quantized tensor calls (raw: the tensor's raw() array). The CPU
    layer (ggml_cy.cpu._dequant) installs it when imported; None removes it."""
    global _dequant_hook
    if fn is not None and not callable(fn):
        raise TypeError("set_dequantize_hook needs a callable or None")
    _dequant_hook = fn


cdef object _dequantized(Tensor self, ndim):
    cdef ggml_tensor * t = self.ptr()
    if _dequant_hook is None:
        raise TypeError(f"numpy() of a {ggml_type_name(t.type).decode()} tensor dequantizes, "
                        f"but no dequantizer is loaded (import ggml_cy); raw() gives the "
                        f"bytes")
    cdef int n = _ndim(t), want = n, i
    if ndim is not None:
        want = _as_dim(ndim, "ndim")
        if want > GGML_MAX_DIMS:
            raise ValueError(f"ndim must be 0 to {GGML_MAX_DIMS}, got {want}")
        if want < n:
            raise ValueError(f"ndim={want} is too small for ne={_fmt4(t.ne)}")
    shape = tuple(t.ne[want - 1 - i] for i in range(want))
    out = _dequant_hook(self.raw(), GGMLType(t.type), shape)
    return out


cdef Tensor _tensor_from_blocks(Context self, arr, t, ne, name):
    if arr.dtype != np.uint8:
        if arr.dtype.kind == "f":
            raise TypeError(f"tensor_from with type {t} takes raw blocks (uint8); to "
                            f"quantize float data use ggml_cy.quantize(array, {t.name!r})")
        raise TypeError(f"tensor_from with type {t} takes raw blocks as uint8, not "
                        f"{arr.dtype}")
    cdef int64_t cne[4]
    cdef int i
    cdef int64_t bs = ggml_cy_blck_size(t), ts = ggml_cy_block_bytes(t)
    if ne is not None:
        _as_ne(ne, cne)
        for i in range(len(ne), GGML_MAX_DIMS):
            cne[i] = 1
    else:
        if arr.ndim == 0:
            raise ValueError("tensor_from: raw blocks need at least one dim (bytes per row)")
        for i in range(GGML_MAX_DIMS):
            cne[i] = arr.shape[arr.ndim - 1 - i] if i < arr.ndim else 1
        if cne[0] % ts:
            raise ValueError(f"tensor_from: {cne[0]} bytes per row is not a whole number of "
                             f"{t} blocks ({ts} bytes each)")
        cne[0] = cne[0] // ts * bs
    if cne[0] % bs:
        raise ValueError(f"tensor_from: ne[0]={cne[0]} is not a multiple of the {t} block "
                         f"size {bs}")
    cdef int64_t cnb[4]
    cdef int64_t want = 0
    for i in range(GGML_MAX_DIMS):
        if cne[i] < 0:
            raise ValueError(f"ne must be >= 0, got {_fmt4(cne)}")
    if core_contiguous_strides(t, cne, cnb) != 0:
        raise OverflowError(f"a {t} tensor of ne={_fmt4(cne)} has more than 2**63 bytes")
    if core_nelements_ne(cne) != 0:
        want = cnb[3] * cne[3]
    if arr.nbytes != want:
        raise ValueError(f"tensor_from: {arr.nbytes} bytes given, but a {t} tensor of "
                         f"ne={_fmt4(cne)} holds {want} bytes")
    cdef bytes b = None if name is None else _name_bytes(name)
    cdef ggml_tensor * p = core_new_tensor(self, t, GGML_MAX_DIMS, cne)
    carr = np.ascontiguousarray(arr)
    cdef cnp.ndarray c2 = carr
    if want:
        memcpy(p.data, cnp.PyArray_DATA(c2), <size_t>want)
    if b is not None:
        core_set_name(p, b)
    return wrap_tensor(self, p)


cdef inline int _ndim(const ggml_tensor * t) noexcept nogil:
    cdef int i
    for i in range(GGML_MAX_DIMS - 1, 0, -1):
        if t.ne[i] != 1:
            return i + 1
    return 1


# ====================================================================== aligned arrays

cdef extern from "numpy/arrayobject.h":
    # (numpy's Cython declarations leave it out: it steals a reference to descr)
    object PyArray_NewFromDescr(void * subtype, void * descr, int nd, cnp.npy_intp * dims,
                                cnp.npy_intp * strides, void * data, int flags, object obj)


cdef object core_aligned_empty(int nd, const cnp.npy_intp * dims, cnp.dtype dt,
                               size_t align):
    cdef int64_t nbytes = dt.itemsize
    cdef int i
    for i in range(nd):
        if dims[i] < 0:
            raise ValueError(f"aligned_empty: negative dimension {dims[i]}")
        if gcy_mul_i64(nbytes, dims[i], &nbytes) or nbytes > INT64_MAX - 4096:
            raise ValueError("aligned_empty: array is too big")
    cdef cnp.npy_intp n = <cnp.npy_intp> (nbytes + align)
    cdef cnp.ndarray buf = cnp.PyArray_SimpleNew(1, &n, cnp.NPY_UINT8)
    cdef size_t addr = <size_t> cnp.PyArray_DATA(buf)
    cdef size_t off = (-addr) & (align - 1)
    Py_INCREF(dt)                                    # PyArray_NewFromDescr steals it
    arr = PyArray_NewFromDescr(<void *> cnp.ndarray, <void *> dt, nd,
                               <cnp.npy_intp *> dims, NULL, <char *> addr + off,
                               cnp.NPY_ARRAY_CARRAY, None)
    cnp.set_array_base(<cnp.ndarray> arr, buf)
    return arr


def aligned_empty(shape, dtype, Py_ssize_t align=64):
    """np.empty(shape, dtype) whose data starts on a multiple of ``align`` bytes (a power of
    two from 1 to 4096; numpy itself aligns to 16), C-contiguous. For results the fused
    executor streams out in whole cache lines. Here rather than in Python because the
    per-call cost matters to small evaluate() calls (core_aligned_empty: a C array of the
    bytes and a view of it, no slicing or reshaping in Python)."""
    if align < 1 or align > 4096 or (align & (align - 1)) != 0:
        raise ValueError(f"aligned_empty: align must be a power of two from 1 to 4096, got {align}")
    dt = np.dtype(dtype)
    if type(shape) is tuple:
        dims = shape
    else:
        try:
            dims = (operator.index(shape),)     # an int (numpy's too): one dim
        except TypeError:
            dims = tuple(shape)
    if len(dims) > cnp.NPY_MAXDIMS:
        raise ValueError(f"aligned_empty: {len(dims)} dimensions; numpy allows {cnp.NPY_MAXDIMS}")
    cdef cnp.npy_intp cdims[64]
    cdef int nd = len(dims)
    for i, d in enumerate(dims):
        d = operator.index(d)
        if d < 0:
            raise ValueError(f"aligned_empty: negative dimension in {dims}")
        if d > INT64_MAX:
            raise ValueError("aligned_empty: array is too big")
        cdims[i] = d
    return core_aligned_empty(nd, cdims, dt, <size_t> align)


# ====================================================================== bfloat16

def float32_to_bfloat16(arr):
    """bfloat16 bit patterns (uint16 array, same shape) of `arr` converted to float32,
    rounded to nearest even; NaN stays NaN (made quiet), infinities and subnormals are
    kept. Non-float32 input is converted to float32 first."""
    a = np.asarray(arr)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"float32_to_bfloat16 needs real numbers, not dtype {a.dtype}")
    a32 = np.asarray(a, dtype=np.float32, order="C")   # (ascontiguousarray makes 0-d 1-d)
    out = np.empty(a32.shape, dtype=np.uint16)
    cdef const uint32_t[::1] src = a32.reshape(-1).view(np.uint32)
    cdef uint16_t[::1] dst = out.reshape(-1)
    cdef Py_ssize_t i, n = src.shape[0]
    cdef uint32_t u
    with nogil:
        for i in range(n):
            u = src[i]
            if (u & 0x7fffffff) > 0x7f800000:
                dst[i] = <uint16_t>((u >> 16) | 0x40)   # NaN: keep sign/payload, set quiet bit
            else:
                dst[i] = <uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16)
    return out


def bfloat16_to_float32(arr):
    """float32 values of bfloat16 bit patterns (uint16, or integers within 0..65535)."""
    a = np.asarray(arr)
    if a.dtype != np.uint16:
        if a.dtype.kind not in "iu":
            raise TypeError(f"bfloat16_to_float32 needs uint16 bit patterns, not dtype {a.dtype}")
        if a.size and (a.min() < 0 or a.max() > 0xFFFF):
            raise ValueError("bfloat16 bit patterns must lie in 0..65535")
    return (a.astype(np.uint32) << 16).view(np.float32)


# ----------------------------------------------------------------------------- pickling (pkg)
def _unpickle_tensor(ctx_class, int type_, ne, name, data):
    """Tensor.__reduce__'s inverse: a fresh Context holding one tensor with the bytes."""
    if not (isinstance(ctx_class, type) and issubclass(ctx_class, Context)):
        raise TypeError(f"not a Context class: {ctx_class!r}")
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError("tensor data must be bytes")
    size = GGML_OBJECT_SIZE + GGML_TENSOR_SIZE + len(data) + 2 * POOL_ALIGN
    ctx = ctx_class(size)
    cdef Tensor out = ctx.new_tensor(type_, ne, name=name)
    cdef ggml_tensor * t = out.ptr()
    cdef int64_t n = core_nbytes(t)
    if n != len(data):
        raise ValueError(f"pickled tensor data has {len(data)} bytes, its type and shape "
                         f"need {n}")
    cdef const unsigned char[::1] view = data
    if n > 0:
        memcpy(t.data, &view[0], <size_t>n)
    return out
