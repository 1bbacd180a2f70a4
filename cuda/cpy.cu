// Copies and conversions (DUP / CPY / CONT): dst <- src for any two layouts with equal element
// counts and any type pair. Paths, fastest first:
//  * same type, both contiguous: one cudaMemcpyAsync;
//  * same type and shape, rows contiguous in both and 16-byte aligned: 16-byte chunks
//    (permutes of the outer dims, padded rows);
//  * same type and shape, a transpose (dst rows run along a dim the source holds with stride
//    one element): shared-memory tiles, so both the reads and the writes are coalesced;
//  * anything else: ggml's flat unravel kernel (seed 002): the flat index unravelled by
//    each side's own ne, combined with its own byte strides.
#include "ops.cuh"

namespace gcy {

struct cpy_args {
    const char * src; char * dst;
    fastdiv sne0, sne1, sne2;      // src extents for unravelling
    fastdiv dne0, dne1, dne2;      // dst extents
    int64_t snb[4], dnb[4];
};

template <typename S, typename D>
__global__ void k_cpy_unravel(cpy_args a, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t t = fdiv(i, a.sne0), s0 = i - t * a.sne0.d;
    uint32_t v = fdiv(t, a.sne1), s1 = t - v * a.sne1.d;
    uint32_t s3 = fdiv(v, a.sne2), s2 = v - s3 * a.sne2.d;
    t = fdiv(i, a.dne0); uint32_t d0 = i - t * a.dne0.d;
    v = fdiv(t, a.dne1); uint32_t d1 = t - v * a.dne1.d;
    uint32_t d3 = fdiv(v, a.dne2), d2 = v - d3 * a.dne2.d;
    const S x = *(const S *)(a.src + s0 * a.snb[0] + s1 * a.snb[1] + s2 * a.snb[2] + (int64_t)s3 * a.snb[3]);
    *(D *)(a.dst + d0 * a.dnb[0] + d1 * a.dnb[1] + d2 * a.dnb[2] + (int64_t)d3 * a.dnb[3]) = convert<D>(x);
}

// 16-byte chunks of rows: chunk c -> (chunk in row, i1, i2, i3) by dst's extents.
constexpr int ROWS_ILP = 4;
__global__ void __launch_bounds__(BLOCK)
k_cpy_rows16(cpy_args a, fastdiv chunks_per_row, uint32_t n_chunks) {
    const uint32_t c0 = blockIdx.x * (BLOCK * ROWS_ILP) + threadIdx.x;
    uint4 val[ROWS_ILP];
    int64_t doff[ROWS_ILP];
#pragma unroll
    for (int j = 0; j < ROWS_ILP; j++) {
        const uint32_t c = c0 + j * BLOCK;
        if (c < n_chunks) {
            uint32_t r = fdiv(c, chunks_per_row);
            const uint32_t k = c - r * chunks_per_row.d;
            uint32_t v = fdiv(r, a.dne1);
            const uint32_t i1 = r - v * a.dne1.d;
            const uint32_t i3 = fdiv(v, a.dne2);
            const uint32_t i2 = v - i3 * a.dne2.d;
            const int64_t soff = (int64_t)k * 16 + i1 * a.snb[1] + i2 * a.snb[2] + (int64_t)i3 * a.snb[3];
            doff[j] = (int64_t)k * 16 + i1 * a.dnb[1] + i2 * a.dnb[2] + (int64_t)i3 * a.dnb[3];
            val[j] = *(const uint4 *)(a.src + soff);
        }
    }
#pragma unroll
    for (int j = 0; j < ROWS_ILP; j++) {
        if (c0 + j * BLOCK < n_chunks) *(uint4 *)(a.dst + doff[j]) = val[j];
    }
}

// Tiled transpose: dim 0 of dst (contiguous) against dim J of src (stride one element).
// 64x64 tiles, 32x8 threads, 16 elements per thread in flight each way; the tile row is
// padded by one element so that column reads hit 32 different banks.
constexpr int TT = 64;
struct transpose_args {
    const char * src; char * dst;
    int ne0, nej;                     // tile dims: dst's dim 0 and the transposed dim
    fastdiv no1;                      // the two remaining dims, flattened into grid z
    int64_t s0, sj, so1, so2;         // src byte strides for dims 0, J, o1, o2
    int64_t d0, dj, do1, do2;         // dst byte strides
};

template <typename E>
__global__ void __launch_bounds__(256) k_transpose(transpose_args a) {
    __shared__ E tile[TT][TT + 1];
    const uint32_t z = blockIdx.z;
    const uint32_t o2 = fdiv(z, a.no1);
    const uint32_t o1 = z - o2 * a.no1.d;
    const char * src = a.src + o1 * a.so1 + (int64_t)o2 * a.so2;
    char * dst = a.dst + o1 * a.do1 + (int64_t)o2 * a.do2;
    const int x0 = blockIdx.x * TT;   // along dim 0
    const int y0 = blockIdx.y * TT;   // along dim J
    const int tx = threadIdx.x, ty = threadIdx.y;
    // read: consecutive threads walk dim J, contiguous in src
#pragma unroll
    for (int k = 0; k < TT / 8; k++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int i = x0 + ty + 8 * k, j = y0 + tx + 32 * h;
            if (i < a.ne0 && j < a.nej) tile[ty + 8 * k][tx + 32 * h] = *(const E *)(src + i * a.s0 + j * a.sj);
        }
    }
    __syncthreads();
    // write: consecutive threads walk dim 0, contiguous in dst
#pragma unroll
    for (int k = 0; k < TT / 8; k++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int i = x0 + tx + 32 * h, j = y0 + ty + 8 * k;
            if (i < a.ne0 && j < a.nej) *(E *)(dst + i * a.d0 + j * a.dj) = tile[tx + 32 * h][ty + 8 * k];
        }
    }
}

struct lay2 { int64_t ne[4]; int64_t nb[4]; };

// Same-shape copies: drop size-1 dims and merge neighbours contiguous in both operands.
static int merge2(lay2 & d, lay2 & s) {
    int nd = 0;
    for (int i = 0; i < 4; i++) {
        if (d.ne[i] == 1) continue;
        d.ne[nd] = d.ne[i]; d.nb[nd] = d.nb[i];
        s.ne[nd] = s.ne[i]; s.nb[nd] = s.nb[i];
        nd++;
    }
    for (int i = nd; i < 4; i++) {
        d.ne[i] = s.ne[i] = 1;
        d.nb[i] = i ? d.nb[i - 1] * d.ne[i - 1] : 0;
        s.nb[i] = i ? s.nb[i - 1] * s.ne[i - 1] : 0;
    }
    int i = 0;
    while (i + 1 < nd) {
        if (d.nb[i + 1] == d.nb[i] * d.ne[i] && s.nb[i + 1] == s.nb[i] * s.ne[i]) {
            d.ne[i] *= d.ne[i + 1]; s.ne[i] *= s.ne[i + 1];
            for (int j = i + 1; j < 3; j++) {
                d.ne[j] = d.ne[j + 1]; d.nb[j] = d.nb[j + 1];
                s.ne[j] = s.ne[j + 1]; s.nb[j] = s.nb[j + 1];
            }
            d.ne[3] = s.ne[3] = 1;
            nd--;
        } else {
            i++;
        }
    }
    return nd;
}

bool copy_supported(int dst_type, int src_type) {
    if (ggml_cy_is_quantized(dst_type) || ggml_cy_is_quantized(src_type))
        return quant_copy_supported(dst_type, src_type);   // quant.cu
    return ggml_type_valid(dst_type) && ggml_type_valid(src_type);
}

static int copy_rows16(const lay2 & d, const lay2 & s, const void * sp, void * dp, size_t es, cudaStream_t stream) {
    const int64_t row_bytes = d.ne[0] * (int64_t)es;
    const int64_t n_chunks = row_bytes / 16 * d.ne[1] * d.ne[2] * d.ne[3];
    cpy_args a;
    a.src = (const char *)sp; a.dst = (char *)dp;
    a.dne1 = make_fastdiv((uint32_t)d.ne[1]); a.dne2 = make_fastdiv((uint32_t)d.ne[2]);
    for (int i = 0; i < 4; i++) { a.snb[i] = s.nb[i]; a.dnb[i] = d.nb[i]; }
    k_cpy_rows16<<<ceil_div(n_chunks, BLOCK * ROWS_ILP), BLOCK, 0, stream>>>(a, make_fastdiv((uint32_t)(row_bytes / 16)),
                                                                             (uint32_t)n_chunks);
    return check_launch("row copy kernel launch");
}

static int copy_transpose(const lay2 & d, const lay2 & s, int J, const void * sp, void * dp, size_t es,
                          cudaStream_t stream) {
    int others[2], no = 0;
    for (int i = 1; i < 4; i++) if (i != J) others[no++] = i;
    transpose_args a;
    a.src = (const char *)sp; a.dst = (char *)dp;
    a.ne0 = (int)d.ne[0]; a.nej = (int)d.ne[J];
    a.no1 = make_fastdiv((uint32_t)d.ne[others[0]]);
    a.s0 = s.nb[0]; a.sj = s.nb[J]; a.so1 = s.nb[others[0]]; a.so2 = s.nb[others[1]];
    a.d0 = d.nb[0]; a.dj = d.nb[J]; a.do1 = d.nb[others[0]]; a.do2 = d.nb[others[1]];
    dim3 grid(ceil_div(d.ne[0], TT), ceil_div(d.ne[J], TT), (unsigned)(d.ne[others[0]] * d.ne[others[1]]));
    dim3 block(32, 8);
    switch (es) {
        case 1: k_transpose<uint8_t><<<grid, block, 0, stream>>>(a); break;
        case 2: k_transpose<uint16_t><<<grid, block, 0, stream>>>(a); break;
        case 4: k_transpose<uint32_t><<<grid, block, 0, stream>>>(a); break;
        case 8: k_transpose<uint64_t><<<grid, block, 0, stream>>>(a); break;
        default: return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "element size %zu", es);
    }
    return check_launch("transpose kernel launch");
}

int copy_forward(ggml_tensor * dst, const ggml_tensor * src, cudaStream_t stream) {
    if (ggml_cy_is_quantized(dst->type) || ggml_cy_is_quantized(src->type))
        return quant_copy_forward(dst, src, stream);       // quant.cu
    if (!copy_supported(dst->type, src->type)) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "copy %s -> %s not supported", ggml_type_name(src->type),
                    ggml_type_name(dst->type));
    }
    const int64_t n = nelements(dst);
    if (n != nelements(src)) {
        return fail(GGML_CY_CUDA_ERR_INVALID, "copy: element counts differ (%lld vs %lld)", (long long)nelements(src),
                    (long long)n);
    }
    if (n == 0) return GGML_CY_CUDA_OK;
    const size_t es = ggml_type_size(src->type);
    const bool same_type = dst->type == src->type;
    if (same_type && is_contiguous(dst) && is_contiguous(src)) {
        if (dst->data != src->data) {
            GCY_CUDA(cudaMemcpyAsync(dst->data, src->data, (size_t)n * es, cudaMemcpyDeviceToDevice, stream),
                     "cudaMemcpyAsync device->device");
        }
        return GGML_CY_CUDA_OK;
    }
    if (n >= (int64_t(1) << 31)) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "copy of more than 2^31 elements");
    if (same_type && same_shape(dst, src)) {
        lay2 d, s;
        for (int i = 0; i < 4; i++) { d.ne[i] = dst->ne[i]; d.nb[i] = dst->nb[i]; s.ne[i] = src->ne[i]; s.nb[i] = src->nb[i]; }
        merge2(d, s);
        const int64_t row_bytes = d.ne[0] * (int64_t)es;
        bool rows_ok = d.nb[0] == (int64_t)es && s.nb[0] == (int64_t)es && row_bytes % 16 == 0 &&
                       ((uintptr_t)dst->data & 15) == 0 && ((uintptr_t)src->data & 15) == 0 &&
                       d.ne[1] < (1 << 30) && d.ne[2] < (1 << 30);
        for (int i = 1; i < 4 && rows_ok; i++) rows_ok = d.nb[i] % 16 == 0 && s.nb[i] % 16 == 0;
        if (rows_ok) return copy_rows16(d, s, src->data, dst->data, es, stream);
        if (d.nb[0] == (int64_t)es && s.nb[0] != (int64_t)es) {
            for (int J = 1; J < 4; J++) {
                if (d.ne[J] > 1 && s.nb[J] == (int64_t)es) {
                    int64_t nz = 1;
                    for (int i = 1; i < 4; i++) if (i != J) nz *= d.ne[i];
                    if (nz <= 65535 && d.ne[0] < (1 << 30) && d.ne[J] < (1 << 30)) {
                        return copy_transpose(d, s, J, src->data, dst->data, es, stream);
                    }
                }
            }
        }
    }
    cpy_args a;
    a.src = (const char *)src->data; a.dst = (char *)dst->data;
    a.sne0 = make_fastdiv((uint32_t)src->ne[0]); a.sne1 = make_fastdiv((uint32_t)src->ne[1]);
    a.sne2 = make_fastdiv((uint32_t)src->ne[2]);
    a.dne0 = make_fastdiv((uint32_t)dst->ne[0]); a.dne1 = make_fastdiv((uint32_t)dst->ne[1]);
    a.dne2 = make_fastdiv((uint32_t)dst->ne[2]);
    for (int i = 0; i < 4; i++) { a.snb[i] = src->nb[i]; a.dnb[i] = dst->nb[i]; }
    const unsigned grid = ceil_div(n, BLOCK);
    bool known = with_type(src->type, [&](auto * sp) {
        using S = std::remove_pointer_t<decltype(sp)>;
        with_type(dst->type, [&](auto * dp) {
            using D = std::remove_pointer_t<decltype(dp)>;
            k_cpy_unravel<S, D><<<grid, BLOCK, 0, stream>>>(a, (uint32_t)n);
        });
    });
    if (!known) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "copy type");
    return check_launch("copy kernel launch");
}

}  // namespace gcy
