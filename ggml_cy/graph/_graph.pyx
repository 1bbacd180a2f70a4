# The compute graph in the context arena (ggml_new_graph, ggml_build_forward_expand,
# ggml_graph_plan/compute) and the C part of the op builders (ggml_add_impl & co: create
# the result tensor, record op, src and op_params; compute nothing).
from libc.stdint cimport int32_t, int64_t, uint32_t, uintptr_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memset, strlen
cimport numpy as cnp

from ggml_cy.core._core cimport (Context, Tensor, ggml_tensor, ggml_object, ggml_type_name,
                            core_new_object, core_new_tensor, core_view_tensor, wrap_tensor,
                            core_set_name, core_nelements, core_nbytes, GGML_MAX_SRC,
                            GGML_OBJECT_TYPE_GRAPH, GGML_OBJECT_TYPE_WORK_BUFFER,
                            GGML_TENSOR_FLAG_OUTPUT, GGML_TENSOR_FLAG_PARAM,
                            core_check_foreign_tensors)
from ggml_cy.cpu._kernels cimport op_name
from ggml_cy.core._ops cimport GGML_OP_COUNT
from ggml_cy.cpu._kernels cimport op_supported
from ggml_cy.core._ops cimport GGML_OP_NONE
from ggml_cy.cpu._kernels import op_names
from ggml_cy.cpu._compute cimport Plan, make_plan, plan_compute, gplan, check_node
from ggml_cy.cpu._kernels cimport KERN_INTERRUPTED, raise_interrupted
from ggml_cy.core._core cimport scratch_take, scratch_give

from ggml_cy.core._core import ContextMemoryError
from ggml_cy.cpu import threads as _threads

cnp.import_array()


# ggml_cy's op numbers by name (ops_defs.h), for the Python builders.
OPS = op_names()

DEFAULT_GRAPH_SIZE = 2048     # ggml's GGML_DEFAULT_GRAPH_SIZE
MAX_GRAPH_SIZE = 1 << 26


def default_n_threads():
    try:
        return _threads.get_num_threads()
    except Exception:  # the eager layer is optional for the graph
        return _threads.default_num_threads()


cdef size_t next_prime(size_t n):
    """Smallest prime >= n (trial division: sizes are at most a few hundred million)."""
    cdef size_t d
    if n <= 2:
        return 2
    if n % 2 == 0:
        n += 1
    while True:
        d = 3
        while d * d <= n:
            if n % d == 0:
                break
            d += 2
        else:
            return n
        n += 2


cdef inline size_t pad16(size_t n) noexcept nogil:
    return (n + 15) & ~(<size_t> 15)


cdef inline size_t ptr_hash(const void * p) noexcept nogil:
    # headers are 16-byte aligned: drop the zero bits before the modulo
    return <size_t> (<uintptr_t> p >> 4)


cdef size_t hash_find(ggml_cgraph * g, ggml_tensor * t) noexcept nogil:
    """Slot holding t, or the free slot where t would go (linear probing)."""
    cdef size_t h = ptr_hash(t) % g.hash_size
    while g.hash_keys[h] != NULL and g.hash_keys[h] != t:
        h += 1
        if h == g.hash_size:
            h = 0
    return h


def graph_bytes(int size):
    """Arena payload bytes of a graph of `size` nodes (ggml_graph_nbytes)."""
    return _graph_bytes(check_size(size))


cdef size_t _graph_bytes(int size):
    cdef size_t hs = next_prime(2 * <size_t> size + 1)
    return (pad16(sizeof(ggml_cgraph)) + 2 * <size_t> size * sizeof(ggml_tensor *)
            + hs * sizeof(ggml_tensor *))


cdef int check_size(size) except -1:
    if isinstance(size, bool) or not hasattr(size, "__index__"):
        raise TypeError(f"graph size must be an integer, not {type(size).__name__}")
    size = size.__index__()
    if size < 1 or size > MAX_GRAPH_SIZE:
        raise ValueError(f"graph size must be between 1 and {MAX_GRAPH_SIZE}, got {size}")
    return size


def new_graph(Context ctx not None, size=DEFAULT_GRAPH_SIZE):
    """ggml_new_graph_custom: a graph of `size` node and leaf slots in ctx's arena."""
    cdef int n = check_size(size)
    ctx.check_ready()
    cdef size_t hs = next_prime(2 * <size_t> n + 1)
    cdef size_t nbytes = _graph_bytes(n)
    cdef size_t needed = 0, available = 0
    cdef ggml_object * obj = core_new_object(&ctx.ctx, GGML_OBJECT_TYPE_GRAPH, nbytes,
                                             &needed, &available)
    if obj == NULL:
        if needed == <size_t> -1:
            raise OverflowError(f"a graph of size {n} overflows size_t")
        raise ContextMemoryError(needed, available, ctx.ctx.mem_size, ctx.used_mem())
    cdef char * mem = <char *> ctx.ctx.mem_buffer + obj.offs
    cdef ggml_cgraph * g = <ggml_cgraph *> mem
    memset(g, 0, sizeof(ggml_cgraph))
    g.size = n
    g.nodes = <ggml_tensor **> (mem + pad16(sizeof(ggml_cgraph)))
    g.leafs = g.nodes + n
    g.hash_size = hs
    g.hash_keys = g.leafs + n
    memset(g.hash_keys, 0, hs * sizeof(ggml_tensor *))
    cdef Graph graph = Graph.__new__(Graph)
    graph.g = g
    graph.ctx = ctx
    graph.generation = ctx.generation
    graph._roots = []
    return graph


cdef bint is_auto_name(const char * name, const char * prefix) noexcept nogil:
    """1 when name is prefix followed by decimal digits only (a name the graph gave)."""
    cdef size_t i = 0, n = strlen(prefix)
    while i < n:
        if name[i] != prefix[i]:
            return False
        i += 1
    if name[i] == 0:
        return False
    while name[i] != 0:
        if name[i] < 48 or name[i] > 57:
            return False
        i += 1
    return True


cdef class Graph:
    """A compute graph in a context's arena (ggml_cgraph).

    ``build_forward_expand(t)`` adds t and everything it depends on, in dependency order;
    ``compute(n_threads)`` runs it. Made by ``ctx.new_graph(size)``."""

    def __init__(self, *args, **kwargs):
        raise TypeError("make graphs with ctx.new_graph(size)")

    cdef ggml_cgraph * live(self) except NULL:
        if self.ctx.generation != self.generation:
            raise RuntimeError("this graph's context was reset: the graph is gone")
        return self.g

    @property
    def context(self):
        return self.ctx

    @property
    def size(self):
        return self.live().size

    @property
    def n_nodes(self):
        return self.live().n_nodes

    @property
    def n_leafs(self):
        return self.live().n_leafs

    def __len__(self):
        return self.live().n_nodes

    # ------------------------------------------------------------------ building
    def build_forward_expand(self, Tensor tensor not None):
        """ggml_build_forward_expand: depth-first post-order walk from `tensor` over its
        sources, adding each not-yet-visited tensor once: inputs (op NONE) to leafs, ops
        to nodes, so every node comes after its sources. Unnamed tensors are named
        node_N / leaf_N. On overflow nothing is added and ValueError names the size."""
        cdef ggml_cgraph * g = self.live()
        cdef ggml_tensor * root = tensor.ptr()
        cdef int n_nodes0 = g.n_nodes, n_leafs0 = g.n_leafs, auto0 = g.n_auto_named
        if tensor.owner is not self.ctx:
            # the graph's context keeps the tensors' contexts alive and notices their
            # resets (compute refuses a graph whose memory was reset: issue 17)
            self.ctx.keep_alive(tensor.owner)
        # explicit stack (tensor, next src index): no recursion limit on long chains
        cdef size_t cap = 64, depth = 0
        cdef ggml_tensor ** stack_t = <ggml_tensor **> malloc(cap * sizeof(ggml_tensor *))
        cdef int * stack_i = <int *> malloc(cap * sizeof(int))
        # every slot this call fills, to undo on overflow
        cdef size_t ncap = 64, n_inserted = 0
        cdef size_t * inserted = <size_t *> malloc(ncap * sizeof(size_t))
        cdef size_t h, k
        cdef ggml_tensor * t
        cdef ggml_tensor * s
        cdef int i, overflow = 0
        cdef char buf[64]
        cdef bytes nm
        try:
            if stack_t == NULL or stack_i == NULL or inserted == NULL:
                raise MemoryError("graph walk")
            h = hash_find(g, root)
            if g.hash_keys[h] == root:
                return self
            g.hash_keys[h] = root
            inserted[n_inserted] = h
            n_inserted += 1
            stack_t[0] = root
            stack_i[0] = 0
            depth = 1
            while depth > 0:
                t = stack_t[depth - 1]
                i = stack_i[depth - 1]
                while i < GGML_MAX_SRC and t.src[i] == NULL:
                    i += 1
                if i < GGML_MAX_SRC:
                    stack_i[depth - 1] = i + 1
                    s = t.src[i]
                    h = hash_find(g, s)
                    if g.hash_keys[h] == s:
                        continue
                    if <size_t> (g.n_nodes + g.n_leafs) + depth + 2 > g.hash_size:
                        overflow = 1
                        break
                    g.hash_keys[h] = s
                    if n_inserted == ncap:
                        ncap *= 2
                        inserted = <size_t *> realloc_or_die(inserted, ncap * sizeof(size_t))
                    inserted[n_inserted] = h
                    n_inserted += 1
                    if depth == cap:
                        cap *= 2
                        stack_t = <ggml_tensor **> realloc_or_die(stack_t, cap * sizeof(ggml_tensor *))
                        stack_i = <int *> realloc_or_die(stack_i, cap * sizeof(int))
                    stack_t[depth] = s
                    stack_i[depth] = 0
                    depth += 1
                    continue
                # all sources done: t goes after them
                depth -= 1
                if t.op == GGML_OP_NONE and not (t.flags & GGML_TENSOR_FLAG_PARAM):
                    if g.n_leafs >= g.size:
                        overflow = 1
                        break
                    g.leafs[g.n_leafs] = t
                    g.n_leafs += 1
                else:
                    if g.n_nodes >= g.size:
                        overflow = 1
                        break
                    g.nodes[g.n_nodes] = t
                    g.n_nodes += 1
            if overflow:
                raise ValueError(
                    f"graph is full: size {g.size} (nodes {g.n_nodes}, leafs {g.n_leafs}) "
                    f"cannot hold the tensors needed for {self._label(root)}; make the "
                    "graph with ctx.new_graph(size=...) larger")
        except BaseException:
            # undo: free the slots in reverse insertion order, which restores the probe
            # chains exactly as they were; drop the nodes and leafs this call added
            while n_inserted > 0:
                n_inserted -= 1
                g.hash_keys[inserted[n_inserted]] = NULL
            g.n_nodes = n_nodes0
            g.n_leafs = n_leafs0
            raise
        finally:
            free(stack_t)
            free(stack_i)
            free(inserted)
        # names for the unnamed, now that the walk succeeded (ggml: leaf_%d / node_%d)
        for i in range(n_leafs0, g.n_leafs):
            if g.leafs[i].name[0] == 0:
                nm = f"leaf_{i}".encode()
                core_set_name(g.leafs[i], nm)
        for i in range(n_nodes0, g.n_nodes):
            if g.nodes[i].name[0] == 0:
                nm = f"node_{i}".encode()
                core_set_name(g.nodes[i], nm)
        self._roots.append(tensor)
        return self

    cdef str _label(self, ggml_tensor * t):
        shape = ", ".join(str(t.ne[i]) for i in range(4))
        name = t.name.decode("utf-8", "replace") or "<unnamed>"
        return f"'{name}' ({op_name(t.op).decode()} [{shape}])"

    # ------------------------------------------------------------------ inspection
    cdef object _wrap(self, ggml_tensor * t):
        """The Python wrapper of t, with the context whose pool holds it as owner."""
        cdef Context c
        for obj in self._contexts():
            c = <Context> obj
            if (<char *> c.ctx.mem_buffer <= <char *> t and
                    <char *> t < <char *> c.ctx.mem_buffer + c.ctx.mem_size):
                return wrap_tensor(c, t)
        return wrap_tensor(self.ctx, t)

    cdef list _contexts(self):
        cdef list seen = [self.ctx]
        cdef Tensor r
        cdef Context c
        for obj in self._roots:
            r = <Tensor> obj
            if r.owner not in seen:
                seen.append(r.owner)
        i = 0
        while i < len(seen):  # contexts kept alive by others (cross-context sources)
            c = <Context> seen[i]
            if c._deps is not None:
                for d in c._deps:
                    if d not in seen:
                        seen.append(d)
            i += 1
        return seen

    @property
    def nodes(self):
        """The op tensors, in the order compute runs them."""
        cdef ggml_cgraph * g = self.live()
        return [self._wrap(g.nodes[i]) for i in range(g.n_nodes)]

    @property
    def leafs(self):
        """The input tensors (op NONE), in visit order."""
        cdef ggml_cgraph * g = self.live()
        return [self._wrap(g.leafs[i]) for i in range(g.n_leafs)]

    def node(self, int i):
        """ggml_graph_node: node i (negative i counts from the end)."""
        cdef ggml_cgraph * g = self.live()
        if i < 0:
            i += g.n_nodes
        if i < 0 or i >= g.n_nodes:
            raise IndexError(f"node index out of range for a graph of {g.n_nodes} nodes")
        return self._wrap(g.nodes[i])

    def get_tensor(self, name):
        """ggml_graph_get_tensor: the node or leaf with this name, or None."""
        cdef ggml_cgraph * g = self.live()
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        b = name.encode()
        for i in range(g.n_nodes):
            if g.nodes[i].name == b:
                return self._wrap(g.nodes[i])
        for i in range(g.n_leafs):
            if g.leafs[i].name == b:
                return self._wrap(g.leafs[i])
        return None

    def dump(self):
        """A readable listing (ggml_graph_print): nodes with op, type, shape and sources,
        then leafs."""
        cdef ggml_cgraph * g = self.live()
        cdef ggml_tensor * t
        lines = [f"graph: {g.n_nodes} nodes, {g.n_leafs} leafs (size {g.size})"]
        lines.append("nodes:")
        for i in range(g.n_nodes):
            t = g.nodes[i]
            srcs = ", ".join(t.src[j].name.decode("utf-8", "replace")
                             for j in range(GGML_MAX_SRC) if t.src[j] != NULL)
            lines.append(f"  {i:4d} {op_name(t.op).decode():<12} "
                         f"{ggml_type_name(t.type).decode():<4} {_shape(t):<28} "
                         f"{t.name.decode('utf-8', 'replace')} <- {srcs}")
        lines.append("leafs:")
        for i in range(g.n_leafs):
            t = g.leafs[i]
            lines.append(f"  {i:4d} {'NONE':<12} {ggml_type_name(t.type).decode():<4} "
                         f"{_shape(t):<28} {t.name.decode('utf-8', 'replace')}")
        return "\n".join(lines)

    def __repr__(self):
        if self.ctx.generation != self.generation:
            return "<Graph (context reset)>"
        return f"<Graph size={self.g.size} n_nodes={self.g.n_nodes} n_leafs={self.g.n_leafs}>"

    # ------------------------------------------------------------------ compute
    cdef unsigned char * pinned_nodes(self, ggml_cgraph * g) except NULL:
        """Nodes that must reach memory: flagged outputs, user-named, roots, last node,
        and any tensor something else views."""
        cdef unsigned char * pinned = <unsigned char *> malloc(g.n_nodes + 1)
        cdef int i, j
        cdef Tensor r
        cdef ggml_tensor * rp
        cdef ggml_tensor * vs
        cdef size_t h
        if pinned == NULL:
            raise MemoryError()
        for i in range(g.n_nodes):
            pinned[i] = ((g.nodes[i].flags & GGML_TENSOR_FLAG_OUTPUT) != 0
                         or not is_auto_name(g.nodes[i].name, b"node_"))
        if g.n_nodes > 0:
            pinned[g.n_nodes - 1] = 1
        roots = set()
        for obj in self._roots:
            r = <Tensor> obj
            roots.add(<uintptr_t> r.t)
        views = set()
        for i in range(g.n_nodes):
            if g.nodes[i].view_src != NULL:
                views.add(<uintptr_t> g.nodes[i].view_src)
        for i in range(g.n_leafs):
            if g.leafs[i].view_src != NULL:
                views.add(<uintptr_t> g.leafs[i].view_src)
        for i in range(g.n_nodes):
            if (<uintptr_t> g.nodes[i]) in roots or (<uintptr_t> g.nodes[i]) in views:
                pinned[i] = 1
        return pinned

    def plan(self, n_threads=None, *, fuse=True):
        """ggml_graph_plan: a Plan with the work-buffer size, the threads per node and
        the fused elementwise groups for n_threads threads."""
        cdef ggml_cgraph * g = self.live()
        n = default_n_threads() if n_threads is None else _threads.check_num_threads(n_threads)
        for obj in self._roots:  # a root's context reset since: its headers are gone
            (<Tensor> obj).ptr()
        cdef unsigned char * pinned = self.pinned_nodes(g)
        try:
            return make_plan(g.nodes, g.n_nodes, n, bool(fuse), pinned, self)
        finally:
            free(pinned)

    def compute(self, n_threads=None, *, fuse=True, Plan plan=None):
        """ggml_graph_compute: run every node on n_threads threads (one parallel region,
        a barrier between nodes, the GIL released throughout). Returns the graph.

        The work buffer: with ``plan=`` given, the plan keeps it between calls (ggml's
        cplan.work_data; it is freed with the plan), so a plan run again and again (a
        decode step) allocates nothing; without, a buffer kept by the module is reused
        (up to _SPARE_MAX bytes)."""
        cdef bint fresh = plan is None
        if fresh:
            plan = self.plan(n_threads, fuse=fuse)
        else:
            self._check_plan(plan)
        cdef size_t size = plan.p.work_size
        cdef char * work
        cdef int src = take_work(plan, fresh, size, &work)
        try:
            self._run(plan, work)
        finally:
            give_work(plan, src, work)
        return self

    def compute_with_ctx(self, Context ctx not None, n_threads=None, *, fuse=True):
        """ggml_graph_compute_with_ctx: like compute, with the work buffer placed in ctx's
        arena as a work-buffer object (ContextMemoryError when it does not fit)."""
        cdef Plan plan = self.plan(n_threads, fuse=fuse)
        ctx.check_ready()
        cdef size_t needed = 0, available = 0
        cdef ggml_object * obj = core_new_object(&ctx.ctx, GGML_OBJECT_TYPE_WORK_BUFFER,
                                                 plan.p.work_size, &needed, &available)
        if obj == NULL:
            raise ContextMemoryError(needed, available, ctx.ctx.mem_size, ctx.used_mem())
        self._run(plan, <char *> ctx.ctx.mem_buffer + obj.offs)
        return self

    cdef int _check_plan(self, Plan plan) except -1:
        if plan.keepalive is not self:
            raise ValueError("this plan was made for another graph")
        if plan.p.n_nodes != self.live().n_nodes:
            raise ValueError("the graph changed since this plan was made; plan again")
        return 0

    cdef int _run(self, Plan plan, char * work) except -1:
        cdef gplan * p = plan.p
        cdef int rc
        cdef ggml_cgraph * g = self.live()
        # a cross-context view whose base's context was reset since: refuse, never read it
        core_check_foreign_tensors(self.ctx, g.nodes, g.n_nodes)
        core_check_foreign_tensors(self.ctx, g.leafs, g.n_leafs)
        with nogil:
            rc = plan_compute(p, work)
        if rc == KERN_INTERRUPTED:
            raise_interrupted()     # Ctrl-C between steps (KeyboardInterrupt)
        if rc != 0:
            if p.error == 2:
                raise IndexError("get_rows/set_rows: a row id is out of range of its "
                                 "table (ids must lie in [0, a.ne[1]))")
            raise RuntimeError("a CPU kernel refused a node of this graph (unsupported "
                               "op/type combination)")
        return 0


# Work buffers (Graph.compute): 0 = the plan's own (kept with the plan); otherwise
# _core's scratch (1: its kept spare, 2: a malloc for this call).
cdef int take_work(Plan plan, bint fresh, size_t size, char ** out) except -1:
    cdef size_t n = size if size > 0 else 1
    if not fresh and not plan.work_busy:
        if plan.work_buf == NULL:
            plan.work_buf = <char *> malloc(n)
            if plan.work_buf == NULL:
                raise MemoryError(f"graph work buffer of {size} bytes")
        plan.work_busy = True
        out[0] = plan.work_buf
        return 0
    return scratch_take(n, out)


cdef void give_work(Plan plan, int src, char * work) noexcept:
    if src == 0:
        plan.work_busy = False
    else:
        scratch_give(src, work)


cdef void * realloc_or_die(void * p, size_t n) except NULL:
    cdef void * q = realloc(p, n)
    if q == NULL:
        raise MemoryError("graph walk")
    return q


cdef str _shape(ggml_tensor * t):
    return "[" + ", ".join(str(t.ne[i]) for i in range(4)) + "]"


# ----------------------------------------------------------------------------- builders
def describe(Tensor t not None):
    """(type, ne, nb, op, is_view, has_data) of a tensor, for the builders' checks."""
    cdef ggml_tensor * p = t.ptr()
    return (p.type, tuple(p.ne[i] for i in range(4)), tuple(p.nb[i] for i in range(4)),
            p.op, p.view_src != NULL, p.data != NULL)


def supported(int op, int dst_type, int src0_type, int src1_type=-1):
    """The CPU kernels' answer: do they implement op for these types (src1 -1: unary)."""
    return bool(op_supported(op, dst_type, src0_type, src1_type))


def new_op(Context ctx not None, int op, int rtype, ne, srcs, params=(), int view_of=-1):
    """Creates the result of an op in ctx (ggml_*_impl): a new contiguous tensor of `type`
    and shape `ne` (rtype: a ggml type number); records op,
    sources and op_params (ints as int32, floats by their float32 bit pattern). With
    view_of = i the result is a view of srcs[i] instead (in-place ops, cpy). The
    caller has validated everything; nothing is computed."""
    cdef int64_t cne[4]
    cdef ggml_tensor * a
    cdef ggml_tensor * result
    cdef Tensor src
    cdef int i
    cdef float f
    cdef int32_t bits
    if op <= GGML_OP_NONE or op >= GGML_OP_COUNT:
        raise ValueError(f"unknown op {op}")
    if len(srcs) == 0 or len(srcs) > GGML_MAX_SRC:
        raise ValueError("an op takes 1 to 10 sources")
    if len(params) > 16:
        raise ValueError("at most 16 op parameters")
    ptrs = []
    for s in srcs:
        if not isinstance(s, Tensor):
            raise TypeError(f"op sources must be Tensors, not {type(s).__name__}")
        src = <Tensor> s
        src.ptr()
        ptrs.append(s)
    ctx.check_ready()
    if view_of >= len(srcs):
        raise ValueError("view_of names a missing source")
    if view_of >= 0:
        src = <Tensor> srcs[view_of]
        result = core_view_tensor(ctx, src.ptr())
    else:
        if len(ne) != 4:
            raise ValueError("ne must have 4 entries")
        for i in range(4):
            cne[i] = ne[i]
        result = core_new_tensor(ctx, rtype, 4, cne)
    result.op = op
    for i in range(len(srcs)):
        src = <Tensor> srcs[i]
        result.src[i] = src.ptr()
        if src.owner is not ctx:
            ctx.keep_alive(src.owner)
    for i in range(len(params)):
        v = params[i]
        if isinstance(v, float):
            f = <float> v
            memcpy(&bits, &f, 4)
            result.op_params[i] = bits
        else:
            result.op_params[i] = <int32_t> v
    return wrap_tensor(ctx, result)


def op_params_float(Tensor t not None, int i):
    """op_params[i] read as a float32 bit pattern (ggml_get_op_params_f32)."""
    cdef ggml_tensor * p = t.ptr()
    cdef float f
    if i < 0 or i >= 16:
        raise IndexError("op_params index out of range")
    memcpy(&f, &p.op_params[i], 4)
    return f


# --- issue 13 (ops3): ggml_set_op_params_i32 (flash_attn_ext_set_prec)
def set_op_param_i32(Tensor t not None, int i, int32_t v):
    """op_params[i] = v as int32 (ggml_set_op_params_i32)."""
    cdef ggml_tensor * p = t.ptr()
    if i < 0 or i >= 16:
        raise IndexError("op_params index out of range")
    p.op_params[i] = v
# --- end issue 13 (ops3)


def set_output(Tensor t not None):
    """ggml_set_output: t is kept in memory by the fused executor."""
    t.ptr().flags |= GGML_TENSOR_FLAG_OUTPUT
    return t


def src_of(Tensor t not None, int i):
    """t's source i as a Tensor (None when absent); the owner is t's context."""
    cdef ggml_tensor * p = t.ptr()
    if i < 0 or i >= GGML_MAX_SRC:
        raise IndexError("source index out of range")
    if p.src[i] == NULL:
        return None
    return wrap_tensor(t.owner, p.src[i])


def op_name_of(int op):
    return op_name(op).decode()


# ----------------------------------------------------------------------------- backends
def place_tensor(Tensor t not None, uintptr_t data, uintptr_t buffer):
    """Points t at `data` inside a backend buffer whose handle is `buffer` (what
    ggml_backend_tensor_alloc does). backend.py checks sizes before calling this."""
    cdef ggml_tensor * p = t.ptr()
    p.data = <void *> data
    p.buffer = <void *> buffer


def tensor_buffer(Tensor t not None):
    """The handle of the backend buffer holding t's data (0: context memory/none)."""
    return <uintptr_t> t.ptr().buffer


def tensor_nbytes(Tensor t not None):
    """ggml_nbytes: bytes spanned by t's data."""
    return core_nbytes(t.ptr())


def cpu_supports(Tensor t not None):
    """1 when the CPU executor can run t's op with t's types (data not required)."""
    try:
        check_node(t.ptr(), False)
    except (TypeError, ValueError):
        return False
    return True


def set_layout(Tensor t not None, uintptr_t data, nb):
    """Describes existing memory with t: data pointer and byte strides nb (4 ints, any
    sign, 0 for broadcast). Used by evaluate() to wrap numpy arrays without copying; the
    caller keeps the memory alive and checks the extent."""
    cdef ggml_tensor * p = t.ptr()
    cdef int i
    if len(nb) != 4:
        raise ValueError("nb must have 4 entries")
    for i in range(4):
        p.nb[i] = nb[i]
    p.data = <void *> data


# Tensor.op_name / repr name ops through the kernel layer's table (ggml's GGML_OP_NAME).
from ggml_cy.core import _core as _core_module
if getattr(_core_module, "_op_namer", None) is None:
    _core_module.set_op_namer(op_name_of)
