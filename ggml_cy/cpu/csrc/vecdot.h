/* Dot products of quantized weight rows with quantized activation rows (ggml's vec_dot
 * scheme), the building block of mul_mat with quantized weights (csrc/mul_mat_q.h).
 *
 * ggml never multiplies a quantized weight by floats: each row of the f32 operand b is
 * first converted to the weight type's "vec-dot partner" (Q8_0 for the 32-blocks with a
 * symmetric scale, Q8_1 for Q4_1/Q5_1 whose offset needs the block sum, Q8_K for the
 * 256-value super-blocks), and the products then run on 8-bit integers. Here every weight
 * type is unpacked, one tile of up to 256 values at a time, into signed 8-bit values plus
 * its scales, and two dot routines cover all of them:
 *   path A (32-blocks: Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 IQ4_NL MXFP4, partner Q8_0/Q8_1): one
 *     float scale (and offset) per 32 values;
 *   path B (256-blocks: Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_XS TQ1_0 TQ2_0, partner Q8_K): an
 *     integer scale (and min) per 16 values, one float scale per 256.
 * The integer step is ggml's sign trick: |x| (unsigned) times y carrying x's sign, which
 * is what the u8 x s8 instructions take: AVX-512 VNNI / AVX-VNNI vpdpbusd (+ vpdpwssd),
 * AVX2 vpmaddubsw + vpmaddwd, and plain C for other CPUs. Values are at most 127 in
 * magnitude (activations are clamped to +-127 by the Q8 quantizers), so the 16-bit pair
 * sums of vpmaddubsw cannot saturate. Every routine takes up to VD_NC columns at once, so
 * one unpacked tile serves several columns of b (the 8-column mat-vec case).
 *
 * The remaining i-quants (IQ1_S IQ1_M IQ2_XXS IQ2_XS IQ2_S IQ3_XXS IQ3_S) and NVFP4 take
 * the simpler path F in mul_mat_q.h: a tile is dequantized to f32 and dotted with the f32
 * rows of b. */
#ifndef GGML_CY_VECDOT_H
#define GGML_CY_VECDOT_H
#include <stdint.h>
#include <string.h>
#include "ggml_types.h"
#include "kernels_convert.h"
#include "quant_tables.h"
#include "matvec_repack.h"
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#define VD_NC 8   /* most columns one call handles */

/* ------------------------------------------------------------------ activation blocks */
/* ggml's layouts (ggml-common.h): Q8_0 {half d; int8 qs[32]}, Q8_1 {half d; half s =
 * d * sum(qs); int8 qs[32]}, Q8_K {float d; int8 qs[256]; int16 bsums[16] (sums of 16)}. */
#define VD_Q8_0_SIZE 34
#define VD_Q8_1_SIZE 36
#define VD_Q8_K_SIZE 292

static inline uint16_t vd_ld16(const uint8_t * p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t vd_ld32(const uint8_t * p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline float vd_ldh(const uint8_t * p) { return kern_h2f_hw(vd_ld16(p)); }

/* The weight types the integer paths take, and each one's partner (-1: path F). */
static inline int vd_partner(int type) {
    switch (type) {
    case GGML_TYPE_Q4_0: case GGML_TYPE_Q5_0: case GGML_TYPE_Q8_0:
    case GGML_TYPE_IQ4_NL: case GGML_TYPE_MXFP4:
        return GGML_TYPE_Q8_0;
    case GGML_TYPE_Q4_1: case GGML_TYPE_Q5_1:
        return GGML_TYPE_Q8_1;
    case GGML_TYPE_Q2_K: case GGML_TYPE_Q3_K: case GGML_TYPE_Q4_K: case GGML_TYPE_Q5_K:
    case GGML_TYPE_Q6_K: case GGML_TYPE_IQ4_XS: case GGML_TYPE_TQ1_0: case GGML_TYPE_TQ2_0:
        return GGML_TYPE_Q8_K;
    default:
        return -1;
    }
}

/* kvalues_iq4nl, kvalues_mxfp4: core/csrc/quant_tables.h */

/* ggml_e8m0_to_fp32_half: 2^(e-127) / 2, exact (subnormal for e < 2). */
static inline float vd_e8m0_half(uint8_t e) {
    uint32_t bits = e < 2 ? (0x00200000u << e) : ((uint32_t)(e - 1) << 23);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* ------------------------------------------------------------------ tiles */
/* Path A: up to 8 blocks of 32: values, a float scale and offset per block. */
typedef struct {
    int8_t q[256] __attribute__((aligned(32)));
    float d[8];
    float m[8];
} vd_tile_a;

/* Path B: one super-block: values, integer scale and min per 16, float scales. */
typedef struct {
    int8_t q[256] __attribute__((aligned(32)));
    int16_t sc[16] __attribute__((aligned(32)));
    int16_t mn[16] __attribute__((aligned(32)));
    float da, db;      /* value = da * sc * q - db * mn */
} vd_tile_b;

static inline int vd_has_offset(int type) {
    return type == GGML_TYPE_Q4_1 || type == GGML_TYPE_Q5_1;
}
static inline int vd_has_min(int type) {
    return type == GGML_TYPE_Q2_K || type == GGML_TYPE_Q4_K || type == GGML_TYPE_Q5_K;
}

/* Unpacks nblk (<= 8) consecutive 32-blocks of a path-A type starting at x. */
static inline __attribute__((always_inline))
void vd_unpack_a(const int type, const uint8_t * x, int nblk, vd_tile_a * t) {
    for (int b = 0; b < nblk; b++) {
        int8_t * q = t->q + 32 * b;
        switch (type) {
        case GGML_TYPE_Q4_0: {
            const uint8_t * p = x + 18 * b, * qs = p + 2;
            t->d[b] = vd_ldh(p); t->m[b] = 0.0f;
            for (int j = 0; j < 16; j++) {
                q[j] = (int8_t)((qs[j] & 0x0F) - 8);
                q[j + 16] = (int8_t)((qs[j] >> 4) - 8);
            }
            break;
        }
        case GGML_TYPE_Q4_1: {
            const uint8_t * p = x + 20 * b, * qs = p + 4;
            t->d[b] = vd_ldh(p); t->m[b] = vd_ldh(p + 2);
            for (int j = 0; j < 16; j++) {
                q[j] = (int8_t)(qs[j] & 0x0F);
                q[j + 16] = (int8_t)(qs[j] >> 4);
            }
            break;
        }
        case GGML_TYPE_Q5_0: {
            const uint8_t * p = x + 22 * b, * qs = p + 6;
            const uint32_t qh = vd_ld32(p + 2);
            t->d[b] = vd_ldh(p); t->m[b] = 0.0f;
            for (int j = 0; j < 16; j++) {
                q[j] = (int8_t)(((qs[j] & 0x0F) | (((qh >> j) & 1u) << 4)) - 16);
                q[j + 16] = (int8_t)(((qs[j] >> 4) | (((qh >> (j + 16)) & 1u) << 4)) - 16);
            }
            break;
        }
        case GGML_TYPE_Q5_1: {
            const uint8_t * p = x + 24 * b, * qs = p + 8;
            const uint32_t qh = vd_ld32(p + 4);
            t->d[b] = vd_ldh(p); t->m[b] = vd_ldh(p + 2);
            for (int j = 0; j < 16; j++) {
                q[j] = (int8_t)((qs[j] & 0x0F) | (((qh >> j) & 1u) << 4));
                q[j + 16] = (int8_t)((qs[j] >> 4) | (((qh >> (j + 16)) & 1u) << 4));
            }
            break;
        }
        case GGML_TYPE_Q8_0: {
            const uint8_t * p = x + 34 * b;
            t->d[b] = vd_ldh(p); t->m[b] = 0.0f;
            memcpy(q, p + 2, 32);
            break;
        }
        case GGML_TYPE_IQ4_NL: {
            const uint8_t * p = x + 18 * b, * qs = p + 2;
            t->d[b] = vd_ldh(p); t->m[b] = 0.0f;
            for (int j = 0; j < 16; j++) {
                q[j] = kvalues_iq4nl[qs[j] & 0x0F];
                q[j + 16] = kvalues_iq4nl[qs[j] >> 4];
            }
            break;
        }
        case GGML_TYPE_MXFP4: {
            const uint8_t * p = x + 17 * b, * qs = p + 1;
            t->d[b] = vd_e8m0_half(p[0]); t->m[b] = 0.0f;
            for (int j = 0; j < 16; j++) {
                q[j] = kvalues_mxfp4[qs[j] & 0x0F];
                q[j + 16] = kvalues_mxfp4[qs[j] >> 4];
            }
            break;
        }
        default:
            break;
        }
    }
}

/* The scales of Q4_K/Q5_K: 8 six-bit (scale, min) pairs in 12 bytes (get_scale_min_k4). */
static inline void vd_scale_min_k4(const uint8_t * s, int16_t * sc16, int16_t * mn16) {
    for (int j = 0; j < 8; j++) {
        int sc, m;
        if (j < 4) {
            sc = s[j] & 63;
            m = s[j + 4] & 63;
        } else {
            sc = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
            m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
        }
        sc16[2 * j] = sc16[2 * j + 1] = (int16_t)sc;
        mn16[2 * j] = mn16[2 * j + 1] = (int16_t)m;
    }
}

/* Unpacks one super-block of a path-B type. */
static inline __attribute__((always_inline))
void vd_unpack_b(const int type, const uint8_t * x, vd_tile_b * t) {
    int8_t * q = t->q;
    switch (type) {
    case GGML_TYPE_Q2_K: {  /* scales[16] qs[64] d dmin */
        const uint8_t * sc = x, * qs = x + 16;
        t->da = vd_ldh(x + 80); t->db = vd_ldh(x + 82);
        for (int h = 0; h < 2; h++)
            for (int s = 0; s < 4; s++)
                for (int l = 0; l < 32; l++)
                    q[128 * h + 32 * s + l] = (int8_t)((qs[32 * h + l] >> (2 * s)) & 3);
        for (int g = 0; g < 16; g++) {
            t->sc[g] = (int16_t)(sc[g] & 0x0F);
            t->mn[g] = (int16_t)(sc[g] >> 4);
        }
        break;
    }
    case GGML_TYPE_Q3_K: {  /* hmask[32] qs[64] scales[12] d */
        const uint8_t * hm = x, * qs = x + 32, * s = x + 96;
        t->da = vd_ldh(x + 108); t->db = 0.0f;
        for (int h = 0; h < 2; h++)
            for (int j = 0; j < 4; j++)
                for (int l = 0; l < 32; l++)
                    q[128 * h + 32 * j + l] = (int8_t)(((qs[32 * h + l] >> (2 * j)) & 3)
                                                       - (((hm[l] >> (4 * h + j)) & 1) ? 0 : 4));
        for (int g = 0; g < 16; g++) {
            int lo = (s[g % 8] >> (4 * (g / 8))) & 0x0F;
            int hi = (s[8 + g % 4] >> (2 * (g / 4))) & 3;
            t->sc[g] = (int16_t)((lo | (hi << 4)) - 32);
            t->mn[g] = 0;
        }
        break;
    }
    case GGML_TYPE_Q4_K: {  /* d dmin scales[12] qs[128] */
        const uint8_t * qs = x + 16;
        t->da = vd_ldh(x); t->db = vd_ldh(x + 2);
        vd_scale_min_k4(x + 4, t->sc, t->mn);
        for (int j = 0; j < 4; j++)
            for (int l = 0; l < 32; l++) {
                q[64 * j + l] = (int8_t)(qs[32 * j + l] & 0x0F);
                q[64 * j + 32 + l] = (int8_t)(qs[32 * j + l] >> 4);
            }
        break;
    }
    case GGML_TYPE_Q5_K: {  /* d dmin scales[12] qh[32] qs[128] */
        const uint8_t * qh = x + 16, * qs = x + 48;
        t->da = vd_ldh(x); t->db = vd_ldh(x + 2);
        vd_scale_min_k4(x + 4, t->sc, t->mn);
        for (int j = 0; j < 4; j++)
            for (int l = 0; l < 32; l++) {
                q[64 * j + l] = (int8_t)((qs[32 * j + l] & 0x0F)
                                         | (((qh[l] >> (2 * j)) & 1) << 4));
                q[64 * j + 32 + l] = (int8_t)((qs[32 * j + l] >> 4)
                                              | (((qh[l] >> (2 * j + 1)) & 1) << 4));
            }
        break;
    }
    case GGML_TYPE_Q6_K: {  /* ql[128] qh[64] scales[16] (int8) d */
        const uint8_t * ql = x, * qh = x + 128;
        const int8_t * s = (const int8_t *)(x + 192);
        t->da = vd_ldh(x + 208); t->db = 0.0f;
        for (int h = 0; h < 2; h++)
            for (int l = 0; l < 32; l++) {
                const uint8_t a = ql[64 * h + l], b = ql[64 * h + 32 + l], c = qh[32 * h + l];
                q[128 * h + l] = (int8_t)(((a & 0x0F) | ((c & 3) << 4)) - 32);
                q[128 * h + 32 + l] = (int8_t)(((b & 0x0F) | (((c >> 2) & 3) << 4)) - 32);
                q[128 * h + 64 + l] = (int8_t)(((a >> 4) | (((c >> 4) & 3) << 4)) - 32);
                q[128 * h + 96 + l] = (int8_t)(((b >> 4) | (((c >> 6) & 3) << 4)) - 32);
            }
        for (int g = 0; g < 16; g++) {
            t->sc[g] = s[g];
            t->mn[g] = 0;
        }
        break;
    }
    case GGML_TYPE_IQ4_XS: {  /* d scales_h scales_l[4] qs[128] */
        const uint16_t sh = vd_ld16(x + 2);
        const uint8_t * sl = x + 4, * qs = x + 8;
        t->da = vd_ldh(x); t->db = 0.0f;
        for (int ib = 0; ib < 8; ib++) {
            int ls = ((sl[ib / 2] >> (4 * (ib % 2))) & 0x0F) | (((sh >> (2 * ib)) & 3) << 4);
            t->sc[2 * ib] = t->sc[2 * ib + 1] = (int16_t)(ls - 32);
            t->mn[2 * ib] = t->mn[2 * ib + 1] = 0;
#if defined(__AVX2__)
            const __m128i t16 = _mm_loadu_si128((const __m128i *)(qs + 16 * ib));
            const __m256i nib = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t16, 4), t16),
                                                 _mm256_set1_epi8(0x0F));
            _mm256_store_si256((__m256i *)(q + 32 * ib), _mm256_shuffle_epi8(
                _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)kvalues_iq4nl)), nib));
#else
            for (int j = 0; j < 16; j++) {
                q[32 * ib + j] = kvalues_iq4nl[qs[16 * ib + j] & 0x0F];
                q[32 * ib + 16 + j] = kvalues_iq4nl[qs[16 * ib + j] >> 4];
            }
#endif
        }
        break;
    }
    case GGML_TYPE_TQ2_0: {  /* qs[64] d */
        t->da = vd_ldh(x + 64); t->db = 0.0f;
        for (int h = 0; h < 2; h++)
            for (int s = 0; s < 4; s++)
                for (int l = 0; l < 32; l++)
                    q[128 * h + 32 * s + l] = (int8_t)(((x[32 * h + l] >> (2 * s)) & 3) - 1);
        for (int g = 0; g < 16; g++) { t->sc[g] = 1; t->mn[g] = 0; }
        break;
    }
    case GGML_TYPE_TQ1_0: {  /* qs[48] qh[4] d: base-3 digits, 5 (qs) or 4 (qh) per byte */
        static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
        const uint8_t * qs = x, * qh = x + 48;
        t->da = vd_ldh(x + 52); t->db = 0.0f;
        for (int p = 0; p < 5; p++)
            for (int l = 0; l < 32; l++)
                q[32 * p + l] = (int8_t)((((uint16_t)(uint8_t)(qs[l] * pow3[p])) * 3 >> 8) - 1);
        for (int p = 0; p < 5; p++)
            for (int l = 0; l < 16; l++)
                q[160 + 16 * p + l] =
                    (int8_t)((((uint16_t)(uint8_t)(qs[32 + l] * pow3[p])) * 3 >> 8) - 1);
        for (int p = 0; p < 4; p++)
            for (int l = 0; l < 4; l++)
                q[240 + 4 * p + l] = (int8_t)((((uint16_t)(uint8_t)(qh[l] * pow3[p])) * 3 >> 8) - 1);
        for (int g = 0; g < 16; g++) { t->sc[g] = 1; t->mn[g] = 0; }
        break;
    }
    default:
        break;
    }
}

/* ------------------------------------------------------------------ integer primitives */
#if defined(__AVX2__)
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define VD_DPBUSD(acc, a, b) _mm256_dpbusd_epi32((acc), (a), (b))
#define VD_DPWSSD(acc, a, b) _mm256_dpwssd_epi32((acc), (a), (b))
#define VD_VNNI 1
#elif defined(__AVXVNNI__)
#define VD_DPBUSD(acc, a, b) _mm256_dpbusd_avx_epi32((acc), (a), (b))
#define VD_DPWSSD(acc, a, b) _mm256_dpwssd_avx_epi32((acc), (a), (b))
#define VD_VNNI 1
#else
#define VD_DPBUSD(acc, a, b) \
    _mm256_add_epi32((acc), _mm256_madd_epi16(_mm256_maddubs_epi16((a), (b)), _mm256_set1_epi16(1)))
#define VD_DPWSSD(acc, a, b) _mm256_add_epi32((acc), _mm256_madd_epi16((a), (b)))
#define VD_VNNI 0
#endif

static inline float vd_hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline int vd_hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}
#endif

/* ------------------------------------------------------------------ path A rows */
/* Path A's activation rows are re-laid out after quantization (mmq_convert_b): the Q8_0
 * / Q8_1 quants of the whole row first (32-byte aligned, so one aligned load per block),
 * then the block scales d as floats, then the block sums as floats: s = d * sum(q) (Q8_1's)
 * or, for Q8_0, the plain integer sum(q) (exact in a float; see vd_a_bias). The quants and
 * scales are exactly the Q8_0 / Q8_1 blocks' (float16 scales widened). */
static inline size_t vd_a_row_bytes(int64_t nb) { return (size_t)((40 * nb + 63) / 64 * 64); }

#if defined(__AVX2__)
/* Bytes 0xFF where bit j of v is set, 0 elsewhere (32 bits -> 32 bytes). */
static inline __m256i vd_bits32(uint32_t v) {
#if defined(__AVX512BW__) && defined(__AVX512VL__)
    return _mm256_movm_epi8((__mmask32)v);
#else
    const __m256i shuf = _mm256_set_epi64x(0x0303030303030303LL, 0x0202020202020202LL,
                                           0x0101010101010101LL, 0);
    __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32((int)v), shuf);
    bytes = _mm256_or_si256(bytes, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfeLL));
    return _mm256_cmpeq_epi8(bytes, _mm256_set1_epi64x(-1));
#endif
}

/* 16 bytes of nibbles -> 32 bytes: low nibbles (values 0-15) then high (16-31). */
static inline __m256i vd_nibbles(const uint8_t * qs) {
    const __m128i t = _mm_loadu_si128((const __m128i *)qs);
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0x0F));
}

/* One 32-block of a path-A type as 32 signed bytes, in registers. */
static inline __attribute__((always_inline)) __m256i vd_load_a(const int type, const uint8_t * p) {
    switch (type) {
    case GGML_TYPE_Q4_0: return _mm256_sub_epi8(vd_nibbles(p + 2), _mm256_set1_epi8(8));
    case GGML_TYPE_Q4_1: return vd_nibbles(p + 4);
    case GGML_TYPE_Q5_0:
        return _mm256_sub_epi8(_mm256_or_si256(vd_nibbles(p + 6), _mm256_and_si256(
            vd_bits32(vd_ld32(p + 2)), _mm256_set1_epi8(0x10))), _mm256_set1_epi8(16));
    case GGML_TYPE_Q5_1:
        return _mm256_or_si256(vd_nibbles(p + 8), _mm256_and_si256(
            vd_bits32(vd_ld32(p + 4)), _mm256_set1_epi8(0x10)));
    case GGML_TYPE_Q8_0: return _mm256_loadu_si256((const __m256i *)(p + 2));
    case GGML_TYPE_IQ4_NL:
        return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(
            _mm_loadu_si128((const __m128i *)kvalues_iq4nl)), vd_nibbles(p + 2));
    case GGML_TYPE_MXFP4:
        return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(
            _mm_loadu_si128((const __m128i *)kvalues_mxfp4)), vd_nibbles(p + 1));
    default: return _mm256_setzero_si256();
    }
}
#endif

static inline __attribute__((always_inline)) int vd_a_block_size(const int type) {
    switch (type) {
    case GGML_TYPE_Q4_0: case GGML_TYPE_IQ4_NL: return 18;
    case GGML_TYPE_Q4_1: return 20;
    case GGML_TYPE_Q5_0: return 22;
    case GGML_TYPE_Q5_1: return 24;
    case GGML_TYPE_Q8_0: return 34;
    case GGML_TYPE_MXFP4: return 17;
    default: return 0;
    }
}
static inline __attribute__((always_inline)) float vd_a_scale(const int type, const uint8_t * p) {
    return type == GGML_TYPE_MXFP4 ? vd_e8m0_half(p[0]) : vd_ldh(p);
}

/* Q4_0 and Q5_0 are unpacked without their bias (values 0..15 / 0..31, unsigned), and the
 * bias comes back through the activation block sums: dot(q - B, y) = dot(q, y) - B * sum(y).
 * The unsigned values go straight into the u8 x s8 instructions (no sign trick: 3 fewer
 * operations per block); sum(y) is stored by mmq_convert_b in the Q8_0 partner row's
 * sums slot (the one Q8_1 uses for d * sum). 0: a signed type (sign trick). */
static inline __attribute__((always_inline)) int vd_a_bias(const int type) {
    return type == GGML_TYPE_Q4_0 ? 8 : type == GGML_TYPE_Q5_0 ? 16 : 0;
}

#if defined(__AVX2__)
/* One 32-block as 32 bytes for the u8 x s8 product: the unsigned values of the biased
 * types (vd_a_bias), else the signed values (sign trick applied by the caller). */
static inline __attribute__((always_inline)) __m256i vd_load_a_u(const int type, const uint8_t * p) {
    switch (type) {
    case GGML_TYPE_Q4_0: return vd_nibbles(p + 2);
    case GGML_TYPE_Q5_0:
        return _mm256_or_si256(vd_nibbles(p + 6), _mm256_and_si256(
            vd_bits32(vd_ld32(p + 2)), _mm256_set1_epi8(0x10)));
    default: return vd_load_a(type, p);
    }
}

/* The float16 scales of 8 consecutive blocks (bs bytes apart), widened in one step. */
static inline __attribute__((always_inline)) __m256 vd_scales8(const int type, const uint8_t * p, int bs) {
    if (type == GGML_TYPE_MXFP4) {
        float d[8];
        for (int b = 0; b < 8; b++) d[b] = vd_e8m0_half(p[b * bs]);
        return _mm256_loadu_ps(d);
    }
    const uint64_t lo = (uint64_t)vd_ld16(p) | (uint64_t)vd_ld16(p + bs) << 16
        | (uint64_t)vd_ld16(p + 2 * bs) << 32 | (uint64_t)vd_ld16(p + 3 * bs) << 48;
    const uint64_t hi = (uint64_t)vd_ld16(p + 4 * bs) | (uint64_t)vd_ld16(p + 5 * bs) << 16
        | (uint64_t)vd_ld16(p + 6 * bs) << 32 | (uint64_t)vd_ld16(p + 7 * bs) << 48;
    return _mm256_cvtph_ps(_mm_set_epi64x((long long)hi, (long long)lo));
}

/* n (a constant 8 in the main loop, 1..8 at the tail) blocks from block ib on, NC columns.
 * Per column: acc (even blocks) and acc2 (odd blocks) take cvt(int32 lanes) * (dx * dy) in
 * this order, macc the offset / bias terms; every NC runs the same float operations per
 * column, so a column's bits never depend on how many columns a call takes. */
static inline __attribute__((always_inline))
void vd_group_a(const int type, const int NC, const int n, int64_t ib, int64_t nb,
                const uint8_t * xb, const uint8_t * y0, size_t ystride,
                __m256 * acc, __m256 * acc2, __m256 * macc) {
    const int bs = vd_a_block_size(type);
    const int off = vd_has_offset(type), bias = vd_a_bias(type);
    float sc[VD_NC][8] __attribute__((aligned(32)));
    if (n == 8) {
        const __m256 dxv = vd_scales8(type, xb, bs);
        const __m256 mxv = off ? vd_scales8(type, xb + 2, bs) : _mm256_setzero_ps();
        for (int c = 0; c < NC; c++) {
            const float * yd = (const float *)(y0 + c * ystride + 32 * nb) + ib;
            const __m256 scv = _mm256_mul_ps(dxv, _mm256_loadu_ps(yd));
            _mm256_store_ps(sc[c], scv);
            if (off) macc[c] = _mm256_fmadd_ps(mxv, _mm256_loadu_ps(yd + nb), macc[c]);
            if (bias) macc[c] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_loadu_ps(yd + nb),
                                                              _mm256_set1_ps((float)-bias)),
                                                scv, macc[c]);
        }
    } else {
        for (int b = 0; b < n; b++) {
            const float dx = vd_a_scale(type, xb + b * bs);
            const float mx = off ? vd_ldh(xb + b * bs + 2) : 0.0f;
            for (int c = 0; c < NC; c++) {
                const float * yd = (const float *)(y0 + c * ystride + 32 * nb) + ib;
                sc[c][b] = dx * yd[b];
                if (off) macc[c] = _mm256_add_ps(macc[c], _mm256_set_ps(0, 0, 0, 0, 0, 0, 0, mx * yd[nb + b]));
                if (bias) macc[c] = _mm256_add_ps(macc[c], _mm256_set_ps(
                    0, 0, 0, 0, 0, 0, 0, (yd[nb + b] * (float)-bias) * sc[c][b]));
            }
        }
    }
    for (int b = 0; b < n; b++) {
        const __m256i xq = vd_load_a_u(type, xb + b * bs);
        const __m256i ax = bias ? xq : _mm256_sign_epi8(xq, xq);
        for (int c = 0; c < NC; c++) {
            const __m256i yq = _mm256_load_si256((const __m256i *)(y0 + c * ystride + 32 * (ib + b)));
            const __m256i p = VD_DPBUSD(_mm256_setzero_si256(), ax, bias ? yq : _mm256_sign_epi8(yq, xq));
            const __m256 f = _mm256_cvtepi32_ps(p), s1 = _mm256_broadcast_ss(&sc[c][b]);
            if (b & 1) acc2[c] = _mm256_fmadd_ps(f, s1, acc2[c]);
            else acc[c] = _mm256_fmadd_ps(f, s1, acc[c]);
        }
    }
}
#endif

#if defined(__AVX512F__) && defined(__AVX512BW__)
/* The 512-bit form of vd_group_a's full group (n = 8) for Q4_0 and Q8_0: two blocks per
 * instruction. Block 2p goes to lanes 0-7 and block 2p+1 to lanes 8-15 with the 4-byte
 * groups of each 256-bit form, so each int32 lane holds the same sum as before, the low
 * half of acc512 is the 256-bit path's acc (even blocks) and the high half its acc2 (odd
 * blocks), updated by the same float operations in the same order: the bits are the
 * 256-bit path's. Why: a mat-vec with Q4_0 weights was bound by instructions per block
 * (measured 14 GB/s of weights on one core where Q8_0 reads 27). */
static inline int vd_a512_type(const int type) {
    return type == GGML_TYPE_Q4_0 || type == GGML_TYPE_Q8_0;
}

#if defined(__AVX512VNNI__)
#define VD_DPBUSD512(a, b) _mm512_dpbusd_epi32(_mm512_setzero_si512(), (a), (b))
#else
#define VD_DPBUSD512(a, b) _mm512_madd_epi16(_mm512_maddubs_epi16((a), (b)), _mm512_set1_epi16(1))
#endif

/* blocks 2p and 2p+1 (bs bytes apart from p0) as [x(2p) 32 bytes | x(2p+1) 32 bytes]:
 * Q4_0 its unsigned nibbles (low 16 then high 16 per block), Q8_0 its signed quants */
static inline __attribute__((always_inline)) __m512i vd_load_a2(const int type, const uint8_t * p0,
                                                                int bs) {
    if (type == GGML_TYPE_Q4_0) {
        const __m256i t = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p0 + 2))),
            _mm_loadu_si128((const __m128i *)(p0 + bs + 2)), 1);
        /* [A, B, A >> 4, B >> 4] -> [A, A >> 4, B, B >> 4], then the low nibbles */
        const __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(t), _mm256_srli_epi16(t, 4), 1);
        return _mm512_and_si512(_mm512_shuffle_i64x2(z, z, 0xD8), _mm512_set1_epi8(0x0F));
    }
    return _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(p0 + 2))),
        _mm256_loadu_si256((const __m256i *)(p0 + bs + 2)), 1);
}

static inline __attribute__((always_inline))
void vd_group_a512(const int type, const int NC, int64_t ib, int64_t nb, const uint8_t * xb,
                   const uint8_t * y0, size_t ystride, __m512 * acc512, __m256 * macc) {
    const int bs = vd_a_block_size(type), bias = vd_a_bias(type);
    const __m256 dxv = vd_scales8(type, xb, bs);
    __m512 scv[VD_NC];
    for (int c = 0; c < NC; c++) {
        const float * yd = (const float *)(y0 + c * ystride + 32 * nb) + ib;
        const __m256 sc = _mm256_mul_ps(dxv, _mm256_loadu_ps(yd));
        scv[c] = _mm512_castps256_ps512(sc);
        if (bias) macc[c] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_loadu_ps(yd + nb),
                                                          _mm256_set1_ps((float)-bias)),
                                            sc, macc[c]);
    }
    for (int p = 0; p < 4; p++) {
        const __m512i xq = vd_load_a2(type, xb + 2 * p * bs, bs);
        /* Q8_0: |x| and y with x's sign (AVX-512 has no vpsignb; where x = 0 the product
         * is 0 either way) */
        const __mmask64 neg = bias ? 0 : _mm512_movepi8_mask(xq);
        const __m512i ax = bias ? xq : _mm512_abs_epi8(xq);
        const __m512i idx = _mm512_set_epi32(2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1,
                                             2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1,
                                             2 * p, 2 * p, 2 * p, 2 * p, 2 * p, 2 * p, 2 * p, 2 * p);
        for (int c = 0; c < NC; c++) {
            const __m512i yq = _mm512_loadu_si512((const void *)(y0 + c * ystride + 32 * (ib + 2 * p)));
            const __m512i sy = bias ? yq : _mm512_mask_sub_epi8(yq, neg, _mm512_setzero_si512(), yq);
            const __m512 f = _mm512_cvtepi32_ps(VD_DPBUSD512(ax, sy));
            acc512[c] = _mm512_fmadd_ps(f, _mm512_permutexvar_ps(idx, scv[c]), acc512[c]);
        }
    }
}
/* Sixteen Q4_0 or Q8_0 rows from their row-interleaved copy (matvec_repack.h; nb a
 * multiple of 8) against one converted activation row y: s[i] for rows i < nr. Lane r of
 * every vector is row r, and each row gets exactly the float operations vd_row_a gives it,
 * in the same order (so the bits are the row-wise path's at every dispatch level): per
 * block b the scale sc = dx * dy; the int32 sums of the eight 4-byte groups l (lane l of
 * the row-wise path: Q4_0 values 4l.. of the low nibbles for l < 4, 16 + 4(l-4).. of the
 * high ones; Q8_0 values 4l..4l+3), each turned into a float and FMA'd with sc into A[l]
 * (even blocks) or B[l] (odd blocks); Q4_0's bias fma(-8 sum(y_b), sc, M[b % 8]); at the
 * end vd_hsum_ps's tree over (A[l] + B[l]) + M[l] (M zero for Q8_0, as there). One
 * instruction then serves 16 rows instead of a tile of one row. */
static inline __attribute__((always_inline))
void vd_rp16(const int q8, int64_t nb, const uint8_t * xg, const uint8_t * y, float * s, int nr) {
    const int64_t bbytes = q8 ? MM_RP_Q8_0_BLOCK : MM_RP_Q4_0_BLOCK;
    const float * yd = (const float *)(y + 32 * nb);
    const float * ys = yd + nb;
    __m512 A[8], B[8], Mb[8];
    for (int l = 0; l < 8; l++) { A[l] = _mm512_setzero_ps(); B[l] = _mm512_setzero_ps(); Mb[l] = _mm512_setzero_ps(); }
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    for (int64_t ib = 0; ib < nb; ib += 8) {
        for (int b = 0; b < 8; b++) {
            const uint8_t * blk = xg + (ib + b) * bbytes;
            const int32_t * yq = (const int32_t *)(y + 32 * (ib + b));
            const __m512 sc = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)blk)),
                                            _mm512_set1_ps(yd[ib + b]));
            if (!q8) Mb[b] = _mm512_fmadd_ps(_mm512_set1_ps(ys[ib + b] * -8.0f), sc, Mb[b]);
            for (int j = 0; j < (q8 ? 8 : 4); j++) {
                const __m512i w = _mm512_loadu_si512((const void *)(blk + 32 + 64 * j));
                __m512 f0, f1 = _mm512_setzero_ps();
                if (q8) {   /* |x| and y with x's sign, as vd_group_a512 */
                    const __m512i yb = _mm512_set1_epi32(yq[j]);
                    const __m512i sy = _mm512_mask_sub_epi8(yb, _mm512_movepi8_mask(w), _mm512_setzero_si512(), yb);
                    f0 = _mm512_cvtepi32_ps(VD_DPBUSD512(_mm512_abs_epi8(w), sy));
                } else {
                    const __m512i lo = _mm512_and_si512(w, m4);
                    const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(w, 4), m4);
                    f0 = _mm512_cvtepi32_ps(VD_DPBUSD512(lo, _mm512_set1_epi32(yq[j])));
                    f1 = _mm512_cvtepi32_ps(VD_DPBUSD512(hi, _mm512_set1_epi32(yq[4 + j])));
                }
                if (b & 1) {
                    B[j] = _mm512_fmadd_ps(f0, sc, B[j]);
                    if (!q8) B[4 + j] = _mm512_fmadd_ps(f1, sc, B[4 + j]);
                } else {
                    A[j] = _mm512_fmadd_ps(f0, sc, A[j]);
                    if (!q8) A[4 + j] = _mm512_fmadd_ps(f1, sc, A[4 + j]);
                }
            }
        }
    }
    __m512 T[8];
    for (int l = 0; l < 8; l++) T[l] = _mm512_add_ps(_mm512_add_ps(A[l], B[l]), Mb[l]);
    const __m512 r = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(T[0], T[4]), _mm512_add_ps(T[2], T[6])),
                                   _mm512_add_ps(_mm512_add_ps(T[1], T[5]), _mm512_add_ps(T[3], T[7])));
    _mm512_mask_storeu_ps(s, nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1u), r);
}
static void vd_q4_0_rp16(int64_t nb, const uint8_t * xg, const uint8_t * y, float * s, int nr) {
    vd_rp16(0, nb, xg, y, s, nr);
}
static void vd_q8_0_rp16(int64_t nb, const uint8_t * xg, const uint8_t * y, float * s, int nr) {
    vd_rp16(1, nb, xg, y, s, nr);
}
#define VD_Q4_0_RP 1
#endif


/* s[c * os] = dot(weight row x (nb 32-blocks of `type`), activation row c), for NC
 * columns whose converted rows (vd_a_row_bytes) start at y0 + c * ystride. */
static inline __attribute__((always_inline))
void vd_row_a(const int type, const int NC, int64_t nb, const uint8_t * x, size_t xbs,
              const uint8_t * y0, size_t ystride, float * s, int64_t os) {
    const int bs = vd_a_block_size(type);
    (void)xbs;
#if defined(__AVX2__)
    /* two accumulators per column (even / odd blocks): a mat-vec (NC = 1) is otherwise one
     * chain of dependent FMAs, bound by their latency */
    __m256 acc[VD_NC], acc2[VD_NC], macc[VD_NC];
    for (int c = 0; c < NC; c++) {
        acc[c] = _mm256_setzero_ps(); acc2[c] = _mm256_setzero_ps(); macc[c] = _mm256_setzero_ps();
    }
    int64_t ib = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__)
    if (vd_a512_type(type) && nb >= 8) {
        __m512 acc512[VD_NC];
        for (int c = 0; c < NC; c++) acc512[c] = _mm512_setzero_ps();
        for (; ib + 8 <= nb; ib += 8)
            vd_group_a512(type, NC, ib, nb, x + ib * bs, y0, ystride, acc512, macc);
        for (int c = 0; c < NC; c++) {
            acc[c] = _mm512_castps512_ps256(acc512[c]);
            acc2[c] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc512[c]), 1));
        }
    }
#endif
    for (; ib + 8 <= nb; ib += 8)
        vd_group_a(type, NC, 8, ib, nb, x + ib * bs, y0, ystride, acc, acc2, macc);
    if (ib < nb)
        vd_group_a(type, NC, (int)(nb - ib), ib, nb, x + ib * bs, y0, ystride, acc, acc2, macc);
    for (int c = 0; c < NC; c++)
        s[c * os] = vd_hsum_ps(_mm256_add_ps(_mm256_add_ps(acc[c], acc2[c]), macc[c]));
#else
    const int off = vd_has_offset(type);
    float acc[VD_NC];
    vd_tile_a t;
    for (int c = 0; c < NC; c++) acc[c] = 0.0f;
    for (int64_t ib = 0; ib < nb; ib += 8) {
        const int n = nb - ib < 8 ? (int)(nb - ib) : 8;
        vd_unpack_a(type, x + ib * bs, n, &t);
        for (int b = 0; b < n; b++) {
            const int8_t * xq = t.q + 32 * b;
            for (int c = 0; c < NC; c++) {
                const uint8_t * yr = y0 + c * ystride;
                const int8_t * yq = (const int8_t *)yr + 32 * (ib + b);
                const float * yd = (const float *)(yr + 32 * nb);
                int32_t p = 0;
                for (int j = 0; j < 32; j++) p += (int32_t)xq[j] * yq[j];
                acc[c] += (float)p * (t.d[b] * yd[ib + b]);
                if (off) acc[c] += t.m[b] * yd[nb + ib + b];
            }
        }
    }
    for (int c = 0; c < NC; c++) s[c * os] = acc[c];
#endif
}

/* ------------------------------------------------------------------ path B rows */
static inline __attribute__((always_inline))
void vd_row_b(const int type, const int NC, int64_t nb, const uint8_t * x, size_t xbs,
              const uint8_t * y0, size_t ystride, float * s, int64_t out_stride) {
    float macc[VD_NC];
    vd_tile_b t;
#if defined(__AVX2__)
    __m256 acc[VD_NC];
    for (int c = 0; c < NC; c++) { acc[c] = _mm256_setzero_ps(); macc[c] = 0.0f; }
    for (int64_t ib = 0; ib < nb; ib++) {
        vd_unpack_b(type, x + ib * xbs, &t);
        __m256i sumi[VD_NC];
        for (int c = 0; c < NC; c++) sumi[c] = _mm256_setzero_si256();
        const uint8_t * yb = y0 + ib * VD_Q8_K_SIZE;
        for (int k = 0; k < 8; k++) {
            const __m256i xq = _mm256_load_si256((const __m256i *)(t.q + 32 * k));
            const __m256i ax = _mm256_sign_epi8(xq, xq);
            /* 16-bit lanes 0-7 hold the pair sums of the first 16 values, 8-15 the next */
            const __m256i scv = _mm256_set_m128i(_mm_set1_epi16(t.sc[2 * k + 1]),
                                                 _mm_set1_epi16(t.sc[2 * k]));
            for (int c = 0; c < NC; c++) {
                const uint8_t * yc = yb + c * ystride;
                const __m256i sy = _mm256_sign_epi8(
                    _mm256_loadu_si256((const __m256i *)(yc + 4 + 32 * k)), xq);
                sumi[c] = VD_DPWSSD(sumi[c], _mm256_maddubs_epi16(ax, sy), scv);
            }
        }
        for (int c = 0; c < NC; c++) {
            const uint8_t * yc = yb + c * ystride;
            float yd;
            memcpy(&yd, yc, 4);
            acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi[c]), _mm256_set1_ps(t.da * yd), acc[c]);
            if (vd_has_min(type)) {
                const __m256i mm = _mm256_madd_epi16(_mm256_load_si256((const __m256i *)t.mn),
                                                     _mm256_loadu_si256((const __m256i *)(yc + 260)));
                macc[c] -= t.db * yd * (float)vd_hsum_epi32(mm);
            }
        }
    }
    for (int c = 0; c < NC; c++) s[c * out_stride] = vd_hsum_ps(acc[c]) + macc[c];
#else
    float acc[VD_NC];
    for (int c = 0; c < NC; c++) { acc[c] = 0.0f; macc[c] = 0.0f; }
    for (int64_t ib = 0; ib < nb; ib++) {
        vd_unpack_b(type, x + ib * xbs, &t);
        const uint8_t * yb = y0 + ib * VD_Q8_K_SIZE;
        for (int c = 0; c < NC; c++) {
            const uint8_t * yc = yb + c * ystride;
            const int8_t * yq = (const int8_t *)(yc + 4);
            int16_t bs[16];
            float yd;
            memcpy(&yd, yc, 4);
            memcpy(bs, yc + 260, 32);
            int32_t sumi = 0, summ = 0;
            for (int g = 0; g < 16; g++) {
                int32_t p = 0;
                for (int j = 0; j < 16; j++) p += (int32_t)t.q[16 * g + j] * yq[16 * g + j];
                sumi += p * t.sc[g];
                summ += (int32_t)t.mn[g] * bs[g];
            }
            acc[c] += t.da * yd * (float)sumi;
            if (vd_has_min(type)) macc[c] -= t.db * yd * (float)summ;
        }
    }
    for (int c = 0; c < NC; c++) s[c * out_stride] = acc[c] + macc[c];
#endif
}

#if defined(__AVX2__)
/* Q4_K and Q6_K, the K-quants models use most, without the tile: each 32-value chunk k
 * is built in registers straight from the block. The integer steps (products, pair sums,
 * scales) and the float steps are vd_row_b's, so the bits are the same as the tile path's;
 * Q4_K's values are unsigned (0..15), so its chunks skip the sign trick. */
static inline __attribute__((always_inline)) __m256i vd_chunk_b(const int type, const uint8_t * x, int k) {
    if (type == GGML_TYPE_Q4_K) {            /* d dmin scales[12] qs[128] */
        const __m256i q = _mm256_loadu_si256((const __m256i *)(x + 16 + 32 * (k / 2)));
        return _mm256_and_si256(k & 1 ? _mm256_srli_epi16(q, 4) : q, _mm256_set1_epi8(0x0F));
    }
    /* Q6_K: ql[128] qh[64] scales[16] d; chunk k = 4h + s */
    const int h = k / 4, sub = k % 4;
    const __m256i l = _mm256_loadu_si256((const __m256i *)(x + 64 * h + 32 * (sub & 1)));
    const __m256i qh = _mm256_loadu_si256((const __m256i *)(x + 128 + 32 * h));
    const __m256i lo = _mm256_and_si256(sub >= 2 ? _mm256_srli_epi16(l, 4) : l, _mm256_set1_epi8(0x0F));
    const __m256i hb = sub == 0 ? _mm256_slli_epi16(qh, 4) : sub == 1 ? _mm256_slli_epi16(qh, 2)
                     : sub == 2 ? qh : _mm256_srli_epi16(qh, 2);
    return _mm256_sub_epi8(_mm256_or_si256(lo, _mm256_and_si256(hb, _mm256_set1_epi8(0x30))),
                           _mm256_set1_epi8(32));
}

static inline __attribute__((always_inline))
void vd_row_b_direct(const int type, const int NC, int64_t nb, const uint8_t * x, size_t xbs,
                     const uint8_t * y0, size_t ystride, float * s, int64_t out_stride) {
    const int sgn = type != GGML_TYPE_Q4_K;
    __m256 acc[VD_NC];
    float macc[VD_NC];
    int16_t sc[16] __attribute__((aligned(32))), mn[16] __attribute__((aligned(32)));
    for (int c = 0; c < NC; c++) { acc[c] = _mm256_setzero_ps(); macc[c] = 0.0f; }
    for (int64_t ib = 0; ib < nb; ib++) {
        const uint8_t * xb = x + ib * xbs;
        float da, db = 0.0f;
        if (type == GGML_TYPE_Q4_K) {
            da = vd_ldh(xb); db = vd_ldh(xb + 2);
            /* the 8 six-bit (scale, min) pairs of get_scale_min_k4, four at a time */
            uint32_t u[4];
            memcpy(u, xb + 4, 12);
            const uint32_t m6 = 0x3f3f3f3fu, m4 = 0x0f0f0f0fu, m2 = 0x03030303u;
            u[3] = ((u[2] >> 4) & m4) | (((u[1] >> 6) & m2) << 4);   /* mins 4-7 */
            const uint32_t mins03 = u[1] & m6;
            u[1] = (u[2] & m4) | (((u[0] >> 6) & m2) << 4);          /* scales 4-7 */
            u[2] = mins03;
            u[0] &= m6;                                              /* scales 0-3 */
            const __m256i sm = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)u));
            /* sc[j] = scale j (one per 32 values: chunk k uses sc[k]); mn: min j twice */
            _mm256_store_si256((__m256i *)sc, sm);
            const __m128i m8 = _mm256_extracti128_si256(sm, 1);
            _mm256_store_si256((__m256i *)mn, _mm256_set_m128i(_mm_unpackhi_epi16(m8, m8),
                                                               _mm_unpacklo_epi16(m8, m8)));
        } else {
            da = vd_ldh(xb + 208);
            _mm256_store_si256((__m256i *)sc, _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(xb + 192))));
        }
        __m256i sumi[VD_NC];
        for (int c = 0; c < NC; c++) sumi[c] = _mm256_setzero_si256();
        const uint8_t * yb = y0 + ib * VD_Q8_K_SIZE;
        for (int k = 0; k < 8; k++) {
            const __m256i xq = vd_chunk_b(type, xb, k);
            const __m256i ax = sgn ? _mm256_sign_epi8(xq, xq) : xq;
            const __m256i scv = type == GGML_TYPE_Q4_K ? _mm256_set1_epi16(sc[k]) :
                _mm256_set_m128i(_mm_set1_epi16(sc[2 * k + 1]), _mm_set1_epi16(sc[2 * k]));
            for (int c = 0; c < NC; c++) {
                const __m256i yq = _mm256_loadu_si256((const __m256i *)(yb + c * ystride + 4 + 32 * k));
                const __m256i sy = sgn ? _mm256_sign_epi8(yq, xq) : yq;
                sumi[c] = VD_DPWSSD(sumi[c], _mm256_maddubs_epi16(ax, sy), scv);
            }
        }
        for (int c = 0; c < NC; c++) {
            const uint8_t * yc = yb + c * ystride;
            float yd;
            memcpy(&yd, yc, 4);
            acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi[c]), _mm256_set1_ps(da * yd), acc[c]);
            if (type == GGML_TYPE_Q4_K) {
                const __m256i mm = _mm256_madd_epi16(_mm256_load_si256((const __m256i *)mn),
                                                     _mm256_loadu_si256((const __m256i *)(yc + 260)));
                macc[c] -= db * yd * (float)vd_hsum_epi32(mm);
            }
        }
    }
    for (int c = 0; c < NC; c++) s[c * out_stride] = vd_hsum_ps(acc[c]) + macc[c];
}
/* Q6_K: the direct path for 1-2 columns (a mat-vec), the tile for more, where one
 * unpacked tile serves many columns (measured faster at 8); the bits are the same. */
static inline __attribute__((always_inline))
void vd_row_q6k(const int type, const int NC, int64_t nb, const uint8_t * x, size_t xbs,
                const uint8_t * y0, size_t ystride, float * s, int64_t out_stride) {
    if (NC <= 2) vd_row_b_direct(type, NC, nb, x, xbs, y0, ystride, s, out_stride);
    else vd_row_b(type, NC, nb, x, xbs, y0, ystride, s, out_stride);
}
#define VD_ROW_B_Q4K vd_row_b_direct
#define VD_ROW_B_Q6K vd_row_q6k
#else
#define VD_ROW_B_Q4K vd_row_b
#define VD_ROW_B_Q6K vd_row_b
#endif

/* ------------------------------------------------------------------ dispatch */
/* One weight row against nc (1..VD_NC) partner rows. */
typedef void (*vd_rows_fn)(int nc, int64_t nb, const uint8_t * x, size_t xbs,
                           const uint8_t * y0, size_t ystride, float * s, int64_t out_stride);

#define VD_DEFINE_ROWS(NAME, PATH, TYPE)                                                  \
    static void NAME(int nc, int64_t nb, const uint8_t * x, size_t xbs,                  \
                     const uint8_t * y0, size_t ystride, float * s, int64_t os) {         \
        while (nc > 0) {                                                                  \
            if (nc >= 8) { PATH(TYPE, 8, nb, x, xbs, y0, ystride, s, os); nc -= 8; y0 += 8 * ystride; s += 8 * os; } \
            else if (nc >= 4) { PATH(TYPE, 4, nb, x, xbs, y0, ystride, s, os); nc -= 4; y0 += 4 * ystride; s += 4 * os; } \
            else if (nc >= 2) { PATH(TYPE, 2, nb, x, xbs, y0, ystride, s, os); nc -= 2; y0 += 2 * ystride; s += 2 * os; } \
            else { PATH(TYPE, 1, nb, x, xbs, y0, ystride, s, os); nc -= 1; }             \
        }                                                                                 \
    }

VD_DEFINE_ROWS(vd_rows_q4_0, vd_row_a, GGML_TYPE_Q4_0)
VD_DEFINE_ROWS(vd_rows_q4_1, vd_row_a, GGML_TYPE_Q4_1)
VD_DEFINE_ROWS(vd_rows_q5_0, vd_row_a, GGML_TYPE_Q5_0)
VD_DEFINE_ROWS(vd_rows_q5_1, vd_row_a, GGML_TYPE_Q5_1)
VD_DEFINE_ROWS(vd_rows_q8_0, vd_row_a, GGML_TYPE_Q8_0)
VD_DEFINE_ROWS(vd_rows_iq4_nl, vd_row_a, GGML_TYPE_IQ4_NL)
VD_DEFINE_ROWS(vd_rows_mxfp4, vd_row_a, GGML_TYPE_MXFP4)
VD_DEFINE_ROWS(vd_rows_q2_k, vd_row_b, GGML_TYPE_Q2_K)
VD_DEFINE_ROWS(vd_rows_q3_k, vd_row_b, GGML_TYPE_Q3_K)
VD_DEFINE_ROWS(vd_rows_q4_k, VD_ROW_B_Q4K, GGML_TYPE_Q4_K)
VD_DEFINE_ROWS(vd_rows_q5_k, vd_row_b, GGML_TYPE_Q5_K)
VD_DEFINE_ROWS(vd_rows_q6_k, VD_ROW_B_Q6K, GGML_TYPE_Q6_K)
VD_DEFINE_ROWS(vd_rows_iq4_xs, vd_row_b, GGML_TYPE_IQ4_XS)
VD_DEFINE_ROWS(vd_rows_tq1_0, vd_row_b, GGML_TYPE_TQ1_0)
VD_DEFINE_ROWS(vd_rows_tq2_0, vd_row_b, GGML_TYPE_TQ2_0)

static inline vd_rows_fn vd_rows_for(int type) {
    switch (type) {
    case GGML_TYPE_Q4_0: return vd_rows_q4_0;
    case GGML_TYPE_Q4_1: return vd_rows_q4_1;
    case GGML_TYPE_Q5_0: return vd_rows_q5_0;
    case GGML_TYPE_Q5_1: return vd_rows_q5_1;
    case GGML_TYPE_Q8_0: return vd_rows_q8_0;
    case GGML_TYPE_IQ4_NL: return vd_rows_iq4_nl;
    case GGML_TYPE_MXFP4: return vd_rows_mxfp4;
    case GGML_TYPE_Q2_K: return vd_rows_q2_k;
    case GGML_TYPE_Q3_K: return vd_rows_q3_k;
    case GGML_TYPE_Q4_K: return vd_rows_q4_k;
    case GGML_TYPE_Q5_K: return vd_rows_q5_k;
    case GGML_TYPE_Q6_K: return vd_rows_q6_k;
    case GGML_TYPE_IQ4_XS: return vd_rows_iq4_xs;
    case GGML_TYPE_TQ1_0: return vd_rows_tq1_0;
    case GGML_TYPE_TQ2_0: return vd_rows_tq2_0;
    default: return NULL;
    }
}

#endif
