# ggml_cy core: the C structs of ggml's programming model, documented field by field
# the way ggml.h documents them. Everything above this layer (kernels, graph, backends,
# front ends) reads and writes these structs; this layer holds no kernel code.
#
# Memory layout of a context (ggml's, seed 004):
#
#   mem_buffer: [obj hdr][payload ...pad16][obj hdr][payload ...pad16] ...
#                 ^ objects_begin                     ^ objects_end
#
#   Each object is a 32-byte `ggml_object` header followed by its payload, whose size is
#   padded up to GGML_MEM_ALIGN (16). A tensor payload is the `ggml_tensor` struct (a
#   multiple of 16 bytes) followed by its data (unless the context is no_alloc), so
#       used_mem after a tensor = GGML_OBJECT_SIZE + GGML_TENSOR_SIZE + pad16(nbytes).
#   `tensor_overhead()` = GGML_OBJECT_SIZE + GGML_TENSOR_SIZE is that fixed part:
#   32 + 336 = 368 bytes on 64-bit platforms. A view, or a tensor of a no_alloc context,
#   is a header only (368 bytes). Graphs and work buffers are objects of their own type.
#
# Owned pools are 64-byte aligned; an external mem_buffer starts at its first 16-byte
# aligned byte. Nothing here aborts: the C functions report failure by return value and
# the cdef factories raise Python exceptions (ContextMemoryError, ValueError, ...).

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint16_t, uint64_t
from cpython.buffer cimport Py_buffer
cimport numpy as cnp

cdef extern from "core_defs.h" nogil:
    # --- limits and sizes (ggml.h names) ---
    enum:
        GGML_MAX_DIMS        # 4: ne/nb have four entries, ne[0] innermost
        GGML_MAX_SRC         # 10 sources per op node
        GGML_MAX_OP_PARAMS   # 64 bytes of op parameters (int32/float slots)
        GGML_MAX_NAME        # 64 bytes of name, NUL terminated
        GGML_MEM_ALIGN       # 16: every object payload and tensor data is 16-byte aligned
        GGML_OBJECT_SIZE     # sizeof(ggml_object) == 32
        GGML_TENSOR_SIZE     # sizeof(ggml_tensor), a multiple of GGML_MEM_ALIGN

    # --- element types. Numbers follow ggml's enum ggml_type where ggml has the type;
    # U8 and BOOL are ggml_cy additions (BOOL holds relational results, one byte 0/1). ---
    ctypedef enum ggml_type:
        GGML_TYPE_F32
        GGML_TYPE_F16
        GGML_TYPE_I8
        GGML_TYPE_I16
        GGML_TYPE_I32
        GGML_TYPE_I64
        GGML_TYPE_F64
        GGML_TYPE_BF16
        GGML_TYPE_U8
        GGML_TYPE_BOOL
        GGML_TYPE_COUNT      # one past the largest type number (table sizes)
        # quantized types (blocks of blck_size values in type_size bytes, quant_blocks.h)
        GGML_TYPE_Q4_0
        GGML_TYPE_Q4_1
        GGML_TYPE_Q5_0
        GGML_TYPE_Q5_1
        GGML_TYPE_Q8_0
        GGML_TYPE_Q8_1
        GGML_TYPE_Q2_K
        GGML_TYPE_Q3_K
        GGML_TYPE_Q4_K
        GGML_TYPE_Q5_K
        GGML_TYPE_Q6_K
        GGML_TYPE_Q8_K
        GGML_TYPE_IQ2_XXS
        GGML_TYPE_IQ2_XS
        GGML_TYPE_IQ3_XXS
        GGML_TYPE_IQ1_S
        GGML_TYPE_IQ4_NL
        GGML_TYPE_IQ3_S
        GGML_TYPE_IQ2_S
        GGML_TYPE_IQ4_XS
        GGML_TYPE_IQ1_M
        GGML_TYPE_TQ1_0
        GGML_TYPE_TQ2_0
        GGML_TYPE_MXFP4
        GGML_TYPE_NVFP4
        GGML_TYPE_Q1_0
        GGML_TYPE_Q2_0

    # --- object kinds stored in a context's pool ---
    ctypedef enum ggml_object_type:
        GGML_OBJECT_TYPE_TENSOR
        GGML_OBJECT_TYPE_GRAPH
        GGML_OBJECT_TYPE_WORK_BUFFER

    # --- tensor flags ---
    enum:
        GGML_TENSOR_FLAG_INPUT
        GGML_TENSOR_FLAG_OUTPUT
        GGML_TENSOR_FLAG_PARAM

    # One entry of the context's object list. Lives in the pool right before its payload.
    ctypedef struct ggml_object:
        size_t offs            # payload offset from ctx.mem_buffer (16-byte aligned)
        size_t size            # payload size in bytes, padded to GGML_MEM_ALIGN
        ggml_object * next     # next object in creation order, NULL for the last
        int type               # a ggml_object_type
        char padding[4]

    # ggml_tensor. A numpy shape is ne reversed (trailing 1s dropped), numpy strides are
    # nb reversed. nb is signed (int64) in ggml_cy so that numpy's negative strides can be
    # described; ggml's own views never create negative strides.
    ctypedef struct ggml_tensor:
        int type                       # ggml_type
        void * buffer                  # backend buffer holding data (NULL: context memory)
        int64_t ne[4]                  # elements per dim; ne[0] is the innermost dim
        int64_t nb[4]                  # byte stride per dim: nb[0] = element size for
                                       # contiguous data, nb[i] = nb[i-1]*ne[i-1]
        int op                         # ggml_op that produces this tensor (0 = NONE, leaf)
        int32_t op_params[16]          # op parameters (GGML_MAX_OP_PARAMS bytes): ints,
                                       # or floats stored by bit pattern
        int32_t flags                  # GGML_TENSOR_FLAG_*
        ggml_tensor * src[10]          # op sources (GGML_MAX_SRC), NULL terminated in use
        ggml_tensor * view_src         # base tensor of a view (never itself a view), or NULL
        size_t view_offs               # byte offset of this view inside view_src's data
        void * data                    # first element (NULL for no_alloc headers)
        char name[64]                  # NUL-terminated name (GGML_MAX_NAME)
        void * extra                   # backend-specific data (CUDA: device bookkeeping)
        char padding[8]                # keeps sizeof a multiple of 16

    # The context: one memory pool and the list of objects carved from it.
    ctypedef struct ggml_context:
        size_t mem_size                # usable bytes of the pool
        void * mem_buffer              # 16-byte aligned start of the pool
        bint mem_buffer_owned          # pool allocated (and freed) by the context
        bint no_alloc                  # tensors get headers only, data placed later
        int n_objects                  # objects in the list
        ggml_object * objects_begin    # first object (NULL when empty)
        ggml_object * objects_end      # last object (NULL when empty)

    # Element sizes and names per type, indexed by ggml_type (0 size = unused slot).
    # ggml_type_valid/ggml_type_size cover the plain (one element per block) types only:
    # kernels that index elements use them, so a quantized type reads as "not valid" there.
    size_t ggml_type_size(int type)
    const char * ggml_type_name(int type)
    bint ggml_type_valid(int type)

cdef extern from "ggml_types.h" nogil:
    # Every type, quantized ones included (ggml's ggml_blck_size / ggml_type_size /
    # ggml_row_size; 0 / 0 / -1 for numbers that are not types).
    int64_t ggml_cy_blck_size(int type)
    size_t ggml_cy_block_bytes(int type)
    bint ggml_cy_type_known(int type)
    bint ggml_cy_is_quantized(int type)
    int64_t ggml_cy_row_size(int type, int64_t ne)

# --- C-level core API (implemented in _core.pyx), usable without the GIL ---
# Appends an object of `size` payload bytes; returns NULL (never aborts) when the pool
# lacks space or the size overflows; `needed`/`available` report the figures for errors.
cdef ggml_object * core_new_object(ggml_context * ctx, int type, size_t size,
                                   size_t * needed, size_t * available) noexcept nogil
# Contiguous byte strides for `type` and ne into nb; returns 0, or -1 on 64-bit overflow.
cdef int core_contiguous_strides(int type, const int64_t * ne, int64_t * nb) noexcept nogil
# Number of elements / rows / bytes of the tensor's logical extent.
cdef int64_t core_nelements(const ggml_tensor * t) noexcept nogil
cdef int64_t core_nrows(const ggml_tensor * t) noexcept nogil
cdef bint core_is_contiguous(const ggml_tensor * t) noexcept nogil
# Fills a stack/heap ggml_tensor header describing existing memory (no context needed):
# the kernels and the eager API use this to describe numpy arrays.
cdef void core_init_header(ggml_tensor * t, int type, const int64_t * ne,
                           const int64_t * nb, void * data) noexcept nogil
# Bytes spanned by the tensor's data (ggml_nbytes): 0 when any ne is 0, else
# type_size + sum((ne[i]-1)*|nb[i]|).
cdef int64_t core_nbytes(const ggml_tensor * t) noexcept nogil
# ggml_set_name: copies at most GGML_MAX_NAME-1 bytes (cut at a UTF-8 character
# boundary), always NUL terminated.
cdef void core_set_name(ggml_tensor * t, const char * name) noexcept nogil

# A work buffer of n bytes for one compute call (the graph's, the eager mul_mat's): the
# module's kept spare when it is free and n <= 64 MiB (returns 1), else a malloc (returns
# 2); hand it back with scratch_give(that value, the buffer). Called with the GIL held (the
# busy flag is set and cleared under it). Why: a fresh malloc of megabytes is a fresh mmap,
# and every call then pays a page fault per 4 KiB touched (seen as clear_page in a decode
# step's profile).
cdef int scratch_take(size_t n, char ** out) except -1
cdef void scratch_give(int src, char * p) noexcept

# --- Python-facing wrappers (cdef classes, implemented in _core.pyx) ---------------------
#
# Lifetime rules: a Tensor holds a reference to its Context, and an array returned by
# Tensor.numpy() holds the Tensor as its base, so the pool lives while any Tensor or array
# lives. Context.reset() bumps `generation`; a Tensor made in an older generation raises
# RuntimeError on use (its memory stays valid, its header may be reused).

cdef class Context:
    # The arena itself. mem_buffer is 16-byte aligned (64 for owned pools).
    cdef ggml_context ctx
    # Bumped by reset(); Tensor wrappers remember the value they were made in.
    cdef readonly unsigned long long generation
    # Owned pools: the pointer malloc/calloc returned (mem_buffer is aligned from it).
    cdef void * _owned_raw
    # External pools: the caller's buffer, held (PyObject_GetBuffer) until dealloc.
    cdef Py_buffer _view
    cdef bint _has_view
    # Other contexts this one points into (cross-context views/sources): kept alive.
    cdef list _deps
    cdef object __weakref__

    # Raises RuntimeError when the context was never initialised (subclass forgot
    # super().__init__) ; returns 0.
    cdef int check_ready(self) except -1
    # Keeps `other` (a Context, and the contexts it keeps alive) alive as long as this
    # context: call it when a tensor of this context points into another context's memory
    # (view_src, src[i]). Tensor.src / view_src wrap such pointers with the context whose
    # pool holds them, found among these; when that context was reset after it was first
    # kept (until this context is reset too), those wrappers are stale (RuntimeError).
    cdef int keep_alive(self, Context other) except -1

cdef class Tensor:
    # The header inside owner's pool (never owned by the wrapper).
    cdef ggml_tensor * t
    cdef Context owner
    # owner.generation at creation; a mismatch means owner was reset since.
    cdef unsigned long long generation

    # The live header, or NULL with RuntimeError set (stale after reset, or never made
    # by a Context).
    cdef ggml_tensor * ptr(self) except NULL

# Creates a tensor header (plus data unless ctx is no_alloc) in ctx's pool with contiguous
# strides. n_dims 1..4; ne[n_dims..3] are taken as 1. Raises ValueError (bad type, n_dims,
# negative ne), OverflowError (sizes beyond 64 bits) or ContextMemoryError; returns NULL
# only with a Python exception set. The header is zeroed: op NONE, no src, no name.
cdef ggml_tensor * core_new_tensor(Context ctx, int type, int n_dims,
                                   const int64_t * ne) except NULL
# A view of `a` in ctx (ggml_view_impl): ne/nb describe the view, `offset` is bytes from
# a's data. view_src resolves to a's base (never a view) with an absolute view_offs; data
# = a's data + offset (NULL while a has none) and buffer = a's buffer. Checks that every byte the
# view can touch lies inside a's extent (ValueError naming the shapes otherwise). Sets
# op = `op` and src[0] = a; op_params are left zero (callers fill them).
cdef ggml_tensor * core_new_view(Context ctx, ggml_tensor * a, int n_dims,
                                 const int64_t * ne, const int64_t * nb, int64_t offset,
                                 int op) except NULL
# ggml_view_tensor: a view with a's ne and nb, offset 0, op NONE (for in-place results).
cdef ggml_tensor * core_view_tensor(Context ctx, ggml_tensor * a) except NULL
# The Python wrapper of a tensor living in ctx's pool (a new wrapper each call; wrappers
# compare equal when they wrap the same header in the same generation).
cdef Tensor wrap_tensor(Context ctx, ggml_tensor * t)
# Byte extent [lo, hi) that a tensor with these ne/nb can touch, relative to its data
# (lo <= 0 only for negative strides); hi == lo == 0 when any ne is 0. Returns -1 on
# overflow.
cdef int core_extent(int type, const int64_t * ne, const int64_t * nb,
                     int64_t * lo, int64_t * hi) noexcept nogil

# RuntimeError when one of the n tensors reached from ctx (a graph's nodes, leafs) has its
# header, data, base or a source in a context ctx points into that was reset since
# (cross-context views, issue 17). Returns 0 at once when none was reset.
cdef int core_check_foreign_tensors(Context ctx, ggml_tensor ** ts, int n) except -1

# An uninitialized C-contiguous array of nd dims with dtype dt whose data starts on a
# multiple of `align` bytes (a power of two): a view of a uint8 array (its base) with
# `align` bytes to spare. ValueError for a negative dimension or an overflowing size.
cdef object core_aligned_empty(int nd, const cnp.npy_intp * dims, cnp.dtype dt,
                               size_t align)
