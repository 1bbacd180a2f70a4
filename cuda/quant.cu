// Quantized tensors on the device: dequantization (CPY/DUP/CONT from a quantized tensor into
// f32/f16/bf16), copies between tensors of one quantized type, GET_ROWS from a quantized (or
// plain float) table, and MUL_MAT with quantized weights.
//
// One gather-dequantize kernel serves copies and GET_ROWS: each thread turns eight values of
// one block (qtype<T>::deq8, quant.cuh) into the destination type; a row index table, when
// given, picks the source row (GET_ROWS).
//
// MUL_MAT(a quantized, b f32) -> f32:
//  * Q4_0 with one column: k_mv_q4_0_q8 (b quantized to int8 in shared memory, dp4a).
//  * one to eight columns of b (mat-vec, the token-generation case): one CTA of 4 warps per
//    4 rows of a (Q4_0 with 2 columns: 2 rows), each thread dequantizes eight values of each
//    row at a time (Q4_0: its own half-block kernel) and multiplies them with the columns in
//    float32, loading each b value once for the CTA's rows; warp and CTA sums end the rows.
//    The weights are read once (Q4_0 reads 4.5 bits per weight where an f16 mat-vec reads 16).
//  * more columns: a tensor-core GEMM (WMMA, f16 inputs, f32 accumulation) whose tile loader
//    dequantizes a's blocks straight into shared memory (f32 -> f16 rounding, as ggml's
//    cuBLAS path rounds dequantized weights and activations to f16); no scratch memory, so it
//    is safe inside a captured CUDA graph. cuBLAS is not needed.
#include <mma.h>

#include "ops.cuh"
#include "quant.cuh"

namespace gcy {

bool quant_supported(int type) {
    return with_qtype(type, [](auto) {});
}

// ------------------------------------------------------------------ gather-dequantize
struct deq_args {
    const char * src; char * dst;
    const char * ids;                 // GET_ROWS: int32 row numbers, or NULL (copies)
    int64_t snb[4], dnb[4], inb[3];   // src/dst byte strides; ids strides over dst dims 1..3
    int64_t src_rows;                 // src ne[1] (bounds of the row numbers)
    fastdiv cpr, ne1, ne2;            // chunks per row, dst ne[1], dst ne[2]
    int vec;                          // 1: dst rows contiguous and 16-byte aligned
    int coal;                         // 1: also f32 and 32 | chunks per row: warp-staged stores
    int stream;                       // 1: the output exceeds half of L2: evict-first stores
    int flat;                         // 1: coal, no ids, packed src rows and packed f32 dst
};

// Outputs at least this large go out with evict-first (st.global.cs) stores: they would not
// stay in the 50 MB L2 of an H100/H200 anyway. Dequantizing 16M Q4_0 values on an H100:
// 30.9 us with plain stores, 25.5 us (1.0 of the device copy) with these (q4mmv_proto.py).
constexpr int64_t DEQ_STREAM_BYTES = (int64_t)24 << 20;

template <typename D> __device__ __forceinline__ void store8(char * dst, int64_t nb0, int vec, const float * v) {
    if (vec) {
        if constexpr (std::is_same_v<D, float>) {
            ((float4 *)dst)[0] = make_float4(v[0], v[1], v[2], v[3]);
            ((float4 *)dst)[1] = make_float4(v[4], v[5], v[6], v[7]);
            return;
        } else {
            union { uint4 u; D h[8]; } pk;
#pragma unroll
            for (int j = 0; j < 8; j++) pk.h[j] = convert<D>(v[j]);
            *(uint4 *)dst = pk.u;
            return;
        }
    }
#pragma unroll
    for (int j = 0; j < 8; j++) *(D *)(dst + j * nb0) = convert<D>(v[j]);
}

// A warp's 32 chunks of eight values are 256 / QK whole blocks, one contiguous span of the
// source (the coalesced path below). The warp copies the span into shared memory with
// coalesced loads of the widest unit that the span's size and address allow, then decodes
// from there. Decoding straight from global memory took two dependent trips to DRAM for the
// 256-value block types: deq8 reads the scale first (its finite-scale branch), and the
// nibbles, in other sectors of a 136-210 byte block, were loaded only after that branch.
template <typename Q> struct warp_span {
    static constexpr int BYTES = 256 / Q::QK * Q::BYTES;
    static constexpr int WORDS = (BYTES + 15) / 16 * 4;     // 16-byte multiple
};

template <typename U, int N>
__device__ __forceinline__ void span_copy(const char * src, uint32_t * buf, int lane) {
    constexpr int PER = (N + 31) / 32;
    U r[PER];
#pragma unroll
    for (int k = 0; k < PER; k++) if (lane + 32 * k < N) r[k] = __ldg((const U *)src + lane + 32 * k);
#pragma unroll
    for (int k = 0; k < PER; k++) if (lane + 32 * k < N) ((U *)buf)[lane + 32 * k] = r[k];
}

// src0: the span's first byte (a block boundary); every lane of the warp calls this.
template <typename Q>
__device__ __forceinline__ const uint8_t * stage_span(const char * src0, uint32_t * buf, int lane) {
    constexpr int B = warp_span<Q>::BYTES;
    const uintptr_t al = (uintptr_t)src0;
    if (B % 4 == 0 && (al & 3) == 0) span_copy<uint32_t, B / 4>(src0, buf, lane);
    else if (B % 2 == 0 && (al & 1) == 0) span_copy<unsigned short, B / 2>(src0, buf, lane);
    else span_copy<unsigned char, B>(src0, buf, lane);
    __syncwarp();
    return (const uint8_t *)buf;
}

template <typename Q, typename D>
__global__ void __launch_bounds__(BLOCK) k_dequant(deq_args a, uint32_t n_chunks) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    pdl_trigger();
    pdl_wait();                              // before any global access (see launch_pdl)
    if constexpr (std::is_same_v<D, float>) {
        if (a.coal && !a.ids) {
            // a warp's 32 chunks are 256 consecutive values of one row: stage them in shared
            // memory so that each store instruction writes 512 contiguous bytes
            __shared__ float4 stage[BLOCK / 32][64];
            __shared__ uint32_t blocks[BLOCK / 32][warp_span<Q>::WORDS];
            if (i >= n_chunks) return;       // whole warps (n_chunks is a multiple of 32)
            constexpr int CPB = Q::QK / 8;
            const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
            const char * src0;               // the warp's first block
            float4 * dst;
            if (a.flat) {
                // packed source and destination: chunk i is block i / CPB, values 8i.. (no
                // row/dim divisions; the K-quants' decoding leaves the H200 few spare issue slots)
                src0 = a.src + (int64_t)((i - lane) / CPB) * Q::BYTES;
                dst = (float4 *)(a.dst + (int64_t)(i - lane) * 32);
            } else {
                const uint32_t row = fdiv(i, a.cpr), cc = i - row * a.cpr.d;
                const uint32_t t = fdiv(row, a.ne1), j1 = row - t * a.ne1.d;
                const uint32_t j3 = fdiv(t, a.ne2), j2 = t - j3 * a.ne2.d;
                src0 = a.src + j1 * a.snb[1] + j2 * a.snb[2] + (int64_t)j3 * a.snb[3] + (int64_t)((cc - lane) / CPB) * Q::BYTES;
                dst = (float4 *)(a.dst + j1 * a.dnb[1] + j2 * a.dnb[2] + (int64_t)j3 * a.dnb[3] + (int64_t)(cc - lane) * 32);
            }
            const uint8_t * span = stage_span<Q>(src0, blocks[w], lane);
            float v[8];
            // rows are whole blocks and a warp starts at a block: the lane's block is lane / CPB
            Q::deq8(span + (lane / CPB) * Q::BYTES, lane % CPB, v);
            stage[w][2 * lane] = make_float4(v[0], v[1], v[2], v[3]);
            stage[w][2 * lane + 1] = make_float4(v[4], v[5], v[6], v[7]);
            __syncwarp();
            if (a.stream) {
                __stcs(dst + lane, stage[w][lane]);
                __stcs(dst + 32 + lane, stage[w][32 + lane]);
            } else {
                dst[lane] = stage[w][lane];
                dst[32 + lane] = stage[w][32 + lane];
            }
            return;
        }
    }
    if (i >= n_chunks) return;
    const uint32_t row = fdiv(i, a.cpr), cc = i - row * a.cpr.d;
    const uint32_t t = fdiv(row, a.ne1), j1 = row - t * a.ne1.d;
    const uint32_t j3 = fdiv(t, a.ne2), j2 = t - j3 * a.ne2.d;
    char * dst = a.dst + j1 * a.dnb[1] + j2 * a.dnb[2] + (int64_t)j3 * a.dnb[3] + (int64_t)cc * 8 * a.dnb[0];
    int64_t i1 = j1;
    if (a.ids) {
        i1 = *(const int32_t *)(a.ids + j1 * a.inb[0] + j2 * a.inb[1] + (int64_t)j3 * a.inb[2]);
        if (i1 < 0 || i1 >= a.src_rows) {   // a row number out of range: the row is NaN
            float v[8];
#pragma unroll
            for (int j = 0; j < 8; j++) v[j] = __uint_as_float(0x7fc00000u);
            store8<D>(dst, a.dnb[0], a.vec, v);
            return;
        }
    }
    constexpr int CPB = Q::QK / 8;
    const char * src = a.src + i1 * a.snb[1] + j2 * a.snb[2] + (int64_t)j3 * a.snb[3] +
                       (int64_t)(cc / CPB) * Q::BYTES;
    float v[8];
    Q::deq8((const uint8_t *)src, cc % CPB, v);
    store8<D>(dst, a.dnb[0], a.vec, v);
}

// GET_ROWS from a plain float table: one element per thread.
template <typename S, typename D>
__global__ void __launch_bounds__(BLOCK) k_get_rows_plain(deq_args a, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t row = fdiv(i, a.cpr), k = i - row * a.cpr.d;
    const uint32_t t = fdiv(row, a.ne1), j1 = row - t * a.ne1.d;
    const uint32_t j3 = fdiv(t, a.ne2), j2 = t - j3 * a.ne2.d;
    D * dst = (D *)(a.dst + j1 * a.dnb[1] + j2 * a.dnb[2] + (int64_t)j3 * a.dnb[3] + (int64_t)k * a.dnb[0]);
    const int64_t i1 = *(const int32_t *)(a.ids + j1 * a.inb[0] + j2 * a.inb[1] + (int64_t)j3 * a.inb[2]);
    if (i1 < 0 || i1 >= a.src_rows) { *dst = convert<D>(__uint_as_float(0x7fc00000u)); return; }
    *dst = convert<D>(*(const S *)(a.src + i1 * a.snb[1] + j2 * a.snb[2] + (int64_t)j3 * a.snb[3] + (int64_t)k * a.snb[0]));
}

static bool is_float_out(int t) {
    return t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16;
}

template <typename F> static bool with_float_out(int type, F && f) {
    switch (type) {
        case GGML_TYPE_F32: f((float *)nullptr); return true;
        case GGML_TYPE_F16: f((half *)nullptr); return true;
        case GGML_TYPE_BF16: f((bf16 *)nullptr); return true;
        default: return false;
    }
}

// dst rows (ne[1..3] of dst) from src rows; src's dims 2 and 3 follow dst's.
static int launch_dequant(const ggml_tensor * src, const ggml_tensor * dst, const int64_t * dnb,
                          const ggml_tensor * ids, cudaStream_t stream) {
    const int64_t ne0 = src->ne[0];
    const int64_t rows = dst->ne[1] * dst->ne[2] * dst->ne[3];
    const int64_t blck = ggml_cy_blck_size(src->type);
    if (rows == 0 || ne0 == 0) return GGML_CY_CUDA_OK;
    if (ne0 % blck) return fail(GGML_CY_CUDA_ERR_INVALID, "%s: row length %lld is not a multiple of the block size %lld",
                                ggml_type_name(src->type), (long long)ne0, (long long)blck);
    if (src->nb[0] != (int64_t)ggml_cy_block_bytes(src->type))
        return fail(GGML_CY_CUDA_ERR_INVALID, "%s: nb[0] must be the block size in bytes", ggml_type_name(src->type));
    const bool plain = !ggml_cy_is_quantized(src->type);
    const int64_t per_row = plain ? ne0 : ne0 / 8;
    if (per_row * rows >= ((int64_t)1 << 31) || dst->ne[1] >= ((int64_t)1 << 31) || dst->ne[2] >= ((int64_t)1 << 31))
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "tensor too large for the dequantize kernel");
    deq_args a;
    a.src = (const char *)src->data; a.dst = (char *)dst->data;
    a.ids = ids ? (const char *)ids->data : nullptr;
    for (int i = 0; i < 4; i++) { a.snb[i] = src->nb[i]; a.dnb[i] = dnb[i]; }
    for (int i = 0; i < 3; i++) a.inb[i] = ids ? ids->nb[i] : 0;
    a.src_rows = src->ne[1];
    a.cpr = make_fastdiv((uint32_t)per_row);
    a.ne1 = make_fastdiv((uint32_t)dst->ne[1]);
    a.ne2 = make_fastdiv((uint32_t)dst->ne[2]);
    const int64_t n = per_row * rows;
    const unsigned grid = ceil_div(n, BLOCK);
    int st = GGML_CY_CUDA_ERR_UNSUPPORTED;
    if (src->type == GGML_TYPE_I32 && dst->type == GGML_TYPE_I32 && ids) {   // (issue 13, cuops2) i32 tables
        k_get_rows_plain<int32_t, int32_t><<<grid, BLOCK, 0, stream>>>(a, (uint32_t)n);
        return check_launch("get_rows kernel launch");
    }
    with_float_out(dst->type, [&](auto dp) {
        using D = std::remove_pointer_t<decltype(dp)>;
        a.vec = dnb[0] == (int64_t)sizeof(D) && ((uintptr_t)dst->data % 16) == 0 && dnb[1] % 16 == 0 &&
                dnb[2] % 16 == 0 && dnb[3] % 16 == 0;
        a.coal = a.vec && !plain && per_row % 32 == 0;
        a.stream = per_row * rows * 8 * (int64_t)sizeof(D) >= DEQ_STREAM_BYTES;
        bool dpacked = dnb[0] == (int64_t)sizeof(D);
        int64_t want = (int64_t)sizeof(D) * src->ne[0];
        for (int d = 1; d < 4 && dpacked; d++) {
            if (src->ne[d] != 1 && dnb[d] != want) dpacked = false;
            want *= src->ne[d];
        }
        a.flat = a.coal && !ids && is_contiguous_q(src) && dpacked &&
                 dst->ne[1] == src->ne[1] && dst->ne[2] == src->ne[2] && dst->ne[3] == src->ne[3];
        if (plain) {
            if (!ids) return;
            st = GGML_CY_CUDA_OK;
            if (src->type == GGML_TYPE_F32) k_get_rows_plain<float, D><<<grid, BLOCK, 0, stream>>>(a, (uint32_t)n);
            else if (src->type == GGML_TYPE_F16) k_get_rows_plain<half, D><<<grid, BLOCK, 0, stream>>>(a, (uint32_t)n);
            else if (src->type == GGML_TYPE_BF16) k_get_rows_plain<bf16, D><<<grid, BLOCK, 0, stream>>>(a, (uint32_t)n);
            else st = GGML_CY_CUDA_ERR_UNSUPPORTED;
            return;
        }
        with_qtype(src->type, [&](auto q) {
            using Q = decltype(q);
            // (four chunks per thread with 8 stores of 16 bytes per lane, a generic
            // k_dequant_w4, measured slower on an H100: Q4_K 0.79 of the copy against 0.84,
            // device round Q4 of 2026-11-26)
            st = launch_pdl(k_dequant<Q, D>, dim3(grid), dim3(BLOCK), 0, stream, a, (uint32_t)n);
        });
    });
    if (st == GGML_CY_CUDA_ERR_UNSUPPORTED) {
        return fail(st, "%s -> %s has no CUDA kernel", ggml_type_name(src->type), ggml_type_name(dst->type));
    }
    if (st != GGML_CY_CUDA_OK) return st;
    return check_launch("dequantize kernel launch");
}

// ------------------------------------------------------------------ copies
bool quant_copy_supported(int dst_type, int src_type) {
    if (!ggml_cy_is_quantized(src_type) && !ggml_cy_is_quantized(dst_type)) return false;
    if (dst_type == src_type) return true;                         // raw block copies
    return quant_supported(src_type) && is_float_out(dst_type);   // dequantize
}

__global__ void k_copy_bytes(const char * src, char * dst, fastdiv row_bytes, fastdiv ne1, fastdiv ne2,
                             int64_t s1, int64_t s2, int64_t s3, int64_t d1, int64_t d2, int64_t d3, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t row = fdiv(i, row_bytes), b = i - row * row_bytes.d;
    const uint32_t t = fdiv(row, ne1), i1 = row - t * ne1.d;
    const uint32_t i3 = fdiv(t, ne2), i2 = t - i3 * ne2.d;
    dst[i1 * d1 + i2 * d2 + (int64_t)i3 * d3 + b] = src[i1 * s1 + i2 * s2 + (int64_t)i3 * s3 + b];
}

int quant_copy_forward(ggml_tensor * dst, const ggml_tensor * src, cudaStream_t stream) {
    if (!quant_copy_supported(dst->type, src->type)) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "copy %s -> %s is not supported on the CUDA device "
                    "(quantized tensors copy to their own type or dequantize to f32/f16/bf16)",
                    ggml_type_name(src->type), ggml_type_name(dst->type));
    }
    if (nelements(dst) != nelements(src)) {
        return fail(GGML_CY_CUDA_ERR_INVALID, "copy: element counts differ (%lld vs %lld)",
                    (long long)nelements(src), (long long)nelements(dst));
    }
    if (nelements(dst) == 0) return GGML_CY_CUDA_OK;
    const size_t bb = ggml_cy_block_bytes(src->type);
    if (dst->type == src->type) {   // raw blocks: rows of whole blocks
        const int64_t blck = ggml_cy_blck_size(src->type);
        if (src->ne[0] % blck || dst->ne[0] % blck || src->nb[0] != (int64_t)bb || dst->nb[0] != (int64_t)bb)
            return fail(GGML_CY_CUDA_ERR_INVALID, "copy of %s: rows must be whole blocks", ggml_type_name(src->type));
        if (is_contiguous_q(src) && is_contiguous_q(dst)) {
            GCY_CUDA(cudaMemcpyAsync(dst->data, src->data, (size_t)(nelements(src) / blck) * bb,
                                     cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
            return GGML_CY_CUDA_OK;
        }
        if (!same_shape(src, dst))
            return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "copy of %s between non-contiguous tensors of different shapes",
                        ggml_type_name(src->type));
        const int64_t row_bytes = src->ne[0] / blck * (int64_t)bb;
        const int64_t n = row_bytes * src->ne[1] * src->ne[2] * src->ne[3];
        if (n >= ((int64_t)1 << 31)) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "copy too large");
        k_copy_bytes<<<ceil_div(n, BLOCK), BLOCK, 0, stream>>>(
            (const char *)src->data, (char *)dst->data, make_fastdiv((uint32_t)row_bytes),
            make_fastdiv((uint32_t)src->ne[1]), make_fastdiv((uint32_t)src->ne[2]),
            src->nb[1], src->nb[2], src->nb[3], dst->nb[1], dst->nb[2], dst->nb[3], (uint32_t)n);
        return check_launch("quantized copy kernel launch");
    }
    // dequantize: dst with src's shape (any strides), or any contiguous dst
    int64_t dnb[4];
    if (same_shape(src, dst)) {
        for (int i = 0; i < 4; i++) dnb[i] = dst->nb[i];
    } else if (is_contiguous(dst)) {
        dnb[0] = (int64_t)ggml_type_size(dst->type);
        for (int i = 1; i < 4; i++) dnb[i] = dnb[i - 1] * src->ne[i - 1];
    } else {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "dequantize into a non-contiguous tensor of another shape");
    }
    ggml_tensor view = *dst;   // dst's data, seen with src's shape
    for (int i = 0; i < 4; i++) view.ne[i] = src->ne[i];
    return launch_dequant(src, &view, dnb, nullptr, stream);
}

// ------------------------------------------------------------------ GET_ROWS
// ggml's rule: a [ne00, ne01, ne02, ne03], rows int32 [ne10, ne11, ne12], dst [ne00, ne10,
// ne11, ne12]: dst row (i10, i11, i12) = a row (rows[i10, i11, i12], i11, i12).
bool get_rows_supported(int dst_type, int a_type, int ids_type) {
    if (ids_type != GGML_TYPE_I32) return false;
    if (a_type == GGML_TYPE_I32) return dst_type == GGML_TYPE_I32;   // (issue 13, cuops2) bits copied
    if (!is_float_out(dst_type)) return false;
    return quant_supported(a_type) || is_float_out(a_type);
}

int get_rows_forward(ggml_tensor * dst, cudaStream_t stream) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * ids = dst->src[1];
    if (!get_rows_supported(dst->type, a->type, ids->type)) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "get_rows: table %s, rows %s -> %s (needs an f32/f16/bf16 or "
                    "quantized table, int32 rows, an f32/f16/bf16 result; or i32 table -> i32)", ggml_type_name(a->type),
                    ggml_type_name(ids->type), ggml_type_name(dst->type));
    }
    if (dst->ne[0] != a->ne[0] || dst->ne[1] != ids->ne[0] || dst->ne[2] != ids->ne[1] ||
        dst->ne[3] != ids->ne[2] || ids->ne[3] != 1 || a->ne[2] != ids->ne[1] || a->ne[3] != ids->ne[2]) {
        return fail(GGML_CY_CUDA_ERR_INVALID, "get_rows: shapes do not match ggml's rule");
    }
    return launch_dequant(a, dst, dst->nb, ids, stream);
}

// ------------------------------------------------------------------ MUL_MAT
struct mmq_args {
    const char * a; const char * b; char * d;
    int K, M, N;
    int r2, r3, ne12;
    int64_t anb[4], bnb[4], dnb[4];
    int bvec;                         // b rows contiguous and 16-byte aligned
};

constexpr int MMV_WARPS = 4;

// b's eight values [8ch, 8ch + 8) of column c
__device__ __forceinline__ void load_b8(const mmq_args & p, const char * bc, int ch, float * x) {
    if (p.bvec) {
        const float4 x0 = __ldg((const float4 *)bc + 2 * ch);
        const float4 x1 = __ldg((const float4 *)bc + 2 * ch + 1);
        x[0] = x0.x; x[1] = x0.y; x[2] = x0.z; x[3] = x0.w;
        x[4] = x1.x; x[5] = x1.y; x[6] = x1.z; x[7] = x1.w;
    } else {
#pragma unroll
        for (int j = 0; j < 8; j++) x[j] = *(const float *)(bc + (int64_t)(8 * ch + j) * p.bnb[0]);
    }
}

// One CTA per R rows: its MMV_WARPS warps split the rows; warp sums, then the CTA's.
template <int NC, int R = 1>
__device__ __forceinline__ void mmv_finish(const mmq_args & p, const float * acc, int row0, int i12, int i13) {
    __shared__ float part[MMV_WARPS][R * NC];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int i = 0; i < R * NC; i++) {
        float s = acc[i];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) part[warp][i] = s;
    }
    __syncthreads();
    if (threadIdx.x < R * NC) {
        const int r = threadIdx.x / NC, c = threadIdx.x % NC;
        if (c < p.N && row0 + r < p.M) {
            float s = 0.0f;
#pragma unroll
            for (int w = 0; w < MMV_WARPS; w++) s += part[w][threadIdx.x];
            *(float *)(p.d + (int64_t)(row0 + r) * p.dnb[0] + (int64_t)c * p.dnb[1] + (int64_t)i12 * p.dnb[2] +
                       (int64_t)i13 * p.dnb[3]) = s;
        }
    }
}

// Any type: each lane dequantizes chunks of 8 values of R rows (plain float ops, no NaN
// repair), UNROLL chunks at a time so that their loads are in flight together; each b value
// is loaded once for the R rows (b, re-read by every CTA, is what limits a one-row-per-CTA
// kernel, not the weight bytes).
template <typename Q, int NC, int R>
__global__ void __launch_bounds__(32 * MMV_WARPS) k_mmv_q(mmq_args p) {
    constexpr int UNROLL = R >= 4 ? 2 : 4, NT = 32 * MMV_WARPS;
    const int row0 = blockIdx.x * R;
    const int z = blockIdx.y;
    const int i12 = z % p.ne12, i13 = z / p.ne12;
    const char * abase = p.a + (int64_t)(i12 / p.r2) * p.anb[2] + (int64_t)(i13 / p.r3) * p.anb[3];
    const char * arow[R];
#pragma unroll
    for (int r = 0; r < R; r++)   // past the end: a valid row, not written
        arow[r] = abase + (int64_t)(row0 + r < p.M ? row0 + r : p.M - 1) * p.anb[1];
    const char * b = p.b + (int64_t)i12 * p.bnb[2] + (int64_t)i13 * p.bnb[3];
    constexpr int CPB = Q::QK / 8;
    float acc[R][NC];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int c = 0; c < NC; c++) acc[r][c] = 0.0f;
    const int nchunks = p.K / 8;
    int ch = threadIdx.x;
    for (; ch + NT * (UNROLL - 1) < nchunks; ch += NT * UNROLL) {
        float v[UNROLL][R][8];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const int cu = ch + NT * u;
#pragma unroll
            for (int r = 0; r < R; r++)
                Q::template deq8<false>((const uint8_t *)(arow[r] + (int64_t)(cu / CPB) * Q::BYTES), cu % CPB, v[u][r]);
        }
#pragma unroll
        for (int c = 0; c < NC; c++) {
            if (c < p.N) {
                const char * bc = b + (int64_t)c * p.bnb[1];
#pragma unroll
                for (int u = 0; u < UNROLL; u++) {
                    float x[8];
                    load_b8(p, bc, ch + NT * u, x);
#pragma unroll
                    for (int r = 0; r < R; r++) {
                        float s = acc[r][c];
#pragma unroll
                        for (int j = 0; j < 8; j++) s = fmaf(v[u][r][j], x[j], s);
                        acc[r][c] = s;
                    }
                }
            }
        }
    }
    for (; ch < nchunks; ch += NT) {
        float v[R][8];
#pragma unroll
        for (int r = 0; r < R; r++)
            Q::template deq8<false>((const uint8_t *)(arow[r] + (int64_t)(ch / CPB) * Q::BYTES), ch % CPB, v[r]);
#pragma unroll
        for (int c = 0; c < NC; c++) {
            if (c < p.N) {
                float x[8];
                load_b8(p, b + (int64_t)c * p.bnb[1], ch, x);
#pragma unroll
                for (int r = 0; r < R; r++) {
                    float s = acc[r][c];
#pragma unroll
                    for (int j = 0; j < 8; j++) s = fmaf(v[r][j], x[j], s);
                    acc[r][c] = s;
                }
            }
        }
    }
    mmv_finish<NC, R>(p, &acc[0][0], row0, i12, i13);
}

// Q4_0 (the common weight type): a lane takes half a block, 8 bytes = 16 values (8 low
// nibbles: values 8h..8h+7, 8 high: 16+8h..), turns nibble - 8 into a float with one byte
// permute and one add (0x4B0000nn is 2^23 + nn), sums q * b per half block and scales by d
// once.
__device__ __forceinline__ float nib_f(uint32_t w, int j) {   // byte j of w (< 16), minus 8
    return __int_as_float(__byte_perm(w, 0x4B000000u, 0x7650u | (unsigned)j)) - 8388616.0f;
}

// NU half blocks of R rows (scales dd, bytes qq; unit numbers uu) times the columns of b
// (each b value is loaded once for the R rows)
template <int NU, int R, int NC>
__device__ __forceinline__ void q4_0_units(const mmq_args & p, const char * b, const float (*dd)[R],
                                           const uint2 (*qq)[R], const int * uu, float (*acc)[NC]) {
#pragma unroll
    for (int c = 0; c < NC; c++) {
        if (c < p.N) {
            const char * bc = b + (int64_t)c * p.bnb[1];
#pragma unroll
            for (int k = 0; k < NU; k++) {
                const int blk = uu[k] >> 1, h = uu[k] & 1;
                float xl[8], xh[8];
                load_b8(p, bc, blk * 4 + h, xl);        // values 32 blk + 8h ..
                load_b8(p, bc, blk * 4 + 2 + h, xh);    // values 32 blk + 16 + 8h ..
#pragma unroll
                for (int r = 0; r < R; r++) {
                    const uint32_t lo0 = qq[k][r].x & 0x0f0f0f0fu, lo1 = qq[k][r].y & 0x0f0f0f0fu;
                    const uint32_t hi0 = (qq[k][r].x >> 4) & 0x0f0f0f0fu, hi1 = (qq[k][r].y >> 4) & 0x0f0f0f0fu;
                    float t = 0.0f;
#pragma unroll
                    for (int j = 0; j < 4; j++) {
                        t = fmaf(nib_f(lo0, j), xl[j], t);
                        t = fmaf(nib_f(lo1, j), xl[4 + j], t);
                        t = fmaf(nib_f(hi0, j), xh[j], t);
                        t = fmaf(nib_f(hi1, j), xh[4 + j], t);
                    }
                    acc[r][c] = fmaf(dd[k][r], t, acc[r][c]);
                }
            }
        }
    }
}

// R rows per CTA (R > 1 for several columns: b is read once for R rows)
template <int NC, int R>
__global__ void __launch_bounds__(32 * MMV_WARPS) k_mmv_q4_0(mmq_args p) {
    constexpr int UNROLL = R == 1 ? 2 : 1, NT = 32 * MMV_WARPS;
    const int row0 = blockIdx.x * R;
    const int z = blockIdx.y;
    const int i12 = z % p.ne12, i13 = z / p.ne12;
    const char * abase = p.a + (int64_t)(i12 / p.r2) * p.anb[2] + (int64_t)(i13 / p.r3) * p.anb[3];
    const char * b = p.b + (int64_t)i12 * p.bnb[2] + (int64_t)i13 * p.bnb[3];
    float acc[R][NC];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int c = 0; c < NC; c++) acc[r][c] = 0.0f;
    const int nunits = p.K / 16;    // half blocks
    auto load = [&](int u, int r, float & d, uint2 & q) {
        const int row = row0 + r < p.M ? row0 + r : p.M - 1;   // past the end: a valid row, not written
        const uint8_t * blk = (const uint8_t *)abase + (int64_t)row * p.anb[1] + (int64_t)(u >> 1) * sizeof(block_q4_0);
        d = __half2float(__ushort_as_half(ld16(blk)));
        q = ld8a2(blk + 2 + (u & 1) * 8);
    };
    int un = threadIdx.x;
    for (; un + NT * (UNROLL - 1) < nunits; un += NT * UNROLL) {
        float dd[UNROLL][R];
        uint2 qq[UNROLL][R];
        int uu[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            uu[k] = un + NT * k;
#pragma unroll
            for (int r = 0; r < R; r++) load(uu[k], r, dd[k][r], qq[k][r]);
        }
        q4_0_units<UNROLL, R, NC>(p, b, dd, qq, uu, acc);
    }
    for (; un < nunits; un += NT) {
        float dd[1][R];
        uint2 qq[1][R];
#pragma unroll
        for (int r = 0; r < R; r++) load(un, r, dd[0][r], qq[0][r]);
        q4_0_units<1, R, NC>(p, b, dd, qq, &un, acc);
    }
    mmv_finish<NC, R>(p, &acc[0][0], row0, i12, i13);
}

// Q4_0 times one f32 column (the decode step's mat-vec), the way ggml's CUDA mmvq does it:
// every CTA quantizes b to int8 per 32 values (scale amax/127, Q8_0's rule) into its shared
// memory, and the dot products run on dp4a (nibbles 0..15 times int8, then minus 8 x the
// block's int8 sum). A lane takes pairs of blocks (36 bytes from a 4-byte aligned start: nine
// word loads); a warp owns RW whole rows, so no cross-warp sum. NP: pairs per lane per row
// (K <= 2048 NP).
// The CTA's warps have two roles: MV8_WARPS warps issue all their weight loads at once and
// then multiply; MV8_BWARPS more warps quantize b meanwhile (their b loads issued at the
// CTA's start). When the same warps did both, b's loads (which the compiler places after the
// weight loads, whatever the source order) came back behind the CTA's 73 KB of weights, and
// the multiplies waited for them (tools/device/q4mv_probe.py, H100, L2 flushed: b ready 5.7
// us into the CTA, end 6.8; with the b warps: b ready 3.4, end 5.8). Back to back on rotating
// weights, H100: 7.04 us against 7.28 (the loads alone, no arithmetic: 5.99; an empty kernel
// of the same grid 1.78); torch's f16 mat-vec 16.7. Error: NMSE 2.7e-5 against float64
// (ggml's bound for quantized mul_mat is 5e-4).
constexpr int MV8_WARPS = 8, MV8_BWARPS = 2;

// b -> int8 by one of MV8_BWARPS warps: 512-value steps (16 values per lane; the two lanes of
// a block share its amax and sum), up to 4 steps' loads in flight together. Whole warps run
// every step (the shuffles need all 32 lanes); lanes past K take zeros and store nothing
// (K % 64 == 0: a block's two lanes are both in or both out).
__device__ __forceinline__ void mv8_quantize_b(const float * b, int K, int bw, int * qb, float * db, int * sb) {
    const int lane = threadIdx.x & 31;
    const int nsteps = K / 512 + (K % 512 != 0);
    for (int t0 = bw; t0 < nsteps; t0 += 4 * MV8_BWARPS) {
        float x[4][16];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int base = (t0 + u * MV8_BWARPS) * 512 + lane * 16;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const float4 v = base < K ? __ldg((const float4 *)(b + base) + j) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                x[u][4 * j] = v.x; x[u][4 * j + 1] = v.y; x[u][4 * j + 2] = v.z; x[u][4 * j + 3] = v.w;
            }
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int base = (t0 + u * MV8_BWARPS) * 512 + lane * 16;
            const bool in = base < K;
            float amax = 0.0f;
#pragma unroll
            for (int j = 0; j < 16; j++) amax = fmaxf(amax, fabsf(x[u][j]));
            amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
            const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
            int s = 0;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const float * xj = &x[u][4 * j];
                const int q0 = __float2int_rn(xj[0] * id), q1 = __float2int_rn(xj[1] * id);
                const int q2 = __float2int_rn(xj[2] * id), q3 = __float2int_rn(xj[3] * id);
                s += q0 + q1 + q2 + q3;
                if (in)
                    qb[base / 4 + j] = (int)((uint32_t)(q0 & 0xff) | ((uint32_t)(q1 & 0xff) << 8) |
                                             ((uint32_t)(q2 & 0xff) << 16) | ((uint32_t)q3 << 24));
            }
            s += __shfl_xor_sync(0xffffffffu, s, 1);
            if (in && (lane & 1) == 0) { db[base / 32] = d; sb[base / 32] = s; }
        }
    }
}

// One CTA's work on plain arguments: a (the batch's weights, rows astr bytes apart), b (K
// floats), d (M floats, dstr bytes apart). The 2-D kernel passes its launch arguments straight
// in: with the batch indices and divisions of mmq_args worked out in the kernel, the same code
// took 8.2 us instead of 7.15 (H100, tools/device/q4mv_probe.py, same weights).
template <int RW, int NP>
__device__ __forceinline__ void mv_q4_0_q8_cta(const char * __restrict__ a, int64_t astr, const float * __restrict__ b,
                                               char * __restrict__ d, int64_t dstr, int M, int K, int pf) {
    extern __shared__ int mv8_smem[];
    const int nb = K / 32;
    int * qb = mv8_smem;                          // K / 4 words: b as int8
    float * db = (float *)(mv8_smem + K / 4);     // nb scales
    int * sb = (int *)(db + nb);                  // nb sums of the int8 values
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    pdl_trigger();
    // Before the wait, while the previous kernel may still run (pf): ask L2 for the CTA's
    // weight rows, one bulk prefetch per row through the copy engine (line-by-line prefetches
    // from the weight warps measured no faster and cost more behind other kernels). The loads
    // after the wait then find them there. An L2 prefetch reads nothing into the SM and L2 is
    // where every SM's writes meet, so a line the previous kernel writes afterwards is simply
    // updated there: no load below can see old data.
    if (pf && tid < MV8_WARPS * RW) {
        const int row = blockIdx.x * (MV8_WARPS * RW) + tid;
        if (row < M) prefetch_l2_range(a + (int64_t)row * astr, nb * (int)sizeof(block_q4_0));
    }
    pdl_wait();                                   // before any global access (see launch_pdl)
    if (warp >= MV8_WARPS) {                      // a b warp
        mv8_quantize_b(b, K, warp - MV8_WARPS, qb, db, sb);
        __syncthreads();
        return;
    }
    const int rbase = blockIdx.x * (MV8_WARPS * RW) + warp * RW;
    uint32_t w[RW][NP][9];
#pragma unroll
    for (int r = 0; r < RW; r++) {
        const int row = rbase + r < M ? rbase + r : M - 1;   // past the end: a valid row, not written
        const uint32_t * ar = (const uint32_t *)(a + (int64_t)row * astr);
#pragma unroll
        for (int c = 0; c < NP; c++) {
            const int pr = lane + 32 * c;
            if (2 * pr < nb) {
#pragma unroll
                for (int j = 0; j < 9; j++) w[r][c][j] = __ldg(ar + pr * 9 + j);
            }
        }
    }
    __syncthreads();                              // b is in shared memory
    float acc[RW];
#pragma unroll
    for (int r = 0; r < RW; r++) acc[r] = 0.0f;
    constexpr uint32_t m4 = 0x0f0f0f0fu;
#pragma unroll
    for (int c = 0; c < NP; c++) {
        const int pr = lane + 32 * c;
        if (2 * pr >= nb) break;
        const int4 * bq = (const int4 *)(qb + pr * 16);
        const int4 b0 = bq[0], b1 = bq[1], b2 = bq[2], b3 = bq[3];
        const float d0 = db[2 * pr], d1 = db[2 * pr + 1];
        const int s0 = sb[2 * pr], s1 = sb[2 * pr + 1];
#pragma unroll
        for (int r = 0; r < RW; r++) {
            const uint32_t * v = w[r][c];
            // block 2pr: scale in the low half of word 0, nibbles in bytes 2..17
            const uint32_t q0 = __funnelshift_r(v[0], v[1], 16), q1 = __funnelshift_r(v[1], v[2], 16);
            const uint32_t q2 = __funnelshift_r(v[2], v[3], 16), q3 = __funnelshift_r(v[3], v[4], 16);
            int si = __dp4a((int)(q0 & m4), b0.x, 0);
            si = __dp4a((int)(q1 & m4), b0.y, si);
            si = __dp4a((int)(q2 & m4), b0.z, si);
            si = __dp4a((int)(q3 & m4), b0.w, si);
            si = __dp4a((int)((q0 >> 4) & m4), b1.x, si);
            si = __dp4a((int)((q1 >> 4) & m4), b1.y, si);
            si = __dp4a((int)((q2 >> 4) & m4), b1.z, si);
            si = __dp4a((int)((q3 >> 4) & m4), b1.w, si);
            // block 2pr + 1: scale in the high half of word 4, nibbles in words 5..8
            int sj = __dp4a((int)(v[5] & m4), b2.x, 0);
            sj = __dp4a((int)(v[6] & m4), b2.y, sj);
            sj = __dp4a((int)(v[7] & m4), b2.z, sj);
            sj = __dp4a((int)(v[8] & m4), b2.w, sj);
            sj = __dp4a((int)((v[5] >> 4) & m4), b3.x, sj);
            sj = __dp4a((int)((v[6] >> 4) & m4), b3.y, sj);
            sj = __dp4a((int)((v[7] >> 4) & m4), b3.z, sj);
            sj = __dp4a((int)((v[8] >> 4) & m4), b3.w, sj);
            // (CUDA's own half -> float: a NaN scale makes the row NaN either way, and h2f's
            // payload-keeping branch costs issue slots this latency-bound kernel lacks)
            const float da0 = __half2float(__ushort_as_half((unsigned short)(v[0] & 0xffffu)));
            const float da1 = __half2float(__ushort_as_half((unsigned short)(v[4] >> 16)));
            acc[r] = fmaf(da0 * d0, (float)(si - 8 * s0), acc[r]);
            acc[r] = fmaf(da1 * d1, (float)(sj - 8 * s1), acc[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < RW; r++) {
        float s = acc[r];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0 && rbase + r < M) *(float *)(d + (int64_t)(rbase + r) * dstr) = s;
    }
}

// one matrix: the launch's arguments are the CTA's
template <int RW, int NP>
__global__ void __launch_bounds__(32 * (MV8_WARPS + MV8_BWARPS))
k_mv_q4_0_q8(const char * a, int64_t astr, const float * b, char * d, int64_t dstr, int M, int K, int pf) {
    mv_q4_0_q8_cta<RW, NP>(a, astr, b, d, dstr, M, K, pf);
}

// batches (blockIdx.y): a's batch dims broadcast over b's as ggml does
template <int RW, int NP>
__global__ void __launch_bounds__(32 * (MV8_WARPS + MV8_BWARPS)) k_mv_q4_0_q8_batched(mmq_args p, int pf) {
    const int z = blockIdx.y;
    const int i12 = z % p.ne12, i13 = z / p.ne12;
    mv_q4_0_q8_cta<RW, NP>(p.a + (int64_t)(i12 / p.r2) * p.anb[2] + (int64_t)(i13 / p.r3) * p.anb[3], p.anb[1],
                           (const float *)(p.b + (int64_t)i12 * p.bnb[2] + (int64_t)i13 * p.bnb[3]),
                           p.d + (int64_t)i12 * p.dnb[2] + (int64_t)i13 * p.dnb[3], p.dnb[0], p.M, p.K, pf);
}

// Whether k_mv_q4_0_q8 takes this Q4_0 mat-vec: one contiguous, 16-byte aligned f32 column,
// whole block pairs per row (K % 64), rows at 4-byte aligned addresses, K <= 16384 (its
// shared memory and registers). Launches it (its status in *status) and returns true, or
// returns false.
static bool launch_mv_q4_0_q8(const mmq_args & p, const void * a_data, unsigned nbatch, cudaStream_t stream,
                              int * status) {
    if (p.N != 1 || !p.bvec || p.K % 64 || p.K > 16384 || (uintptr_t)a_data % 4 ||
        p.anb[1] % 4 || p.anb[2] % 4 || p.anb[3] % 4)
        return false;
    const size_t smem = (size_t)p.K + (size_t)(p.K / 32) * 8;
    const int np = (p.K + 2047) / 2048;
    auto go = [&](auto kern, auto kern_batched, int rw) {
        const dim3 grid(ceil_div(p.M, MV8_WARPS * rw), nbatch), block(32 * (MV8_WARPS + MV8_BWARPS));
        // the prefetch pays only when this kernel starts early: behind a launch_pdl kernel
        const int pf = pdl_enabled() && pdl_follows() && mv_prefetch_enabled();
        if (nbatch == 1)
            return launch_pdl(kern, grid, block, smem, stream, p.a, p.anb[1], (const float *)p.b, p.d, p.dnb[0], p.M,
                              p.K, pf);
        return launch_pdl(kern_batched, grid, block, smem, stream, p, pf);
    };
    if (np == 1) *status = go(k_mv_q4_0_q8<4, 1>, k_mv_q4_0_q8_batched<4, 1>, 4);
    else if (np == 2) *status = go(k_mv_q4_0_q8<4, 2>, k_mv_q4_0_q8_batched<4, 2>, 4);
    else if (np <= 4) *status = go(k_mv_q4_0_q8<2, 4>, k_mv_q4_0_q8_batched<2, 4>, 2);
    else *status = go(k_mv_q4_0_q8<1, 8>, k_mv_q4_0_q8_batched<1, 8>, 1);
    return true;
}

// Tensor-core GEMM: 64x64 output tiles, 4 warps of 32x32, k steps of 32.
constexpr int GM = 64, GN = 64, GK = 32;

template <typename Q>
__global__ void __launch_bounds__(128) k_mm_q_wmma(mmq_args p) {
    using namespace nvcuda;
    __shared__ __align__(32) half As[GM][GK + 8];
    __shared__ __align__(32) half Bs[GN][GK + 8];
    __shared__ __align__(32) float Cs[GN][GM + 4];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int m0 = blockIdx.x * GM, n0 = blockIdx.y * GN;
    const int z = blockIdx.z;
    const int i12 = z % p.ne12, i13 = z / p.ne12;
    const char * a = p.a + (int64_t)(i12 / p.r2) * p.anb[2] + (int64_t)(i13 / p.r3) * p.anb[3];
    const char * b = p.b + (int64_t)i12 * p.bnb[2] + (int64_t)i13 * p.bnb[3];
    constexpr int CPB = Q::QK / 8;
    const int wm = warp & 1, wn = warp >> 1;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);

    for (int k0 = 0; k0 < p.K; k0 += GK) {
        // a: 64 rows x 4 chunks of 8, dequantized and rounded to f16
#pragma unroll
        for (int t = tid; t < GM * (GK / 8); t += 128) {
            const int r = t >> 2, ck = t & 3, m = m0 + r;
            float v[8];
            if (m < p.M) {
                const int ch = (k0 >> 3) + ck;
                Q::template deq8<false>((const uint8_t *)(a + (int64_t)m * p.anb[1] + (int64_t)(ch / CPB) * Q::BYTES), ch % CPB, v);
            } else {
#pragma unroll
                for (int j = 0; j < 8; j++) v[j] = 0.0f;
            }
            union { uint4 u; half h[8]; } pk;
#pragma unroll
            for (int j = 0; j < 8; j++) pk.h[j] = __float2half_rn(v[j]);
            *(uint4 *)&As[r][ck * 8] = pk.u;
        }
        // b: 64 rows x 32 values, one row per warp step (coalesced along k)
#pragma unroll 4
        for (int i = 0; i < GN / 4; i++) {
            const int r = warp * (GN / 4) + i, n = n0 + r;
            const float x = n < p.N ? *(const float *)(b + (int64_t)n * p.bnb[1] + (int64_t)(k0 + lane) * p.bnb[0]) : 0.0f;
            Bs[r][lane] = __float2half_rn(x);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < GK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb[2];
#pragma unroll
            for (int i = 0; i < 2; i++) wmma::load_matrix_sync(fa[i], &As[wm * 32 + i * 16][kk], GK + 8);
#pragma unroll
            for (int j = 0; j < 2; j++) wmma::load_matrix_sync(fb[j], &Bs[wn * 32 + j * 16][kk], GK + 8);
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
            wmma::store_matrix_sync(&Cs[wn * 32 + j * 16][wm * 32 + i * 16], acc[i][j], GM + 4, wmma::mem_col_major);
    __syncthreads();
    char * d = p.d + (int64_t)i12 * p.dnb[2] + (int64_t)i13 * p.dnb[3];
    for (int t = tid; t < GM * GN; t += 128) {
        const int nl = t / GM, ml = t % GM, m = m0 + ml, n = n0 + nl;
        if (m < p.M && n < p.N) *(float *)(d + (int64_t)m * p.dnb[0] + (int64_t)n * p.dnb[1]) = Cs[nl][ml];
    }
}

bool mul_mat_q_supported(int dst_type, int a_type, int b_type) {
    return dst_type == GGML_TYPE_F32 && b_type == GGML_TYPE_F32 && quant_supported(a_type);
}

int mul_mat_q_forward(ggml_tensor * dst, cudaStream_t stream) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    if (!mul_mat_q_supported(dst->type, a->type, b->type)) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "mul_mat: a %s, b %s -> %s (quantized weights need b f32, dst f32)",
                    ggml_type_name(a->type), ggml_type_name(b->type), ggml_type_name(dst->type));
    }
    if (a->ne[0] != b->ne[0] || dst->ne[0] != a->ne[1] || dst->ne[1] != b->ne[1] ||
        dst->ne[2] != b->ne[2] || dst->ne[3] != b->ne[3] || a->ne[2] <= 0 || a->ne[3] <= 0 ||
        b->ne[2] % a->ne[2] || b->ne[3] % a->ne[3]) {
        return fail(GGML_CY_CUDA_ERR_INVALID, "mul_mat: shapes do not match ggml's rule");
    }
    const int64_t blck = ggml_cy_blck_size(a->type);
    if (a->ne[0] % blck || a->nb[0] != (int64_t)ggml_cy_block_bytes(a->type)) {
        return fail(GGML_CY_CUDA_ERR_INVALID, "mul_mat: a's rows must be whole %s blocks", ggml_type_name(a->type));
    }
    for (int i = 0; i < 4; i++) {
        if (a->ne[i] >= (1 << 30) || b->ne[i] >= (1 << 30)) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "mul_mat too large");
    }
    if (nelements(dst) == 0) return GGML_CY_CUDA_OK;
    const int64_t nbatch = b->ne[2] * b->ne[3];
    if (nbatch > 65535 || (b->ne[1] > 8 && (b->ne[1] + GN - 1) / GN > 65535))
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "mul_mat: too many batches or columns for the grid");
    mmq_args p;
    p.a = (const char *)a->data; p.b = (const char *)b->data; p.d = (char *)dst->data;
    p.K = (int)a->ne[0]; p.M = (int)a->ne[1]; p.N = (int)b->ne[1];
    p.r2 = (int)(b->ne[2] / a->ne[2]); p.r3 = (int)(b->ne[3] / a->ne[3]);
    p.ne12 = (int)b->ne[2];
    for (int i = 0; i < 4; i++) { p.anb[i] = a->nb[i]; p.bnb[i] = b->nb[i]; p.dnb[i] = dst->nb[i]; }
    p.bvec = b->nb[0] == 4 && ((uintptr_t)b->data % 16) == 0 && b->nb[1] % 16 == 0 && b->nb[2] % 16 == 0 &&
             b->nb[3] % 16 == 0;
    int mv_status = GGML_CY_CUDA_OK;       // launch_mv_q4_0_q8's launch (launch_pdl)
    with_qtype(a->type, [&](auto q) {
        using Q = decltype(q);
        if (p.N <= 8) {
            const int block = 32 * MMV_WARPS;
            auto grid = [&](int R) { return dim3(ceil_div(p.M, R), (unsigned)nbatch); };   // R rows per CTA
            // 4 rows per CTA: each b value loaded is used for 4 rows (H100, 4096x4096, one
            // column: 1 row per CTA 14.9 / 14.1 / 17.4 / 19.9 us for Q4_0 / Q8_0 / Q4_K / Q6_K,
            // 4 rows 9.0 / 12.9 / 16.4 / 17.9 us; 2 or 8 rows no faster)
            // Q4_0 x1 alternatives measured on an H100 and dropped (commit 02673d0,
            // bench/results/q4mmv_variants-nvidia-h100-80gb-hbm3.json): both steps' loads first
            // 11.0 us, whole rows staged in shared memory by cp.async (4/8/16 rows) 11.0-12.2,
            // the same with int8 b and dp4a 10.1-13.6, those staged kernels with programmatic
            // dependent launch 19.6-24.0 (1024 CTAs, L2 prefetches before the wait); this kernel
            // 8.8 us (7.3 with the weights L2-resident).
            if constexpr (Q::TYPE == GGML_TYPE_Q4_0) {
                if (launch_mv_q4_0_q8(p, a->data, (unsigned)nbatch, stream, &mv_status)) {}
                else if (p.N == 1) k_mmv_q4_0<1, 4><<<grid(4), block, 0, stream>>>(p);
                else if (p.N == 2) k_mmv_q4_0<2, 2><<<grid(2), block, 0, stream>>>(p);
                else if (p.N <= 4) k_mmv_q4_0<4, 4><<<grid(4), block, 0, stream>>>(p);
                else k_mmv_q4_0<8, 4><<<grid(4), block, 0, stream>>>(p);
            } else {
                if (p.N == 1) k_mmv_q<Q, 1, 4><<<grid(4), block, 0, stream>>>(p);
                else if (p.N == 2) k_mmv_q<Q, 2, 4><<<grid(4), block, 0, stream>>>(p);
                else if (p.N <= 4) k_mmv_q<Q, 4, 4><<<grid(4), block, 0, stream>>>(p);
                else k_mmv_q<Q, 8, 4><<<grid(4), block, 0, stream>>>(p);
            }
        } else {
            const dim3 grid(ceil_div(p.M, GM), ceil_div(p.N, GN), (unsigned)nbatch);
            k_mm_q_wmma<Q><<<grid, 128, 0, stream>>>(p);
        }
    });
    if (mv_status != GGML_CY_CUDA_OK) return mv_status;
    return check_launch("quantized mul_mat kernel launch");
}

}  // namespace gcy
