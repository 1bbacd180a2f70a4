# The graph executor and the graph-only kernels. See _compute.pxd for the model.
#
# Threads: plan_compute runs ONE job on ggml_cy's worker pool (_kernels.pool_run, a
# fork-safe pthread pool) for the whole graph. Every thread walks every
# step; a step's work is split over its first n_tasks threads with ggml's ith/nth rule,
# and all threads meet at a barrier (the pool's) before the next step. No
# thread is started per node and the GIL is not held anywhere in here.
from libc.stdint cimport int64_t, uintptr_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy, memset

from ggml_cy.core._core cimport (ggml_tensor, ggml_type_size, ggml_type_name, core_nelements,
                            core_nrows, core_contiguous_strides, GGML_MAX_SRC,
                            GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_F64, GGML_TYPE_I32)
from ggml_cy.cpu._kernels cimport (compute_forward, op_supported, op_name, threads_for,
                                   pool_run, pool_run_dyn, pool_barrier, check_signals,
                                   KERN_INTERRUPTED, dyn_ranges, DYN_CTR_STRIDE,
                                   mm_deals, mm_deals_few)
from ggml_cy.core._ops cimport (GGML_OP_NONE, GGML_OP_DUP, GGML_OP_CPY, GGML_OP_CONT,
                                GGML_OP_ADD, GGML_OP_LE, GGML_OP_LOGICAL_NOT, GGML_OP_SCALE,
                                GGML_OP_ADD1, GGML_OP_VIEW, GGML_OP_RESHAPE, GGML_OP_PERMUTE,
                                GGML_OP_TRANSPOSE, GGML_OP_SUM, GGML_OP_SUM_ROWS, GGML_OP_MEAN,
                                GGML_OP_MUL_MAT, GGML_OP_GET_ROWS, GGML_OP_COUNT,
                                GGML_OP_SET_ROWS, GGML_OP_FLASH_ATTN_EXT,  # issue 13 (ops3)
                                GGML_OP_GLU,  # issue 13 (ops1)
                                ggml_cy_op_is_binary, ggml_cy_op_is_elementwise)
from ggml_cy.cpu._fused cimport (fuse_group, fuse_build_group, fuse_work_size, fuse_run,
                                 fuse_repoint, extents_overlap)

cdef extern from *:
    """
    #include <time.h>
    static inline long long gcy_graph_now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    }
    static inline int gcy_load_int(const int * p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
    static inline void gcy_store_int(int * p, int v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
    """
    long long gcy_graph_now_ns() nogil
    int gcy_load_int(const int * p) nogil
    int gcy_store_int(int * p, int v) nogil

# Ctrl-C: the calling thread looks for Python signals between steps, at most this often.
cdef long long GRAPH_SIGNAL_CHECK_NS = 50000000
cdef enum:
    NO_ABORT = 0x7fffffff

ctypedef struct graph_job:
    gplan * p
    char * base
    int abort_at        # set once by thread 0 (Ctrl-C): every thread stops after this step

cdef extern from "kernels_convert.h" nogil:
    void kern_fe_clear()
    int kern_fe_test_all()

cdef extern from *:
    """
    /* FE bits numpy reports: invalid, divide by zero, overflow, underflow */
    #define GCY_FE_REPORTED (FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW)
    static inline void gcy_fe_or(int *dst, int v) {
        v &= GCY_FE_REPORTED;
        if (v) __atomic_fetch_or(dst, v, __ATOMIC_RELAXED);
    }
    """
    void gcy_fe_or(int * dst, int v) nogil

cdef extern from "dequant_tensor.h" nogil:
    # copies out of quantized tensors (dequantize, or same-type block copies)
    int gcy_qcopy_check(const ggml_tensor * dst, const ggml_tensor * src)
    int gcy_qcopy_kind(const ggml_tensor * dst, const ggml_tensor * src)
    void gcy_qcopy_part(ggml_tensor * dst, const ggml_tensor * src, int ith, int nth)
    bint ggml_cy_is_quantized(int type)

cdef extern from "quantize_tensor.h" nogil:
    # copies into a quantized tensor (ggml's way to quantize: cpy f32/f16/bf16 -> q*)
    int gcy_qz_check(const ggml_tensor * dst, const ggml_tensor * src)
    void gcy_qz_part(ggml_tensor * dst, const ggml_tensor * src, int ith, int nth)
    bint gcy_qz_is_quantized "ggml_cy_is_quantized"(int type)

cdef extern from "mul_mat.h" nogil:
    size_t mm_work_floats_for(const ggml_tensor * dst, int nth)
    size_t mm_work_floats_upto(const ggml_tensor * dst, int nth)
    int mm_ndeal_takes(const ggml_tensor * dst, int nth)
    void mm_compute(const ggml_tensor * dst, int ith, int nth, float * work)
    void mm_compute_dealt(const ggml_tensor * dst, int64_t * ctrs, int ith, int nth,
                          float * work)
    enum: MM_DEAL_STRIDE
    int mm_gemv_applies(const ggml_tensor * dst)
# the headers mul_mat.h includes, as build dependencies; after mul_mat.h's block because
# Cython emits the includes in this order and mul_mat_bf16.h must come through mul_mat.h
include "_mul_mat_deps.pxi"
include "_mm_dealt.pxi"

cdef extern from "get_rows.h" nogil:
    int gr_supported(int type)
    int gr_compute(const ggml_tensor * dst, int ith, int nth)   # -2: an id out of range

cdef extern from "mul_mat_q.h" nogil:
    # MUL_MAT with quantized weights (csrc/mul_mat_q.h): convert b once into the shared
    # work buffer, barrier, then the integer dot products (STEP_QMM)
    int mmq_supported(int type)
    int mmq_is_quantized(int type)
    size_t mmq_block_bytes(int type)
    size_t mmq_work_size(const ggml_tensor * dst)
    void mmq_convert_b(const ggml_tensor * dst, int ith, int nth, char * wdata)
    void mmq_convert_b_shared(const ggml_tensor * dst, char * wdata)
    size_t mmq_counter_offset(const ggml_tensor * dst)
    int mmq_dots(const ggml_tensor * dst, int ith, int nth, const char * wdata)

# --- issue 13: rows / attention (ops3): SET_ROWS, FLASH_ATTN_EXT (csrc/ops_rows_attn.h)
from ggml_cy.core._core cimport GGML_TYPE_I64, GGML_TYPE_BF16

cdef extern from "ops_rows_attn.h" nogil:
    int64_t ggml_cy_blck_size(int type)
    int ra_readable(int type)
    int sr_dst_supported(int type)
    size_t sr_work_floats(const ggml_tensor * dst)
    int sr_compute(const ggml_tensor * dst, int ith, int nth, float * work)   # -2: bad row id
    size_t fa_work_floats(const ggml_tensor * dst)
    void fa_compute(const ggml_tensor * dst, int ith, int nth, float * work)


cdef inline bint ra_rows_adjacent(const ggml_tensor * t) noexcept nogil:
    """Elements (quantized: blocks) of a row side by side: nb[0] == bytes per unit."""
    if mmq_is_quantized(t.type):
        return t.ne[0] <= 0 or t.nb[0] == <int64_t> mmq_block_bytes(t.type)
    return t.ne[0] <= 1 or t.nb[0] == <int64_t> ggml_type_size(t.type)


cdef int check_rows_attn(ggml_tensor * t) except -1:
    """The executor's own check of a SET_ROWS / FLASH_ATTN_EXT node (the builders check
    the same; this keeps a node edited after building from reaching the kernel)."""
    cdef ggml_tensor * a
    cdef ggml_tensor * b
    cdef ggml_tensor * c
    cdef ggml_tensor * m
    cdef int i
    if t.op == GGML_OP_SET_ROWS:
        b, c, a = t.src[0], t.src[1], t.src[2]
        if (c == NULL or a == NULL or a.data != t.data or a.type != t.type
                or b.type not in (GGML_TYPE_F32, GGML_TYPE_F16)
                or c.type not in (GGML_TYPE_I32, GGML_TYPE_I64)
                or not sr_dst_supported(t.type)):
            raise TypeError(f"node {tensor_label(t)}: the CPU backend's set_rows writes f32 "
                            "or f16 rows at i32/i64 ids into f32, f16, bf16 or quantized "
                            "tensors")
        for i in range(4):
            if t.ne[i] != a.ne[i] or t.nb[i] != a.nb[i]:
                raise ValueError(f"node {tensor_label(t)}: set_rows must be a view of a")
        if (b.ne[0] != t.ne[0] or b.ne[2] != t.ne[2] or b.ne[3] != t.ne[3]
                or c.ne[0] != b.ne[1] or c.ne[1] <= 0 or c.ne[2] <= 0 or c.ne[3] != 1
                or b.ne[2] % c.ne[1] != 0 or b.ne[3] % c.ne[2] != 0
                or not ra_rows_adjacent(b) or not ra_rows_adjacent(t)
                or (mmq_is_quantized(t.type) and t.ne[0] % ggml_cy_blck_size(t.type) != 0)):
            raise ValueError(f"node {tensor_label(t)}: set_rows shapes or strides do not "
                             "match (see Context.set_rows)")
        return 0
    b, c, a, m = t.src[0], t.src[1], t.src[2], t.src[3]     # q, k, v, mask
    if (c == NULL or a == NULL or b.type != GGML_TYPE_F32 or t.type != GGML_TYPE_F32
            or not ra_readable(c.type) or not ra_readable(a.type)
            or (m != NULL and m.type != GGML_TYPE_F16)):
        raise TypeError(f"node {tensor_label(t)}: the CPU backend's flash_attn_ext takes q "
                        "f32, k/v f32, f16, bf16 or quantized, mask f16")
    if (b.ne[0] != c.ne[0] or a.ne[1] != c.ne[1] or c.ne[2] <= 0 or c.ne[3] <= 0
            or a.ne[2] <= 0 or a.ne[3] <= 0 or b.ne[2] % c.ne[2] != 0 or b.ne[3] % c.ne[3] != 0
            or b.ne[2] % a.ne[2] != 0 or b.ne[3] % a.ne[3] != 0
            or t.ne[0] != a.ne[0] or t.ne[1] != b.ne[2] or t.ne[2] != b.ne[1]
            or t.ne[3] != b.ne[3] or t.nb[0] != 4
            or not ra_rows_adjacent(b) or not ra_rows_adjacent(c) or not ra_rows_adjacent(a)
            or (mmq_is_quantized(c.type) and c.ne[0] % ggml_cy_blck_size(c.type) != 0)
            or (mmq_is_quantized(a.type) and a.ne[0] % ggml_cy_blck_size(a.type) != 0)
            or (m != NULL and (m.ne[0] < c.ne[1] or m.ne[1] < b.ne[1] or m.ne[2] <= 0
                               or m.ne[3] <= 0 or m.nb[0] != 2))):
        raise ValueError(f"node {tensor_label(t)}: flash_attn_ext shapes or strides do not "
                         "match (see Context.flash_attn_ext)")
    return 0
# --- end issue 13 (ops3)

# --- issue 13: norms / softmax / GLU (ops1): row kernels of csrc/ops_norm.h
include "_simd_math_deps.pxi"
cdef extern from "ops_norm.h" nogil:
    bint on_is_op(int op)
    int on_check(const ggml_tensor * t)         # 0 ok, 1 types, 2 shapes/params
    int on_compute(const ggml_tensor * t, int ith, int nth)
    int64_t on_units(const ggml_tensor * t)

# Below these sizes a node runs on one thread: a barrier costs more than the work.
cdef enum:
    MIN_ELEMENTS_PER_THREAD = 16384
    MIN_FLOPS_PER_THREAD = 65536


cdef inline size_t align64(size_t n) noexcept nogil:
    return (n + 63) & ~(<size_t> 63)


# --- issue 13: rope / concat / repeat / pad / argsort / top_k / argmax (ops2)
# Kernels in csrc/ops_rope.h and csrc/ops_shape.h; the executor reaches them through the
# four ops2_* functions below (compute, check, threads, per-thread work bytes).
from ggml_cy.core._ops cimport (GGML_OP_ROPE, GGML_OP_CONCAT, GGML_OP_REPEAT, GGML_OP_PAD,
                                GGML_OP_ARGSORT, GGML_OP_TOP_K, GGML_OP_ARGMAX)

cdef extern from "ops_rope.h" nogil:
    size_t rope_work_bytes(const ggml_tensor * dst)
    int rope_compute(const ggml_tensor * dst, int ith, int nth, float * cache)

cdef extern from "ops_shape.h" nogil:
    int shp_type_ok(int type)
    int concat_compute(const ggml_tensor * dst, int ith, int nth)
    int repeat_compute(const ggml_tensor * dst, int ith, int nth)
    int pad_compute(const ggml_tensor * dst, int ith, int nth)
    size_t sort_work_bytes(const ggml_tensor * dst)
    int sort_compute(const ggml_tensor * dst, int ith, int nth, char * work, int top_k)
    int argmax_compute(const ggml_tensor * dst, int ith, int nth)


cdef inline bint ops2_handles(int op) noexcept nogil:
    return (op == GGML_OP_ROPE or op == GGML_OP_CONCAT or op == GGML_OP_REPEAT
            or op == GGML_OP_PAD or op == GGML_OP_ARGSORT or op == GGML_OP_TOP_K
            or op == GGML_OP_ARGMAX)


cdef int ops2_compute(ggml_tensor * node, int ith, int nth, char * work) noexcept nogil:
    cdef int op = node.op
    if op == GGML_OP_ROPE:
        return rope_compute(node, ith, nth, <float *> work)
    if op == GGML_OP_CONCAT:
        return concat_compute(node, ith, nth)
    if op == GGML_OP_REPEAT:
        return repeat_compute(node, ith, nth)
    if op == GGML_OP_PAD:
        return pad_compute(node, ith, nth)
    if op == GGML_OP_ARGSORT:
        return sort_compute(node, ith, nth, work, -1)
    if op == GGML_OP_TOP_K:
        return sort_compute(node, ith, nth, work, <int> node.ne[0])
    return argmax_compute(node, ith, nth)


cdef size_t ops2_work_bytes(ggml_tensor * t) noexcept nogil:
    """Work bytes each thread needs: rope's cos/sin table, a sort's row buffers."""
    if t.op == GGML_OP_ROPE:
        return rope_work_bytes(t)
    if t.op == GGML_OP_ARGSORT or t.op == GGML_OP_TOP_K:
        return sort_work_bytes(t)
    return 0


cdef int ops2_tasks(ggml_tensor * t, int n_threads) noexcept nogil:
    """Threads for a node: rows are the unit; rope and sorts cost several times a copy
    per element, so they take threads at a smaller size."""
    cdef int64_t n, rows
    cdef ggml_tensor * src0 = t.src[0]
    if t.op == GGML_OP_ARGMAX:
        rows = src0.ne[1]
        n = core_nelements(src0) // MIN_ELEMENTS_PER_THREAD
    elif t.op == GGML_OP_ARGSORT or t.op == GGML_OP_TOP_K:
        rows = core_nrows(src0)
        n = core_nelements(src0) // (MIN_ELEMENTS_PER_THREAD // 16)
    elif t.op == GGML_OP_ROPE:
        rows = core_nrows(t)
        n = core_nelements(t) // (MIN_ELEMENTS_PER_THREAD // 4)
    else:
        rows = core_nrows(t)
        n = core_nelements(t) // MIN_ELEMENTS_PER_THREAD
    n = n if n < rows else rows
    return <int> (1 if n < 1 else (n if n < n_threads else n_threads))


cdef bint ops2_check(ggml_tensor * t) noexcept nogil:
    """The type combinations the ops2 kernels run (the builders check shapes and
    parameters; the kernels check them again and refuse rather than misbehave)."""
    cdef int op = t.op
    cdef ggml_tensor * a = t.src[0]
    if op == GGML_OP_ROPE:
        return ((a.type == GGML_TYPE_F32 or a.type == GGML_TYPE_F16) and t.type == a.type
                and t.src[1] != NULL and t.src[1].type == GGML_TYPE_I32
                and (t.src[2] == NULL or t.src[2].type == GGML_TYPE_F32))
    if op == GGML_OP_CONCAT:
        return (shp_type_ok(a.type) and t.src[1] != NULL and t.src[1].type == a.type
                and t.type == a.type)
    if op == GGML_OP_REPEAT or op == GGML_OP_PAD:
        return shp_type_ok(a.type) and t.type == a.type
    return a.type == GGML_TYPE_F32 and t.type == GGML_TYPE_I32
# --- end issue 13 (ops2)


# ----------------------------------------------------------------------------- reductions
cdef double row_sum(const char * p, int64_t n, int64_t nb0, int type) noexcept nogil:
    """Sum of one row in double precision (ggml accumulates f32 rows in ggml_float)."""
    cdef double s = 0.0
    cdef int64_t i
    if type == GGML_TYPE_F32:
        if nb0 == 4:
            for i in range(n):
                s += (<const float *> p)[i]
        else:
            for i in range(n):
                s += (<const float *> (p + i * nb0))[0]
    else:
        if nb0 == 8:
            for i in range(n):
                s += (<const double *> p)[i]
        else:
            for i in range(n):
                s += (<const double *> (p + i * nb0))[0]
    return s


cdef inline void store_value(char * p, int type, double v) noexcept nogil:
    if type == GGML_TYPE_F32:
        (<float *> p)[0] = <float> v
    else:
        (<double *> p)[0] = v


cdef void compute_sum_rows(ggml_tensor * dst, int ith, int nth, bint mean) noexcept nogil:
    """SUM_ROWS / MEAN: dst [1, ne1, ne2, ne3] holds each row's sum (or mean)."""
    cdef ggml_tensor * src0 = dst.src[0]
    cdef int64_t ne00 = src0.ne[0], ne01 = src0.ne[1], ne02 = src0.ne[2]
    cdef int64_t nr = ne01 * ne02 * src0.ne[3]
    cdef int64_t dr = (nr + nth - 1) // nth
    cdef int64_t ir0 = dr * ith, ir1 = ir0 + dr, ir, i1, i2, i3
    cdef double s
    if ir1 > nr:
        ir1 = nr
    for ir in range(ir0, ir1):
        i3 = ir // (ne02 * ne01)
        i2 = (ir - i3 * ne02 * ne01) // ne01
        i1 = ir - i3 * ne02 * ne01 - i2 * ne01
        s = row_sum(<const char *> src0.data + i1 * src0.nb[1] + i2 * src0.nb[2] + i3 * src0.nb[3],
                    ne00, src0.nb[0], src0.type)
        if mean and ne00 > 0:
            s = s / <double> ne00
        elif mean:
            s = s / 0.0  # numpy: the mean of nothing is NaN
        store_value(<char *> dst.data + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3],
                    dst.type, s)


cdef void compute_sum(ggml_tensor * dst) noexcept nogil:
    """SUM: every element of src0 into dst's single element (one thread, as in ggml)."""
    cdef ggml_tensor * src0 = dst.src[0]
    cdef int64_t i1, i2, i3
    cdef double s = 0.0
    for i3 in range(src0.ne[3]):
        for i2 in range(src0.ne[2]):
            for i1 in range(src0.ne[1]):
                s += row_sum(<const char *> src0.data + i1 * src0.nb[1] + i2 * src0.nb[2]
                             + i3 * src0.nb[3], src0.ne[0], src0.nb[0], src0.type)
    store_value(<char *> dst.data, dst.type, s)


# ----------------------------------------------------------------------------- one node
cdef int compute_node(ggml_tensor * node, int ith, int nth, char * work) noexcept nogil:
    """ggml_compute_forward: thread ith of nth computes its share of node. 0 or -1."""
    cdef int op = node.op
    cdef ggml_tensor tmp
    if op == GGML_OP_NONE or op == GGML_OP_VIEW or op == GGML_OP_RESHAPE \
            or op == GGML_OP_PERMUTE or op == GGML_OP_TRANSPOSE:
        return 0
    if op == GGML_OP_ADD1:
        memcpy(&tmp, node, sizeof(ggml_tensor))
        tmp.op = GGML_OP_ADD  # src1 is a scalar, which tiles any shape
        return compute_forward(&tmp, ith, nth)
    if op == GGML_OP_SUM:
        if ith == 0:
            compute_sum(node)
        return 0
    if op == GGML_OP_SUM_ROWS or op == GGML_OP_MEAN:
        compute_sum_rows(node, ith, nth, op == GGML_OP_MEAN)
        return 0
    if op == GGML_OP_MUL_MAT:
        mm_compute(node, ith, nth, <float *> work)
        return 0
    if op == GGML_OP_GET_ROWS:
        return gr_compute(node, ith, nth)
    if op == GGML_OP_SET_ROWS:                   # issue 13 (ops3)
        return sr_compute(node, ith, nth, <float *> work)
    if op == GGML_OP_FLASH_ATTN_EXT:             # issue 13 (ops3)
        fa_compute(node, ith, nth, <float *> work)
        return 0
    if ops2_handles(op):                       # issue 13 (ops2)
        return ops2_compute(node, ith, nth, work)
    if on_is_op(op):                    # issue 13 (ops1): norms, softmax, GLU
        return on_compute(node, ith, nth)
    if is_quant_copy(node):
        gcy_qcopy_part(node, node.src[0], ith, nth)
        return 0
    if is_quantizing_copy(node):
        gcy_qz_part(node, node.src[0], ith, nth)
        return 0
    return compute_forward(node, ith, nth)


cdef inline void set_error(gplan * p, int rc) noexcept nogil:
    """Records a kernel's refusal: 2 for get_rows ids out of range (IndexError), else 1."""
    if rc == -2:
        p.error = 2
    elif p.error == 0:
        p.error = 1


cdef inline bint is_quant_copy(const ggml_tensor * t) noexcept nogil:
    """A dup/cpy/cont whose source is quantized (dequantize or block copy)."""
    return ((t.op == GGML_OP_DUP or t.op == GGML_OP_CPY or t.op == GGML_OP_CONT)
            and t.src[0] != NULL and ggml_cy_is_quantized(t.src[0].type))


cdef inline bint is_quantizing_copy(const ggml_tensor * t) noexcept nogil:
    """A cpy whose destination is quantized and whose source is not (quantize.h)."""
    return (t.op == GGML_OP_CPY and gcy_qz_is_quantized(t.type) and t.src[0] != NULL
            and not gcy_qz_is_quantized(t.src[0].type))


# --- barriers (model helper, issue 13 item 4): a barrier after a step only where a later
# step depends on it. Decoding one token runs ~16 nodes per layer, most of them tiny; a
# barrier after every node made a decode step cost hundreds of barriers, each one a wait
# for the slowest (or a descheduled) thread. The plan now records, per step, whether
# threads must meet after it: step t waits for the steps since the last barrier only when
# it reads what they write, writes what they read or write, or both use the shared buffer;
# two steps that both run on thread 0 alone are ordered by program order already.
cdef enum:
    SMALL_QMM_BYTES = 65536          # a converted b up to this size gets its own region
    SMALL_QMM_TOTAL = 8 << 20        # at most this much for all of them
    MAX_EPOCH_STEPS = 64             # steps between two barriers, at most

cdef size_t NO_REGION = <size_t> -1


cdef inline bint step_uses_shared(gstep * st) noexcept nogil:
    return st.kind == STEP_TEMP or (st.kind == STEP_QMM and st.qoff == NO_REGION)


cdef inline bint step_has_inner_barrier(gstep * st) noexcept nogil:
    """Every thread meets inside this step (after which all earlier steps are done)."""
    return st.kind == STEP_TEMP or (st.kind == STEP_QMM and st.qoff == NO_REGION)


cdef bint node_conflict(ggml_tensor * a, ggml_tensor * b) noexcept nogil:
    """a's result and b's result or sources (or b's result and a's sources) share bytes."""
    cdef int k
    if extents_overlap(a, b):
        return True
    for k in range(GGML_MAX_SRC):
        if b.src[k] != NULL and b.src[k].data != NULL and extents_overlap(a, b.src[k]):
            return True
        if a.src[k] != NULL and a.src[k].data != NULL and extents_overlap(a.src[k], b):
            return True
    return False


cdef bint steps_conflict(gplan * p, int a, int b) noexcept nogil:
    """Step b must not start before every thread finished step a."""
    cdef gstep * sa = &p.steps[a]
    cdef gstep * sb = &p.steps[b]
    cdef int i, j
    if sa.n_tasks <= 1 and sb.n_tasks <= 1:
        return False                 # both run on thread 0 alone, in program order
    if step_uses_shared(sa) and step_uses_shared(sb):
        return True
    for i in range(sa.node, sa.node + sa.count):
        if p.nodes[i].data == NULL:
            return True
        for j in range(sb.node, sb.node + sb.count):
            if p.nodes[j].data == NULL or node_conflict(p.nodes[i], p.nodes[j]):
                return True
    return False


cdef void plan_barriers(gplan * p) noexcept nogil:
    """Sets steps[s].barrier_after for every working step s (see above)."""
    cdef int epoch[MAX_EPOCH_STEPS]
    cdef int n_epoch = 0, prev = -1, s, e
    cdef bint need
    for s in range(p.n_steps):
        p.steps[s].barrier_after = 0
        if p.steps[s].kind == STEP_NOOP:
            continue
        if prev >= 0:
            need = n_epoch >= MAX_EPOCH_STEPS
            e = 0
            while not need and e < n_epoch:
                need = steps_conflict(p, epoch[e], s)
                e += 1
            if need:
                p.steps[prev].barrier_after = 1
                n_epoch = 0
        if step_has_inner_barrier(&p.steps[s]):
            n_epoch = 0
        epoch[n_epoch] = s
        n_epoch += 1
        prev = s


# Step profile (developer tool, tools/profile_decode.py): while PROF_NS is set, thread 0 adds
# the wall time of each step (up to and including its barrier) to PROF_NS[step]. Off by
# default: one pointer test per step.
cdef long long * PROF_NS = NULL
cdef int PROF_N = 0


def step_profile_start(int n_steps):
    """Starts collecting thread 0's time per plan step (steps beyond n_steps are not
    counted); returns nothing. Developer tool: not thread-safe across concurrent graphs."""
    global PROF_NS, PROF_N
    if n_steps < 0:
        raise ValueError("n_steps must be >= 0")
    step_profile_stop()
    PROF_NS = <long long *> calloc(max(n_steps, 1), sizeof(long long))
    if PROF_NS == NULL:
        raise MemoryError()
    PROF_N = n_steps


def step_profile_stop():
    """Stops collecting; returns the nanoseconds per step (a list) since the start."""
    global PROF_NS, PROF_N
    cdef int i
    out = [PROF_NS[i] for i in range(PROF_N)] if PROF_NS != NULL else []
    free(PROF_NS)
    PROF_NS = NULL
    PROF_N = 0
    return out


cdef void run_thread(graph_job * job, int ith, int nth) noexcept nogil:
    """One thread's walk over every step of the plan (the body of the pool job). Thread 0
    looks for Ctrl-C between steps; it stops the walk only at a step followed by a barrier
    (or on one thread), and every thread reads the stop step after that barrier, so all
    threads leave at the same step and no barrier waits for a thread that left."""
    cdef gplan * p = job.p
    cdef char * base = job.base
    cdef long long next_check = gcy_graph_now_ns() + GRAPH_SIGNAL_CHECK_NS
    cdef bint barrier
    cdef char * shared = base
    cdef char * qsmall = base + align64(p.shared_size)
    cdef char * mine = (base + align64(p.shared_size) + align64(p.qsmall_size)
                        + <size_t> ith * p.per_thread_size)
    cdef gstep * st
    cdef ggml_tensor * node
    cdef ggml_tensor tmp, back
    cdef int s, nt, rc, last = -1
    cdef size_t es
    for s in range(p.n_steps):
        if p.steps[s].kind != STEP_NOOP:
            last = s
    kern_fe_clear()     # this thread's FP exception flags, collected in p.fe_flags
    cdef long long * prof = PROF_NS if ith == 0 else NULL
    cdef long long t_prof = gcy_graph_now_ns() if prof != NULL else 0
    for s in range(p.n_steps):
        st = &p.steps[s]
        if st.kind == STEP_NOOP:
            continue
        nt = st.n_tasks if st.n_tasks < nth else nth
        if st.kind == STEP_NODE:
            if ith < nt and st.qoff != NO_REGION and mm_dealt(p.nodes[st.node], nt):
                # a float mul_mat: its tasks dealt from the step's counters (zeroed before
                # the job), so a slow thread holds the step up by about one task (on 2..4
                # threads the split, timed through them, until it is seen to lag:
                # mul_mat_ndeal.h)
                mm_compute_dealt(p.nodes[st.node], <int64_t *> (qsmall + st.qoff), ith, nt,
                                 <float *> mine)
            elif ith < nt:
                rc = compute_node(p.nodes[st.node], ith, nt, mine)
                if rc < 0:
                    set_error(p, rc)
        elif st.kind == STEP_QMM and st.qoff != NO_REGION:
            # a small b in the step's own region (counters zeroed before the job): the
            # threads claim its rows, wait until they are converted, then claim dot items;
            # no barrier
            node = p.nodes[st.node]
            if ith < nt:
                mmq_convert_b_shared(node, qsmall + st.qoff)
                if mmq_dots(node, ith, nt, qsmall + st.qoff) < 0:
                    p.error = 1
        elif st.kind == STEP_QMM:
            # every thread of the job meets at the barrier, working or not
            node = p.nodes[st.node]
            if ith < nt:
                mmq_convert_b(node, ith, nt, shared)
            pool_barrier()
            if ith < nt and mmq_dots(node, ith, nt, shared) < 0:
                p.error = 1
        elif st.kind == STEP_FUSED:
            if ith < nt and fuse_run(st.group, mine, ith, nt, NULL) < 0:
                p.error = 1
        else:
            # STEP_TEMP: compute into a contiguous temporary, then copy into dst, so a
            # dst that overlaps its sources sees their values from before the node ran
            node = p.nodes[st.node]
            memcpy(&tmp, node, sizeof(ggml_tensor))
            tmp.data = shared
            core_contiguous_strides(node.type, node.ne, tmp.nb)
            tmp.view_src = NULL
            if ith < nt:
                rc = compute_node(&tmp, ith, nt, mine)
                if rc < 0:
                    set_error(p, rc)
            pool_barrier()
            memcpy(&back, node, sizeof(ggml_tensor))
            memset(back.src, 0, sizeof(back.src))
            back.src[0] = &tmp
            back.op = GGML_OP_DUP
            if ith < nt and compute_forward(&back, ith, nt) < 0:
                p.error = 1
        if s == last:
            if prof != NULL and s < PROF_N:
                prof[s] += gcy_graph_now_ns() - t_prof
            break
        barrier = nth > 1 and st.barrier_after
        if (ith == 0 and (barrier or nth == 1) and gcy_graph_now_ns() >= next_check
                and gcy_load_int(&job.abort_at) == NO_ABORT):
            if check_signals() != 0:
                gcy_store_int(&job.abort_at, s)
            next_check = gcy_graph_now_ns() + GRAPH_SIGNAL_CHECK_NS
        if barrier:
            pool_barrier()
        if prof != NULL and s < PROF_N:
            prof[s] += gcy_graph_now_ns() - t_prof
            t_prof = gcy_graph_now_ns()
        if (barrier or nth == 1) and gcy_load_int(&job.abort_at) <= s:
            break
    gcy_fe_or(&p.fe_flags, kern_fe_test_all())


cdef void graph_task(void * arg, int ith, int nth) noexcept nogil:
    run_thread(<graph_job *>arg, ith, nth)


# A graph whose only working step is a float mul_mat: its tasks (mat-vec: 16-row chunks,
# mm_gemv_dyn) are claimed from a counter on a job whose workers are optional helpers
# (pool_run_dyn), so a worker that wakes late (a core busy with another process: the 2-core
# VM's 4096x4096 f32 mat-vec at 2 threads, median 5-8 ms against 2 ms at best) is not
# waited for; the caller claims what is left. Same kernel, same bits. (Other products take
# this job only where they deal their tasks: mm_dealt, _mm_dealt.pxi.)
ctypedef struct mm_dealt_job:
    gplan * p
    ggml_tensor * node
    char * mine0        # thread 0's scratch; thread i's is per_thread_size bytes further
    int64_t * ctrs      # the step's task counters (mm_compute_dealt), zeroed


cdef void mm_dealt_task(void * arg, int ith, int nth) noexcept nogil:
    cdef mm_dealt_job * j = <mm_dealt_job *> arg
    kern_fe_clear()
    mm_compute_dealt(j.node, j.ctrs, ith, nth,
                     <float *> (j.mine0 + <size_t> ith * j.p.per_thread_size))
    gcy_fe_or(&j.p.fe_flags, kern_fe_test_all())


cdef int only_step(gplan * p, int kind) noexcept nogil:
    """The index of the plan's only working step when it is of `kind` and runs on two or
    more threads, else -1."""
    cdef int s, found = -1
    for s in range(p.n_steps):
        if p.steps[s].kind != STEP_NOOP:
            if found >= 0:
                return -1
            found = s
    if found < 0 or p.steps[found].kind != kind or p.steps[found].n_tasks < 2:
        return -1
    return found


cdef inline size_t mm_counter_bytes(int n_threads) noexcept nogil:
    """A float mul_mat step's task counters (mm_compute_dealt): one cache line a thread."""
    return <size_t> (n_threads if n_threads > 1 else 1) * MM_DEAL_STRIDE * sizeof(int64_t)


cdef int single_mm_step(gplan * p) noexcept nogil:
    """The index of the plan's only working step when it is a float mul_mat node that deals
    its tasks (mm_dealt, _mm_dealt.pxi) or a float mat-vec, else -1."""
    cdef int found = only_step(p, STEP_NODE)
    if found < 0:
        return -1
    if p.nodes[p.steps[found].node].op != GGML_OP_MUL_MAT:
        return -1
    cdef int nt = p.steps[found].n_tasks if p.steps[found].n_tasks < p.n_active else p.n_active
    if (not mm_dealt(p.nodes[p.steps[found].node], nt)
            and not mm_gemv_applies(p.nodes[p.steps[found].node])):
        return -1
    return found



# A graph whose only working step is a fused group (what ggml_cy.evaluate makes of one
# expression): the same optional-helper job, its blocks dealt in chunks from one counter
# per thread's range (_kernels.dyn_next). With ggml's static split every call waited for
# its slowest thread: a*b + c*d - e, 1e7 float32, at 16 threads on the 16-core host took
# 2.96 ms (median, 4 samples after the bench's pause and warm-up) against 1.28 for a
# hand-fused C loop with OpenMP, and 7.5 against 3.1 at 8 threads, while the eager add,
# already on such a job, beat the C loop at both (bench/results/scaling-xeon-16-e1.json).
cdef extern from *:
    """
    static inline void gcy_graph_add_i64(long long * p, long long v) {
        __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
    }
    """
    void gcy_graph_add_i64(long long * p, long long v) nogil
cdef long long g_fused_dyn_runs = 0

cdef enum:
    FUSED_DYN_CHUNKS = 8        # chunks per thread
    FUSED_MAX_RANGES = 256      # MAX_THREADS of the kernel layer

ctypedef struct fused_job:
    gplan * p
    char * mine0                # thread 0's work area; thread i's is per_thread_size on
    fuse_group * group
    dyn_ranges d


cdef void fused_dyn_task(void * arg, int ith, int nth) noexcept nogil:
    cdef fused_job * j = <fused_job *> arg
    kern_fe_clear()
    if fuse_run(j.group, j.mine0 + <size_t> ith * j.p.per_thread_size, ith, nth, &j.d) < 0:
        j.p.error = 1
    gcy_fe_or(&j.p.fe_flags, kern_fe_test_all())


cdef int run_fused_dyn(gplan * p, char * base, int s) noexcept nogil:
    cdef fused_job fj
    cdef int64_t ctrs[FUSED_MAX_RANGES * DYN_CTR_STRIDE]
    cdef int nt = p.steps[s].n_tasks if p.steps[s].n_tasks < p.n_active else p.n_active
    cdef int i
    if nt > FUSED_MAX_RANGES:
        nt = FUSED_MAX_RANGES
    fj.p = p
    fj.group = p.steps[s].group
    fj.mine0 = base + align64(p.shared_size) + align64(p.qsmall_size)
    fj.d.ctrs = ctrs
    fj.d.nranges = nt
    fj.d.units = fj.group.n_blocks
    fj.d.cs = (fj.d.units + nt * FUSED_DYN_CHUNKS - 1) // (nt * FUSED_DYN_CHUNKS)
    if fj.d.cs < 1:
        fj.d.cs = 1
    fj.d.nchunks = (fj.d.units + fj.d.cs - 1) // fj.d.cs
    for i in range(nt):
        ctrs[i * DYN_CTR_STRIDE] = 0
    pool_run_dyn(fused_dyn_task, &fj, nt)
    gcy_graph_add_i64(&g_fused_dyn_runs, 1)
    return -1 if p.error else 0


def _fused_dyn_runs():
    """Graphs run as one fused step on an optional-helper job since import (tests)."""
    return g_fused_dyn_runs


cdef void plan_repoint(gplan * p) noexcept nogil:
    cdef int s
    for s in range(p.n_steps):
        if p.steps[s].kind == STEP_FUSED:
            fuse_repoint(p.steps[s].group)


cdef int plan_compute(gplan * p, char * work) noexcept nogil:
    cdef char * base = <char *> ((<uintptr_t> work + 63) & ~(<uintptr_t> 63))
    cdef graph_job job
    job.p = p
    job.base = base
    job.abort_at = NO_ABORT
    p.error = 0
    p.fe_flags = 0
    # the small-QMM regions' three counters start at zero (mmq_convert_b_shared, mmq_dots)
    # and the float mul_mat steps' task counters (mm_compute_dealt)
    cdef char * qsmall = base + align64(p.shared_size)
    cdef int s
    for s in range(p.n_steps):
        if p.steps[s].kind == STEP_QMM and p.steps[s].qoff != NO_REGION:
            memset(qsmall + p.steps[s].qoff + mmq_counter_offset(p.nodes[p.steps[s].node]),
                   0, 3 * sizeof(int64_t))
        elif p.steps[s].kind == STEP_NODE and p.steps[s].qoff != NO_REGION:
            memset(qsmall + p.steps[s].qoff, 0, mm_counter_bytes(p.n_threads))
    cdef mm_dealt_job mj
    cdef int sg = single_mm_step(p) if p.n_active > 1 and PROF_NS == NULL else -1
    if sg >= 0:                                  # see mm_dealt_task
        mj.p = p
        mj.node = p.nodes[p.steps[sg].node]
        mj.mine0 = base + align64(p.shared_size) + align64(p.qsmall_size)
        mj.ctrs = <int64_t *> (qsmall + p.steps[sg].qoff)
        pool_run_dyn(mm_dealt_task, &mj,
                     p.steps[sg].n_tasks if p.steps[sg].n_tasks < p.n_active else p.n_active)
        return 0
    sg = only_step(p, STEP_FUSED) if p.n_active > 1 and PROF_NS == NULL else -1
    if sg >= 0:
        return run_fused_dyn(p, base, sg)
    # a graph of small nodes runs on the calling thread (pool_run with 1: no wake-ups)
    pool_run(graph_task, &job, p.n_active if p.n_active > 1 else 1)
    if job.abort_at != NO_ABORT:
        return KERN_INTERRUPTED
    return -1 if p.error else 0


# ----------------------------------------------------------------------------- planning
cdef bint is_view_op(int op) noexcept nogil:
    return (op == GGML_OP_NONE or op == GGML_OP_VIEW or op == GGML_OP_RESHAPE
            or op == GGML_OP_PERMUTE or op == GGML_OP_TRANSPOSE)


cdef str tensor_label(ggml_tensor * t):
    name = t.name.decode("utf-8", "replace")
    shape = "[" + ", ".join(str(t.ne[i]) for i in range(4)) + "]"
    return f"'{name}' ({op_name(t.op).decode()}, {ggml_type_name(t.type).decode()} {shape})"


cdef int check_node(ggml_tensor * t, bint need_data) except -1:
    """Raises when the CPU cannot run node t (no data, type combination not supported)."""
    cdef int op = t.op
    cdef int i, t1, rc
    if op < 0 or op >= GGML_OP_COUNT:
        raise ValueError(f"node {tensor_label(t)} has an unknown op {op}")
    if is_view_op(op):
        return 0
    if need_data and t.data == NULL and core_nelements(t) > 0:
        raise ValueError(f"node {tensor_label(t)} has no data: its context is no_alloc; "
                         "place its tensors with backend.alloc_ctx_tensors first")
    for i in range(GGML_MAX_SRC):
        if (need_data and t.src[i] != NULL and t.src[i].data == NULL
                and core_nelements(t.src[i]) > 0):
            raise ValueError(f"source {tensor_label(t.src[i])} of node {tensor_label(t)} "
                             "has no data (no_alloc context not placed in a buffer)")
    if t.src[0] == NULL:
        raise ValueError(f"node {tensor_label(t)} has no source")
    cdef bint ok
    if is_qmm(t):
        ok = (t.src[1].type == GGML_TYPE_F32 and t.type == GGML_TYPE_F32 and t.nb[0] == 4
              and mmq_supported(t.src[0].type))
        if ok and t.src[0].nb[0] != <int64_t> mmq_block_bytes(t.src[0].type):
            raise ValueError(f"node {tensor_label(t)}: quantized weights "
                             f"{tensor_label(t.src[0])} must have contiguous rows of blocks")
    elif op == GGML_OP_GET_ROWS:
        ok = (t.src[1] != NULL and t.src[1].type == GGML_TYPE_I32 and t.nb[0] == 4
              and ((t.type == GGML_TYPE_F32 and gr_supported(t.src[0].type))
                   or (t.type == GGML_TYPE_I32 and t.src[0].type == GGML_TYPE_I32)))
        if ok and mmq_is_quantized(t.src[0].type) and \
                t.src[0].nb[0] != <int64_t> mmq_block_bytes(t.src[0].type):
            raise ValueError(f"node {tensor_label(t)}: quantized table "
                             f"{tensor_label(t.src[0])} must have contiguous rows of blocks")
    elif op == GGML_OP_SET_ROWS or op == GGML_OP_FLASH_ATTN_EXT:    # issue 13 (ops3)
        ok = check_rows_attn(t) == 0
    elif ops2_handles(op):                     # issue 13 (ops2)
        ok = ops2_check(t)
    elif on_is_op(op):                  # issue 13 (ops1): norms, softmax, GLU
        rc = on_check(t)
        if rc == 2:
            raise ValueError(f"node {tensor_label(t)}: shapes or parameters the CPU "
                             f"{op_name(op).decode()} kernel does not take")
        ok = rc == 0
    elif op == GGML_OP_MUL_MAT:
        ok = (t.src[1] != NULL and t.type == GGML_TYPE_F32 and t.nb[0] == 4
              and (t.src[0].type == GGML_TYPE_F32 or t.src[0].type == GGML_TYPE_F16
                   or t.src[0].type == GGML_TYPE_BF16)      # bf16: issue 13 (ops3)
              and t.src[1].type == GGML_TYPE_F32)
    elif op == GGML_OP_SUM or op == GGML_OP_SUM_ROWS or op == GGML_OP_MEAN:
        ok = ((t.src[0].type == GGML_TYPE_F32 or t.src[0].type == GGML_TYPE_F64)
              and t.type == t.src[0].type)
    elif op == GGML_OP_ADD1:
        ok = t.src[1] != NULL and op_supported(GGML_OP_ADD, t.type, t.src[0].type, t.src[1].type)
    elif ggml_cy_op_is_binary(op):
        ok = t.src[1] != NULL and op_supported(op, t.type, t.src[0].type, t.src[1].type)
    elif is_quant_copy(t):
        if not gcy_qcopy_check(t, t.src[0]):
            raise TypeError(
                f"node {tensor_label(t)}: the CPU backend copies a "
                f"{ggml_type_name(t.src[0].type).decode()} tensor into f32, f16, bf16 or the "
                f"same type, into a contiguous destination or one of the same shape with "
                f"adjacent elements; got {ggml_type_name(t.type).decode()} ne={list(t.ne)} "
                f"nb={list(t.nb)}")
        ok = True
    elif is_quantizing_copy(t):
        if not gcy_qz_check(t, t.src[0]):
            raise TypeError(
                f"node {tensor_label(t)}: the CPU backend quantizes f32, f16 or bf16 rows of "
                f"whole blocks (elements adjacent) into a contiguous "
                f"{ggml_type_name(t.type).decode()} tensor; got "
                f"{ggml_type_name(t.src[0].type).decode()} ne={list(t.src[0].ne)} "
                f"nb={list(t.src[0].nb)}")
        ok = True
    else:
        ok = op_supported(op, t.type, t.src[0].type, -1)
    if not ok:
        srcs = ", ".join(ggml_type_name(t.src[i].type).decode()
                         for i in range(GGML_MAX_SRC) if t.src[i] != NULL)
        raise TypeError(f"node {tensor_label(t)}: the CPU backend does not support "
                        f"{op_name(op).decode()} with sources of type {srcs}")
    return 0


cdef inline bint is_qmm(ggml_tensor * t) noexcept nogil:
    """A MUL_MAT whose weights (src0) are quantized: run as a STEP_QMM."""
    return (t.op == GGML_OP_MUL_MAT and t.src[0] != NULL and t.src[1] != NULL
            and mmq_is_quantized(t.src[0].type))


cdef bint needs_temp(ggml_tensor * t) noexcept nogil:
    """1 when t's destination overlaps a source other than as an exact element-for-element
    alias (in-place ops alias src0 exactly, which every kernel handles)."""
    cdef int i, n = GGML_MAX_SRC
    cdef ggml_tensor * s
    cdef bint elementwise = ggml_cy_op_is_elementwise(t.op)
    if t.op == GGML_OP_CPY:
        n = 1  # src1 of a copy is the destination itself, never read
    elif t.op == GGML_OP_SET_ROWS:
        n = 2  # src2 of set_rows is the destination itself (issue 13, ops3)
    for i in range(n):
        s = t.src[i]
        if s == NULL or s.data == NULL or t.data == NULL:
            continue
        if not extents_overlap(t, s):
            continue
        # (the row ops of ops_norm.h read each element before writing it: an exact
        # alias of src0 is safe for them too)
        # (ops2) rope reads each pair before writing it: the same holds for it
        if ((elementwise or (i == 0 and on_is_op(t.op) and t.op != GGML_OP_GLU)
                or (i == 0 and t.op == GGML_OP_ROPE))
                and s.data == t.data and s.type == t.type and memcmp_ne_nb(s, t)):
            continue
        return True
    return False


cdef inline bint memcmp_ne_nb(ggml_tensor * a, ggml_tensor * b) noexcept nogil:
    cdef int i
    for i in range(4):
        if a.ne[i] != b.ne[i] or a.nb[i] != b.nb[i]:
            return False
    return True


cdef int node_tasks(ggml_tensor * t, int n_threads) noexcept nogil:
    """ggml_get_n_tasks: how many threads share this node."""
    cdef int op = t.op
    cdef int64_t n, rows
    cdef ggml_tensor tmp
    if is_view_op(op):
        return 0
    if n_threads <= 1:
        return 1
    if op == GGML_OP_SUM:
        return 1
    if is_quantizing_copy(t):     # quantizing costs ~10x a copy per element
        n = core_nelements(t) // (MIN_ELEMENTS_PER_THREAD // 8)
        return <int> (1 if n < 1 else (n if n < n_threads else n_threads))
    if op == GGML_OP_SUM_ROWS or op == GGML_OP_MEAN:
        n = core_nelements(t.src[0]) // MIN_ELEMENTS_PER_THREAD
        rows = core_nrows(t.src[0])
        n = n if n < rows else rows
        return <int> (1 if n < 1 else (n if n < n_threads else n_threads))
    if op == GGML_OP_MUL_MAT:
        n = t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3] * t.src[0].ne[0] // MIN_FLOPS_PER_THREAD
        return <int> (1 if n < 1 else (n if n < n_threads else n_threads))
    if op == GGML_OP_GET_ROWS:
        n = core_nelements(t) // MIN_ELEMENTS_PER_THREAD
        rows = t.ne[1] * t.ne[2] * t.ne[3]
        n = n if n < rows else rows
        return <int> (1 if n < 1 else (n if n < n_threads else n_threads))
    if ops2_handles(op):                       # issue 13 (ops2)
        return ops2_tasks(t, n_threads)
    if on_is_op(op):                    # issue 13 (ops1): a few flops per element
        n = core_nelements(t.src[0]) // (MIN_ELEMENTS_PER_THREAD // 4)
        rows = on_units(t)
        n = n if n < rows else rows
        return <int> (1 if n < 1 else (n if n < n_threads else n_threads))
    if op == GGML_OP_ADD1:
        memcpy(&tmp, t, sizeof(ggml_tensor))
        tmp.op = GGML_OP_ADD
        return threads_for(&tmp, n_threads)
    if op == GGML_OP_SET_ROWS:                   # issue 13 (ops3): rows of b
        n = core_nelements(t.src[0]) // MIN_ELEMENTS_PER_THREAD
        rows = t.src[0].ne[1]
        n = n if n < rows else rows
        return <int> (1 if n < 1 else (n if n < n_threads else n_threads))
    if op == GGML_OP_FLASH_ATTN_EXT:             # issue 13 (ops3): query rows
        rows = t.src[0].ne[1] * t.src[0].ne[2] * t.src[0].ne[3]
        n = rows * t.src[1].ne[1] * (t.src[1].ne[0] + t.src[2].ne[0]) // MIN_FLOPS_PER_THREAD
        n = n if n < rows else rows
        return <int> (1 if n < 1 else (n if n < n_threads else n_threads))
    if is_quant_copy(t):
        n = core_nelements(t) // MIN_ELEMENTS_PER_THREAD
        return <int> (1 if n < 1 else (n if n < n_threads else n_threads))
    return threads_for(t, n_threads)


cdef inline size_t ptr_hash(const void * p) noexcept nogil:
    # pointers are 16-byte aligned: drop the zero bits, then mix (Fibonacci hashing)
    return <size_t> ((<uintptr_t> p >> 4) * <uintptr_t> 11400714819323198485ULL >> 7)


cdef gplan * plan_build(ggml_tensor ** nodes, int n_nodes, int n_threads, bint fuse,
                        const unsigned char * pinned) except NULL:
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    cdef int i, j, k, n
    for i in range(n_nodes):
        check_node(nodes[i], True)
    cdef gplan * p = <gplan *> calloc(1, sizeof(gplan))
    if p == NULL:
        raise MemoryError("graph plan")
    p.n_threads = n_threads
    p.n_nodes = n_nodes
    p.nodes = <ggml_tensor **> malloc(sizeof(ggml_tensor *) * (n_nodes + 1))
    p.steps = <gstep *> calloc(n_nodes + 1, sizeof(gstep))
    p.node_tasks = <int *> calloc(n_nodes + 1, sizeof(int))
    cdef int * last_consumer = <int *> malloc(sizeof(int) * (n_nodes + 1))
    cdef fuse_group * g
    if p.nodes == NULL or p.steps == NULL or p.node_tasks == NULL or last_consumer == NULL:
        free(last_consumer)
        plan_free(p)
        raise MemoryError("graph plan")
    memcpy(p.nodes, nodes, sizeof(ggml_tensor *) * n_nodes)
    # who reads whom: the last reader of each node decides whether it may stay in cache
    for i in range(n_nodes):
        last_consumer[i] = -1
    # (node pointer -> index through a small open-addressing table: O(n) for big graphs)
    cdef size_t hsize = 16, h
    while hsize < <size_t> (2 * n_nodes + 1):
        hsize *= 2
    cdef ggml_tensor ** hkeys = <ggml_tensor **> calloc(hsize, sizeof(ggml_tensor *))
    cdef int * hvals = <int *> malloc(hsize * sizeof(int))
    if hkeys == NULL or hvals == NULL:
        free(hkeys)
        free(hvals)
        free(last_consumer)
        plan_free(p)
        raise MemoryError("graph plan")
    for i in range(n_nodes):
        h = ptr_hash(nodes[i]) & (hsize - 1)
        while hkeys[h] != NULL and hkeys[h] != nodes[i]:
            h = (h + 1) & (hsize - 1)
        hkeys[h] = nodes[i]
        hvals[h] = i
    for j in range(n_nodes):
        for k in range(GGML_MAX_SRC):
            if nodes[j].src[k] == NULL:
                continue
            h = ptr_hash(nodes[j].src[k]) & (hsize - 1)
            while hkeys[h] != NULL:
                if hkeys[h] == nodes[j].src[k]:
                    if hvals[h] < j:
                        last_consumer[hvals[h]] = j
                    break
                h = (h + 1) & (hsize - 1)
    free(hkeys)
    free(hvals)
    cdef size_t sz, es
    cdef gstep * st
    i = 0
    try:
        while i < n_nodes:
            st = &p.steps[p.n_steps]
            p.n_steps += 1
            st.node = i
            st.count = 1
            st.qoff = NO_REGION
            if is_view_op(nodes[i].op):
                st.kind = STEP_NOOP
                st.n_tasks = 0
                i += 1
                continue
            if fuse and not needs_temp(nodes[i]):
                g = <fuse_group *> malloc(sizeof(fuse_group))
                if g == NULL:
                    raise MemoryError("graph plan")
                n = fuse_build_group(nodes, n_nodes, i, pinned, last_consumer, n_threads, g)
                for k in range(i, i + n):  # a member needing a temporary breaks fusion
                    if needs_temp(nodes[k]):
                        n = 0
                        break
                if n >= 2:
                    st.kind = STEP_FUSED
                    st.count = n
                    st.group = g
                    st.n_tasks = node_tasks(nodes[i + n - 1], n_threads)
                    for k in range(i, i + n):
                        p.node_tasks[k] = st.n_tasks
                    sz = align64(fuse_work_size(g))
                    if sz > p.per_thread_size:
                        p.per_thread_size = sz
                    i += n
                    continue
                free(g)
            st.n_tasks = node_tasks(nodes[i], n_threads)
            p.node_tasks[i] = st.n_tasks
            if is_qmm(nodes[i]):
                if needs_temp(nodes[i]):
                    raise ValueError(f"node {tensor_label(nodes[i])}: the result of a "
                                     "mul_mat with quantized weights may not overlap its "
                                     "sources")
                st.kind = STEP_QMM
                sz = align64(mmq_work_size(nodes[i]))
                if sz <= SMALL_QMM_BYTES and p.qsmall_size + sz <= SMALL_QMM_TOTAL:
                    st.qoff = p.qsmall_size          # its own region: no inner barrier
                    p.qsmall_size += sz
                elif sz > p.shared_size:
                    p.shared_size = sz
            elif needs_temp(nodes[i]) and nodes[i].op == GGML_OP_SET_ROWS:
                # (issue 13, ops3) a temporary would lose the rows set_rows leaves alone
                raise ValueError(f"node {tensor_label(nodes[i])}: set_rows rows or ids "
                                 "overlap the destination")
            elif needs_temp(nodes[i]):
                if is_quant_copy(nodes[i]) and ggml_cy_is_quantized(nodes[i].type):
                    raise ValueError(f"node {tensor_label(nodes[i])}: a copy between "
                                     f"overlapping quantized tensors")
                if is_quantizing_copy(nodes[i]):
                    raise ValueError(f"node {tensor_label(nodes[i])}: quantizing into a "
                                     f"tensor that overlaps its source")
                st.kind = STEP_TEMP
                es = ggml_type_size(nodes[i].type)
                sz = align64(<size_t> core_nelements(nodes[i]) * es)
                if sz > p.shared_size:
                    p.shared_size = sz
            else:
                st.kind = STEP_NODE
                if nodes[i].op == GGML_OP_MUL_MAT:    # its task counters, a line each
                    st.qoff = p.qsmall_size
                    p.qsmall_size += mm_counter_bytes(n_threads)
            if nodes[i].op == GGML_OP_MUL_MAT and not is_qmm(nodes[i]):
                # (2..4 threads, mul_mat_ndeal.h) with a copy of one operand
                sz = align64(mm_work_floats_upto(nodes[i], n_threads) * 4)
                if sz > p.per_thread_size:
                    p.per_thread_size = sz
            # issue 13 (ops3): per-thread rows for set_rows / flash_attn_ext
            if nodes[i].op == GGML_OP_SET_ROWS or nodes[i].op == GGML_OP_FLASH_ATTN_EXT:
                sz = align64(4 * (sr_work_floats(nodes[i]) if nodes[i].op == GGML_OP_SET_ROWS
                                  else fa_work_floats(nodes[i])) + 64)
                if sz > p.per_thread_size:
                    p.per_thread_size = sz
            sz = align64(ops2_work_bytes(nodes[i]))       # issue 13 (ops2)
            if sz > p.per_thread_size:
                p.per_thread_size = sz
            i += 1
    except BaseException:
        free(last_consumer)
        plan_free(p)
        raise
    free(last_consumer)
    p.n_active = 1
    for i in range(p.n_steps):
        if p.steps[i].n_tasks > p.n_active:
            p.n_active = p.steps[i].n_tasks
    p.work_size = (64 + align64(p.shared_size) + align64(p.qsmall_size)
                   + <size_t> n_threads * p.per_thread_size)
    plan_barriers(p)
    return p


cdef void plan_free(gplan * p) noexcept nogil:
    cdef int s
    if p == NULL:
        return
    if p.steps != NULL:
        for s in range(p.n_steps):
            free(p.steps[s].group)
    free(p.steps)
    free(p.nodes)
    free(p.node_tasks)
    free(p)


_STEP_NAMES = {STEP_NOOP: "noop", STEP_NODE: "node", STEP_TEMP: "node+temp",
               STEP_FUSED: "fused", STEP_QMM: "mul_mat_q"}


cdef list fused_node_indices(gplan * p, bint streamed):
    """The graph indices of the fused groups' nodes that stream (streamed) or that stay in
    cache (not streamed: scratch or machine tiles)."""
    cdef fuse_group * g
    cdef int s, i
    out = []
    for s in range(p.n_steps):
        if p.steps[s].kind != STEP_FUSED:
            continue
        g = p.steps[s].group
        for i in range(g.n_nodes):
            if (g.slots[i].stream if streamed
                    else g.slots[i].scratch >= 0 and not g.slots[i].stream):
                out.append(g.first + i)
    return out


cdef class Plan:
    """A compute plan (ggml_cplan): work-buffer size, threads per node, fused groups.

    Made by ``graph.plan(n_threads)``; valid while the graph is unchanged."""

    def __dealloc__(self):
        plan_free(self.p)
        self.p = NULL
        free(self.work_buf)
        self.work_buf = NULL

    @property
    def n_threads(self):
        return self.p.n_threads

    @property
    def fe_flags(self):
        """The floating-point exception flags (C's FE_INVALID, FE_DIVBYZERO, FE_OVERFLOW,
        FE_UNDERFLOW bits) raised by any thread during the last compute with this plan
        (0 before the first). The executor does not report them itself: front ends that
        follow numpy's np.errstate read them (evaluate does)."""
        return self.p.fe_flags

    @property
    def work_size(self):
        """Bytes of work buffer compute needs (mul_mat packs, fused scratch, temps)."""
        return self.p.work_size

    @property
    def n_tasks(self):
        """Threads taking part in each node, in node order (0 for views)."""
        return [self.p.node_tasks[i] for i in range(self.p.n_nodes)]

    @property
    def steps(self):
        """(kind, first node index, node count) for each step the executor runs."""
        return [(_STEP_NAMES[self.p.steps[s].kind], self.p.steps[s].node,
                 self.p.steps[s].count) for s in range(self.p.n_steps)]

    @property
    def barriers(self):
        """Indices (into ``steps``) of the steps after which every thread meets; the
        executor leaves the others out (a later step does not depend on them)."""
        return [s for s in range(self.p.n_steps) if self.p.steps[s].barrier_after]

    @property
    def fused_groups(self):
        """Node index ranges computed as fused elementwise groups."""
        return [(self.p.steps[s].node, self.p.steps[s].count) for s in range(self.p.n_steps)
                if self.p.steps[s].kind == STEP_FUSED]

    @property
    def nodes_kept_in_cache(self):
        """Indices of the nodes whose values never reach memory: fused-group intermediates
        held in per-thread scratch or in the machine's tiles (their data is not written, so
        memory set aside for them is never touched)."""
        return fused_node_indices(self.p, False)

    @property
    def streamed_nodes(self):
        """Indices of the fused groups' nodes written out with streaming (non-temporal)
        stores (_kernels.stream_pays decides, per group)."""
        return fused_node_indices(self.p, True)

    @property
    def machine_groups(self):
        """The fused groups that run on the accumulator machine (plain float arithmetic
        along rows, csrc/fused_vm.h), as (first node index, node count)."""
        return [(self.p.steps[s].node, self.p.steps[s].count) for s in range(self.p.n_steps)
                if self.p.steps[s].kind == STEP_FUSED and self.p.steps[s].group.vm]

    def __repr__(self):
        return (f"Plan(n_threads={self.p.n_threads}, work_size={self.p.work_size}, "
                f"n_nodes={self.p.n_nodes}, fused_groups={len(self.fused_groups)})")


cdef Plan make_plan(ggml_tensor ** nodes, int n_nodes, int n_threads, bint fuse,
                    const unsigned char * pinned, object keepalive):
    cdef Plan plan = Plan.__new__(Plan)
    plan.p = plan_build(nodes, n_nodes, n_threads, fuse, pinned)
    plan.keepalive = keepalive
    return plan
