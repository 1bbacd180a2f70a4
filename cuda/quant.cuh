// Quantized blocks on the device: the values of every dequantizable ggml block type, eight at
// a time, bitwise equal to the CPU path and to gguf-py's float32 dequantization.
//
// Layouts are ggml's (ggml-common.h, here core/csrc/quant_blocks.h); the constant tables
// (IQ grids, sign patterns, non-linear values) come from core/csrc/quant_tables.h, placed in
// device memory by the one translation unit that includes this header .
//
// Exactness. gguf-py computes each value with float32 numpy operations in a fixed order, e.g.
// Q4_K's `(d * sc) * q - (dmin * m)`: every product and sum rounded once. The device does the
// same operations in the same order with __fmul_rn/__fadd_rn/__fsub_rn (no FMA contraction,
// no flush to zero). NaNs follow x86's SSE rules, which numpy and the C path inherit: a NaN
// operand propagates quieted (the first operand's when both are NaN), and an invalid
// operation (inf * 0, inf - inf) gives the "default NaN" 0xffc00000. CUDA's own arithmetic
// returns one canonical NaN instead, so every operation here repairs a NaN result.
#pragma once

#include "common.cuh"
#include "quant_blocks.h"

namespace gcy {

// ------------------------------------------------------------------ x86-exact float ops
__device__ __forceinline__ float x86_nan(float a, float b) {
    if (a != a) return __uint_as_float(__float_as_uint(a) | 0x00400000u);
    if (b != b) return __uint_as_float(__float_as_uint(b) | 0x00400000u);
    return __uint_as_float(0xffc00000u);
}
__device__ __forceinline__ float xmul(float a, float b) {
    const float r = __fmul_rn(a, b);
    return r == r ? r : x86_nan(a, b);
}
__device__ __forceinline__ float xadd(float a, float b) {
    const float r = __fadd_rn(a, b);
    return r == r ? r : x86_nan(a, b);
}
__device__ __forceinline__ float xsub(float a, float b) {
    const float r = __fsub_rn(a, b);
    return r == r ? r : x86_nan(a, b);
}
// The float ops of a block's values, by mode E:
//   QX (2): the x86-exact ops above (dequantization);
//   QR (1): the same roundings without the NaN repair: each op rounds once (the _rn
//           intrinsics are never contracted into an FMA), so QR and QX agree on every result
//           that is not a NaN. A block whose scales are finite takes QR (qtype<T>::deq8):
//           about half the instructions of QX.
//   QP (0): plain float ops, contraction allowed (dot products, where the rounding of a
//           dequantized weight does not matter).
constexpr int QP = 0, QR = 1, QX = 2;
template <int E> __device__ __forceinline__ float qmul(float a, float b) {
    return E == QX ? xmul(a, b) : E == QR ? __fmul_rn(a, b) : a * b;
}
template <int E> __device__ __forceinline__ float qadd(float a, float b) {
    return E == QX ? xadd(a, b) : E == QR ? __fadd_rn(a, b) : a + b;
}
template <int E> __device__ __forceinline__ float qsub(float a, float b) {
    return E == QX ? xsub(a, b) : E == QR ? __fsub_rn(a, b) : a - b;
}

// float16 bits -> float32 with NaN payloads kept (numpy's conversion: no quieting)
__device__ __forceinline__ float h2f(uint16_t bits) { return up<half>(__ushort_as_half(bits)); }
// the same for QX; otherwise CUDA's own conversion (equal for every non-NaN value)
template <int E> __device__ __forceinline__ float hf(uint16_t bits) {
    return E == QX ? h2f(bits) : __half2float(__ushort_as_half(bits));
}
// whether float16 bits are finite (not inf, not NaN)
__device__ __forceinline__ bool fin16(uint16_t bits) { return (bits & 0x7c00u) != 0x7c00u; }

__device__ __forceinline__ uint16_t ld16(const uint8_t * p) {   // 2-byte aligned
    return *(const uint16_t *)p;
}
__device__ __forceinline__ uint32_t ld32a2(const uint8_t * p) { // 2-byte aligned 32-bit word
    return (uint32_t)ld16(p) | ((uint32_t)ld16(p + 2) << 16);
}
// eight bytes at a 2-byte aligned address: four 16-bit loads, or with TRY one 8-byte (or two
// 4-byte) loads where the address allows. TRY is for block types whose size is a multiple of
// 8 bytes (Q4_K, Q5_K, IQ4_XS: every block of a tensor has the same alignment, so the branch
// is uniform across a warp); with 18- or 34-byte blocks the lanes would diverge.
template <bool TRY = false> __device__ __forceinline__ uint2 ld8a2(const uint8_t * p) {
    if constexpr (TRY) {
        const uintptr_t a = (uintptr_t)p;
        if ((a & 7) == 0) return *(const uint2 *)p;
        if ((a & 3) == 0) return make_uint2(((const uint32_t *)p)[0], ((const uint32_t *)p)[1]);
    }
    return make_uint2(ld32a2(p), ld32a2(p + 4));
}
__device__ __forceinline__ uint32_t byte_of(uint2 w, int j) {   // j: compile-time after unrolling
    return ((j < 4 ? w.x : w.y) >> (8 * (j & 3))) & 0xffu;
}
__device__ __forceinline__ uint32_t ld32u(const uint8_t * p) {  // any alignment
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

// ------------------------------------------------------------------ tables
// ggml's constant tables in device memory (global, read through the cache: the grid lookups
// of a warp go to different entries, which constant memory would serialize).
}  // namespace gcy
#pragma nv_diag_suppress 177   // tables this library does not use (ksigns64, iq1s_grid_gpu)
#define GGML_CY_QTABLE_QUAL static const __device__
#include "quant_tables.h"
#undef GGML_CY_QTABLE_QUAL
#pragma nv_diag_default 177
namespace gcy {

struct qtables {
    const uint8_t * ksigns;
    const uint64_t * iq2xxs, * iq2xs, * iq2s, * iq1s;
    const uint32_t * iq3xxs, * iq3s;
    const int8_t * fp4;
};
__device__ __forceinline__ qtables tables() {
    return qtables{ksigns_iq2xs, iq2xxs_grid, iq2xs_grid, iq2s_grid, iq1s_grid,
                   iq3xxs_grid, iq3s_grid, kvalues_fp4};
}

// ------------------------------------------------------------------ block traits
// qtype<T>: QK values per block of BYTES bytes; deq8(block, c, v) writes values
// [8c, 8c + 8) of the block (c < QK / 8) as float32. Blocks need only their struct's
// alignment (2 bytes for those with float16 scales, 4 for Q8_K, 1 for MXFP4 and NVFP4).
template <int T> struct qtype;

// The qs nibble of 32-value blocks whose element i < 16 is the low nibble of qs[i] and
// element i >= 16 the high nibble of qs[i - 16].
__device__ __forceinline__ int nib32(const uint8_t * qs, int i) {
    return i < 16 ? (qs[i] & 15) : (qs[i - 16] >> 4);
}

// values [8c, 8c + 8) of a 32-value nibble layout: the nibbles as bytes of a uint2
template <bool TRY = false> __device__ __forceinline__ uint2 nibs8(const uint8_t * qs, int c) {
    const uint2 w = ld8a2<TRY>(qs + (c & 1) * 8);
    const int sh = (c >> 1) * 4;
    return make_uint2((w.x >> sh) & 0x0f0f0f0fu, (w.y >> sh) & 0x0f0f0f0fu);
}

// deq8<true>: the exact values (dequantization); deq8<false>: plain float ops (dot products).
// OK is an expression of the block x, true when its scales are finite, so that no operation
// can give a NaN: then the exact form takes the cheaper QR body, whose bits are the same (see
// qmul); blocks with an inf or NaN scale take the QX body. The exact form also tries wider
// loads (ld8a2<AL8>): one deq8 per thread there. The dot-product loops keep the plain 16-bit
// loads: the alignment branches would keep their unrolled loads from being in flight together.
#define QT_BEGIN(T, S, QKV, OK) template <> struct qtype<T> { using block_t = S; \
    static constexpr int TYPE = T; static constexpr int QK = QKV; static constexpr int BYTES = (int)sizeof(S); \
    static constexpr bool AL8 = BYTES % 8 == 0;    /* see ld8a2 */ \
    static __device__ __forceinline__ bool scales_ok(const S * x) { return OK; } \
    static __device__ __forceinline__ bool finite_scales(const uint8_t * b) { return scales_ok((const S *)b); } \
    template <bool X = true> static __device__ __forceinline__ void deq8(const uint8_t * b, int c, float * v) { \
        if (!X) body<QP, false>(b, c, v); \
        else if (finite_scales(b)) body<QR, AL8>(b, c, v); \
        else body<QX, AL8>(b, c, v); } \
    template <int E, bool A> static __device__ __forceinline__ void body(const uint8_t * b, int c, float * v) { \
        const S * x = (const S *)b; (void)x;
#define QT_END } };

QT_BEGIN(GGML_TYPE_Q4_0, block_q4_0, 32, fin16(x->d))
    const float d = hf<E>(x->d);
    const uint2 q = nibs8<A>(x->qs, c);
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = qmul<E>(d, (float)((int)byte_of(q, j) - 8));
QT_END

QT_BEGIN(GGML_TYPE_Q4_1, block_q4_1, 32, fin16(x->d) && fin16(x->m))
    const float d = hf<E>(x->d), m = hf<E>(x->m);
    const uint2 q = nibs8<A>(x->qs, c);
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = qadd<E>(qmul<E>(d, (float)byte_of(q, j)), m);
QT_END

QT_BEGIN(GGML_TYPE_Q5_0, block_q5_0, 32, fin16(x->d))
    const float d = hf<E>(x->d);
    const uint32_t qh = ld32a2(x->qh);
    const uint2 q = nibs8<A>(x->qs, c);
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int i = 8 * c + j;
        v[j] = qmul<E>(d, (float)(((int)byte_of(q, j) | (int)(((qh >> i) & 1) << 4)) - 16));
    }
QT_END

QT_BEGIN(GGML_TYPE_Q5_1, block_q5_1, 32, fin16(x->d) && fin16(x->m))
    const float d = hf<E>(x->d), m = hf<E>(x->m);
    const uint32_t qh = ld32a2(x->qh);
    const uint2 q = nibs8<A>(x->qs, c);
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int i = 8 * c + j;
        v[j] = qadd<E>(qmul<E>(d, (float)((int)byte_of(q, j) | (int)(((qh >> i) & 1) << 4))), m);
    }
QT_END

QT_BEGIN(GGML_TYPE_Q8_0, block_q8_0, 32, fin16(x->d))
    const float d = hf<E>(x->d);
    const uint2 q = ld8a2<A>((const uint8_t *)x->qs + 8 * c);
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = qmul<E>((float)(int8_t)byte_of(q, j), d);
QT_END

QT_BEGIN(GGML_TYPE_Q8_1, block_q8_1, 32, fin16(x->d))
    const float d = hf<E>(x->d);
    const uint2 q = ld8a2<A>((const uint8_t *)x->qs + 8 * c);
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = qmul<E>((float)(int8_t)byte_of(q, j), d);
QT_END

QT_BEGIN(GGML_TYPE_Q8_K, block_q8_K, 256, isfinite(x->d))
    const float d = x->d;
    const uint2 q = ld8a2<A>((const uint8_t *)x->qs + 8 * c);
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = qmul<E>((float)(int8_t)byte_of(q, j), d);
QT_END

// Q2_K: value i = half*128 + j*32 + l takes bits 2j of qs[half*32 + l]; scale/min of i/16.
QT_BEGIN(GGML_TYPE_Q2_K, block_q2_K, 256, fin16(x->d) && fin16(x->dmin))
    const int i0 = 8 * c, half_ = i0 >> 7, sh = ((i0 >> 5) & 3) * 2, l0 = i0 & 31;
    const uint8_t sc = x->scales[i0 >> 4];
    const float dl = qmul<E>(hf<E>(x->d), (float)(sc & 15));
    const float ml = qmul<E>(hf<E>(x->dmin), (float)(sc >> 4));
    const uint2 q = ld8a2<A>(x->qs + half_ * 32 + l0);
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = qsub<E>(qmul<E>(dl, (float)((byte_of(q, j) >> sh) & 3)), ml);
QT_END

QT_BEGIN(GGML_TYPE_Q3_K, block_q3_K, 256, fin16(x->d))
    const int i0 = 8 * c, half_ = i0 >> 7, sh = ((i0 >> 5) & 3) * 2, l0 = i0 & 31, hb = i0 >> 5;
    const int s = i0 >> 4;
    const int lo = (x->scales[s & 7] >> (4 * (s >> 3))) & 15;
    const int hi = (x->scales[8 + (s & 3)] >> (2 * (s >> 2))) & 3;
    const float dl = qmul<E>(hf<E>(x->d), (float)((lo | (hi << 4)) - 32));
    const uint2 q = ld8a2<A>(x->qs + half_ * 32 + l0), hm = ld8a2<A>(x->hmask + l0);
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int ql = (byte_of(q, j) >> sh) & 3;
        const int h = (byte_of(hm, j) >> hb) & 1;
        v[j] = qmul<E>(dl, (float)(ql - ((h ^ 1) << 2)));
    }
QT_END

// Q4_K/Q5_K's 6-bit scale and min of sub-block s (0..7)
__device__ __forceinline__ void scale_min_k4(const uint8_t * q, int s, int & sc, int & mn) {
    if (s < 4) {
        sc = q[s] & 63;
        mn = q[s + 4] & 63;
    } else {
        sc = (q[s + 4] & 15) | ((q[s - 4] >> 2) & 0x30);
        mn = (q[s + 4] >> 4) | ((q[s] >> 2) & 0x30);
    }
}

QT_BEGIN(GGML_TYPE_Q4_K, block_q4_K, 256, fin16(x->d) && fin16(x->dmin))
    const int i0 = 8 * c, s = i0 >> 5, l0 = i0 & 31;
    int sc, mn;
    scale_min_k4(x->scales, s, sc, mn);
    const float dsc = qmul<E>(hf<E>(x->d), (float)sc), dm = qmul<E>(hf<E>(x->dmin), (float)mn);
    const uint2 q = ld8a2<A>(x->qs + (s >> 1) * 32 + l0);
    const int sh = (s & 1) * 4;
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = qsub<E>(qmul<E>(dsc, (float)((byte_of(q, j) >> sh) & 15)), dm);
QT_END

QT_BEGIN(GGML_TYPE_Q5_K, block_q5_K, 256, fin16(x->d) && fin16(x->dmin))
    const int i0 = 8 * c, s = i0 >> 5, l0 = i0 & 31;
    int sc, mn;
    scale_min_k4(x->scales, s, sc, mn);
    const float dsc = qmul<E>(hf<E>(x->d), (float)sc), dm = qmul<E>(hf<E>(x->dmin), (float)mn);
    const uint2 q = ld8a2<A>(x->qs + (s >> 1) * 32 + l0), qh = ld8a2<A>(x->qh + l0);
    const int sh = (s & 1) * 4;
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int qv = ((byte_of(q, j) >> sh) & 15) | (((byte_of(qh, j) >> s) & 1) << 4);
        v[j] = qsub<E>(qmul<E>(dsc, (float)qv), dm);
    }
QT_END

QT_BEGIN(GGML_TYPE_Q6_K, block_q6_K, 256, fin16(x->d))
    const int i0 = 8 * c, half_ = i0 >> 7, r = i0 & 127;
    const uint2 ql = ld8a2<A>(x->ql + half_ * 64 + (r & 63));
    const int shl = (r >> 6) * 4;
    const uint2 qh = ld8a2<A>(x->qh + half_ * 32 + (r & 31));
    const int shh = (r >> 5) * 2;
    const float dsc = qmul<E>(hf<E>(x->d), (float)x->scales[i0 >> 4]);
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int qv = (int)(((byte_of(ql, j) >> shl) & 15) | (((byte_of(qh, j) >> shh) & 3) << 4)) - 32;
        v[j] = qmul<E>(dsc, (float)qv);
    }
QT_END

QT_BEGIN(GGML_TYPE_TQ1_0, block_tq1_0, 256, fin16(x->d))
    const float d = hf<E>(x->d);
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int i = 8 * c + j;
        int byte, k;
        if (i < 160) { byte = x->qs[i & 31]; k = i >> 5; }
        else if (i < 240) { byte = x->qs[32 + ((i - 160) & 15)]; k = (i - 160) >> 4; }
        else { byte = x->qh[(i - 240) & 3]; k = (i - 240) >> 2; }
        const int pow3 = k == 0 ? 1 : k == 1 ? 3 : k == 2 ? 9 : k == 3 ? 27 : 81;
        const int q = (int)((((unsigned)(byte * pow3) & 255u) * 3u) >> 8) - 1;
        v[j] = qmul<E>(d, (float)q);
    }
QT_END

QT_BEGIN(GGML_TYPE_TQ2_0, block_tq2_0, 256, fin16(x->d))
    const int i0 = 8 * c, half_ = i0 >> 7, sh = ((i0 >> 5) & 3) * 2, l0 = i0 & 31;
    const float d = hf<E>(x->d);
    const uint2 q = ld8a2<A>(x->qs + half_ * 32 + l0);
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = qmul<E>(d, (float)((int)((byte_of(q, j) >> sh) & 3) - 1));
QT_END

QT_BEGIN(GGML_TYPE_MXFP4, block_mxfp4, 32, true)   // the E8M0 scale is always finite
    // E8M0 halved (ggml_e8m0_to_fp32_half): exponents 0 and 1 give subnormals
    const uint32_t e = x->e;
    const float d = __uint_as_float(e < 2 ? (0x00200000u << e) : ((e - 1) << 23));
    const int8_t * kv = tables().fp4;
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = qmul<E>(d, (float)kv[nib32(x->qs, 8 * c + j)]);
QT_END

// UE4M3 scale, halved (the kvalues are doubled): 0 and 0x7f decode to 0
__device__ __forceinline__ float ue4m3_half(int x) {
    if (x == 0 || x == 0x7f) return 0.0f;
    const int e = (x >> 3) & 15, m = x & 7;
    if (e == 0) return (float)m * 0.0009765625f;               // m * 2^-9 * 0.5
    return ldexpf(1.0f + (float)m * 0.125f, e - 8);            // (1 + m/8) * 2^(e-7) * 0.5
}

QT_BEGIN(GGML_TYPE_NVFP4, block_nvfp4, 64, true)   // so are the UE4M3 scales
    const int i0 = 8 * c, s = i0 >> 4;
    const float d = ue4m3_half(x->d[s]);
    const uint8_t * q = x->qs + s * 8;
    const int8_t * kv = tables().fp4;
    const int sh = (i0 & 8) ? 4 : 0;
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = qmul<E>(d, (float)kv[(q[j] >> sh) & 15]);
QT_END

// kvalues_iq4nl of four indices (the bytes of q, each 0..15) as four int8 bytes, looked up
// in registers: two byte permutes over the table's low and high halves, then a per-byte
// select on bit 3 (eight loads from the table in device memory cost the IQ4 dequantize
// its LSU issue slots). The words are the table's 16 bytes, little-endian.
__device__ __forceinline__ uint32_t iq4nl_lut4(uint32_t q) {
    const uint32_t t = q & 0x07070707u, u = t | (t >> 4);
    const uint32_t sel = (u & 0xffu) | ((u >> 8) & 0xff00u);    // four 3-bit byte selectors
    const uint32_t lo = __byte_perm(0xbfad9881u, 0xf6eaddcfu, sel);   // -127 .. -10
    const uint32_t hi = __byte_perm(0x26190d01u, 0x71594535u, sel);   // 1 .. 113
    const uint32_t m = ((q >> 3) & 0x01010101u) * 0xffu;
    return (lo & ~m) | (hi & m);
}
__device__ __forceinline__ uint2 iq4nl_lut8(uint2 q) { return make_uint2(iq4nl_lut4(q.x), iq4nl_lut4(q.y)); }

QT_BEGIN(GGML_TYPE_IQ4_NL, block_iq4_nl, 32, fin16(x->d))
    const float d = hf<E>(x->d);
    const uint2 k = iq4nl_lut8(nibs8<A>(x->qs, c));
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = qmul<E>(d, (float)(int8_t)byte_of(k, j));
QT_END

QT_BEGIN(GGML_TYPE_IQ4_XS, block_iq4_xs, 256, fin16(x->d))
    const int i0 = 8 * c, s = i0 >> 5;
    const int lo = (x->scales_l[s >> 1] >> (4 * (s & 1))) & 15;
    const int hi = (x->scales_h >> (2 * s)) & 3;
    const float dl = qmul<E>(hf<E>(x->d), (float)((lo | (hi << 4)) - 32));
    const uint2 k = iq4nl_lut8(nibs8<A>(x->qs + s * 16, (i0 & 31) >> 3));
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = qmul<E>(dl, (float)(int8_t)byte_of(k, j));
QT_END

// The eight values of one IQ2/IQ3 group: (db * grid) * sign, grid bytes little-endian.
template <int E> __device__ __forceinline__ void grid8(float db, uint64_t grid, uint32_t signs, float * v) {
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const float g = (float)(uint32_t)((grid >> (8 * j)) & 0xff);
        v[j] = qmul<E>(qmul<E>(db, g), ((signs >> j) & 1) ? -1.0f : 1.0f);
    }
}

QT_BEGIN(GGML_TYPE_IQ2_XXS, block_iq2_xxs, 256, fin16(x->d))
    const int s = c >> 2, g = c & 3;
    const uint8_t * p = (const uint8_t *)x->qs + 8 * s;
    const uint32_t aux0 = ld32a2(p), aux1 = ld32a2(p + 4);
    const float db = qmul<E>(qmul<E>(hf<E>(x->d), 0.5f + (float)(aux1 >> 28)), 0.25f);
    const qtables t = tables();
    grid8<E>(db, t.iq2xxs[(aux0 >> (8 * g)) & 255], t.ksigns[(aux1 >> (7 * g)) & 127], v);
QT_END

QT_BEGIN(GGML_TYPE_IQ2_XS, block_iq2_xs, 256, fin16(x->d))
    const uint16_t q = x->qs[c];
    const int k = c >> 1;
    const int sc = (x->scales[k >> 1] >> (4 * (k & 1))) & 15;
    const float db = qmul<E>(qmul<E>(hf<E>(x->d), 0.5f + (float)sc), 0.25f);
    const qtables t = tables();
    grid8<E>(db, t.iq2xs[q & 511], t.ksigns[q >> 9], v);
QT_END

QT_BEGIN(GGML_TYPE_IQ2_S, block_iq2_s, 256, fin16(x->d))
    const int gi = x->qs[c] | (((x->qh[c >> 2] >> (2 * (c & 3))) & 3) << 8);
    const int k = c >> 1;
    const int sc = (x->scales[k >> 1] >> (4 * (k & 1))) & 15;
    const float db = qmul<E>(qmul<E>(hf<E>(x->d), 0.5f + (float)sc), 0.25f);
    grid8<E>(db, tables().iq2s[gi], x->qs[QK_K / 8 + c], v);
QT_END

QT_BEGIN(GGML_TYPE_IQ3_XXS, block_iq3_xxs, 256, fin16(x->d))
    const int s = c >> 2, g = c & 3;
    const uint32_t aux = ld32a2(x->qs + QK_K / 4 + 4 * s);
    const float db = qmul<E>(qmul<E>(hf<E>(x->d), 0.5f + (float)(aux >> 28)), 0.5f);
    const qtables t = tables();
    const uint8_t * q = x->qs + 8 * s + 2 * g;
    const uint64_t grid = (uint64_t)t.iq3xxs[q[0]] | ((uint64_t)t.iq3xxs[q[1]] << 32);
    grid8<E>(db, grid, t.ksigns[(aux >> (7 * g)) & 127], v);
QT_END

QT_BEGIN(GGML_TYPE_IQ3_S, block_iq3_s, 256, fin16(x->d))
    const int s = c >> 2;
    const int sc = (x->scales[s >> 1] >> (4 * (s & 1))) & 15;
    const float db = qmul<E>(hf<E>(x->d), (float)(1 + 2 * sc));
    const int i0 = 2 * c, i1 = 2 * c + 1;
    const int g0 = x->qs[i0] | (((x->qh[i0 >> 3] >> (i0 & 7)) & 1) << 8);
    const int g1 = x->qs[i1] | (((x->qh[i1 >> 3] >> (i1 & 7)) & 1) << 8);
    const qtables t = tables();
    grid8<E>(db, (uint64_t)t.iq3s[g0] | ((uint64_t)t.iq3s[g1] << 32), x->signs[c], v);
QT_END

// IQ1: dl * (grid + delta), grid bytes are int8 -1, 0, 1
template <int E> __device__ __forceinline__ void grid8_iq1(float dl, uint64_t grid, float delta, float * v) {
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = qmul<E>(dl, (float)(int8_t)((grid >> (8 * j)) & 0xff) + delta);
}

QT_BEGIN(GGML_TYPE_IQ1_S, block_iq1_s, 256, fin16(x->d))
    const int s = c >> 2, g = c & 3;
    const uint32_t qh = x->qh[s];
    const float dl = qmul<E>(hf<E>(x->d), (float)(2 * ((qh >> 12) & 7) + 1));
    const float delta = (qh & 0x8000) ? -0.125f : 0.125f;
    const int gi = x->qs[4 * s + g] | (((qh >> (3 * g)) & 7) << 8);
    grid8_iq1<E>(dl, tables().iq1s[gi], delta, v);
QT_END

// IQ1_M's float16 super-scale: the top nibbles of its four 16-bit scale words
__device__ __forceinline__ uint16_t iq1m_dbits(const block_iq1_m * x) {
    const uint8_t * sp = x->scales;
    const uint32_t s0 = sp[0] | (sp[1] << 8), s1 = sp[2] | (sp[3] << 8);
    const uint32_t s2 = sp[4] | (sp[5] << 8), s3 = sp[6] | (sp[7] << 8);
    return (uint16_t)((s0 >> 12) | ((s1 >> 8) & 0xf0) | ((s2 >> 4) & 0xf00) | (s3 & 0xf000));
}

QT_BEGIN(GGML_TYPE_IQ1_M, block_iq1_m, 256, fin16(iq1m_dbits(x)))
    const uint8_t * sp = x->scales;
    const uint32_t s0 = sp[0] | (sp[1] << 8), s1 = sp[2] | (sp[3] << 8);
    const uint32_t s2 = sp[4] | (sp[5] << 8), s3 = sp[6] | (sp[7] << 8);
    const uint16_t dbits = iq1m_dbits(x);
    const int k = c >> 1;
    const uint32_t sk = (k >> 2) == 0 ? s0 : (k >> 2) == 1 ? s1 : (k >> 2) == 2 ? s2 : s3;
    const float dl = qmul<E>(hf<E>(dbits), (float)(2 * ((sk >> (3 * (k & 3))) & 7) + 1));
    const int qh = (x->qh[c >> 1] >> (4 * (c & 1))) & 15;
    const float delta = (qh & 8) ? -0.125f : 0.125f;
    grid8_iq1<E>(dl, tables().iq1s[x->qs[c] | ((qh & 7) << 8)], delta, v);
QT_END

#undef QT_BEGIN
#undef QT_END

// Calls f(qtype<T>{}) for a quantized type the device dequantizes; false otherwise.
template <typename F> static inline bool with_qtype(int type, F && f) {
    switch (type) {
#define GCY_Q(T) case T: f(qtype<T>{}); return true;
        GCY_Q(GGML_TYPE_Q4_0) GCY_Q(GGML_TYPE_Q4_1) GCY_Q(GGML_TYPE_Q5_0) GCY_Q(GGML_TYPE_Q5_1)
        GCY_Q(GGML_TYPE_Q8_0) GCY_Q(GGML_TYPE_Q8_1) GCY_Q(GGML_TYPE_Q8_K)
        GCY_Q(GGML_TYPE_Q2_K) GCY_Q(GGML_TYPE_Q3_K) GCY_Q(GGML_TYPE_Q4_K) GCY_Q(GGML_TYPE_Q5_K)
        GCY_Q(GGML_TYPE_Q6_K) GCY_Q(GGML_TYPE_TQ1_0) GCY_Q(GGML_TYPE_TQ2_0)
        GCY_Q(GGML_TYPE_MXFP4) GCY_Q(GGML_TYPE_NVFP4) GCY_Q(GGML_TYPE_IQ4_NL) GCY_Q(GGML_TYPE_IQ4_XS)
        GCY_Q(GGML_TYPE_IQ2_XXS) GCY_Q(GGML_TYPE_IQ2_XS) GCY_Q(GGML_TYPE_IQ2_S)
        GCY_Q(GGML_TYPE_IQ3_XXS) GCY_Q(GGML_TYPE_IQ3_S) GCY_Q(GGML_TYPE_IQ1_S) GCY_Q(GGML_TYPE_IQ1_M)
#undef GCY_Q
        default: return false;
    }
}

}  // namespace gcy
