# Thin wrapper of the CUDA library (cuda/ggml_cy_cuda.h): statuses become Python exceptions
# (out of memory -> MemoryError, bad arguments -> ValueError, unsupported -> TypeError,
# anything else -> CudaError with CUDA's own message), device buffers become Buffer objects,
# ops take (type, ne, nb, data) descriptors, and DLPack capsules are made and consumed here.
# The public face is ggml_cy.cuda (cuda.py); this module holds no policy.
from cpython.pycapsule cimport (PyCapsule_New, PyCapsule_IsValid, PyCapsule_GetPointer,
                               PyCapsule_SetName)
from cpython.ref cimport Py_INCREF, Py_DECREF, PyObject
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint16_t, uint64_t, uintptr_t
from libc.stdlib cimport malloc, free
from libc.string cimport memset, strcpy

from ggml_cy.core._core cimport Tensor as CoreTensor


# the one op table, from the kernel layer (ops_defs.h numbers)
from ggml_cy.core import optable as _optable
OPS = {o.name: _optable.number(o.name) for o in _optable.OPS}   # op name -> enum value


class CudaError(RuntimeError):
    """A CUDA runtime error (the message carries cudaGetErrorString's text), a freed or
    unknown device buffer, or no usable device."""


cdef int check(int status) except -1:
    """Raises the Python exception for a non-OK status."""
    if status == GGML_CY_CUDA_OK:
        return 0
    msg = ggml_cy_cuda_last_error().decode("utf-8", "replace")
    if status == GGML_CY_CUDA_ERR_OOM:
        raise MemoryError(f"CUDA device out of memory: {msg}")
    if status == GGML_CY_CUDA_ERR_INVALID:
        raise ValueError(msg)
    if status == GGML_CY_CUDA_ERR_UNSUPPORTED:
        raise TypeError(f"not supported on the CUDA device: {msg}")
    if status == GGML_CY_CUDA_ERR_NO_DEVICE:
        raise CudaError(f"no usable CUDA device: {msg}")
    raise CudaError(msg)


# ------------------------------------------------------------------ devices
def device_count():
    cdef int n = 0
    check(ggml_cy_cuda_device_count(&n))
    return n


def device_props(int device=0):
    cdef ggml_cy_cuda_device_props p
    check(ggml_cy_cuda_device_props_get(device, &p))
    return {"name": p.name.decode("utf-8", "replace"), "capability": (p.major, p.minor),
            "multiprocessors": p.multiprocessors, "total_memory": p.total_memory,
            "l2_cache_bytes": p.l2_cache_bytes, "runtime_version": p.runtime_version,
            "driver_version": p.driver_version}


def set_device(int device):
    check(ggml_cy_cuda_set_device(device))


def get_device():
    cdef int d = 0
    check(ggml_cy_cuda_get_device(&d))
    return d


def stream_handle():
    """The library stream's cudaStream_t as an integer (for DLPack and interop)."""
    cdef void * s = NULL
    check(ggml_cy_cuda_stream(&s))
    return <uintptr_t>s


def synchronize():
    with nogil:
        st = ggml_cy_cuda_synchronize()
    check(st)


def mem_info():
    cdef size_t free_b = 0, total_b = 0
    check(ggml_cy_cuda_mem_info(&free_b, &total_b))
    return free_b, total_b


def stream_wait_other(size_t other):
    """The library stream waits for work queued on `other` (0/1: legacy default stream)."""
    check(ggml_cy_cuda_stream_wait_other(<void *>other))


def other_wait_stream(size_t other):
    check(ggml_cy_cuda_other_wait_stream(<void *>other))


def cache_clear():
    """Returns the cached free blocks to the driver."""
    check(ggml_cy_cuda_cache_clear())


def cache_bytes():
    cdef size_t n = 0
    check(ggml_cy_cuda_cache_bytes(&n))
    return n


def range_valid(size_t ptr, size_t size):
    return bool(ggml_cy_cuda_range_valid(<void *>ptr, size))


# ------------------------------------------------------------------ buffers
cdef class Buffer:
    """One device allocation (cudaMalloc), or a foreign region registered for DLPack.
    `free()` releases it at once; later use of tensors in it raises instead of faulting
    (the library checks every operand against its registry of live regions)."""

    def __cinit__(self):
        self.handle = NULL
        self.dl_managed = NULL

    @staticmethod
    def alloc(size_t size):
        cdef Buffer b = Buffer.__new__(Buffer)
        cdef ggml_cy_cuda_buffer * h = NULL
        cdef int st
        with nogil:
            st = ggml_cy_cuda_buffer_alloc(size, &h)
        check(st)
        b.handle = h
        b.size = size
        b.foreign = False
        cdef void * base = NULL
        cdef size_t sz = 0
        check(ggml_cy_cuda_buffer_info(h, &base, &sz))
        b.ptr = <size_t>base
        return b

    @property
    def alive(self):
        return self.handle != NULL

    def free(self):
        """Frees the memory now (idempotent)."""
        cdef int st = GGML_CY_CUDA_OK
        if self.handle != NULL:
            st = ggml_cy_cuda_buffer_free(self.handle)
            self.handle = NULL
        if self.dl_managed != NULL:
            _dl_release(self.dl_managed)
            self.dl_managed = NULL
        check(st)

    cdef ggml_cy_cuda_buffer * live(self) except NULL:
        if self.handle == NULL:
            raise CudaError("this device buffer was freed; its tensors can no longer be used")
        return self.handle

    def memset(self, size_t offset, int value, size_t size):
        check(ggml_cy_cuda_buffer_memset(self.live(), offset, value, size))

    def set_bytes(self, size_t offset, const uint8_t[::1] data not None):
        """Host -> device copy of `data` into [offset, offset + len(data))."""
        cdef ggml_cy_cuda_buffer * h = self.live()
        cdef size_t n = data.shape[0]
        cdef int st
        if n == 0:
            return
        with nogil:
            st = ggml_cy_cuda_buffer_set(h, offset, &data[0], n)
        check(st)

    def get_bytes(self, size_t offset, uint8_t[::1] out not None):
        """Device -> host copy of [offset, offset + len(out)) into `out`."""
        cdef ggml_cy_cuda_buffer * h = self.live()
        cdef size_t n = out.shape[0]
        cdef int st
        if n == 0:
            return
        with nogil:
            st = ggml_cy_cuda_buffer_get(h, offset, &out[0], n)
        check(st)

    def __dealloc__(self):
        if self.handle != NULL:
            ggml_cy_cuda_buffer_free(self.handle)
            self.handle = NULL
        if self.dl_managed != NULL:
            _dl_release(self.dl_managed)
            self.dl_managed = NULL

    def __repr__(self):
        state = "live" if self.handle != NULL else "freed"
        kind = "foreign" if self.foreign else "owned"
        return f"<ggml_cy.cuda Buffer {self.size} bytes at 0x{self.ptr:x} {kind} {state}>"


# ------------------------------------------------------------------ events
cdef class Event:
    """A CUDA event recorded on the library stream (timing)."""
    cdef void * ev

    def __cinit__(self):
        self.ev = NULL
        check(ggml_cy_cuda_event_create(&self.ev))

    def record(self):
        check(ggml_cy_cuda_event_record(self.ev))

    def elapsed_ms(self, Event end not None):
        cdef float ms = 0
        cdef int st
        with nogil:
            st = ggml_cy_cuda_event_elapsed_ms(self.ev, end.ev, &ms)
        check(st)
        return ms

    def __dealloc__(self):
        if self.ev != NULL:
            ggml_cy_cuda_event_destroy(self.ev)


# ------------------------------------------------------------------ ops
cdef int fill(ggml_tensor * t, object desc) except -1:
    """desc = (type, ne[4], nb[4], data pointer)."""
    ty, ne, nb, ptr = desc
    memset(t, 0, sizeof(ggml_tensor))
    t.type = ty
    for i in range(4):
        t.ne[i] = ne[i]
        t.nb[i] = nb[i]
    t.data = <void *><uintptr_t>ptr
    return 0


def supports_op(int op, int dst_type, int src0_type, int src1_type=-1):
    return bool(ggml_cy_cuda_supports_op(op, dst_type, src0_type, src1_type))


def supports_node(CoreTensor t not None):
    """Whether graph_compute runs this node (op, sources, types, shapes, op_params)."""
    return bool(ggml_cy_cuda_supports_node(<const ggml_tensor *><uintptr_t>t.ptr()))


def op_forward(int op, dst, src0, src1=None, params=None):
    """dst = op(src0[, src1]) on the device; each argument a (type, ne, nb, ptr) tuple,
    params up to 16 int32 op parameters (float bit patterns for float parameters)."""
    cdef ggml_tensor d, a, b
    fill(&d, dst)
    fill(&a, src0)
    d.op = op
    d.src[0] = &a
    if src1 is not None:
        fill(&b, src1)
        d.src[1] = &b
    if params is not None:
        for i, v in enumerate(params):
            d.op_params[i] = v
    check(ggml_cy_cuda_compute_forward(&d))


# ------------------------------------------------------------------ eager fast path
# The common eager call (an elementwise op over device tensors whose types and layouts
# need no conversion) as one prepared launch. ops.py builds an EagerPlan the first time it
# sees a layout -- every check of the general path done once, the ggml_tensor descriptors
# filled in -- and caches it under plan_key(); later calls with the same layout only put
# the data pointers in and launch (the library still checks every operand's memory
# against its registry of live buffers, so a freed or out-of-bounds view raises).
cdef object _object_new = object.__new__


cdef inline size_t _data_ptr(object x) except? 0:
    """Device address of tensor x's element 0; raises when its buffer was freed."""
    cdef Buffer b = <Buffer?>x._buf
    if b.handle == NULL:
        raise CudaError("a device tensor argument's buffer was freed")
    return b.ptr + <size_t><int64_t>x._offset


cdef object _layout(object x):
    return None if x is None else (x._type, x._shape, x._strides)


def plan_key(str name, a, b, out):
    """The cache key of an eager call: the op name and each operand's (type, shape,
    strides); b and out may be None."""
    return (name, a._type, a._shape, a._strides, _layout(b), _layout(out))


MISS = object()      # fast_call: no plan for this layout yet


def fast_call(dict plans, str name, args, kwargs, tensor_cls):
    """The eager call through the plan cached for its layout: its result, MISS when no
    plan was made for the layout yet, or None when the general path must run (operands
    other than device tensors of class tensor_cls, keywords other than out=, a layout
    whose plan is False)."""
    if type(args) is not tuple or (kwargs is not None and type(kwargs) is not dict):
        return None
    cdef Py_ssize_t n = len(<tuple>args)
    out = None
    if kwargs:
        if len(<dict>kwargs) != 1:
            return None
        out = (<dict>kwargs).get("out", kwargs)
        if type(out) is not tensor_cls:
            return None
    if n == 2:
        a = args[0]
        b = args[1]
        if type(a) is not tensor_cls or type(b) is not tensor_cls:
            return None
    elif n == 1:
        a = args[0]
        b = None
        if type(a) is not tensor_cls:
            return None
    else:
        return None
    plan = plans.get((name, a._type, a._shape, a._strides, _layout(b), _layout(out)), MISS)
    if plan is MISS:
        return MISS
    if plan is False:
        return None
    return (<EagerPlan?>plan).run(a, b, out)


cdef class EagerPlan:
    """dst = op(src0[, src1]) for fixed operand types and layouts: descriptors as
    op_forward takes them, less the data pointers. out_shape/out_strides/out_type/nbytes
    describe the tensor a call without out= allocates (contiguous)."""
    cdef ggml_tensor d, s0, s1
    cdef int nsrc
    cdef readonly int out_type
    cdef readonly size_t nbytes
    cdef readonly tuple out_shape, out_strides
    cdef object tensor_cls

    def __init__(self, int op, dst, src0, src1=None, params=None, tensor_cls=None,
                 tuple out_shape=(), tuple out_strides=(), size_t nbytes=0):
        fill(&self.d, (dst[0], dst[1], dst[2], 0))
        fill(&self.s0, (src0[0], src0[1], src0[2], 0))
        self.d.op = op
        self.d.src[0] = &self.s0
        self.nsrc = 1
        if src1 is not None:
            fill(&self.s1, (src1[0], src1[1], src1[2], 0))
            self.d.src[1] = &self.s1
            self.nsrc = 2
        if params is not None:
            for i, v in enumerate(params):
                self.d.op_params[i] = v
        self.out_type = dst[0]
        self.tensor_cls = tensor_cls
        self.out_shape = out_shape
        self.out_strides = out_strides
        self.nbytes = nbytes

    def run(self, a, b, out):
        """Launches on tensors a (and b) into out; out None: into a new contiguous tensor
        (its buffer from the caching allocator), which is returned."""
        cdef Buffer buf
        cdef ggml_cy_cuda_buffer * h = NULL
        cdef void * base = NULL
        cdef size_t sz = 0
        cdef int st
        cdef size_t pa = _data_ptr(a), pb = 0, pd
        if self.nsrc == 2:
            pb = _data_ptr(b)
        if out is None:
            st = ggml_cy_cuda_buffer_alloc(self.nbytes, &h)
            check(st)
            buf = Buffer.__new__(Buffer)
            buf.handle = h
            buf.size = self.nbytes
            buf.foreign = False
            check(ggml_cy_cuda_buffer_info(h, &base, &sz))
            buf.ptr = <size_t>base
            out = _object_new(self.tensor_cls)
            out._buf = buf
            out._offset = 0
            out._type = self.out_type
            out._shape = self.out_shape
            out._strides = self.out_strides
        pd = _data_ptr(out)
        # no Python code runs from here to the launch (another thread could otherwise run
        # this plan in between: the descriptors are the plan's own)
        self.s0.data = <void *>pa
        self.s1.data = <void *>pb
        self.d.data = <void *>pd
        st = ggml_cy_cuda_compute_forward(&self.d)
        check(st)
        return out


def scaled_i8(int op, dst, src0, src1, float s0, float s1, float s_out):
    cdef ggml_tensor d, a, b
    fill(&d, dst)
    fill(&a, src0)
    fill(&b, src1)
    d.op = op
    d.src[0] = &a
    d.src[1] = &b
    check(ggml_cy_cuda_binary_scaled_i8(&d, s0, s1, s_out))


def graph_compute(addresses):
    """Runs the nodes at these ggml_tensor addresses in order; returns True when a
    captured CUDA graph was replayed."""
    cdef Py_ssize_t n = len(addresses)
    cdef ggml_tensor ** nodes = <ggml_tensor **>malloc((n if n > 0 else 1) * sizeof(ggml_tensor *))
    cdef int replayed = 0, st
    if nodes == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            nodes[i] = <ggml_tensor *><uintptr_t>addresses[i]
        st = ggml_cy_cuda_graph_compute(nodes, <int>n, &replayed)
    finally:
        free(nodes)
    check(st)
    return bool(replayed)


def tensor_address(CoreTensor t not None):
    """Address of a ggml_cy Tensor's ggml_tensor struct (graph nodes for graph_compute)."""
    return <uintptr_t>t.ptr()


def graph_cache_clear():
    check(ggml_cy_cuda_graph_cache_clear())


def graph_capture_enable(bint enable):
    check(ggml_cy_cuda_graph_capture_enable(enable))


def _set_pdl(bint enable):
    """Turn programmatic dependent launch on/off for the kernels that use it (a measurement
    switch; on by default). Returns the previous setting."""
    return bool(ggml_cy_cuda_set_pdl(enable))


def _set_mv_prefetch(bint enable):
    """Whether the Q4_0 x1 mat-vec asks L2 for its weight rows before its PDL wait (on by
    default). A measurement switch; returns the previous setting."""
    return bool(ggml_cy_cuda_set_mv_prefetch(enable))


# ------------------------------------------------------------------ DLPack
cdef extern from *:
    """
    /* DLPack (dlpack.h v0.8, the unversioned capsule every consumer accepts) */
    typedef struct { int32_t device_type; int32_t device_id; } gcy_DLDevice;
    typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } gcy_DLDataType;
    typedef struct {
        void * data; gcy_DLDevice device; int32_t ndim; gcy_DLDataType dtype;
        int64_t * shape; int64_t * strides; uint64_t byte_offset;
    } gcy_DLTensor;
    typedef struct gcy_DLManagedTensor {
        gcy_DLTensor dl_tensor; void * manager_ctx;
        void (*deleter)(struct gcy_DLManagedTensor * self);
    } gcy_DLManagedTensor;
    """
    ctypedef struct gcy_DLDevice:
        int32_t device_type
        int32_t device_id
    ctypedef struct gcy_DLDataType:
        uint8_t code
        uint8_t bits
        uint16_t lanes
    ctypedef struct gcy_DLTensor:
        void * data
        gcy_DLDevice device
        int32_t ndim
        gcy_DLDataType dtype
        int64_t * shape
        int64_t * strides
        uint64_t byte_offset
    ctypedef struct gcy_DLManagedTensor:
        gcy_DLTensor dl_tensor
        void * manager_ctx
        void (*deleter)(gcy_DLManagedTensor *)

DL_CUDA = 2
DL_CPU = 1

cdef void _dl_release(void * p) noexcept:
    cdef gcy_DLManagedTensor * m = <gcy_DLManagedTensor *>p
    if m != NULL and m.deleter != NULL:
        m.deleter(m)


cdef void _dl_deleter(gcy_DLManagedTensor * m) noexcept with gil:
    # our exported tensor: drop the reference to the owner, free the struct (shape and
    # strides live in the same allocation)
    if m.manager_ctx != NULL:
        Py_DECREF(<object>m.manager_ctx)
    free(m)


cdef void _capsule_destructor(object capsule) noexcept:
    cdef gcy_DLManagedTensor * m
    if PyCapsule_IsValid(capsule, b"dltensor"):   # never consumed
        m = <gcy_DLManagedTensor *>PyCapsule_GetPointer(capsule, b"dltensor")
        if m != NULL and m.deleter != NULL:
            m.deleter(m)


def dlpack_export(owner, size_t ptr, int device_id, int code, int bits, shape, strides):
    """A 'dltensor' capsule over device memory at ptr (shape and strides in elements,
    numpy order); `owner` is kept alive until the consumer releases the capsule."""
    cdef int nd = len(shape)
    cdef gcy_DLManagedTensor * m = <gcy_DLManagedTensor *>malloc(
        sizeof(gcy_DLManagedTensor) + 2 * (nd if nd > 0 else 1) * sizeof(int64_t))
    if m == NULL:
        raise MemoryError()
    cdef int64_t * dims = <int64_t *>(<char *>m + sizeof(gcy_DLManagedTensor))
    for i in range(nd):
        dims[i] = shape[i]
        dims[nd + i] = strides[i]
    m.dl_tensor.data = <void *>ptr
    m.dl_tensor.device.device_type = DL_CUDA
    m.dl_tensor.device.device_id = device_id
    m.dl_tensor.ndim = nd
    m.dl_tensor.dtype.code = code
    m.dl_tensor.dtype.bits = bits
    m.dl_tensor.dtype.lanes = 1
    m.dl_tensor.shape = dims
    m.dl_tensor.strides = dims + nd
    m.dl_tensor.byte_offset = 0
    Py_INCREF(owner)
    m.manager_ctx = <void *>owner
    m.deleter = _dl_deleter
    return PyCapsule_New(<void *>m, b"dltensor", _capsule_destructor)


def dlpack_import(capsule):
    """Consumes a 'dltensor' capsule: returns (buffer, device_type, device_id, code, bits,
    shape, strides (elements, or None), data pointer). For CUDA memory the buffer is a
    registered foreign region spanning the tensor, which releases the producer's tensor
    when freed or collected."""
    if not PyCapsule_IsValid(capsule, b"dltensor"):
        raise TypeError("expected an unconsumed DLPack 'dltensor' capsule")
    cdef gcy_DLManagedTensor * m = <gcy_DLManagedTensor *>PyCapsule_GetPointer(capsule, b"dltensor")
    PyCapsule_SetName(capsule, b"used_dltensor")
    cdef gcy_DLTensor * t = &m.dl_tensor
    cdef int nd = t.ndim
    shape = tuple(t.shape[i] for i in range(nd))
    strides = None if t.strides == NULL else tuple(t.strides[i] for i in range(nd))
    cdef size_t ptr = <size_t>t.data + t.byte_offset
    cdef int64_t esize = (t.dtype.bits * t.dtype.lanes + 7) // 8
    cdef int64_t lo = 0, hi = 0, span, n = 1
    cdef Buffer b = Buffer.__new__(Buffer)
    cdef ggml_cy_cuda_buffer * h = NULL
    for i in range(nd):
        n *= shape[i]
    if strides is None:
        hi = (n - 1) * esize if n > 0 else 0
    else:
        for i in range(nd):
            if shape[i] == 0:
                lo = hi = 0
                break
            span = (shape[i] - 1) * strides[i] * esize
            if span < 0:
                lo += span
            else:
                hi += span
    b.dl_managed = <void *>m
    b.foreign = True
    if t.device.device_type == DL_CUDA or t.device.device_type == 3:   # 3: CUDA host
        if t.device.device_type == DL_CUDA:
            check(ggml_cy_cuda_buffer_wrap(<void *>(ptr + lo), <size_t>(hi - lo + esize), &h))
        b.handle = h
        b.ptr = ptr + lo
        b.size = <size_t>(hi - lo + esize)
    return (b, t.device.device_type, t.device.device_id, t.dtype.code, t.dtype.bits,
            shape, strides, ptr)
