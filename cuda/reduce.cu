// The graph's reductions and matrix product on the device: SUM (all elements), SUM_ROWS and
// MEAN (each row, ne0 reduced to 1), MUL_MAT (ggml's a [K, M] x b [K, N] -> [M, N] f32,
// batched over dims 2 and 3 with a repeated). Reductions accumulate in double, as the CPU
// path does (the order differs, so results may differ in the last bit of a float64).
#include <mma.h>

#include "ops.cuh"

namespace gcy {

// ------------------------------------------------------------------ reductions
template <typename T> __device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

struct rows_args {
    const char * src; char * dst;
    int64_t ne0; fastdiv ne1, ne2; uint32_t nrows;
    int64_t snb[4], dnb[4];
};

// One warp per row: lanes stride over the row, then a shuffle reduction.
template <typename T>
__global__ void k_sum_rows(rows_args a, int mean) {
    const uint32_t row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x & 31;
    if (row >= a.nrows) return;
    const uint32_t t = fdiv(row, a.ne1), i1 = row - t * a.ne1.d;
    const uint32_t i3 = fdiv(t, a.ne2), i2 = t - i3 * a.ne2.d;
    const char * p = a.src + i1 * a.snb[1] + i2 * a.snb[2] + (int64_t)i3 * a.snb[3];
    double s = 0.0;
    for (int64_t i = lane; i < a.ne0; i += 32) s += (double)*(const T *)(p + i * a.snb[0]);
    s = warp_sum<T>(s);
    if (lane == 0) {
        if (mean) s = a.ne0 > 0 ? s / (double)a.ne0 : __longlong_as_double(0x7ff8000000000000LL);   // numpy: mean of nothing is NaN
        *(T *)(a.dst + i1 * a.dnb[1] + i2 * a.dnb[2] + (int64_t)i3 * a.dnb[3]) = (T)s;
    }
}

// SUM: one block of 1024 threads over every element (a graph reduction, not a hot path).
template <typename T>
__global__ void k_sum_all(rows_args a) {
    __shared__ double part[32];
    double s = 0.0;
    const int64_t n = (int64_t)a.nrows * a.ne0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        const int64_t row = i / a.ne0, i0 = i - row * a.ne0;
        const uint32_t t = fdiv((uint32_t)row, a.ne1), i1 = (uint32_t)row - t * a.ne1.d;
        const uint32_t i3 = fdiv(t, a.ne2), i2 = t - i3 * a.ne2.d;
        s += (double)*(const T *)(a.src + i0 * a.snb[0] + i1 * a.snb[1] + i2 * a.snb[2] + (int64_t)i3 * a.snb[3]);
    }
    s = warp_sum<T>(s);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.0;
        s = warp_sum<T>(s);
        if (threadIdx.x == 0) *(T *)a.dst = (T)s;
    }
}

bool reduce_supported(int op, int dst_type, int src0_type) {
    (void)op;
    return (src0_type == GGML_TYPE_F32 || src0_type == GGML_TYPE_F64) && dst_type == src0_type;
}

int reduce_forward(ggml_tensor * dst, cudaStream_t stream) {
    const ggml_tensor * src = dst->src[0];
    if (!reduce_supported(dst->op, dst->type, src->type)) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "reductions take f32 or f64 (dst of the same type)");
    }
    const int64_t nrows = src->ne[1] * src->ne[2] * src->ne[3];
    if (dst->op == GGML_OP_SUM) {
        if (nelements(dst) != 1) return fail(GGML_CY_CUDA_ERR_INVALID, "SUM: dst must hold one element");
    } else if (dst->ne[0] != 1 || dst->ne[1] != src->ne[1] || dst->ne[2] != src->ne[2] || dst->ne[3] != src->ne[3]) {
        return fail(GGML_CY_CUDA_ERR_INVALID, "SUM_ROWS/MEAN: dst must be [1, ne1, ne2, ne3] of src");
    }
    if (nrows >= (int64_t(1) << 31) || src->ne[1] >= (int64_t(1) << 31) || src->ne[2] >= (int64_t(1) << 31)) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "reduction too large");
    }
    rows_args a;
    a.src = (const char *)src->data; a.dst = (char *)dst->data;
    a.ne0 = src->ne[0];
    a.ne1 = make_fastdiv((uint32_t)src->ne[1]); a.ne2 = make_fastdiv((uint32_t)src->ne[2]);
    a.nrows = (uint32_t)nrows;
    for (int i = 0; i < 4; i++) { a.snb[i] = src->nb[i]; a.dnb[i] = dst->nb[i]; }
    const bool f32 = src->type == GGML_TYPE_F32;
    if (dst->op == GGML_OP_SUM) {
        if (f32) k_sum_all<float><<<1, 1024, 0, stream>>>(a);
        else k_sum_all<double><<<1, 1024, 0, stream>>>(a);
    } else {
        if (nrows == 0) return GGML_CY_CUDA_OK;
        const int mean = dst->op == GGML_OP_MEAN;
        const unsigned grid = ceil_div(nrows, BLOCK / 32);
        if (f32) k_sum_rows<float><<<grid, BLOCK, 0, stream>>>(a, mean);
        else k_sum_rows<double><<<grid, BLOCK, 0, stream>>>(a, mean);
    }
    return check_launch("reduction kernel launch");
}

// ------------------------------------------------------------------ matrix product
// dst[n][m] = sum_k a[m][k] * b[n][k]: a row of a and a row of b are both contiguous in k,
// so both tiles are loaded along k. 32x32 output tiles, 32x8 threads, 4 outputs per thread.
constexpr int MT = 32;

struct mm_args {
    const char * a; const char * b; char * d;
    int K, M, N;
    int r2, r3;                       // b.ne[2]/a.ne[2], b.ne[3]/a.ne[3]
    int ne12;
    int64_t anb[4], bnb[4], dnb[4];
};

template <typename TA>
__global__ void __launch_bounds__(256) k_mul_mat(mm_args p) {
    __shared__ float sa[MT][MT + 1];   // [m][k]
    __shared__ float sb[MT][MT + 1];   // [n][k]
    const int z = blockIdx.z;
    const int i12 = z % p.ne12, i13 = z / p.ne12;
    const char * a = p.a + (i12 / p.r2) * p.anb[2] + (int64_t)(i13 / p.r3) * p.anb[3];
    const char * b = p.b + i12 * p.bnb[2] + (int64_t)i13 * p.bnb[3];
    char * d = p.d + i12 * p.dnb[2] + (int64_t)i13 * p.dnb[3];
    const int m0 = blockIdx.x * MT, n0 = blockIdx.y * MT;
    const int tx = threadIdx.x, ty = threadIdx.y;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int k0 = 0; k0 < p.K; k0 += MT) {
        for (int r = ty; r < MT; r += 8) {
            const int k = k0 + tx;
            const int m = m0 + r, n = n0 + r;
            sa[r][tx] = (m < p.M && k < p.K) ? (float)up(*(const TA *)(a + m * p.anb[1] + k * p.anb[0])) : 0.f;
            sb[r][tx] = (n < p.N && k < p.K) ? *(const float *)(b + n * p.bnb[1] + k * p.bnb[0]) : 0.f;
        }
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < MT; k++) {
            const float av = sa[tx][k];
#pragma unroll
            for (int j = 0; j < 4; j++) acc[j] = fmaf(av, sb[ty + 8 * j][k], acc[j]);
        }
        __syncthreads();
    }
    const int m = m0 + tx;
    if (m < p.M) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int n = n0 + ty + 8 * j;
            if (n < p.N) *(float *)(d + m * p.dnb[0] + n * p.dnb[1]) = acc[j];
        }
    }
}

// (issue 13, cuops2) Mat-vec for 1-8 columns of b (decode steps): a CTA of MV_WARPS warps
// takes R rows; every thread walks K in 16-byte chunks of a (8 f16/bf16 or 4 f32 values of
// each of the R rows), loads the matching b values once for the R rows, and the CTA sums
// its threads' partial products. Needs a's rows contiguous and 16-byte aligned.
constexpr int MV_WARPS = 4;

template <typename TA, int NC, int R>
__global__ void __launch_bounds__(32 * MV_WARPS) k_mv_dense(mm_args p, int bvec) {
    constexpr int NT = 32 * MV_WARPS, V = 16 / (int)sizeof(TA);
    const int row0 = blockIdx.x * R;
    const int z = blockIdx.y;
    const int i12 = z % p.ne12, i13 = z / p.ne12;
    const char * abase = p.a + (int64_t)(i12 / p.r2) * p.anb[2] + (int64_t)(i13 / p.r3) * p.anb[3];
    const uint4 * arow[R];
#pragma unroll
    for (int r = 0; r < R; r++)   // past the end: a valid row, not written
        arow[r] = (const uint4 *)(abase + (int64_t)(row0 + r < p.M ? row0 + r : p.M - 1) * p.anb[1]);
    const char * b = p.b + (int64_t)i12 * p.bnb[2] + (int64_t)i13 * p.bnb[3];
    float acc[R][NC];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int c = 0; c < NC; c++) acc[r][c] = 0.0f;
    const int nchunks = p.K / V;
    for (int ch = threadIdx.x; ch < nchunks; ch += NT) {
        float av[R][V];
#pragma unroll
        for (int r = 0; r < R; r++) widen16<TA>(__ldg(arow[r] + ch), av[r]);
#pragma unroll
        for (int c = 0; c < NC; c++) {
            if (c < p.N) {
                const char * bc = b + (int64_t)c * p.bnb[1];
                float x[V];
                if (bvec) {
#pragma unroll
                    for (int j = 0; j < V / 4; j++) {
                        const float4 f = __ldg((const float4 *)bc + ch * (V / 4) + j);
                        x[4 * j] = f.x; x[4 * j + 1] = f.y; x[4 * j + 2] = f.z; x[4 * j + 3] = f.w;
                    }
                } else {
#pragma unroll
                    for (int j = 0; j < V; j++) x[j] = *(const float *)(bc + (int64_t)(ch * V + j) * p.bnb[0]);
                }
#pragma unroll
                for (int r = 0; r < R; r++)
#pragma unroll
                    for (int j = 0; j < V; j++) acc[r][c] = fmaf(av[r][j], x[j], acc[r][c]);
            }
        }
    }
    __shared__ float part[MV_WARPS][R * NC];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int c = 0; c < NC; c++) {
            float s = acc[r][c];
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
            if (lane == 0) part[warp][r * NC + c] = s;
        }
    __syncthreads();
    if (threadIdx.x < R * NC) {
        const int r = threadIdx.x / NC, c = threadIdx.x % NC;
        if (c < p.N && row0 + r < p.M) {
            float s = 0.0f;
#pragma unroll
            for (int w = 0; w < MV_WARPS; w++) s += part[w][threadIdx.x];
            *(float *)(p.d + (int64_t)(row0 + r) * p.dnb[0] + (int64_t)c * p.dnb[1] + (int64_t)i12 * p.dnb[2] +
                       (int64_t)i13 * p.dnb[3]) = s;
        }
    }
}

// (issue 13, cuops2) f16 / bf16 weights times more than 8 columns (prompt batches): tensor
// cores (wmma 16x16x16, f32 accumulation) on 64x64 output tiles, 4 warps of 32x32; a's
// values go to shared memory as they are, b's are rounded to a's type (f16 or bf16), as
// ggml's CUDA backend does for its cuBLAS path: results within ggml's NMSE bound, not f32.
constexpr int WM = 64, WN = 64, WK = 32;

template <typename TA>
__global__ void __launch_bounds__(128) k_mm_dense_wmma(mm_args p, int avec) {
    using namespace nvcuda;
    __shared__ __align__(32) TA As[WM][WK + 8];
    __shared__ __align__(32) TA Bs[WN][WK + 8];
    __shared__ __align__(32) float Cs[WN][WM + 4];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int m0 = blockIdx.x * WM, n0 = blockIdx.y * WN;
    const int z = blockIdx.z;
    const int i12 = z % p.ne12, i13 = z / p.ne12;
    const char * a = p.a + (int64_t)(i12 / p.r2) * p.anb[2] + (int64_t)(i13 / p.r3) * p.anb[3];
    const char * b = p.b + (int64_t)i12 * p.bnb[2] + (int64_t)i13 * p.bnb[3];
    const int wm = warp & 1, wn = warp >> 1;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);
    for (int k0 = 0; k0 < p.K; k0 += WK) {
        // a: 64 rows x 4 chunks of 8 values (16-byte loads when rows allow and the chunk is whole)
        for (int t = tid; t < WM * (WK / 8); t += 128) {
            const int r = t >> 2, ck = t & 3, m = m0 + r, k = k0 + ck * 8;
            const char * ar = a + (int64_t)(m < p.M ? m : 0) * p.anb[1];
            if (avec && m < p.M && k + 8 <= p.K) {
                *(uint4 *)&As[r][ck * 8] = __ldg((const uint4 *)(ar + (int64_t)k * sizeof(TA)));
            } else {
#pragma unroll
                for (int j = 0; j < 8; j++)
                    As[r][ck * 8 + j] = (m < p.M && k + j < p.K) ? *(const TA *)(ar + (int64_t)(k + j) * p.anb[0])
                                                               : convert<TA>(0.0f);
            }
        }
        // b: 64 rows x 32 values, one row per warp step (coalesced along k), rounded to TA
#pragma unroll 4
        for (int i = 0; i < WN / 4; i++) {
            const int r = warp * (WN / 4) + i, n = n0 + r, k = k0 + lane;
            const float x = (n < p.N && k < p.K) ? *(const float *)(b + (int64_t)n * p.bnb[1] + (int64_t)k * p.bnb[0]) : 0.0f;
            Bs[r][lane] = convert<TA>(x);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < WK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, TA, wmma::row_major> fa[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, TA, wmma::col_major> fb[2];
#pragma unroll
            for (int i = 0; i < 2; i++) wmma::load_matrix_sync(fa[i], &As[wm * 32 + i * 16][kk], WK + 8);
#pragma unroll
            for (int j = 0; j < 2; j++) wmma::load_matrix_sync(fb[j], &Bs[wn * 32 + j * 16][kk], WK + 8);
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(&Cs[wn * 32 + j * 16][wm * 32 + i * 16], acc[i][j], WM + 4, wmma::mem_col_major);
    __syncthreads();
    char * d = p.d + (int64_t)i12 * p.dnb[2] + (int64_t)i13 * p.dnb[3];
    for (int t = tid; t < WM * WN; t += 128) {
        const int nl = t / WM, ml = t % WM, m = m0 + ml, n = n0 + nl;
        if (m < p.M && n < p.N) *(float *)(d + (int64_t)m * p.dnb[0] + (int64_t)n * p.dnb[1]) = Cs[nl][ml];
    }
}

template <typename TA>
static void launch_mv_dense(const mm_args & p, int bvec, unsigned nbatch, cudaStream_t stream) {
    constexpr int R = 4;
    const dim3 grid(ceil_div(p.M, R), nbatch);
    const int nt = 32 * MV_WARPS;
    if (p.N == 1) k_mv_dense<TA, 1, R><<<grid, nt, 0, stream>>>(p, bvec);
    else if (p.N == 2) k_mv_dense<TA, 2, R><<<grid, nt, 0, stream>>>(p, bvec);
    else if (p.N <= 4) k_mv_dense<TA, 4, R><<<grid, nt, 0, stream>>>(p, bvec);
    else k_mv_dense<TA, 8, R><<<grid, nt, 0, stream>>>(p, bvec);
}

bool mul_mat_supported(int dst_type, int a_type, int b_type) {
    if (ggml_cy_is_quantized(a_type)) return mul_mat_q_supported(dst_type, a_type, b_type);   // quant.cu
    return dst_type == GGML_TYPE_F32 && b_type == GGML_TYPE_F32 &&
           (a_type == GGML_TYPE_F32 || a_type == GGML_TYPE_F16 || a_type == GGML_TYPE_BF16);
}

int mul_mat_forward(ggml_tensor * dst, cudaStream_t stream) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    if (ggml_cy_is_quantized(a->type)) return mul_mat_q_forward(dst, stream);   // quant.cu
    if (!mul_mat_supported(dst->type, a->type, b->type)) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "mul_mat: a f32/f16/bf16, b f32, dst f32");
    }
    if (a->ne[0] != b->ne[0] || dst->ne[0] != a->ne[1] || dst->ne[1] != b->ne[1] ||
        dst->ne[2] != b->ne[2] || dst->ne[3] != b->ne[3] || a->ne[2] <= 0 || a->ne[3] <= 0 ||
        b->ne[2] % a->ne[2] || b->ne[3] % a->ne[3]) {
        return fail(GGML_CY_CUDA_ERR_INVALID, "mul_mat: shapes do not match ggml's rule");
    }
    for (int i = 0; i < 4; i++) {
        if (a->ne[i] >= (1 << 30) || b->ne[i] >= (1 << 30)) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "mul_mat too large");
    }
    if (nelements(dst) == 0) return GGML_CY_CUDA_OK;
    if (b->ne[2] * b->ne[3] > 65535 || (b->ne[1] + MT - 1) / MT > 65535) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "mul_mat: too many batches or columns for the grid");
    }
    mm_args p;
    p.a = (const char *)a->data; p.b = (const char *)b->data; p.d = (char *)dst->data;
    p.K = (int)a->ne[0]; p.M = (int)a->ne[1]; p.N = (int)b->ne[1];
    p.r2 = (int)(b->ne[2] / a->ne[2]); p.r3 = (int)(b->ne[3] / a->ne[3]);
    p.ne12 = (int)b->ne[2];
    for (int i = 0; i < 4; i++) { p.anb[i] = a->nb[i]; p.bnb[i] = b->nb[i]; p.dnb[i] = dst->nb[i]; }
    const int64_t es = (int64_t)ggml_type_size(a->type);
    if (p.N <= 8 && a->nb[0] == es && p.K % (16 / es) == 0 && ((uintptr_t)a->data % 16) == 0 &&
        a->nb[1] % 16 == 0 && a->nb[2] % 16 == 0 && a->nb[3] % 16 == 0) {   // (cuops2) mat-vec
        const int bvec = b->nb[0] == 4 && ((uintptr_t)b->data % 16) == 0 && b->nb[1] % 16 == 0 &&
                         b->nb[2] % 16 == 0 && b->nb[3] % 16 == 0;
        const unsigned nbatch = (unsigned)(b->ne[2] * b->ne[3]);
        if (a->type == GGML_TYPE_F32) launch_mv_dense<float>(p, bvec, nbatch, stream);
        else if (a->type == GGML_TYPE_BF16) launch_mv_dense<bf16>(p, bvec, nbatch, stream);
        else launch_mv_dense<half>(p, bvec, nbatch, stream);
        return check_launch("mul_mat (mat-vec) kernel launch");
    }
    if (a->type == GGML_TYPE_F16 || a->type == GGML_TYPE_BF16) {   // (cuops2) tensor cores, N > 8
        const int avec = a->nb[0] == es && ((uintptr_t)a->data % 16) == 0 && a->nb[1] % 16 == 0 &&
                         a->nb[2] % 16 == 0 && a->nb[3] % 16 == 0;
        const dim3 wgrid(ceil_div(p.M, WM), ceil_div(p.N, WN), (unsigned)(b->ne[2] * b->ne[3]));
        if (a->type == GGML_TYPE_F16) k_mm_dense_wmma<half><<<wgrid, 128, 0, stream>>>(p, avec);
        else k_mm_dense_wmma<bf16><<<wgrid, 128, 0, stream>>>(p, avec);
        return check_launch("mul_mat (tensor-core) kernel launch");
    }
    dim3 grid(ceil_div(p.M, MT), ceil_div(p.N, MT), (unsigned)(b->ne[2] * b->ne[3]));
    dim3 block(32, 8);
    if (a->type == GGML_TYPE_F32) k_mul_mat<float><<<grid, block, 0, stream>>>(p);
    else if (a->type == GGML_TYPE_BF16) k_mul_mat<bf16><<<grid, block, 0, stream>>>(p);
    else k_mul_mat<half><<<grid, block, 0, stream>>>(p);
    return check_launch("mul_mat kernel launch");
}

}  // namespace gcy
