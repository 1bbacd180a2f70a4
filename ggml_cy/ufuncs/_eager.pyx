"""The eager numpy-style front end: ``ggml_cy.add(a, b)`` and friends.

Each public function takes numpy arrays (any layout) and Python/numpy scalars, resolves the
loop dtypes with numpy's own type promotion (cached per op and operand type numbers, so the
common call is a table lookup), casts mismatched inputs with the kernels' DUP op,
broadcasts every operand to the output shape as byte strides, folds the dims with the
kernels' ``merge_dims`` into at most 4 (looping over any outer rest), and runs
``compute_parallel`` on ggml_tensor descriptors with the GIL released.

Whatever this module does not compute natively (other dtypes, subclasses, ``where=``,
``order=``, bad shapes, casts numpy refuses, read-only outputs...) goes to numpy itself, so
every call gives numpy's answer or numpy's exception.
"""
cimport cython
cimport numpy as cnp
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_AsLongLongAndOverflow
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t
from libc.string cimport memcpy, memset
from libc.math cimport isinf, fabs

from ggml_cy.core._core cimport (ggml_tensor, core_init_header, ggml_type_size,
                            GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_I8, GGML_TYPE_I16,
                            GGML_TYPE_I32, GGML_TYPE_I64, GGML_TYPE_F64, GGML_TYPE_BF16,
                            GGML_TYPE_U8, GGML_TYPE_BOOL)
from ggml_cy.cpu._kernels cimport (default_num_threads, compute_parallel, merge_dims,
                                   op_supported, KERN_INTERRUPTED, raise_interrupted)
from ggml_cy.core._ops cimport *
from ggml_cy.core._dtypes cimport ggml_type_of_typenum, typenum_of_ggml_type

import numpy as np

from ggml_cy.ufuncs import fpe as _fpe
from ggml_cy.cpu import threads as _threads

cnp.import_array()

cdef extern from "<fenv.h>":
    enum:
        FE_DIVBYZERO
        FE_INVALID
        FE_OVERFLOW
        FE_UNDERFLOW

# numpy C-API calls that steal a reference to the descriptor (the .pxd of numpy leaves
# them out for that reason): callers Py_INCREF the descriptor first.
cdef extern from "numpy/arrayobject.h":
    object PyArray_NewLikeArray(cnp.ndarray prototype, cnp.NPY_ORDER order,
                                cnp.dtype descr, int subok)
    object PyArray_Empty(int nd, cnp.npy_intp * dims, cnp.dtype descr, int fortran)
    object PyArray_FromScalar(object scalar, PyObject * outcode)
    bint PyDataType_ISNOTSWAPPED(PyObject * descr)
    bint PyArray_EquivTypes_ "PyArray_EquivTypes"(PyObject * d1, PyObject * d2)


cdef inline bint has_dtype(cnp.ndarray x, object d) noexcept:
    """x's dtype is d (or an equivalent one)."""
    cdef PyObject * own = <PyObject *> cnp.PyArray_DESCR(x)
    return own == <PyObject *> d or PyArray_EquivTypes_(own, <PyObject *> d)

_fpe.configure(FE_DIVBYZERO, FE_OVERFLOW, FE_UNDERFLOW, FE_INVALID)
FE_FLAGS = {"divide": FE_DIVBYZERO, "over": FE_OVERFLOW, "under": FE_UNDERFLOW,
            "invalid": FE_INVALID}

cdef enum:
    MAXDIMS = 64          # numpy's NPY_MAXDIMS
    MAXOPS = 3            # dst + two sources
    NCODES = 26           # operand codes: numpy type numbers 0..23, then Python int/float
    CODE_PYINT = 24
    CODE_PYFLOAT = 25
    CODE_OTHER = -1       # anything the native path does not take
    MAX_OP = 128          # bound of the per-op tables (GGML_OP_COUNT is below it)

# ------------------------------------------------------------------------------------------
# threads: one process-wide default (ggml_cy.cpu.threads validates and documents it)

cdef int _MAX_THREADS = _threads.MAX_THREADS


cdef inline int thread_count(object n_threads) except -1:
    cdef int overflow = 0
    cdef long long v
    if n_threads is None:
        return default_num_threads()
    if type(n_threads) is int:      # the usual n_threads=4 without a Python-level call (it
        v = PyLong_AsLongLongAndOverflow(n_threads, &overflow)   # cost ~0.4 us a call)
        if overflow == 0 and 1 <= v <= _MAX_THREADS:
            return <int>v
    return _threads.check_num_threads(n_threads)     # the errors, numpy integers


# ------------------------------------------------------------------------------------------
# the N-D elementwise runner (no Python objects: runs with the GIL released)

cdef void fill_descriptor(ggml_tensor * t, int type, int nd, const int64_t * shape,
                          const int64_t * strides, char * data, bint is_dst) noexcept nogil:
    """One (<= 4-D) descriptor: ne = reversed shape, nb = reversed byte strides.

    A source's broadcast dims (stride 0) get ne 1 (ggml's tiling then repeats them); dims
    past nd and broadcast dims get the contiguous-looking nb, which no index ever uses.
    """
    cdef int64_t ne[4]
    cdef int64_t nb[4]
    cdef int j, d
    cdef int64_t esize = ggml_type_size(type)
    for j in range(4):
        if j < nd:
            d = nd - 1 - j
            ne[j] = shape[d]
            nb[j] = strides[d]
            if not is_dst and strides[d] == 0:
                ne[j] = 1
        else:
            ne[j] = 1
            nb[j] = 0
        if ne[j] == 1 and nb[j] == 0:
            nb[j] = esize if j == 0 else nb[j - 1] * ne[j - 1]
    core_init_header(t, type, ne, nb, data)     # zeroes the rest of the header


# Calls of at most this many elements run with the GIL held: releasing and taking it back
# costs two mutex round trips, and such a call lasts a few microseconds at most (numpy keeps
# the GIL below 500 elements). 2-core VM, float32 add with out=, one element: 0.40 -> 0.35-
# 0.37 us (numpy 0.38-0.40); 1000 elements 0.43 -> 0.38-0.40 (numpy 0.49-0.51).
cdef enum:
    GIL_KEEP_ELEMS = 8192


cdef inline bint keeps_gil(int nd, const int64_t * shape) noexcept nogil:
    cdef int64_t n = 1
    cdef int d
    for d in range(nd):
        n *= shape[d]
        if n > GIL_KEEP_ELEMS:
            return False
    return True


cdef int call_elementwise(int op, const int32_t * params, int nops, char ** data,
                          const int * types, int nd, const int64_t * shape,
                          const int64_t * strides, int n_threads) noexcept:
    """run_elementwise from a caller holding the GIL: released around the kernels of calls
    over GIL_KEEP_ELEMS elements."""
    if keeps_gil(nd, shape):
        return run_elementwise(op, params, nops, data, types, nd, shape, strides, n_threads)
    with nogil:
        return run_elementwise(op, params, nops, data, types, nd, shape, strides, n_threads)


cdef int run_elementwise(int op, const int32_t * params, int nops, char ** data,
                         const int * types, int nd, const int64_t * shape_in,
                         const int64_t * strides_in, int n_threads) noexcept nogil:
    """dst = op(src0[, src1]) over an nd-dim iteration space.

    data/types: per operand, operand 0 the destination. strides_in: nops rows of MAXDIMS
    byte strides (0 = broadcast). Returns the FE flags, or -1 when the kernels do not
    support the op/type combination (then nothing was written).
    """
    cdef int64_t shape[MAXDIMS]
    cdef int64_t strides[MAXOPS][MAXDIMS]
    cdef int64_t * rows[MAXOPS]
    cdef int64_t index[MAXDIMS]
    cdef char * base[MAXOPS]
    cdef ggml_tensor tensors[MAXOPS]
    cdef int i, d, k, outer, flags = 0, rc
    for d in range(nd):
        shape[d] = shape_in[d]
        if shape[d] == 0:
            return 0
    for i in range(nops):
        for d in range(nd):
            strides[i][d] = strides_in[i * MAXDIMS + d]
        rows[i] = strides[i]
    k = merge_dims(nd, shape, nops, rows)
    outer = k - 4 if k > 4 else 0
    for i in range(nops):
        fill_descriptor(&tensors[i], types[i], k - outer, shape + outer,
                        strides[i] + outer, data[i], i == 0)
    tensors[0].op = op
    if params != NULL:
        memcpy(tensors[0].op_params, params, 4 * sizeof(int32_t))
    for i in range(1, nops):
        tensors[0].src[i - 1] = &tensors[i]
    if outer == 0:
        return compute_parallel(&tensors[0], n_threads)
    # more than 4 dims after merging: one 4-D slab per index of the outer dims
    for d in range(outer):
        index[d] = 0
    while True:
        for i in range(nops):
            base[i] = data[i]
            for d in range(outer):
                base[i] += index[d] * strides[i][d]
            tensors[i].data = base[i]
        rc = compute_parallel(&tensors[0], n_threads)
        if rc < 0:
            return rc
        flags |= rc
        d = outer - 1
        while d >= 0:
            index[d] += 1
            if index[d] < shape[d]:
                break
            index[d] = 0
            d -= 1
        if d < 0:
            return flags


# ------------------------------------------------------------------------------------------
# operands

cdef struct Operand:
    char * data
    int type                 # ggml type of the data as it will be read
    int nd
    cnp.npy_intp * shape
    cnp.npy_intp * strides


cdef inline int array_code(cnp.ndarray x) noexcept:
    """Operand code of an exact ndarray: its type number when native, else CODE_OTHER.
    Misaligned data (a float32 view at an odd byte offset) goes to numpy: the kernels'
    vectorized loops may assume element alignment."""
    cdef int typenum = cnp.PyArray_TYPE(x)
    if typenum >= CODE_PYINT or not PyDataType_ISNOTSWAPPED(<PyObject *> cnp.PyArray_DESCR(x)) \
            or not cnp.PyArray_ISALIGNED(x):
        return CODE_OTHER
    return typenum


cdef inline void array_operand(Operand * o, cnp.ndarray x, int type) noexcept:
    o.data = cnp.PyArray_BYTES(x)
    o.type = type
    o.nd = cnp.PyArray_NDIM(x)
    o.shape = cnp.PyArray_DIMS(x)
    o.strides = cnp.PyArray_STRIDES(x)


cdef int broadcast(int nops, Operand * ops, int * nd_out, int64_t * shape,
                   int64_t * strides) noexcept:
    """numpy's broadcasting of ops[0..nops) into shape (nd_out dims) and per-operand byte
    strides (MAXDIMS per row, 0 on broadcast dims). Returns -1 when shapes do not match."""
    cdef int i, d, j, nd = 0
    cdef int64_t size, s
    for i in range(nops):
        if ops[i].nd > nd:
            nd = ops[i].nd
    for d in range(nd):
        size = 1
        for i in range(nops):
            j = d - (nd - ops[i].nd)
            if j >= 0:
                s = ops[i].shape[j]
                if s != 1:
                    if size == 1:
                        size = s
                    elif size != s:
                        return -1
        shape[d] = size
    for i in range(nops):
        for d in range(nd):
            j = d - (nd - ops[i].nd)
            if j < 0 or ops[i].shape[j] == 1:
                strides[i * MAXDIMS + d] = 0
            else:
                strides[i * MAXDIMS + d] = ops[i].strides[j]
    nd_out[0] = nd
    return 0


cdef bint same_shape(int nd, const int64_t * shape, cnp.ndarray x) noexcept:
    cdef int d
    if cnp.PyArray_NDIM(x) != nd:
        return False
    for d in range(nd):
        if cnp.PyArray_DIMS(x)[d] != shape[d]:
            return False
    return True


cdef void extent(char * data, int nd, const int64_t * shape, const int64_t * strides,
                 int64_t esize, char ** lo, char ** hi) noexcept:
    cdef int d
    cdef int64_t l = 0, h = esize
    for d in range(nd):
        if strides[d] > 0:
            h += (shape[d] - 1) * strides[d]
        else:
            l += (shape[d] - 1) * strides[d]
    lo[0] = data + l
    hi[0] = data + h


cdef bint needs_private_copy(Operand * src, const int64_t * src_strides, Operand * dst,
                             const int64_t * dst_strides, int nd, const int64_t * shape) noexcept:
    """True when src and dst memory overlap other than element-for-element (then writing
    dst while reading src would not give numpy's no-overlap answer)."""
    cdef char * slo
    cdef char * shi
    cdef char * dlo
    cdef char * dhi
    cdef int d
    extent(src.data, nd, shape, src_strides, ggml_type_size(src.type), &slo, &shi)
    extent(dst.data, nd, shape, dst_strides, ggml_type_size(dst.type), &dlo, &dhi)
    if shi <= dlo or dhi <= slo:
        return False
    if src.data == dst.data and ggml_type_size(src.type) == ggml_type_size(dst.type):
        for d in range(nd):
            if src_strides[d] != dst_strides[d] and shape[d] > 1:
                return True
        return False
    return True


cdef bint has_internal_overlap(int nd, const int64_t * shape, const int64_t * strides) noexcept:
    """A zero stride on a dim longer than 1: several elements share one address."""
    cdef int d
    for d in range(nd):
        if strides[d] == 0 and shape[d] > 1:
            return True
    return False


# ------------------------------------------------------------------------------------------
# loop resolution: numpy's promotion, cached per (op, operand codes)

cdef class Loop:
    """The dtypes numpy picks for one op and operand types, and whether ggml_cy runs it."""
    cdef readonly bint native
    cdef int t0, t1, tout           # ggml types of the loop's inputs and output
    cdef readonly object d0, d1, dout
    # integer power: numpy raises for negative exponents, so only exponents known to be
    # non-negative (Python ints >= 0, unsigned/bool arrays) run natively
    cdef bint int_power


cdef PyObject * g_loops[MAX_OP][NCODES][NCODES]
_LOOPS_ALIVE = []                  # owns the Loop objects the table points at
_DTYPE_LOOPS = {}                  # loops resolved with an explicit dtype=
_RESOLVERS = [None] * MAX_OP       # per op: the numpy ufunc whose promotion it follows
_FALLBACKS = [None] * MAX_OP       # per op: the callable that computes it with numpy
_NAMES = [None] * MAX_OP           # per op: the name in numpy's messages
_OP_BY_NAME = {}                   # name -> op


def _op_number(name):
    """The ggml op behind a public function name ("add", "divide", "relu", ...)."""
    return _OP_BY_NAME[name]
cdef bint g_float_only[MAX_OP]     # activations: float results, promoted like np.exp


cdef object code_key(int code, object value):
    """What numpy's resolve_dtypes takes for an operand: a dtype, or Python's int/float for
    weak (NEP 50) Python scalars."""
    if code == CODE_PYINT:
        return int
    if code == CODE_PYFLOAT:
        return float
    return value.dtype if isinstance(value, np.ndarray) else cnp.PyArray_DescrFromType(code)


cdef inline int type_of_code(int code) noexcept:
    if code >= CODE_PYINT or code < 0:
        return -1
    return ggml_type_of_typenum(code)


def _resolve(int op, keys, dtype):
    """(in dtypes..., out dtype) numpy uses for op on operands `keys`, or raises."""
    ufunc = _RESOLVERS[op]
    nin = len(keys)
    sig = None
    if dtype is not None:
        sig = (None,) * nin + (np.dtype(dtype),)
    if g_float_only[op]:
        if nin == 2:   # prelu: promote the pair first, then to float like np.exp
            pair = np.multiply.resolve_dtypes((keys[0], keys[1], None))
            keys = (pair[0],)
        if sig is None:
            res = np.exp.resolve_dtypes((keys[0], None))
        else:
            res = np.exp.resolve_dtypes((keys[0], None), signature=(None, sig[nin]),
                                        casting="same_kind")
        return (res[0],) * nin + (res[1],)
    if sig is None:
        return ufunc.resolve_dtypes(tuple(keys) + (None,))
    return ufunc.resolve_dtypes(tuple(keys) + (None,), signature=sig, casting="same_kind")


cdef Loop make_loop(int op, int c0, int c1, object v0, object v1, object dtype):
    cdef Loop loop = Loop()
    cdef int nin = 1 if c1 == -2 else 2
    cdef int ta, tb
    keys = (code_key(c0, v0),) if nin == 1 else (code_key(c0, v0), code_key(c1, v1))
    loop.native = False
    try:
        res = _resolve(op, keys, dtype)
    except Exception:
        return loop            # numpy will raise (or compute) on the fallback path
    loop.d0 = res[0]
    loop.d1 = res[1] if nin == 2 else None
    loop.dout = res[nin]
    loop.t0 = dtype_type(loop.d0)
    loop.t1 = dtype_type(loop.d1) if nin == 2 else -1
    loop.tout = dtype_type(loop.dout)
    if loop.t0 < 0 or loop.tout < 0 or (nin == 2 and loop.t1 < 0):
        return loop
    if not op_supported(op, loop.tout, loop.t0, loop.t1):
        return loop
    loop.int_power = op == GGML_OP_POW and not is_float_type(loop.t0)
    # inputs of another type are cast first: that cast must be native too
    ta = type_of_code(c0)
    if ta >= 0 and ta != loop.t0 and not op_supported(GGML_OP_DUP, loop.t0, ta, -1):
        return loop
    if nin == 2:
        tb = type_of_code(c1)
        if tb >= 0 and tb != loop.t1 and not op_supported(GGML_OP_DUP, loop.t1, tb, -1):
            return loop
    loop.native = True
    return loop


cdef int dtype_type(object d):
    """ggml type of a numpy dtype in native byte order, else -1."""
    if d is None or not isinstance(d, np.dtype):
        return -1
    if not PyDataType_ISNOTSWAPPED(<PyObject *> d) or d.metadata is not None:
        return -1
    return ggml_type_of_typenum(d.num)


cdef inline Loop get_loop(int op, int c0, int c1, object v0, object v1, object dtype):
    """The cached loop for op on operand codes c0, c1 (c1 = -2: unary)."""
    cdef PyObject * p
    cdef Loop loop
    cdef int j = 0 if c1 == -2 else c1
    if dtype is None:
        p = g_loops[op][c0][j]
        if p != NULL:
            return <Loop> p
        loop = make_loop(op, c0, c1, v0, v1, None)
        _LOOPS_ALIVE.append(loop)
        g_loops[op][c0][j] = <PyObject *> loop
        return loop
    key = (op, c0, c1, dtype)
    try:
        return _DTYPE_LOOPS[key]
    except (KeyError, TypeError):
        pass
    loop = make_loop(op, c0, c1, v0, v1, dtype)
    try:
        _DTYPE_LOOPS[key] = loop
    except TypeError:          # unhashable dtype argument: resolve every time
        pass
    return loop


# ------------------------------------------------------------------------------------------
# casting and scalar conversion

cdef dict _CAN_CAST = {}


cdef bint can_cast_same_kind(object src, object dst):
    key = (src, dst)
    try:
        return _CAN_CAST[key]
    except KeyError:
        ok = bool(np.can_cast(src, dst, "same_kind"))
        _CAN_CAST[key] = ok
        return ok


cdef int cast_into(cnp.ndarray dst, int tdst, cnp.ndarray src, int tsrc, int nth) except -2:
    """dst[...] = src through the DUP kernel; same shape. Returns FE flags, -1 unsupported."""
    cdef Operand ops[2]
    cdef int64_t shape[MAXDIMS]
    cdef int64_t strides[MAXOPS * MAXDIMS]
    cdef char * data[2]
    cdef int types[2]
    cdef int nd, rc
    array_operand(&ops[0], dst, tdst)
    array_operand(&ops[1], src, tsrc)
    if broadcast(2, ops, &nd, shape, strides) < 0:
        return -1
    data[0] = ops[0].data
    data[1] = ops[1].data
    types[0] = tdst
    types[1] = tsrc
    rc = call_elementwise(GGML_OP_DUP, NULL, 2, data, types, nd, shape, strides, nth)
    if rc == KERN_INTERRUPTED:
        raise_interrupted()    # Ctrl-C in a long call
    return rc


cdef cnp.ndarray cast_copy(cnp.ndarray x, int tx, object descr, int t, int * flags, int nth):
    """A new array (x's layout, `descr`) holding x converted by the DUP kernel."""
    Py_INCREF(descr)
    cdef cnp.ndarray y = PyArray_NewLikeArray(x, cnp.NPY_KEEPORDER, <cnp.dtype> descr, 0)
    cdef int rc = cast_into(y, t, x, tx, nth)
    if rc < 0:
        return x.astype(descr)  # not reached when op_supported said yes
    flags[0] |= rc
    return y


cdef int scalar_into(char * buf, object value, int t) except -2:
    """Writes a Python scalar (float, int or bool) as ggml type t into buf; 0 done, -1 let
    numpy convert it (for its OverflowError, its cast warnings, float16/bfloat16 rounding)."""
    cdef double v
    cdef long long i
    cdef int overflow = 0
    cdef float f
    cdef bint is_bool = type(value) is bool
    if type(value) is float:
        v = PyFloat_AS_DOUBLE(value)
        if t == GGML_TYPE_F64:
            (<double *> buf)[0] = v
            return 0
        if t == GGML_TYPE_F32:
            f = <float> v
            if isinf(f) and not isinf(v):
                return -1      # numpy warns "overflow encountered in cast"
            (<float *> buf)[0] = f
            return 0
        return -1
    # Python int, or Python bool (code NPY_BOOL)
    i = PyLong_AsLongLongAndOverflow(value, &overflow)
    if overflow:
        return -1
    if t == GGML_TYPE_F64 or t == GGML_TYPE_F32:
        if fabs(<double> i) > 9007199254740992.0:   # beyond 2**53: let numpy round it
            return -1
        if t == GGML_TYPE_F64:
            (<double *> buf)[0] = <double> i
        else:
            (<float *> buf)[0] = <float> <double> i
        return 0
    if t == GGML_TYPE_I64:
        (<int64_t *> buf)[0] = i
        return 0
    if t == GGML_TYPE_I32:
        if i < -2147483648LL or i > 2147483647LL:
            return -1
        (<int32_t *> buf)[0] = <int32_t> i
        return 0
    if t == GGML_TYPE_I16:
        if i < -32768 or i > 32767:
            return -1
        (<int16_t *> buf)[0] = <int16_t> i
        return 0
    if t == GGML_TYPE_I8:
        if i < -128 or i > 127:
            return -1
        (<int8_t *> buf)[0] = <int8_t> i
        return 0
    if t == GGML_TYPE_U8:
        if i < 0 or i > 255:
            return -1
        (<uint8_t *> buf)[0] = <uint8_t> i
        return 0
    if t == GGML_TYPE_BOOL and is_bool:
        (<uint8_t *> buf)[0] = 1 if i else 0
        return 0
    return -1


cdef bint nonnegative_exponent(object b, cnp.ndarray x1, int c1):
    """The exponent operand of an integer power holds no negative value, cheaply known."""
    if x1 is None:
        return type(b) is bool or (type(b) is int and b >= 0)
    return c1 == cnp.NPY_BOOL or c1 == cnp.NPY_UBYTE


cdef inline int strong_code(int code) noexcept:
    if code == CODE_PYINT:
        return cnp.NPY_LONG
    if code == CODE_PYFLOAT:
        return cnp.NPY_DOUBLE
    return code


cdef inline bint is_float_type(int t) noexcept:
    return t == GGML_TYPE_F32 or t == GGML_TYPE_F64 or t == GGML_TYPE_F16 or t == GGML_TYPE_BF16


cdef inline int operand_code(object x) noexcept:
    """Operand code of a Python value: ndarray type number, CODE_PYINT/PYFLOAT for weak
    Python scalars, NPY_BOOL for Python bool, CODE_OTHER for anything else (numpy scalars
    are turned into 0-d arrays by the caller first)."""
    cdef type tp = type(x)
    if tp is float:
        return CODE_PYFLOAT
    if tp is int:
        return CODE_PYINT
    if tp is bool:
        return cnp.NPY_BOOL
    return CODE_OTHER


# ------------------------------------------------------------------------------------------
# the generic elementwise call (unary and binary ops, activations)

cdef inline bint is_device_tensor(object x):
    """A ggml_cy CUDA tensor (its type says __ggml_cy_device__ = True)."""
    cdef type tp = type(x)
    if tp is cnp.ndarray or tp is float or tp is int or tp is bool or x is None:
        return False
    return bool(getattr(tp, "__ggml_cy_device__", False))


cdef long long g_fallbacks = 0     # calls handed to numpy (tests check the native path)


def _fallback_count():
    """How many elementwise calls numpy has computed instead of the kernels so far."""
    return g_fallbacks


cdef object g_cuda_eager_call = None   # (gpucall, issue 14 item 5) ggml_cy.cuda.eager_call,
#                                       looked up once: an import statement per call costs ~1 us


cdef object fallback(int op, tuple args, object out, object dtype, dict kwargs):
    """numpy computes it (or raises numpy's error); CUDA tensors go to ggml_cy.cuda."""
    global g_fallbacks, g_cuda_eager_call
    g_fallbacks += 1
    for x in args:
        if is_device_tensor(x):
            if g_cuda_eager_call is None:
                from ggml_cy import cuda
                g_cuda_eager_call = cuda.eager_call
            kw = dict(kwargs) if kwargs else {}
            if out is not None:
                kw["out"] = out
            if dtype is not None:
                kw["dtype"] = dtype
            return g_cuda_eager_call(_NAMES[op], args, kw)
    kw = dict(kwargs) if kwargs else {}
    if out is not None:
        kw["out"] = out
    if dtype is not None:
        kw["dtype"] = dtype
    return _FALLBACKS[op](*args, **kw)


cdef object _np_generic = np.generic


cdef inline cnp.ndarray scalar_array(object x):
    """numpy scalar -> 0-d array (numpy treats numpy scalars as strongly typed), else None."""
    if isinstance(x, _np_generic):
        return <cnp.ndarray> PyArray_FromScalar(x, NULL)
    return None


cdef object elementwise(int op, object a, object b, int nin, const int32_t * params,
                        tuple fargs, object out, object dtype, object n_threads, dict kwargs):
    """op over one (nin 1) or two inputs, numpy's semantics end to end. fargs: the
    arguments the fallback takes (None: the inputs)."""
    cdef int nth = thread_count(n_threads)
    cdef int c0, c1 = -2, i, nd, nops, rc, flags = 0
    cdef int tx
    cdef Loop loop
    cdef cnp.ndarray x0 = None, x1 = None, res, tmp = None
    cdef Operand ops[MAXOPS]
    cdef int64_t shape[MAXDIMS]
    cdef int64_t strides[MAXOPS * MAXDIMS]
    cdef char * data[MAXOPS]
    cdef int types[MAXOPS]
    cdef char sbuf0[16]
    cdef char sbuf1[16]
    cdef tuple args = fargs if fargs is not None else ((a,) if nin == 1 else (a, b))
    cdef bint own_out = True
    cdef object xi

    if kwargs:
        return fallback(op, args, out, dtype, kwargs)
    if out is not None:
        if type(out) is tuple:
            if len(<tuple> out) != 1:
                return fallback(op, args, out, dtype, kwargs)
            out = (<tuple> out)[0]
            if out is None:
                return elementwise(op, a, b, nin, params, fargs, None, dtype, n_threads,
                                   kwargs)
        if not cnp.PyArray_CheckExact(out) or array_code(out) == CODE_OTHER \
                or not cnp.PyArray_ISWRITEABLE(out):
            return fallback(op, args, out, dtype, kwargs)
        own_out = False

    # operand codes (numpy scalars become 0-d arrays: numpy treats them as strong types)
    if cnp.PyArray_CheckExact(a):
        x0 = <cnp.ndarray> a
        c0 = array_code(x0)
    else:
        c0 = operand_code(a)
        if c0 == CODE_OTHER:
            x0 = scalar_array(a)
            if x0 is not None:
                c0 = array_code(x0)
    if c0 == CODE_OTHER:
        return fallback(op, args, out, dtype, kwargs)
    if nin == 2:
        if cnp.PyArray_CheckExact(b):
            x1 = <cnp.ndarray> b
            c1 = array_code(x1)
        else:
            c1 = operand_code(b)
            if c1 == CODE_OTHER:
                x1 = scalar_array(b)
                if x1 is not None:
                    c1 = array_code(x1)
        if c1 == CODE_OTHER:
            return fallback(op, args, out, dtype, kwargs)

    if x0 is None and (nin == 1 or x1 is None):
        # only Python scalars: numpy converts them to int64/float64 arrays (not weak)
        c0 = strong_code(c0)
        if nin == 2:
            c1 = strong_code(c1)
    loop = get_loop(op, c0, c1, x0, x1, dtype)
    if not loop.native:
        return fallback(op, args, out, dtype, kwargs)
    if loop.int_power and not nonnegative_exponent(b, x1, c1):
        return fallback(op, args, out, dtype, kwargs)

    # inputs in the loop's types
    if x0 is not None:
        tx = ggml_type_of_typenum(c0)
        if tx != loop.t0 or not has_dtype(x0, loop.d0):
            x0 = cast_copy(x0, tx, loop.d0, loop.t0, &flags, nth)
        array_operand(&ops[1], x0, loop.t0)
    else:
        if scalar_into(sbuf0, a, loop.t0) == 0:
            ops[1].data = sbuf0
            ops[1].type = loop.t0
            ops[1].nd = 0
        else:
            if not is_float_type(loop.t0):   # out-of-range ints: numpy raises or copes
                return fallback(op, args, out, dtype, kwargs)
            x0 = np.asarray(a, dtype=loop.d0)
            array_operand(&ops[1], x0, loop.t0)
    nops = 2
    if nin == 2:
        if x1 is not None:
            tx = ggml_type_of_typenum(c1)
            if tx != loop.t1 or not has_dtype(x1, loop.d1):
                x1 = cast_copy(x1, tx, loop.d1, loop.t1, &flags, nth)
            array_operand(&ops[2], x1, loop.t1)
        else:
            if scalar_into(sbuf1, b, loop.t1) == 0:
                ops[2].data = sbuf1
                ops[2].type = loop.t1
                ops[2].nd = 0
            else:
                if not is_float_type(loop.t1):
                    return fallback(op, args, out, dtype, kwargs)
                x1 = np.asarray(b, dtype=loop.d1)
                array_operand(&ops[2], x1, loop.t1)
        nops = 3

    # the output, and the iteration shape
    if own_out:
        if broadcast(nops - 1, ops + 1, &nd, shape, strides + MAXDIMS) < 0:
            return fallback(op, args, out, dtype, kwargs)   # numpy's shape error
        Py_INCREF(loop.dout)
        if x0 is not None and same_shape(nd, shape, x0):
            res = PyArray_NewLikeArray(x0, cnp.NPY_KEEPORDER, <cnp.dtype> loop.dout, 0)
        elif x1 is not None and same_shape(nd, shape, x1):
            res = PyArray_NewLikeArray(x1, cnp.NPY_KEEPORDER, <cnp.dtype> loop.dout, 0)
        else:
            res = PyArray_Empty(nd, <cnp.npy_intp *> shape, <cnp.dtype> loop.dout, 0)
        array_operand(&ops[0], res, loop.tout)
        for i in range(nd):
            strides[i] = ops[0].strides[i]
    else:
        res = <cnp.ndarray> out
        array_operand(&ops[0], res, loop.tout)
        if broadcast(nops, ops, &nd, shape, strides) < 0 or not same_shape(nd, shape, res) \
                or has_internal_overlap(nd, shape, strides):
            return fallback(op, args, out, dtype, kwargs)
        tx = ggml_type_of_typenum(array_code(res))
        if tx != loop.tout or not has_dtype(res, loop.dout):
            if not can_cast_same_kind(loop.dout, res.dtype) or \
                    not op_supported(GGML_OP_DUP, tx, loop.tout, -1):
                return fallback(op, args, out, dtype, kwargs)
            # compute in the loop's type, then cast into out (numpy does the same)
            Py_INCREF(loop.dout)
            tmp = PyArray_Empty(nd, <cnp.npy_intp *> shape, <cnp.dtype> loop.dout, 0)
            ops[0].data = cnp.PyArray_BYTES(tmp)
            for i in range(nd):
                strides[i] = cnp.PyArray_STRIDES(tmp)[i]
        else:
            # inputs overlapping out other than element-for-element: copy them first
            for i in range(1, nops):
                if ops[i].nd > 0 and needs_private_copy(&ops[i], strides + i * MAXDIMS,
                                                        &ops[0], strides, nd, shape):
                    if i == 1:
                        x0 = <cnp.ndarray> cnp.PyArray_NewCopy(x0, cnp.NPY_KEEPORDER)
                        ops[1].data = cnp.PyArray_BYTES(x0)
                        xi = x0
                    else:
                        x1 = <cnp.ndarray> cnp.PyArray_NewCopy(x1, cnp.NPY_KEEPORDER)
                        ops[2].data = cnp.PyArray_BYTES(x1)
                        xi = x1
                    # the copy's strides replace the broadcast strides of this operand
                    array_operand(&ops[i], <cnp.ndarray> xi, ops[i].type)
                    if broadcast(nops, ops, &nd, shape, strides) < 0:
                        return fallback(op, args, out, dtype, kwargs)

    for i in range(nops):
        data[i] = ops[i].data
        types[i] = ops[i].type
    types[0] = loop.tout
    rc = call_elementwise(op, params, nops, data, types, nd, shape, strides, nth)
    if rc == KERN_INTERRUPTED:
        raise_interrupted()    # Ctrl-C in a long call
    if rc < 0:
        return fallback(op, args, out, dtype, kwargs)
    flags |= rc
    if tmp is not None:
        rc = cast_into(res, ggml_type_of_typenum(array_code(res)), tmp, loop.tout, nth)
        if rc < 0:
            return fallback(op, args, out, dtype, kwargs)
        flags |= rc
    if flags:
        _fpe.report(flags, _NAMES[op], 2)
    if own_out and nd == 0:
        Py_INCREF(res)       # PyArray_Return steals a reference
        return cnp.PyArray_Return(res)
    return res


# ------------------------------------------------------------------------------------------
# registration (called by ggml_cy.ufuncs when it builds the public table)

def _register(int op, str name, resolver, fallback_fn, bint float_only=False):
    """Declares op: its name in messages, the numpy ufunc whose promotion it follows, the
    numpy callable for the fallback path, and whether results are float (activations)."""
    if op < 0 or op >= MAX_OP:
        raise ValueError(f"op {op} out of range")
    _NAMES[op] = name
    _OP_BY_NAME[name] = op
    _RESOLVERS[op] = resolver
    _FALLBACKS[op] = fallback_fn
    g_float_only[op] = float_only


def _loop_info(int op, *keys):
    """(native, loop dtypes) for op on the given dtypes / Python types (debugging, tests)."""
    cdef int c0, c1 = -2
    values = []
    codes = []
    for k in keys:
        if k is int:
            codes.append(CODE_PYINT); values.append(None)
        elif k is float:
            codes.append(CODE_PYFLOAT); values.append(None)
        else:
            d = np.dtype(k)
            codes.append(d.num if d.num < CODE_PYINT else CODE_OTHER)
            values.append(np.empty(0, d))
    if CODE_OTHER in codes:
        return (False, None)
    c0 = codes[0]
    if len(codes) == 2:
        c1 = codes[1]
    loop = get_loop(op, c0, c1, values[0], values[1] if len(values) > 1 else None, None)
    return (loop.native, (loop.d0, loop.d1, loop.dout))


def _elementwise(int op, a, b=None, out=None, dtype=None, n_threads=None, params=None):
    """Generic entry (ggml_cy.ufuncs builds the named functions on the C entries below)."""
    cdef int32_t p[4]
    memset(p, 0, sizeof(p))
    if params is not None:
        for i, v in enumerate(params[:4]):
            p[i] = v
    return elementwise(op, a, b, 1 if b is None else 2, p, None, out, dtype, n_threads, None)


def float_bits(double value):
    """The int32 bit pattern of float32(value), as ggml stores float op_params."""
    cdef float f = <float> value
    cdef int32_t bits
    memcpy(&bits, &f, 4)
    return bits


cdef inline dict numpy_keywords(object where, object casting, object order, object subok,
                               object signature):
    """None when numpy's other keywords keep their defaults, else the ones to hand on."""
    if where is True and casting is _SAME_KIND and order is _ORDER_K and subok is True \
            and signature is None:
        return None
    kw = {}
    if where is not True:
        kw["where"] = where
    if casting is not _SAME_KIND and casting != "same_kind":
        kw["casting"] = casting
    if order is not _ORDER_K and order != "K":
        kw["order"] = order
    if subok is not True:
        kw["subok"] = subok
    if signature is not None:
        kw["signature"] = signature
    return kw or None


cdef object _SAME_KIND = "same_kind"
cdef object _ORDER_K = "K"


# ------------------------------------------------------------------------------------------
# the public functions (numpy's names and signatures; ggml_cy.ufuncs re-exports them)

include "_eager_ops.pxi"


def elu(x, /, out=None, *, alpha=1.0, dtype=None, n_threads=None):
    """ggml's elu: x if x > 0 else alpha * (exp(x) - 1). Float results."""
    cdef int32_t p[4]
    cdef double v = check_float(alpha, "alpha")
    if v != 1.0:
        # ggml's ELU kernel has alpha 1; other values are computed by numpy
        thread_count(n_threads)
        from ggml_cy.ufuncs import numpy_ref as _numpy_ref
        return _numpy_ref.elu(x, v, out=out, dtype=dtype)
    memset(p, 0, sizeof(p))
    p[0] = float_bits(v)
    return elementwise(GGML_OP_ELU, x, None, 1, p, (x, alpha), out, dtype, n_threads, None)


def leaky_relu(x, negative_slope=0.01, out=None, *, dtype=None, n_threads=None):
    """ggml's leaky_relu: max(x, 0) + negative_slope * min(x, 0) (a NaN input gives NaN).
    Float results; the slope is a float32 (ggml stores it so) except for float64 data."""
    cdef int32_t p[4]
    cdef double v = check_float(negative_slope, "negative_slope")
    if <double> <float> v != v and v == v and (dtype is not None or
                                              getattr(x, "dtype", None) == np.float64):
        # float64 data keeps the double slope (ggml's op_params hold a float32): numpy
        # computes ggml's formula then
        thread_count(n_threads)
        from ggml_cy.ufuncs import numpy_ref as _numpy_ref
        return _numpy_ref.leaky_relu(x, v, out=out, dtype=dtype)
    memset(p, 0, sizeof(p))
    p[0] = float_bits(v)
    return elementwise(GGML_OP_LEAKY_RELU, x, None, 1, p, (x, negative_slope), out, dtype,
                       n_threads, None)


def prelu(x, slope, out=None, *, dtype=None, n_threads=None):
    """PReLU: x if x > 0 else slope * x, with slope broadcast against x (numpy's rules).
    Float results (integer and bool input promote as for numpy.exp)."""
    return elementwise(GGML_OP_PRELU, x, slope, 2, NULL, None, out, dtype, n_threads, None)


def scale(x, s, out=None, *, dtype=None, n_threads=None):
    """ggml's scale: x * s. Float results. float32/float16 inputs are multiplied by s as a
    float32 (ggml's rule); float64 inputs by s as a double."""
    cdef int32_t p[4]
    cdef double v = check_float(s, "s")
    memset(p, 0, sizeof(p))
    p[0] = float_bits(v)
    if <double> <float> v != v and not (v != v):
        # not a float32: float64 data keeps the full double through multiply
        xa = x if isinstance(x, np.ndarray) else None
        if xa is not None and xa.dtype == np.float64 and dtype is None:
            return multiply(x, v, out, n_threads=n_threads)
    return elementwise(GGML_OP_SCALE, x, None, 1, p, (x, s), out, dtype, n_threads, None)


cdef double check_float(object v, str what) except? -1.0:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                                np.floating)):
        raise TypeError(f"{what} must be a real number, not {type(v).__name__}")
    return float(v)


cdef object _NoValue = np._NoValue


def clip(a, a_min=_NoValue, a_max=_NoValue, out=None, *, min=_NoValue, max=_NoValue,
         n_threads=None, **kwargs):
    """numpy.clip: a limited to [a_min, a_max] (either may be None). Float arrays with
    scalar bounds run natively; everything else is numpy's clip."""
    cdef int32_t p[4]
    cdef int nth = thread_count(n_threads)
    cdef double lo, hi
    cdef int t
    if min is not _NoValue or max is not _NoValue or kwargs or a_min is _NoValue \
            or a_max is _NoValue or not cnp.PyArray_CheckExact(a):
        return _clip_numpy(a, a_min, a_max, out, min, max, kwargs)
    t = ggml_type_of_typenum(array_code(a)) if array_code(a) != CODE_OTHER else -1
    if t not in (GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_F64):
        return _clip_numpy(a, a_min, a_max, out, min, max, kwargs)
    bounds = []
    for v in (a_min, a_max):
        if v is None:
            bounds.append(None)
        elif type(v) is float or type(v) is int:
            # numpy rounds a weak Python bound to the array's type first
            if t == GGML_TYPE_F16 and (v != v or fabs(v) > 65504.0):
                return _clip_numpy(a, a_min, a_max, out, min, max, kwargs)
            r = float(np.float16(v)) if t == GGML_TYPE_F16 else float(v)
            if r != r or (t == GGML_TYPE_F64 and <double> <float> r != r):
                return _clip_numpy(a, a_min, a_max, out, min, max, kwargs)
            bounds.append(r)
        else:
            return _clip_numpy(a, a_min, a_max, out, min, max, kwargs)
    if bounds[0] is None and bounds[1] is None:
        return _clip_numpy(a, a_min, a_max, out, min, max, kwargs)
    lo = -np.inf if bounds[0] is None else bounds[0]
    hi = np.inf if bounds[1] is None else bounds[1]
    if lo > hi:        # numpy then gives a_max everywhere; ggml's clamp would give a_min
        return _clip_numpy(a, a_min, a_max, out, min, max, kwargs)
    memset(p, 0, sizeof(p))
    p[0] = float_bits(lo)
    p[1] = float_bits(hi)
    return elementwise(GGML_OP_CLAMP, a, None, 1, p, (a, a_min, a_max), out, None, nth, None)


cdef object _clip_numpy(a, a_min, a_max, out, min, max, dict kwargs):
    kw = dict(kwargs) if kwargs else {}
    if min is not _NoValue:
        kw["min"] = min
    if max is not _NoValue:
        kw["max"] = max
    if out is not None:
        kw["out"] = out
    for x in (a, a_min, a_max):
        if is_device_tensor(x):
            from ggml_cy import cuda
            return cuda.eager_call("clip", (a, a_min, a_max), kw)
    return np.clip(a, a_min, a_max, **kw)


clamp = clip


# ------------------------------------------------------------------------------------------
# copies and conversions (the DUP kernel: any layout, any supported type pair)

class _BFloat16:
    """ggml_cy.bfloat16: the marker for bfloat16 data, which numpy stores as uint16."""
    __slots__ = ()

    def __repr__(self):
        return "ggml_cy.bfloat16"

    def __reduce__(self):
        return "bfloat16"


bfloat16 = _BFloat16()
_UINT16 = np.dtype(np.uint16)
cdef dict _ASTYPE_TARGETS = {}


cdef tuple astype_target(object dtype):
    """(numpy dtype of the result, ggml type or -1) for astype's dtype argument."""
    try:
        return _ASTYPE_TARGETS[dtype]
    except (KeyError, TypeError):
        pass
    if dtype is bfloat16 or (isinstance(dtype, str) and dtype.lower() in ("bfloat16", "bf16")):
        res = (_UINT16, GGML_TYPE_BF16)
    else:
        d = np.dtype(dtype)
        res = (d, dtype_type(d))
    try:
        _ASTYPE_TARGETS[dtype] = res
    except TypeError:
        pass
    return res


def astype(x, dtype, /, copy=True, *, from_bfloat16=False, n_threads=None):
    """numpy.astype: x converted to dtype, keeping x's memory layout (order 'K').

    dtype may be ``ggml_cy.bfloat16`` or "bfloat16": the result is uint16 storage holding
    bfloat16 values (round to nearest even, NaN kept quiet). ``from_bfloat16=True`` reads
    x (uint16) as bfloat16 storage instead. copy=False returns x itself when no conversion
    is needed.
    """
    cdef int nth = thread_count(n_threads)
    cdef int tx, t, rc
    cdef cnp.ndarray xa, res
    if from_bfloat16 not in (True, False):
        raise TypeError("from_bfloat16 must be True or False")
    if copy not in (True, False):
        raise ValueError(f"copy must be True or False, got {copy!r}")
    if is_device_tensor(x):
        from ggml_cy import cuda
        return cuda.eager_call("astype", (x, dtype),
                               {"copy": copy, "from_bfloat16": from_bfloat16})
    if not isinstance(x, np.ndarray):
        raise TypeError(f"astype() needs a numpy array, not {type(x).__name__}")
    d, t = astype_target(dtype)
    xa = <cnp.ndarray> x
    if from_bfloat16:
        if xa.dtype != _UINT16:
            raise TypeError("from_bfloat16=True needs uint16 bfloat16 storage, "
                            f"got {xa.dtype}")
        tx = GGML_TYPE_BF16 if PyDataType_ISNOTSWAPPED(<PyObject *> cnp.PyArray_DESCR(xa)) \
            and cnp.PyArray_ISALIGNED(xa) else -1
    else:
        tx = ggml_type_of_typenum(array_code(xa)) if array_code(xa) != CODE_OTHER else -1
        if not copy and t == tx and xa.dtype == d:
            return x
    if type(x) is not np.ndarray or tx < 0 or t < 0 \
            or not op_supported(GGML_OP_DUP, t, tx, -1):
        return _astype_numpy(x, d, t, tx, from_bfloat16, copy)
    Py_INCREF(d)
    res = PyArray_NewLikeArray(xa, cnp.NPY_KEEPORDER, <cnp.dtype> d, 0)
    if cnp.PyArray_SIZE(res) == 0:
        return res
    rc = cast_into(res, t, xa, tx, nth)
    if rc < 0:
        return _astype_numpy(x, d, t, tx, from_bfloat16, copy)
    if rc:
        _fpe.report(rc, "cast", 2)
    return res


cdef object _astype_numpy(x, d, int t, int tx, bint from_bf16, copy):
    from ggml_cy.ufuncs import numpy_ref as _numpy_ref
    if from_bf16:
        return _numpy_ref.bfloat16_to_float32(x).astype(d, copy=False) \
            if t != GGML_TYPE_BF16 else np.array(x, copy=True)
    if t == GGML_TYPE_BF16:
        return _numpy_ref.float32_to_bfloat16(np.asarray(x))
    return x.astype(d, copy=copy)


def ascontiguousarray(a, dtype=None, *, like=None, n_threads=None):
    """numpy.ascontiguousarray: a C-contiguous array (ndim >= 1) equal to a; a itself when
    it already is one of the right dtype. like= goes to numpy."""
    cdef int nth = thread_count(n_threads)
    cdef int tx, t, rc
    cdef cnp.ndarray xa, res
    cdef cnp.npy_intp one = 1
    if like is not None:
        return np.ascontiguousarray(a, dtype=dtype, like=like)
    if not cnp.PyArray_CheckExact(a) or array_code(a) == CODE_OTHER:
        if is_device_tensor(a):
            from ggml_cy import cuda
            return cuda.eager_call("ascontiguousarray", (a,), {"dtype": dtype})
        return np.ascontiguousarray(a, dtype=dtype)
    xa = <cnp.ndarray> a
    tx = ggml_type_of_typenum(array_code(xa))
    if dtype is None:
        d = xa.dtype
        t = tx
    else:
        d, t = astype_target(dtype)
        if t == GGML_TYPE_BF16:
            t = -1
    if t < 0 or tx < 0 or not op_supported(GGML_OP_DUP, t, tx, -1):
        return np.ascontiguousarray(a, dtype=dtype)
    if cnp.PyArray_IS_C_CONTIGUOUS(xa) and cnp.PyArray_NDIM(xa) >= 1 and t == tx \
            and has_dtype(xa, d):
        return a
    Py_INCREF(d)
    if cnp.PyArray_NDIM(xa) == 0:
        res = PyArray_Empty(1, &one, <cnp.dtype> d, 0)
        xa = xa.reshape(1)
    else:
        res = PyArray_Empty(cnp.PyArray_NDIM(xa), cnp.PyArray_DIMS(xa), <cnp.dtype> d, 0)
    if cnp.PyArray_SIZE(res) == 0:
        return res
    rc = cast_into(res, t, xa, tx, nth)
    if rc < 0:
        return np.ascontiguousarray(a, dtype=dtype)
    if rc:
        _fpe.report(rc, "cast", 2)
    return res


def copyto(dst, src, casting="same_kind", where=True, *, n_threads=None):
    """numpy.copyto: copies src (broadcast) into dst, refusing casts `casting` forbids."""
    cdef int nth = thread_count(n_threads)
    cdef int td, ts, rc, nd
    cdef cnp.ndarray d, s
    cdef Operand ops[2]
    cdef int64_t shape[MAXDIMS]
    cdef int64_t strides[MAXOPS * MAXDIMS]
    if where is not True or not cnp.PyArray_CheckExact(dst) or not cnp.PyArray_CheckExact(src) \
            or array_code(dst) == CODE_OTHER or array_code(src) == CODE_OTHER \
            or not cnp.PyArray_ISWRITEABLE(dst) \
            or not (casting == "same_kind" or casting == "unsafe") \
            or cnp.PyArray_NDIM(src) > cnp.PyArray_NDIM(dst):
        for x in (dst, src):
            if is_device_tensor(x):
                from ggml_cy import cuda
                return cuda.eager_call("copyto", (dst, src),
                                       {"casting": casting, "where": where})
        return np.copyto(dst, src, casting=casting, where=where)
    d = <cnp.ndarray> dst
    s = <cnp.ndarray> src
    td = ggml_type_of_typenum(array_code(d))
    ts = ggml_type_of_typenum(array_code(s))
    if td < 0 or ts < 0 or not op_supported(GGML_OP_DUP, td, ts, -1) or \
            (casting == "same_kind" and not can_cast_same_kind(s.dtype, d.dtype)):
        return np.copyto(dst, src, casting=casting, where=where)
    array_operand(&ops[0], d, td)
    array_operand(&ops[1], s, ts)
    if broadcast(2, ops, &nd, shape, strides) < 0 or not same_shape(nd, shape, d) \
            or has_internal_overlap(nd, shape, strides):
        return np.copyto(dst, src, casting=casting, where=where)
    if cnp.PyArray_SIZE(d) == 0:
        return None
    if needs_private_copy(&ops[1], strides + MAXDIMS, &ops[0], strides, nd, shape):
        s = <cnp.ndarray> cnp.PyArray_NewCopy(s, cnp.NPY_KEEPORDER)
    rc = cast_into(d, td, s, ts, nth)
    if rc < 0:
        return np.copyto(dst, src, casting=casting, where=where)
    if rc:
        _fpe.report(rc, "cast", 2)
    return None


# ------------------------------------------------------------------------------------------
# the op table: numpy ufunc whose promotion each op follows, and its numpy fallback

def _register_all():
    """Registers every eager function of the op table (ggml_cy/core/optable.py): numpy
    ufuncs follow the ufunc's promotion and fall back to it; ggml's activations (and the
    custom functions prelu, scale, elu, leaky_relu) give float results, promoted as
    numpy.exp, and fall back to ggml_cy.ufuncs.numpy_ref's formulas."""
    from ggml_cy.core import optable
    from ggml_cy.ufuncs import numpy_ref as ref
    for o in optable.OPS:
        if not o.eager:
            continue
        op = optable.number(o.name)
        if o.style == "ufunc":
            uf = getattr(np, o.numpy)
            _register(op, uf.__name__, uf, uf)
        elif o.numpy is None:
            _register(op, o.eager[0], np.exp, getattr(ref, o.eager[0]), True)
    # clip keeps the array's type (only float arrays reach the native path)
    _register(GGML_OP_CLAMP, "clip", np.positive, np.clip)


_register_all()
