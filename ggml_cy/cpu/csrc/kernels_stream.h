/* ggml_cy CPU kernels: float32 / float64 add, subtract, multiply, divide of contiguous rows
 * with non-temporal (streaming) stores, in one pass (issue 14).
 *
 * Why: beyond the last-level cache a large elementwise op is bound by memory, and streaming
 * stores save the read-for-ownership of every output line. The generic route (the row
 * function into an L1 stack buffer, then kern_stream_copy) pays a second pass through the
 * core for that: on the 2-core VM, float32 add of 4e6-1.6e7 elements with two threads ran at
 * 0.81 of the bench's STREAM add with streaming stores, measured in the same process; the
 * one-pass row here is the loop that roofline runs.
 *
 * The four IEEE operations and the selections give the same bits in any lane width, so the
 * scalar head (until the output reaches a 64-byte boundary) and tail agree with the vector
 * body and with numpy.
 * Returns 0 (nothing written) where there are no 256-bit streaming stores at this build's
 * level or an operand is not element-aligned; the caller then takes the staged route. */
#ifndef GGML_CY_KERNELS_STREAM_H
#define GGML_CY_KERNELS_STREAM_H

#include <stdint.h>
#include "kernels_convert.h"
#include "line_peel.h"

/* which: KERN_H16_ADD .. KERN_H16_DIV, or these two; maximum / minimum as numpy's loops and
 * kernels_elem.h's kern_max / kern_min: the first operand when it is NaN, else the larger
 * (smaller), the second on ties (maximum(+0, -0) = -0) */
#define KERN_BIN_MAX 5
#define KERN_BIN_MIN 6

/* Operand order of + and *: with two NaN operands x86 returns the first one's (quieted),
 * and numpy's loops give x's. C's x + y lets the compiler swap the operands (it did, in
 * both the scalar and the vector code), so the commutative two go through asm that names
 * the order. */
#define KERN_ORDERED(NAME, T, INSN, C)                                                    \
static inline __attribute__((always_inline)) T NAME(T x, T y) {                          \
    T r;                                                                                 \
    __asm__(INSN " %2, %1, %0" : "=" C (r) : C (x), C (y));                              \
    return r;                                                                            \
}

#define KERN_BIN_OP(which, x, y, ADD, MUL)                                               \
    ((which) == KERN_BIN_MAX ? (((x) > (y) || (x) != (x)) ? (x) : (y))                   \
     : (which) == KERN_BIN_MIN ? (((x) < (y) || (x) != (x)) ? (x) : (y))                 \
     : (which) == KERN_H16_ADD ? ADD(x, y) : (which) == KERN_H16_MUL ? MUL(x, y)         \
     : KERN_H16_OP(which, x, y))

/* The row: with nt, or from KERN_LINE_PEEL_MIN elements, a scalar head up to d's first
 * 64-byte boundary; then two vectors per step (streaming stores with nt, plain unaligned
 * ones without); then one vector at a time and a scalar tail. OP(which, x, y) is the vector
 * operation. */
/* (KERN_LINE_PEEL_MIN and kern_line_peel, the head up to d's 64-byte boundary: line_peel.h) */
#define KERN_BIN_ROW_BODY(T, VEC, LANES, SET1, LOAD, OP, STREAM, STOREU, SADD, SMUL)    \
    do {                                                                                 \
        int64_t i = 0;                                                                   \
        const T bs0 = b[0];                                                              \
        if (nt || n >= KERN_LINE_PEEL_MIN)                                               \
            for (; i < n && ((uintptr_t)(d + i) & 63u); i++)                             \
                d[i] = KERN_BIN_OP(which, a[i], b_scalar ? bs0 : b[i], SADD, SMUL);      \
        const VEC bs = SET1(bs0);                                                        \
        for (; i + 2 * (LANES) <= n; i += 2 * (LANES)) {                                 \
            const VEC x0 = LOAD(a + i), x1 = LOAD(a + i + (LANES));                      \
            const VEC y0 = b_scalar ? bs : LOAD(b + i);                                  \
            const VEC y1 = b_scalar ? bs : LOAD(b + i + (LANES));                        \
            if (nt) {                                                                    \
                STREAM(d + i, OP(which, x0, y0));                                        \
                STREAM(d + i + (LANES), OP(which, x1, y1));                              \
            } else {                                                                     \
                STOREU(d + i, OP(which, x0, y0));                                        \
                STOREU(d + i + (LANES), OP(which, x1, y1));                              \
            }                                                                            \
        }                                                                                \
        for (; i + (LANES) <= n; i += (LANES))                                           \
            STOREU(d + i, OP(which, LOAD(a + i), b_scalar ? bs : LOAD(b + i)));          \
        for (; i < n; i++)                                                               \
            d[i] = KERN_BIN_OP(which, a[i], b_scalar ? bs0 : b[i], SADD, SMUL);          \
    } while (0)

/* the vector operations; the comparisons are the quiet forms (no "invalid" on a NaN) */
#if defined(__AVX__)
KERN_ORDERED(kern_sadd_f32, float, "vaddss", "x")
KERN_ORDERED(kern_smul_f32, float, "vmulss", "x")
KERN_ORDERED(kern_sadd_f64, double, "vaddsd", "x")
KERN_ORDERED(kern_smul_f64, double, "vmulsd", "x")
KERN_ORDERED(kern_vadd256_ps, __m256, "vaddps", "x")
KERN_ORDERED(kern_vmul256_ps, __m256, "vmulps", "x")
KERN_ORDERED(kern_vadd256_pd, __m256d, "vaddpd", "x")
KERN_ORDERED(kern_vmul256_pd, __m256d, "vmulpd", "x")
#endif
#if defined(__AVX512F__)
#define KERN_HAVE_BIN_NT 1
KERN_ORDERED(kern_vadd512_ps, __m512, "vaddps", "v")
KERN_ORDERED(kern_vmul512_ps, __m512, "vmulps", "v")
KERN_ORDERED(kern_vadd512_pd, __m512d, "vaddpd", "v")
KERN_ORDERED(kern_vmul512_pd, __m512d, "vmulpd", "v")
#define KERN_NT_VOP(S, V, M)                                                             \
static inline __attribute__((always_inline)) V kern_nt_op_##S(int which, V x, V y) {     \
    if (which == KERN_H16_ADD) return kern_vadd512_##S(x, y);                            \
    if (which == KERN_H16_SUB) return _mm512_sub_##S(x, y);                              \
    if (which == KERN_H16_MUL) return kern_vmul512_##S(x, y);                            \
    if (which == KERN_H16_DIV) return _mm512_div_##S(x, y);                              \
    const M keep = _mm512_cmp_##S##_mask(x, y, which == KERN_BIN_MAX ? _CMP_GT_OQ : _CMP_LT_OQ) \
                 | _mm512_cmp_##S##_mask(x, x, _CMP_UNORD_Q);                            \
    return _mm512_mask_blend_##S(keep, y, x);                                            \
}
KERN_NT_VOP(ps, __m512, __mmask16)
KERN_NT_VOP(pd, __m512d, __mmask8)
#define KERN_F32_ROW() KERN_BIN_ROW_BODY(float, __m512, 16, _mm512_set1_ps, _mm512_loadu_ps, \
    kern_nt_op_ps, _mm512_stream_ps, _mm512_storeu_ps, kern_sadd_f32, kern_smul_f32)
#define KERN_F64_ROW() KERN_BIN_ROW_BODY(double, __m512d, 8, _mm512_set1_pd, _mm512_loadu_pd, \
    kern_nt_op_pd, _mm512_stream_pd, _mm512_storeu_pd, kern_sadd_f64, kern_smul_f64)
#elif defined(__AVX__)
#define KERN_HAVE_BIN_NT 1
#define KERN_NT_VOP(S, V)                                                                \
static inline __attribute__((always_inline)) V kern_nt_op_##S(int which, V x, V y) {     \
    if (which == KERN_H16_ADD) return kern_vadd256_##S(x, y);                            \
    if (which == KERN_H16_SUB) return _mm256_sub_##S(x, y);                              \
    if (which == KERN_H16_MUL) return kern_vmul256_##S(x, y);                            \
    if (which == KERN_H16_DIV) return _mm256_div_##S(x, y);                              \
    const V keep = _mm256_or_##S(                                                        \
        which == KERN_BIN_MAX ? _mm256_cmp_##S(x, y, _CMP_GT_OQ) : _mm256_cmp_##S(x, y, _CMP_LT_OQ), \
        _mm256_cmp_##S(x, x, _CMP_UNORD_Q));                                             \
    return _mm256_blendv_##S(y, x, keep);                                                \
}
KERN_NT_VOP(ps, __m256)
KERN_NT_VOP(pd, __m256d)
#define KERN_F32_ROW() KERN_BIN_ROW_BODY(float, __m256, 8, _mm256_set1_ps, _mm256_loadu_ps, \
    kern_nt_op_ps, _mm256_stream_ps, _mm256_storeu_ps, kern_sadd_f32, kern_smul_f32)
#define KERN_F64_ROW() KERN_BIN_ROW_BODY(double, __m256d, 4, _mm256_set1_pd, _mm256_loadu_pd, \
    kern_nt_op_pd, _mm256_stream_pd, _mm256_storeu_pd, kern_sadd_f64, kern_smul_f64)
#else
#define KERN_HAVE_BIN_NT 0
#endif

#if KERN_HAVE_BIN_NT
static inline __attribute__((always_inline))
void kern_f32_binary_row(const int which, const int nt, int64_t n, float * d, const float * a,
                         const float * b, int b_scalar) {
    KERN_F32_ROW();
}
static inline __attribute__((always_inline))
void kern_f64_binary_row(const int which, const int nt, int64_t n, double * d,
                         const double * a, const double * b, int b_scalar) {
    KERN_F64_ROW();
}
#define KERN_BIN_CASE(T, W, NT)                                                          \
    case 8 * (W) + (NT): kern_##T##_binary_row((W), (NT), n, (void *)d, (const void *)a,  \
                                               (const void *)b, b_scalar); return 1;
/* one case per (operation, nt): each body is compiled for its constant operation */
#define KERN_BIN_SWITCH(T)                                                               \
    switch (8 * which + nt) {                                                            \
    KERN_BIN_CASE(T, KERN_H16_ADD, 0) KERN_BIN_CASE(T, KERN_H16_ADD, 1)                   \
    KERN_BIN_CASE(T, KERN_H16_SUB, 0) KERN_BIN_CASE(T, KERN_H16_SUB, 1)                   \
    KERN_BIN_CASE(T, KERN_H16_MUL, 0) KERN_BIN_CASE(T, KERN_H16_MUL, 1)                   \
    KERN_BIN_CASE(T, KERN_H16_DIV, 0) KERN_BIN_CASE(T, KERN_H16_DIV, 1)                   \
    KERN_BIN_CASE(T, KERN_BIN_MAX, 0) KERN_BIN_CASE(T, KERN_BIN_MAX, 1)                   \
    KERN_BIN_CASE(T, KERN_BIN_MIN, 0) KERN_BIN_CASE(T, KERN_BIN_MIN, 1)                   \
    default: return 0;                                                                   \
    }
#endif

/* which: KERN_H16_ADD/SUB/MUL/DIV or KERN_BIN_MAX/MIN; nt: streaming stores; esize 4
 * (float32) or 8 (float64); b_scalar: b is one element broadcast along the row.
 * 1: done, 0: not taken (see the top). */
static inline int kern_binary_row(int which, int nt, int esize, int64_t n, char * d,
                                  const char * a, const char * b, int b_scalar) {
#if KERN_HAVE_BIN_NT
    /* the scalar head and tail dereference the rows as float / double */
    if ((((uintptr_t)d | (uintptr_t)a | (uintptr_t)b) % (uintptr_t)esize) != 0) return 0;
    if (n <= 0) return 1;                /* nothing to write (b[0] is not read) */
    nt = nt != 0;
    if (esize == 4) KERN_BIN_SWITCH(f32);
    if (esize == 8) KERN_BIN_SWITCH(f64);
#else
    (void)which; (void)nt; (void)esize; (void)n; (void)d; (void)a; (void)b; (void)b_scalar;
#endif
    return 0;
}

/* A run of nrows output rows of ne0 elements, back to back (d), from a source whose rows are
 * back to back too (a) and a broadcast one (b), op(a, b) per element, or op(b, a) with
 * b_first:
 *   bcol 1: a column broadcast, as (1048576,16) + (1048576,1): one element per row, row r's
 *           at b + r * sb1 (any byte stride);
 *   bcol 0: a row broadcast, as (1048576,16) + (16,): the same ne0 elements (contiguous at b)
 *           for every row.
 * One pass, no packed copy of b: each vector takes b's values for its row position, with a
 * lane mask where it straddles a row's end (rows of at least one vector, so never more than
 * two rows in a vector). Same elements, operations and operand order as the row function on
 * the packed rows: the same bits and FP flags. AVX-512 only; 1: done, 0: not taken (the
 * caller packs b, run_rows_srun). */
#if defined(__AVX512F__)
/* one element of the head or tail: b's value for row position pos (row q) */
#define KERN_BCAST_STEP(T, SADD, SMUL)                                                   \
    do {                                                                                 \
        const T bv = bcol ? bq : brow[pos];                                              \
        d[i] = b_first ? KERN_BIN_OP(which, bv, a[i], SADD, SMUL)                        \
                       : KERN_BIN_OP(which, a[i], bv, SADD, SMUL);                       \
        if (++pos == ne0) {                                                              \
            pos = 0;                                                                     \
            if (bcol && ++q < nrows) bq = *(const T *)(b + q * sb1);                     \
        }                                                                                \
    } while (0)
#define KERN_BCAST_BODY(T, VEC, LANES, SET1, LOAD, MBLEND, MLOAD, MZLOAD, OP, STREAM, STOREU, \
                        SADD, SMUL)                                                      \
    do {                                                                                 \
        const int64_t total = nrows * ne0;                                               \
        const T * const brow = (const T *)b;                                             \
        int64_t i = 0, q = 0, pos = 0;           /* element i is row q's pos-th */       \
        T bq = *(const T *)b;                    /* bcol: row q's value */               \
        VEC cur = SET1(bq);                                                              \
        /* scalar head to d's 64-byte boundary (streaming stores need it) */             \
        if (nt || total >= KERN_LINE_PEEL_MIN)                                           \
            for (; i < total && ((uintptr_t)(d + i) & 63u); i++)                         \
                KERN_BCAST_STEP(T, SADD, SMUL);                                          \
        if (bcol) cur = SET1(bq);                                                        \
        for (; i + (LANES) <= total; i += (LANES)) {                                     \
            const int64_t rem = ne0 - pos;          /* elements left in this row */      \
            VEC y;                                                                       \
            if (rem > (LANES)) {                                                         \
                y = bcol ? cur : LOAD(brow + pos);                                       \
                pos += (LANES);                                                          \
            } else if (!bcol) {                                                          \
                /* lanes [0, rem) this row's tail, the rest the next row's head */       \
                const unsigned lo = rem == (LANES) ? ~0u : (1u << rem) - 1u;             \
                y = MLOAD(MZLOAD(lo, brow + pos), ~lo, (const T *)((const char *)brow    \
                          - rem * (int64_t)sizeof(T)));                                  \
                pos = (LANES) - rem;                                                     \
            } else {                                                                     \
                /* lanes [0, rem) row q's, the rest row q + 1's (none when the run ends   \
                 * with this vector) */                                                  \
                const T bn = (q + 1 < nrows) ? *(const T *)(b + (q + 1) * sb1) : bq;     \
                const VEC nxt = SET1(bn);                                                \
                y = rem == (LANES) ? cur : MBLEND((1u << rem) - 1u, nxt, cur);           \
                q++;                                                                     \
                pos = (LANES) - rem;                                                     \
                bq = bn;                                                                 \
                cur = nxt;                                                               \
            }                                                                            \
            const VEC x = LOAD(a + i);                                                   \
            const VEC r = b_first ? OP(which, y, x) : OP(which, x, y);                   \
            if (nt) STREAM(d + i, r); else STOREU(d + i, r);                             \
        }                                                                                \
        for (; i < total; i++)                                                           \
            KERN_BCAST_STEP(T, SADD, SMUL);                                              \
    } while (0)
static inline __attribute__((always_inline))
void kern_f32_bcast_run(const int which, const int nt, const int bcol, int64_t nrows,
                        int64_t ne0, float * d, const float * a, const char * b, int64_t sb1,
                        int b_first) {
    KERN_BCAST_BODY(float, __m512, 16, _mm512_set1_ps, _mm512_loadu_ps, _mm512_mask_blend_ps,
                    _mm512_mask_loadu_ps, _mm512_maskz_loadu_ps, kern_nt_op_ps,
                    _mm512_stream_ps, _mm512_storeu_ps, kern_sadd_f32, kern_smul_f32);
}
static inline __attribute__((always_inline))
void kern_f64_bcast_run(const int which, const int nt, const int bcol, int64_t nrows,
                        int64_t ne0, double * d, const double * a, const char * b, int64_t sb1,
                        int b_first) {
    KERN_BCAST_BODY(double, __m512d, 8, _mm512_set1_pd, _mm512_loadu_pd, _mm512_mask_blend_pd,
                    _mm512_mask_loadu_pd, _mm512_maskz_loadu_pd, kern_nt_op_pd,
                    _mm512_stream_pd, _mm512_storeu_pd, kern_sadd_f64, kern_smul_f64);
}
#define KERN_BCAST_CASE(T, W, NT, BC)                                                    \
    case 8 * (W) + 2 * (NT) + (BC):                                                      \
        kern_##T##_bcast_run((W), (NT), (BC), nrows, ne0, (void *)d, (const void *)a, b, sb1, \
                             b_first);                                                   \
        return 1;
#define KERN_BCAST_CASES(T, W)                                                           \
    KERN_BCAST_CASE(T, W, 0, 0) KERN_BCAST_CASE(T, W, 0, 1)                               \
    KERN_BCAST_CASE(T, W, 1, 0) KERN_BCAST_CASE(T, W, 1, 1)
#define KERN_BCAST_SWITCH(T)                                                             \
    switch (8 * which + 2 * nt + bcol) {                                                 \
    KERN_BCAST_CASES(T, KERN_H16_ADD) KERN_BCAST_CASES(T, KERN_H16_SUB)                   \
    KERN_BCAST_CASES(T, KERN_H16_MUL) KERN_BCAST_CASES(T, KERN_H16_DIV)                   \
    KERN_BCAST_CASES(T, KERN_BIN_MAX) KERN_BCAST_CASES(T, KERN_BIN_MIN)                   \
    default: return 0;                                                                   \
    }
#endif

/* which, nt, esize as kern_binary_row; bcol, sb1, b_first as above; rows of at least one
 * vector (ne0 >= 64 / esize). */
static inline int kern_binary_bcast(int which, int nt, int esize, int bcol, int64_t nrows,
                                    int64_t ne0, char * d, const char * a, const char * b,
                                    int64_t sb1, int b_first) {
#if defined(__AVX512F__)
    if ((((uintptr_t)d | (uintptr_t)a | (uintptr_t)b | (uintptr_t)sb1) % (uintptr_t)esize) != 0
            || ne0 < 64 / esize || nrows <= 0)
        return 0;
    nt = nt != 0;
    bcol = bcol != 0;
    if (esize == 4) KERN_BCAST_SWITCH(f32);
    if (esize == 8) KERN_BCAST_SWITCH(f64);
#else
    (void)which; (void)nt; (void)esize; (void)bcol; (void)nrows; (void)ne0; (void)d; (void)a;
    (void)b; (void)sb1; (void)b_first;
#endif
    return 0;
}

#endif
