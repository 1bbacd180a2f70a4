# Eager entry of the float mul_mat kernel (csrc/mul_mat.h, issue 14 item 3): the C kernel
# the graph executor runs for MUL_MAT with f32/f16/bf16 weights, called on descriptors built
# from numpy buffers as one job of ggml_cy's worker pool (_kernels.pool_run). The front end
# (ggml_cy/quants/compute.py, ggml_cy.mul_mat) validates types and shapes; this checks what
# could corrupt memory.
cimport cython
from libc.stdint cimport int64_t, uint16_t, uintptr_t
from libc.string cimport memset

import numpy as np

from ggml_cy.core._core cimport ggml_tensor, GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16
from ggml_cy.core._core cimport GGML_TYPE_Q4_0, GGML_TYPE_Q8_0
from ggml_cy.core._core cimport Tensor
from ggml_cy.cpu._kernels cimport (default_num_threads, pool_run, pool_run_dyn, mm_deals,
                                   mm_deals_few)
from ggml_cy.core._core cimport scratch_take, scratch_give

cdef extern from "mul_mat.h" nogil:
    size_t mm_work_floats_for(const ggml_tensor * dst, int nth)
    size_t mm_work_floats_upto(const ggml_tensor * dst, int nth)
    int mm_ndeal_takes(const ggml_tensor * dst, int nth)
    ctypedef struct mm_ndeal_plan:
        int thin
        int64_t dim
        int64_t unit
        int64_t ntasks
        size_t pre
    int mm_ndeal_plan_of(const ggml_tensor * dst, int nth, mm_ndeal_plan * p)
    void mm_compute(const ggml_tensor * dst, int ith, int nth, float * work)
    void mm_compute_dealt(const ggml_tensor * dst, int64_t * ctrs, int ith, int nth,
                          float * work)
    enum: MM_DEAL_STRIDE
    void mm_grid(int64_t M, int64_t N, int64_t K, int64_t nbatch, int nth, int64_t * gm,
                 int64_t * gn)
    void mm_grid_dealt(int64_t M, int64_t N, int64_t K, int64_t nbatch, int nth, int64_t * gm,
                       int64_t * gn)
    int mm_amx_ready()
    int mm_gemv_applies(const ggml_tensor * dst)
    void mm_gemv_dyn(const ggml_tensor * dst, int64_t * next, int nth)
    int mm_bf16_engine()
    int mm_thin_built_takes(int type, int64_t nrows)
    ctypedef struct mm_repack:
        unsigned int magic
        int type
        int64_t ne0
        int64_t ne1
        int64_t nb1
        const void * src
        const char * data
    enum: MM_RP_MAGIC
    enum: MM_RP_G
    int64_t mm_repack_bytes(int type, int64_t K, int64_t M)
    int mm_repack_supported(int type, int64_t K)
    void mm_repack_fill(const ggml_tensor * a, char * out, int64_t g0, int64_t g1)
    int mm_bf16_rp_used()
# the headers mul_mat.h includes, as build dependencies; after mul_mat.h's block because
# Cython emits the includes in this order and mul_mat_bf16.h must come through mul_mat.h
include "_mul_mat_deps.pxi"
include "_mm_dealt.pxi"


def amx_ready():
    """True when BF16-weight mul_mat runs on Intel AMX tiles here (csrc/mul_mat_amx.h): the
    CPU has AMX-BF16, Linux granted the tile state, the level in use is the CPU's best (no
    GGML_CY_CPU_FEATURES cap below it) and GGML_CY_NO_AMX is not set."""
    return bool(mm_amx_ready())


def bf16_engine():
    """What computes BF16-weight mul_mat here: "AMX tiles", "AVX512-BF16 (VDPBF16PS)" or
    "f32 FMAs (VDPBF16PS order)"; b is rounded to bf16 on each (ggml's rule)."""
    return ("f32 FMAs (VDPBF16PS order)", "AVX512-BF16 (VDPBF16PS)", "AMX tiles")[mm_bf16_engine()]


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
    int64_t * ctrs      # the task counters of mm_compute_dealt (nth lines, zeroed)


cdef void mmf_task(void * arg, int ith, int nth) noexcept nogil:
    cdef mmf_job * j = <mmf_job *> arg
    mm_compute(j.dst, ith, nth, j.work + <size_t> ith * j.per_thread)


cdef void mmf_dealt_task(void * arg, int ith, int nth) noexcept nogil:
    """Tasks dealt from the job's counters; workers optional (a late one is not waited for)."""
    cdef mmf_job * j = <mmf_job *> arg
    mm_compute_dealt(j.dst, j.ctrs, ith, nth, j.work + <size_t> ith * j.per_thread)


ctypedef struct mmv_job:
    const ggml_tensor * dst
    int64_t next        # the claim counter


cdef void mmv_task(void * arg, int ith, int nth) noexcept nogil:
    """(mvf32) The mat-vec's 16-row chunks claimed from a counter; workers optional (a late
    one is not waited for), the bits those of mm_compute (csrc/mul_mat.h, mm_gemv_dyn)."""
    cdef mmv_job * j = <mmv_job *> arg
    mm_gemv_dyn(j.dst, &j.next, nth)


def _thin_takes(int type, int64_t nrows):
    """True when this dispatch level gives a task of nrows rows of b with weights of GGML
    type `type` to the packed path's thin tasks (csrc/mul_mat_thin.h; tests)."""
    return mm_thin_built_takes(type, nrows) != 0


def _grids(int64_t M, int64_t N, int64_t K, int64_t nbatch, int nth):
    """The packed f32/f16 path's task grids for a product of M x K weights by N rows of b
    (nbatch matrices) on nth threads: ((gm, gn) split statically, (gm, gn) dealt from a
    counter): M cut into gm parts, N into gn parts (tests and probes)."""
    if M < 1 or N < 1 or K < 1 or nbatch < 1 or nth < 1:
        raise ValueError("_grids: every size must be >= 1")
    cdef int64_t gm, gn, dm, dn
    mm_grid(M, N, K, nbatch, nth, &gm, &gn)
    mm_grid_dealt(M, N, K, nbatch, nth, &dm, &dn)
    return (gm, gn), (dm, dn)


def _ndeal_plan(int64_t M, int64_t N, int64_t K, int type, int nth):
    """How a product of M x K weights of GGML type `type` (F32, F16, BF16) by N x K rows of
    b runs on nth threads by csrc/mul_mat_ndeal.h: None when that path does not take it, else
    a dict (thin: the thin tiles; ntasks; pre_floats: each thread's copy of the whole
    operand). Tests and probes."""
    if M < 1 or N < 1 or K < 1 or nth < 1:
        raise ValueError("_ndeal_plan: every size must be >= 1")
    if type not in (GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16):
        raise ValueError("_ndeal_plan: float weights only (F32, F16, BF16)")
    cdef ggml_tensor ta, tb, td
    cdef int64_t es = 4 if type == GGML_TYPE_F32 else 2
    set_header(&ta, type, K, M, es, K * es, NULL)
    set_header(&tb, GGML_TYPE_F32, K, N, 4, K * 4, NULL)
    set_header(&td, GGML_TYPE_F32, M, N, 4, M * 4, NULL)
    td.src[0] = &ta
    td.src[1] = &tb
    cdef mm_ndeal_plan p
    if not mm_ndeal_plan_of(&td, nth, &p):
        return None
    return {"thin": bool(p.thin), "ntasks": p.ntasks, "pre_floats": p.pre}


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
    cdef mmv_job vjob
    if nth > 1 and mm_gemv_applies(&td):
        vjob.dst = &td
        vjob.next = 0
        with nogil:
            pool_run_dyn(mmv_task, &vjob, nth)
        return
    cdef size_t per = (mm_work_floats_for(&td, nth) + 15) // 16 * 16
    cdef char * mem
    cdef size_t ctr_bytes = <size_t> nth * MM_DEAL_STRIDE * sizeof(int64_t)
    cdef int src = scratch_take(ctr_bytes + per * 4 * <size_t> nth + 64, &mem)
    cdef mmf_job job
    job.dst = &td
    job.ctrs = <int64_t *> ((<uintptr_t> mem + 63) & ~(<uintptr_t> 63))
    memset(job.ctrs, 0, ctr_bytes)
    job.work = <float *> (<char *> job.ctrs + ctr_bytes)
    job.per_thread = per
    with nogil:
        if mm_dealt(&td, nth):
            pool_run_dyn(mmf_dealt_task, &job, nth)
        else:
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
    """The same with 16-bit weights: IEEE half bit patterns (bf16 False: widened exactly to
    f32, b not rounded) or bfloat16 bit patterns (bf16 True: ggml's rule, b rounded to
    bfloat16 to nearest even, exact products summed in f32; VDPBF16PS where the CPU has
    AVX512_BF16, csrc/mul_mat_bf16.h)."""
    cdef ggml_tensor ta
    cdef int64_t M = a.shape[0], K = a.shape[1]
    set_header(&ta, GGML_TYPE_BF16 if bf16 else GGML_TYPE_F16, K, M, a.strides[1],
               a.strides[0], <const void *> &a[0, 0] if M > 0 and K > 0 else NULL)
    _run(&ta, b, out, n_threads)


# ------------------------------------------------------------------ row-interleaved copies
cdef extern from *:
    """
    #if defined(__AVX512F__) && defined(__AVX512BW__)
    #define GCY_Q4_0_RP_BUILT 1
    #else
    #define GCY_Q4_0_RP_BUILT 0
    #endif
    """
    int GCY_Q4_0_RP_BUILT

# whether this level's kernels use a Q4_0 copy (vecdot.h's vd_q4_0_rp16 needs AVX-512BW)
Q4_0_RP_BUILT = bool(GCY_Q4_0_RP_BUILT)

ctypedef struct rp_job:
    const ggml_tensor * a
    char * out
    int64_t groups


cdef void rp_task(void * arg, int ith, int nth) noexcept nogil:
    cdef rp_job * j = <rp_job *> arg
    mm_repack_fill(j.a, j.out, j.groups * ith // nth, j.groups * (ith + 1) // nth)


@cython.no_gc_clear      # the tensor reference must outlive __dealloc__'s check
cdef class MatvecCopy:
    """A row-interleaved copy of a 2-D float weight tensor for the graph's mat-vec (decode)
    path; see repack_for_matvec. While this object lives (and the tensor still has the data
    pointer, type, shape and row stride it had), mul_mat nodes with at most 4 columns read
    the copy instead of the tensor. Dropping the object detaches it."""
    cdef Tensor _tensor
    cdef ggml_tensor * _t
    cdef object _buf
    cdef mm_repack hdr

    @property
    def nbytes(self):
        """Bytes of the copy."""
        return int(self._buf.nbytes) - 64 if self._buf is not None else 0

    cdef bint _live(self):
        # the header is still the tensor's (its context not reset since) and points here
        return (self._t != NULL and self._tensor is not None and self._tensor.owner is not None
                and self._tensor.owner.generation == self._tensor.generation
                and self._t.extra == <void *> &self.hdr)

    @property
    def attached(self):
        """Whether the tensor still points to this copy."""
        return self._live()

    def detach(self):
        """Stops the tensor from using the copy (mul_mat reads the tensor again)."""
        if self._live():
            self._t.extra = NULL
        self._t = NULL

    def __dealloc__(self):
        if self._live():
            self._t.extra = NULL


def repack_helps(int type):
    """Whether this build's graph kernels read a row-interleaved copy of a weight of this
    type (F32, F16 everywhere; BF16 where VDPBF16PS runs its dots; Q4_0 and Q8_0 where
    AVX-512 runs the dots)."""
    if type in (GGML_TYPE_F32, GGML_TYPE_F16):
        return True
    if type == GGML_TYPE_BF16:
        return bool(mm_bf16_rp_used())
    return (type == GGML_TYPE_Q4_0 or type == GGML_TYPE_Q8_0) and Q4_0_RP_BUILT


def repack_for_matvec(Tensor tensor not None, n_threads=None):
    """Attaches a row-interleaved copy of a 2-D F32/F16/BF16 weight tensor (or Q4_0 / Q8_0
    with a multiple of 256 values per row) for the graph's mat-vec paths (float mul_mat with at
    most 4 columns; quantized mul_mat's dots at any column count) and returns it (a
    MatvecCopy; keep it: dropping it detaches the copy).

    The mat-vec then streams one contiguous copy (16 rows interleaved per element of K)
    instead of transposing 16 rows in registers, with the same bits: every output is the
    same FMA chain over K as on every other path. The copy is a snapshot of the values:
    values written into the tensor afterwards are not seen until it is repacked again (a
    model's weights never change). It costs as much memory as the tensor, and is ignored by
    views of the tensor and by other tensors over the same memory.

    BF16: the copy holds the bf16 pairs as dwords (ggml's rule, b rounded to bfloat16, the
    pairs dotted by VDPBF16PS); where the CPU lacks AVX512_BF16 the kernels ignore it
    (repack_helps(BF16) is False there), with the same bits either way."""
    cdef ggml_tensor * t = tensor.ptr()     # raises for a stale or detached tensor
    if t.type not in (GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0,
                      GGML_TYPE_Q8_0):
        raise TypeError("repack_for_matvec: the tensor must be F32, F16, BF16, Q4_0 or Q8_0")
    cdef bint quant = t.type == GGML_TYPE_Q4_0 or t.type == GGML_TYPE_Q8_0
    cdef int64_t es = 4 if t.type == GGML_TYPE_F32 else (
        18 if t.type == GGML_TYPE_Q4_0 else (34 if t.type == GGML_TYPE_Q8_0 else 2))
    if quant and not mm_repack_supported(t.type, t.ne[0]):
        raise ValueError("repack_for_matvec: a Q4_0 / Q8_0 tensor's rows must hold a "
                         "multiple of 256 values")
    if t.ne[2] != 1 or t.ne[3] != 1 or t.nb[0] != es or t.nb[1] < t.ne[0] // (
            32 if quant else 1) * es:
        raise ValueError("repack_for_matvec: the tensor must be 2-D with adjacent elements "
                         "in each row")
    if t.ne[0] <= 0 or t.ne[1] <= 0 or t.data == NULL:
        raise ValueError("repack_for_matvec: the tensor has no data")
    cdef int64_t nbytes = mm_repack_bytes(t.type, t.ne[0], t.ne[1])
    buf = np.empty(nbytes + 64, np.uint8)
    cdef unsigned char[::1] view = buf
    cdef char * out = <char *> ((<uintptr_t> &view[0] + 63) & ~(<uintptr_t> 63))
    cdef rp_job job
    job.a = t
    job.out = out
    job.groups = (t.ne[1] + MM_RP_G - 1) // MM_RP_G
    cdef int nth = default_num_threads() if n_threads is None else int(n_threads)
    if nth < 1:
        raise ValueError(f"n_threads must be >= 1, got {nth}")
    if nth > job.groups:
        nth = <int> job.groups
    with nogil:
        pool_run(rp_task, &job, nth)
    cdef MatvecCopy c = MatvecCopy.__new__(MatvecCopy)
    c._tensor = tensor
    c._t = t
    c._buf = buf
    c.hdr.magic = MM_RP_MAGIC
    c.hdr.type = t.type
    c.hdr.ne0 = t.ne[0]
    c.hdr.ne1 = t.ne[1]
    c.hdr.nb1 = t.nb[1]
    c.hdr.src = t.data
    c.hdr.data = out
    t.extra = <void *> &c.hdr
    return c
