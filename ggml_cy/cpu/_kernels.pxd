# The CPU kernel layer's contract. Kernels take ggml_tensor descriptors (type, ne, nb,
# data, op, op_params, src) and nothing else: no Python objects, noexcept nogil, callable
# from the eager numpy-style API and from the graph executor alike (ggml:
# ggml_compute_forward). Implementation: _kernels.pyx (rendered from _kernels.pyx.tp).
from libc.stdint cimport int64_t
from ggml_cy.core._core cimport ggml_tensor

# The op enum: ggml_cy.core._ops (rendered from the op table).

cdef extern from "kernels_elem.h" nogil:
    enum:
        # Extra bit in compute_parallel's/compute_forward's result: an integer power had
        # a negative exponent (numpy raises ValueError "Integers to negative integer
        # powers are not allowed."); those elements are 0.
        KERN_STATUS_NEG_INT_POWER
        # op_params slots: float32 params in slots 0-1 (ggml's layout); when
        # op_params[KERN_PARAM_F64_FLAG_SLOT] == 1, exact float64 copies start at slot
        # KERN_PARAM_F64_SLOT (two slots each). Write them with kernel_set_params.
        KERN_PARAM_F64_SLOT
        KERN_PARAM_F64_FLAG_SLOT

# Stores up to two parameters of an elementwise op (LEAKY_RELU slope, CLAMP min/max,
# SCALE s, ELU alpha) into t.op_params: as float32 (ggml's slots) and as exact float64.
cdef void kernel_set_params(ggml_tensor * t, int n, const double * values) noexcept nogil

# Name of an op ("ADD", "SUB", ...; ggml's GGML_OP_NAME table), "?" when out of range.
cdef const char * op_name(int op) noexcept nogil

# 1 when the CPU kernels implement `op` for these types (src1_type -1 for unary ops).
cdef bint op_supported(int op, int dst_type, int src0_type, int src1_type) noexcept nogil

# Elementwise ops: dst = op(src0[, src1]) with dst.ne the output shape, each source's ne
# dividing dst.ne per dim (ggml's tiling; ne 1 = broadcast), any signed byte strides.
# Copy ops (DUP/CPY/CONT): same element count, any shapes (flat unravel), any type pair.
# Thread `ith` of `nth` computes its share of dst's rows (ggml's ith/nth split). Returns 0,
# or -1 when the op/type combination is not supported (dst is then untouched).
cdef int compute_forward(ggml_tensor * dst, int ith, int nth) noexcept nogil

# Runs compute_forward on n_threads inside one parallel region (a single thread, with no
# region entered, for small work) and returns the floating-point exception flags
# (FE_DIVBYZERO | FE_INVALID | FE_OVERFLOW | FE_UNDERFLOW) that numpy would report for
# this op, OR-ed over threads; -1 when unsupported. Integer division by zero raises
# FE_DIVBYZERO and integer overflow in floor_divide raises FE_OVERFLOW, as numpy does.
cdef int compute_parallel(ggml_tensor * dst, int n_threads) noexcept nogil

# Streaming (non-temporal) stores pay off for an output of out_bytes in a call that reads
# and writes working_set_bytes: only beyond the last-level cache (issue 14). The fused
# executor asks this too. llc_bytes: the LLC size measured at import.
cdef bint stream_pays(int64_t out_bytes, int64_t working_set_bytes, int nth,
                      bint one_pass, bint share=*) noexcept nogil
cdef int64_t llc_bytes() noexcept nogil

# Threads actually worth using for this node (1 below the size where a parallel region
# pays off); compute_parallel applies it itself.
cdef int threads_for(const ggml_tensor * dst, int n_threads) noexcept nogil

# Merges adjacent dims of an N-D iteration space (numpy order: dim 0 outermost) that share
# one broadcast/stride pattern across all `nops` operands, in place. shape[nd];
# strides[iop][nd] in bytes (0 for broadcast). Size-1 dims are dropped. Returns the new nd
# (0 for a scalar). Operand 0 is the output. Used by the front ends before building the
# (at most 4-D) descriptors.
cdef int merge_dims(int nd, int64_t * shape, int nops, int64_t ** strides) noexcept nogil

# The default thread count: the calling thread's ggml_cy.threads override, else the
# process-wide default (both set through ggml_cy.cpu.threads).
cdef int default_num_threads() noexcept nogil

# ggml_cy's worker pool (csrc/gcy_pool.h; fork-safe, replaces OpenMP): fn(arg, ith, nth)
# runs on nth threads, the caller being ith 0; returns the nth actually used (fn must
# cope with a smaller one). pool_barrier: the current job's threads meet.
# One pool per process: other modules call these (never include gcy_pool.h themselves).
ctypedef void (*gcy_task_fn)(void * arg, int ith, int nth) noexcept nogil
cdef int pool_run(gcy_task_fn fn, void * arg, int nth) noexcept nogil
# pool_run_dyn (issue 14): workers 1..nth-1 are optional helpers that a late wake-up
# leaves out; fn(arg, 0, nth) alone must finish the job (a shared work counter) and fn
# must not call pool_barrier. The caller waits only for the workers that joined.
cdef int pool_run_dyn(gcy_task_fn fn, void * arg, int nth) noexcept nogil
# The chunk dealing of such jobs: nchunks chunks cut into nranges contiguous ranges, each
# with its own counter (ctrs[r * DYN_CTR_STRIDE], zeroed by the caller). dyn_next gives a
# thread whose own range is `home` its next chunk -- its own range first, then what is left
# of the others -- or -1 when all are taken; *step is the thread's cursor (starts at 0).
ctypedef struct dyn_ranges:
    int64_t * ctrs
    int nranges
    int64_t nchunks
    int64_t cs              # units per chunk (the caller's unit: blocks, rows ...)
    int64_t units
cdef enum:
    DYN_CTR_STRIDE = 8      # int64s between two ranges' counters: one cache line each
cdef int64_t dyn_next(dyn_ranges * d, int home, int * step) noexcept nogil
cdef void pool_barrier() noexcept nogil
# Whether float mul_mat on nth threads deals its tasks (csrc/mul_mat.h, mm_compute_dealt)
# instead of ggml's static split: from 9 threads on, unless _set_mm_dealing(False) (tests
# and probes compare the two).
cdef bint mm_deals(int nth) noexcept nogil
# Whether a product that csrc/mul_mat_ndeal.h takes (2..4 threads) runs through the job's
# counters (the split, timed, or its tasks dealt while the split is seen to lag): unless
# _set_mm_dealing(False). The modules that run mul_mat ask through _mm_dealt.pxi.
cdef bint mm_deals_few(int nth) noexcept nogil

# compute_parallel's result when Ctrl-C (a Python signal handler that raised) stopped a
# long call: dst is partly written and the exception is set; raise_interrupted raises it.
cdef enum:
    KERN_INTERRUPTED = -2
cdef int raise_interrupted() except -1
# -1 (exception set) when a Python signal handler raised, else 0; cheap off the main
# thread. Takes the GIL: call between chunks of work, on the calling thread only.
cdef int check_signals() noexcept nogil
