# Eager entry points of the quantized-weight kernels (csrc/mul_mat_q.h, csrc/get_rows.h):
# the same C kernels the graph executor runs, called on descriptors built from numpy
# buffers, as one job of ggml_cy's worker pool (_kernels.pool_run). The front end (ggml_cy/quants/compute.py)
# validates shapes, types and ids; these functions only check what could corrupt memory.
from libc.stdint cimport int64_t, int32_t, uint8_t, uintptr_t
from libc.string cimport memset

from ggml_cy.core._core cimport ggml_tensor, GGML_TYPE_F32, GGML_TYPE_I32
from ggml_cy.cpu._kernels cimport default_num_threads, pool_run
from ggml_cy.core._core cimport scratch_take, scratch_give

cdef extern from "ggml_types.h" nogil:
    ctypedef struct ggml_cy_type_traits:
        const char * name
        int64_t blck_size
        size_t type_size
        int is_quantized
    ggml_cy_type_traits ggml_cy_type_traits_of(int type)

cdef extern from "mul_mat_q.h" nogil:
    int mmq_supported(int type)
    int vd_partner(int type)
    size_t mmq_work_size(const ggml_tensor * dst)
    void mmq_convert_b(const ggml_tensor * dst, int ith, int nth, char * wdata)
    void mmq_convert_b_shared(const ggml_tensor * dst, char * wdata)
    size_t mmq_counter_offset(const ggml_tensor * dst)
    int mmq_dots(const ggml_tensor * dst, int ith, int nth, const char * wdata)

cdef extern from "get_rows.h" nogil:
    int gr_supported(int type)
    int gr_compute(const ggml_tensor * dst, int ith, int nth)


def mul_mat_supported(int type):
    """True when mul_mat takes quantized weights of this ggml type number."""
    return bool(ggml_cy_type_traits_of(type).is_quantized and mmq_supported(type))


def mul_mat_path(int type):
    """'integer' (b converted to the vec-dot partner, integer SIMD dots), 'dequant'
    (weights dequantized tile by tile, f32 dots) or None (not supported)."""
    if not mul_mat_supported(type):
        return None
    return "integer" if vd_partner(type) >= 0 else "dequant"


def get_rows_supported(int type):
    """True when get_rows reads tables of this ggml type number."""
    return bool(gr_supported(type))


cdef void set_header(ggml_tensor * t, int type, int64_t ne0, int64_t ne1, int64_t nb0,
                     int64_t nb1, void * data) noexcept nogil:
    memset(t, 0, sizeof(ggml_tensor))
    t.type = type
    t.ne[0] = ne0
    t.ne[1] = ne1
    t.ne[2] = 1
    t.ne[3] = 1
    t.nb[0] = nb0
    t.nb[1] = nb1
    t.nb[2] = nb1 * ne1
    t.nb[3] = t.nb[2]
    t.data = data


cdef int clamp_threads(n_threads, int64_t work) except -1:
    cdef int n = default_num_threads() if n_threads is None else int(n_threads)
    if n < 1:
        raise ValueError(f"n_threads must be >= 1, got {n}")
    # below ~64K multiply-adds per thread a parallel region costs more than it saves
    cdef int64_t most = work // 65536
    if most < 1:
        most = 1
    if n > most:
        n = <int> most
    return n


ctypedef struct mm_job:
    const ggml_tensor * dst
    char * work
    int rc


cdef void mm_task(void * arg, int ith, int nth) noexcept nogil:
    # phase 1 without a barrier (rows claimed by the threads that run), then the items
    cdef mm_job * j = <mm_job *> arg
    mmq_convert_b_shared(j.dst, j.work)
    if mmq_dots(j.dst, ith, nth, j.work) < 0:
        j.rc = -1


ctypedef struct gr_job:
    const ggml_tensor * dst
    int rc


cdef void gr_task(void * arg, int ith, int nth) noexcept nogil:
    cdef gr_job * j = <gr_job *> arg
    if gr_compute(j.dst, ith, nth) < 0:
        j.rc = -1


def mul_mat_q(const uint8_t[:, ::1] a not None, int type, int64_t K,
              const float[:, :] b not None, float[:, ::1] out not None, n_threads=None):
    """out[n, m] = sum_k dequant(a)[m, k] * b[n, k] with a's rows raw blocks of `type`
    (K values each), computed ggml's way (b converted once to the vec-dot partner)."""
    cdef ggml_cy_type_traits tr = ggml_cy_type_traits_of(type)
    if not tr.is_quantized or not mmq_supported(type):
        raise TypeError(f"mul_mat: no kernel for weights of type {type}")
    if K <= 0 or K % tr.blck_size != 0:
        raise ValueError(f"mul_mat: K={K} is not a positive multiple of the block size "
                         f"{tr.blck_size}")
    cdef int64_t M = a.shape[0], N = b.shape[0]
    if a.shape[1] != (K // tr.blck_size) * <int64_t> tr.type_size:
        raise ValueError(f"mul_mat: weight rows have {a.shape[1]} bytes, K={K} needs "
                         f"{(K // tr.blck_size) * tr.type_size}")
    if b.shape[1] != K or out.shape[0] != N or out.shape[1] != M:
        raise ValueError("mul_mat: shapes of b / out do not match")
    cdef ggml_tensor ta, tb, td
    set_header(&ta, type, K, M, tr.type_size, a.strides[0], <void *> &a[0, 0] if M > 0 else NULL)
    set_header(&tb, GGML_TYPE_F32, K, N, b.strides[1], b.strides[0],
               <void *> &b[0, 0] if N > 0 else NULL)
    set_header(&td, GGML_TYPE_F32, M, N, 4, out.strides[0], <void *> &out[0, 0] if M > 0 and N > 0 else NULL)
    if M == 0 or N == 0:
        return
    td.src[0] = &ta
    td.src[1] = &tb
    cdef int nth = clamp_threads(n_threads, M * N * K)
    cdef size_t ws = mmq_work_size(&td)
    cdef char * work_mem
    cdef int src = scratch_take(ws + 64, &work_mem)
    cdef char * work = <char *> ((<uintptr_t> work_mem + 63) & ~(<uintptr_t> 63))
    cdef mm_job job
    job.dst = &td
    job.work = work
    job.rc = 0
    memset(work + mmq_counter_offset(&td), 0, 64)
    with nogil:
        pool_run(mm_task, &job, nth)
    scratch_give(src, work_mem)
    if job.rc < 0:
        raise TypeError(f"mul_mat: no kernel for weights of type {type}")


def get_rows(const uint8_t[:, ::1] table not None, int type, int64_t ne0,
             const int32_t[::1] ids not None, float[:, ::1] out not None, n_threads=None):
    """out[i] = dequant(table row ids[i]) (f32). ids must already be in range."""
    cdef ggml_cy_type_traits tr = ggml_cy_type_traits_of(type)
    if tr.name == NULL or not gr_supported(type):
        raise TypeError(f"get_rows: no kernel for tables of type {type}")
    if ne0 < 0 or ne0 % tr.blck_size != 0:
        raise ValueError(f"get_rows: row length {ne0} is not a multiple of {tr.blck_size}")
    cdef int64_t R = table.shape[0], n = ids.shape[0]
    if table.shape[1] != (ne0 // tr.blck_size) * <int64_t> tr.type_size:
        raise ValueError("get_rows: table rows do not hold ne0 values of this type")
    if out.shape[0] != n or out.shape[1] != ne0:
        raise ValueError("get_rows: out has the wrong shape")
    cdef int64_t i
    for i in range(n):
        if ids[i] < 0 or ids[i] >= R:
            raise IndexError(f"get_rows: row id {ids[i]} is out of range for a table of "
                             f"{R} rows")
    if n == 0 or ne0 == 0:
        return
    cdef ggml_tensor ta, ti, td
    set_header(&ta, type, ne0, R, tr.type_size, table.strides[0],
               <void *> &table[0, 0] if R > 0 else NULL)
    set_header(&ti, GGML_TYPE_I32, n, 1, 4, 4 * n, <void *> &ids[0])
    set_header(&td, GGML_TYPE_F32, ne0, n, 4, out.strides[0], <void *> &out[0, 0])
    td.src[0] = &ta
    td.src[1] = &ti
    cdef int nth = clamp_threads(n_threads, n * ne0 // 4)
    cdef gr_job job
    job.dst = &td
    job.rc = 0
    with nogil:
        pool_run(gr_task, &job, nth)
    if job.rc < 0:
        raise IndexError("get_rows: a row id is out of range")
