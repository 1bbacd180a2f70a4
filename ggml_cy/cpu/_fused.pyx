# Fused elementwise execution: see _fused.pxd for the model. The group finder runs at
# plan time (once per plan); fuse_run is the per-thread hot loop, called inside the
# executor's parallel region, so everything here is noexcept nogil.
import operator

from libc.stdint cimport int64_t, uintptr_t
from libc.string cimport memcpy, memset

from ggml_cy.core._core cimport (ggml_tensor, ggml_type_size, core_is_contiguous, core_extent,
                            GGML_MAX_SRC)
from ggml_cy.cpu._kernels cimport compute_forward, stream_pays, dyn_ranges, dyn_next
from ggml_cy.core._ops cimport (GGML_OP_ADD, GGML_OP_SCALE, GGML_OP_ADD1, GGML_OP_DUP,
                                GGML_OP_CPY, GGML_OP_CONT, GGML_OP_SUB, GGML_OP_MUL,
                                GGML_OP_DIV, GGML_OP_MAX, GGML_OP_MIN, GGML_OP_NEG, GGML_OP_ABS,
                                GGML_OP_SQR, ggml_cy_op_is_elementwise)
from ggml_cy.core._core cimport GGML_TYPE_F32, GGML_TYPE_F64

include "_simd_math_deps.pxi"
cdef extern from "fused_stream.h" nogil:
    void gcy_stream_store(char * dst, const char * src, int64_t nbytes)
    void gcy_stream_fence()

cdef extern from "fused_vm.h" nogil:
    enum:
        VM_NONE
        VM_ADD
        VM_SUB
        VM_MUL
        VM_DIV
        VM_MAX
        VM_MIN
        VM_NEG
        VM_ABS
        VM_SQR
        VM_K_TEMP
        VM_K_MEM
        VM_K_CONST
        VM_VBYTES
    int vm_compile(vm_prog * p, int type, int n_nodes, int n_slots, const int * op,
                   const int * src0, const int * src1, const signed char * kind,
                   const int * stream)
    size_t vm_work_bytes(const vm_prog * p)
    void vm_run_block(const vm_prog * p, char * const * base, int64_t n, char * work, int r)

# The accumulator machine for plain float arithmetic (a benchmarking knob).
cdef bint use_vm = True

cdef extern from *:
    """
    #if defined(__x86_64__) || defined(__i386__)
    #include <cpuid.h>
    #endif
    /* Accumulator vectors a block of a streamed group reads from each operand at a time
     * (fused_vm_blocks.h): 256 bytes on AMD CPUs (4 vectors of 64 bytes; 8 of 32), 8 vectors
     * elsewhere. Measured: Zen 4 VM against the 16-core Xeon host (Sapphire Rapids class). */
    static int gcy_vm_stream_vectors_default(void) {
    #if defined(__x86_64__) || defined(__i386__)
        unsigned int a, b, c, d;
        if (__get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u && d == 0x69746e65u
                && c == 0x444d4163u)                       /* "AuthenticAMD" */
            return 256 / VM_VBYTES;
    #endif
        return 8;
    }
    """
    int gcy_vm_stream_vectors_default() nogil


# Accumulator vectors per block for groups with a streamed output (4 or 8); 8 otherwise.
cdef int stream_vectors = gcy_vm_stream_vectors_default()


def set_stream_vectors(n=None):
    """Sets how many accumulator vectors (4 or 8) a machine block reads from each operand in
    groups whose output streams (None: this CPU's default); returns the previous value. A
    benchmarking and testing knob; takes effect at the next compute."""
    global stream_vectors
    cdef int old = stream_vectors
    if n is None:
        stream_vectors = gcy_vm_stream_vectors_default()
        return old
    try:
        k = -1 if isinstance(n, bool) else operator.index(n)
    except TypeError:
        k = -1
    if k not in (4, 8):
        raise ValueError(f"stream vectors must be 4 or 8, got {n!r}")
    stream_vectors = k
    return old

cdef extern from *:
    """
    /* the machine's STREAM is a non-temporal store from AVX builds on (fused_vm.h); the
       baseline build stores plainly */
    #if defined(__AVX__)
    #define GCY_VM_STREAMS 1
    #else
    #define GCY_VM_STREAMS 0
    #endif
    """
    int VM_STREAMS "GCY_VM_STREAMS"


def set_chunk_loops(flag):
    """Turns the accumulator machine for plain float arithmetic on or off (plans made
    afterwards use it; off: such groups run node by node over cache blocks); returns the
    previous setting."""
    global use_vm
    old = use_vm
    use_vm = bool(flag)
    return old


_VM_NAMES = {VM_ADD: "ADD", VM_SUB: "SUB", VM_MUL: "MUL", VM_DIV: "DIV", VM_MAX: "MAX",
             VM_MIN: "MIN", VM_NEG: "NEG", VM_ABS: "ABS", VM_SQR: "SQR"}


def _vm_instruction(int op):
    """The accumulator machine's instruction for an op ("ADD", ...), or None (the op
    table's `vm` column must agree: tests/test_optable.py)."""
    return _VM_NAMES.get(vm_op_of(op))


cdef int vm_op_of(int op) noexcept nogil:
    if op == GGML_OP_ADD or op == GGML_OP_ADD1:
        return VM_ADD
    if op == GGML_OP_SUB:
        return VM_SUB
    if op == GGML_OP_MUL:
        return VM_MUL
    if op == GGML_OP_DIV:
        return VM_DIV
    if op == GGML_OP_MAX:
        return VM_MAX
    if op == GGML_OP_MIN:
        return VM_MIN
    if op == GGML_OP_NEG:
        return VM_NEG
    if op == GGML_OP_ABS:
        return VM_ABS
    if op == GGML_OP_SQR:
        return VM_SQR
    return VM_NONE


cdef bint vm_binary(int vop) noexcept nogil:
    return vop <= VM_MIN


# Non-temporal write-out of large outputs (a benchmarking knob).
cdef bint stream_outputs = True


def set_streaming(flag):
    """Turns non-temporal stores for large fused outputs on or off (plans made afterwards
    use it); returns the previous setting."""
    global stream_outputs
    old = stream_outputs
    stream_outputs = bool(flag)
    return old


# Scratch blocks are 4 KiB multiples; consecutive ones are shifted by a few cache lines
# so that element i of one and element i of the next never share their low 12 address
# bits (4K aliasing makes a load wait for an unrelated store to the "same" address).
cdef enum:
    SCRATCH_STAGGER = 192


# Elements per block (tunable for benchmarks through set_block_elements).
cdef int64_t block_elems = FUSE_BLOCK


def set_block_elements(n):
    """Sets the fused executor's block size in elements (plans made afterwards use it);
    returns the previous value. A benchmarking knob: 4096 fits this project's targets."""
    global block_elems
    n = int(n)
    if n < 64 or n > FUSE_BLOCK_MAX:
        raise ValueError(f"block size must be between 64 and {FUSE_BLOCK_MAX}, got {n}")
    old = block_elems
    block_elems = n
    return old


cdef inline size_t align64(size_t n) noexcept nogil:
    return (n + 63) & ~(<size_t> 63)


cdef bint fuse_op_fusable(int op) noexcept nogil:
    # every elementwise op of the op table; copies are not fusable (they may reshape)
    return ggml_cy_op_is_elementwise(op)


cdef inline bint same_ne(const int64_t * a, const int64_t * b) noexcept nogil:
    return a[0] == b[0] and a[1] == b[1] and a[2] == b[2] and a[3] == b[3]


cdef bint extents_overlap(const ggml_tensor * a, const ggml_tensor * b) noexcept nogil:
    """1 when the bytes a and b can touch intersect (or when the extent overflows)."""
    cdef int64_t alo, ahi, blo, bhi
    if core_extent(a.type, a.ne, a.nb, &alo, &ahi) < 0:
        return True
    if core_extent(b.type, b.ne, b.nb, &blo, &bhi) < 0:
        return True
    if ahi == alo or bhi == blo:
        return False
    cdef char * a0 = <char *> a.data + alo
    cdef char * a1 = <char *> a.data + ahi
    cdef char * b0 = <char *> b.data + blo
    cdef char * b1 = <char *> b.data + bhi
    return a0 < b1 and b0 < a1


cdef int slot_of(fuse_group * g, ggml_tensor * t, int n_node_slots) noexcept nogil:
    """Slot index of t (a node of the group or a known external), adding it as external
    when new; -1 when the slot table is full."""
    cdef int s
    for s in range(g.n_slots):
        if g.slots[s].t == t:
            return s
    if g.n_slots >= FUSE_MAX_SLOTS:
        return -1
    s = g.n_slots
    g.n_slots += 1
    memset(&g.slots[s], 0, sizeof(fuse_slot))
    g.slots[s].t = t
    g.slots[s].is_node = 0
    g.slots[s].scratch = -1
    return s


cdef int fuse_build_group(ggml_tensor ** nodes, int n_nodes, int first,
                          const unsigned char * pinned, const int * last_consumer,
                          int n_threads, fuse_group * g) noexcept nogil:
    cdef ggml_tensor * head = nodes[first]
    cdef ggml_tensor * node
    cdef ggml_tensor * src
    cdef int end = first, i, j, s, k, n
    if not fuse_op_fusable(head.op):
        return 0
    # 1. the run: consecutive fusable nodes with the head's shape, not views (in-place
    # results write into another tensor's memory, which a block-wise pass must not reorder)
    while end < n_nodes and end - first < FUSE_MAX_NODES:
        node = nodes[end]
        if not fuse_op_fusable(node.op) or node.view_src != NULL or node.data == NULL:
            break
        if not same_ne(node.ne, head.ne):
            break
        end += 1
    n = end - first
    if n < 2:
        return 0
    # 2. slots: nodes first, then the external inputs in order of first use
    memset(g, 0, sizeof(fuse_group))
    g.first = first
    g.n_nodes = n
    g.n_slots = n
    for i in range(n):
        g.slots[i].t = nodes[first + i]
        g.slots[i].is_node = 1
        g.slots[i].scratch = -1
    for i in range(n):
        node = nodes[first + i]
        for j in range(GGML_MAX_SRC):
            src = node.src[j]
            g.slots[i].src_slot[j] = -1
            if src == NULL:
                continue
            s = -1
            for k in range(i):  # an earlier node of the group
                if nodes[first + k] == src:
                    s = k
                    break
            if s < 0:
                if src.data == NULL:
                    return 0
                s = slot_of(g, src, n)
                if s < 0:
                    return 0
            g.slots[i].src_slot[j] = s
    # 3. intermediates: read only inside the group, not pinned, never the last node
    for i in range(n):
        k = first + i
        if (not pinned[k] and last_consumer[k] >= 0 and last_consumer[k] < end
                and i < n - 1):
            g.slots[i].scratch = g.n_scratch
            g.n_scratch += 1
    # 4. memory safety: no external input may overlap a tensor the group writes, and the
    # written tensors must not overlap each other (a block-wise pass would reorder them)
    for i in range(n):
        if g.slots[i].scratch >= 0:
            continue
        for s in range(g.n_slots):
            if s == i or (g.slots[s].is_node and g.slots[s].scratch >= 0):
                continue
            if extents_overlap(g.slots[i].t, g.slots[s].t):
                return 0
    # 5. geometry: flat when every in-memory tensor is contiguous and every input has the
    # full shape; otherwise blocks of whole rows (or of one row when rows are long)
    cdef bint flat = True
    for s in range(g.n_slots):
        node = g.slots[s].t
        if g.slots[s].is_node and g.slots[s].scratch >= 0:
            continue
        if not core_is_contiguous(node) or not same_ne(node.ne, head.ne):
            flat = False
            break
    cdef int64_t total = head.ne[0] * head.ne[1] * head.ne[2] * head.ne[3]
    cdef size_t es
    for s in range(g.n_slots):
        node = g.slots[s].t
        g.slots[s].data = <char *> node.data
        if flat:
            es = ggml_type_size(node.type)
            g.slots[s].ne[0] = total
            g.slots[s].ne[1] = 1
            g.slots[s].ne[2] = 1
            g.slots[s].ne[3] = 1
            g.slots[s].nb[0] = es
            g.slots[s].nb[1] = es * total
            g.slots[s].nb[2] = es * total
            g.slots[s].nb[3] = es * total
        else:
            memcpy(g.slots[s].ne, node.ne, sizeof(int64_t) * 4)
            memcpy(g.slots[s].nb, node.nb, sizeof(int64_t) * 4)
    memcpy(g.ne, g.slots[0].ne, sizeof(int64_t) * 4)
    # (a single row shorter than a block -- any flat group of up to block_elems elements --
    # is one split0 block as well, so it can run in the accumulator machine instead of node
    # by node through compute_forward: a*b + c*d - e at 1e3 float32, graph.compute with a
    # kept plan 0.81 -> 0.65 us, evaluate() with kept results 2.73 -> 2.49 us, 2-core VM;
    # not when an input repeats along dim 0 the ggml way, which only the rows mode tiles)
    g.split0 = g.ne[0] > block_elems
    if not g.split0 and g.ne[1] * g.ne[2] * g.ne[3] == 1:
        g.split0 = True
        for s in range(n, g.n_slots):
            if g.slots[s].ne[0] != 1 and g.slots[s].ne[0] != g.ne[0]:
                g.split0 = False
                break
    for s in range(n, g.n_slots):
        if g.split0:
            if g.slots[s].ne[0] != 1 and g.slots[s].ne[0] != g.ne[0]:
                return 0
        elif g.slots[s].ne[1] != 1 and g.slots[s].ne[1] != g.ne[1]:
            return 0
    cdef int64_t nrows = g.ne[1] * g.ne[2] * g.ne[3]
    if g.split0:
        g.block = block_elems
        g.blocks_per_run = (g.ne[0] + block_elems - 1) // block_elems
        g.n_blocks = g.blocks_per_run * nrows
    else:
        g.block = block_elems // g.ne[0] if g.ne[0] > 0 else 1
        if g.block < 1:
            g.block = 1
        g.blocks_per_run = (g.ne[1] + g.block - 1) // g.block
        g.n_blocks = g.blocks_per_run * g.ne[2] * g.ne[3] if g.ne[0] > 0 else 0
    g.scratch_bytes = align64(<size_t> block_elems * 8)
    # 6. large outputs written along dim 0 go out through a cache block and streaming
    # stores (no read-for-ownership of the destination lines)
    # (manycore, issue 14: only when the group's working set -- its in-memory inputs and
    # outputs -- exceeds the last-level cache, or a quarter of it on many threads,
    # _kernels.stream_pays; below it streaming would send cache-resident work out to DRAM;
    # a group on the block path goes through a cache block first, so it is not a one-pass
    # row there; the accumulator machine streams from its registers, one pass like the
    # eager rows, so the socket-share rule applies to it at every thread count: on a 2-core
    # slice of a 260 MB L3 (the VM of 2026-11-27 evening) a*b + c*d - e, 1e6-1e7 float32,
    # ran 1.08-1.70x faster streamed than with plain stores at 1 and 2 threads)
    cdef int64_t ws = 0
    cdef bint one_pass = VM_STREAMS and use_vm and g.split0 and machine_candidate(g)
    if stream_outputs and g.split0:
        for s in range(g.n_slots):
            node = g.slots[s].t
            if not (g.slots[s].is_node and g.slots[s].scratch >= 0):
                ws += (node.ne[0] * node.ne[1] * node.ne[2] * node.ne[3]
                       * <int64_t> ggml_type_size(node.type))
        for i in range(n):
            node = g.slots[i].t
            es = ggml_type_size(node.type)
            # (gcy_stream_store streams whole cache lines only, so pieces of any alignment
            # never mix plain and streaming stores in one line)
            if (g.slots[i].scratch < 0 and g.slots[i].nb[0] == <int64_t> es
                    and stream_pays(<int64_t> total * <int64_t> es, ws, n_threads, one_pass)):
                g.slots[i].stream = 1
                g.slots[i].scratch = g.n_scratch
                g.n_scratch += 1
    # 7. plain float arithmetic along rows runs in the accumulator machine
    g.vm = use_vm and g.split0 and build_program(g) == 0
    g.blocks_per_run_plain = g.blocks_per_run
    g.n_blocks_plain = g.n_blocks
    g.head = 0
    if g.vm:
        set_head(g)
    return n


cdef void fuse_repoint(fuse_group * g) noexcept nogil:
    cdef int s
    for s in range(g.n_slots):
        g.slots[s].data = <char *> g.slots[s].t.data
    g.head = 0
    g.blocks_per_run = g.blocks_per_run_plain
    g.n_blocks = g.n_blocks_plain
    if g.vm:
        set_head(g)


cdef void set_head(fuse_group * g) noexcept nogil:
    """Machine groups with a streamed output: when every row of it starts at the same
    offset from a VM_VBYTES boundary (32 or 64), rows are cut as [0, head) and then whole blocks from
    that boundary on, so that only the first and last block of a row have loose ends
    (which the machine runs through its slower staging path)."""
    cdef int s, d
    cdef int64_t es = ggml_type_size(g.slots[0].t.type)
    cdef uintptr_t addr
    for s in range(g.n_nodes):
        if not g.slots[s].stream:
            continue
        for d in range(1, 4):
            if g.ne[d] > 1 and g.slots[s].nb[d] % VM_VBYTES != 0:
                return
        addr = <uintptr_t> g.slots[s].data
        if addr % es:
            return
        g.head = ((VM_VBYTES - (addr & (VM_VBYTES - 1))) & (VM_VBYTES - 1)) // es
        if g.head >= g.ne[0]:
            g.head = 0
        if g.head:
            g.blocks_per_run = 1 + (g.ne[0] - g.head + g.block - 1) // g.block
            g.n_blocks = g.blocks_per_run * g.ne[1] * g.ne[2] * g.ne[3]
        return


cdef bint machine_candidate(const fuse_group * g) noexcept nogil:
    """Whether build_program will take g, as far as the streaming choice matters: one float
    type (f32 or f64), machine ops only, unit-stride rows or one-value inputs. (A group that
    passes here and still fails to compile runs on the block path, its streamed outputs
    staged: same bits.)"""
    cdef int t0 = g.slots[0].t.type
    cdef int64_t es = ggml_type_size(t0)
    cdef int s, op
    cdef const fuse_slot * sl
    if t0 != GGML_TYPE_F32 and t0 != GGML_TYPE_F64:
        return False
    for s in range(g.n_slots):
        sl = &g.slots[s]
        if sl.t.type != t0:
            return False
        if sl.is_node:
            op = vm_op_of(sl.t.op)
            if op == VM_NONE or sl.src_slot[0] < 0 or (vm_binary(op) and sl.src_slot[1] < 0):
                return False
            if sl.scratch < 0 and sl.nb[0] != es:
                return False
        elif sl.ne[0] != 1 and sl.nb[0] != es:
            return False
    return True


cdef int build_program(fuse_group * g) noexcept nogil:
    """Compiles g into g.prog for the accumulator machine; 0, or -1 when the group is not
    plain float arithmetic on one float type with unit-stride rows."""
    # per node (FUSE_MAX_NODES): VM op, source slots, streamed
    cdef int op[32]
    cdef int src0[32]
    cdef int src1[32]
    cdef int stream[32]
    cdef signed char kind[64]                            # FUSE_MAX_SLOTS
    cdef int t0 = g.slots[0].t.type
    cdef int64_t es = ggml_type_size(t0)
    cdef int s
    cdef fuse_slot * sl
    if t0 != GGML_TYPE_F32 and t0 != GGML_TYPE_F64:
        return -1
    for s in range(g.n_slots):
        sl = &g.slots[s]
        if sl.t.type != t0:
            return -1
        if sl.is_node:
            op[s] = vm_op_of(sl.t.op)
            if op[s] == VM_NONE:
                return -1
            src0[s] = sl.src_slot[0]
            src1[s] = sl.src_slot[1] if vm_binary(op[s]) else -1
            if src0[s] < 0 or (vm_binary(op[s]) and src1[s] < 0):
                return -1
            stream[s] = sl.stream
            if sl.scratch >= 0 and not sl.stream:
                kind[s] = VM_K_TEMP
            elif sl.nb[0] == es:
                kind[s] = VM_K_MEM
            else:
                return -1
        elif sl.ne[0] == 1:
            kind[s] = VM_K_CONST       # one value per row, broadcast along it
        elif sl.nb[0] == es:
            kind[s] = VM_K_MEM
        else:
            return -1
    return vm_compile(&g.prog, 0 if t0 == GGML_TYPE_F32 else 1, g.n_nodes, g.n_slots,
                      op, src0, src1, kind, stream)


cdef size_t fuse_work_size(const fuse_group * g) noexcept nogil:
    if g.vm:
        return 64 + vm_work_bytes(&g.prog)
    return (64 + align64(sizeof(ggml_tensor) * g.n_slots)
            + <size_t> g.n_scratch * (g.scratch_bytes + SCRATCH_STAGGER))


cdef void run_program(const fuse_group * g, char * aligned, int64_t b0, int64_t b1) noexcept nogil:
    """Blocks b0..b1-1 through the accumulator machine (split0 blocks: pieces of single
    rows, so every slot is a pointer and a unit stride); aligned: the thread's work area."""
    cdef char * base[64]        # FUSE_MAX_SLOTS: this block's first element per slot
    cdef const fuse_slot * sl
    cdef int64_t b, run, i0, n0, i1, i2, i3
    cdef char * p
    cdef int s
    cdef int r = stream_vectors if g.prog.has_stream else 8
    for b in range(b0, b1):
        run = b // g.blocks_per_run
        i0 = (b - run * g.blocks_per_run) * g.block
        if g.head:      # [0, head), then whole blocks from the aligned element on
            i0 = 0 if i0 == 0 else g.head + i0 - g.block
            n0 = g.head if i0 == 0 else g.block
        else:
            n0 = g.block
        if n0 > g.ne[0] - i0:
            n0 = g.ne[0] - i0
        i1 = run % g.ne[1]
        i2 = (run // g.ne[1]) % g.ne[2]
        i3 = (run // g.ne[1]) // g.ne[2]
        for s in range(g.n_slots):
            sl = &g.slots[s]
            if sl.is_node:
                base[s] = sl.data + i3 * sl.nb[3] + i2 * sl.nb[2] + i1 * sl.nb[1] + i0 * sl.nb[0]
            else:
                # external input: tiled over the output (ne divides), rows by modulo
                p = sl.data + (i3 % sl.ne[3]) * sl.nb[3] + (i2 % sl.ne[2]) * sl.nb[2]
                if sl.ne[1] != 1:
                    p += i1 * sl.nb[1]
                if sl.ne[0] != 1:
                    p += i0 * sl.nb[0]
                base[s] = p
        vm_run_block(&g.prog, base, n0, aligned, r)


cdef inline bint next_range(const fuse_group * g, int ith, int nth, dyn_ranges * dyn,
                            int * step, int64_t * b0, int64_t * b1) noexcept nogil:
    """The next blocks [b0, b1) this thread runs: with dyn, chunks of dyn.cs blocks dealt by
    _kernels.dyn_next (workers are optional helpers); without, the one static share (step
    counts the calls). False when there are none left."""
    cdef int64_t c
    if dyn == NULL:
        if step[0] > 0:
            return False
        step[0] = 1
        b0[0] = g.n_blocks * ith // nth
        b1[0] = g.n_blocks * (ith + 1) // nth
        return True
    c = dyn_next(dyn, ith % dyn.nranges, step)
    if c < 0:
        return False
    b0[0] = c * dyn.cs
    b1[0] = b0[0] + dyn.cs if b0[0] + dyn.cs < g.n_blocks else g.n_blocks
    return True


cdef int fuse_run(const fuse_group * g, char * work, int ith, int nth,
                  dyn_ranges * dyn) noexcept nogil:
    cdef int step = 0
    cdef int64_t b0, b1, b
    if g.vm:
        while next_range(g, ith, nth, dyn, &step, &b0, &b1):
            run_program(g, <char *> ((<uintptr_t> work + 63) & ~(<uintptr_t> 63)), b0, b1)
        gcy_stream_fence()
        return 0
    cdef ggml_tensor * d = <ggml_tensor *> ((<uintptr_t> work + 63) & ~(<uintptr_t> 63))
    cdef char * scratch = <char *> d + align64(sizeof(ggml_tensor) * g.n_slots)
    cdef const fuse_slot * sl
    cdef int s, j
    # this thread's descriptors: copies of the graph tensors, sources rewired to slots
    for s in range(g.n_slots):
        memcpy(&d[s], g.slots[s].t, sizeof(ggml_tensor))
        if g.slots[s].is_node:
            for j in range(GGML_MAX_SRC):
                d[s].src[j] = &d[g.slots[s].src_slot[j]] if g.slots[s].src_slot[j] >= 0 else NULL
            if d[s].op == GGML_OP_ADD1:
                d[s].op = GGML_OP_ADD  # a scalar src1 tiles anything
    cdef int64_t run, i0, n0, i1, n1, i2, i3, r
    cdef size_t es
    cdef char * p
    while next_range(g, ith, nth, dyn, &step, &b0, &b1):
        for b in range(b0, b1):
            run = b // g.blocks_per_run
            if g.split0:
                i0 = (b - run * g.blocks_per_run) * g.block
                n0 = g.ne[0] - i0
                if n0 > g.block:
                    n0 = g.block
                r = run
                i1 = r % g.ne[1]
                r = r // g.ne[1]
                n1 = 1
            else:
                i0 = 0
                n0 = g.ne[0]
                i1 = (b - run * g.blocks_per_run) * g.block
                n1 = g.ne[1] - i1
                if n1 > g.block:
                    n1 = g.block
                r = run
            i2 = r % g.ne[2]
            i3 = r // g.ne[2]
            for s in range(g.n_slots):
                sl = &g.slots[s]
                if sl.is_node and sl.scratch >= 0:  # intermediates, and streamed outputs
                    es = ggml_type_size(sl.t.type)
                    d[s].data = scratch + <size_t> sl.scratch * (g.scratch_bytes + SCRATCH_STAGGER)
                    d[s].ne[0] = n0
                    d[s].ne[1] = n1
                    d[s].nb[0] = es
                    d[s].nb[1] = es * n0
                    d[s].nb[2] = es * n0 * n1
                    d[s].nb[3] = d[s].nb[2]
                elif sl.is_node:
                    d[s].data = sl.data + i3 * sl.nb[3] + i2 * sl.nb[2] + i1 * sl.nb[1] + i0 * sl.nb[0]
                    d[s].ne[0] = n0
                    d[s].ne[1] = n1
                    d[s].nb[0] = sl.nb[0]
                    d[s].nb[1] = sl.nb[1]
                    d[s].nb[2] = sl.nb[2]
                    d[s].nb[3] = sl.nb[3]
                else:
                    # external input: tiled over the output (ne divides), rows by modulo
                    p = sl.data + (i3 % sl.ne[3]) * sl.nb[3] + (i2 % sl.ne[2]) * sl.nb[2]
                    if sl.ne[1] != 1:
                        p += i1 * sl.nb[1]
                        d[s].ne[1] = n1
                    else:
                        d[s].ne[1] = 1
                    if g.split0 and sl.ne[0] != 1:
                        p += i0 * sl.nb[0]
                        d[s].ne[0] = n0
                    else:
                        d[s].ne[0] = sl.ne[0]
                    d[s].data = p
                    d[s].nb[0] = sl.nb[0]
                    d[s].nb[1] = sl.nb[1]
                    d[s].nb[2] = sl.nb[2]
                    d[s].nb[3] = sl.nb[3]
                d[s].ne[2] = 1
                d[s].ne[3] = 1
            for s in range(g.n_nodes):
                if compute_forward(&d[s], 0, 1) < 0:
                    gcy_stream_fence()
                    return -1
            for s in range(g.n_nodes):
                sl = &g.slots[s]
                if sl.stream:  # split0 blocks: one row piece of n0 elements
                    gcy_stream_store(sl.data + i3 * sl.nb[3] + i2 * sl.nb[2] + i1 * sl.nb[1]
                                     + i0 * sl.nb[0], <char *> d[s].data,
                                     n0 * <int64_t> ggml_type_size(sl.t.type))
    gcy_stream_fence()
    return 0
