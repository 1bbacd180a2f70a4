// The graph's reductions and matrix product on the device: SUM (all elements), SUM_ROWS and
// MEAN (each row, ne0 reduced to 1), MUL_MAT (ggml's a [K, M] x b [K, N] -> [M, N] f32,
// batched over dims 2 and 3 with a repeated). Reductions accumulate in double, as the CPU
// path does (the order differs, so results may differ in the last bit of a float64).
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
    dim3 grid(ceil_div(p.M, MT), ceil_div(p.N, MT), (unsigned)(b->ne[2] * b->ne[3]));
    dim3 block(32, 8);
    if (a->type == GGML_TYPE_F32) k_mul_mat<float><<<grid, block, 0, stream>>>(p);
    else if (a->type == GGML_TYPE_BF16) k_mul_mat<bf16><<<grid, block, 0, stream>>>(p);
    else k_mul_mat<half><<<grid, block, 0, stream>>>(p);
    return check_launch("mul_mat kernel launch");
}

}  // namespace gcy
