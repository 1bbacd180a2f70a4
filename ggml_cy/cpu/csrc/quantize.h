/* ggml_cy CPU kernels: float32 -> quantized blocks.
 *
 * Two specifications are followed, each bit for bit:
 *
 *  - Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, BF16, TQ1_0, TQ2_0, MXFP4: gguf-py's numpy code
 *    (gguf.quants.quantize, gguf-py 0.19). Its numpy expressions fix the float32 operation
 *    order, and numpy's casts fix what happens to values that do not fit: a float32 -> int8
 *    or uint8 cast is x86's cvttss2si (truncation to int32; NaN, +-inf and |x| >= 2^31 give
 *    INT32_MIN) followed by keeping the low byte (measured on numpy 2.4: 300.0 -> 44,
 *    -1.5 -> 255 as uint8, NaN -> 0). Reductions propagate NaN (np.max), argmax/argmin pick
 *    the first maximum / first NaN, and float16 conversion keeps NaN payloads (numpy's
 *    software npy_floatbits_to_halfbits, not F16C's quieting). For finite inputs this equals
 *    ggml's quantize_row_*_ref; for NaN/inf/subnormal-scale blocks it is gguf-py's answer.
 *  - Q8_1, Q8_K (the activation formats of quantized mul_mat) and the K-quants
 *    (quantize_k.h): ggml's quantize_row_*_ref, evaluated in strict IEEE float32 order.
 *
 * Nothing here may be contracted into FMA (gcc contracts a*b+c across statements by default
 * with -march=native): the pragma below keeps every product and sum rounded separately, as
 * numpy does and as the C reference reads.
 *
 * Layouts are ggml's block structs (core/csrc/quant_blocks.h). Every function takes k
 * values (a multiple of the block size) and writes k/QK blocks; rows are back to back, so a
 * run of rows is one call. */
#ifndef GGML_CY_QUANTIZE_H
#define GGML_CY_QUANTIZE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "quant_blocks.h"
#include "quant_tables.h"
#include "kernels_convert.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize ("fp-contract=off")
#endif
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

/* ------------------------------------------------------------ numpy's scalar semantics */

/* numpy's float32 -> integer cast on x86 (cvttss2si): out of range and NaN -> INT32_MIN.
 * The caller keeps the low byte, as numpy's int8/uint8 casts do. */
static inline int32_t qz_cvtt(float f) {
    return (f >= -2147483648.0f && f < 2147483648.0f) ? (int32_t)f : INT32_MIN;
}

/* gguf-py's np_roundf (round half away from zero, as floor/sign arithmetic in float32),
 * then numpy's cast to int8. NaN and +-inf go through NaN (inf - floor(inf)) to 0. */
static inline int8_t qz_roundf_i8(float n) {
    float a = fabsf(n);
    float fl = floorf(a);
    float b = fl + floorf(2.0f * (a - fl));
    float s = n > 0.0f ? 1.0f : (n < 0.0f ? -1.0f : 0.0f);
    return (int8_t)qz_cvtt(s * b);
}

/* float32 -> float16 bits as numpy's astype(float16): F16C rounds like numpy for every
 * non-NaN value; a NaN keeps its top payload bits (F16C would quiet it). */
static inline uint16_t qz_f2h(float f) {
#if defined(__F16C__)
    if (f == f) return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
#endif
    return kern_f2h_soft(f);
}

/* Which NaN a numpy max/min reduction returns (numpy 2.x, AVX-512 dispatch, measured):
 * x[0] and the following whole vectors of 16 values are reduced with SIMD, which yields the
 * default NaN 0x7fc00000 for any NaN; the last 15 values (n a multiple of 16) are reduced
 * one by one, keeping the first NaN met with its bits. A NaN of the SIMD part wins. */
static inline float qz_reduce_nan(const float * x, int n, int absolute) {
    const int tail = 1 + 16 * ((n - 1) / 16);
    for (int j = 0; j < tail; ++j) if (x[j] != x[j]) return kern_bits_f32(0x7fc00000u);
    for (int j = tail; j < n; ++j) if (x[j] != x[j]) return absolute ? fabsf(x[j]) : x[j];
    return x[0];
}

/* np.max(abs(x)) over n values, NaN propagating as numpy's reduction does. */
static inline float qz_absmax(const float * x, int n) {
    float m = 0.0f;
    int nan = 0;
    for (int j = 0; j < n; ++j) {
        float a = fabsf(x[j]);
        nan |= a != a;
        m = a > m ? a : m;
    }
    return nan ? qz_reduce_nan(x, n, 1) : m;
}

/* x[argmax(abs(x))]: the first largest magnitude, or the first NaN. */
static inline float qz_signed_absmax(const float * x, int n) {
    float m = 0.0f;
    int nan = 0;
    for (int j = 0; j < n; ++j) {
        float a = fabsf(x[j]);
        nan |= a != a;
        m = a > m ? a : m;
    }
    for (int j = 0; j < n; ++j) {
        float a = fabsf(x[j]);
        if (nan ? a != a : a == m) return x[j];
    }
    return x[0];
}

/* np.min or np.max of n values (n a multiple of 16) in numpy's own evaluation order, for
 * the cases where the order shows: the sign of a zero result (minps/maxps return their
 * second operand on equal values) and which NaN comes out. numpy 2.x's AVX-512 reduce loop
 * (measured): 16 accumulator lanes start as x[0] and take whole vectors of 16 from x[1]
 * (op(acc, v): a tie keeps v); a NaN lane then gives the default NaN, else the lanes fold
 * 16 -> 8 -> 4 (a tie keeps the lower half), 4 -> 2 -> 1 (a tie keeps the upper one); the
 * last 15 values fold one by one (a tie takes the new value; the first NaN stays). */
static inline float qz_np_reduce(const float * x, int n, int is_max) {
#define QZ_WINS(a, b) (is_max ? (a) > (b) : (a) < (b))     /* a strictly better than b */
    float acc[16];
    const float x0 = x[0];
    for (int i = 0; i < 16; ++i) acc[i] = x0;
    const int nv = (n - 1) / 16;
    for (int v = 0; v < nv; ++v)
        for (int i = 0; i < 16; ++i) {
            const float b = x[1 + 16 * v + i];
            if (acc[i] == acc[i]) acc[i] = QZ_WINS(acc[i], b) ? acc[i] : b;
        }
    float r;
    int nan = 0;
    for (int i = 0; i < 16; ++i) nan |= acc[i] != acc[i];
    if (nan) {
        r = kern_bits_f32(0x7fc00000u);
    } else {
        for (int i = 0; i < 8; ++i) acc[i] = QZ_WINS(acc[i + 8], acc[i]) ? acc[i + 8] : acc[i];
        for (int i = 0; i < 4; ++i) acc[i] = QZ_WINS(acc[i + 4], acc[i]) ? acc[i + 4] : acc[i];
        for (int i = 0; i < 2; ++i) acc[i] = QZ_WINS(acc[i], acc[i + 2]) ? acc[i] : acc[i + 2];
        r = QZ_WINS(acc[0], acc[1]) ? acc[0] : acc[1];
    }
    for (int j = 1 + 16 * nv; j < n; ++j) {
        const float v = x[j];
        r = (QZ_WINS(r, v) || r != r) ? r : v;
    }
    return r;
#undef QZ_WINS
}

/* np.max / np.min: the plain loop, redone in numpy's order when the result is a zero or
 * a NaN (the only results whose bits depend on the order). */
static inline void qz_minmax(const float * x, int n, float * pmin, float * pmax) {
    float lo = x[0], hi = x[0];
    int nan = 0;
    for (int j = 0; j < n; ++j) {
        float v = x[j];
        nan |= v != v;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    if (nan || lo == 0.0f) lo = qz_np_reduce(x, n, 0);
    if (nan || hi == 0.0f) hi = qz_np_reduce(x, n, 1);
    *pmin = lo;
    *pmax = hi;
}

/* np.where(d == 0, 0, 1 / d) */
static inline float qz_inv(float d) { return d == 0.0f ? 0.0f : 1.0f / d; }

/* ------------------------------------------------------------ gguf-py types */

/* ------------------------------------------------------------ AVX2 fast paths
 * Taken for blocks whose values are all finite and whose scale d is 0 or a normal float:
 * then every x*id lies within the quant range and the exact emulation above reduces to
 * plain SIMD arithmetic with the same float32 operations (same bits). Other blocks (NaN,
 * inf, subnormal scales) take the scalar path. */
#if defined(__AVX2__) && defined(__F16C__)
#define QZ_AVX2 1
/* lanes of |x| over 32 values, and whether any value is NaN or infinite */
static inline __m256 qz_absmax32_avx2(const float * x, int * nonfinite) {
    const __m256 signbit = _mm256_set1_ps(-0.0f);
    const __m256 big = _mm256_set1_ps(3.40282347e38f);
    __m256 a0 = _mm256_andnot_ps(signbit, _mm256_loadu_ps(x));
    __m256 a1 = _mm256_andnot_ps(signbit, _mm256_loadu_ps(x + 8));
    __m256 a2 = _mm256_andnot_ps(signbit, _mm256_loadu_ps(x + 16));
    __m256 a3 = _mm256_andnot_ps(signbit, _mm256_loadu_ps(x + 24));
    __m256 bad = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(a0, big, _CMP_NLE_UQ),
                                           _mm256_cmp_ps(a1, big, _CMP_NLE_UQ)),
                              _mm256_or_ps(_mm256_cmp_ps(a2, big, _CMP_NLE_UQ),
                                           _mm256_cmp_ps(a3, big, _CMP_NLE_UQ)));
    *nonfinite = _mm256_movemask_ps(bad);
    __m256 m = _mm256_max_ps(_mm256_max_ps(a0, a1), _mm256_max_ps(a2, a3));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    return _mm256_set1_ps(_mm_cvtss_f32(h));
}

/* 32 int32 lanes (4 vectors) -> 32 bytes in order (values already within int8/uint8) */
static inline __m256i qz_pack32_avx2(__m256i i0, __m256i i1, __m256i i2, __m256i i3) {
    __m256i p01 = _mm256_packs_epi32(i0, i1);
    __m256i p23 = _mm256_packs_epi32(i2, i3);
    __m256i p = _mm256_packs_epi16(p01, p23);
    return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* round half away from zero of |v| < 2^23, as floor/compare arithmetic (exact) */
static inline __m256i qz_roundaway_avx2(__m256 v) {
    const __m256 signbit = _mm256_set1_ps(-0.0f);
    __m256 a = _mm256_andnot_ps(signbit, v);
    __m256 t = _mm256_round_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m256 up = _mm256_cmp_ps(_mm256_sub_ps(a, t), _mm256_set1_ps(0.5f), _CMP_GE_OQ);
    __m256 b = _mm256_add_ps(t, _mm256_and_ps(up, _mm256_set1_ps(1.0f)));
    return _mm256_cvttps_epi32(_mm256_or_ps(b, _mm256_and_ps(v, signbit)));
}

static inline int qz_q8_0_block_avx2(const float * x, block_q8_0 * y) {
    int nonfinite;
    __m256 am = qz_absmax32_avx2(x, &nonfinite);
    const float amax = _mm_cvtss_f32(_mm256_castps256_ps128(am));
    if (nonfinite || (amax != 0.0f && amax < 127.0f * 1.17549435e-38f)) return 0;
    const float d = amax / 127.0f;
    const __m256 id = _mm256_set1_ps(qz_inv(d));
    __m256i i0 = qz_roundaway_avx2(_mm256_mul_ps(_mm256_loadu_ps(x), id));
    __m256i i1 = qz_roundaway_avx2(_mm256_mul_ps(_mm256_loadu_ps(x + 8), id));
    __m256i i2 = qz_roundaway_avx2(_mm256_mul_ps(_mm256_loadu_ps(x + 16), id));
    __m256i i3 = qz_roundaway_avx2(_mm256_mul_ps(_mm256_loadu_ps(x + 24), id));
    _mm256_storeu_si256((__m256i *)y->qs, qz_pack32_avx2(i0, i1, i2, i3));
    y->d = (uint16_t)_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
    return 1;
}

/* Q4_0/Q5_0 quants: min(trunc(x*id + offset), qmax) as 32 bytes, d from x[argmax|x|] */
static inline int qz_sym_block_avx2(const float * x, float div, float offset, int qmax,
                                    float * pd, __m256i * q) {
    int nonfinite;
    __m256 am = qz_absmax32_avx2(x, &nonfinite);
    const float amax = _mm_cvtss_f32(_mm256_castps256_ps128(am));
    if (nonfinite || (amax != 0.0f && amax < -div * 1.17549435e-38f)) return 0;
    const __m256 signbit = _mm256_set1_ps(-0.0f);
    uint32_t hit = 0;
    for (int c = 3; c >= 0; --c) {
        __m256 a = _mm256_andnot_ps(signbit, _mm256_loadu_ps(x + 8 * c));
        hit = (hit << 8) | (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(a, am, _CMP_EQ_OQ));
    }
    const float d = x[__builtin_ctz(hit)] / div;
    const __m256 id = _mm256_set1_ps(qz_inv(d));
    const __m256 off = _mm256_set1_ps(offset);
    const __m256i qm = _mm256_set1_epi32(qmax);
    __m256i i[4];
    for (int c = 0; c < 4; ++c) {
        __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * c), id), off);
        i[c] = _mm256_min_epi32(_mm256_cvttps_epi32(v), qm);
    }
    *q = qz_pack32_avx2(i[0], i[1], i[2], i[3]);
    *pd = d;
    return 1;
}
#else
#define QZ_AVX2 0
#endif

/* The same fast paths with AVX-512 (two 16-lane vectors per block of 32). */
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__F16C__)
#define QZ_AVX512 1
static inline int qz_absmax32_avx512(const float * x, __m512 * x0, __m512 * x1, float * amax) {
    const __m512 big = _mm512_set1_ps(3.40282347e38f);
    *x0 = _mm512_loadu_ps(x);
    *x1 = _mm512_loadu_ps(x + 16);
    __m512 a0 = _mm512_abs_ps(*x0), a1 = _mm512_abs_ps(*x1);
    __mmask16 bad = _mm512_cmp_ps_mask(a0, big, _CMP_NLE_UQ) | _mm512_cmp_ps_mask(a1, big, _CMP_NLE_UQ);
    *amax = _mm512_reduce_max_ps(_mm512_max_ps(a0, a1));
    return bad == 0;
}

static inline __m512i qz_roundaway_avx512(__m512 v) {
    __m512 a = _mm512_abs_ps(v);
    __m512 t = _mm512_roundscale_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __mmask16 up = _mm512_cmp_ps_mask(_mm512_sub_ps(a, t), _mm512_set1_ps(0.5f), _CMP_GE_OQ);
    __m512 b = _mm512_mask_add_ps(t, up, t, _mm512_set1_ps(1.0f));
    __m512 sgn = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v),
                                                     _mm512_set1_epi32((int)0x80000000u)));
    return _mm512_cvttps_epi32(_mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(b),
                                                                   _mm512_castps_si512(sgn))));
}

static inline int qz_q8_0_block_avx512(const float * x, block_q8_0 * y) {
    __m512 x0, x1;
    float amax;
    if (!qz_absmax32_avx512(x, &x0, &x1, &amax)) return 0;
    if (amax != 0.0f && amax < 127.0f * 1.17549435e-38f) return 0;
    const float d = amax / 127.0f;
    const __m512 id = _mm512_set1_ps(qz_inv(d));
    __m128i q0 = _mm512_cvtepi32_epi8(qz_roundaway_avx512(_mm512_mul_ps(x0, id)));
    __m128i q1 = _mm512_cvtepi32_epi8(qz_roundaway_avx512(_mm512_mul_ps(x1, id)));
    _mm_storeu_si128((__m128i *)y->qs, q0);
    _mm_storeu_si128((__m128i *)(y->qs + 16), q1);
    y->d = (uint16_t)_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
    return 1;
}

/* Q4_0/Q5_0 quants as two 16-byte halves (values 0-15 and 16-31) */
static inline int qz_sym_block_avx512(const float * x, float div, float offset, int qmax,
                                      float * pd, __m128i * lo, __m128i * hi) {
    __m512 x0, x1;
    float amax;
    if (!qz_absmax32_avx512(x, &x0, &x1, &amax)) return 0;
    if (amax != 0.0f && amax < -div * 1.17549435e-38f) return 0;
    const __m512 am = _mm512_set1_ps(amax);
    uint32_t hit = (uint32_t)_mm512_cmp_ps_mask(_mm512_abs_ps(x0), am, _CMP_EQ_OQ) |
                   ((uint32_t)_mm512_cmp_ps_mask(_mm512_abs_ps(x1), am, _CMP_EQ_OQ) << 16);
    const float d = x[__builtin_ctz(hit)] / div;
    const __m512 id = _mm512_set1_ps(qz_inv(d));
    const __m512 off = _mm512_set1_ps(offset);
    const __m512i qm = _mm512_set1_epi32(qmax);
    *lo = _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(x0, id), off)), qm));
    *hi = _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(x1, id), off)), qm));
    *pd = d;
    return 1;
}

/* ---- 16 blocks at a time (Q8_0, Q4_0): the per-block horizontal max becomes one
 * transposing reduction of 16 vectors, and the scale's two divisions one vector division
 * each, which is where the one-block path spent most of its time. */

/* lane b of the result = the largest (unsigned) lane of m[b] */
static inline __m512i qz_hmax16_epu32(__m512i * m) {
    __m512i n[8], o[4], p[2];
    for (int k = 0; k < 8; ++k)      /* 256-bit halves: block 2k below, 2k+1 above */
        n[k] = _mm512_max_epu32(_mm512_shuffle_i32x4(m[2 * k], m[2 * k + 1], 0x44),
                                _mm512_shuffle_i32x4(m[2 * k], m[2 * k + 1], 0xee));
    for (int k = 0; k < 4; ++k)      /* 128-bit quarters: blocks 4k .. 4k+3 */
        o[k] = _mm512_max_epu32(_mm512_shuffle_i32x4(n[2 * k], n[2 * k + 1], 0x88),
                                _mm512_shuffle_i32x4(n[2 * k], n[2 * k + 1], 0xdd));
    for (int k = 0; k < 2; ++k)      /* quarter j: lanes 0-1 block 8k+j, 2-3 block 8k+4+j */
        p[k] = _mm512_max_epu32(_mm512_unpacklo_epi64(o[2 * k], o[2 * k + 1]),
                                _mm512_unpackhi_epi64(o[2 * k], o[2 * k + 1]));
    const __m512i v = _mm512_unpacklo_epi32(p[0], p[1]), w = _mm512_unpackhi_epi32(p[0], p[1]);
    const __m512i r = _mm512_max_epu32(_mm512_unpacklo_epi64(v, w), _mm512_unpackhi_epi64(v, w));
    /* quarter j now holds blocks j, 8+j, 4+j, 12+j */
    return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 2, 6, 10, 14,
                                                      1, 5, 9, 13, 3, 7, 11, 15), r);
}

/* the 16 blocks' max |x| as float bits (NaN and inf compare above every finite value) */
static inline __m512i qz_absmax16_bits(const float * x) {
    const __m512i abs = _mm512_set1_epi32(0x7fffffff);
    __m512i m[16];
    for (int b = 0; b < 16; ++b)
        m[b] = _mm512_max_epu32(_mm512_and_si512(_mm512_loadu_si512(x + 32 * b), abs),
                                _mm512_and_si512(_mm512_loadu_si512(x + 32 * b + 16), abs));
    return qz_hmax16_epu32(m);
}

/* blocks the vector path leaves to the exact scalar one: a NaN or inf value, or a scale
 * (amax / |div|) below the smallest normal float */
static inline __mmask16 qz_slow16(__m512i mbits, float div_abs) {
    const __m512 amax = _mm512_castsi512_ps(mbits);
    return _mm512_cmpge_epu32_mask(mbits, _mm512_set1_epi32(0x7f800000)) |
           (_mm512_cmp_ps_mask(amax, _mm512_setzero_ps(), _CMP_NEQ_OQ) &
            _mm512_cmp_ps_mask(amax, _mm512_set1_ps(div_abs * 1.17549435e-38f), _CMP_LT_OQ));
}

/* np.where(d == 0, 0, 1 / d) */
static inline __m512 qz_inv16(__m512 d) {
    return _mm512_maskz_div_ps(_mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_NEQ_OQ),
                               _mm512_set1_ps(1.0f), d);
}

/* np_roundf(v) (half away from zero) for |v| < 2^23, as int32: v + copysign(0.5, v)
 * rounded toward zero, then truncated. For v >= 0 that is floor(RD(v + 0.5)), and
 * floor(RD(y)) = floor(y) because floor(y) is a float32 (and RD(y) lies between it and
 * y); negative v mirror it. np_roundf's floor(|v|) + floor(2*frac) is floor(|v| + 0.5). */
static inline __m512i qz_roundaway16(__m512 v) {
    const __m512 h = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
        _mm512_castps_si512(v), _mm512_set1_epi32(0x3f000000), _mm512_set1_epi32((int)0x80000000u),
        0xec));                                   /* (v & signbit) | 0.5 */
    return _mm512_cvttps_epi32(_mm512_add_round_ps(v, h, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
}

static inline void qz_q8_0_scalar_block(const float * x, block_q8_0 * y);

/* Q8_0 of 16 blocks (512 values) */
static inline void qz_q8_0_x16_avx512(const float * x, block_q8_0 * y) {
    const __m512i mbits = qz_absmax16_bits(x);
    const __mmask16 slow = qz_slow16(mbits, 127.0f);
    const __m512 d = _mm512_div_ps(_mm512_castsi512_ps(mbits), _mm512_set1_ps(127.0f));
    float idv[16];
    uint16_t dh[16];
    _mm512_storeu_ps(idv, qz_inv16(d));
    _mm256_storeu_si256((__m256i *)dh, _mm512_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT));
    for (int b = 0; b < 16; ++b) {
        const float * xb = x + 32 * b;
        if ((slow >> b) & 1) {
            qz_q8_0_scalar_block(xb, &y[b]);
            continue;
        }
        const __m512 id = _mm512_set1_ps(idv[b]);
        const __m128i q0 = _mm512_cvtepi32_epi8(qz_roundaway16(_mm512_mul_ps(_mm512_loadu_ps(xb), id)));
        const __m128i q1 = _mm512_cvtepi32_epi8(qz_roundaway16(_mm512_mul_ps(_mm512_loadu_ps(xb + 16), id)));
        y[b].d = dh[b];
        _mm_storeu_si128((__m128i *)y[b].qs, q0);
        _mm_storeu_si128((__m128i *)(y[b].qs + 16), q1);
    }
}

/* Q4_0 / Q5_0's d = x[argmax |x|] / div (div < 0) for 16 blocks, and which need the scalar
 * path; the quants as Q4_0 (qz_q4_0_x16_avx512) */
static inline __mmask16 qz_sym16_scale(const float * x, float div, __m512 * pd) {
    const __m512i mbits = qz_absmax16_bits(x);
    const __mmask16 slow = qz_slow16(mbits, -div);
    uint32_t mv[16];
    float sv[16];
    _mm512_storeu_si512(mv, mbits);
    const __m512i abs = _mm512_set1_epi32(0x7fffffff);
    for (int b = 0; b < 16; ++b) {
        const float * xb = x + 32 * b;
        if ((slow >> b) & 1) {
            sv[b] = 1.0f;
            continue;
        }
        const __m512i am = _mm512_set1_epi32((int)mv[b]);
        const uint32_t hit =
            (uint32_t)_mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_loadu_si512(xb), abs), am) |
            ((uint32_t)_mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_loadu_si512(xb + 16), abs), am) << 16);
        sv[b] = xb[__builtin_ctz(hit)];         /* the first value of largest magnitude */
    }
    *pd = _mm512_div_ps(_mm512_loadu_ps(sv), _mm512_set1_ps(div));
    return slow;
}

static inline void qz_q4_0_scalar_block(const float * x, block_q4_0 * y);

static inline void qz_q4_0_x16_avx512(const float * x, block_q4_0 * y) {
    __m512 d;
    const __mmask16 slow = qz_sym16_scale(x, -8.0f, &d);
    float idv[16];
    uint16_t dh[16];
    _mm512_storeu_ps(idv, qz_inv16(d));
    _mm256_storeu_si256((__m256i *)dh, _mm512_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT));
    const __m512 off = _mm512_set1_ps(8.5f);
    const __m512i qm = _mm512_set1_epi32(15);
    for (int b = 0; b < 16; ++b) {
        const float * xb = x + 32 * b;
        if ((slow >> b) & 1) {
            qz_q4_0_scalar_block(xb, &y[b]);
            continue;
        }
        const __m512 id = _mm512_set1_ps(idv[b]);
        const __m128i lo = _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_cvttps_epi32(
            _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(xb), id), off)), qm));
        const __m128i hi = _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_cvttps_epi32(
            _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(xb + 16), id), off)), qm));
        y[b].d = dh[b];
        _mm_storeu_si128((__m128i *)y[b].qs, _mm_or_si128(lo, _mm_slli_epi16(hi, 4)));
    }
}
#else
#define QZ_AVX512 0
#endif

/* one Q8_0 block through the exact scalar emulation (any values) */
static inline void qz_q8_0_scalar_block(const float * x, block_q8_0 * y) {
    const float d = qz_absmax(x, QK8_0) / 127.0f;
    const float id = qz_inv(d);
    int8_t q[QK8_0];
    for (int j = 0; j < QK8_0; ++j) q[j] = qz_roundf_i8(x[j] * id);
    y->d = qz_f2h(d);
    memcpy(y->qs, q, QK8_0);
}

static inline void quantize_row_q8_0(const float * x, void * vy, int64_t k) {
    block_q8_0 * y = (block_q8_0 *)vy;
    const int64_t nb = k / QK8_0;
    int64_t i = 0;
#if QZ_AVX512
    for (; i + 16 <= nb; i += 16, x += 16 * QK8_0)
        qz_q8_0_x16_avx512(x, &y[i]);
#endif
    for (; i < nb; ++i, x += QK8_0) {
#if QZ_AVX512
        if (qz_q8_0_block_avx512(x, &y[i])) continue;
#elif QZ_AVX2
        if (qz_q8_0_block_avx2(x, &y[i])) continue;
#endif
        qz_q8_0_scalar_block(x, &y[i]);
    }
}

/* Q4_0 and Q5_0: d = x[argmax|x|] / -(2^(bits-1)), q = trunc(x/d + offset), clipped. */
static inline void qz_q_sym(const float * x, float div, float offset, uint8_t qmax,
                            uint8_t * q, float * pd) {
    const float d = qz_signed_absmax(x, 32) / div;
    const float id = qz_inv(d);
    for (int j = 0; j < 32; ++j) {
        uint8_t v = (uint8_t)qz_cvtt(truncf(x[j] * id + offset));
        q[j] = v < qmax ? v : qmax;
    }
    *pd = d;
}

/* Q4_1 and Q5_1: d = (max - min) / qmax, q = trunc((x - min)/d + 0.5), clipped. */
static inline void qz_q_affine(const float * x, float div, uint8_t qmax,
                               uint8_t * q, float * pd, float * pm) {
    float lo, hi;
    qz_minmax(x, 32, &lo, &hi);
    const float d = (hi - lo) / div;
    const float id = qz_inv(d);
    for (int j = 0; j < 32; ++j) {
        uint8_t v = (uint8_t)qz_cvtt(truncf((x[j] - lo) * id + 0.5f));
        q[j] = v < qmax ? v : qmax;
    }
    *pd = d;
    *pm = lo;
}

static inline void qz_pack_nibbles(const uint8_t * q, uint8_t * qs) {
    for (int j = 0; j < 16; ++j) qs[j] = (uint8_t)((q[j] & 0x0f) | (q[j + 16] << 4));
}

/* bit j of the little-endian uint32 = bit 4 of q[j] (np.packbits(..., bitorder="little")) */
static inline void qz_pack_high(const uint8_t * q, uint8_t * qh) {
    uint32_t h = 0;
    for (int j = 0; j < 32; ++j) h |= (uint32_t)((q[j] >> 4) & 1u) << j;
    qh[0] = (uint8_t)h; qh[1] = (uint8_t)(h >> 8); qh[2] = (uint8_t)(h >> 16); qh[3] = (uint8_t)(h >> 24);
}

/* one Q4_0 block through the exact scalar emulation (any values) */
static inline void qz_q4_0_scalar_block(const float * x, block_q4_0 * y) {
    uint8_t q[32];
    float d;
    qz_q_sym(x, -8.0f, 8.5f, 15, q, &d);
    y->d = qz_f2h(d);
    qz_pack_nibbles(q, y->qs);
}

static inline void quantize_row_q4_0(const float * x, void * vy, int64_t k) {
    block_q4_0 * y = (block_q4_0 *)vy;
    const int64_t nb = k / QK4_0;
    float d;
    int64_t i = 0;
#if QZ_AVX512
    for (; i + 16 <= nb; i += 16, x += 16 * QK4_0)
        qz_q4_0_x16_avx512(x, &y[i]);
#endif
    for (; i < nb; ++i, x += QK4_0) {
#if QZ_AVX512
        __m128i lo, hi;
        if (qz_sym_block_avx512(x, -8.0f, 8.5f, 15, &d, &lo, &hi)) {
            _mm_storeu_si128((__m128i *)y[i].qs, _mm_or_si128(lo, _mm_slli_epi16(hi, 4)));
            y[i].d = (uint16_t)_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
            continue;
        }
#elif QZ_AVX2
        __m256i qv;
        if (qz_sym_block_avx2(x, -8.0f, 8.5f, 15, &d, &qv)) {
            /* byte j | byte j+16 << 4 */
            __m128i lo = _mm256_castsi256_si128(qv), hi = _mm256_extracti128_si256(qv, 1);
            _mm_storeu_si128((__m128i *)y[i].qs, _mm_or_si128(lo, _mm_slli_epi16(hi, 4)));
            y[i].d = (uint16_t)_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
            continue;
        }
#endif
        qz_q4_0_scalar_block(x, &y[i]);
    }
    (void)d;
}

static inline void quantize_row_q5_0(const float * x, void * vy, int64_t k) {
    block_q5_0 * y = (block_q5_0 *)vy;
    const int64_t nb = k / QK5_0;
    uint8_t q[32];
    float d;
    for (int64_t i = 0; i < nb; ++i, x += QK5_0) {
#if QZ_AVX2
        __m256i qv;
        if (qz_sym_block_avx2(x, -16.0f, 16.5f, 31, &d, &qv)) {
            uint32_t h = (uint32_t)_mm256_movemask_epi8(_mm256_slli_epi16(qv, 3));  /* bit 4 */
            memcpy(y[i].qh, &h, 4);
            __m128i lo = _mm256_castsi256_si128(qv), hi = _mm256_extracti128_si256(qv, 1);
            const __m128i m4 = _mm_set1_epi8(0x0f);
            _mm_storeu_si128((__m128i *)y[i].qs,
                             _mm_or_si128(_mm_and_si128(lo, m4), _mm_slli_epi16(_mm_and_si128(hi, m4), 4)));
            y[i].d = (uint16_t)_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT);
            continue;
        }
#endif
        qz_q_sym(x, -16.0f, 16.5f, 31, q, &d);
        y[i].d = qz_f2h(d);
        qz_pack_high(q, y[i].qh);
        qz_pack_nibbles(q, y[i].qs);
    }
}

static inline void quantize_row_q4_1(const float * x, void * vy, int64_t k) {
    block_q4_1 * y = (block_q4_1 *)vy;
    const int64_t nb = k / QK4_1;
    uint8_t q[32];
    float d, m;
    for (int64_t i = 0; i < nb; ++i, x += QK4_1) {
        qz_q_affine(x, 15.0f, 15, q, &d, &m);
        y[i].d = qz_f2h(d);
        y[i].m = qz_f2h(m);
        qz_pack_nibbles(q, y[i].qs);
    }
}

static inline void quantize_row_q5_1(const float * x, void * vy, int64_t k) {
    block_q5_1 * y = (block_q5_1 *)vy;
    const int64_t nb = k / QK5_1;
    uint8_t q[32];
    float d, m;
    for (int64_t i = 0; i < nb; ++i, x += QK5_1) {
        qz_q_affine(x, 31.0f, 31, q, &d, &m);
        y[i].d = qz_f2h(d);
        y[i].m = qz_f2h(m);
        qz_pack_high(q, y[i].qh);
        qz_pack_nibbles(q, y[i].qs);
    }
}

/* BF16 (gguf-py: ggml_compute_fp32_to_bf16): NaN -> quiet NaN of the same sign and top
 * payload, everything else rounded to nearest even (overflow to inf). */
static inline void quantize_row_bf16(const float * x, void * vy, int64_t k) {
    uint16_t * y = (uint16_t *)vy;
    for (int64_t i = 0; i < k; ++i) {
        uint32_t n;
        memcpy(&n, &x[i], 4);
        if ((n & 0x7fffffffu) > 0x7f800000u) n = (n & 0xffff0000u) | 0x00400000u;
        y[i] = (uint16_t)((n + 0x7fffu + ((n >> 16) & 1u)) >> 16);
    }
}

/* Ternary: q = round(x / absmax) + 1 in {0, 1, 2} (numpy int8 wrap-around kept for the
 * values a NaN or infinite scale produces). */
static inline float qz_ternary(const float * x, uint8_t * q) {
    const float d = qz_absmax(x, QK_K);
    const float id = qz_inv(d);
    for (int j = 0; j < QK_K; ++j) q[j] = (uint8_t)(int8_t)(qz_roundf_i8(x[j] * id) + 1);
    return d;
}

static inline void quantize_row_tq2_0(const float * x, void * vy, int64_t k) {
    block_tq2_0 * y = (block_tq2_0 *)vy;
    const int64_t nb = k / QK_K;
    uint8_t q[QK_K];
    for (int64_t i = 0; i < nb; ++i, x += QK_K) {
        const float d = qz_ternary(x, q);
        for (int g = 0; g < QK_K / 128; ++g)
            for (int j = 0; j < 32; ++j) {
                const uint8_t * p = q + 128 * g + j;
                y[i].qs[32 * g + j] = (uint8_t)(p[0] | (uint8_t)(p[32] << 2) |
                                                (uint8_t)(p[64] << 4) | (uint8_t)(p[96] << 6));
            }
        y[i].d = qz_f2h(d);
    }
}

/* TQ1_0: five base-3 digits per byte, stored as ceil(v * 256 / 243) so that a multiply by
 * 3 and a shift recover each digit. Products wrap at 8 bits and the scaled sum at 16 bits,
 * as gguf-py's uint8/uint16 arithmetic does. */
static inline uint8_t qz_tq1_byte(const uint8_t * p, int stride, int ndig) {
    static const uint8_t pow3[5] = {81, 27, 9, 3, 1};
    uint64_t s = 0;
    for (int n = 0; n < ndig; ++n) s += (uint8_t)(p[n * stride] * pow3[n]);
    uint16_t t = (uint16_t)s;
    t = (uint16_t)(t * 256u);
    t = (uint16_t)(t + 242u);
    return (uint8_t)(t / 243u);
}

static inline void quantize_row_tq1_0(const float * x, void * vy, int64_t k) {
    block_tq1_0 * y = (block_tq1_0 *)vy;
    const int64_t nb = k / QK_K;
    uint8_t q[QK_K];
    for (int64_t i = 0; i < nb; ++i, x += QK_K) {
        const float d = qz_ternary(x, q);
        for (int j = 0; j < 32; ++j) y[i].qs[j] = qz_tq1_byte(q + j, 32, 5);
        for (int j = 0; j < 16; ++j) y[i].qs[32 + j] = qz_tq1_byte(q + 160 + j, 16, 5);
        for (int j = 0; j < 4; ++j) y[i].qh[j] = qz_tq1_byte(q + 240 + j, 4, 4);
        y[i].d = qz_f2h(d);
    }
}

/* MXFP4: shared exponent e = floor(log2(absmax)) - 2 + 127 (numpy's float32 log2, whose
 * floor equals that of the correctly rounded value for every positive float32: checked
 * exhaustively on numpy 2.4), cast like numpy (a tiny block gives a negative e that wraps
 * modulo 256); each value takes the nearest of the 16 E2M1 codes scaled by the half-scale
 * of e, the first one on ties and the first NaN error if any. */
static inline float qz_e8m0_half(uint8_t e) {
    uint32_t bits = e < 2 ? (0x00200000u << e) : ((uint32_t)(uint8_t)(e - 1) << 23);
    return kern_bits_f32(bits);
}

static inline void quantize_row_mxfp4(const float * x, void * vy, int64_t k) {
    block_mxfp4 * y = (block_mxfp4 *)vy;
    const int64_t nb = k / QK_MXFP4;
    float kv[16];
    for (int j = 0; j < 16; ++j) kv[j] = (float)kvalues_mxfp4[j];
    for (int64_t i = 0; i < nb; ++i, x += QK_MXFP4) {
        const float amax = qz_absmax(x, QK_MXFP4);
        uint8_t e = 0;
        if (amax > 0.0f) {
            float ef = floorf((float)log2((double)amax));
            ef = ef - 2.0f;
            ef = ef + 127.0f;
            e = (uint8_t)qz_cvtt(ef);
        }
        const float d = qz_e8m0_half(e);
        uint8_t q[QK_MXFP4];
        for (int j = 0; j < QK_MXFP4; ++j) {
            int best = 0;
            float berr = fabsf(d * kv[0] - x[j]);
            if (berr == berr) {
                for (int c = 1; c < 16; ++c) {
                    float err = fabsf(d * kv[c] - x[j]);
                    if (err != err) { best = c; break; }
                    if (err < berr) { berr = err; best = c; }
                }
            }
            q[j] = (uint8_t)best;
        }
        y[i].e = e;
        qz_pack_nibbles(q, y[i].qs);
    }
}

/* ------------------------------------------------------------ activation formats (qmm) */

/* Q8_1 (ggml's quantize_row_q8_1_ref): Q8_0's scale and quants (equal to
 * quantize_row_q8_0 for finite data; a NaN counts only as ggml's MAX lets it) plus
 * s = d * sum(qs) as float16, d the float32 scale. */
static inline void quantize_row_q8_1(const float * x, void * vy, int64_t k) {
    block_q8_1 * y = (block_q8_1 *)vy;
    const int64_t nb = k / QK8_1;
    for (int64_t i = 0; i < nb; ++i, x += QK8_1) {
        float amax = 0.0f;                 /* ggml's MAX(amax, fabsf(v)), NaN rules and all */
        for (int j = 0; j < QK8_1; ++j) {
            const float a = fabsf(x[j]);
            amax = amax > a ? amax : a;
        }
        const float d = amax / 127.0f;
        const float id = qz_inv(d);
        int sum = 0;
        for (int j = 0; j < QK8_1; ++j) {
            const int8_t v = qz_roundf_i8(x[j] * id);
            y[i].qs[j] = v;
            sum += v;
        }
        y[i].d = qz_f2h(d);
        y[i].s = qz_f2h((float)sum * d);
    }
}

/* ggml's nearest_int: round to nearest even through the float32 mantissa (valid for
 * |v| <= 2^22; other values give ggml's own garbage, reproduced). */
static inline int qz_nearest_int(float v) {
    float t = v + 12582912.0f;
    int32_t i;
    memcpy(&i, &t, 4);
    return (i & 0x007fffff) - 0x00400000;
}

/* Q8_K (ggml's quantize_row_q8_K_ref): d = max / -127 as float32, q = nearest(x / d),
 * bsums = sums of 16 quants. */
static inline void quantize_row_q8_K(const float * x, void * vy, int64_t k) {
    block_q8_K * y = (block_q8_K *)vy;
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i, x += QK_K) {
        float max = 0.0f, amax = 0.0f;
        for (int j = 0; j < QK_K; ++j) {
            const float ax = fabsf(x[j]);
            if (ax > amax) { amax = ax; max = x[j]; }
        }
        if (amax == 0.0f) {
            memset(&y[i], 0, sizeof(block_q8_K));
            continue;
        }
        const float iscale = -127.0f / max;
        for (int j = 0; j < QK_K; ++j) {
            const int v = qz_nearest_int(iscale * x[j]);
            y[i].qs[j] = (int8_t)(v < 127 ? v : 127);
        }
        for (int g = 0; g < QK_K / 16; ++g) {
            int sum = 0;
            for (int j = 0; j < 16; ++j) sum += y[i].qs[16 * g + j];
            y[i].bsums[g] = (int16_t)sum;
        }
        y[i].d = 1.0f / iscale;
    }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

#include "quantize_k.h"

/* ------------------------------------------------------------ dispatch */

typedef void (*ggml_cy_quantize_fn)(const float * x, void * y, int64_t k);

/* The row quantizer of a type, or NULL when ggml_cy cannot quantize to it. */
static inline ggml_cy_quantize_fn ggml_cy_quantize_fn_of(int type) {
    switch (type) {
    case GGML_TYPE_Q4_0: return quantize_row_q4_0;
    case GGML_TYPE_Q4_1: return quantize_row_q4_1;
    case GGML_TYPE_Q5_0: return quantize_row_q5_0;
    case GGML_TYPE_Q5_1: return quantize_row_q5_1;
    case GGML_TYPE_Q8_0: return quantize_row_q8_0;
    case GGML_TYPE_Q8_1: return quantize_row_q8_1;
    case GGML_TYPE_Q8_K: return quantize_row_q8_K;
    case GGML_TYPE_BF16: return quantize_row_bf16;
    case GGML_TYPE_TQ1_0: return quantize_row_tq1_0;
    case GGML_TYPE_TQ2_0: return quantize_row_tq2_0;
    case GGML_TYPE_MXFP4: return quantize_row_mxfp4;
    case GGML_TYPE_Q2_K: return quantize_row_q2_K;
    case GGML_TYPE_Q3_K: return quantize_row_q3_K;
    case GGML_TYPE_Q4_K: return quantize_row_q4_K;
    case GGML_TYPE_Q5_K: return quantize_row_q5_K;
    case GGML_TYPE_Q6_K: return quantize_row_q6_K;
    default: return 0;
    }
}

#endif
