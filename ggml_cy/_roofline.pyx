# Roofline loops for bench/: the fastest plain C the machine runs for a memory-bound add,
# measured in the same process as the kernels they bound (John McCalpin's STREAM "add").
#
# stream_add_f32: c[i] = a[i] + b[i] under prange(schedule='static'): each thread takes one
# contiguous block, as ggml splits rows. With nontemporal=True the blocks use AVX streaming
# stores (csrc/roofline.h), which skip the read-for-ownership of the output lines.
# fused_abcde_f32: out = a*b + c*d - e in one pass, the bound for the graph bench's fused case.
# Not part of the public API: the bench imports it, nothing else should.
from cython.parallel cimport prange
from libc.stdint cimport int64_t

cdef extern from "csrc/roofline.h" nogil:
    enum:
        GCY_ROOFLINE_HAVE_NT  # 1 when the non-temporal loops really stream (AVX build)
    void gcy_roofline_add_f32_nt(const float *a, const float *b, float *c, int64_t n)
    void gcy_roofline_fused_abcde_f32_nt(const float *a, const float *b, const float *c,
                                         const float *d, const float *e, float *out,
                                         int64_t n)

# True when nontemporal=True really uses streaming stores (the build had AVX).
HAVE_NONTEMPORAL = bool(GCY_ROOFLINE_HAVE_NT)


cdef int _check_threads(n_threads) except -1:
    if not isinstance(n_threads, int) or isinstance(n_threads, bool):
        raise TypeError(f"n_threads must be an int, got {type(n_threads).__name__}")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    return 0


cdef int _check_same_length(Py_ssize_t n, Py_ssize_t m, str name) except -1:
    if n != m:
        raise ValueError(f"{name} has {m} elements, expected {n} (all arrays the same length)")
    return 0


def stream_add_f32(const float[::1] a not None, const float[::1] b not None,
                   float[::1] c not None, n_threads=1, bint nontemporal=False):
    """c[:] = a + b on 1-D contiguous float32 arrays with n_threads threads.

    The plain loop is what a compiler makes of `c[i] = a[i] + b[i]` (vectorized, ordinary
    stores); nontemporal=True streams the stores past the caches (AVX builds only, see
    HAVE_NONTEMPORAL). Returns c.
    """
    _check_threads(n_threads)
    cdef Py_ssize_t n = a.shape[0]
    _check_same_length(n, b.shape[0], "b")
    _check_same_length(n, c.shape[0], "c")
    cdef int nth = n_threads
    cdef Py_ssize_t i, ith, dr, i0, i1
    if n == 0:
        return c.base
    cdef const float *pa = &a[0]
    cdef const float *pb = &b[0]
    cdef float *pc = &c[0]
    if not nontemporal:
        with nogil:
            for i in prange(n, schedule='static', num_threads=nth):
                pc[i] = pa[i] + pb[i]
    else:
        # one block per thread; block starts on a multiple of 16 floats (64 bytes) so that
        # only the first block needs a scalar head before aligned streaming stores
        dr = ((n + nth - 1) // nth + 15) // 16 * 16
        with nogil:
            for ith in prange(nth, schedule='static', num_threads=nth):
                i0 = dr * ith
                i1 = min(i0 + dr, n)
                if i0 < i1:
                    gcy_roofline_add_f32_nt(pa + i0, pb + i0, pc + i0, i1 - i0)
    return c.base


def fused_abcde_f32(const float[::1] a not None, const float[::1] b not None,
                    const float[::1] c not None, const float[::1] d not None,
                    const float[::1] e not None, float[::1] out not None,
                    n_threads=1, bint nontemporal=False):
    """out[:] = a*b + c*d - e in one pass over 1-D contiguous float32 arrays. Returns out.

    The compiler may contract a*b + c*d into an FMA in the plain loop: this is a speed bound,
    not a reference result.
    """
    _check_threads(n_threads)
    cdef Py_ssize_t n = a.shape[0]
    for name, arr in (("b", b), ("c", c), ("d", d), ("e", e), ("out", out)):
        _check_same_length(n, arr.shape[0], name)
    cdef int nth = n_threads
    cdef Py_ssize_t i, ith, dr, i0, i1
    if n == 0:
        return out.base
    cdef const float *pa = &a[0]
    cdef const float *pb = &b[0]
    cdef const float *pc = &c[0]
    cdef const float *pd = &d[0]
    cdef const float *pe = &e[0]
    cdef float *po = &out[0]
    if not nontemporal:
        with nogil:
            for i in prange(n, schedule='static', num_threads=nth):
                po[i] = pa[i] * pb[i] + pc[i] * pd[i] - pe[i]
    else:
        dr = ((n + nth - 1) // nth + 15) // 16 * 16
        with nogil:
            for ith in prange(nth, schedule='static', num_threads=nth):
                i0 = dr * ith
                i1 = min(i0 + dr, n)
                if i0 < i1:
                    gcy_roofline_fused_abcde_f32_nt(pa + i0, pb + i0, pc + i0, pd + i0,
                                                    pe + i0, po + i0, i1 - i0)
    return out.base
