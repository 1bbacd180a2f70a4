# Eager entry of the float mul_mat kernel (csrc/mul_mat.h, issue 14 item 3): the C kernel
# the graph executor runs for MUL_MAT with f32/f16/bf16 weights, called on descriptors built
# from numpy buffers as one job of ggml_cy's worker pool (_kernels.pool_run). The front end
# (ggml_cy/quants/compute.py, ggml_cy.mul_mat) validates types and shapes; this checks what
# could corrupt memory.
from libc.stdint cimport int64_t, uint16_t, uintptr_t
from libc.string cimport memset

from ggml_cy.core._core cimport ggml_tensor, GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16
from ggml_cy.cpu._kernels cimport default_num_threads, pool_run
from ggml_cy.core._core cimport scratch_take, scratch_give

cdef extern from "mul_mat.h" nogil:
    size_t mm_work_floats_per_thread()
    void mm_compute(const ggml_tensor * dst, int ith, int nth, float * work)


cdef void set_header(ggml_tensor * t, int type, int64_t ne0, int64_t ne1, int64_t nb0,
                     int64_t nb1, const void * data) noexcept nogil:
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
    t.data = <void *> data


ctypedef struct mmf_job:
    const ggml_tensor * dst
    float * work
    size_t per_thread


cdef void mmf_task(void * arg, int ith, int nth) noexcept nogil:
    cdef mmf_job * j = <mmf_job *> arg
    mm_compute(j.dst, ith, nth, j.work + <size_t> ith * j.per_thread)


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


cdef _run(ggml_tensor * ta, const float[:, :] b, float[:, ::1] out, n_threads):
    cdef int64_t M = ta.ne[1], K = ta.ne[0], N = b.shape[0]
    if b.shape[1] != K or out.shape[0] != N or out.shape[1] != M:
        raise ValueError("mul_mat: shapes of a, b and out do not match")
    if M == 0 or N == 0:
        return
    cdef ggml_tensor tb, td
    set_header(&tb, GGML_TYPE_F32, K, N, b.strides[1], b.strides[0],
               <const void *> &b[0, 0] if K > 0 else NULL)
    set_header(&td, GGML_TYPE_F32, M, N, 4, out.strides[0], <void *> &out[0, 0])
    td.src[0] = ta
    td.src[1] = &tb
    cdef int nth = clamp_threads(n_threads, M * N * (K if K > 0 else 1))
    cdef size_t per = (mm_work_floats_per_thread() + 15) // 16 * 16
    cdef char * mem
    cdef int src = scratch_take(per * 4 * <size_t> nth + 64, &mem)
    cdef mmf_job job
    job.dst = &td
    job.work = <float *> ((<uintptr_t> mem + 63) & ~(<uintptr_t> 63))
    job.per_thread = per
    with nogil:
        pool_run(mmf_task, &job, nth)
    scratch_give(src, mem)


def mul_mat_f32(const float[:, :] a not None, const float[:, :] b not None,
                float[:, ::1] out not None, n_threads=None):
    """out[n, m] = sum_k a[m, k] * b[n, k] in f32 (ggml's mul_mat, float32 weights);
    a and b may be strided views."""
    cdef ggml_tensor ta
    cdef int64_t M = a.shape[0], K = a.shape[1]
    set_header(&ta, GGML_TYPE_F32, K, M, a.strides[1], a.strides[0],
               <const void *> &a[0, 0] if M > 0 and K > 0 else NULL)
    _run(&ta, b, out, n_threads)


def mul_mat_half(const uint16_t[:, :] a not None, bint bf16, const float[:, :] b not None,
                 float[:, ::1] out not None, n_threads=None):
    """The same with 16-bit weights: IEEE half bit patterns (bf16 False) or bfloat16 bit
    patterns (bf16 True), widened exactly to f32; b is not rounded."""
    cdef ggml_tensor ta
    cdef int64_t M = a.shape[0], K = a.shape[1]
    set_header(&ta, GGML_TYPE_BF16 if bf16 else GGML_TYPE_F16, K, M, a.strides[1],
               a.strides[0], <const void *> &a[0, 0] if M > 0 and K > 0 else NULL)
    _run(&ta, b, out, n_threads)
