/* BF16 weights in mul_mat (src0 BF16), ggml's rule: the vec-dot partner of BF16 is BF16, so
 * b (src1, f32) is rounded to bf16 (ggml_compute_fp32_to_bf16: round to nearest even, NaN
 * kept NaN and made quiet), every product of two bf16 values is exact in f32, and the sums
 * run in f32. Included by mul_mat.h (it uses that header's blocking constants and mm_tr16).
 *
 * Two variants, chosen per call (mm_bf16_dp):
 *  - AVX512_BF16 (VDPBF16PS: per f32 lane, the two bf16 products of a dword pair added into
 *    the accumulator): a and b are handled as dwords holding the pair (x[2p], x[2p+1]), an
 *    odd K padded with a zero pair half. Per K block of MM_KC (an even count, so pairs never
 *    straddle blocks) every dst element is the chain of VDPBF16PS over its pairs in order
 *    starting from zero, the blocks' sums added in order, on the packed path (mm_bf16_pack_a,
 *    mm_bf16_pack_b, mm_bf16_micro: 8 x 32 tile, per pair 2 loads of a, 8 dword broadcasts of
 *    b, 16 VDPBF16PS) and on the mat-vec path (mm_bf16_gemv_block: 16 rows of a loaded as
 *    dwords, transposed in registers) alike: the same bits at every thread count, and a row of
 *    b alone gives the bits it gives inside a batch. VDPBF16PS treats bf16 subnormals as zero
 *    and flushes subnormal results (Intel's definition), so do these bits.
 *  - elsewhere (no AVX512_BF16, or GGML_CY_CPU_FEATURES capping the level at avx512 or
 *    lower): mul_mat.h's f32 code on the widened a with b rounded by mm_round_bf16 (pack_b,
 *    the mat-vec's b block), an FMA per element in VDPBF16PS's order: per pair the odd
 *    element's product first, then the even one's (Intel's definition of VDPBF16PS, which
 *    AMD Zen 4 matches; the packed panels get their pair rows swapped, mm_bf16_swap_pairs,
 *    the mat-vec walks k as mm_bf16_order says). A product of two bf16 values is exact,
 *    so FMA and multiply-then-add agree, and every level gives the VDPBF16PS variant's bits
 *    except where that one flushes subnormals (bf16 inputs or f32 results) or a sum of zeros
 *    with an odd K (its padded 0 * 0 turns -0 into +0).
 * The row-interleaved copy (matvec_repack.h) of a BF16 matrix holds the pairs as dwords,
 * 16 rows side by side: mm_bf16_gemv_rp runs the same VDPBF16PS chains on it with no
 * transposes (the same bits); the f32 variant ignores the copy (mm_bf16_rp_used).
 * An AMX variant of the packed path would slot in beside mm_bf16_pack_a / _pack_b / _micro
 * (tiles of pairs: the same dword layout), chosen in mul_mat.h's mm_task as these are. */
#ifndef GGML_CY_MUL_MAT_BF16_H
#define GGML_CY_MUL_MAT_BF16_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(MM_AVX512)
#include <strings.h>   /* strncasecmp */
#endif

/* ggml's fp32 -> bf16 (quantize.h's quantize_row_bf16), returned as the f32 value. */
static inline float mm_round_bf16(float x) {
    uint32_t n;
    memcpy(&n, &x, 4);
    if ((n & 0x7fffffffu) > 0x7f800000u) n = (n & 0xffff0000u) | 0x00400000u;
    n = ((n + 0x7fffu + ((n >> 16) & 1u)) >> 16) << 16;
    memcpy(&x, &n, 4);
    return x;
}

/* mm_round_bf16 over x[0:n) in place (a loop GCC vectorizes). */
static inline void mm_round_bf16_n(float * x, int64_t n) {
    uint32_t * u = (uint32_t *)x;
    for (int64_t i = 0; i < n; i++) {
        uint32_t v = u[i];
        const uint32_t q = (v & 0xffff0000u) | 0x00400000u;
        v = (v & 0x7fffffffu) > 0x7f800000u ? q : v;
        u[i] = ((v + 0x7fffu + ((v >> 16) & 1u)) >> 16) << 16;
    }
}

/* The f32 variant's packed panels (k-major, width w, kb rows each, npanels of them) in
 * VDPBF16PS's order: the rows k and k + 1 of every pair swapped (a lone last row stays). */
static inline void mm_bf16_swap_pairs(float * p, int64_t npanels, int64_t kb, int w) {
    for (int64_t q = 0; q < npanels; q++) {
        float * base = p + q * kb * w;
        for (int64_t k = 0; k + 1 < kb; k += 2)
            for (int j = 0; j < w; j++) {
                const float t = base[k * w + j];
                base[k * w + j] = base[(k + 1) * w + j];
                base[(k + 1) * w + j] = t;
            }
    }
}

/* The element the f32 variant's mat-vec takes at step k of the K block [pc, ke) (pc even):
 * k itself for other types; for BF16 each pair's odd element first. */
static inline int64_t mm_bf16_order(int type, int64_t k, int64_t pc, int64_t ke) {
    if (type != GGML_TYPE_BF16) return k;
    if ((k - pc) & 1) return k - 1;
    return k + 1 < ke ? k + 1 : k;
}

#if defined(MM_AVX512)
/* 1 when the VDPBF16PS variant runs: the CPU has AVX512_BF16 and GGML_CY_CPU_FEATURES does
 * not cap the level at baseline, avx2 or avx512 (x86-64-v4 has no AVX512_BF16; the cap is
 * how the f32 variant is tested on such a CPU). Read once per module. */
static inline int mm_bf16_dp(void) {
    static int v = -1;
    if (v < 0) {
        const char * e = getenv("GGML_CY_CPU_FEATURES");
        int capped = 0;
        if (e != NULL) {
            while (*e == ' ' || *e == '\t') e++;
            capped = strncasecmp(e, "baseline", 8) == 0 || strncasecmp(e, "avx2", 4) == 0
                     || (strncasecmp(e, "avx512", 6) == 0 && strncasecmp(e, "avx512vnni", 10) != 0);
        }
        __builtin_cpu_init();
        v = !capped && __builtin_cpu_supports("avx512bf16");
    }
    return v;
}

/* The functions below use AVX512_BF16 (not in x86-64-v4): compiled for it one by one (GCC and
 * clang alike), run only when mm_bf16_dp() says the CPU has it. */
#define MM_BF16_FN static inline __attribute__((target("avx512bf16")))

/* The mask of the first n (<= 32) 16-bit lanes / (<= 16) 32-bit lanes. */
MM_BF16_FN __mmask32 mm_bf16_m32(int64_t n) {
    return n >= 32 ? (__mmask32)0xffffffffu : (__mmask32)((1u << n) - 1u);
}
MM_BF16_FN __mmask16 mm_bf16_m16(int64_t n) {
    return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

/* 32 floats of b from x (n of them valid, the rest zero) rounded to 16 bf16 pairs. */
MM_BF16_FN __m512i mm_bf16_cvt32(const float * x, int64_t n) {
    const __m512 lo = _mm512_maskz_loadu_ps(mm_bf16_m16(n), x);
    const __m512 hi = _mm512_maskz_loadu_ps(mm_bf16_m16(n - 16), x + 16);
    return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
}

/* Packs a[m0:m0+mb, k0:k0+kb] (bf16) into MM_NR-wide pair-major panels of dwords:
 * ap[P*kp + t*MM_NR + j] = (a(m0+P+j, k0+2t), a(m0+P+j, k0+2t+1)), kp = (kb+1)/2, P a
 * multiple of MM_NR; an element past kb and rows past mb are zero. */
MM_BF16_FN void mm_bf16_pack_a(const char * a, int64_t nb00, int64_t nb01, int64_t m0,
                                  int64_t mb, int64_t k0, int64_t kb, uint32_t * ap) {
    const int64_t kp = (kb + 1) / 2;
    if (nb00 == 2) {   /* elements adjacent: 16 rows x 16 pairs transposed as dwords */
        for (int64_t p = 0; p < mb; p += 16) {
            const int nrows = (int)(mb - p < 16 ? mb - p : 16);
            uint32_t * out = ap + (p / MM_NR) * MM_NR * kp + (p % MM_NR);
            for (int64_t k = 0; k < kb; k += 32) {
                const __mmask32 mk = mm_bf16_m32(kb - k);
                __m512 r[16];
                for (int i = 0; i < 16; i++)
                    r[i] = i < nrows ? _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(
                                           mk, a + (m0 + p + i) * nb01 + (k0 + k) * 2))
                                     : _mm512_setzero_ps();
                mm_tr16(r);
                const int np = (int)((kb - k + 1) / 2 < 16 ? (kb - k + 1) / 2 : 16);
                for (int i = 0; i < np; i++)
                    _mm512_storeu_ps((float *)(out + (k / 2 + i) * MM_NR), r[i]);
            }
        }
        if ((mb % MM_NR) != 0 && (mb % MM_NR) <= 16) {   /* the untouched panel half */
            uint32_t * out = ap + (mb / MM_NR) * MM_NR * kp + 16;
            for (int64_t t = 0; t < kp; t++) memset(out + t * MM_NR, 0, 16 * 4);
        }
        return;
    }
    for (int64_t p = 0; p < mb; p += MM_NR) {
        uint32_t * out = ap + p * kp;
        for (int j = 0; j < MM_NR; j++) {
            const char * row = a + (m0 + p + j) * nb01 + k0 * nb00;
            for (int64_t t = 0; t < kp; t++) {
                uint32_t v = 0;
                if (p + j < mb) {
                    v = *(const uint16_t *)(row + 2 * t * nb00);
                    if (2 * t + 1 < kb) v |= (uint32_t)*(const uint16_t *)(row + (2 * t + 1) * nb00) << 16;
                }
                out[t * MM_NR + j] = v;
            }
        }
    }
}

/* Packs b[n0:n0+nbk, k0:k0+kb] (f32) rounded to bf16 into MM_MR-wide pair-major panels:
 * bp[Q*kp + t*MM_MR + i] = (b(n0+Q+i, k0+2t), b(n0+Q+i, k0+2t+1)); rows past nbk zero. */
MM_BF16_FN void mm_bf16_pack_b(const char * b, int64_t nb10, int64_t nb11, int64_t n0,
                                  int64_t nbk, int64_t k0, int64_t kb, uint32_t * bp) {
    const int64_t kp = (kb + 1) / 2;
    for (int64_t q = 0; q < nbk; q += MM_MR) {
        uint32_t * out = bp + q * kp;
        for (int i = 0; i < MM_MR; i++) {
            if (q + i >= nbk) {
                for (int64_t t = 0; t < kp; t++) out[t * MM_MR + i] = 0;
                continue;
            }
            const char * row = b + (n0 + q + i) * nb11 + k0 * nb10;
            for (int64_t k = 0; k < kb; k += 32) {
                __m512i v;
                if (nb10 == 4) {
                    v = mm_bf16_cvt32((const float *)row + k, kb - k);
                } else {
                    float tmp[32];
                    for (int e = 0; e < 32; e++)
                        tmp[e] = k + e < kb ? *(const float *)(row + (k + e) * nb10) : 0.0f;
                    v = mm_bf16_cvt32(tmp, 32);
                }
                uint32_t w[16];
                _mm512_storeu_si512(w, v);
                const int np = (int)((kb - k + 1) / 2 < 16 ? (kb - k + 1) / 2 : 16);
                for (int e = 0; e < np; e++) out[(k / 2 + e) * MM_MR + i] = w[e];
            }
        }
    }
}

/* C[0:rows, 0:cols] (+)= Bpanel . Apanel^T for one 8x32 tile over kp pairs (mm_micro's
 * shape and stores (mm_store_tile), VDPBF16PS for the FMAs). */
MM_BF16_FN void mm_bf16_micro(int64_t kp, const uint32_t * __restrict bp,
                                 const uint32_t * __restrict ap, float * __restrict c,
                                 int64_t ldc, int accumulate, int rows, int cols) {
    MM_ACC16_ZERO();
    for (int64_t t = 0; t < kp; t++) {
        const __m512bh a0 = (__m512bh)_mm512_load_si512(ap + t * MM_NR);
        const __m512bh a1 = (__m512bh)_mm512_load_si512(ap + t * MM_NR + 16);
        const uint32_t * bt = bp + t * MM_MR;
        __m512bh b;
#define MM_BF16_ROW(i, x0, x1) \
        b = (__m512bh)_mm512_set1_epi32((int)bt[i]); \
        x0 = _mm512_dpbf16_ps(x0, a0, b); x1 = _mm512_dpbf16_ps(x1, a1, b);
        MM_BF16_ROW(0, c00, c01) MM_BF16_ROW(1, c10, c11) MM_BF16_ROW(2, c20, c21)
        MM_BF16_ROW(3, c30, c31) MM_BF16_ROW(4, c40, c41) MM_BF16_ROW(5, c50, c51)
        MM_BF16_ROW(6, c60, c61) MM_BF16_ROW(7, c70, c71)
#undef MM_BF16_ROW
    }
    MM_ACC16_ARRAY(acc);
    mm_store_tile(&acc, c, ldc, accumulate, rows, cols);
}

/* The mat-vec: dst[n][m0 .. m0+nr) for n < nn (nn <= MM_GEMV_MAX_N), nr <= 16 rows of a
 * (bf16, elements adjacent) from m0; per K block b's rows are rounded to pairs first, then
 * 16 rows x 16 pairs of a are transposed as dwords and each pair column meets b's pair
 * broadcast: the packed path's chain per element. */
MM_BF16_FN __attribute__((always_inline)) void mm_bf16_gemv_block(
        const char * a, int64_t nb01, const char * b, int64_t nb11, char * c, int64_t nb1,
        int64_t K, int64_t m0, int nr, const int nn) {
    const char * rows[16];
    for (int i = 0; i < 16; i++) rows[i] = a + (m0 + (i < nr ? i : 0)) * nb01;
    __m512 y[MM_GEMV_MAX_N];
    for (int j = 0; j < MM_GEMV_MAX_N; j++) y[j] = _mm512_setzero_ps();
    uint32_t bw[MM_GEMV_MAX_N][MM_KC / 2] __attribute__((aligned(64)));
    for (int64_t pc = 0; pc < K; pc += MM_KC) {
        const int64_t kb = (K - pc < MM_KC) ? K - pc : MM_KC;
        for (int j = 0; j < nn; j++)
            for (int64_t k = 0; k < kb; k += 32)
                _mm512_store_si512(bw[j] + k / 2,
                                   mm_bf16_cvt32((const float *)(b + j * nb11) + pc + k, kb - k));
        __m512 acc[MM_GEMV_MAX_N];
        for (int j = 0; j < nn; j++) acc[j] = _mm512_setzero_ps();
        for (int64_t k = 0; k < kb; k += 32) {
            const __mmask32 mk = mm_bf16_m32(kb - k);
            __m512 r[16];
            for (int i = 0; i < 16; i++)
                r[i] = _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(mk, rows[i] + (pc + k) * 2));
            mm_tr16(r);                       /* r[i]: the 16 rows' pairs k/2 + i */
            const int np = (int)((kb - k + 1) / 2 < 16 ? (kb - k + 1) / 2 : 16);
            for (int i = 0; i < np; i++)
                for (int j = 0; j < nn; j++)
                    acc[j] = _mm512_dpbf16_ps(acc[j], (__m512bh)_mm512_castps_si512(r[i]),
                                              (__m512bh)_mm512_set1_epi32((int)bw[j][k / 2 + i]));
        }
        for (int j = 0; j < nn; j++) y[j] = pc == 0 ? acc[j] : _mm512_add_ps(y[j], acc[j]);
    }
    const __mmask16 mask = mm_bf16_m16(nr);
    for (int j = 0; j < nn; j++)
        _mm512_mask_storeu_ps((float *)(c + j * nb1) + m0, mask, y[j]);
}

/* mm_bf16_gemv_block over rows [m_lo, m_hi), nn rows of b (a dispatch on nn). */
MM_BF16_FN void mm_bf16_gemv_rows(const char * a, int64_t nb01, const char * b, int64_t nb11,
                                     char * c, int64_t nb1, int64_t K, int64_t m_lo,
                                     int64_t m_hi, int nn) {
    for (int64_t m = m_lo; m < m_hi; m += 16) {
        const int nr = (int)(m_hi - m < 16 ? m_hi - m : 16);
        switch (nn) {
        case 1: mm_bf16_gemv_block(a, nb01, b, nb11, c, nb1, K, m, nr, 1); break;
        case 2: mm_bf16_gemv_block(a, nb01, b, nb11, c, nb1, K, m, nr, 2); break;
        case 3: mm_bf16_gemv_block(a, nb01, b, nb11, c, nb1, K, m, nr, 3); break;
        default: mm_bf16_gemv_block(a, nb01, b, nb11, c, nb1, K, m, nr, 4); break;
        }
    }
}
/* The row-interleaved copy's mat-vec: dst[n][16g ..] for n < nn, groups [g, g + ng) of rp
 * (ng <= 4), the chains of mm_bf16_gemv_block (so the same bits). */
MM_BF16_FN __attribute__((always_inline)) void mm_bf16_gemv_rp_block(
        const mm_repack * rp, const char * b, int64_t nb11, char * c, int64_t nb1, int64_t g,
        const int ng, const int nn) {
    const int64_t K = rp->ne0, M = rp->ne1, kp = (K + 1) / 2;
    const uint32_t * base = (const uint32_t *)rp->data + g * kp * MM_RP_G;
    __m512 y[4][MM_GEMV_MAX_N];
    for (int q = 0; q < 4; q++)
        for (int j = 0; j < MM_GEMV_MAX_N; j++) y[q][j] = _mm512_setzero_ps();
    uint32_t bw[MM_GEMV_MAX_N][MM_KC / 2] __attribute__((aligned(64)));
    for (int64_t pc = 0; pc < K; pc += MM_KC) {
        const int64_t kb = (K - pc < MM_KC) ? K - pc : MM_KC;
        for (int j = 0; j < nn; j++)
            for (int64_t k = 0; k < kb; k += 32)
                _mm512_store_si512(bw[j] + k / 2,
                                   mm_bf16_cvt32((const float *)(b + j * nb11) + pc + k, kb - k));
        __m512 acc[4][MM_GEMV_MAX_N];
        for (int q = 0; q < ng; q++)
            for (int j = 0; j < nn; j++) acc[q][j] = _mm512_setzero_ps();
        const uint32_t * at = base + (pc / 2) * MM_RP_G;
        for (int64_t t = 0; t < (kb + 1) / 2; t++) {
            __m512bh v[4];
            for (int q = 0; q < ng; q++)
                v[q] = (__m512bh)_mm512_load_si512(at + (q * kp + t) * MM_RP_G);
            for (int j = 0; j < nn; j++) {
                const __m512bh bj = (__m512bh)_mm512_set1_epi32((int)bw[j][t]);
                for (int q = 0; q < ng; q++) acc[q][j] = _mm512_dpbf16_ps(acc[q][j], v[q], bj);
            }
        }
        for (int q = 0; q < ng; q++)
            for (int j = 0; j < nn; j++)
                y[q][j] = pc == 0 ? acc[q][j] : _mm512_add_ps(y[q][j], acc[q][j]);
    }
    for (int q = 0; q < ng; q++) {
        const int64_t m0 = (g + q) * MM_RP_G;
        const __mmask16 mask = mm_bf16_m16(M - m0);
        for (int j = 0; j < nn; j++)
            _mm512_mask_storeu_ps((float *)(c + j * nb1) + m0, mask, y[q][j]);
    }
}

/* mm_bf16_gemv_rp_block over groups [g_lo, g_hi), 4 at a time (dispatch on ng and nn). */
MM_BF16_FN void mm_bf16_gemv_rp(const mm_repack * rp, const char * b, int64_t nb11, char * c,
                                int64_t nb1, int64_t g_lo, int64_t g_hi, int nn) {
#define MM_BF16_RP_NN(NG) \
    switch (nn) { \
    case 1: mm_bf16_gemv_rp_block(rp, b, nb11, c, nb1, g, NG, 1); break; \
    case 2: mm_bf16_gemv_rp_block(rp, b, nb11, c, nb1, g, NG, 2); break; \
    case 3: mm_bf16_gemv_rp_block(rp, b, nb11, c, nb1, g, NG, 3); break; \
    default: mm_bf16_gemv_rp_block(rp, b, nb11, c, nb1, g, NG, 4); break; \
    }
    int64_t g = g_lo;
    for (; g + 4 <= g_hi; g += 4) { MM_BF16_RP_NN(4) }
    for (; g < g_hi; g++) { MM_BF16_RP_NN(1) }
#undef MM_BF16_RP_NN
}
#undef MM_BF16_FN
#endif /* MM_AVX512 */

/* 1 when BF16 weights run on AMX tiles (mul_mat_amx.h): the CPU has them, Linux granted the
 * tile state, and the level is not capped (GGML_CY_CPU_FEATURES, as for VDPBF16PS). */
static inline int mm_bf16_amx(void) {
#if defined(MM_AVX512) && defined(MMX_BUILT)
    return mm_bf16_dp() && mmx_ready();
#else
    return 0;
#endif
}

/* 1 when the mat-vec reads a BF16 matrix's row-interleaved copy (the VDPBF16PS variant;
 * with AMX the tiles take every BF16 product and read the rows in place); elsewhere a copy
 * is ignored. */
static inline int mm_bf16_rp_used(void) {
#if defined(MM_AVX512)
    return mm_bf16_dp() && !mm_bf16_amx();
#else
    return 0;
#endif
}
#endif
