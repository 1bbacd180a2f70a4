# The graph executor (ggml: ggml_graph_plan + ggml_graph_compute) and the graph-only CPU
# kernels (SUM, SUM_ROWS, MEAN, MUL_MAT; ADD1 runs as ADD with a scalar src1).
#
# A plan turns the node list into steps: a node, a node computed through a temporary
# (its destination overlaps a source), a fused elementwise group, or a no-op (views).
# compute runs every step inside ONE parallel region: each thread walks all steps, does
# its ith/nth share, then waits at a barrier before the next step.
from libc.stdint cimport int64_t
from ggml_cy.core._core cimport ggml_tensor
from ggml_cy.cpu._fused cimport fuse_group

cdef enum:
    STEP_NOOP = 0     # views and inputs: nothing to compute
    STEP_NODE = 1     # one node, rows split over n_tasks threads
    STEP_TEMP = 2     # one node whose dst overlaps a source: compute to a temp, copy back
    STEP_FUSED = 3    # a fused elementwise group
    STEP_QMM = 4      # mul_mat with quantized weights: convert b (shared), barrier, dots
                      # (small b: in the step's own region, claimed row by row, no barrier)

ctypedef struct gstep:
    int kind
    int node          # index of the (first) node
    int count         # nodes covered (fused groups: > 1)
    int n_tasks       # threads that take part (the others wait at the barrier)
    fuse_group * group
    int barrier_after # 1: every thread meets after this step (a later step depends on it)
    size_t qoff       # STEP_QMM with a small b: offset of its own region in the small-QMM
                      # area; (size_t)-1: the shared buffer (convert, barrier, dots).
                      # STEP_NODE of a float mul_mat: offset of its task counters there
                      # (mm_compute_dealt, a cache line per thread); (size_t)-1 for
                      # other nodes

ctypedef struct gplan:
    int n_threads
    int n_active                # most threads any step uses: the region's size
    int n_nodes
    int n_steps
    ggml_tensor ** nodes        # copy of the graph's node list
    gstep * steps
    int * node_tasks            # per node, for graph.plan() reporting
    size_t shared_size          # temporaries of STEP_TEMP nodes, converted b of STEP_QMM
                                # nodes (one step at a time)
    size_t per_thread_size      # mul_mat packs / fused scratch, per thread
    size_t qsmall_size          # the small-QMM regions (converted b + counters), one per step,
                                # and the float mul_mat steps' task counters (a line a thread)
    size_t work_size            # total bytes the work buffer needs
    int error                   # set by compute when a kernel refused a node
    int fe_flags                # FP exception flags (FE_* bits numpy reports) the last
                                # compute raised, over all threads

# Builds a plan (raises ValueError/TypeError naming the node when a node cannot run:
# no data, unsupported types). pinned[i] marks nodes that must be written to memory
# (outputs); fuse=False disables fused groups.
cdef gplan * plan_build(ggml_tensor ** nodes, int n_nodes, int n_threads, bint fuse,
                        const unsigned char * pinned) except NULL
cdef void plan_free(gplan * p) noexcept nogil
# Points the plan's fused groups at their tensors' current data (fuse_repoint): for
# tensors moved to memory that overlaps nothing it did not overlap when the plan was made
# (evaluate()'s fresh results); anything else needs a new plan.
cdef void plan_repoint(gplan * p) noexcept nogil
# Runs the plan with `work` (plan.work_size bytes, any alignment). Releases nothing
# itself: call it without the GIL. Returns 0, -1 when a kernel refused a node, or
# KERN_INTERRUPTED (-2; _kernels.raise_interrupted raises it) when Ctrl-C stopped it.
cdef int plan_compute(gplan * p, char * work) noexcept nogil

# Python view of a plan: work_size, n_threads, n_tasks per node, the fused groups.
cdef class Plan:
    cdef gplan * p
    cdef object keepalive       # the graph / context whose tensors the plan points at
    # the work buffer of the last compute with this plan, kept for the next one (ggml's
    # cplan.work_data): a decode step reruns one plan, and a fresh malloc of megabytes
    # each time costs page faults on every call. work_busy: a compute holds it (set and
    # cleared with the GIL held, so a second thread computing the same plan at the same
    # time gets a buffer of its own)
    cdef char * work_buf
    cdef bint work_busy

# Builds a Plan object (owning its gplan); keepalive is stored on it.
cdef Plan make_plan(ggml_tensor ** nodes, int n_nodes, int n_threads, bint fuse,
                    const unsigned char * pinned, object keepalive)

# Raises ValueError/TypeError when the CPU cannot run node t (need_data: also when t or a
# source has no data yet).
cdef int check_node(ggml_tensor * t, bint need_data) except -1
