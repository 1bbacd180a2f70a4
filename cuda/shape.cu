// Issue 13's shape and sorting ops on the device (the CPU's are ggml_cy/cpu/csrc/ops_shape.h;
// same op_params, types and results, bit for bit):
//   CONCAT  a and b joined along dim op_params[0]           (any non-quantized type)
//   REPEAT  a tiled over dst's shape                         (any non-quantized type)
//   PAD     zeros (or, op_params[8] != 0, the values wrapped around: circular) added before/
//           after each dim, op_params [lp0, rp0, ..., lp3, rp3] (any non-quantized type)
//   ARGSORT each f32 row's indices (i32), ascending (op_params[0] 0) or descending (1),
//           stable: ties keep index order; NaN sorts above +inf (last ascending, first
//           descending); -0 and +0 tie
//   TOP_K   the first k = dst.ne[0] of the descending ARGSORT order
//   ARGMAX  each f32 row's index of its largest value (2-D only), following the CPU's ggml
//           loop: ties go to the LAST index, and a NaN resets the running maximum (the
//           answer is the last maximum of the last NaN-free run; 0 when there is none)
//
// Sorting is a bitonic network on 64-bit keys (the value's order bits above the index), so
// the unstable network gives the stable order. A row of up to SORT_SMEM elements sorts in
// shared memory (one block per row); a longer ARGSORT row sorts dst's index array in
// place, one launch per network step; a longer TOP_K row streams through shared memory
// (the best k so far plus the next candidates, sorted again), for k <= SORT_SMEM / 2.
#include <algorithm>

#include "ops.cuh"

namespace gcy {

namespace {

constexpr int SH_BLOCK = 256;
constexpr int SORT_THREADS = 1024;
constexpr int SORT_SMEM = 16384;            // keys in shared memory (128 KiB)

struct sview {
    char * data;
    int64_t ne[4], nb[4];
};
sview sview_of(const ggml_tensor * t) {
    sview v;
    v.data = (char *)t->data;
    for (int i = 0; i < 4; i++) { v.ne[i] = t->ne[i]; v.nb[i] = t->nb[i]; }
    return v;
}

// element size of the shape ops' types: every non-quantized type (1, 2, 4 or 8 bytes)
size_t elem_size(int type) {
    if (type < 0 || type >= GGML_TYPE_COUNT || !ggml_cy_type_known(type)) return 0;
    if (ggml_cy_is_quantized(type) || ggml_cy_blck_size(type) != 1) return 0;
    const size_t es = ggml_cy_block_bytes(type);
    return (es == 1 || es == 2 || es == 4 || es == 8) ? es : 0;
}

template <typename F> bool with_size(size_t es, F && f) {
    switch (es) {
        case 1: f((uint8_t *)nullptr); return true;
        case 2: f((uint16_t *)nullptr); return true;
        case 4: f((uint32_t *)nullptr); return true;
        case 8: f((uint64_t *)nullptr); return true;
        default: return false;
    }
}

__device__ __forceinline__ void split4(int64_t k, const int64_t * ne, int64_t * i) {
    i[0] = k % ne[0]; k /= ne[0];
    i[1] = k % ne[1]; k /= ne[1];
    i[2] = k % ne[2];
    i[3] = k / ne[2];
}
__device__ __forceinline__ char * at4(const sview & v, const int64_t * i) {
    return v.data + i[0] * v.nb[0] + i[1] * v.nb[1] + i[2] * v.nb[2] + i[3] * v.nb[3];
}
__device__ __forceinline__ int64_t wrap(int64_t i, int64_t n) {
    const int64_t r = i % n;
    return r < 0 ? r + n : r;
}

#define SH_LOOP(n) \
    for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < (n); \
         k += (int64_t)gridDim.x * blockDim.x)

// ------------------------------------------------------------------ CONCAT / REPEAT / PAD
template <typename E> __global__ void k_concat(sview a, sview b, sview y, int dim, int64_t n) {
    SH_LOOP(n) {
        int64_t i[4];
        split4(k, y.ne, i);
        char * out = at4(y, i);
        const sview * s = &a;
        if (i[dim] >= a.ne[dim]) { i[dim] -= a.ne[dim]; s = &b; }
        *(E *)out = *(const E *)at4(*s, i);
    }
}

template <typename E> __global__ void k_repeat(sview a, sview y, int64_t n) {
    SH_LOOP(n) {
        int64_t i[4];
        split4(k, y.ne, i);
        char * out = at4(y, i);
        for (int d = 0; d < 4; d++) i[d] %= a.ne[d];
        *(E *)out = *(const E *)at4(a, i);
    }
}

struct pads { int64_t lp[4]; int circular; };

template <typename E> __global__ void k_pad(sview a, sview y, pads p, int64_t n) {
    SH_LOOP(n) {
        int64_t i[4];
        split4(k, y.ne, i);
        char * out = at4(y, i);
        bool inside = true;
        for (int d = 0; d < 4; d++) {
            i[d] -= p.lp[d];
            if (p.circular) i[d] = wrap(i[d], a.ne[d]);
            else if (i[d] < 0 || i[d] >= a.ne[d]) inside = false;
        }
        *(E *)out = inside ? *(const E *)at4(a, i) : E(0);
    }
}

// ------------------------------------------------------------------ sort keys
// Order bits of an f32 value: ascending unsigned order = the CPU's order (NaN above +inf,
// every NaN equal, -0 == +0); descending: the complement. The index breaks ties.
__device__ __forceinline__ uint32_t order_bits(float v, int desc) {
    uint32_t u;
    if (v != v) u = 0xffffffffu;
    else {
        u = __float_as_uint(v == 0.0f ? 0.0f : v);
        u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    }
    return desc ? ~u : u;
}
__device__ __forceinline__ uint64_t sort_key(const sview & x, const char * row, int64_t i, int desc) {
    const float v = *(const float *)(row + i * x.nb[0]);
    return ((uint64_t)order_bits(v, desc) << 32) | (uint32_t)i;
}
__device__ __forceinline__ const char * row_of(const sview & v, int64_t ir) {
    const int64_t i1 = ir % v.ne[1], i2 = (ir / v.ne[1]) % v.ne[2], i3 = ir / (v.ne[1] * v.ne[2]);
    return v.data + i1 * v.nb[1] + i2 * v.nb[2] + i3 * v.nb[3];
}

// Bitonic sort (all comparators ascending: the first step of each merge compares mirror
// positions), of sk[0..N), N a power of two; every thread of the block takes part.
__device__ void bitonic_smem(uint64_t * sk, int N) {
    const int half = N >> 1;
    for (int k = 2; k <= N; k <<= 1) {
        const int hk = k >> 1;
        for (int t = threadIdx.x; t < half; t += blockDim.x) {
            const int blk = t / hk, off = t - blk * hk;
            const int i = blk * k + off, p = blk * k + k - 1 - off;
            const uint64_t a = sk[i], b = sk[p];
            if (b < a) { sk[i] = b; sk[p] = a; }
        }
        __syncthreads();
        for (int j = k >> 2; j >= 1; j >>= 1) {
            for (int t = threadIdx.x; t < half; t += blockDim.x) {
                const int i = (t / j) * 2 * j + (t % j), p = i + j;
                const uint64_t a = sk[i], b = sk[p];
                if (b < a) { sk[i] = b; sk[p] = a; }
            }
            __syncthreads();
        }
    }
}

// One row per block, sorted in shared memory (N = the power of two >= n); the first nout
// indices are written.
__global__ void k_sort_smem(sview x, sview y, int64_t n, int N, int desc, int64_t nout) {
    extern __shared__ uint64_t sk[];
    const int64_t ir = blockIdx.x;
    const char * row = row_of(x, ir);
    char * out = (char *)row_of(y, ir);
    for (int i = threadIdx.x; i < N; i += blockDim.x)
        sk[i] = i < n ? sort_key(x, row, i, desc) : ~0ull;
    __syncthreads();
    bitonic_smem(sk, N);
    for (int i = threadIdx.x; i < nout; i += blockDim.x)
        *(int32_t *)(out + i * y.nb[0]) = (int32_t)(uint32_t)sk[i];
}

// TOP_K of a long row: the best k so far in sk[0..k), the next N - k candidates after them.
__global__ void k_topk_stream(sview x, sview y, int64_t n, int N, int64_t kk) {
    extern __shared__ uint64_t sk[];
    const int64_t ir = blockIdx.x;
    const char * row = row_of(x, ir);
    char * out = (char *)row_of(y, ir);
    for (int i = threadIdx.x; i < N; i += blockDim.x)
        sk[i] = i < n ? sort_key(x, row, i, 1) : ~0ull;
    __syncthreads();
    bitonic_smem(sk, N);
    for (int64_t pos = N; pos < n; pos += N - kk) {
        for (int i = (int)kk + threadIdx.x; i < N; i += blockDim.x) {
            const int64_t src = pos + (i - kk);
            sk[i] = src < n ? sort_key(x, row, src, 1) : ~0ull;
        }
        __syncthreads();
        bitonic_smem(sk, N);
    }
    for (int i = threadIdx.x; i < kk; i += blockDim.x)
        *(int32_t *)(out + i * y.nb[0]) = (int32_t)(uint32_t)sk[i];
}

// A long ARGSORT row: dst's indices sorted in place, one network step per launch (the
// same network; comparators whose upper end is >= n meet a virtual +inf and do nothing).
__global__ void k_iota(sview y, int64_t n, int64_t nrows) {
    SH_LOOP(n * nrows) {
        const int64_t i = k % n, ir = k / n;
        *(int32_t *)((char *)row_of(y, ir) + i * y.nb[0]) = (int32_t)i;
    }
}
__global__ void k_sort_step(sview x, sview y, int64_t n, int64_t N, int64_t kb, int64_t j,
                            int desc, int64_t nrows) {
    const int64_t half = N >> 1;
    SH_LOOP(half * nrows) {
        const int64_t t = k % half, ir = k / half;
        int64_t i, p;
        if (j == 0) {        // the mirror step of merge size kb
            const int64_t hk = kb >> 1, blk = t / hk, off = t - blk * hk;
            i = blk * kb + off;
            p = blk * kb + kb - 1 - off;
        } else {
            i = (t / j) * 2 * j + (t % j);
            p = i + j;
        }
        if (p >= n) continue;
        const char * row = row_of(x, ir);
        char * out = (char *)row_of(y, ir);
        int32_t * pi = (int32_t *)(out + i * y.nb[0]);
        int32_t * pp = (int32_t *)(out + p * y.nb[0]);
        const int32_t a = *pi, b = *pp;
        if (sort_key(x, row, b, desc) < sort_key(x, row, a, desc)) { *pi = b; *pp = a; }
    }
}

// ------------------------------------------------------------------ ARGMAX
__device__ __forceinline__ int64_t warp_max_i(int64_t v) {
    for (int o = 16; o > 0; o >>= 1) {
        const int64_t w = __shfl_xor_sync(0xffffffffu, v, o);
        v = w > v ? w : v;
    }
    return v;
}
__device__ int64_t block_max_i(int64_t v, int64_t * sh) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = warp_max_i(v);
    __syncthreads();
    if (lane == 0) sh[w] = v;
    __syncthreads();
    return warp_max_i(lane < nw ? sh[lane] : (int64_t)-1);
}
// (value, index) pairs: the larger value, ties to the larger index
__device__ __forceinline__ void best_of(float & v, int64_t & i, float v2, int64_t i2) {
    if (i2 >= 0 && (i < 0 || v2 > v || (v2 == v && i2 > i))) { v = v2; i = i2; }
}

__global__ void k_argmax(sview x, sview y) {
    __shared__ int64_t shi[32];
    __shared__ float shv[32];
    const int64_t i1 = blockIdx.x, n = x.ne[0];
    const char * row = x.data + i1 * x.nb[1];
    int64_t q = -1;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const float v = *(const float *)(row + j * x.nb[0]);
        if (v == v) q = j;
    }
    q = block_max_i(q, shi);
    int64_t best = 0;
    if (q >= 0) {
        int64_t p = -1;
        for (int64_t j = threadIdx.x; j < q; j += blockDim.x) {
            const float v = *(const float *)(row + j * x.nb[0]);
            if (v != v) p = j;
        }
        p = block_max_i(p, shi);
        float bv = 0.0f;
        int64_t bi = -1;
        for (int64_t j = p + 1 + threadIdx.x; j <= q; j += blockDim.x)
            best_of(bv, bi, *(const float *)(row + j * x.nb[0]), j);
        for (int o = 16; o > 0; o >>= 1)
            best_of(bv, bi, __shfl_xor_sync(0xffffffffu, bv, o), __shfl_xor_sync(0xffffffffu, bi, o));
        const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
        __syncthreads();
        if (lane == 0) { shv[w] = bv; shi[w] = bi; }
        __syncthreads();
        if (w == 0) {
            bv = lane < nw ? shv[lane] : 0.0f;
            bi = lane < nw ? shi[lane] : -1;
            for (int o = 16; o > 0; o >>= 1)
                best_of(bv, bi, __shfl_xor_sync(0xffffffffu, bv, o), __shfl_xor_sync(0xffffffffu, bi, o));
        }
        best = bi;
    }
    if (threadIdx.x == 0) *(int32_t *)(y.data + i1 * y.nb[0]) = (int32_t)best;
}

unsigned grid_for(int64_t n) {
    return (unsigned)std::max<int64_t>(1, std::min<int64_t>((n + SH_BLOCK - 1) / SH_BLOCK, 65535LL * 16));
}

int pow2_at_least(int64_t n) {
    int N = 1;
    while (N < n) N <<= 1;
    return N;
}

bool is_sort(int op) { return op == GGML_OP_ARGSORT || op == GGML_OP_TOP_K || op == GGML_OP_ARGMAX; }

int smem_opt_in() {
    static bool done = false;
    if (done) return GGML_CY_CUDA_OK;
    const int bytes = SORT_SMEM * (int)sizeof(uint64_t);
    GCY_CUDA(cudaFuncSetAttribute(k_sort_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
             "cudaFuncSetAttribute (sort)");
    GCY_CUDA(cudaFuncSetAttribute(k_topk_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
             "cudaFuncSetAttribute (top_k)");
    done = true;
    return GGML_CY_CUDA_OK;
}

}  // namespace

// ------------------------------------------------------------------ family entry points
bool shape_is_op(int op) {
    return op == GGML_OP_CONCAT || op == GGML_OP_REPEAT || op == GGML_OP_PAD || is_sort(op);
}

bool shape_types_ok(int op, int dst_type, int src0_type, int src1_type) {
    if (is_sort(op))
        return src0_type == GGML_TYPE_F32 && dst_type == GGML_TYPE_I32 && src1_type < 0;
    if (!elem_size(src0_type) || dst_type != src0_type) return false;
    return op == GGML_OP_CONCAT ? src1_type == src0_type : src1_type < 0;
}

int shape_check(const ggml_tensor * t) {
    const ggml_tensor * a = t->src[0], * b = t->src[1];
    const int op = t->op;
    if (!shape_types_ok(op, t->type, a->type, b ? b->type : -1))
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "op %d: no CUDA kernel for dst type %d, "
                    "src0 type %d, src1 type %d", op, t->type, a->type, b ? b->type : -1);
    for (int d = 0; d < 4; d++)
        if (t->ne[d] < 0 || a->ne[d] < 0 || (b && b->ne[d] < 0))
            return fail(GGML_CY_CUDA_ERR_INVALID, "op %d: negative extent", op);
    if (nelements(t) > (int64_t)1 << 40)
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "op %d: too many elements", op);
    if (op == GGML_OP_CONCAT) {
        const int dim = t->op_params[0];
        if (dim < 0 || dim > 3) return fail(GGML_CY_CUDA_ERR_INVALID, "CONCAT: dim %d", dim);
        for (int d = 0; d < 4; d++) {
            const int64_t want = d == dim ? a->ne[d] + b->ne[d] : a->ne[d];
            if (t->ne[d] != want || (d != dim && b->ne[d] != a->ne[d]))
                return fail(GGML_CY_CUDA_ERR_INVALID, "CONCAT: shapes do not join along dim %d", dim);
        }
    } else if (op == GGML_OP_REPEAT) {
        for (int d = 0; d < 4; d++)
            if (a->ne[d] == 0 ? t->ne[d] != 0 : t->ne[d] % a->ne[d] != 0)
                return fail(GGML_CY_CUDA_ERR_INVALID, "REPEAT: dst's ne must be multiples of src0's");
    } else if (op == GGML_OP_PAD) {
        const int32_t * pp = t->op_params;
        for (int d = 0; d < 4; d++) {
            if (pp[2 * d] < 0 || pp[2 * d + 1] < 0)
                return fail(GGML_CY_CUDA_ERR_INVALID, "PAD: negative padding");
            if (t->ne[d] != a->ne[d] + pp[2 * d] + pp[2 * d + 1])
                return fail(GGML_CY_CUDA_ERR_INVALID, "PAD: dst's shape is not src0's padded");
            if (pp[8] != 0 && a->ne[d] == 0 && t->ne[d] != 0)
                return fail(GGML_CY_CUDA_ERR_INVALID, "PAD: circular padding of an empty dim");
        }
    } else if (op == GGML_OP_ARGMAX) {
        if (t->ne[0] != a->ne[1] || a->ne[2] != 1 || a->ne[3] != 1 || a->ne[0] > INT32_MAX)
            return fail(GGML_CY_CUDA_ERR_INVALID, "ARGMAX: src0 must be 2-D and dst [ne1]");
        if (a->ne[1] > 0x7fffffffLL) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "ARGMAX: too many rows");
    } else {   // ARGSORT, TOP_K
        const int64_t n = a->ne[0];
        const int desc = op == GGML_OP_TOP_K ? 1 : t->op_params[0];
        const int64_t nout = op == GGML_OP_TOP_K ? t->ne[0] : n;
        if (desc != 0 && desc != 1) return fail(GGML_CY_CUDA_ERR_INVALID, "ARGSORT: order %d", desc);
        if (n > INT32_MAX || nout > n || t->ne[0] != nout)
            return fail(GGML_CY_CUDA_ERR_INVALID, "op %d: dst ne0 %lld does not fit a row of %lld",
                        op, (long long)t->ne[0], (long long)n);
        for (int d = 1; d < 4; d++)
            if (t->ne[d] != a->ne[d]) return fail(GGML_CY_CUDA_ERR_INVALID, "op %d: shapes differ", op);
        if (a->ne[1] * a->ne[2] * a->ne[3] > 0x7fffffffLL)
            return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "op %d: too many rows", op);
        if (op == GGML_OP_TOP_K && n > SORT_SMEM && nout > SORT_SMEM / 2)
            return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "TOP_K: k = %lld of rows longer than %d "
                        "(k up to %d)", (long long)nout, SORT_SMEM, SORT_SMEM / 2);
    }
    return GGML_CY_CUDA_OK;
}

int shape_forward(ggml_tensor * t, cudaStream_t stream) {
    const ggml_tensor * a = t->src[0], * b = t->src[1];
    const int op = t->op;
    const sview x = sview_of(a), y = sview_of(t);
    const int64_t n = nelements(t);
    if (op == GGML_OP_CONCAT || op == GGML_OP_REPEAT || op == GGML_OP_PAD) {
        if (n == 0) return GGML_CY_CUDA_OK;
        const unsigned grid = grid_for(n);
        with_size(elem_size(t->type), [&](auto * ep) {
            using E = std::remove_pointer_t<decltype(ep)>;
            if (op == GGML_OP_CONCAT) {
                k_concat<E><<<grid, SH_BLOCK, 0, stream>>>(x, sview_of(b), y, t->op_params[0], n);
            } else if (op == GGML_OP_REPEAT) {
                k_repeat<E><<<grid, SH_BLOCK, 0, stream>>>(x, y, n);
            } else {
                pads p;
                for (int d = 0; d < 4; d++) p.lp[d] = t->op_params[2 * d];
                p.circular = t->op_params[8] != 0;
                k_pad<E><<<grid, SH_BLOCK, 0, stream>>>(x, y, p, n);
            }
        });
        return check_launch(op == GGML_OP_CONCAT ? "CONCAT" : op == GGML_OP_REPEAT ? "REPEAT" : "PAD");
    }
    if (op == GGML_OP_ARGMAX) {
        if (a->ne[1] == 0) return GGML_CY_CUDA_OK;
        k_argmax<<<(unsigned)a->ne[1], SH_BLOCK, 0, stream>>>(x, y);
        return check_launch("ARGMAX");
    }
    const int64_t ne0 = a->ne[0], nrows = a->ne[1] * a->ne[2] * a->ne[3];
    const int64_t nout = t->ne[0];
    if (nrows == 0 || nout == 0) return GGML_CY_CUDA_OK;
    const int desc = op == GGML_OP_TOP_K ? 1 : t->op_params[0];
    GCY_TRY(smem_opt_in());
    if (ne0 <= SORT_SMEM) {
        const int N = pow2_at_least(ne0);
        const int threads = std::min(SORT_THREADS, std::max(32, N / 2));
        k_sort_smem<<<(unsigned)nrows, threads, (size_t)N * sizeof(uint64_t), stream>>>(
            x, y, ne0, N, desc, nout);
        return check_launch(op == GGML_OP_TOP_K ? "TOP_K" : "ARGSORT");
    }
    if (op == GGML_OP_TOP_K) {
        const int N = SORT_SMEM;
        k_topk_stream<<<(unsigned)nrows, SORT_THREADS, (size_t)N * sizeof(uint64_t), stream>>>(
            x, y, ne0, N, nout);
        return check_launch("TOP_K");
    }
    // long ARGSORT rows: in place in dst, one launch per step of the network
    const int64_t N = pow2_at_least(ne0);
    k_iota<<<grid_for(ne0 * nrows), SH_BLOCK, 0, stream>>>(y, ne0, nrows);
    GCY_TRY(check_launch("ARGSORT"));
    const unsigned grid = grid_for((N / 2) * nrows);
    for (int64_t kb = 2; kb <= N; kb <<= 1) {
        k_sort_step<<<grid, SH_BLOCK, 0, stream>>>(x, y, ne0, N, kb, 0, desc, nrows);
        for (int64_t j = kb >> 2; j >= 1; j >>= 1)
            k_sort_step<<<grid, SH_BLOCK, 0, stream>>>(x, y, ne0, N, kb, j, desc, nrows);
    }
    return check_launch("ARGSORT");
}

}  // namespace gcy
