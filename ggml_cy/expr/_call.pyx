# evaluate()'s per-call path (expr/evaluate.py), in C: the layout key, the cache of
# compiled expressions, re-pointing a compiled graph at this call's arrays, planning and
# computing. For 1e3-element operands the call itself is the cost: a*b + c*d - e took
# 5.4-6.5 us through the Python path (numpy: 2.0), of which the graph's work was 0.8 --
# the key (shapes and strides as tuples) 1.1, the locked cache 0.8, the aligned result
# 1.3, re-pointing and the Python-level plan/compute calls the rest -- and 8.5 us when the
# caller keeps its results (each new result address means planning again, 1.6 us).
# Here: 1.8 us, 2.0 with the results kept (numpy 2.0 / 2.2; 2-core Zen 4 VM, 2 threads).
from cpython.dict cimport PyDict_GetItem, PyDict_Next
from cpython.object cimport PyObject
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING
from cpython.ref cimport Py_TYPE, Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free
from libc.math cimport isinf

cimport numpy as cnp
import numpy as np

from ggml_cy.core._core cimport Tensor, ggml_tensor, core_aligned_empty
from ggml_cy.graph._graph cimport Graph, ggml_cgraph
from ggml_cy.cpu._compute cimport Plan, make_plan, plan_repoint
from ggml_cy.cpu._kernels cimport default_num_threads

from ggml_cy.cpu import threads as _threads
from ggml_cy.graph import _graph as _graph_mod

cnp.import_array()

# Compiled expressions, keyed by expression, operand names and the operands' layouts
# (layout_key), or by the merged layout when evaluate() converted an operand. An entry is
# taken out while in use, so concurrent calls never share one; taking and filing are
# single dict operations on str/bytes/int keys, which run under the GIL without calling
# back into Python, so no lock is needed.
CACHE = {}
CACHE_SIZE = 32

# Memory for intermediates (untouched, so free, unless a node is not fused) is one
# buffer, kept with the entry when small: allocating and freeing it per call cost more
# than computing 1e5 elements (freeing mmap'ed pages interrupts the other threads);
# large ones are made per call unless the plan never touches them (keep_untouched_scratch).
KEEP_SCRATCH_BYTES = 2 << 20

cdef enum:
    MAX_DIMS = 64         # numpy's NPY_MAXDIMS
    # operands that are numbers, in the layout key (the value is not part of it: each call
    # converts its number to the compiled dtype as the full path does, into a 0-d array)
    SCALAR_FLOAT = -10    # a Python float (weak)
    SCALAR_INT = -11      # a Python int (weak; bool is not one: the language path's)
    SCALAR_F32 = -12      # a numpy float32 (strong)
    SCALAR_F64 = -13      # a numpy float64 (strong)
    RESULT_ALIGN = 64     # results start on a cache line: the fused executor streams them
                          # out in whole lines (numpy aligns to 16 bytes)


cdef class Compiled:
    """One compiled expression: the no_alloc context, graph and leaf headers of an earlier
    call, re-pointed at each call's arrays. `tensors` are the bound inputs (named by
    `names`) then the root; `result` is (shape, dtype) of a fresh result (kept as C values:
    nd, dims, dtype)."""
    cdef public object ctx, tensors, names, keep, scratch, scratch_idx, scratch_buf
    cdef public Py_ssize_t scratch_bytes
    cdef public Graph graph
    cdef public Plan plan             # the last plan, valid while no pointer moves
    cdef public int plan_threads
    cdef public bint plan_fresh       # the plan was made for a result evaluate() allocated
    cdef public dict numbers          # name -> 0-d array of the dtype: the entry's own
                                      # storage for number operands (store_number)
    cdef ggml_tensor ** heads         # the headers of `tensors`
    cdef int n_heads
    cdef unsigned char * pinned       # the graph's pinned nodes (fixed once compiled)
    cdef char * work                  # the work buffer, kept across calls and plans
    cdef size_t work_cap
    cdef int nd                       # a fresh result's shape and dtype, as C values
    cdef cnp.npy_intp dims[MAX_DIMS]
    cdef cnp.dtype dtype

    def __init__(self, ctx, Graph graph not None, tensors, names, keep, scratch,
                 scratch_idx, result):
        if len(tensors) != len(names) + 1:
            raise ValueError("Compiled: one tensor per name, then the root")
        shape, dtype = result
        if len(shape) > MAX_DIMS:
            raise ValueError(f"evaluate: a result of {len(shape)} dimensions; at most "
                             f"{MAX_DIMS}")
        self.ctx, self.graph = ctx, graph
        self.tensors, self.names = list(tensors), tuple(names)
        self.keep = keep
        self.scratch = scratch            # [(node, byte offset)] in one scratch buffer
        self.scratch_idx = scratch_idx    # their indices among the graph's nodes
        self.scratch_bytes = sum(n.nbytes for n, _ in scratch) + 64 * len(scratch)
        self.scratch_buf = None
        self.plan = None
        self.plan_threads = 0
        self.plan_fresh = False
        self.numbers = None
        cdef int i
        free(self.heads)                  # (__init__ called again: no leak)
        free(self.pinned)
        self.heads, self.pinned, self.n_heads = NULL, NULL, 0
        cdef int count = len(self.tensors)
        self.heads = <ggml_tensor **> malloc(count * sizeof(ggml_tensor *))
        if self.heads == NULL:
            raise MemoryError("evaluate: compiled expression")
        for i in range(count):
            self.heads[i] = (<Tensor?> self.tensors[i]).ptr()
        self.n_heads = count
        self.nd = len(shape)
        for i in range(self.nd):
            self.dims[i] = shape[i]
        self.dtype = np.dtype(dtype)
        cdef ggml_cgraph * g = graph.live()
        self.pinned = graph.pinned_nodes(g)

    def __dealloc__(self):
        free(self.heads)
        free(self.pinned)
        free(self.work)


cdef inline bint exact_ndarray(object v) noexcept:
    return Py_TYPE(v) == <void *> cnp.ndarray


cdef object np_float32 = np.float32, np_float64 = np.float64


cdef inline int scalar_code(object v) noexcept:
    """The key's code of a number operand the fast path converts; 0 for anything else."""
    t = type(v)
    if t is float:
        return SCALAR_FLOAT
    if t is int:
        return SCALAR_INT
    if t is np_float32:
        return SCALAR_F32
    if t is np_float64:
        return SCALAR_F64
    return 0


cdef int store_number(object v, cnp.ndarray box) except -1:
    """Writes v (a number scalar_code accepts) into the 0-d float32/float64 array box,
    converted as the full path converts it (to float64 first, then to box's dtype).
    Returns 1, writing nothing, where that conversion raises or warns (an int beyond
    float64, a float32 overflow: numpy reports "overflow encountered in cast"; an
    underflow it does not report): the full path then answers."""
    cdef double d
    cdef float f
    try:
        d = float(v)
    except OverflowError:
        return 1
    if cnp.PyArray_TYPE(box) == cnp.NPY_FLOAT:
        f = <float> d
        if isinf(f) and not isinf(d):
            return 1
        (<float *> cnp.PyArray_DATA(box))[0] = f
    elif cnp.PyArray_TYPE(box) == cnp.NPY_DOUBLE:
        (<double *> cnp.PyArray_DATA(box))[0] = d
    else:
        return 1
    return 0


cdef int pack_layout(int64_t * buf, int at, cnp.ndarray a) noexcept:
    """Appends a's dtype (type number, native byte order or not, item size), ndim, shape
    and strides."""
    cdef cnp.dtype dt = a.descr
    cdef int nd = cnp.PyArray_NDIM(a), i
    buf[at] = dt.type_num
    buf[at + 1] = ((<int64_t> cnp.PyArray_IsNativeByteOrder(dt.byteorder) << 62)
                   | <int64_t> dt.itemsize)
    buf[at + 2] = nd
    at += 3
    for i in range(nd):
        buf[at + 2 * i] = cnp.PyArray_DIMS(a)[i]
        buf[at + 2 * i + 1] = cnp.PyArray_STRIDES(a)[i]
    return at + 2 * nd


def layout_key(expr, out, dict arrays):
    """Key of the fast path: the expression, the operands' names, and every operand's
    dtype, shape and strides (numbers: their kind, SCALAR_*), and out's (None when an
    operand is neither exactly a numpy array nor such a number, or out is not a writable
    array without zero strides: the full path decides)."""
    cdef Py_ssize_t pos = 0, n = len(arrays), j = 2, words = 1
    cdef PyObject * k
    cdef PyObject * v
    cdef int at = 0, i
    if type(expr) is not str:
        return None
    while PyDict_Next(arrays, &pos, &k, &v):      # check, and size the layout words
        if exact_ndarray(<object> v):
            words += 3 + 2 * cnp.PyArray_NDIM(<cnp.ndarray> v)
        elif scalar_code(<object> v):
            words += 1
        else:
            return None
    if out is not None:
        if not exact_ndarray(out) or not cnp.PyArray_ISWRITEABLE(<cnp.ndarray> out):
            return None
        for i in range(cnp.PyArray_NDIM(<cnp.ndarray> out)):
            if cnp.PyArray_STRIDES(<cnp.ndarray> out)[i] == 0:
                return None
        words += 3 + 2 * cnp.PyArray_NDIM(<cnp.ndarray> out)
    layout = PyBytes_FromStringAndSize(NULL, words * sizeof(int64_t))
    cdef int64_t * buf = <int64_t *> PyBytes_AS_STRING(layout)
    key = PyTuple_New(n + 2)
    tuple_put(key, 0, expr)
    tuple_put(key, 1, layout)
    pos = 0
    while PyDict_Next(arrays, &pos, &k, &v):
        tuple_put(key, j, <object> k)
        j += 1
        if exact_ndarray(<object> v):
            at = pack_layout(buf, at, <cnp.ndarray> v)
        else:
            buf[at] = scalar_code(<object> v)
            at += 1
    if out is None:
        buf[at] = -1
    else:
        buf[at] = -2
        pack_layout(buf, at + 1, <cnp.ndarray> out)
    return key


cdef inline void tuple_put(object t, Py_ssize_t i, object item) noexcept:
    Py_INCREF(item)                     # PyTuple_SET_ITEM steals a reference
    PyTuple_SET_ITEM(t, i, item)


def take(key):
    """The entry filed under key, taken out of the cache (None when there is none)."""
    return CACHE.pop(key, None)


def file(key, compiled):
    """Files an entry (the oldest go first beyond CACHE_SIZE)."""
    while len(CACHE) >= CACHE_SIZE:
        try:
            del CACHE[next(iter(CACHE))]
        except (KeyError, StopIteration, RuntimeError):   # another thread got there first
            break
    CACHE[key] = compiled


def keep_untouched_scratch(compiled, buf):
    """A large scratch buffer stays with the entry while the plan keeps every node it
    holds in cache (one fused group: the buffer's pages are never touched, so it is
    address space, not memory); otherwise it is made per call. Making and freeing it per
    call also meant planning again per call: evaluate of a*b + c*d - e at 1e7 float32, 16
    threads on the 16-core host, took 1.8 ms (median) against 0.87 for the same graph
    computed with a kept plan (bench/results/graph-xeon-16-e3.json)."""
    if buf is None or compiled.scratch_bytes <= KEEP_SCRATCH_BYTES:
        return
    kept = set(compiled.plan.nodes_kept_in_cache)
    if all(i in kept for i in compiled.scratch_idx):
        compiled.scratch_buf = buf
    elif compiled.scratch_buf is not None:
        compiled.scratch_buf = None         # this plan writes them: made per call again


cdef object scratch_buffer(Compiled c, bint * placed):
    """Memory for the nodes that are not inputs or the result (one buffer, 64-byte aligned
    pieces): pages the fused executor never writes (its intermediates stay in cache) cost
    nothing. Returns the buffer (the caller keeps it alive) and sets placed when the nodes
    were just pointed at new memory."""
    placed[0] = False
    if not c.scratch:
        return None
    if c.scratch_buf is not None:
        return c.scratch_buf
    cdef cnp.npy_intp n = c.scratch_bytes
    buf = core_aligned_empty(1, &n, np.dtype(np.uint8), RESULT_ALIGN)
    if c.scratch_bytes <= KEEP_SCRATCH_BYTES:
        c.scratch_buf = buf
    cdef size_t base = <size_t> cnp.PyArray_DATA(<cnp.ndarray> buf)
    for node, offset in c.scratch:
        _graph_mod.place_tensor(node, base + offset, 0)
    placed[0] = True
    return buf


cdef int run(Compiled c, dict arrays, cnp.ndarray result, int n_threads,
             bint fresh) except -1:
    """Points the compiled graph at this call's arrays and computes; fresh: the result was
    allocated here (it overlaps nothing). The plan (fused groups hold data pointers and
    were checked for overlap at those addresses) is made again when the thread count
    changed, or when a pointer moved and the overlaps may differ; when both the plan's
    result and this one are fresh they cannot (inputs are only read; the result and the
    intermediates' scratch overlap nothing), so the plan is re-pointed instead (with
    results kept by the caller, every call has a new result address: planning again cost
    1.1 us of a 3.7 us call at 1e3 elements). Returns the FP exception flags."""
    cdef bint moved = False, placed
    cdef int i
    cdef PyObject * v
    cdef void * data
    for i in range(c.n_heads - 1):
        v = PyDict_GetItem(arrays, c.names[i])
        if v != NULL and not isinstance(<object> v, cnp.ndarray) and c.numbers is not None:
            v = PyDict_GetItem(c.numbers, c.names[i])     # a number (try_fast stored it)
        if v == NULL or not isinstance(<object> v, cnp.ndarray):
            raise TypeError(f"evaluate: operand {c.names[i]!r} is not a numpy array")
        data = cnp.PyArray_DATA(<cnp.ndarray> v)
        if c.heads[i].data != data:
            c.heads[i].data = data
            moved = True
    data = cnp.PyArray_DATA(result)
    if c.heads[c.n_heads - 1].data != data:
        c.heads[c.n_heads - 1].data = data
        moved = True
    buf = scratch_buffer(c, &placed)
    cdef ggml_cgraph * g = c.graph.live()
    if c.plan is None or c.plan_threads != n_threads or ((moved or placed) and not
                                                          (fresh and c.plan_fresh)):
        c.plan = None                   # (frees the old plan before the new one is made)
        c.plan = make_plan(g.nodes, g.n_nodes, n_threads, True, c.pinned, c.graph)
        c.plan_threads = n_threads
        c.plan_fresh = fresh
        keep_untouched_scratch(c, buf)
    elif moved or placed:
        plan_repoint(c.plan.p)
    cdef size_t need = c.plan.p.work_size
    if need > c.work_cap:
        free(c.work)
        c.work = <char *> malloc(need)
        c.work_cap = need if c.work != NULL else 0
        if c.work == NULL:
            raise MemoryError(f"evaluate: a work buffer of {need} bytes")
    c.graph._run(c.plan, c.work)
    return c.plan.p.fe_flags


def run_compiled(Compiled c not None, dict arrays, cnp.ndarray result not None,
                 int n_threads, key, bint fresh):
    """run(), then files c under key. Returns the FP exception flags."""
    flags = run(c, arrays, result, n_threads, fresh)
    file(key, c)
    return flags


cdef int g_max_threads = _threads.MAX_THREADS
cdef object g_full_path = None      # evaluate.py's _evaluate_full (set_paths)
cdef object g_fpe_reaction = None   # evaluate.py's _fast_fpe


def set_paths(full_path, fpe_reaction):
    """Called once by evaluate.py: full_path(expr, n_threads, out, arrays) evaluates
    what the fast path cannot; fpe_reaction(expr, arrays, result, flags) reacts to the FP
    exceptions a fast-path computation raised (numpy's warnings name the caller's line:
    ufuncs/fpe.py skips ggml_cy's own frames)."""
    global g_full_path, g_fpe_reaction
    g_full_path, g_fpe_reaction = full_path, fpe_reaction


def evaluate(expr, /, n_threads=None, out=None, **arrays):
    """Evaluates an elementwise expression over numpy arrays in one fused pass.

    ``ggml_cy.evaluate("a*b + c*d - e", a=a, b=b, c=c, d=d, e=e)``. Names refer to the
    keyword arguments; ``out`` (optional) receives the result (shape and dtype must
    match); ``n_threads`` defaults to ``ggml_cy.get_num_threads()``. See ``FUNCTIONS``
    for the callable functions. Repeated calls with the same expression and operand
    layouts reuse the compiled graph (only the data pointers change).

    As numpy: floating-point exceptions are reported under ``np.errstate``/``np.seterr``
    (warned by default, raised under ``errstate(divide="raise")``...); a 0-d result is a
    numpy scalar; an ``out`` whose elements share memory (a zero stride) keeps the last
    value written. Inputs are plain numpy arrays (np.memmap too) and numbers; masked
    arrays and other ndarray subclasses are refused with a TypeError. Expressions deeper
    than ``MAX_DEPTH`` nested operations or longer than ``MAX_NODES`` syntax nodes raise
    ValueError."""
    r = try_fast(expr, n_threads, out, arrays)
    if r is not None:
        return r
    return g_full_path(expr, n_threads, out, arrays)


cdef object try_fast(expr, n_threads, out, dict arrays):
    """evaluate() for operands laid out exactly as an earlier call had them: the result
    (a numpy scalar for a 0-d result without out=), or None when no compiled entry
    matches (the full path then runs). The whole call stays in C here: with a Python
    wrapper around it, the wrapper's frame and keyword dict cost 0.9 us of 2.3 at 1e3."""
    key = layout_key(expr, out, arrays)
    if key is None:
        return None
    cdef Compiled c = CACHE.pop(key, None)
    if c is None:
        return None
    cdef int nt
    if n_threads is None:
        nt = default_num_threads()
    elif type(n_threads) is int and 1 <= n_threads <= g_max_threads:
        nt = n_threads                  # (the common case, without a Python call)
    else:
        try:
            nt = _threads.check_num_threads(n_threads)
        except BaseException:
            file(key, c)
            raise
    cdef int i
    for i in range(c.n_heads - 1):          # numbers: this call's value, in the entry's
        v = arrays.get(c.names[i])          # own 0-d array (its address never moves)
        if v is not None and not exact_ndarray(v):
            if c.numbers is None:
                c.numbers = {}
            box = c.numbers.get(c.names[i])
            if box is None:
                box = cnp.PyArray_SimpleNew(0, NULL, c.dtype.type_num)
                c.numbers[c.names[i]] = box
            if store_number(v, box):
                file(key, c)
                return None
    cdef cnp.ndarray result = (core_aligned_empty(c.nd, c.dims, c.dtype, RESULT_ALIGN)
                               if out is None else out)
    flags = run(c, arrays, result, nt, out is None)
    file(key, c)
    if flags:
        g_fpe_reaction(expr, arrays, result, flags)
    if out is None and c.nd == 0:
        return result[()]
    return result
