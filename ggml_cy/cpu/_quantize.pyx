# Quantization kernels (csrc/quantize.h, csrc/quantize_k.h) behind a flat, typed entry
# point: contiguous float32 values in, raw blocks out, split over threads by whole blocks.
#
# Rows of a quantized tensor are back to back (a row of ne0 values is ne0/QK blocks), so a
# C-contiguous (nrows, ne0) array quantizes as one run of nrows*ne0/QK blocks: the threads
# take equal runs of blocks whatever the row shape (one 16M-value row splits as well as
# 4096 rows). Shapes, dtypes and `out=` are checked by the front end (ggml_cy/quants).
from libc.stdint cimport int64_t, uint8_t

from ggml_cy.cpu._kernels cimport pool_run, check_signals, raise_interrupted

cdef extern from *:
    """
    #include <time.h>
    static inline long long gcy_q_now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    }
    static inline long long gcy_q_next(long long * c) { return __atomic_fetch_add(c, 1, __ATOMIC_RELAXED); }
    static inline void gcy_q_store(long long * c, long long v) { __atomic_store_n(c, v, __ATOMIC_SEQ_CST); }
    """
    long long gcy_q_now_ns() nogil
    long long gcy_q_next(long long * c) nogil
    void gcy_q_store(long long * c, long long v) nogil

cdef extern from "ggml_types.h" nogil:
    ctypedef struct ggml_cy_type_traits:
        const char * name
        int64_t blck_size
        size_t type_size
        int is_quantized
    ggml_cy_type_traits ggml_cy_type_traits_of(int type)

cdef extern from "quantize.h" nogil:
    ctypedef void (*ggml_cy_quantize_fn)(const float * x, void * y, int64_t k)
    ggml_cy_quantize_fn ggml_cy_quantize_fn_of(int type)

# Below this much work per thread a call stays on the calling thread: a parallel region
# costs microseconds (milliseconds when the machine is oversubscribed), a Q8_0 block ~5 ns,
# a K-quant or MXFP4 block ~1-10 us (the least-squares searches).
cdef enum:
    MIN_FAST_BLOCKS_PER_THREAD = 4096
    MIN_SLOW_BLOCKS_PER_THREAD = 4


cdef int64_t min_blocks_per_thread(int type) noexcept nogil:
    if type in (10, 11, 12, 13, 14, 39):      # Q2_K..Q6_K, MXFP4
        return MIN_SLOW_BLOCKS_PER_THREAD
    return MIN_FAST_BLOCKS_PER_THREAD


def can_quantize(int type):
    """True when ggml_cy has a quantizer for this ggml type number."""
    return ggml_cy_quantize_fn_of(type) != NULL


# Threads take chunks of CHUNK_BLOCKS blocks (of the slow types: MIN_SLOW_BLOCKS_PER_THREAD)
# from a shared counter (the result does not
# depend on who quantizes which block); the calling thread looks for Ctrl-C between its
# chunks every SIGNAL_CHECK_NS, and a KeyboardInterrupt stops every thread at its next chunk.
cdef long long CHUNK_BLOCKS = 4096
cdef long long SIGNAL_CHECK_NS = 50000000

ctypedef struct q_job:
    ggml_cy_quantize_fn fn
    const float * src
    uint8_t * dst
    long long nblk, blck, tsize, chunk
    long long next_chunk
    int interrupted


cdef void q_task(void * arg, int ith, int nth) noexcept nogil:
    cdef q_job * j = <q_job *>arg
    cdef long long nchunks = (j.nblk + j.chunk - 1) // j.chunk
    cdef long long c, b0, b1, next_check = gcy_q_now_ns() + SIGNAL_CHECK_NS
    while True:
        if ith == 0 and gcy_q_now_ns() >= next_check:
            if check_signals() != 0:
                j.interrupted = 1
                gcy_q_store(&j.next_chunk, nchunks)
                return
            next_check = gcy_q_now_ns() + SIGNAL_CHECK_NS
        c = gcy_q_next(&j.next_chunk)
        if c >= nchunks:
            return
        b0 = c * j.chunk
        b1 = b0 + j.chunk
        if b1 > j.nblk:
            b1 = j.nblk
        j.fn(j.src + b0 * j.blck, j.dst + b0 * j.tsize, (b1 - b0) * j.blck)


cdef int run_blocks(ggml_cy_quantize_fn fn, const float * src, uint8_t * dst, int64_t nblk,
                    int64_t blck, int64_t tsize, int nth, long long chunk) noexcept nogil:
    """Quantizes nblk blocks on up to nth threads of ggml_cy's pool (fork-safe). Returns 0,
    or 1 when Ctrl-C stopped it (the exception is set)."""
    cdef q_job j
    j.fn = fn
    j.src = src
    j.dst = dst
    j.nblk = nblk
    j.blck = blck
    j.tsize = tsize
    j.chunk = chunk
    j.next_chunk = 0
    j.interrupted = 0
    pool_run(q_task, &j, nth if nth > 1 else 1)
    return j.interrupted


def quantize_flat(const float[::1] src not None, uint8_t[::1] dst not None, int type,
                  int n_threads=1):
    """Quantize len(src) float32 values (a multiple of the type's block size) into dst
    (exactly len(src)/blck_size*type_size bytes) with up to n_threads threads."""
    cdef ggml_cy_quantize_fn fn = ggml_cy_quantize_fn_of(type)
    cdef ggml_cy_type_traits tr = ggml_cy_type_traits_of(type)
    if fn == NULL or tr.name == NULL:
        raise ValueError(f"ggml_cy cannot quantize to type {type}")
    cdef int64_t n = src.shape[0]
    cdef int64_t blck = tr.blck_size
    cdef int64_t tsize = <int64_t>tr.type_size
    if n % blck:
        raise ValueError(f"{n} values are not a multiple of the block size {blck}")
    cdef int64_t nblk = n // blck
    if dst.shape[0] != nblk * tsize:
        raise ValueError(f"out has {dst.shape[0]} bytes, {nblk * tsize} needed")
    if nblk == 0:
        return
    if n_threads < 1:
        n_threads = 1
    cdef int nth = n_threads
    cdef int64_t per = min_blocks_per_thread(type)
    if nblk < <int64_t>nth * per:
        nth = <int>max(1, nblk // per)
    cdef int stopped
    with nogil:
        stopped = run_blocks(fn, &src[0], &dst[0], nblk, blck, tsize, nth,
                             CHUNK_BLOCKS if per == MIN_FAST_BLOCKS_PER_THREAD else per)
    if stopped:
        raise_interrupted()     # Ctrl-C: dst is partly written


def type_traits(int type):
    """(name, blck_size, type_size) of a ggml type number, or None when it is not a type."""
    cdef ggml_cy_type_traits tr = ggml_cy_type_traits_of(type)
    if tr.name == NULL:
        return None
    return (tr.name.decode(), tr.blck_size, tr.type_size)
