/* ggml_cy CPU kernels: elementwise ops with an operand transposed relative to the output
 * (a.T + b, np.copyto(out, a.T)), fused in registers (issue 14).
 *
 * Why: the generic cache-blocked path transposed each source tile into a stack buffer and
 * then ran the contiguous row loop over it, with plain stores; a.T + b (4096, 4096) float32
 * ran at 0.34 of the non-temporal STREAM add measured in the same process on the 2-core
 * VM. Here a block of L x L elements (L = the vector's lanes: 16 float32 / 8 float64 with
 * AVX-512, 8 / 4 with AVX2) is loaded, transposed in registers, combined with the other
 * operand and stored, with streaming stores when the plan streams: every element makes one
 * trip through the core, and the output lines bypass the caches.
 *
 * Operands: each source is read at p + c * s0 + r * s1 for output row r, column c (byte
 * strides). Kinds: ROW (s0 == esize: along the output row; s1 may be 0, a broadcast row),
 * TRN (s1 == esize: along the output column, the transposed one), COL (s0 == 0: one value
 * per output row; s1 == 0 too: a scalar). Other layouts return 0 and the caller takes the
 * generic route.
 *
 * Exactness: the four IEEE operations and the selections are those of kernels_stream.h
 * (same bits as numpy, NaN operand order kept). Partial blocks (the edges) fill the lanes
 * they do not store with 1.0 in both operands, so no lane raises a floating-point flag that
 * numpy would not.
 *
 * Memory order: a band of output rows is walked in panels of KT_PANEL columns; inside a
 * panel, row blocks outer, column blocks inner, so each output row's lines are written in
 * order and the transposed source's lines (KT_PANEL source rows, KT_BAND_ROWS * esize
 * bytes each) stay in L2 between the row blocks that share them. */
#ifndef GGML_CY_KERNELS_TRANSPOSE_H
#define GGML_CY_KERNELS_TRANSPOSE_H

#include <stdint.h>
#include "kernels_stream.h"
#include "mul_mat_tr16.h"

#define KT_COPY 0          /* which: 0 copies operand a; KERN_H16_ADD .. KERN_BIN_MIN */
#define KT_ROW 0
#define KT_TRN 1
#define KT_COL 2

#ifndef KT_PANEL
#define KT_PANEL 64        /* columns per panel (a multiple of 16) */
#endif
#ifndef KT_PF
#define KT_PF 1            /* prefetch the lines of the row block this many blocks on */
#endif

static inline int kt_kind(int64_t s0, int64_t s1, int esize) {
    if (s0 == esize) return KT_ROW;
    if (s0 == 0) return KT_COL;
    if (s1 == esize) return KT_TRN;
    return -1;
}

#if defined(__AVX512F__)
#define KERN_HAVE_TILE 1
/* 16 x 16 float32: r[i] lane j <- r[j] lane i (mul_mat_tr16.h's body, always inlined here) */
static inline __attribute__((always_inline)) void kt_tr16_ps(__m512 r[16]) {
    MM_TR16_BODY(r);
}
/* 8 x 8 float64 */
static inline __attribute__((always_inline)) void kt_tr8_pd(__m512d r[8]) {
    __m512d t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm512_unpacklo_pd(r[i], r[i + 1]);       /* 128-bit lane k: r[i][2k], r[i+1][2k] */
        t[i + 1] = _mm512_unpackhi_pd(r[i], r[i + 1]);   /* ... [2k + 1] */
    }
    for (int g = 0; g < 8; g += 4) {   /* rows g..g+3 */
        u[g + 0] = _mm512_shuffle_f64x2(t[g], t[g + 2], 0x88);       /* elements 0, 4 */
        u[g + 1] = _mm512_shuffle_f64x2(t[g], t[g + 2], 0xDD);       /* 2, 6 */
        u[g + 2] = _mm512_shuffle_f64x2(t[g + 1], t[g + 3], 0x88);   /* 1, 5 */
        u[g + 3] = _mm512_shuffle_f64x2(t[g + 1], t[g + 3], 0xDD);   /* 3, 7 */
    }
    r[0] = _mm512_shuffle_f64x2(u[0], u[4], 0x88);
    r[4] = _mm512_shuffle_f64x2(u[0], u[4], 0xDD);
    r[2] = _mm512_shuffle_f64x2(u[1], u[5], 0x88);
    r[6] = _mm512_shuffle_f64x2(u[1], u[5], 0xDD);
    r[1] = _mm512_shuffle_f64x2(u[2], u[6], 0x88);
    r[5] = _mm512_shuffle_f64x2(u[2], u[6], 0xDD);
    r[3] = _mm512_shuffle_f64x2(u[3], u[7], 0x88);
    r[7] = _mm512_shuffle_f64x2(u[3], u[7], 0xDD);
}
#define KT_V_ps __m512
#define KT_V_pd __m512d
#define KT_M_ps __mmask16
#define KT_M_pd __mmask8
#define KT_L_ps 16
#define KT_L_pd 8
#define KT_T_ps float
#define KT_T_pd double
#define KT_ALIGN 63u
#define kt_mask_ps(n) ((__mmask16)((1u << (n)) - 1u))
#define kt_mask_pd(n) ((__mmask8)((1u << (n)) - 1u))
#define kt_loadu_ps _mm512_loadu_ps
#define kt_loadu_pd _mm512_loadu_pd
#define kt_set1_ps _mm512_set1_ps
#define kt_set1_pd _mm512_set1_pd
#define kt_mload_ps(m, p) _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), (m), (p))
#define kt_mload_pd(m, p) _mm512_mask_loadu_pd(_mm512_set1_pd(1.0), (m), (p))
#define kt_mfill_ps(m, v) _mm512_mask_blend_ps((m), _mm512_set1_ps(1.0f), (v))
#define kt_mfill_pd(m, v) _mm512_mask_blend_pd((m), _mm512_set1_pd(1.0), (v))
#define kt_mstore_ps(p, m, v) _mm512_mask_storeu_ps((p), (m), (v))
#define kt_mstore_pd(p, m, v) _mm512_mask_storeu_pd((p), (m), (v))
#define kt_stream_ps _mm512_stream_ps
#define kt_stream_pd _mm512_stream_pd
#define kt_storeu_ps _mm512_storeu_ps
#define kt_storeu_pd _mm512_storeu_pd
#define kt_tr_ps kt_tr16_ps
#define kt_tr_pd kt_tr8_pd
#elif defined(__AVX2__)
#define KERN_HAVE_TILE 1
/* 8 x 8 float32 */
static inline __attribute__((always_inline)) void kt_tr8_ps(__m256 r[8]) {
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int g = 0; g < 8; g += 4) {
        u[g + 0] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44);
        u[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xEE);
        u[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44);
        u[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
    }
    for (int e = 0; e < 4; e++) {
        r[e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x20);
        r[4 + e] = _mm256_permute2f128_ps(u[e], u[4 + e], 0x31);
    }
}
/* 4 x 4 float64 */
static inline __attribute__((always_inline)) void kt_tr4_pd(__m256d r[4]) {
    const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}
#define KT_V_ps __m256
#define KT_V_pd __m256d
#define KT_M_ps __m256i
#define KT_M_pd __m256i
#define KT_L_ps 8
#define KT_L_pd 4
#define KT_T_ps float
#define KT_T_pd double
#define KT_ALIGN 31u
#define kt_mask_ps(n) _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define kt_mask_pd(n) _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3))
#define kt_loadu_ps _mm256_loadu_ps
#define kt_loadu_pd _mm256_loadu_pd
#define kt_set1_ps _mm256_set1_ps
#define kt_set1_pd _mm256_set1_pd
#define kt_mload_ps(m, p) _mm256_blendv_ps(_mm256_set1_ps(1.0f), _mm256_maskload_ps((p), (m)), _mm256_castsi256_ps(m))
#define kt_mload_pd(m, p) _mm256_blendv_pd(_mm256_set1_pd(1.0), _mm256_maskload_pd((p), (m)), _mm256_castsi256_pd(m))
#define kt_mfill_ps(m, v) _mm256_blendv_ps(_mm256_set1_ps(1.0f), (v), _mm256_castsi256_ps(m))
#define kt_mfill_pd(m, v) _mm256_blendv_pd(_mm256_set1_pd(1.0), (v), _mm256_castsi256_pd(m))
#define kt_mstore_ps(p, m, v) _mm256_maskstore_ps((p), (m), (v))
#define kt_mstore_pd(p, m, v) _mm256_maskstore_pd((p), (m), (v))
#define kt_stream_ps _mm256_stream_ps
#define kt_stream_pd _mm256_stream_pd
#define kt_storeu_ps _mm256_storeu_ps
#define kt_storeu_pd _mm256_storeu_pd
#define kt_tr_ps kt_tr8_ps
#define kt_tr_pd kt_tr4_pd
#else
#define KERN_HAVE_TILE 0
#endif

#if KERN_HAVE_TILE
/* kernels_stream.h's vector op with `which` not a constant (its compare predicate must be) */
#define KT_OP_FN(S)                                                                       \
static inline __attribute__((always_inline))                                              \
KT_V_##S kt_op_##S(int which, KT_V_##S x, KT_V_##S y) {                                   \
    switch (which) {                                                                      \
    case KERN_H16_ADD: return kern_nt_op_##S(KERN_H16_ADD, x, y);                         \
    case KERN_H16_SUB: return kern_nt_op_##S(KERN_H16_SUB, x, y);                         \
    case KERN_H16_MUL: return kern_nt_op_##S(KERN_H16_MUL, x, y);                         \
    case KERN_H16_DIV: return kern_nt_op_##S(KERN_H16_DIV, x, y);                         \
    case KERN_BIN_MAX: return kern_nt_op_##S(KERN_BIN_MAX, x, y);                         \
    default: return kern_nt_op_##S(KERN_BIN_MIN, x, y);                                   \
    }                                                                                     \
}
KT_OP_FN(ps)
KT_OP_FN(pd)

/* One operand's block as L row vectors (v[i]: output row r0 + i, columns c0 ..): nr rows
 * and nc columns valid, the other lanes 1.0 (full == 1: nr == nc == L, no masks). */
#define KT_LOAD_FN(S)                                                                     \
static inline __attribute__((always_inline))                                              \
void kt_load_##S(KT_V_##S v[KT_L_##S], int kind, const char * p, int64_t s0, int64_t s1, \
                 int full, int nr, int nc) {                                              \
    const int L = KT_L_##S;                                                               \
    if (full) {                                                                           \
        if (kind == KT_TRN) {                                                             \
            for (int j = 0; j < L; j++) v[j] = kt_loadu_##S((const KT_T_##S *)(p + j * s0)); \
            kt_tr_##S(v);                                                                 \
        } else if (kind == KT_ROW) {                                                      \
            for (int i = 0; i < L; i++) v[i] = kt_loadu_##S((const KT_T_##S *)(p + i * s1)); \
        } else {                                                                          \
            for (int i = 0; i < L; i++) v[i] = kt_set1_##S(*(const KT_T_##S *)(p + i * s1)); \
        }                                                                                 \
        return;                                                                           \
    }                                                                                     \
    const KT_M_##S rm = kt_mask_##S(nr), cm = kt_mask_##S(nc);                            \
    const KT_V_##S one = kt_set1_##S((KT_T_##S)1);                                        \
    if (kind == KT_TRN) {                                                                 \
        for (int j = 0; j < L; j++)                                                       \
            v[j] = j < nc ? kt_mload_##S(rm, (const KT_T_##S *)(p + j * s0)) : one;       \
        kt_tr_##S(v);                                                                     \
    } else if (kind == KT_ROW) {                                                          \
        for (int i = 0; i < L; i++)                                                       \
            v[i] = i < nr ? kt_mload_##S(cm, (const KT_T_##S *)(p + i * s1)) : one;       \
    } else {                                                                              \
        for (int i = 0; i < L; i++)                                                       \
            v[i] = i < nr ? kt_mfill_##S(cm, kt_set1_##S(*(const KT_T_##S *)(p + i * s1))) : one; \
    }                                                                                     \
}
KT_LOAD_FN(ps)
KT_LOAD_FN(pd)

/* One block: d[r0 + i][c0 + j] = op(a, b) for i < nr, j < nc. */
#define KT_BLOCK_FN(S)                                                                    \
static inline __attribute__((always_inline))                                              \
void kt_block_##S(int which, int nt, int full, int nr, int nc, char * d, int64_t sd1,     \
                  int ka, const char * a, int64_t sa0, int64_t sa1,                       \
                  int kb, const char * b, int64_t sb0, int64_t sb1) {                     \
    const int L = KT_L_##S;                                                               \
    KT_V_##S va[KT_L_##S], vb[KT_L_##S];                                                  \
    kt_load_##S(va, ka, a, sa0, sa1, full, nr, nc);                                       \
    if (which != KT_COPY && kb != KT_ROW) kt_load_##S(vb, kb, b, sb0, sb1, full, nr, nc); \
    const KT_M_##S cm = kt_mask_##S(full ? L : nc);                                       \
    for (int i = 0; i < L; i++) {                                                         \
        if (!full && i >= nr) break;                                                      \
        KT_V_##S x = va[i];                                                               \
        if (which != KT_COPY) {                                                           \
            KT_V_##S y;                                                                   \
            if (kb != KT_ROW) y = vb[i];                                                  \
            else if (full) y = kt_loadu_##S((const KT_T_##S *)(b + i * sb1));             \
            else y = kt_mload_##S(cm, (const KT_T_##S *)(b + i * sb1));                   \
            x = kt_op_##S(which, x, y);                                              \
        }                                                                                 \
        KT_T_##S * o = (KT_T_##S *)(d + i * sd1);                                         \
        if (!full) kt_mstore_##S(o, cm, x);                                               \
        else if (nt && ((uintptr_t)o & KT_ALIGN) == 0) kt_stream_##S(o, x);               \
        else kt_storeu_##S(o, x);                                                         \
    }                                                                                     \
}
KT_BLOCK_FN(ps)
KT_BLOCK_FN(pd)

/* Prefetch of the lines a row block of a panel (ncols columns) reads: the transposed
 * source's rows are pages apart and the output's rows too, beyond what the hardware
 * prefetchers follow; without it a block's misses are all that overlap. */
static inline void kt_prefetch(int kind, const char * p, int64_t s0, int64_t s1, int L,
                               int64_t ncols, int esize) {
    if (kind == KT_TRN) {
        for (int64_t c = 0; c < ncols; c++) __builtin_prefetch(p + c * s0, 0, 3);
    } else if (kind == KT_ROW && s1 != 0) {
        for (int i = 0; i < L; i++)
            for (int64_t off = 0; off < ncols * esize; off += 64)
                __builtin_prefetch(p + i * s1 + off, 0, 3);
    }
}

/* A partial block (the edges): runtime op and kinds, masked loads and stores. */
#define KT_EDGE_FN(S)                                                                     \
static __attribute__((noinline))                                                          \
void kt_edge_##S(int which, int nr, int nc, char * d, int64_t sd1,                        \
                 int ka, const char * a, int64_t sa0, int64_t sa1,                        \
                 int kb, const char * b, int64_t sb0, int64_t sb1) {                      \
    kt_block_##S(which, 0, 0, nr, nc, d, sd1, ka, a, sa0, sa1, kb, b, sb0, sb1);          \
}
KT_EDGE_FN(ps)
KT_EDGE_FN(pd)

/* The full blocks of output rows [0, nr) and columns [c0, c1) (c1 - c0 a multiple of L),
 * panel by panel (rows below the last full row block as partial blocks); WHICH, KA, KB
 * are constants at every call: one copy of the loop each. */
#define KT_PANELS_FN(S)                                                                   \
static inline __attribute__((always_inline))                                              \
void kt_panels_##S(const int WHICH, const int KA, const int KB, int nt, int64_t nr,       \
                   int64_t c0, int64_t c1, char * d, int64_t sd1,                         \
                   const char * a, int64_t sa0, int64_t sa1,                              \
                   const char * b, int64_t sb0, int64_t sb1) {                            \
    const int L = KT_L_##S, es = (int)sizeof(KT_T_##S);                                   \
    const int64_t nrf = nr / L * L;                                                       \
    for (int64_t c = c0; c < c1; c += KT_PANEL) {                                         \
        const int64_t ce = c1 - c < KT_PANEL ? c1 : c + KT_PANEL;                         \
        for (int64_t r = 0; r < nrf; r += L) {                                            \
            if (KT_PF && r + (KT_PF + 1) * L <= nrf) {                                    \
                const int64_t rp = r + KT_PF * L;                                         \
                kt_prefetch(KA, a + c * sa0 + rp * sa1, sa0, sa1, L, ce - c, es);         \
                if (WHICH != KT_COPY)                                                     \
                    kt_prefetch(KB, b + c * sb0 + rp * sb1, sb0, sb1, L, ce - c, es);     \
            }                                                                             \
            for (int64_t cc = c; cc < ce; cc += L)                                        \
                kt_block_##S(WHICH, nt, 1, L, L, d + r * sd1 + cc * es, sd1,              \
                             KA, a + cc * sa0 + r * sa1, sa0, sa1,                        \
                             KB, b + cc * sb0 + r * sb1, sb0, sb1);                       \
        }                                                                                 \
        if (nrf < nr)                                                                     \
            for (int64_t cc = c; cc < ce; cc += L)                                        \
                kt_edge_##S(WHICH, (int)(nr - nrf), L, d + nrf * sd1 + cc * es, sd1,      \
                            KA, a + cc * sa0 + nrf * sa1, sa0, sa1,                       \
                            KB, b + cc * sb0 + nrf * sb1, sb0, sb1);                      \
    }                                                                                     \
}
KT_PANELS_FN(ps)
KT_PANELS_FN(pd)

#define KT_CASE(S, W, KA, KB)                                                             \
    case (W) * 9 + (KA) * 3 + (KB):                                                       \
        kt_panels_##S((W), (KA), (KB), nt, nr, c0, c1, d, sd1, a, sa0, sa1, b, sb0, sb1); \
        break;
#define KT_CASES_OP(S, W) KT_CASE(S, W, KT_TRN, KT_ROW) KT_CASE(S, W, KT_ROW, KT_TRN)

/* The band: output rows [0, nr), columns [0, nc), row r at d + r * sd1. With streaming
 * stores the full blocks start on an aligned output address when every row shares the
 * alignment; the columns before it and after the last full block are partial blocks.
 * 0: this pair of kinds is not taken (nothing written). */
#define KT_BAND_FN(S)                                                                     \
static int kt_band_##S(int which, int nt, int64_t nr, int64_t nc, char * d, int64_t sd1,  \
                       int ka, const char * a, int64_t sa0, int64_t sa1,                  \
                       int kb, const char * b, int64_t sb0, int64_t sb1) {                \
    const int L = KT_L_##S, es = (int)sizeof(KT_T_##S);                                   \
    int64_t c0 = 0, c1;                                                                   \
    if (ka != KT_TRN && kb != KT_TRN) return 0;                                           \
    if (ka == KT_TRN && kb == KT_TRN && which == KT_COPY) kb = KT_ROW;                    \
    if (nt && (sd1 & (int64_t)KT_ALIGN) == 0)                                             \
        c0 = (int64_t)((((uintptr_t)0 - (uintptr_t)d) & KT_ALIGN) / es);                  \
    if (c0 > nc) c0 = nc;                                                                 \
    c1 = c0 + (nc - c0) / L * L;                                                          \
    if (which == KT_COPY && ka != KT_TRN) return 0;                                       \
    if (c1 > c0) {                                                                        \
        switch (which * 9 + ka * 3 + kb) {                                                \
        KT_CASE(S, KT_COPY, KT_TRN, KT_ROW)                                               \
        KT_CASES_OP(S, KERN_H16_ADD) KT_CASES_OP(S, KERN_H16_SUB)                         \
        KT_CASES_OP(S, KERN_H16_MUL) KT_CASES_OP(S, KERN_H16_DIV)                         \
        KT_CASES_OP(S, KERN_BIN_MAX) KT_CASES_OP(S, KERN_BIN_MIN)                         \
        default: /* the rarer pairs: one copy each, the op chosen per vector */           \
            if (which == KT_COPY) return 0;                                               \
            if (ka == KT_TRN && kb == KT_TRN)                                             \
                kt_panels_##S(which, KT_TRN, KT_TRN, nt, nr, c0, c1, d, sd1, a, sa0, sa1, b, sb0, sb1); \
            else if (ka == KT_TRN && kb == KT_COL)                                        \
                kt_panels_##S(which, KT_TRN, KT_COL, nt, nr, c0, c1, d, sd1, a, sa0, sa1, b, sb0, sb1); \
            else if (ka == KT_COL && kb == KT_TRN)                                        \
                kt_panels_##S(which, KT_COL, KT_TRN, nt, nr, c0, c1, d, sd1, a, sa0, sa1, b, sb0, sb1); \
            else return 0;                                                                \
        }                                                                                 \
    }                                                                                     \
    const int64_t edges[2][2] = {{0, c0}, {c1, nc}};                                      \
    for (int e = 0; e < 2; e++)                                                           \
        for (int64_t cc = edges[e][0]; cc < edges[e][1]; cc += L) {                       \
            const int cn = edges[e][1] - cc < L ? (int)(edges[e][1] - cc) : L;            \
            for (int64_t r = 0; r < nr; r += L)                                           \
                kt_edge_##S(which, nr - r < L ? (int)(nr - r) : L, cn,                    \
                            d + r * sd1 + cc * es, sd1, ka, a + cc * sa0 + r * sa1, sa0, sa1, \
                            kb, b + cc * sb0 + r * sb1, sb0, sb1);                        \
        }                                                                                 \
    return 1;                                                                             \
}
KT_BAND_FN(ps)
KT_BAND_FN(pd)
#endif

/* d (row r at d + r * sd1, columns contiguous) = op(a, b) over nr x nc elements; which:
 * KT_COPY (b unused) or kernels_stream.h's KERN_H16_ADD .. KERN_BIN_MIN; esize 4 (float32)
 * or 8 (float64; for KT_COPY any 4- or 8-byte type, the bits are moved). 1: done; 0: not
 * handled (no AVX2, a layout or alignment this code does not take), nothing written. */
static inline int kern_tile_op(int which, int nt, int esize, int64_t nr, int64_t nc,
                               char * d, int64_t sd1,
                               const char * a, int64_t sa0, int64_t sa1,
                               const char * b, int64_t sb0, int64_t sb1) {
#if KERN_HAVE_TILE
    const int ka = kt_kind(sa0, sa1, esize);
    const int kb = which == KT_COPY ? KT_ROW : kt_kind(sb0, sb1, esize);
    if (ka < 0 || kb < 0 || (esize != 4 && esize != 8) || which < 0 || which > KERN_BIN_MIN)
        return 0;
    if (which == KT_COPY) { b = a; sb0 = sa0; sb1 = sa1; }
    /* the scalar reads of COL operands dereference as float / double */
    if ((((uintptr_t)d | (uintptr_t)a | (uintptr_t)b | (uintptr_t)sd1 | (uintptr_t)sa0 |
          (uintptr_t)sa1 | (uintptr_t)sb0 | (uintptr_t)sb1) % (uintptr_t)esize) != 0)
        return 0;
    if (esize == 4) return kt_band_ps(which, nt, nr, nc, d, sd1, ka, a, sa0, sa1, kb, b, sb0, sb1);
    return kt_band_pd(which, nt, nr, nc, d, sd1, ka, a, sa0, sa1, kb, b, sb0, sb1);
#else
    (void)which; (void)nt; (void)esize; (void)nr; (void)nc; (void)d; (void)sd1; (void)a;
    (void)sa0; (void)sa1; (void)b; (void)sb0; (void)sb1;
    return 0;
#endif
}

#endif
