# Fused elementwise execution (beyond ggml's CPU backend).
#
# A fused group is a run of consecutive elementwise graph nodes with one output shape.
# Instead of running each node over the whole tensor (one full memory pass per node), the
# group walks the output in blocks of about FUSE_BLOCK elements; for each block it runs
# every node of the group through the kernel layer's compute_forward on block-sized
# descriptors. Intermediates that nothing outside the group reads live in per-thread,
# cache-sized scratch and never reach memory. Each element goes through the same kernel
# code as in the unfused graph, so the results are bitwise equal. Groups of plain float
# arithmetic along rows run instead on the accumulator machine of csrc/fused_vm.h (a
# program compiled at plan time, the running value in vector registers).
from libc.stdint cimport int64_t
from ggml_cy.core._core cimport ggml_tensor
from ggml_cy.cpu._kernels cimport dyn_ranges

# The accumulator machine that runs groups of plain float arithmetic (csrc/fused_vm.h).
cdef extern from "fused_vm.h" nogil:
    ctypedef struct vm_prog:
        int type
        int n_instr
        int n_slots
        int n_nodes
        int n_tiles
        int n_mem
        int has_stream

cdef enum:
    FUSE_MAX_NODES = 32      # nodes per group (longer runs are split)
    FUSE_MAX_SLOTS = 64      # nodes + distinct external inputs per group
    FUSE_BLOCK = 8192        # default elements per block: scratch blocks stay in L1/L2
    FUSE_BLOCK_MAX = 1 << 20

# One tensor taking part in a group: a node of the group or an external input.
ctypedef struct fuse_slot:
    ggml_tensor * t          # the graph tensor
    char * data              # its data
    int64_t ne[4]            # block geometry: ne/nb as iterated (flattened in flat mode)
    int64_t nb[4]
    int is_node              # 1: a node of the group; 0: an external input
    int scratch              # scratch index for intermediates kept in cache, else -1
    int stream               # 1: computed in scratch block `scratch`, then streamed to
                             # memory with non-temporal stores (large outputs)
    int src_slot[10]         # node slots: the slot of each src (-1 when src is NULL)

ctypedef struct fuse_group:
    int first                # index of the group's first node in the graph
    int n_nodes              # node slots are 0..n_nodes-1, in graph order
    int n_slots              # then the external inputs
    int n_scratch
    int split0               # 1: blocks are pieces of single rows; 0: runs of whole rows
    int64_t ne[4]            # the group's output shape (flattened in flat mode)
    int64_t block            # elements per block (split0) or rows per block
    int64_t blocks_per_run   # blocks per row (split0) or per (i2, i3) slab
    int64_t n_blocks
    size_t scratch_bytes     # bytes of one scratch block (block elements x 8, padded)
    int vm                   # 1: plain float arithmetic, run by the accumulator machine
    int64_t head             # machine groups: elements of a short first block per row
                             # that brings a streamed output to a 32-byte boundary
    int64_t blocks_per_run_plain   # blocks_per_run and n_blocks without a head (the head
    int64_t n_blocks_plain         # depends on the output's address: fuse_repoint)
    vm_prog prog             # its program (fused_vm.h)
    fuse_slot slots[64]      # FUSE_MAX_SLOTS

# 1 for ops a group may contain (binary and unary elementwise ops, ADD1).
cdef bint fuse_op_fusable(int op) noexcept nogil

# Tries to form a group starting at nodes[first] and covering at most n_avail nodes.
# pinned[i]: node i must stay in memory (output flag, user name, graph root, viewed);
# last_consumer[i]: index of the last node reading node i (-1: none). Fills g and
# returns the number of nodes (>= 2), or 0 when no group starts here.
cdef int fuse_build_group(ggml_tensor ** nodes, int n_nodes, int first,
                          const unsigned char * pinned, const int * last_consumer,
                          int n_threads, fuse_group * g) noexcept nogil

# Points the group's slots at their tensors' data again (the tensors were moved to new
# memory with the same layout) and recomputes what depends on the addresses (the head of
# a streamed output). Only valid when the new addresses overlap exactly as the old ones
# did (fuse_build_group checked overlaps at the old ones): evaluate() uses it for results
# it allocated itself, which overlap nothing.
cdef void fuse_repoint(fuse_group * g) noexcept nogil

# Bytes of per-thread scratch the group needs (descriptors + intermediates).
cdef size_t fuse_work_size(const fuse_group * g) noexcept nogil

# Runs thread ith's share (of nth) of the group's blocks; `work` is this thread's
# scratch of fuse_work_size(g) bytes. Returns 0, or -1 when a kernel refused a node.
# dyn NULL: the static share (blocks n_blocks*ith//nth ..); otherwise chunks of dyn.cs
# blocks dealt by _kernels.dyn_next, on a pool_run_dyn job (workers optional).
cdef int fuse_run(const fuse_group * g, char * work, int ith, int nth,
                  dyn_ranges * dyn) noexcept nogil

# 1 when the bytes a and b can touch intersect (conservative: byte extents).
cdef bint extents_overlap(const ggml_tensor * a, const ggml_tensor * b) noexcept nogil
