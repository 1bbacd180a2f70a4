# ggml_cy.cpu._dequant: dequantization kernels (csrc/dequant.h) for ggml's quantized
# blocks, row-parallel over ggml_cy's worker pool (fork-safe; _kernels.pool_run). The checked front end is ggml_cy.quants
# (ggml_cy.dequantize); this module trusts its callers for the shapes it documents.
#
# Importing it installs the core's dequantize hook, so Tensor.numpy() of a quantized
# tensor returns float32 values.

from libc.stdint cimport uint8_t, int64_t

cimport numpy as cnp
import numpy as np

from ggml_cy.core._core cimport (ggml_cy_blck_size, ggml_cy_block_bytes, ggml_cy_is_quantized,
                                 GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16)
from ggml_cy.core import _core
from ggml_cy.cpu.threads import get_num_threads

cnp.import_array()

from ggml_cy.cpu._kernels cimport pool_run

cdef extern from "dequant.h" nogil:
    ctypedef void (*gcy_dq_block_fn)(const void * x, float * y)
    gcy_dq_block_fn gcy_dq_block_of(int type)
    void gcy_dequant_part(gcy_dq_block_fn fn, int64_t bs, int64_t ts, int64_t osz,
                          const uint8_t * src, int64_t src_stride, int64_t nrows,
                          int64_t nblk, char * dst, int64_t dst_stride, int kind,
                          int ith, int nt)
    void gcy_dequant_range(gcy_dq_block_fn fn, int64_t bs, int64_t ts, int64_t osz,
                           const uint8_t * src, int64_t src_stride, int64_t nblk,
                           char * dst, int64_t dst_stride, int kind,
                           int64_t b0, int64_t b1, int stream)
    int gcy_dequant_streams(int64_t out_bytes)
    int64_t gcy_dequant_next(int64_t * counter)
    int gcy_dequant_rows(int type, const uint8_t * src, int64_t src_stride, int64_t nrows,
                         int64_t nblk, char * dst, int64_t dst_stride, int kind, int nth)
    enum:
        GCY_DQ_F32
        GCY_DQ_F16
        GCY_DQ_BF16

ctypedef struct dq_job:
    gcy_dq_block_fn fn
    int64_t bs, ts, osz, src_stride, nrows, nblk, dst_stride
    const uint8_t * src
    char * dst
    int kind, stream
    int64_t total, chunk, nchunks
    int64_t next_chunk          # shared counter: the dynamic schedule


# values per chunk of the dynamic schedule (128 KiB of float32 output): small enough that a
# thread the OS delays (a busy machine) leaves its share to the others, large enough that
# taking a chunk costs nothing next to decoding it
cdef enum:
    DQ_CHUNK_VALUES = 32768


cdef void dq_task(void * arg, int ith, int nth) noexcept nogil:
    cdef dq_job * j = <dq_job *>arg
    cdef int64_t c, b0, b1
    while True:
        c = gcy_dequant_next(&j.next_chunk)
        if c >= j.nchunks:
            break
        b0 = c * j.chunk
        b1 = b0 + j.chunk
        if b1 > j.total:
            b1 = j.total
        gcy_dequant_range(j.fn, j.bs, j.ts, j.osz, j.src, j.src_stride, j.nblk, j.dst,
                          j.dst_stride, j.kind, b0, b1, j.stream)


cdef int dequant_rows_pool(int type, const uint8_t * src, int64_t src_stride, int64_t nrows,
                           int64_t nblk, char * dst, int64_t dst_stride, int kind,
                           int nth) noexcept nogil:
    """gcy_dequant_rows on up to nth threads of the pool (small work: fewer), the blocks
    handed out in chunks (dynamic schedule)."""
    cdef dq_job j
    cdef int64_t total = nrows * nblk
    j.fn = gcy_dq_block_of(type)
    if j.fn == NULL or kind < 0 or kind > 2:
        return -1
    if total <= 0:
        return 0
    j.bs = ggml_cy_blck_size(type)
    j.ts = <int64_t>ggml_cy_block_bytes(type)
    j.osz = 4 if kind == GCY_DQ_F32 else 2
    j.src = src
    j.src_stride = src_stride
    j.nrows = nrows
    j.nblk = nblk
    j.dst = dst
    j.dst_stride = dst_stride
    j.kind = kind
    j.total = total
    j.stream = gcy_dequant_streams(total * j.bs * j.osz)
    j.chunk = <int64_t>DQ_CHUNK_VALUES // j.bs
    if j.chunk < 1:
        j.chunk = 1
    j.nchunks = (total + j.chunk - 1) // j.chunk
    j.next_chunk = 0
    if nth < 1:
        nth = 1
    if total < 64 * <int64_t>nth:          # small work: fewer threads
        nth = <int>(total // 64) if total // 64 > 1 else 1
    if nth > j.nchunks:
        nth = <int>j.nchunks
    pool_run(dq_task, &j, nth)
    return 0


# output kinds by name (bf16 is written as uint16 bit patterns)
KINDS = {"float32": GCY_DQ_F32, "float16": GCY_DQ_F16, "bfloat16": GCY_DQ_BF16}


def copy_supported(int dst_type, int src_type):
    """Whether the graph's cpy/cont/dup can copy a src_type tensor into dst_type: a
    quantized src into f32, f16, bf16 (dequantize) or its own type (block copy)."""
    if not ggml_cy_is_quantized(src_type) or gcy_dq_block_of(src_type) == NULL:
        return False
    return dst_type in (GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16) or dst_type == src_type


def can_dequantize(int type):
    """True for the quantized types with a dequantizer (every one of GGMLType)."""
    return bool(ggml_cy_is_quantized(type)) and gcy_dq_block_of(type) != NULL


def dequantize_rows(raw, int type, cnp.ndarray out, int kind, int n_threads):
    """Dequantizes the rows of `raw` into `out`.

    raw: uint8 ndarray whose last axis holds whole rows of blocks (stride 1 along it); the
    other axes are flattened into rows (a view when numpy can, else a copy).
    out: C-contiguous, writeable, 2 bytes (kind F16/BF16) or 4 bytes (F32) per item, with
    as many items as raw's rows times the values per row. The caller checks all this; the
    checks here only keep memory safe."""
    if gcy_dq_block_of(type) == NULL:
        raise TypeError(f"no dequantizer for ggml type {type}")
    cdef int64_t bs = ggml_cy_blck_size(type), ts = <int64_t>ggml_cy_block_bytes(type)
    cdef cnp.ndarray r = raw
    if r.ndim == 0 or r.dtype != np.uint8:
        raise TypeError("raw must be a uint8 array of at least one dim")
    cdef int64_t row_bytes = r.shape[r.ndim - 1]
    if row_bytes % ts:
        raise ValueError(f"{row_bytes} bytes per row is not a whole number of blocks")
    cdef int64_t nblk = row_bytes // ts
    cdef int64_t osz = 4 if kind == GCY_DQ_F32 else 2
    if not out.flags.c_contiguous or not out.flags.writeable or out.itemsize != osz:
        raise ValueError("out must be C-contiguous, writeable, with the kind's item size")
    if r.size == 0:
        if out.size != 0:
            raise ValueError(f"out holds {out.size} values, the rows hold none")
        return out
    if r.ndim == 1:
        r = r.reshape(1, row_bytes)
    elif r.ndim > 2:
        r = r.reshape(-1, row_bytes)
    if row_bytes > 1 and r.strides[1] != 1:
        r = np.ascontiguousarray(r)
    cdef int64_t nrows = r.shape[0]
    if out.size != nrows * nblk * bs:
        raise ValueError(f"out holds {out.size} values, the rows hold {nrows * nblk * bs}")
    if nrows == 0 or nblk == 0:
        return out
    cdef const uint8_t * src = <const uint8_t *>cnp.PyArray_DATA(r)
    cdef int64_t src_stride = r.strides[0] if nrows > 1 else row_bytes
    cdef char * dst = <char *>cnp.PyArray_DATA(out)
    cdef int rc
    with nogil:
        rc = dequant_rows_pool(type, src, src_stride, nrows, nblk, dst, nblk * bs * osz, kind,
                              n_threads)
    if rc != 0:
        raise ValueError(f"dequantize: bad type {type} or kind {kind}")
    return out


def _numpy_of_tensor(raw, type, shape):
    """The core's hook for Tensor.numpy() of a quantized tensor: float32 values."""
    out = np.empty(shape, dtype=np.float32)
    return dequantize_rows(raw, int(type), out, GCY_DQ_F32, get_num_threads())


_core.set_dequantize_hook(_numpy_of_tensor)
