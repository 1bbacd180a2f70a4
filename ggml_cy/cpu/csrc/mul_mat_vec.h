/* MUL_MAT with f32 / f16 / bf16 weights and few columns (decode: one token's activations):
 * dst[n][m] = sum_k a[m][k] * b[n][k] straight from a's rows, without mul_mat.h's packing.
 *
 * mul_mat.h's blocked GEMM packs a (converting f16/bf16 to f32) into panels before its
 * micro-kernel; with one column of b every packed value is used once, so a decode step
 * spent most of its time converting and copying weights (F16 decode of a 100M model: 2 GB/s
 * of weights on one thread). Here each row of a is read once, converted in registers
 * (F16C / AVX-512 conversions where the build has them) and multiplied with every column
 * of b (at most MMV_MAX_N, kept in cache), so the product runs at the speed the weights can
 * be read. Rows are split over the threads in blocks of MMV_ROWS (batch dims included,
 * a broadcast over dims 2-3 as in mul_mat.h).
 *
 * Summation: per row and column, two vector accumulators (AVX-512: 16 lanes, AVX2: 8)
 * over k, added at the end, then the tail; an f32 result within float rounding of the
 * GEMM path's (the order differs, as between any two BLAS). mul_mat.h has a mat-vec path
 * of its own that keeps the GEMM's order of sums bit for bit; this one is taken first
 * by the graph executor because it streams the weights ~3x faster (one thread, f16
 * 768 x 16384: 0.95 ms = 26 GB/s against 3.0 ms = 8.4 GB/s on the development VM). */
#ifndef GGML_CY_MUL_MAT_VEC_H
#define GGML_CY_MUL_MAT_VEC_H
#include <stdint.h>
#include <string.h>
#include "core_defs.h"
#if defined(__AVX2__) || defined(__F16C__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#define MMV_MAX_N 4      /* at most this many columns of b take this path */
#define MMV_ROWS 16      /* rows of a per task */

static inline float mmv_h2f(uint16_t h) {
#if defined(__F16C__)
    return _cvtsh_ss(h);
#else
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
    if (exp == 0x1f) bits = sign | 0x7f800000u | (man << 13);
    else if (exp != 0) bits = sign | ((exp + 112u) << 23) | (man << 13);
    else if (man == 0) bits = sign;
    else {
        int e = -1;
        do { man <<= 1; e++; } while ((man & 0x400u) == 0);
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
#endif
}

static inline float mmv_load1(const char * a, int type, int64_t k) {
    if (type == GGML_TYPE_F32) return ((const float *)a)[k];
    if (type == GGML_TYPE_F16) return mmv_h2f(((const uint16_t *)a)[k]);
    uint32_t bits = (uint32_t)((const uint16_t *)a)[k] << 16;   /* bf16 */
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* 1 when this node takes the mat-vec path: float weights with adjacent elements, f32 b
 * with adjacent elements, an f32 dst with adjacent elements, few columns. */
static inline int mmv_applies(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0], * b = dst->src[1];
    if (!a || !b) return 0;
    if (a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16 && a->type != GGML_TYPE_BF16) return 0;
    if (b->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32) return 0;
    const int64_t es = a->type == GGML_TYPE_F32 ? 4 : 2;
    if (b->ne[1] > MMV_MAX_N || b->ne[1] < 1 || a->ne[0] < 1) return 0;
    return a->nb[0] == es && b->nb[0] == 4 && dst->nb[0] == 4;
}

#if defined(__AVX512F__)
#define MMV_W 16
typedef __m512 mmv_vec;
static inline mmv_vec mmv_zero(void) { return _mm512_setzero_ps(); }
static inline mmv_vec mmv_loada(const char * a, int type, int64_t k) {
    if (type == GGML_TYPE_F32) return _mm512_loadu_ps((const float *)a + k);
    const __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)a + k));
    if (type == GGML_TYPE_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
static inline mmv_vec mmv_loadb(const float * b, int64_t k) { return _mm512_loadu_ps(b + k); }
static inline mmv_vec mmv_fma(mmv_vec x, mmv_vec y, mmv_vec acc) { return _mm512_fmadd_ps(x, y, acc); }
static inline mmv_vec mmv_add(mmv_vec x, mmv_vec y) { return _mm512_add_ps(x, y); }
static inline float mmv_hsum(mmv_vec v) { return _mm512_reduce_add_ps(v); }
#elif defined(__AVX2__) && defined(__F16C__) && defined(__FMA__)
#define MMV_W 8
typedef __m256 mmv_vec;
static inline mmv_vec mmv_zero(void) { return _mm256_setzero_ps(); }
static inline mmv_vec mmv_loada(const char * a, int type, int64_t k) {
    if (type == GGML_TYPE_F32) return _mm256_loadu_ps((const float *)a + k);
    const __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)a + k));
    if (type == GGML_TYPE_F16) return _mm256_cvtph_ps(h);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
static inline mmv_vec mmv_loadb(const float * b, int64_t k) { return _mm256_loadu_ps(b + k); }
static inline mmv_vec mmv_fma(mmv_vec x, mmv_vec y, mmv_vec acc) { return _mm256_fmadd_ps(x, y, acc); }
static inline mmv_vec mmv_add(mmv_vec x, mmv_vec y) { return _mm256_add_ps(x, y); }
static inline float mmv_hsum(mmv_vec v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
#endif

/* dot products of one row of a (K values of `type`) with N rows of b into out[0..N). */
static inline void mmv_row(const char * a, int type, const float * const * bs, int N,
                           int64_t K, float * out) {
    int64_t k0 = 0;
    float acc[MMV_MAX_N];
#if defined(MMV_W)
    {
        /* 2 vector accumulators per column: a's row is streamed once */
        mmv_vec s0[MMV_MAX_N], s1[MMV_MAX_N];
        for (int n = 0; n < N; n++) { s0[n] = mmv_zero(); s1[n] = mmv_zero(); }
        const int64_t K2 = K / (2 * MMV_W) * (2 * MMV_W);
        for (; k0 < K2; k0 += 2 * MMV_W) {
            const mmv_vec x0 = mmv_loada(a, type, k0), x1 = mmv_loada(a, type, k0 + MMV_W);
            for (int n = 0; n < N; n++) {
                s0[n] = mmv_fma(x0, mmv_loadb(bs[n], k0), s0[n]);
                s1[n] = mmv_fma(x1, mmv_loadb(bs[n], k0 + MMV_W), s1[n]);
            }
        }
        for (int n = 0; n < N; n++) acc[n] = mmv_hsum(mmv_add(s0[n], s1[n]));
    }
#else
    for (int n = 0; n < N; n++) acc[n] = 0.0f;
#endif
    for (int64_t k = k0; k < K; k++) {
        const float x = mmv_load1(a, type, k);
        for (int n = 0; n < N; n++) acc[n] += x * bs[n][k];
    }
    for (int n = 0; n < N; n++) out[n] = acc[n];
}

/* Thread ith of nth: its blocks of MMV_ROWS rows over all batches. */
static inline void mmv_compute(const ggml_tensor * dst, int ith, int nth) {
    const ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const int64_t K = a->ne[0], M = a->ne[1], N = b->ne[1];
    const int64_t ne2 = dst->ne[2], ne3 = dst->ne[3];
    const int64_t r2 = ne2 / a->ne[2], r3 = ne3 / a->ne[3];
    const int64_t nblk = (M + MMV_ROWS - 1) / MMV_ROWS;
    const int64_t total = nblk * ne2 * ne3;
    const int64_t t0 = total * ith / nth, t1 = total * (ith + 1) / nth;
    const float * bs[MMV_MAX_N];
    float out[MMV_MAX_N];
    for (int64_t t = t0; t < t1; t++) {
        const int64_t blk = t % nblk, i2 = (t / nblk) % ne2, i3 = t / (nblk * ne2);
        const char * ab = (const char *)a->data + (i2 / r2) * a->nb[2] + (i3 / r3) * a->nb[3];
        for (int64_t n = 0; n < N; n++)
            bs[n] = (const float *)((const char *)b->data + n * b->nb[1] + i2 * b->nb[2] +
                                    i3 * b->nb[3]);
        char * db = (char *)dst->data + i2 * dst->nb[2] + i3 * dst->nb[3];
        const int64_t m1 = (blk + 1) * MMV_ROWS < M ? (blk + 1) * MMV_ROWS : M;
        for (int64_t m = blk * MMV_ROWS; m < m1; m++) {
            mmv_row(ab + m * a->nb[1], a->type, bs, (int)N, K, out);
            for (int64_t n = 0; n < N; n++) ((float *)(db + n * dst->nb[1]))[m] = out[n];
        }
    }
}
#endif
