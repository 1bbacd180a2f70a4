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

// Checks the node and its operands (types, presence, memory) without launching anything.
static int validate_node(ggml_tensor * dst) {
    if (!dst) return fail(GGML_CY_CUDA_ERR_INVALID, "node is NULL");
    const int op = dst->op;
    if (op_is_view(op)) return GGML_CY_CUDA_OK;
    if (op_has_two_sources(op)) {
        if (!dst->src[0] || !dst->src[1]) return fail(GGML_CY_CUDA_ERR_INVALID, "op %d needs two sources", op);
    } else if (op_is_unary(op) || op_is_copy(op) || op_is_reduce(op)) {
        if (!dst->src[0]) return fail(GGML_CY_CUDA_ERR_INVALID, "op needs a source");
    } else if (op == GGML_OP_ROPE || op == GGML_OP_SET_ROWS || op == GGML_OP_FLASH_ATTN_EXT) {
        // cuops2, provisional: cuops1's family table (FAMILIES: rope_*, rows_*, attn_*) replaces this
        const int n = op == GGML_OP_FLASH_ATTN_EXT || op == GGML_OP_SET_ROWS ? 3 : 2;
        for (int s = 0; s < n; s++)
            if (!dst->src[s]) return fail(GGML_CY_CUDA_ERR_INVALID, "op %d needs %d sources", op, n);
        GCY_TRY(check_tensor_memory(dst, "dst"));
        for (int s = 0; s < GGML_MAX_SRC; s++) if (dst->src[s]) GCY_TRY(check_tensor_memory(dst->src[s], "src"));
        return GGML_CY_CUDA_OK;
    } else {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "op %d has no CUDA kernel", op);
    }
    GCY_TRY(check_tensor_memory(dst, "dst"));
    GCY_TRY(check_tensor_memory(dst->src[0], "src0"));
    if (op_has_two_sources(op)) GCY_TRY(check_tensor_memory(dst->src[1], "src1"));
    return GGML_CY_CUDA_OK;
}

static int launch_node(ggml_tensor * dst, cudaStream_t stream) {
    const int op = dst->op;
    if (op_is_view(op)) return GGML_CY_CUDA_OK;
    if (op_is_binary(op)) return binary_forward(dst, stream);
    if (op_is_unary(op)) return unary_forward(dst, stream);
    if (op_is_reduce(op)) return reduce_forward(dst, stream);
    if (op == GGML_OP_MUL_MAT) return mul_mat_forward(dst, stream);
    if (op == GGML_OP_GET_ROWS) return get_rows_forward(dst, stream);   // quant.cu
    if (op == GGML_OP_ROPE) return rope_forward(dst, stream);                 // cuops2: rope.cu
    if (op == GGML_OP_SET_ROWS) return rows_forward(dst, stream);         // rows.cu
    if (op == GGML_OP_FLASH_ATTN_EXT) return attn_forward(dst, stream); // attn.cu
    if (op == GGML_OP_ADD1) {
        // ADD with a one-element src1, which tiles any shape (as the CPU path does)
        if (nelements(dst->src[1]) != 1) return fail(GGML_CY_CUDA_ERR_INVALID, "ADD1: src1 must hold one element");
        ggml_tensor tmp = *dst;
        tmp.op = GGML_OP_ADD;
        return binary_forward(&tmp, stream);
    }
    // CPY(a, b): dst is a view of b (same data and layout), so every copy op writes dst
    return copy_forward(dst, dst->src[0], stream);
}

// ------------------------------------------------------------------ graph cache
// Key of one node: everything a launch bakes into its kernel parameters.
struct node_key {
    const ggml_tensor * node;
    int op, type;
    int64_t ne[4], nb[4];
    void * data;
    int32_t op_params[4];
    const ggml_tensor * src[2];
    void * src_data[2];
    int src_type[2];
    int64_t src_ne[2][4], src_nb[2][4];
};

static void make_key(const ggml_tensor * t, node_key * k) {
    memset(k, 0, sizeof *k);
    k->node = t;
    k->op = t->op;
    k->type = t->type;
    memcpy(k->ne, t->ne, sizeof k->ne);
    memcpy(k->nb, t->nb, sizeof k->nb);
    k->data = t->data;
    memcpy(k->op_params, t->op_params, sizeof k->op_params);
    for (int s = 0; s < 2; s++) {
        const ggml_tensor * x = t->src[s];
        k->src[s] = x;
        if (x) {
            k->src_data[s] = x->data;
            k->src_type[s] = x->type;
            memcpy(k->src_ne[s], x->ne, sizeof x->ne);
            memcpy(k->src_nb[s], x->nb, sizeof x->nb);
        }
    }
}

struct graph_entry {
    std::vector<node_key> keys;
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
    if (op == GGML_OP_ROPE) return rope_types_ok(op, dst_type, src0_type, src1_type);
    if (op == GGML_OP_SET_ROWS) return rows_types_ok(op, dst_type, src0_type, src1_type);
    if (op == GGML_OP_FLASH_ATTN_EXT) return attn_types_ok(op, dst_type, src0_type, src1_type);
    if (op == GGML_OP_ADD1) return binary_supported(GGML_OP_ADD, dst_type, src0_type, src1_type);
    return 0;
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

    std::vector<node_key> keys((size_t)n_nodes);
    for (int i = 0; i < n_nodes; i++) {
        if (!nodes[i]) return fail(GGML_CY_CUDA_ERR_INVALID, "node %d is NULL", i);
        make_key(nodes[i], &keys[i]);
    }
    graph_entry * e = nullptr;
    for (graph_entry * c : g_cache) {
        if (c->keys.size() == keys.size() && c->keys[0].node == keys[0].node) { e = c; break; }
    }
    const bool same = e && memcmp(e->keys.data(), keys.data(), keys.size() * sizeof(node_key)) == 0;
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
        e->keys = keys;
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
