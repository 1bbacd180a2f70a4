// Binary elementwise ops: dst = op(src0, src1), each source tiled over dst (ggml's rule:
// ne_src[i] divides ne_dst[i]; 1 is plain broadcasting).
//
// Three kernel families, chosen on the host:
//  * k_bin_fast    (OpenPPL's fast paths): dst contiguous, one operand with dst's shape and
//                  the other contiguous with a broadcast pattern that flattens to
//                  off = ((i / K) % M) * sm + (i % K) * sk: flat (no broadcast), one scalar,
//                  inner-dimension (i % K), channel/outer ((i / K) % M). 16-byte vector loads
//                  and stores (float4, 8 x half), op fixed at compile time.
//  * k_bin_bcast   (ggml's bin_bcast, seed 001): any strides, 4-D over a 3-D grid after
//                  merging dims, sources tiled by (fast) modulo, op chosen at run time.
//  * k_bin_unravel (ggml's fallback when a grid dim passes its limit): 1-D over elements.
#include "ops.cuh"

namespace gcy {

template <typename T, int N> struct alignas(sizeof(T) * N) vec_t { T v[N]; };

// One 16-byte vector of results. float16 arithmetic: + - * run as half2 instructions
// (the float32 operation rounded once to half gives the same value: 24 >= 2*11+2 bits,
// double rounding is innocuous), and NaN lanes are found afterwards on the packed bits
// with integer arithmetic; only a vector holding a NaN is redone lane by lane through
// bin_elem, which gives the NaN bits numpy gives. Other types: bin_elem per lane.
template <int OP, typename T, typename TD, bool SWAP, int VEC>
__device__ __forceinline__ vec_t<TD, VEC> bin_vec(const vec_t<T, VEC> & va, const vec_t<T, VEC> & vb) {
    vec_t<TD, VEC> r;
    const vec_t<T, VEC> & x = SWAP ? vb : va;
    const vec_t<T, VEC> & y = SWAP ? va : vb;
    if constexpr (std::is_same_v<T, half> && std::is_same_v<TD, half> &&
                  (OP == GGML_OP_ADD || OP == GGML_OP_SUB || OP == GGML_OP_MUL)) {
        const __half2 * x2 = reinterpret_cast<const __half2 *>(x.v);
        const __half2 * y2 = reinterpret_cast<const __half2 *>(y.v);
        __half2 * r2 = reinterpret_cast<__half2 *>(r.v);
        uint32_t nan_bits = 0;
#pragma unroll
        for (int k = 0; k < VEC / 2; k++) {
            if constexpr (OP == GGML_OP_ADD) r2[k] = __hadd2(x2[k], y2[k]);
            else if constexpr (OP == GGML_OP_SUB) r2[k] = __hsub2(x2[k], y2[k]);
            else r2[k] = __hmul2(x2[k], y2[k]);
            // a half is NaN when its magnitude bits exceed 0x7c00: adding 0x3ff carries
            // into bit 15 exactly then (and never across the two halves)
            const uint32_t u = *reinterpret_cast<const uint32_t *>(&r2[k]);
            nan_bits |= ((u & 0x7fff7fffu) + 0x03ff03ffu) & 0x80008000u;
        }
        if (nan_bits) {
#pragma unroll
            for (int e = 0; e < VEC; e++) r.v[e] = bin_elem<OP, T, TD>(x.v[e], y.v[e]);
        }
    } else {
#pragma unroll
        for (int e = 0; e < VEC; e++) r.v[e] = bin_elem<OP, T, TD>(x.v[e], y.v[e]);
    }
    return r;
}

// ------------------------------------------------------------------ fast path
// Fast-path modes: operand `a` always has dst's shape; `b` is indexed by the pattern.
enum { FAST_FLAT = 0, FAST_BCAST = 1, FAST_BCAST_SWAP = 2 };   // SWAP: b is src0
constexpr int FAST_ILP = 4;   // 16-byte vectors per thread and operand in flight

template <int OP, typename T, typename TD, int MODE>
__global__ void __launch_bounds__(BLOCK)
k_bin_fast(const T * __restrict__ a, const T * __restrict__ b, TD * __restrict__ d,
           uint32_t n, fastdiv K, fastdiv M, uint32_t sm, uint32_t sk, int ilp) {
    constexpr int VEC = 16 / sizeof(T);
    using VT = vec_t<T, VEC>;
    using VD = vec_t<TD, VEC>;
    const uint32_t nvec = n / VEC;
    // ilp (1..FAST_ILP) vectors per thread: 4 keeps 4 loads per operand in flight on large
    // tensors; small tensors take 1 so that the grid still fills every multiprocessor
    const uint32_t v0 = blockIdx.x * (BLOCK * ilp) + threadIdx.x;

    VT va[FAST_ILP], vb[FAST_ILP];
#pragma unroll
    for (int j = 0; j < FAST_ILP; j++) {
        const uint32_t v = v0 + j * BLOCK;
        if (j < ilp && v < nvec) {
            va[j] = reinterpret_cast<const VT *>(a)[v];
            if constexpr (MODE == FAST_FLAT) {
                vb[j] = reinterpret_cast<const VT *>(b)[v];
            } else {
                const uint32_t i = v * VEC;
                const uint32_t q = fdiv(i, K);
                const uint32_t off = fmod_u(q, M) * sm + (i - q * K.d) * sk;
                if (sk) {
                    vb[j] = *reinterpret_cast<const VT *>(b + off);
                } else {
                    const T s = b[off];
#pragma unroll
                    for (int e = 0; e < VEC; e++) vb[j].v[e] = s;
                }
            }
        }
    }
#pragma unroll
    for (int j = 0; j < FAST_ILP; j++) {
        const uint32_t v = v0 + j * BLOCK;
        if (j < ilp && v < nvec) {
            reinterpret_cast<VD *>(d)[v] = bin_vec<OP, T, TD, MODE == FAST_BCAST_SWAP>(va[j], vb[j]);
        }
    }
    // the last n % VEC elements, one per thread of the last block
    if (blockIdx.x == gridDim.x - 1) {
        const uint32_t i = nvec * VEC + threadIdx.x;
        if (i < n) {
            T y;
            if constexpr (MODE == FAST_FLAT) {
                y = b[i];
            } else {
                const uint32_t q = fdiv(i, K);
                y = b[fmod_u(q, M) * sm + (i - q * K.d) * sk];
            }
            d[i] = MODE == FAST_BCAST_SWAP ? bin_elem<OP, T, TD>(y, a[i]) : bin_elem<OP, T, TD>(a[i], y);
        }
    }
}

// Inner-dimension broadcast, b indexed by i % K (b a contiguous run of K elements, tiled
// over `rows` rows of a): a 2-D grid, x over the row's vectors, y over chunks of rows. Each
// thread loads its vector of b once and reuses it down its chunk of rows (4 rows of a in
// flight), so b is read from memory once instead of once per row.
constexpr int INNER_ROWS_ILP = 4;

template <int OP, typename T, typename TD, bool SWAP>
__global__ void __launch_bounds__(BLOCK)
k_bin_inner(const T * __restrict__ a, const T * __restrict__ b, TD * __restrict__ d,
            uint32_t kvec, uint32_t rows, uint32_t rows_per_y) {
    constexpr int VEC = 16 / sizeof(T);
    using VT = vec_t<T, VEC>;
    using VD = vec_t<TD, VEC>;
    const uint32_t kv = blockIdx.x * BLOCK + threadIdx.x;
    if (kv >= kvec) return;
    const VT vb = reinterpret_cast<const VT *>(b)[kv];
    const uint32_t r0 = blockIdx.y * rows_per_y;
    const uint32_t r1 = min(r0 + rows_per_y, rows);
    for (uint32_t r = r0; r < r1; r += INNER_ROWS_ILP) {
        VT va[INNER_ROWS_ILP];
#pragma unroll
        for (int j = 0; j < INNER_ROWS_ILP; j++) {
            if (r + j < r1) va[j] = reinterpret_cast<const VT *>(a)[(r + j) * kvec + kv];
        }
#pragma unroll
        for (int j = 0; j < INNER_ROWS_ILP; j++) {
            if (r + j < r1) {
                reinterpret_cast<VD *>(d)[(r + j) * kvec + kv] = bin_vec<OP, T, TD, SWAP>(va[j], vb);
            }
        }
    }
}

struct fast_plan {
    int mode;
    const void * a;
    const void * b;
    uint32_t n, K, M, sm, sk;
};

template <int OP, typename T>
static int launch_fast_op(const fast_plan & p, void * d, cudaStream_t stream) {
    if constexpr (!bin_valid<T>(OP)) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "op %d not supported for this type", OP);
    } else {
        using TD = std::conditional_t<op_gives_bool(OP), bool, T>;
        constexpr int VEC = 16 / sizeof(T);
        const uint32_t nvec = p.n / VEC;
        const cudaDeviceProp * props;
        GCY_TRY(device_props(&props));
        // 4 vectors per thread only when that still gives >= 4 blocks per multiprocessor
        const int ilp = (int64_t)nvec >= (int64_t)BLOCK * FAST_ILP * 4 * props->multiProcessorCount ? FAST_ILP : 1;
        unsigned int grid = ceil_div(nvec, BLOCK * ilp);
        if (grid == 0) grid = 1;
        const T * a = (const T *)p.a;
        const T * b = (const T *)p.b;
        fastdiv K = make_fastdiv(p.K), M = make_fastdiv(p.M);
        if (p.mode != FAST_FLAT && p.sk == 1 && p.M == 1 && p.K < p.n &&
            (size_t)p.K * sizeof(T) >= (size_t(256) << 10)) {
            // inner-dimension broadcast with a large b (>= 256 KiB, re-read from L2 once per
            // row otherwise): b once per thread, reused down the rows. A small b stays in
            // L1/L2 anyway, and the flat kernel's 1-D walk measured a little faster there
            // (H100, (4096,4096)+(4096,): 47.9 us flat, 49.2 us with this kernel).
            const uint32_t kvec = p.K / VEC, rows = p.n / p.K;
            const unsigned gx = ceil_div(kvec, BLOCK);
            uint32_t per_y = 2 * INNER_ROWS_ILP;
            while ((rows + per_y - 1) / per_y > 65535) per_y *= 2;
            const unsigned gy = ceil_div(rows, per_y);
            const dim3 g2(gx, gy);
            if (p.mode == FAST_BCAST || op_is_commutative(OP)) {
                k_bin_inner<OP, T, TD, false><<<g2, BLOCK, 0, stream>>>(a, b, (TD *)d, kvec, rows, per_y);
            } else if constexpr (!op_is_commutative(OP)) {
                k_bin_inner<OP, T, TD, true><<<g2, BLOCK, 0, stream>>>(a, b, (TD *)d, kvec, rows, per_y);
            }
        } else if (p.mode == FAST_FLAT) {
            k_bin_fast<OP, T, TD, FAST_FLAT><<<grid, BLOCK, 0, stream>>>(a, b, (TD *)d, p.n, K, M, p.sm, p.sk, ilp);
        } else if (p.mode == FAST_BCAST || op_is_commutative(OP)) {
            // a commutative op needs no swapped variant: op(b, a) == op(a, b)
            k_bin_fast<OP, T, TD, FAST_BCAST><<<grid, BLOCK, 0, stream>>>(a, b, (TD *)d, p.n, K, M, p.sm, p.sk, ilp);
        } else {
            if constexpr (!op_is_commutative(OP)) {
                k_bin_fast<OP, T, TD, FAST_BCAST_SWAP><<<grid, BLOCK, 0, stream>>>(a, b, (TD *)d, p.n, K, M, p.sm, p.sk, ilp);
            }
        }
        return check_launch("binary fast-path kernel launch");
    }
}

// The ops and types with compile-time fast kernels: what graphs and benchmarks lean on.
// Everything else takes the general kernel (still one pass, scalar loads); keeping this set
// small keeps nvcc's instantiation count, and so the build time, modest.
template <typename T> constexpr bool fast_type_v =
    std::is_same_v<T, float> || std::is_same_v<T, half> || std::is_same_v<T, bf16>;

static bool fast_op(int op) {
    return op == GGML_OP_ADD || op == GGML_OP_SUB || op == GGML_OP_MUL || op == GGML_OP_DIV ||
           op == GGML_OP_MAX || op == GGML_OP_MIN;
}

template <typename T>
static int launch_fast(int op, const fast_plan & p, void * d, cudaStream_t stream) {
    if constexpr (!fast_type_v<T>) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "no fast kernel for this type");
    } else {
        switch (op) {
            case GGML_OP_ADD: return launch_fast_op<GGML_OP_ADD, T>(p, d, stream);
            case GGML_OP_SUB: return launch_fast_op<GGML_OP_SUB, T>(p, d, stream);
            case GGML_OP_MUL: return launch_fast_op<GGML_OP_MUL, T>(p, d, stream);
            case GGML_OP_DIV: return launch_fast_op<GGML_OP_DIV, T>(p, d, stream);
            case GGML_OP_MAX: return launch_fast_op<GGML_OP_MAX, T>(p, d, stream);
            case GGML_OP_MIN: return launch_fast_op<GGML_OP_MIN, T>(p, d, stream);
            default: return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "no fast kernel for op %d", op);
        }
    }
}

// Describes operand `b` (contiguous, tiled over dst by broadcasting only: each ne is 1 or
// dst's) as off = ((i/K) % M)*sm + (i%K)*sk; false when the pattern has more than two runs
// of the kind [bcast][full][bcast] or [full][bcast] (innermost first).
static bool describe_bcast(const ggml_tensor * dst, const ggml_tensor * b, int vec, fast_plan * p) {
    if (!is_contiguous(b)) return false;
    int64_t run_len[4];
    int run_full[4];
    int nruns = 0;
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (dst->ne[i] == 1) continue;
        int full;
        if (b->ne[i] == dst->ne[i]) full = 1;
        else if (b->ne[i] == 1) full = 0;
        else return false;   // true tiling (1 < ne_b < ne_dst): general kernel
        if (nruns > 0 && run_full[nruns - 1] == full) {
            run_len[nruns - 1] *= dst->ne[i];
        } else {
            run_full[nruns] = full;
            run_len[nruns] = dst->ne[i];
            nruns++;
        }
    }
    p->M = 1; p->sm = 0;
    if (nruns == 0 || (nruns == 1 && !run_full[0])) {          // one scalar
        p->K = vec; p->sk = 0;
        return true;
    }
    if (run_full[0]) {                                          // inner: [full][bcast]
        if (nruns > 2) return false;
        p->K = (uint32_t)run_len[0]; p->sk = 1;
        return run_len[0] % vec == 0;
    }
    if (nruns > 3) return false;                                // channel: [bcast][full][bcast]
    p->K = (uint32_t)run_len[0]; p->sk = 0;
    p->M = (uint32_t)run_len[1]; p->sm = 1;
    return run_len[0] % vec == 0;
}

static bool aligned16(const void * p) { return ((uintptr_t)p & 15) == 0; }

// Fills *p and returns true when the fast kernels apply.
static bool plan_fast(const ggml_tensor * dst, const ggml_tensor * s0, const ggml_tensor * s1,
                      fast_plan * p) {
    if (!fast_op(dst->op)) return false;
    if (s0->type != GGML_TYPE_F32 && s0->type != GGML_TYPE_F16 && s0->type != GGML_TYPE_BF16) return false;
    const int64_t n = nelements(dst);
    if (n >= (int64_t(1) << 31) - 4096) return false;
    if (!is_contiguous(dst) || !aligned16(dst->data)) return false;
    const int vec = 16 / (int)ggml_type_size(s0->type);
    p->n = (uint32_t)n;
    const bool full0 = same_shape(s0, dst) && is_contiguous(s0);
    const bool full1 = same_shape(s1, dst) && is_contiguous(s1);
    if (full0 && full1) {
        if (!aligned16(s0->data) || !aligned16(s1->data)) return false;
        p->mode = FAST_FLAT; p->a = s0->data; p->b = s1->data;
        p->K = 1; p->M = 1; p->sm = 0; p->sk = 1;
        return true;
    }
    const ggml_tensor * a = full0 ? s0 : (full1 ? s1 : nullptr);
    const ggml_tensor * b = full0 ? s1 : s0;
    if (!a || !aligned16(a->data)) return false;
    if (!describe_bcast(dst, b, vec, p)) return false;
    if (p->sk && !aligned16(b->data)) return false;
    p->mode = full0 ? FAST_BCAST : FAST_BCAST_SWAP;
    p->a = a->data; p->b = b->data;
    return true;
}

// ------------------------------------------------------------------ general path
struct bcast_args {
    const char * s0; const char * s1; char * d;
    int ne0, ne1, ne2, ne3;            // dst extents (after merging)
    fastdiv dne1, dne2, dne3;          // for unravelling (dne0 passed separately)
    fastdiv t00, t01, t02, t03;        // src0 tile extents (modulo)
    fastdiv t10, t11, t12, t13;        // src1 tile extents
    int64_t nb0, nb1, nb2, nb3;        // byte strides
    int64_t nb00, nb01, nb02, nb03;
    int64_t nb10, nb11, nb12, nb13;
};

template <typename T, typename TD>
__global__ void k_bin_bcast(int op, bcast_args g) {
    const int i0s = blockDim.x * blockIdx.x + threadIdx.x;
    const int i1 = blockDim.y * blockIdx.y + threadIdx.y;
    const uint32_t z = blockDim.z * blockIdx.z + threadIdx.z;
    const int i2 = (int)fdiv(z, g.dne3);   // z = i2*ne3 + i3, ggml's order
    const int i3 = (int)(z - (uint32_t)i2 * (uint32_t)g.ne3);
    if (i0s >= g.ne0 || i1 >= g.ne1 || i2 >= g.ne2) return;
    const char * r0 = g.s0 + fmod_u(i1, g.t01) * g.nb01 + fmod_u(i2, g.t02) * g.nb02 + fmod_u(i3, g.t03) * g.nb03;
    const char * r1 = g.s1 + fmod_u(i1, g.t11) * g.nb11 + fmod_u(i2, g.t12) * g.nb12 + fmod_u(i3, g.t13) * g.nb13;
    char * rd = g.d + i1 * g.nb1 + i2 * g.nb2 + i3 * g.nb3;
    for (int i0 = i0s; i0 < g.ne0; i0 += blockDim.x * gridDim.x) {
        const T x = *(const T *)(r0 + fmod_u(i0, g.t00) * g.nb00);
        const T y = *(const T *)(r1 + fmod_u(i0, g.t10) * g.nb10);
        *(TD *)(rd + i0 * g.nb0) = bin_elem_rt<T, TD>(op, x, y);
    }
}

template <typename T, typename TD>
__global__ void k_bin_unravel(int op, bcast_args g, fastdiv dne0, uint32_t n) {
    const uint32_t i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    uint32_t t = fdiv(i, dne0);
    const uint32_t i0 = i - t * dne0.d;
    uint32_t u = fdiv(t, g.dne1);
    const uint32_t i1 = t - u * g.dne1.d;
    const uint32_t i3 = fdiv(u, g.dne2);
    const uint32_t i2 = u - i3 * g.dne2.d;
    const char * p0 = g.s0 + fmod_u(i0, g.t00) * g.nb00 + fmod_u(i1, g.t01) * g.nb01 +
                      fmod_u(i2, g.t02) * g.nb02 + fmod_u(i3, g.t03) * g.nb03;
    const char * p1 = g.s1 + fmod_u(i0, g.t10) * g.nb10 + fmod_u(i1, g.t11) * g.nb11 +
                      fmod_u(i2, g.t12) * g.nb12 + fmod_u(i3, g.t13) * g.nb13;
    *(TD *)(g.d + i0 * g.nb0 + i1 * g.nb1 + i2 * g.nb2 + (int64_t)i3 * g.nb3) =
        bin_elem_rt<T, TD>(op, *(const T *)p0, *(const T *)p1);
}

// Operand layout during dim merging.
struct lay { int64_t ne[4]; int64_t nb[4]; };

// Drops the size-1 dims of dst (a source's extent there is 1 as well), then merges dim i+1
// into dim i wherever every operand allows it: it spans both dims fully with
// nb[i+1] == nb[i]*ne[i], or it broadcasts (ne 1) over both. ggml collapses only when all
// operands are contiguous; this also merges strided views (OpenPPL's dim merging).
static void merge_dims(lay & d, lay & a, lay & b) {
    lay * ops[3] = {&d, &a, &b};
    int nd = 0;
    for (int i = 0; i < 4; i++) {
        if (d.ne[i] == 1) continue;
        for (lay * o : ops) { o->ne[nd] = o->ne[i]; o->nb[nd] = o->nb[i]; }
        nd++;
    }
    for (int i = nd; i < 4; i++) {
        for (lay * o : ops) { o->ne[i] = 1; o->nb[i] = i > 0 ? o->nb[i - 1] * o->ne[i - 1] : 0; }
    }
    int i = 0;
    while (i + 1 < nd) {
        bool can = true;
        for (lay * o : ops) {
            const bool full = o->ne[i] == d.ne[i] && o->ne[i + 1] == d.ne[i + 1] &&
                              o->nb[i + 1] == o->nb[i] * o->ne[i];
            const bool bcast = o->ne[i] == 1 && o->ne[i + 1] == 1;
            if (!full && !bcast) { can = false; break; }
        }
        if (!can) { i++; continue; }
        for (lay * o : ops) {
            o->ne[i] *= o->ne[i + 1];
            for (int j = i + 1; j < 3; j++) { o->ne[j] = o->ne[j + 1]; o->nb[j] = o->nb[j + 1]; }
            o->ne[3] = 1;
        }
        nd--;
    }
}

template <typename T, typename TD>
static int launch_general(int op, const lay & d, const lay & a, const lay & b, void * dd,
                          const void * ad, const void * bd, cudaStream_t stream) {
    for (int i = 0; i < 4; i++) {
        if (d.ne[i] >= (int64_t(1) << 31)) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "dimension too large");
    }
    if (d.ne[2] * d.ne[3] >= (int64_t(1) << 31)) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "dims 2*3 too large");
    bcast_args g;
    g.s0 = (const char *)ad; g.s1 = (const char *)bd; g.d = (char *)dd;
    g.ne0 = (int)d.ne[0]; g.ne1 = (int)d.ne[1]; g.ne2 = (int)d.ne[2]; g.ne3 = (int)d.ne[3];
    g.dne1 = make_fastdiv(g.ne1); g.dne2 = make_fastdiv(g.ne2); g.dne3 = make_fastdiv(g.ne3);
    g.t00 = make_fastdiv(a.ne[0]); g.t01 = make_fastdiv(a.ne[1]); g.t02 = make_fastdiv(a.ne[2]); g.t03 = make_fastdiv(a.ne[3]);
    g.t10 = make_fastdiv(b.ne[0]); g.t11 = make_fastdiv(b.ne[1]); g.t12 = make_fastdiv(b.ne[2]); g.t13 = make_fastdiv(b.ne[3]);
    g.nb0 = d.nb[0]; g.nb1 = d.nb[1]; g.nb2 = d.nb[2]; g.nb3 = d.nb[3];
    g.nb00 = a.nb[0]; g.nb01 = a.nb[1]; g.nb02 = a.nb[2]; g.nb03 = a.nb[3];
    g.nb10 = b.nb[0]; g.nb11 = b.nb[1]; g.nb12 = b.nb[2]; g.nb13 = b.nb[3];

    // ggml's launch shape: x covers half of ne0 (the kernel loops), y ne1, z ne2*ne3
    const int block_size = 128;
    const int64_t hne0 = d.ne[0] / 2 > 1 ? d.ne[0] / 2 : 1;
    dim3 block;
    block.x = (unsigned)(hne0 < block_size ? hne0 : block_size);
    block.y = (unsigned)(d.ne[1] < block_size / block.x ? d.ne[1] : block_size / block.x);
    int64_t bz = block_size / block.x / block.y;
    if (bz > 64) bz = 64;
    if (d.ne[2] * d.ne[3] < bz) bz = d.ne[2] * d.ne[3];
    block.z = (unsigned)(bz > 0 ? bz : 1);
    const int64_t gx = (hne0 + block.x - 1) / block.x;
    const int64_t gy = (d.ne[1] + block.y - 1) / block.y;
    const int64_t gz = (d.ne[2] * d.ne[3] + block.z - 1) / block.z;
    if (gy > 65535 || gz > 65535 || gx > 0x7fffffff) {
        const int64_t n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
        if (n >= (int64_t(1) << 31)) {
            return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "tensor of %lld elements too large for the unravel kernel",
                        (long long)n);
        }
        k_bin_unravel<T, TD><<<ceil_div(n, BLOCK), BLOCK, 0, stream>>>(op, g, make_fastdiv(g.ne0), (uint32_t)n);
    } else {
        k_bin_bcast<T, TD><<<dim3((unsigned)gx, (unsigned)gy, (unsigned)gz), block, 0, stream>>>(op, g);
    }
    return check_launch("binary broadcast kernel launch");
}

bool binary_supported(int op, int dst_type, int src0_type, int src1_type) {
    if (!op_is_binary(op) || src0_type != src1_type) return false;
    bool ok = false;
    with_type(src0_type, [&](auto * tp) {
        using T = std::remove_pointer_t<decltype(tp)>;
        int want = op_gives_bool(op) ? (int)GGML_TYPE_BOOL : src0_type;
        // bool inputs: arithmetic results are bool as well
        ok = bin_valid<T>(op) && dst_type == want;
    });
    return ok;
}

int binary_forward(ggml_tensor * dst, cudaStream_t stream) {
    const ggml_tensor * s0 = dst->src[0];
    const ggml_tensor * s1 = dst->src[1];
    const int op = dst->op;
    if (!binary_supported(op, dst->type, s0->type, s1->type)) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "binary op %d not supported for types dst=%s src0=%s src1=%s",
                    op, ggml_type_name(dst->type), ggml_type_name(s0->type), ggml_type_name(s1->type));
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (s0->ne[i] <= 0 || s1->ne[i] <= 0 || dst->ne[i] % s0->ne[i] || dst->ne[i] % s1->ne[i]) {
            return fail(GGML_CY_CUDA_ERR_INVALID,
                        "shape mismatch: source extents [%lld,%lld,%lld,%lld] and [%lld,%lld,%lld,%lld] "
                        "must divide dst's [%lld,%lld,%lld,%lld]",
                        (long long)s0->ne[0], (long long)s0->ne[1], (long long)s0->ne[2], (long long)s0->ne[3],
                        (long long)s1->ne[0], (long long)s1->ne[1], (long long)s1->ne[2], (long long)s1->ne[3],
                        (long long)dst->ne[0], (long long)dst->ne[1], (long long)dst->ne[2], (long long)dst->ne[3]);
        }
    }
    if (nelements(dst) == 0) return GGML_CY_CUDA_OK;

    int status = GGML_CY_CUDA_OK;
    fast_plan p;
    if (plan_fast(dst, s0, s1, &p)) {
        with_type(s0->type, [&](auto * tp) {
            using T = std::remove_pointer_t<decltype(tp)>;
            status = launch_fast<T>(op, p, dst->data, stream);
        });
        return status;
    }
    lay d, a, b;
    for (int i = 0; i < 4; i++) {
        d.ne[i] = dst->ne[i]; d.nb[i] = dst->nb[i];
        a.ne[i] = s0->ne[i]; a.nb[i] = s0->nb[i];
        b.ne[i] = s1->ne[i]; b.nb[i] = s1->nb[i];
    }
    merge_dims(d, a, b);
    with_type(s0->type, [&](auto * tp) {
        using T = std::remove_pointer_t<decltype(tp)>;
        if (op_gives_bool(op) || std::is_same_v<T, bool>) {
            status = launch_general<T, bool>(op, d, a, b, dst->data, s0->data, s1->data, stream);
        } else {
            status = launch_general<T, T>(op, d, a, b, dst->data, s0->data, s1->data, stream);
        }
    });
    return status;
}

// ------------------------------------------------------------------ int8 with scales
template <int OP> __device__ __forceinline__ float scaled_op(float x, float y) {
    if constexpr (OP == GGML_OP_ADD) return __fadd_rn(x, y);
    else if constexpr (OP == GGML_OP_SUB) return __fsub_rn(x, y);
    else if constexpr (OP == GGML_OP_MUL) return __fmul_rn(x, y);
    else if constexpr (OP == GGML_OP_DIV) return __fdiv_rn(x, y);
    else if constexpr (OP == GGML_OP_MAX) return x >= y ? x : y;
    else return x <= y ? x : y;
}

// OpenPPL's int8 form: dequantize each input with its scale, apply the op in float,
// requantize with the output scale, round half to even, saturate to [-128, 127].
template <int OP>
__global__ void k_bin_scaled_i8(bcast_args g, fastdiv dne0, uint32_t n, float s0, float s1, float s_out) {
    const uint32_t i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    uint32_t t = fdiv(i, dne0);
    const uint32_t i0 = i - t * dne0.d;
    uint32_t u = fdiv(t, g.dne1);
    const uint32_t i1 = t - u * g.dne1.d;
    const uint32_t i3 = fdiv(u, g.dne2);
    const uint32_t i2 = u - i3 * g.dne2.d;
    const int8_t x = *(const int8_t *)(g.s0 + fmod_u(i0, g.t00) * g.nb00 + fmod_u(i1, g.t01) * g.nb01 +
                                       fmod_u(i2, g.t02) * g.nb02 + fmod_u(i3, g.t03) * g.nb03);
    const int8_t y = *(const int8_t *)(g.s1 + fmod_u(i0, g.t10) * g.nb10 + fmod_u(i1, g.t11) * g.nb11 +
                                       fmod_u(i2, g.t12) * g.nb12 + fmod_u(i3, g.t13) * g.nb13);
    float r = __fdiv_rn(scaled_op<OP>(__fmul_rn((float)x, s0), __fmul_rn((float)y, s1)), s_out);
    r = rintf(r);
    r = r > 127.f ? 127.f : (r < -128.f ? -128.f : r);
    if (r != r) r = 0.f;   // NaN (0/0 with DIV): 0
    *(int8_t *)(g.d + i0 * g.nb0 + i1 * g.nb1 + i2 * g.nb2 + (int64_t)i3 * g.nb3) = (int8_t)(int)r;
}

int binary_scaled_i8(ggml_tensor * dst, float s0, float s1, float s_out, cudaStream_t stream) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    if (dst->type != GGML_TYPE_I8 || a->type != GGML_TYPE_I8 || b->type != GGML_TYPE_I8) {
        return fail(GGML_CY_CUDA_ERR_INVALID, "scaled int8 ops need int8 dst and sources");
    }
    if (!(s_out != 0.f) || s_out != s_out) return fail(GGML_CY_CUDA_ERR_INVALID, "output scale must be nonzero");
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (a->ne[i] <= 0 || b->ne[i] <= 0 || dst->ne[i] % a->ne[i] || dst->ne[i] % b->ne[i]) {
            return fail(GGML_CY_CUDA_ERR_INVALID, "shape mismatch in scaled int8 op");
        }
    }
    const int64_t n = nelements(dst);
    if (n == 0) return GGML_CY_CUDA_OK;
    if (n >= (int64_t(1) << 31)) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "tensor too large");
    lay d, la, lb;
    for (int i = 0; i < 4; i++) {
        d.ne[i] = dst->ne[i]; d.nb[i] = dst->nb[i];
        la.ne[i] = a->ne[i]; la.nb[i] = a->nb[i];
        lb.ne[i] = b->ne[i]; lb.nb[i] = b->nb[i];
    }
    merge_dims(d, la, lb);
    bcast_args g;
    g.s0 = (const char *)a->data; g.s1 = (const char *)b->data; g.d = (char *)dst->data;
    g.ne0 = (int)d.ne[0]; g.ne1 = (int)d.ne[1]; g.ne2 = (int)d.ne[2]; g.ne3 = (int)d.ne[3];
    g.dne1 = make_fastdiv(g.ne1); g.dne2 = make_fastdiv(g.ne2); g.dne3 = make_fastdiv(g.ne3);
    g.t00 = make_fastdiv(la.ne[0]); g.t01 = make_fastdiv(la.ne[1]); g.t02 = make_fastdiv(la.ne[2]); g.t03 = make_fastdiv(la.ne[3]);
    g.t10 = make_fastdiv(lb.ne[0]); g.t11 = make_fastdiv(lb.ne[1]); g.t12 = make_fastdiv(lb.ne[2]); g.t13 = make_fastdiv(lb.ne[3]);
    g.nb0 = d.nb[0]; g.nb1 = d.nb[1]; g.nb2 = d.nb[2]; g.nb3 = d.nb[3];
    g.nb00 = la.nb[0]; g.nb01 = la.nb[1]; g.nb02 = la.nb[2]; g.nb03 = la.nb[3];
    g.nb10 = lb.nb[0]; g.nb11 = lb.nb[1]; g.nb12 = lb.nb[2]; g.nb13 = lb.nb[3];
    const unsigned grid = ceil_div(n, BLOCK);
    const fastdiv dn0 = make_fastdiv(g.ne0);
    switch (dst->op) {
        case GGML_OP_ADD: k_bin_scaled_i8<GGML_OP_ADD><<<grid, BLOCK, 0, stream>>>(g, dn0, (uint32_t)n, s0, s1, s_out); break;
        case GGML_OP_SUB: k_bin_scaled_i8<GGML_OP_SUB><<<grid, BLOCK, 0, stream>>>(g, dn0, (uint32_t)n, s0, s1, s_out); break;
        case GGML_OP_MUL: k_bin_scaled_i8<GGML_OP_MUL><<<grid, BLOCK, 0, stream>>>(g, dn0, (uint32_t)n, s0, s1, s_out); break;
        case GGML_OP_DIV: k_bin_scaled_i8<GGML_OP_DIV><<<grid, BLOCK, 0, stream>>>(g, dn0, (uint32_t)n, s0, s1, s_out); break;
        case GGML_OP_MAX: k_bin_scaled_i8<GGML_OP_MAX><<<grid, BLOCK, 0, stream>>>(g, dn0, (uint32_t)n, s0, s1, s_out); break;
        case GGML_OP_MIN: k_bin_scaled_i8<GGML_OP_MIN><<<grid, BLOCK, 0, stream>>>(g, dn0, (uint32_t)n, s0, s1, s_out); break;
        default: return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "scaled int8 supports ADD SUB MUL DIV MAX MIN, not op %d", dst->op);
    }
    return check_launch("scaled int8 kernel launch");
}

}  // namespace gcy
