// GGML_OP_FLASH_ATTN_EXT on the device (ggml's flash_attn_ext; CPU: ggml_cy/cpu/csrc/ops_rows_attn.h):
//   q [DK, n_q, n_head, batch] f32; k [DK, n_kv, n_head_kv, batch_kv] and v [DV, n_kv,
//   n_head_kv, batch_kv] f32, f16 or bf16 (the same type, the same head/batch counts);
//   optional mask [>= n_kv, >= n_q, m2, m3] f16, broadcast by modulo over heads and batch;
//   dst [DV, n_head, n_q, batch] f32 (ggml's permuted result):
//     dst[:, h, i, b] = softmax_j(s_ij) . v[:, j, h / (n_head / n_head_kv), b]
//     s_ij = softcap(scale * q_i . k_j) + slope(h) * mask[j, i]
// Everything in f32 with an online softmax (running max M, sum S, f32 accumulator).
//
// Layout of the work: a CTA takes NW query rows that read the same k/v head (GQA: the
// heads of one group, and the query positions) and one range of keys (a "split"). Its warps
// load tiles of KT keys of k and v into shared memory (widened to f32) once for the NW rows;
// each warp owns one row: lane j scores key j of the tile (a dot product over DK), the warp
// updates (M, S) and each lane accumulates DV/32 output values. With one split the CTA
// writes the normalized result; with several (decode: one query row against thousands of
// keys would otherwise leave most SMs idle) each writes (M, S, acc) to a scratch buffer and a
// second kernel merges the splits per row.
#include <math.h>
#include <mutex>
#include <vector>

#include "ops.cuh"

namespace gcy {

constexpr int FA_KT = 32;   // keys per tile (one per lane)

struct fa_args {
    const char * q; const char * k; const char * v; const char * mask; char * dst;
    float * part;                        // [n_split][rows][DV + 2] when n_split > 1
    int64_t qnb[4], knb[4], vnb[4], mnb[4], dnb[4];
    int DK, DV, DK4, DKP, n_kv;
    int nk2, rk2, rk3, R, tiles;         // k heads, q heads per k head, q batches per k batch
    int m2, m3;
    int chunk, n_split;
    float scale, softcap, max_bias, m0, m1;
    int n_head_log2;
    int vec;                             // k and v tiles by 16-byte loads
};

__device__ __forceinline__ float fa_slope(const fa_args & a, int h) {
    if (a.max_bias <= 0.0f) return 1.0f;
    return h < a.n_head_log2 ? powf(a.m0, (float)(h + 1)) : powf(a.m1, (float)(2 * (h - a.n_head_log2) + 1));
}

template <typename T> __device__ __forceinline__ float fa_load(const char * p) { return up(*(const T *)p); }

// rows [k0, k0 + nk) of a k or v head (row stride rs bytes) into a [KT][stride] f32 tile,
// D values per row (zeros beyond nk rows and from D to D4); vec: 16-byte loads (D % N == 0,
// rows and base 16-byte aligned, elements adjacent)
template <typename T, int NTHR>
__device__ __forceinline__ void fa_load_tile(float * tile, int stride, const char * base, int64_t rs, int64_t es,
                                             int k0, int nk, int D, int D4, bool vec) {
    if (vec) {
        constexpr int N = 16 / (int)sizeof(T);
        const int per_row = D / N;
        for (int e = threadIdx.x; e < FA_KT * per_row; e += NTHR) {
            const int j = e / per_row, c = e - j * per_row;
            float v[N];
            if (j < nk) {
                widen16<T>(__ldg((const uint4 *)(base + (int64_t)(k0 + j) * rs) + c), v);
            } else {
#pragma unroll
                for (int i = 0; i < N; i++) v[i] = 0.0f;
            }
            float4 * dst4 = (float4 *)(tile + j * stride + c * N);
#pragma unroll
            for (int i = 0; i < N / 4; i++) dst4[i] = make_float4(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
        }
        return;
    }
    for (int e = threadIdx.x; e < FA_KT * D4; e += NTHR) {
        const int j = e / D4, d = e - j * D4;
        tile[j * stride + d] = (j < nk && d < D) ? fa_load<T>(base + (int64_t)(k0 + j) * rs + (int64_t)d * es) : 0.0f;
    }
}

template <typename T, int NW, int NV>
__global__ void __launch_bounds__(NW * 32) k_flash_attn(fa_args a) {
    extern __shared__ float4 fa_smem4[];
    float * smem = (float *)fa_smem4;
    float * Ks = smem;                          // [KT][DKP]
    float * Vs = Ks + FA_KT * a.DKP;            // [KT][DV]
    float * Qs = Vs + FA_KT * a.DV;             // [NW][DKP]
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    int x = blockIdx.x;
    const int t = x % a.tiles; x /= a.tiles;
    const int g = x % a.nk2;
    const int iq3 = x / a.nk2;
    const int r = t * NW + w;
    const bool valid = r < a.R;
    const int iq1 = valid ? r / a.rk2 : 0;
    const int iq2 = g * a.rk2 + (valid ? r % a.rk2 : 0);
    const int ik3 = iq3 / a.rk3;
    // this warp's q row (zero padded to DKP)
    {
        const char * qr = a.q + (int64_t)iq1 * a.qnb[1] + (int64_t)iq2 * a.qnb[2] + (int64_t)iq3 * a.qnb[3];
        for (int d = lane; d < a.DKP; d += 32)
            Qs[w * a.DKP + d] = (valid && d < a.DK) ? *(const float *)(qr + (int64_t)d * a.qnb[0]) : 0.0f;
    }
    const __half * mrow = nullptr;
    if (a.mask && valid) {
        mrow = (const __half *)(a.mask + (int64_t)iq1 * a.mnb[1] + (int64_t)(iq2 % a.m2) * a.mnb[2] +
                                (int64_t)(iq3 % a.m3) * a.mnb[3]);
    }
    const float slope = fa_slope(a, iq2);
    const char * kb = a.k + (int64_t)g * a.knb[2] + (int64_t)ik3 * a.knb[3];
    const char * vb = a.v + (int64_t)g * a.vnb[2] + (int64_t)ik3 * a.vnb[3];
    const int kstart = blockIdx.y * a.chunk;
    const int kend = min(a.n_kv, kstart + a.chunk);
    float M = -INFINITY, S = 0.0f;
    float acc[NV];
#pragma unroll
    for (int i = 0; i < NV; i++) acc[i] = 0.0f;
    for (int k0 = kstart; k0 < kend; k0 += FA_KT) {
        __syncthreads();   // the previous tile is consumed (and Qs written, the first time)
        const int nk = min(FA_KT, kend - k0);
        fa_load_tile<T, NW * 32>(Ks, a.DKP, kb, a.knb[1], a.knb[0], k0, nk, a.DK, a.DK4, a.vec);
        fa_load_tile<T, NW * 32>(Vs, a.DV, vb, a.vnb[1], a.vnb[0], k0, nk, a.DV, a.DV, a.vec);
        __syncthreads();
        if (!valid) continue;
        float s = -INFINITY;
        if (lane < nk) {
            const float mv = mrow ? slope * __half2float(mrow[k0 + lane]) : 0.0f;
            if (mv != -INFINITY) {
                const float4 * q4 = (const float4 *)(Qs + w * a.DKP);
                const float4 * k4 = (const float4 *)(Ks + lane * a.DKP);
                float d0 = 0.0f, d1 = 0.0f;
                for (int c = 0; c < a.DK4 / 4; c++) {
                    const float4 qv = q4[c], kv = k4[c];
                    d0 = fmaf(qv.x, kv.x, d0); d1 = fmaf(qv.y, kv.y, d1);
                    d0 = fmaf(qv.z, kv.z, d0); d1 = fmaf(qv.w, kv.w, d1);
                }
                s = (d0 + d1) * a.scale;
                if (a.softcap != 0.0f) s = a.softcap * tanhf(s);
                s += mv;
            }
        }
        float mt = s;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, o));
        const float Mn = fmaxf(M, mt);
        if (Mn == -INFINITY) continue;   // every key so far is masked
        const float ms = expf(M - Mn);   // 0 when M was -inf
        const float p = expf(s - Mn);    // 0 for masked keys
        float ps = p;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) ps += __shfl_xor_sync(0xffffffffu, ps, o);
        S = S * ms + ps;
        M = Mn;
#pragma unroll
        for (int i = 0; i < NV; i++) acc[i] *= ms;
        for (int j = 0; j < nk; j++) {
            const float pj = __shfl_sync(0xffffffffu, p, j);
            const float * vr = Vs + j * a.DV;
#pragma unroll
            for (int i = 0; i < NV; i++) {
                const int d = lane + 32 * i;
                if (d < a.DV) acc[i] = fmaf(pj, vr[d], acc[i]);
            }
        }
    }
    if (!valid) return;
    if (a.n_split == 1) {
        const float inv = S == 0.0f ? 0.0f : 1.0f / S;
        char * out = a.dst + (int64_t)iq2 * a.dnb[1] + (int64_t)iq1 * a.dnb[2] + (int64_t)iq3 * a.dnb[3];
#pragma unroll
        for (int i = 0; i < NV; i++) {
            const int d = lane + 32 * i;
            if (d < a.DV) *(float *)(out + (int64_t)d * a.dnb[0]) = acc[i] * inv;
        }
    } else {
        const int64_t rows = (int64_t)gridDim.x / a.tiles * a.R;   // (batch, k head) groups x R
        const int64_t row = ((int64_t)iq3 * a.nk2 + g) * a.R + r;
        float * pp = a.part + ((int64_t)blockIdx.y * rows + row) * (a.DV + 2);
#pragma unroll
        for (int i = 0; i < NV; i++) {
            const int d = lane + 32 * i;
            if (d < a.DV) pp[d] = acc[i];
        }
        if (lane == 0) { pp[a.DV] = M; pp[a.DV + 1] = S; }
    }
}

// One warp per row: merges the splits' (M, S, acc) and writes the normalized row.
__global__ void __launch_bounds__(32) k_flash_attn_merge(fa_args a, int64_t rows) {
    const int64_t row = blockIdx.x;
    const int lane = threadIdx.x;
    const int stride = a.DV + 2;
    float M = -INFINITY;
    for (int s = 0; s < a.n_split; s++) M = fmaxf(M, a.part[((int64_t)s * rows + row) * stride + a.DV]);
    float S = 0.0f;
    for (int s = 0; s < a.n_split; s++) {
        const float * pp = a.part + ((int64_t)s * rows + row) * stride;
        if (pp[a.DV] != -INFINITY) S += pp[a.DV + 1] * expf(pp[a.DV] - M);
    }
    const float inv = S == 0.0f ? 0.0f : 1.0f / S;
    const int r = (int)(row % a.R);
    const int64_t gi = row / a.R;
    const int g = (int)(gi % a.nk2), iq3 = (int)(gi / a.nk2);
    const int iq1 = r / a.rk2, iq2 = g * a.rk2 + r % a.rk2;
    char * out = a.dst + (int64_t)iq2 * a.dnb[1] + (int64_t)iq1 * a.dnb[2] + (int64_t)iq3 * a.dnb[3];
    for (int d = lane; d < a.DV; d += 32) {
        float o = 0.0f;
        for (int s = 0; s < a.n_split; s++) {
            const float * pp = a.part + ((int64_t)s * rows + row) * stride;
            if (pp[a.DV] != -INFINITY) o += pp[d] * expf(pp[a.DV] - M);
        }
        *(float *)(out + (int64_t)d * a.dnb[0]) = o * inv;
    }
}

// Scratch for the split partials: grown on demand, never shrunk, and old blocks are never
// freed (a captured CUDA graph may still point at them); growing is refused while the stream
// is being captured (the capture then fails and the graph runs with plain launches).
static std::mutex g_fa_mutex;
static void * g_fa_scratch[64];
static size_t g_fa_cap[64];

static int fa_scratch(size_t bytes, cudaStream_t stream, float ** out) {
    int dev = 0;
    GCY_CUDA(cudaGetDevice(&dev), "cudaGetDevice");
    if (dev < 0 || dev >= 64) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "device %d", dev);
    std::lock_guard<std::mutex> lock(g_fa_mutex);
    if (g_fa_cap[dev] < bytes) {
        cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
        GCY_CUDA(cudaStreamIsCapturing(stream, &cs), "cudaStreamIsCapturing");
        if (cs != cudaStreamCaptureStatusNone)
            return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "flash_attn_ext: scratch would grow during graph capture");
        size_t cap = g_fa_cap[dev] * 2 > bytes ? g_fa_cap[dev] * 2 : bytes;
        void * p = nullptr;
        GCY_CUDA(cudaMalloc(&p, cap), "cudaMalloc (flash_attn_ext scratch)");
        g_fa_scratch[dev] = p;   // the old block stays allocated (see above)
        g_fa_cap[dev] = cap;
    }
    *out = (float *)g_fa_scratch[dev];
    return GGML_CY_CUDA_OK;
}

bool attn_is_op(int op) { return op == GGML_OP_FLASH_ATTN_EXT; }

// src0_type: q, src1_type: k (v must match k; the mask is f16: attn_check)
bool attn_types_ok(int op, int dst_type, int src0_type, int src1_type) {
    return op == GGML_OP_FLASH_ATTN_EXT && dst_type == GGML_TYPE_F32 && src0_type == GGML_TYPE_F32 &&
           (src1_type == GGML_TYPE_F32 || src1_type == GGML_TYPE_F16 || src1_type == GGML_TYPE_BF16 || src1_type < 0);
}

int attn_check(const ggml_tensor * dst) {
    const ggml_tensor * q = dst->src[0], * k = dst->src[1], * v = dst->src[2], * mask = dst->src[3];
    if (!q || !k || !v) return fail(GGML_CY_CUDA_ERR_INVALID, "flash_attn_ext: needs q, k and v");
    if (dst->src[4]) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "flash_attn_ext: attention sinks (src4) are not supported");
    if (!attn_types_ok(dst->op, dst->type, q->type, k->type) || v->type != k->type ||
        (mask && mask->type != GGML_TYPE_F16)) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "flash_attn_ext: q %s, k %s, v %s, mask %s -> %s (the CUDA kernel "
                    "takes f32 q, k and v both f32, f16 or bf16, an f16 mask, an f32 result)",
                    ggml_type_name(q->type), ggml_type_name(k->type), ggml_type_name(v->type),
                    mask ? ggml_type_name(mask->type) : "none", ggml_type_name(dst->type));
    }
    const int64_t DK = k->ne[0], DV = v->ne[0], n_kv = k->ne[1];
    const int64_t nq1 = q->ne[1], nq2 = q->ne[2], nq3 = q->ne[3];
    if (q->ne[0] != DK || v->ne[1] != n_kv || k->ne[2] <= 0 || k->ne[3] <= 0 || nq2 % k->ne[2] ||
        nq3 % k->ne[3] || dst->ne[0] != DV || dst->ne[1] != nq2 || dst->ne[2] != nq1 || dst->ne[3] != nq3) {
        return fail(GGML_CY_CUDA_ERR_INVALID, "flash_attn_ext: shapes do not match ggml's rule");
    }
    if (v->ne[2] != k->ne[2] || v->ne[3] != k->ne[3])
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "flash_attn_ext: k and v with different head or batch counts");
    if (mask && (mask->ne[0] < n_kv || mask->ne[1] < nq1 || mask->ne[2] <= 0 || mask->ne[3] <= 0 ||
                 nq2 % mask->ne[2] || nq3 % mask->ne[3] || mask->nb[0] != 2)) {
        return fail(GGML_CY_CUDA_ERR_INVALID, "flash_attn_ext: the mask does not cover or broadcast over q");
    }
    if (DK > 1024 || DV > 512) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "flash_attn_ext: head size above 1024 / 512");
    if (n_kv >= (1 << 30) || nq1 >= (1 << 30) || nq2 >= (1 << 20) || nq3 >= (1 << 20))
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "flash_attn_ext: tensor too large");
    return GGML_CY_CUDA_OK;
}

template <typename T, int NW, int NV>
static int fa_launch(const fa_args & p, dim3 grid, size_t smem, cudaStream_t stream) {
    if (smem > 48 * 1024) {   // (a host-side attribute, allowed while the stream is captured)
        GCY_CUDA(cudaFuncSetAttribute(k_flash_attn<T, NW, NV>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
                 "cudaFuncSetAttribute");
    }
    k_flash_attn<T, NW, NV><<<grid, NW * 32, smem, stream>>>(p);
    return check_launch("flash_attn_ext kernel launch");
}

template <typename T, int NW>
static int fa_launch_nv(const fa_args & p, dim3 grid, size_t smem, cudaStream_t stream) {
    if (p.DV <= 64) return fa_launch<T, NW, 2>(p, grid, smem, stream);
    if (p.DV <= 128) return fa_launch<T, NW, 4>(p, grid, smem, stream);
    if (p.DV <= 256) return fa_launch<T, NW, 8>(p, grid, smem, stream);
    return fa_launch<T, NW, 16>(p, grid, smem, stream);
}

template <typename T>
static int fa_launch_t(const fa_args & p, int nw, dim3 grid, size_t smem, cudaStream_t stream) {
    if (nw == 8) return fa_launch_nv<T, 8>(p, grid, smem, stream);
    return fa_launch_nv<T, 4>(p, grid, smem, stream);
}

static float fa_param(const ggml_tensor * t, int i) {
    float f;
    memcpy(&f, &t->op_params[i], sizeof f);
    return f;
}

int attn_forward(ggml_tensor * dst, cudaStream_t stream) {
    GCY_TRY(attn_check(dst));
    const ggml_tensor * q = dst->src[0], * k = dst->src[1], * v = dst->src[2], * mask = dst->src[3];
    const int64_t DK = k->ne[0], DV = v->ne[0], n_kv = k->ne[1];
    const int64_t nq1 = q->ne[1], nq2 = q->ne[2], nq3 = q->ne[3];
    if (nelements(dst) == 0) return GGML_CY_CUDA_OK;
    fa_args p;
    memset(&p, 0, sizeof p);
    p.q = (const char *)q->data; p.k = (const char *)k->data; p.v = (const char *)v->data;
    p.mask = mask ? (const char *)mask->data : nullptr; p.dst = (char *)dst->data;
    for (int i = 0; i < 4; i++) {
        p.qnb[i] = q->nb[i]; p.knb[i] = k->nb[i]; p.vnb[i] = v->nb[i]; p.dnb[i] = dst->nb[i];
        p.mnb[i] = mask ? mask->nb[i] : 0;
    }
    p.DK = (int)DK; p.DV = (int)DV; p.DK4 = (int)((DK + 3) / 4 * 4); p.DKP = p.DK4 + 4;
    p.n_kv = (int)n_kv;
    p.nk2 = (int)k->ne[2]; p.rk2 = (int)(nq2 / k->ne[2]); p.rk3 = (int)(nq3 / k->ne[3]);
    p.R = (int)(nq1 * p.rk2);
    p.m2 = mask ? (int)mask->ne[2] : 1; p.m3 = mask ? (int)mask->ne[3] : 1;
    const float scale = fa_param(dst, 0), max_bias = fa_param(dst, 1), softcap = fa_param(dst, 2);
    p.scale = softcap != 0.0f ? scale / softcap : scale;
    p.softcap = softcap; p.max_bias = max_bias;
    const uint32_t n_head = (uint32_t)nq2;
    const uint32_t n_head_log2 = 1u << (uint32_t)floor(log2((double)n_head));
    p.n_head_log2 = (int)n_head_log2;
    p.m0 = powf(2.0f, -max_bias / (float)n_head_log2);
    p.m1 = powf(2.0f, -(max_bias / 2.0f) / (float)n_head_log2);
    {   // 16-byte loads of k and v rows: whole vectors per row, aligned rows and bases
        const int64_t es = (int64_t)ggml_type_size(k->type), N = 16 / es;
        bool vec = DK % N == 0 && DV % N == 0 && k->nb[0] == es && v->nb[0] == es &&
                   ((uintptr_t)k->data % 16) == 0 && ((uintptr_t)v->data % 16) == 0;
        for (int i = 1; i < 4 && vec; i++) vec = k->nb[i] % 16 == 0 && v->nb[i] % 16 == 0;
        p.vec = vec;
    }
    const int nw = p.R >= 8 ? 8 : 4;
    p.tiles = (p.R + nw - 1) / nw;
    const int64_t ctas = (int64_t)p.tiles * p.nk2 * nq3;
    if (ctas >= ((int64_t)1 << 31)) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "flash_attn_ext: grid too large");
    const cudaDeviceProp * props;
    GCY_TRY(device_props(&props));
    const int64_t kv_tiles = (n_kv + FA_KT - 1) / FA_KT;
    const int64_t want = 2 * (int64_t)props->multiProcessorCount;
    int64_t n_split = ctas >= want ? 1 : (want + ctas - 1) / ctas;
    if (n_split > kv_tiles) n_split = kv_tiles;
    if (n_split > 1024) n_split = 1024;
    if (n_split < 1) n_split = 1;
    const int64_t tiles_per_split = kv_tiles > 0 ? (kv_tiles + n_split - 1) / n_split : 1;
    p.chunk = (int)(tiles_per_split * FA_KT);
    n_split = n_kv > 0 ? (n_kv + p.chunk - 1) / p.chunk : 1;   // no keys: one split, zero rows
    p.n_split = (int)n_split;
    const int64_t rows = (int64_t)nq3 * p.nk2 * p.R;
    if (p.n_split > 1) {
        GCY_TRY(fa_scratch((size_t)p.n_split * rows * (DV + 2) * sizeof(float), stream, &p.part));
    }
    const size_t smem = ((size_t)FA_KT * p.DKP + (size_t)FA_KT * p.DV + (size_t)nw * p.DKP) * sizeof(float);
    if (smem > (size_t)props->sharedMemPerBlockOptin)
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "flash_attn_ext: head sizes too large for shared memory");
    const dim3 grid((unsigned)ctas, (unsigned)p.n_split);
    int st;
    if (k->type == GGML_TYPE_F16) st = fa_launch_t<half>(p, nw, grid, smem, stream);
    else if (k->type == GGML_TYPE_BF16) st = fa_launch_t<bf16>(p, nw, grid, smem, stream);
    else st = fa_launch_t<float>(p, nw, grid, smem, stream);
    if (st != GGML_CY_CUDA_OK || p.n_split == 1) return st;
    k_flash_attn_merge<<<(unsigned)rows, 32, 0, stream>>>(p, rows);
    return check_launch("flash_attn_ext merge kernel launch");
}

}  // namespace gcy
