// One dispatch switch for all ops (ggml: ggml_cuda_compute_forward), and graph compute: a node
// list run on the library stream, captured as a CUDA graph when the same list comes again.
#include <string.h>
#include <vector>

#include "ops.cuh"

namespace gcy {

static bool op_is_view(int op) {
    return op == GGML_OP_NONE || op == GGML_OP_VIEW || op == GGML_OP_RESHAPE ||
           op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}
static bool op_is_copy(int op) {
    return op == GGML_OP_DUP || op == GGML_OP_CPY || op == GGML_OP_CONT;
}
static bool op_is_reduce(int op) {
    return op == GGML_OP_SUM || op == GGML_OP_SUM_ROWS || op == GGML_OP_MEAN;
}
static bool op_has_two_sources(int op) {
    return op_is_binary(op) || op == GGML_OP_ADD1 || op == GGML_OP_MUL_MAT || op == GGML_OP_GET_ROWS;
}
// The ops of the first backend (elementwise, copies, reductions, MUL_MAT, GET_ROWS): they
// check their types at launch and read src[0] (and src[1]).
static bool op_is_basic(int op) {
    return op_has_two_sources(op) || op_is_unary(op) || op_is_copy(op) || op_is_reduce(op);
}

// ------------------------------------------------------------------ op families
// Node-level families (issue 13's ops): each has its own .cu file and three entry points
// (ops.cuh): is_op, check (types, shapes and op_params of the node, with a message;
// no memory access) and forward (launches, after check and the memory checks passed).
struct op_family {
    const char * name;
    bool (*is_op)(int op);
    bool (*types_ok)(int op, int dst_type, int src0_type, int src1_type);   // -1: no src1
    int (*check)(const ggml_tensor * dst);
    int (*forward)(ggml_tensor * dst, cudaStream_t stream);
};

static const op_family FAMILIES[] = {
    {"nn", nn_is_op, nn_types_ok, nn_check, nn_forward},   // nn.cu: norms, soft_max, diag_mask, GLU
    {"shape", shape_is_op, shape_types_ok, shape_check, shape_forward},   // shape.cu: concat, repeat, pad, sorts
    {"rope", rope_is_op, rope_types_ok, rope_check, rope_forward},   // rope.cu: ROPE (cuops2)
    {"rows", rows_is_op, rows_types_ok, rows_check, rows_forward},   // rows.cu: SET_ROWS
    {"attn", attn_is_op, attn_types_ok, attn_check, attn_forward},   // attn.cu: FLASH_ATTN_EXT
};

static const op_family * family_of(int op) {
    for (const op_family & f : FAMILIES)
        if (f.is_op(op)) return &f;
    return nullptr;
}

// How many sources each op takes: src[0..min) must be set, src[max..GGML_MAX_SRC) must be
// NULL (a source the kernels would ignore is refused, not dropped silently).
static bool op_src_range(int op, int * min_src, int * max_src) {
    int lo = -1, hi = -1;
    if (op_is_view(op)) { lo = 0; hi = GGML_MAX_SRC; }         // nothing is read
    else if (op_has_two_sources(op)) { lo = 2; hi = 2; }
    else if (op_is_unary(op) || op_is_reduce(op)) { lo = 1; hi = 1; }
    else if (op_is_copy(op)) { lo = 1; hi = 2; }                // CPY(a, b): dst views b
    else switch (op) {
        case GGML_OP_NORM: case GGML_OP_RMS_NORM: case GGML_OP_GROUP_NORM:
        case GGML_OP_DIAG_MASK_INF: case GGML_OP_REPEAT: case GGML_OP_PAD:
        case GGML_OP_ARGSORT: case GGML_OP_TOP_K: case GGML_OP_ARGMAX:
            lo = 1; hi = 1; break;
        case GGML_OP_SOFT_MAX: lo = 1; hi = 2; break;           // x, mask (no sinks)
        case GGML_OP_GLU: lo = 1; hi = 2; break;                // fused, or split x, g
        case GGML_OP_CONCAT: lo = 2; hi = 2; break;
        case GGML_OP_ROPE: lo = 2; hi = 3; break;               // x, positions, freq factors
        case GGML_OP_SET_ROWS: lo = 3; hi = 3; break;           // b, ids, a (dst views a)
        case GGML_OP_FLASH_ATTN_EXT: lo = 3; hi = 5; break;     // q, k, v, mask, sinks
        default: return false;
    }
    *min_src = lo;
    *max_src = hi;
    return true;
}

static const char * const SRC_ROLE[GGML_MAX_SRC] = {
    "src0", "src1", "src2", "src3", "src4", "src5", "src6", "src7", "src8", "src9"};

// The node without its memory: op known, sources present as the op needs, and (node-level
// families) types, shapes and op_params the kernels take.
static int check_node(const ggml_tensor * dst) {
    if (!dst) return fail(GGML_CY_CUDA_ERR_INVALID, "node is NULL");
    const int op = dst->op;
    int lo, hi;
    const op_family * fam = family_of(op);
    if (!op_src_range(op, &lo, &hi) || (!op_is_view(op) && !op_is_basic(op) && !fam))
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "op %d has no CUDA kernel", op);
    if (op_is_view(op)) return GGML_CY_CUDA_OK;
    for (int s = 0; s < lo; s++)
        if (!dst->src[s]) {
            if (op_has_two_sources(op)) return fail(GGML_CY_CUDA_ERR_INVALID, "op %d needs two sources", op);
            if (lo == 1) return fail(GGML_CY_CUDA_ERR_INVALID, "op needs a source");
            return fail(GGML_CY_CUDA_ERR_INVALID, "op %d needs %d sources (src%d is NULL)", op, lo, s);
        }
    for (int s = hi; s < GGML_MAX_SRC; s++)
        if (dst->src[s])
            return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "op %d: the CUDA kernel takes at most %d "
                        "sources (src%d is set)", op, hi, s);
    return fam ? fam->check(dst) : GGML_CY_CUDA_OK;
}

// Checks the node and its operands (types, presence, memory) without launching anything.
static int validate_node(ggml_tensor * dst) {
    GCY_TRY(check_node(dst));
    if (op_is_view(dst->op)) return GGML_CY_CUDA_OK;
    GCY_TRY(check_tensor_memory(dst, "dst"));
    for (int s = 0; s < GGML_MAX_SRC; s++)
        if (dst->src[s]) GCY_TRY(check_tensor_memory(dst->src[s], SRC_ROLE[s]));
    return GGML_CY_CUDA_OK;
}

static int launch_node(ggml_tensor * dst, cudaStream_t stream) {
    const int op = dst->op;
    if (op_is_view(op)) return GGML_CY_CUDA_OK;
    pdl_op_begin();
    if (op_is_binary(op)) return binary_forward(dst, stream);
    if (op_is_unary(op)) return unary_forward(dst, stream);
    if (op_is_reduce(op)) return reduce_forward(dst, stream);
    if (op == GGML_OP_MUL_MAT) return mul_mat_forward(dst, stream);
    if (op == GGML_OP_GET_ROWS) return get_rows_forward(dst, stream);   // quant.cu
    if (op == GGML_OP_ADD1) {
        // ADD with a one-element src1, which tiles any shape (as the CPU path does)
        if (nelements(dst->src[1]) != 1) return fail(GGML_CY_CUDA_ERR_INVALID, "ADD1: src1 must hold one element");
        ggml_tensor tmp = *dst;
        tmp.op = GGML_OP_ADD;
        return binary_forward(&tmp, stream);
    }
    // CPY(a, b): dst is a view of b (same data and layout), so every copy op writes dst
    if (op_is_copy(op)) return copy_forward(dst, dst->src[0], stream);
    if (const op_family * fam = family_of(op)) return fam->forward(dst, stream);
    return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "op %d has no CUDA kernel", op);
}

// ------------------------------------------------------------------ graph cache
// Key of a node list: everything a launch bakes into its kernel parameters, as words
// appended per node: the node (pointer, op, type, ne, nb, data, the whole op_params array),
// its number of sources (up to the last one set) and each source (pointer, data, type, ne,
// nb). Variable length, so a node with two sources costs 43 words, not GGML_MAX_SRC's.
static inline void key_put(std::vector<uint64_t> & k, const void * p) { k.push_back((uint64_t)(uintptr_t)p); }
static inline void key_put4(std::vector<uint64_t> & k, const int64_t * v) {
    for (int i = 0; i < 4; i++) k.push_back((uint64_t)v[i]);
}

static void append_key(const ggml_tensor * t, std::vector<uint64_t> & k) {
    key_put(k, t);
    k.push_back(((uint64_t)(uint32_t)t->op << 32) | (uint32_t)t->type);
    key_put4(k, t->ne);
    key_put4(k, t->nb);
    key_put(k, t->data);
    constexpr int NP = GGML_MAX_OP_PARAMS / sizeof(int32_t);
    for (int i = 0; i < NP; i += 2)
        k.push_back(((uint64_t)(uint32_t)t->op_params[i] << 32) | (uint32_t)t->op_params[i + 1]);
    int n_src = 0;
    for (int s = 0; s < GGML_MAX_SRC; s++) if (t->src[s]) n_src = s + 1;
    k.push_back((uint64_t)n_src);
    for (int s = 0; s < n_src; s++) {
        const ggml_tensor * x = t->src[s];
        key_put(k, x);
        if (!x) continue;
        key_put(k, x->data);
        k.push_back((uint64_t)(uint32_t)x->type);
        key_put4(k, x->ne);
        key_put4(k, x->nb);
    }
}

struct graph_entry {
    const ggml_tensor * first = nullptr;   // nodes[0]: the lookup
    int n_nodes = 0;
    std::vector<uint64_t> keys;
    cudaGraphExec_t exec = nullptr;
    uint64_t validated_generation = 0;   // registry generation when memory was last checked
    bool capture_failed = false;
};

static std::vector<graph_entry *> g_cache;   // few entries: one per distinct graph in use
static bool g_capture_enabled = true;
constexpr size_t CACHE_MAX = 32;

static void destroy_entry(graph_entry * e) {
    if (e->exec) cudaGraphExecDestroy(e->exec);
    delete e;
}

// Prefixes the last error with the node that caused it (copied first: fail() writes the
// same thread-local buffer it would read from).
static int fail_node(int status, int i, const ggml_tensor * t) {
    char msg[512];
    strncpy(msg, ggml_cy_cuda_last_error(), sizeof msg - 1);
    msg[sizeof msg - 1] = 0;
    char name[GGML_MAX_NAME + 1];
    memcpy(name, t->name, GGML_MAX_NAME);
    name[GGML_MAX_NAME] = 0;
    return fail(status, "graph node %d ('%s', op %d): %s", i, name, t->op, msg);
}

static int run_nodes(ggml_tensor ** nodes, int n, cudaStream_t stream) {
    for (int i = 0; i < n; i++) {
        int st = launch_node(nodes[i], stream);
        if (st != GGML_CY_CUDA_OK) return fail_node(st, i, nodes[i]);
    }
    return GGML_CY_CUDA_OK;
}

static int capture(graph_entry * e, ggml_tensor ** nodes, int n, cudaStream_t stream) {
    cudaGraph_t graph = nullptr;
    GCY_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    int st = run_nodes(nodes, n, stream);
    cudaError_t err = cudaStreamEndCapture(stream, &graph);
    if (st != GGML_CY_CUDA_OK) { if (graph) cudaGraphDestroy(graph); return st; }
    if (err != cudaSuccess) { cudaGetLastError(); return fail_cuda(err, "cudaStreamEndCapture"); }
    err = cudaGraphInstantiate(&e->exec, graph, 0);
    cudaGraphDestroy(graph);
    if (err != cudaSuccess) { e->exec = nullptr; cudaGetLastError(); return fail_cuda(err, "cudaGraphInstantiate"); }
    return GGML_CY_CUDA_OK;
}

}  // namespace gcy

using namespace gcy;

extern "C" {

int ggml_cy_cuda_supports_op(int op, int dst_type, int src0_type, int src1_type) {
    if (op_is_view(op)) return 1;
    if (op_is_binary(op)) return binary_supported(op, dst_type, src0_type, src1_type);
    if (op_is_unary(op)) return unary_supported(op, dst_type, src0_type);
    if (op_is_copy(op)) return copy_supported(dst_type, src0_type);
    if (op_is_reduce(op)) return reduce_supported(op, dst_type, src0_type);
    if (op == GGML_OP_MUL_MAT) return mul_mat_supported(dst_type, src0_type, src1_type);
    if (op == GGML_OP_GET_ROWS) return get_rows_supported(dst_type, src0_type, src1_type);
    if (op == GGML_OP_ADD1) return binary_supported(GGML_OP_ADD, dst_type, src0_type, src1_type);
    // node-level families: whether some node of these types runs (shapes and op_params
    // decide the rest: ggml_cy_cuda_supports_node)
    if (const op_family * fam = family_of(op)) return fam->types_ok(op, dst_type, src0_type, src1_type);
    return 0;
}

int ggml_cy_cuda_supports_node(const ggml_tensor * node) {
    if (!node) return 0;
    if (check_node(node) != GGML_CY_CUDA_OK) return 0;
    const int op = node->op;
    if (op_is_view(op) || family_of(op)) return 1;
    // the first backend's ops check their types at launch: the type table answers
    const ggml_tensor * s0 = node->src[0], * s1 = node->src[1];
    return ggml_cy_cuda_supports_op(op, node->type, s0 ? s0->type : -1,
                                    op_has_two_sources(op) && s1 ? s1->type : -1);
}

int ggml_cy_cuda_compute_forward(ggml_tensor * dst) {
    GCY_TRY(validate_node(dst));
    cudaStream_t stream;
    GCY_TRY(get_stream(&stream));
    return launch_node(dst, stream);
}

int ggml_cy_cuda_binary_scaled_i8(ggml_tensor * dst, float s0, float s1, float s_out) {
    if (!dst || !dst->src[0] || !dst->src[1]) return fail(GGML_CY_CUDA_ERR_INVALID, "scaled op needs dst and two sources");
    GCY_TRY(check_tensor_memory(dst, "dst"));
    GCY_TRY(check_tensor_memory(dst->src[0], "src0"));
    GCY_TRY(check_tensor_memory(dst->src[1], "src1"));
    cudaStream_t stream;
    GCY_TRY(get_stream(&stream));
    pdl_op_begin();
    return binary_scaled_i8(dst, s0, s1, s_out, stream);
}

int ggml_cy_cuda_graph_capture_enable(int enable) {
    g_capture_enabled = enable != 0;
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_graph_cache_clear(void) {
    for (graph_entry * e : g_cache) destroy_entry(e);
    g_cache.clear();
    return GGML_CY_CUDA_OK;
}

int ggml_cy_cuda_graph_compute(ggml_tensor ** nodes, int n_nodes, int * replayed) {
    if (replayed) *replayed = 0;
    if (n_nodes < 0 || (n_nodes > 0 && !nodes)) return fail(GGML_CY_CUDA_ERR_INVALID, "bad node list");
    if (n_nodes == 0) return GGML_CY_CUDA_OK;
    cudaStream_t stream;
    GCY_TRY(get_stream(&stream));

    std::vector<uint64_t> keys;
    keys.reserve((size_t)n_nodes * 48);
    for (int i = 0; i < n_nodes; i++) {
        if (!nodes[i]) return fail(GGML_CY_CUDA_ERR_INVALID, "node %d is NULL", i);
        append_key(nodes[i], keys);
    }
    graph_entry * e = nullptr;
    for (graph_entry * c : g_cache) {
        if (c->n_nodes == n_nodes && c->first == nodes[0]) { e = c; break; }
    }
    const bool same = e && e->keys.size() == keys.size() &&
                      memcmp(e->keys.data(), keys.data(), keys.size() * sizeof(uint64_t)) == 0;
    const uint64_t gen = registry_generation();
    // Memory is checked before every launch of new work, and before a replay whenever a
    // buffer was freed since the last check (a replay must never touch freed memory).
    if (!same || e->validated_generation != gen) {
        for (int i = 0; i < n_nodes; i++) {
            int st = validate_node(nodes[i]);
            if (st != GGML_CY_CUDA_OK) return fail_node(st, i, nodes[i]);
        }
    }
    if (!same) {
        if (!e) {
            if (g_cache.size() >= CACHE_MAX) { destroy_entry(g_cache.front()); g_cache.erase(g_cache.begin()); }
            e = new graph_entry();
            g_cache.push_back(e);
        } else if (e->exec) {
            cudaGraphExecDestroy(e->exec);
            e->exec = nullptr;
        }
        e->keys.swap(keys);
        e->first = nodes[0];
        e->n_nodes = n_nodes;
        e->capture_failed = false;
        e->validated_generation = gen;
        return run_nodes(nodes, n_nodes, stream);   // first sight: plain launches
    }
    e->validated_generation = gen;
    if (!e->exec && g_capture_enabled && !e->capture_failed) {
        int st = capture(e, nodes, n_nodes, stream);
        if (st != GGML_CY_CUDA_OK) {
            e->capture_failed = true;   // run it plainly from now on
            cudaGetLastError();
        }
    }
    if (e->exec) {
        GCY_CUDA(cudaGraphLaunch(e->exec, stream), "cudaGraphLaunch");
        if (replayed) *replayed = 1;
        return GGML_CY_CUDA_OK;
    }
    return run_nodes(nodes, n_nodes, stream);
}

}  // extern "C"
