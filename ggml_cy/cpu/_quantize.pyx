# Quantization kernels (csrc/quantize.h, csrc/quantize_k.h) behind a flat, typed entry
# point: contiguous float32 values in, raw blocks out, split over threads by whole blocks.
#
# Rows of a quantized tensor are back to back (a row of ne0 values is ne0/QK blocks), so a
# C-contiguous (nrows, ne0) array quantizes as one run of nrows*ne0/QK blocks: the threads
# take equal runs of blocks whatever the row shape (one 16M-value row splits as well as
# 4096 rows). Shapes, dtypes and `out=` are checked by the front end (ggml_cy/quants).
from cython.parallel cimport parallel
from libc.stdint cimport int64_t, uint8_t

from ggml_cy.cpu._openmp cimport gcy_omp_thread_num, gcy_omp_num_threads

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


cdef void run_blocks(ggml_cy_quantize_fn fn, const float * src, uint8_t * dst, int64_t nblk,
                     int64_t blck, int64_t tsize, int nth) noexcept nogil:
    cdef int ith, n_act
    cdef int64_t per, b0, b1
    if nth <= 1:
        fn(src, dst, nblk * blck)
        return
    with parallel(num_threads=nth):
        ith = gcy_omp_thread_num()
        n_act = gcy_omp_num_threads()
        per = (nblk + n_act - 1) // n_act
        b0 = per * ith
        b1 = b0 + per
        if b1 > nblk:
            b1 = nblk
        if b0 < b1:
            fn(src + b0 * blck, dst + b0 * tsize, (b1 - b0) * blck)


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
    with nogil:
        run_blocks(fn, &src[0], &dst[0], nblk, blck, tsize, nth)


def type_traits(int type):
    """(name, blck_size, type_size) of a ggml type number, or None when it is not a type."""
    cdef ggml_cy_type_traits tr = ggml_cy_type_traits_of(type)
    if tr.name == NULL:
        return None
    return (tr.name.decode(), tr.blck_size, tr.type_size)
