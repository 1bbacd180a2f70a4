/* Dequantization of ggml's quantized blocks to float32 (and float16 / bfloat16 from the
 * float32 result), bitwise equal to gguf-py's gguf.quants.dequantize.
 *
 * gguf-py computes in numpy float32, one rounding per numpy operation. Each kernel below
 * performs the same operations in the same order on the same float32 values (scales
 * converted from f16 exactly, integers converted exactly), and FMA contraction is switched
 * off for this file: a fused d*q+m would round once where numpy rounds twice. NaN, inf,
 * zero and subnormal scales then come out exactly as numpy's, since IEEE arithmetic on x86
 * (SSE/AVX, which numpy uses as well) is deterministic down to NaN payloads: a NaN operand
 * propagates quieted, and inf*0 gives the default NaN.
 *
 * Layout: gcy_dq_block_<type>(const block *, float * y) writes one block's values. The
 * driver gcy_dequant_rows() walks rows of blocks (row stride in bytes, so views with padded
 * rows work) in parallel over OpenMP threads, splitting the flat range of blocks evenly, and
 * writes float32 directly or converts through a small on-stack buffer.
 *
 * Field orders, value orders and formulas: ggml's ggml-common.h / ggml-quants.c
 * (dequantize_row_*) and gguf-py's quants.py; this is our own code. */
#ifndef GGML_CY_DEQUANT_H
#define GGML_CY_DEQUANT_H

#include <stdint.h>
#include <string.h>

#include "quant_blocks.h"
#include "quant_tables.h"
#include "omp_shim.h"

#if defined(__F16C__) || defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

/* ------------------------------------------------------------------ scalar helpers */
static inline float gcy_dq_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t gcy_dq_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* binary16 -> binary32, exact; a NaN keeps sign and payload and is made quiet (as F16C's
 * vcvtph2ps does, so both paths agree) */
static inline float gcy_dq_h2f(uint16_t h) {
#if defined(__F16C__)
    return _cvtsh_ss(h);
#else
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
    if (exp == 0x1f)
        return gcy_dq_bits_f32(sign | 0x7f800000u | (man << 13) | (man ? 0x00400000u : 0u));
    if (exp == 0) {
        if (man == 0)
            return gcy_dq_bits_f32(sign);
        /* subnormal: normalize */
        int e = -1;
        do { man <<= 1; e++; } while (!(man & 0x400u));
        return gcy_dq_bits_f32(sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13));
    }
    return gcy_dq_bits_f32(sign | ((exp + 112) << 23) | (man << 13));
#endif
}

static inline uint16_t gcy_dq_rd16(const void * p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t gcy_dq_rd32(const void * p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t gcy_dq_rd64(const void * p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* float32 -> binary16 the way numpy's astype(float16) rounds: nearest even, overflow to
 * inf, NaN kept quiet with the top payload bits. */
static inline uint16_t gcy_dq_f2h(float f) {
    uint32_t u = gcy_dq_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) {
        if (a == 0x7f800000u)
            return sign | 0x7c00u;
        uint16_t r = (uint16_t)(0x7c00u + ((a & 0x7fffffu) >> 13));
        if (r == 0x7c00u)
            r++;
        return sign | r;
    }
    if (a >= 0x477ff000u)            /* rounds to >= 65520: inf */
        return sign | 0x7c00u;
    if (a < 0x38800000u) {           /* below the smallest normal half: subnormal or 0 */
        if (a < 0x33000000u)         /* < 2^-25: rounds to 0 (2^-25 itself is a tie to 0) */
            return sign;
        uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 113 - e + 13;      /* value = m * 2^(e-150); half unit 2^-24 */
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
        return sign | (uint16_t)q;
    }
    uint32_t r = a - 0x38000000u;    /* rebias the exponent: 127 -> 15 */
    uint32_t q = r >> 13, rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1)))
        q++;
    return sign | (uint16_t)q;
}

/* float32 -> bfloat16 bits: ggml_cy.float32_to_bfloat16's rule (nearest even, NaN made
 * quiet keeping sign and top payload). */
static inline uint16_t gcy_dq_f2bf(float f) {
    uint32_t u = gcy_dq_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* a + m with x86's NaN rule made explicit: when both are NaN, numpy's (d*q) + m returns the
 * left operand's NaN (addss/addps keep the first source's payload), but addition is
 * commutative to the compiler, which may emit m + a (the baseline x86-64 build did, giving
 * m's payload). Selecting a when it is NaN fixes the order; the select vectorizes to a blend. */
static inline float gcy_dq_add_lnan(float a, float m) { return a != a ? a : a + m; }

/* ------------------------------------------------------------------ 32-value blocks */
static inline void gcy_dq_block_q4_0(const block_q4_0 * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    for (int j = 0; j < QK4_0 / 2; j++) {
        y[j] = d * (float)((int)(x->qs[j] & 0x0f) - 8);
        y[j + QK4_0 / 2] = d * (float)((int)(x->qs[j] >> 4) - 8);
    }
}

static inline void gcy_dq_block_q4_1(const block_q4_1 * x, float * y) {
    const float d = gcy_dq_h2f(x->d), m = gcy_dq_h2f(x->m);
    for (int j = 0; j < QK4_1 / 2; j++) {
        float a = d * (float)(x->qs[j] & 0x0f), b = d * (float)(x->qs[j] >> 4);
        y[j] = gcy_dq_add_lnan(a, m);
        y[j + QK4_1 / 2] = gcy_dq_add_lnan(b, m);
    }
}

static inline void gcy_dq_block_q5_0(const block_q5_0 * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    const uint32_t qh = gcy_dq_rd32(x->qh);
    for (int j = 0; j < QK5_0 / 2; j++) {
        int lo = (x->qs[j] & 0x0f) | (int)(((qh >> j) & 1u) << 4);
        int hi = (x->qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1u) << 4);
        y[j] = d * (float)(lo - 16);
        y[j + QK5_0 / 2] = d * (float)(hi - 16);
    }
}

static inline void gcy_dq_block_q5_1(const block_q5_1 * x, float * y) {
    const float d = gcy_dq_h2f(x->d), m = gcy_dq_h2f(x->m);
    const uint32_t qh = gcy_dq_rd32(x->qh);
    for (int j = 0; j < QK5_1 / 2; j++) {
        int lo = (x->qs[j] & 0x0f) | (int)(((qh >> j) & 1u) << 4);
        int hi = (x->qs[j] >> 4) | (int)(((qh >> (j + 16)) & 1u) << 4);
        float a = d * (float)lo, b = d * (float)hi;
        y[j] = gcy_dq_add_lnan(a, m);
        y[j + QK5_1 / 2] = gcy_dq_add_lnan(b, m);
    }
}

static inline void gcy_dq_block_q8_0(const block_q8_0 * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    for (int j = 0; j < QK8_0; j++)
        y[j] = (float)x->qs[j] * d;
}

static inline void gcy_dq_block_q8_1(const block_q8_1 * x, float * y) {
    const float d = gcy_dq_h2f(x->d);     /* s (d * sum) is not needed to dequantize */
    for (int j = 0; j < QK8_1; j++)
        y[j] = (float)x->qs[j] * d;
}

/* 32 values from 16 bytes of nibbles through a 16-entry int8 table: y[j] = d * kv[lo(q[j])],
 * y[16 + j] = d * kv[hi(q[j])]. The int8 -> float conversion is exact, so the SIMD path
 * (pshufb lookup) gives the scalar path's bits. */
static inline void gcy_dq_nl32(const int8_t * kv, const uint8_t * q, float d, float * y) {
#if defined(__AVX2__)
    const __m128i tab = _mm_loadu_si128((const __m128i *)kv);
    const __m128i qq = _mm_loadu_si128((const __m128i *)q);
    const __m128i m4 = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_shuffle_epi8(tab, _mm_and_si128(qq, m4));
    const __m128i hi = _mm_shuffle_epi8(tab, _mm_and_si128(_mm_srli_epi16(qq, 4), m4));
    const __m256 vd = _mm256_set1_ps(d);
    _mm256_storeu_ps(y + 0, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo))));
    _mm256_storeu_ps(y + 8, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)))));
    _mm256_storeu_ps(y + 16, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi))));
    _mm256_storeu_ps(y + 24, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)))));
#else
    for (int j = 0; j < 16; j++) {
        y[j] = d * (float)kv[q[j] & 0x0f];
        y[j + 16] = d * (float)kv[q[j] >> 4];
    }
#endif
}

static inline void gcy_dq_block_iq4_nl(const block_iq4_nl * x, float * y) {
    gcy_dq_nl32(kvalues_iq4nl, x->qs, gcy_dq_h2f(x->d), y);
}

/* E8M0 exponent -> float32 of 2^(e-127) / 2 (ggml_e8m0_to_fp32_half) */
static inline float gcy_dq_e8m0_half(uint8_t e) {
    return gcy_dq_bits_f32(e < 2 ? (0x00200000u << e) : ((uint32_t)(e - 1) << 23));
}

static inline void gcy_dq_block_mxfp4(const block_mxfp4 * x, float * y) {
    gcy_dq_nl32(kvalues_mxfp4, x->qs, gcy_dq_e8m0_half(x->e), y);
}

/* unsigned E4M3 scale (bias 7) -> float32, halved (the FP4 values are stored doubled);
 * 0 and 0x7f read as 0; the top bit is ignored (gguf-py's ue4m3_to_fp32). */
static inline float gcy_dq_ue4m3_half(uint8_t x) {
    if (x == 0 || x == 0x7f)
        return 0.0f;
    int exp = (x >> 3) & 0xf, man = x & 7;
    float v;
    if (exp == 0)
        v = (float)man * 0x1p-9f;
    else   /* (1 + man/8) * 2^(exp-7), exact */
        v = gcy_dq_bits_f32((uint32_t)(exp - 7 + 127) << 23) * (1.0f + (float)man / 8.0f);
    return v * 0.5f;
}

static inline void gcy_dq_block_nvfp4(const block_nvfp4 * x, float * y) {
    for (int s = 0; s < QK_NVFP4 / QK_NVFP4_SUB; s++) {
        const float d = gcy_dq_ue4m3_half(x->d[s]);
        const uint8_t * q = x->qs + s * (QK_NVFP4_SUB / 2);
        float * ys = y + s * QK_NVFP4_SUB;
        for (int j = 0; j < QK_NVFP4_SUB / 2; j++) {
            ys[j] = d * (float)kvalues_mxfp4[q[j] & 0x0f];
            ys[j + QK_NVFP4_SUB / 2] = d * (float)kvalues_mxfp4[q[j] >> 4];
        }
    }
}

/* Q1_0 (ggml): one sign bit per value, d * (bit ? +1 : -1) */
static inline void gcy_dq_block_q1_0(const block_q1_0 * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    for (int j = 0; j < QK1_0; j++)
        y[j] = ((x->qs[j >> 3] >> (j & 7)) & 1) ? d : -d;
}

/* Q2_0 (ggml): 2 bits per value, (q - 1) * d: 00=-1, 01=0, 10=+1, 11=+2 */
static inline void gcy_dq_block_q2_0(const block_q2_0 * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    for (int j = 0; j < QK2_0; j++)
        y[j] = (float)((int)((x->qs[j >> 2] >> (2 * (j & 3))) & 3) - 1) * d;
}

/* ------------------------------------------------------------------ ternary */
static inline void gcy_dq_block_tq1_0(const block_tq1_0 * x, float * y) {
    static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
    const float d = gcy_dq_h2f(x->d);
    for (int p = 0; p < 5; p++)
        for (int l = 0; l < 32; l++) {
            uint8_t v = (uint8_t)(x->qs[l] * pow3[p]);
            y[p * 32 + l] = d * (float)((int)(((uint16_t)v * 3) >> 8) - 1);
        }
    for (int p = 0; p < 5; p++)
        for (int l = 0; l < 16; l++) {
            uint8_t v = (uint8_t)(x->qs[32 + l] * pow3[p]);
            y[160 + p * 16 + l] = d * (float)((int)(((uint16_t)v * 3) >> 8) - 1);
        }
    for (int p = 0; p < 4; p++)
        for (int l = 0; l < 4; l++) {
            uint8_t v = (uint8_t)(x->qh[l] * pow3[p]);
            y[240 + p * 4 + l] = d * (float)((int)(((uint16_t)v * 3) >> 8) - 1);
        }
}

static inline void gcy_dq_block_tq2_0(const block_tq2_0 * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    for (int h = 0; h < 2; h++)
        for (int s = 0; s < 4; s++)
            for (int l = 0; l < 32; l++)
                y[h * 128 + s * 32 + l] = d * (float)((int)((x->qs[h * 32 + l] >> (2 * s)) & 3) - 1);
}

/* ------------------------------------------------------------------ K-quants */
static inline void gcy_dq_block_q2_K(const block_q2_K * x, float * y) {
    const float d = gcy_dq_h2f(x->d), dmin = gcy_dq_h2f(x->dmin);
    for (int h = 0; h < 2; h++)
        for (int s = 0; s < 4; s++)
            for (int half = 0; half < 2; half++) {
                const int g = h * 8 + s * 2 + half;          /* group of 16 values */
                const float dl = d * (float)(x->scales[g] & 0x0f);
                const float ml = dmin * (float)(x->scales[g] >> 4);
                for (int l = 0; l < 16; l++) {
                    const int li = half * 16 + l;
                    float a = dl * (float)((x->qs[h * 32 + li] >> (2 * s)) & 3);
                    y[g * 16 + l] = a - ml;
                }
            }
}

static inline void gcy_dq_block_q3_K(const block_q3_K * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    float dl[16];
    for (int k = 0; k < 16; k++) {
        int lo = (x->scales[k & 7] >> (4 * (k >> 3))) & 0x0f;
        int hi = (x->scales[8 + (k & 3)] >> (2 * (k >> 2))) & 3;
        dl[k] = d * (float)((int8_t)(lo | (hi << 4)) - 32);
    }
    for (int h = 0; h < 2; h++)
        for (int s = 0; s < 4; s++)
            for (int l0 = 0; l0 < 32; l0 += 16) {
                const int e0 = h * 128 + s * 32 + l0, bit = e0 >> 5;
                const float sc = dl[e0 >> 4];
                for (int l = l0; l < l0 + 16; l++) {
                    int ql = (x->qs[h * 32 + l] >> (2 * s)) & 3;
                    int qh = ((x->hmask[l] >> bit) & 1) ^ 1;
                    y[e0 - l0 + l] = sc * (float)(ql - (qh << 2));
                }
            }
}

/* the 8 six-bit scales and mins of Q4_K / Q5_K (ggml's get_scale_min_k4) */
static inline void gcy_dq_scale_min_k4(const uint8_t * s, uint8_t * sc, uint8_t * mn) {
    for (int j = 0; j < 4; j++) {
        sc[j] = s[j] & 63;
        mn[j] = s[j + 4] & 63;
        sc[j + 4] = (uint8_t)((s[j + 8] & 0x0f) | ((s[j] >> 2) & 0x30));
        mn[j + 4] = (uint8_t)((s[j + 8] >> 4) | ((s[j + 4] >> 2) & 0x30));
    }
}

static inline void gcy_dq_block_q4_K(const block_q4_K * x, float * y) {
    const float d = gcy_dq_h2f(x->d), dmin = gcy_dq_h2f(x->dmin);
    uint8_t sc[8], mn[8];
    gcy_dq_scale_min_k4(x->scales, sc, mn);
    for (int c = 0; c < 4; c++) {
        const float d0 = d * (float)sc[2 * c], m0 = dmin * (float)mn[2 * c];
        const float d1 = d * (float)sc[2 * c + 1], m1 = dmin * (float)mn[2 * c + 1];
        const uint8_t * q = x->qs + 32 * c;
        float * yc = y + 64 * c;
        for (int l = 0; l < 32; l++) {
            float a = d0 * (float)(q[l] & 0x0f), b = d1 * (float)(q[l] >> 4);
            yc[l] = a - m0;
            yc[l + 32] = b - m1;
        }
    }
}

static inline void gcy_dq_block_q5_K(const block_q5_K * x, float * y) {
    const float d = gcy_dq_h2f(x->d), dmin = gcy_dq_h2f(x->dmin);
    uint8_t sc[8], mn[8];
    gcy_dq_scale_min_k4(x->scales, sc, mn);
    for (int c = 0; c < 4; c++) {
        const float d0 = d * (float)sc[2 * c], m0 = dmin * (float)mn[2 * c];
        const float d1 = d * (float)sc[2 * c + 1], m1 = dmin * (float)mn[2 * c + 1];
        const uint8_t * q = x->qs + 32 * c;
        float * yc = y + 64 * c;
        for (int l = 0; l < 32; l++) {
            int lo = (q[l] & 0x0f) | (((x->qh[l] >> (2 * c)) & 1) << 4);
            int hi = (q[l] >> 4) | (((x->qh[l] >> (2 * c + 1)) & 1) << 4);
            float a = d0 * (float)lo, b = d1 * (float)hi;
            yc[l] = a - m0;
            yc[l + 32] = b - m1;
        }
    }
}

static inline void gcy_dq_block_q6_K(const block_q6_K * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    float dl[16];
    for (int k = 0; k < 16; k++)
        dl[k] = d * (float)x->scales[k];
    for (int h = 0; h < 2; h++) {
        const uint8_t * ql = x->ql + 64 * h;
        const uint8_t * qh = x->qh + 32 * h;
        float * yh = y + 128 * h;
        const float * dh = dl + 8 * h;
        for (int l0 = 0; l0 < 32; l0 += 16) {     /* one scale per 16 values of a quarter */
            const float s0 = dh[l0 >> 4], s1 = dh[2 + (l0 >> 4)];
            const float s2 = dh[4 + (l0 >> 4)], s3 = dh[6 + (l0 >> 4)];
            for (int l = l0; l < l0 + 16; l++) {
                int q0 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
                int q1 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
                int q2 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                int q3 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                yh[l] = s0 * (float)q0;
                yh[l + 32] = s1 * (float)q1;
                yh[l + 64] = s2 * (float)q2;
                yh[l + 96] = s3 * (float)q3;
            }
        }
    }
}

static inline void gcy_dq_block_q8_K(const block_q8_K * x, float * y) {
    const float d = x->d;
    for (int j = 0; j < QK_K; j++)
        y[j] = d * (float)x->qs[j];
}

/* ------------------------------------------------------------------ i-quants */
/* +1 or -1 for sign bit j, as a multiplier: numpy multiplies by -1.0, which keeps a NaN's
 * sign, while a negation (what a compiler makes of x * (c ? -1 : 1)) flips it. Loading the
 * factor from a table keeps the multiplication. */
static const float gcy_dq_pm1[2] = {1.0f, -1.0f};
static inline float gcy_dq_sign(uint8_t signs, int j) { return gcy_dq_pm1[(signs >> j) & 1]; }

static inline void gcy_dq_block_iq2_xxs(const block_iq2_xxs * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const uint32_t aux0 = gcy_dq_rd32(x->qs + 4 * ib), aux1 = gcy_dq_rd32(x->qs + 4 * ib + 2);
        const float db = d * (0.5f + (float)(aux1 >> 28)) * 0.25f;
        for (int l = 0; l < 4; l++) {
            const uint8_t * g = (const uint8_t *)&iq2xxs_grid[(aux0 >> (8 * l)) & 0xff];
            const uint8_t s = ksigns_iq2xs[(aux1 >> (7 * l)) & 127];
            for (int j = 0; j < 8; j++)
                y[ib * 32 + l * 8 + j] = db * (float)g[j] * gcy_dq_sign(s, j);
        }
    }
}

static inline void gcy_dq_block_iq2_xs(const block_iq2_xs * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    for (int k = 0; k < QK_K / 16; k++) {
        const float db = d * (0.5f + (float)((x->scales[k >> 1] >> (4 * (k & 1))) & 0x0f)) * 0.25f;
        for (int l = 0; l < 2; l++) {
            const uint16_t q = x->qs[2 * k + l];
            const uint8_t * g = (const uint8_t *)&iq2xs_grid[q & 511];
            const uint8_t s = ksigns_iq2xs[q >> 9];
            for (int j = 0; j < 8; j++)
                y[k * 16 + l * 8 + j] = db * (float)g[j] * gcy_dq_sign(s, j);
        }
    }
}

static inline void gcy_dq_block_iq2_s(const block_iq2_s * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    const uint8_t * signs = x->qs + QK_K / 8;
    for (int k = 0; k < QK_K / 16; k++) {
        const float db = d * (0.5f + (float)((x->scales[k >> 1] >> (4 * (k & 1))) & 0x0f)) * 0.25f;
        for (int l = 0; l < 2; l++) {
            const int i = 2 * k + l;                               /* group of 8 values */
            const int idx = x->qs[i] | (((x->qh[i >> 2] >> (2 * (i & 3))) & 3) << 8);
            const uint8_t * g = (const uint8_t *)&iq2s_grid[idx];
            for (int j = 0; j < 8; j++)
                y[i * 8 + j] = db * (float)g[j] * gcy_dq_sign(signs[i], j);
        }
    }
}

static inline void gcy_dq_block_iq3_xxs(const block_iq3_xxs * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    const uint8_t * sas = x->qs + QK_K / 4;
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const uint32_t aux = gcy_dq_rd32(sas + 4 * ib);
        const float db = d * (0.5f + (float)(aux >> 28)) * 0.5f;
        for (int l = 0; l < 4; l++) {
            const uint8_t s = ksigns_iq2xs[(aux >> (7 * l)) & 127];
            const uint8_t * g1 = (const uint8_t *)&iq3xxs_grid[x->qs[ib * 8 + 2 * l]];
            const uint8_t * g2 = (const uint8_t *)&iq3xxs_grid[x->qs[ib * 8 + 2 * l + 1]];
            for (int j = 0; j < 4; j++) {
                y[ib * 32 + l * 8 + j] = db * (float)g1[j] * gcy_dq_sign(s, j);
                y[ib * 32 + l * 8 + 4 + j] = db * (float)g2[j] * gcy_dq_sign(s, j + 4);
            }
        }
    }
}

static inline void gcy_dq_block_iq3_s(const block_iq3_s * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const int sc = (x->scales[ib >> 1] >> (4 * (ib & 1))) & 0x0f;
        const float db = d * (float)(1 + 2 * sc);
        for (int k = 0; k < 8; k++) {                         /* groups of 4 values */
            const int i = ib * 8 + k;
            const int idx = x->qs[i] | (((x->qh[i >> 3] >> (i & 7)) & 1) << 8);
            const uint8_t * g = (const uint8_t *)&iq3s_grid[idx];
            const int e0 = i * 4;
            for (int j = 0; j < 4; j++) {
                const int e = e0 + j;
                y[e] = db * (float)g[j] * gcy_dq_sign(x->signs[e >> 3], e & 7);
            }
        }
    }
}

static inline void gcy_dq_block_iq1_s(const block_iq1_s * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const uint16_t qh = x->qh[ib];
        const float dl = d * (float)(2 * ((qh >> 12) & 7) + 1);
        const float delta = (qh & 0x8000) ? -IQ1S_DELTA : IQ1S_DELTA;
        for (int l = 0; l < 4; l++) {
            const int idx = x->qs[ib * 4 + l] | (((qh >> (3 * l)) & 7) << 8);
            const int8_t * g = (const int8_t *)&iq1s_grid[idx];
            for (int j = 0; j < 8; j++)
                y[ib * 32 + l * 8 + j] = dl * ((float)g[j] + delta);
        }
    }
}

static inline void gcy_dq_block_iq1_m(const block_iq1_m * x, float * y) {
    uint16_t sc[4];
    for (int i = 0; i < 4; i++)
        sc[i] = gcy_dq_rd16(x->scales + 2 * i);
    const uint16_t dbits = (uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
                                      ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
    const float d = gcy_dq_h2f(dbits);
    for (int k = 0; k < 16; k++) {                            /* 16 values per scale */
        const float dl = d * (float)(2 * ((sc[k >> 2] >> (3 * (k & 3))) & 7) + 1);
        for (int l = 0; l < 2; l++) {
            const int i = 2 * k + l;                              /* group of 8 values */
            const int h = (x->qh[i >> 1] >> (4 * (i & 1))) & 0x0f;
            const int idx = x->qs[i] | ((h & 7) << 8);
            const float delta = (h & 8) ? -IQ1M_DELTA : IQ1M_DELTA;
            const int8_t * g = (const int8_t *)&iq1s_grid[idx];
            for (int j = 0; j < 8; j++)
                y[i * 8 + j] = dl * ((float)g[j] + delta);
        }
    }
}

static inline void gcy_dq_block_iq4_xs(const block_iq4_xs * x, float * y) {
    const float d = gcy_dq_h2f(x->d);
    for (int ib = 0; ib < QK_K / 32; ib++) {
        const int lo = (x->scales_l[ib >> 1] >> (4 * (ib & 1))) & 0x0f;
        const int hi = (x->scales_h >> (2 * ib)) & 3;
        const float dl = d * (float)((int8_t)(lo | (hi << 4)) - 32);
        gcy_dq_nl32(kvalues_iq4nl, x->qs + 16 * ib, dl, y + 32 * ib);
    }
}

/* ------------------------------------------------------------------ dispatch */
typedef void (*gcy_dq_block_fn)(const void * x, float * y);

/* The block dequantizer of a type, or NULL when the type has none. */
static inline gcy_dq_block_fn gcy_dq_block_of(int type) {
    switch (type) {
#define GCY_DQ_CASE(T, name) case T: return (gcy_dq_block_fn)gcy_dq_block_##name;
    GCY_DQ_CASE(GGML_TYPE_Q4_0, q4_0)
    GCY_DQ_CASE(GGML_TYPE_Q4_1, q4_1)
    GCY_DQ_CASE(GGML_TYPE_Q5_0, q5_0)
    GCY_DQ_CASE(GGML_TYPE_Q5_1, q5_1)
    GCY_DQ_CASE(GGML_TYPE_Q8_0, q8_0)
    GCY_DQ_CASE(GGML_TYPE_Q8_1, q8_1)
    GCY_DQ_CASE(GGML_TYPE_Q2_K, q2_K)
    GCY_DQ_CASE(GGML_TYPE_Q3_K, q3_K)
    GCY_DQ_CASE(GGML_TYPE_Q4_K, q4_K)
    GCY_DQ_CASE(GGML_TYPE_Q5_K, q5_K)
    GCY_DQ_CASE(GGML_TYPE_Q6_K, q6_K)
    GCY_DQ_CASE(GGML_TYPE_Q8_K, q8_K)
    GCY_DQ_CASE(GGML_TYPE_IQ2_XXS, iq2_xxs)
    GCY_DQ_CASE(GGML_TYPE_IQ2_XS, iq2_xs)
    GCY_DQ_CASE(GGML_TYPE_IQ2_S, iq2_s)
    GCY_DQ_CASE(GGML_TYPE_IQ3_XXS, iq3_xxs)
    GCY_DQ_CASE(GGML_TYPE_IQ3_S, iq3_s)
    GCY_DQ_CASE(GGML_TYPE_IQ1_S, iq1_s)
    GCY_DQ_CASE(GGML_TYPE_IQ1_M, iq1_m)
    GCY_DQ_CASE(GGML_TYPE_IQ4_NL, iq4_nl)
    GCY_DQ_CASE(GGML_TYPE_IQ4_XS, iq4_xs)
    GCY_DQ_CASE(GGML_TYPE_TQ1_0, tq1_0)
    GCY_DQ_CASE(GGML_TYPE_TQ2_0, tq2_0)
    GCY_DQ_CASE(GGML_TYPE_MXFP4, mxfp4)
    GCY_DQ_CASE(GGML_TYPE_NVFP4, nvfp4)
    GCY_DQ_CASE(GGML_TYPE_Q1_0, q1_0)
    GCY_DQ_CASE(GGML_TYPE_Q2_0, q2_0)
#undef GCY_DQ_CASE
    default: return 0;
    }
}

/* ------------------------------------------------------------------ SIMD runs (float32)
 * Whole runs of Q8_0, Q4_0, Q4_K and Q6_K blocks decoded with vectors of 16 floats (one
 * zmm with AVX-512, two ymm with AVX2) and stored straight into the output (streaming
 * stores when asked and aligned), without the per-block function call and the bounce
 * through a buffer of the generic path. The arithmetic is the scalar kernels' (the same
 * float32 operations on the same exactly converted integers, in the same order), so the
 * bits are the same; tests/test_quant_dequant.py checks every dispatch level. */
#if defined(__AVX512F__) && defined(__AVX512BW__)
#define GCY_DQ_SIMD 2
typedef __m512 gcy_v16;
#define GCY_V16_ALIGN 63u
static inline __attribute__((always_inline)) gcy_v16 gcy_v16_set1(float d) { return _mm512_set1_ps(d); }
static inline __attribute__((always_inline)) gcy_v16 gcy_v16_i8(__m128i b) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b));
}
static inline __attribute__((always_inline)) gcy_v16 gcy_v16_mul(gcy_v16 a, gcy_v16 b) { return _mm512_mul_ps(a, b); }
static inline __attribute__((always_inline)) gcy_v16 gcy_v16_sub(gcy_v16 a, gcy_v16 b) { return _mm512_sub_ps(a, b); }
static inline __attribute__((always_inline)) void gcy_v16_st(float * p, gcy_v16 v, int nt) {
    if (nt) _mm512_stream_ps(p, v); else _mm512_storeu_ps(p, v);
}
#elif defined(__AVX2__)
#define GCY_DQ_SIMD 1
typedef struct { __m256 a, b; } gcy_v16;
#define GCY_V16_ALIGN 31u
static inline __attribute__((always_inline)) gcy_v16 gcy_v16_set1(float d) {
    gcy_v16 r; r.a = r.b = _mm256_set1_ps(d); return r;
}
static inline __attribute__((always_inline)) gcy_v16 gcy_v16_i8(__m128i b) {
    gcy_v16 r;
    r.a = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
    r.b = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(b, 8)));
    return r;
}
static inline __attribute__((always_inline)) gcy_v16 gcy_v16_mul(gcy_v16 x, gcy_v16 y) {
    gcy_v16 r; r.a = _mm256_mul_ps(x.a, y.a); r.b = _mm256_mul_ps(x.b, y.b); return r;
}
static inline __attribute__((always_inline)) gcy_v16 gcy_v16_sub(gcy_v16 x, gcy_v16 y) {
    gcy_v16 r; r.a = _mm256_sub_ps(x.a, y.a); r.b = _mm256_sub_ps(x.b, y.b); return r;
}
static inline __attribute__((always_inline)) void gcy_v16_st(float * p, gcy_v16 v, int nt) {
    if (nt) { _mm256_stream_ps(p, v.a); _mm256_stream_ps(p + 8, v.b); }
    else { _mm256_storeu_ps(p, v.a); _mm256_storeu_ps(p + 8, v.b); }
}
#else
#define GCY_DQ_SIMD 0
#endif

#if GCY_DQ_SIMD
/* (float)q * d, numpy's x * d */
static inline __attribute__((always_inline)) void
gcy_dq_run_q8_0_v(const uint8_t * src, float * y, int64_t n, int nt) {
    for (int64_t b = 0; b < n; b++, y += 32) {
        const block_q8_0 * x = (const block_q8_0 *)(src + b * (int64_t)sizeof(block_q8_0));
        const gcy_v16 d = gcy_v16_set1(gcy_dq_h2f(x->d));
        const __m128i q0 = _mm_loadu_si128((const __m128i *)x->qs);
        const __m128i q1 = _mm_loadu_si128((const __m128i *)(x->qs + 16));
        gcy_v16_st(y, gcy_v16_mul(gcy_v16_i8(q0), d), nt);
        gcy_v16_st(y + 16, gcy_v16_mul(gcy_v16_i8(q1), d), nt);
    }
}

/* d * (q - 8): low nibbles are values 0-15, high nibbles 16-31 */
static inline __attribute__((always_inline)) void
gcy_dq_run_q4_0_v(const uint8_t * src, float * y, int64_t n, int nt) {
    const __m128i m4 = _mm_set1_epi8(0x0f), k8 = _mm_set1_epi8(8);
    for (int64_t b = 0; b < n; b++, y += 32) {
        const block_q4_0 * x = (const block_q4_0 *)(src + b * (int64_t)sizeof(block_q4_0));
        const gcy_v16 d = gcy_v16_set1(gcy_dq_h2f(x->d));
        const __m128i qq = _mm_loadu_si128((const __m128i *)x->qs);
        const __m128i lo = _mm_sub_epi8(_mm_and_si128(qq, m4), k8);
        const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(qq, 4), m4), k8);
        gcy_v16_st(y, gcy_v16_mul(d, gcy_v16_i8(lo)), nt);
        gcy_v16_st(y + 16, gcy_v16_mul(d, gcy_v16_i8(hi)), nt);
    }
}

/* (d*sc) * q - (dmin*mn) per 32 values */
static inline __attribute__((always_inline)) void
gcy_dq_run_q4_K_v(const uint8_t * src, float * y, int64_t n, int nt) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    for (int64_t b = 0; b < n; b++, y += QK_K) {
        const block_q4_K * x = (const block_q4_K *)(src + b * (int64_t)sizeof(block_q4_K));
        const float d = gcy_dq_h2f(x->d), dmin = gcy_dq_h2f(x->dmin);
        uint8_t sc[8], mn[8];
        gcy_dq_scale_min_k4(x->scales, sc, mn);
        for (int c = 0; c < 4; c++) {
            const gcy_v16 d0 = gcy_v16_set1(d * (float)sc[2 * c]);
            const gcy_v16 m0 = gcy_v16_set1(dmin * (float)mn[2 * c]);
            const gcy_v16 d1 = gcy_v16_set1(d * (float)sc[2 * c + 1]);
            const gcy_v16 m1 = gcy_v16_set1(dmin * (float)mn[2 * c + 1]);
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x->qs + 32 * c));
            const __m256i lo = _mm256_and_si256(q, m4);
            const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            float * yc = y + 64 * c;
            /* nibbles are 0-15: the signed byte conversion is exact */
            gcy_v16_st(yc, gcy_v16_sub(gcy_v16_mul(d0, gcy_v16_i8(_mm256_castsi256_si128(lo))), m0), nt);
            gcy_v16_st(yc + 16, gcy_v16_sub(gcy_v16_mul(d0, gcy_v16_i8(_mm256_extracti128_si256(lo, 1))), m0), nt);
            gcy_v16_st(yc + 32, gcy_v16_sub(gcy_v16_mul(d1, gcy_v16_i8(_mm256_castsi256_si128(hi))), m1), nt);
            gcy_v16_st(yc + 48, gcy_v16_sub(gcy_v16_mul(d1, gcy_v16_i8(_mm256_extracti128_si256(hi, 1))), m1), nt);
        }
    }
}

/* (d * scale) * (q - 32), one scale per 16 values */
static inline __attribute__((always_inline)) void
gcy_dq_run_q6_K_v(const uint8_t * src, float * y, int64_t n, int nt) {
    const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
    const __m256i k32 = _mm256_set1_epi8(32);
    for (int64_t b = 0; b < n; b++, y += QK_K) {
        const block_q6_K * x = (const block_q6_K *)(src + b * (int64_t)sizeof(block_q6_K));
        const float d = gcy_dq_h2f(x->d);
        float dl[16];
        for (int k = 0; k < 16; k++)
            dl[k] = d * (float)x->scales[k];
        for (int h = 0; h < 2; h++) {
            const __m256i l0 = _mm256_loadu_si256((const __m256i *)(x->ql + 64 * h));
            const __m256i l1 = _mm256_loadu_si256((const __m256i *)(x->ql + 64 * h + 32));
            const __m256i qh = _mm256_loadu_si256((const __m256i *)(x->qh + 32 * h));
            __m256i q[4];
            q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
            q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
            q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(qh, m30));
            q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                                   _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
            float * yh = y + 128 * h;
            for (int s = 0; s < 4; s++) {      /* values 32*s .. 32*s+31 of this half */
                const __m256i v = _mm256_sub_epi8(q[s], k32);
                const gcy_v16 s0 = gcy_v16_set1(dl[8 * h + 2 * s]);
                const gcy_v16 s1 = gcy_v16_set1(dl[8 * h + 2 * s + 1]);
                gcy_v16_st(yh + 32 * s, gcy_v16_mul(s0, gcy_v16_i8(_mm256_castsi256_si128(v))), nt);
                gcy_v16_st(yh + 32 * s + 16, gcy_v16_mul(s1, gcy_v16_i8(_mm256_extracti128_si256(v, 1))), nt);
            }
        }
    }
}

/* One SIMD run of n blocks of fn's type into y; 0 when fn has no SIMD run (or nt is asked
 * for an output that is not aligned for streaming: then the caller's path streams). */
static inline int gcy_dq_run_simd(gcy_dq_block_fn fn, const uint8_t * src, float * y,
                                  int64_t n, int nt) {
    if (nt && ((uintptr_t)y & GCY_V16_ALIGN))
        return 0;
#define GCY_DQ_SIMD_CASE(name)                                                   \
    if (fn == (gcy_dq_block_fn)gcy_dq_block_##name) {                            \
        if (nt) { gcy_dq_run_##name##_v(src, y, n, 1); _mm_sfence(); }          \
        else gcy_dq_run_##name##_v(src, y, n, 0);                                \
        return 1;                                                                \
    }
    GCY_DQ_SIMD_CASE(q8_0)
    GCY_DQ_SIMD_CASE(q4_0)
    GCY_DQ_SIMD_CASE(q4_K)
    GCY_DQ_SIMD_CASE(q6_K)
#undef GCY_DQ_SIMD_CASE
    return 0;
}
#endif

/* output element kinds */
enum { GCY_DQ_F32 = 0, GCY_DQ_F16 = 1, GCY_DQ_BF16 = 2 };

/* Outputs at least this large (bytes, the whole call) go out with non-temporal stores when
 * the CPU has them: they would not stay in the last-level cache anyway, and streaming stores
 * skip the read-for-ownership of every destination line (a third of the memory traffic). */
#ifndef GCY_DQ_NT_BYTES
#define GCY_DQ_NT_BYTES (48ll << 20)
#endif

static inline void gcy_dq_run_nt(gcy_dq_block_fn fn, int64_t bs, int64_t ts,
                                 const uint8_t * src, void * dst, int64_t n, int kind, int nt);

/* Dequantizes n consecutive blocks from src into dst (n * bs values of the output kind). */
static inline void gcy_dq_run(gcy_dq_block_fn fn, int64_t bs, int64_t ts, const uint8_t * src,
                              void * dst, int64_t n, int kind) {
    gcy_dq_run_nt(fn, bs, ts, src, dst, n, kind, 0);
}

#if defined(__AVX__)
/* Copies n floats from tmp (a buffer in L1) to y, the whole 64-byte lines of y with
 * non-temporal stores. y need only be float-aligned: numpy's large arrays start 16 bytes
 * past a page (malloc's header), so a stream that waited for aligned outputs never ran
 * there. The partial lines at both ends go out with plain stores; the next run's head
 * completes the line this run's tail began, in cache. */
static inline void gcy_dq_stream_out(float * y, const float * tmp, int64_t n) {
    int64_t j = (int64_t)(((64u - ((uintptr_t)y & 63u)) & 63u) >> 2);
    if (j > n)
        j = n;
    for (int64_t i = 0; i < j; i++)
        y[i] = tmp[i];
#if defined(__AVX512F__)
    for (; j + 16 <= n; j += 16)
        _mm512_stream_ps(y + j, _mm512_loadu_ps(tmp + j));
#else
    for (; j + 8 <= n; j += 8)
        _mm256_stream_ps(y + j, _mm256_loadu_ps(tmp + j));
#endif
    for (; j < n; j++)
        y[j] = tmp[j];
}

/* values per bounce of gcy_dq_run_nt's streaming path: 4 KiB of float32, L1-resident */
#define GCY_DQ_BOUNCE 1024
#endif

/* gcy_dq_run; nt: stream the float32 output (straight from the registers when dst is
 * aligned for the vector width and the type has a SIMD run, else through an L1 buffer) */
static inline void gcy_dq_run_nt(gcy_dq_block_fn fn, int64_t bs, int64_t ts,
                                 const uint8_t * src, void * dst, int64_t n, int kind, int nt) {
    if (kind == GCY_DQ_F32) {
        float * y = (float *)dst;
#if GCY_DQ_SIMD
        if (gcy_dq_run_simd(fn, src, y, n, nt))
            return;
#endif
#if defined(__AVX__)
        if (nt && ((uintptr_t)y & 3u) == 0 && bs <= GCY_DQ_BOUNCE) {
            float tmp[GCY_DQ_BOUNCE] __attribute__((aligned(64)));
            const int64_t per = GCY_DQ_BOUNCE / bs;      /* whole blocks per bounce */
            for (int64_t b = 0; b < n; b += per) {
                const int64_t m = n - b < per ? n - b : per;
                const uint8_t * sb = src + b * ts;
#if GCY_DQ_SIMD
                if (!gcy_dq_run_simd(fn, sb, tmp, m, 0))
#endif
                    for (int64_t i = 0; i < m; i++)
                        fn(sb + i * ts, tmp + i * bs);
                gcy_dq_stream_out(y + b * bs, tmp, m * bs);
            }
            _mm_sfence();   /* streaming stores are weakly ordered: publish them */
            return;
        }
#else
        (void)nt;
#endif
        for (int64_t b = 0; b < n; b++)
            fn(src + b * ts, y + b * bs);
        return;
    }
    float tmp[QK_K];
    uint16_t * y = (uint16_t *)dst;
    for (int64_t b = 0; b < n; b++) {
        fn(src + b * ts, tmp);
        uint16_t * yb = y + b * bs;
        if (kind == GCY_DQ_F16) {
#if defined(__F16C__)
            int64_t j = 0;
            for (; j + 8 <= bs; j += 8)
                _mm_storeu_si128((__m128i *)(yb + j),
                                 _mm256_cvtps_ph(_mm256_loadu_ps(tmp + j), _MM_FROUND_TO_NEAREST_INT));
            for (; j < bs; j++)
                yb[j] = gcy_dq_f2h(tmp[j]);
#else
            for (int64_t j = 0; j < bs; j++)
                yb[j] = gcy_dq_f2h(tmp[j]);
#endif
        } else {
            for (int64_t j = 0; j < bs; j++)
                yb[j] = gcy_dq_f2bf(tmp[j]);
        }
    }
}

/* Blocks [b0, b1) of the flat range of nrows*nblk blocks (rows of nblk blocks: row r's
 * blocks start at src + r*src_stride bytes, its values go to dst + r*dst_stride bytes).
 * fn/bs/ts/osz as gcy_dequant_rows computes them; stream: see GCY_DQ_NT_BYTES. */
static inline void gcy_dequant_range(gcy_dq_block_fn fn, int64_t bs, int64_t ts, int64_t osz,
                                     const uint8_t * src, int64_t src_stride, int64_t nblk,
                                     char * dst, int64_t dst_stride, int kind,
                                     int64_t b0, int64_t b1, int stream) {
    while (b0 < b1) {
        const int64_t r = b0 / nblk, c = b0 % nblk;
        int64_t n = nblk - c;
        if (n > b1 - b0)
            n = b1 - b0;
        gcy_dq_run_nt(fn, bs, ts, src + r * src_stride + c * ts,
                      dst + r * dst_stride + c * bs * osz, n, kind, stream);
        b0 += n;
    }
}

/* Whether a call writing out_bytes in all streams its output. */
static inline int gcy_dequant_streams(int64_t out_bytes) { return out_bytes >= GCY_DQ_NT_BYTES; }

/* Thread ith of nt: its even share of the flat range of nrows*nblk blocks. */
static inline void gcy_dequant_part(gcy_dq_block_fn fn, int64_t bs, int64_t ts, int64_t osz,
                                    const uint8_t * src, int64_t src_stride, int64_t nrows,
                                    int64_t nblk, char * dst, int64_t dst_stride, int kind,
                                    int ith, int nt) {
    const int64_t total = nrows * nblk;
    const int stream = gcy_dequant_streams(total * bs * osz);   /* the whole call's output */
    gcy_dequant_range(fn, bs, ts, osz, src, src_stride, nblk, dst, dst_stride, kind,
                      total * ith / nt, total * (ith + 1) / nt, stream);
}

/* Dynamic share: the next chunk index from a counter shared by the threads. */
static inline int64_t gcy_dequant_next(int64_t * counter) {
    return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* Dequantizes nrows rows of nblk blocks each (see gcy_dequant_part) on the calling thread.
 * Returns 0, or -1 for a type without a dequantizer or a bad kind. The threaded entry is
 * _dequant.pyx's (ggml_cy's fork-safe pool, not OpenMP). */
static inline int gcy_dequant_rows(int type, const uint8_t * src, int64_t src_stride,
                                   int64_t nrows, int64_t nblk, char * dst, int64_t dst_stride,
                                   int kind, int nth) {
    gcy_dq_block_fn fn = gcy_dq_block_of(type);
    (void)nth;
    if (!fn || kind < 0 || kind > 2)
        return -1;
    const int64_t bs = ggml_cy_blck_size(type), ts = (int64_t)ggml_cy_block_bytes(type);
    const int64_t osz = kind == GCY_DQ_F32 ? 4 : 2;
    if (nrows * nblk <= 0)
        return 0;
    gcy_dequant_part(fn, bs, ts, osz, src, src_stride, nrows, nblk, dst, dst_stride, kind, 0, 1);
    return 0;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

#endif
