/* ggml_cy's CPU matrix product for GGML_OP_MUL_MAT (ggml's convention, all ne order):
 *   a (src0) [K, M, ne02, ne03], f32, f16 or bf16;  b (src1) [K, N, ne12, ne13], f32;
 *   dst [M, N, ne12, ne13] f32 with dst[n][m] = sum_k a[m][k] * b[n][k],
 *   a broadcast over the batch dims by block repetition (i02 = i12 / (ne12/ne02)).
 * In row-major terms dst (N x M) = B (N x K) . A^T, so both operands are read along K.
 * Everything is computed in f32: f16 weights are widened exactly and b is never rounded for
 * them; BF16 weights follow ggml's rule (b rounded to bf16, exact products, f32 sums;
 * mul_mat_bf16.h, VDPBF16PS where the CPU has AVX512_BF16).
 *
 * Every dst element is computed the same way on every path, whatever N, the tile it falls
 * in or the thread count: per K block of MM_KC an FMA chain over k in order starting from
 * zero, the blocks' sums added in order. So the bits do not depend on the thread count, and
 * a row of b gives the same bits alone (decode) as inside a batch (prompt). BF16 weights
 * keep both promises with their own chain (mul_mat_bf16.h: per pair of k the odd element's
 * product first, VDPBF16PS's order), the same bits at every dispatch level on normal
 * values; their row-interleaved copy (matvec_repack.h) holds the pairs as dwords.
 * On CPUs with AMX (Sapphire Rapids and later Xeons) BF16 weights whose rows are adjacent
 * along K go to the tiles instead, for every N (mul_mat_amx.h): the same rule, the tile
 * unit's own summation order, both promises kept within that engine (not the same bits as
 * the VDPBF16PS chain; GGML_CY_NO_AMX=1 or a GGML_CY_CPU_FEATURES cap turns it off).
 * Two paths, chosen from the shapes:
 *  - N <= MM_GEMV_MAX_N with rows of a and b adjacent along K (mat-vec, decode): no
 *    packing; a is streamed once (memory bound), 16 rows at a time transposed in registers.
 *  - otherwise the classic Goto/BLIS blocking (written from the literature's description):
 *    for an M block of MM_NC columns and a K block of MM_KC, a is packed into MM_NR-wide
 *    k-major panels (f16/bf16 widened here, once per panel); for each N block of MM_MC rows
 *    b is packed into MM_MR-wide k-major panels; an MM_MR x MM_NR register-tiled
 *    micro-kernel sweeps the block. AVX-512: an 8 x 32 tile (16 zmm accumulators,
 *    masked edge stores); otherwise a 6 x 16 tile of GCC vector extensions (AVX2 FMAs under
 *    -march=x86-64-v3, plain SSE or NEON elsewhere). On AVX-512, F32/F16 tasks with 24..64
 *    rows of b leave a unpacked instead (mul_mat_thin.h: rows of b in the vector lanes).
 *  Threads: the batch x M x N iteration space is cut into a grid of equal tasks chosen to
 *  keep every thread busy while packing as little as possible (each task packs its own
 *  panels; no barrier inside the node). On 2..4 threads, while that split is measured to
 *  lag, a product may deal slices of a instead, each thread keeping all of b packed once in
 *  its scratch (mul_mat_ndeal.h). */
#ifndef GGML_CY_MUL_MAT_H
#define GGML_CY_MUL_MAT_H
#include <stdint.h>
#include <string.h>
#include "core_defs.h"
#include "matvec_repack.h"
#include "mul_mat_tr16.h"
#include "mul_mat_amx.h"
#if defined(__F16C__) || defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
#define MM_AVX512 1
#define MM_MR 8      /* rows of the C tile (b rows, N) */
#define MM_NR 32     /* columns of the C tile (a rows, M): two zmm */
#ifndef MM_KC
#define MM_KC 256    /* K block: an 8 x KC b micro-panel (8 KiB) stays in L1 */
#endif
#ifndef MM_NC
#define MM_NC 512    /* M block: the packed a block (KC x NC, 512 KiB) stays in L2 */
#endif
#ifndef MM_MC
#define MM_MC 192    /* N block: the packed b block (MC x KC, 192 KiB) */
#endif
#else
#define MM_MR 6
#define MM_NR 16
#ifndef MM_KC
#define MM_KC 256
#endif
#ifndef MM_NC
#define MM_NC 256
#endif
#ifndef MM_MC
#define MM_MC 72
#endif
#endif
/* (MM_KC, MM_NC, MM_MC may be set on the compiler's command line: bench/csrc/mm_tune.c
 * sweeps them; MM_NC must be a multiple of MM_NR and MM_MC of MM_MR.) */
/* The last-level cache in bytes for the f32 mat-vec's prefetch rule (mm_gv_prefetch_for;
 * outside the AVX-512 block so every build's module can set it at import). */
static int64_t mm_gv_llc = 0;
#define MM_GEMV_MAX_N 4   /* b with at most this many rows per matrix: the mat-vec path */

static inline int64_t mm_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

typedef float mm_v8 __attribute__((vector_size(32), aligned(32)));
typedef float mm_v8u __attribute__((vector_size(32), aligned(4)));

/* Floats of per-thread scratch the kernel needs (packed A block + packed B block), plus
 * slack for 64-byte alignment. */
static inline size_t mm_work_floats_per_thread(void) {
    const size_t n = (size_t)MM_NC * MM_KC + (size_t)(MM_MC + MM_MR) * MM_KC + 64;
#if defined(MMX_BUILT)
    /* the AMX engine's scratch (its 1 MiB panel of b), only where the tiles can run: the
     * engine runs only when mmx_ready() (mmx_takes), so other CPUs keep the f32 size */
    const size_t x = mmx_ready() ? (mmx_work_bytes() + 3) / 4 : 0;
    return n > x ? n : x;
#else
    return n;
#endif
}

static inline float mm_f16_to_f32(uint16_t h) {
#if defined(__F16C__)
    return _cvtsh_ss(h);
#else
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man == 0) {
        bits = sign;
    } else {  /* subnormal half: normalize */
        int e = -1;
        do { man <<= 1; e++; } while ((man & 0x400u) == 0);
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
#endif
}

static inline float mm_bf16_to_f32(uint16_t h) {
    const uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Widens kb elements of one row of a (f16/bf16/f32, stride nb00 bytes) into f32 tmp. */
static inline void mm_widen_row(const char * row, int type, int64_t nb00, int64_t kb,
                                float * tmp) {
    int64_t k = 0;
    if (type == GGML_TYPE_F32) {
        if (nb00 == 4) { memcpy(tmp, row, (size_t)kb * 4); return; }
        for (; k < kb; k++) tmp[k] = *(const float *)(row + k * nb00);
    } else if (type == GGML_TYPE_BF16) {  /* (issue 13, ops3) bf16: the high half */
        if (nb00 == 2) {
            const uint16_t * r = (const uint16_t *)row;
#if defined(MM_AVX512)
            for (; k + 16 <= kb; k += 16)
                _mm512_storeu_ps(tmp + k, _mm512_castsi512_ps(_mm512_slli_epi32(
                    _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(r + k))), 16)));
#endif
            for (; k < kb; k++) tmp[k] = mm_bf16_to_f32(r[k]);
        } else {
            for (; k < kb; k++) tmp[k] = mm_bf16_to_f32(*(const uint16_t *)(row + k * nb00));
        }
    } else {  /* GGML_TYPE_F16 */
        if (nb00 == 2) {
            const uint16_t * r = (const uint16_t *)row;
#if defined(MM_AVX512)
            for (; k + 16 <= kb; k += 16)
                _mm512_storeu_ps(tmp + k,
                                 _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(r + k))));
#elif defined(__F16C__)
            for (; k + 8 <= kb; k += 8)
                _mm256_storeu_ps(tmp + k,
                                 _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(r + k))));
#endif
            for (; k < kb; k++) tmp[k] = mm_f16_to_f32(r[k]);
        } else {
            for (; k < kb; k++) tmp[k] = mm_f16_to_f32(*(const uint16_t *)(row + k * nb00));
        }
    }
}

#if defined(MM_AVX512)
/* 16 elements of a row at element k, widened to f32 (the row's elements adjacent). */
static inline __m512 mm_load16(const char * row, int type, int64_t k) {
    if (type == GGML_TYPE_F32) return _mm512_loadu_ps((const float *)row + k);
    const __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)row + k));
    if (type == GGML_TYPE_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* Transposes the k range [0, kb) of up to 16 rows (nrows valid, the rest zero; elements
 * adjacent) into out: out[k * ld + i] = row_i[k] for i < 16 when half == 0; with
 * half == 1 rows 0..7 go to out0 and rows 8..15 to out1, ld 8 each (the b panels). */
static inline void mm_tr_rows(const char * const * rows, int nrows, int type, int64_t kb,
                              float * out0, float * out1, int64_t ld, int half) {
    int64_t k = 0;
    for (; k + 16 <= kb; k += 16) {
        __m512 r[16];
        for (int i = 0; i < 16; i++) {
            if (i < nrows) {
#if defined(MM_PREFETCH)
                _mm_prefetch((const char *)rows[i] + (k + MM_PREFETCH) * (type == GGML_TYPE_F32 ? 4 : 2),
                             _MM_HINT_T0);
#endif
                r[i] = mm_load16(rows[i], type, k);
            } else {
                r[i] = _mm512_setzero_ps();
            }
        }
        mm_tr16(r);
        for (int i = 0; i < 16; i++) {
            if (!half) {
                _mm512_storeu_ps(out0 + (k + i) * ld, r[i]);
            } else {
                _mm256_storeu_ps(out0 + (k + i) * ld, _mm512_castps512_ps256(r[i]));
                if (out1)
                    _mm256_storeu_ps(out1 + (k + i) * ld, _mm256_castpd_ps(
                        _mm512_extractf64x4_pd(_mm512_castps_pd(r[i]), 1)));
            }
        }
    }
    for (; k < kb; k++) {
        for (int i = 0; i < 16; i++) {
            float v = 0.0f;
            if (i < nrows) {
                if (type == GGML_TYPE_F32) v = ((const float *)rows[i])[k];
                else if (type == GGML_TYPE_F16) v = mm_f16_to_f32(((const uint16_t *)rows[i])[k]);
                else v = mm_bf16_to_f32(((const uint16_t *)rows[i])[k]);
            }
            if (!half) out0[k * ld + i] = v;
            else if (i < 8) out0[k * ld + i] = v;
            else if (out1) out1[k * ld + i - 8] = v;
        }
    }
}
#endif

/* Packs a[m0:m0+mb, k0:k0+kb] (rows of a are M, elements along K) into MM_NR-wide panels:
 * ap[p*kb + k*MM_NR + j] = a(m0 + p + j, k0 + k) for p a multiple of MM_NR; rows past mb
 * are zero. tmp: MM_KC floats of scratch (a row widened to f32). */
static inline void mm_pack_a(const char * a, int type, int64_t nb00, int64_t nb01,
                             int64_t m0, int64_t mb, int64_t k0, int64_t kb, float * ap,
                             float * tmp) {
#if defined(MM_AVX512)
    const int64_t es = type == GGML_TYPE_F32 ? 4 : 2;
    if (nb00 == es) {   /* elements adjacent: 16 x 16 transposes */
        for (int64_t p = 0; p < mb; p += 16) {
            const char * rows[16];
            const int nrows = (int)(mb - p < 16 ? mb - p : 16);
            for (int i = 0; i < nrows; i++) rows[i] = a + (m0 + p + i) * nb01 + k0 * es;
            mm_tr_rows(rows, nrows, type, kb, ap + (p / MM_NR) * MM_NR * kb + (p % MM_NR),
                       NULL, MM_NR, 0);
        }
        /* a panel half past mb that no 16-row group reached: zeros */
        if ((mb % MM_NR) != 0 && (mb % MM_NR) <= 16) {
            float * dstp = ap + (mb / MM_NR) * MM_NR * kb + 16;
            for (int64_t k = 0; k < kb; k++)
                memset(dstp + k * MM_NR, 0, 16 * sizeof(float));
        }
        return;
    }
#endif
    for (int64_t p = 0; p < mb; p += MM_NR) {
        float * dstp = ap + p * kb;
        for (int j = 0; j < MM_NR; j++) {
            if (p + j >= mb) {
                for (int64_t k = 0; k < kb; k++) dstp[k * MM_NR + j] = 0.0f;
                continue;
            }
            const char * row = a + (m0 + p + j) * nb01 + k0 * nb00;
            const float * src = tmp;
            if (type == GGML_TYPE_F32 && nb00 == 4) src = (const float *)row;
            else mm_widen_row(row, type, nb00, kb, tmp);
            for (int64_t k = 0; k < kb; k++) dstp[k * MM_NR + j] = src[k];
        }
    }
}

/* Packs b[n0:n0+nbk, k0:k0+kb] into MM_MR-wide panels:
 * bp[q*kb + k*MM_MR + i] = b(n0+q+i, k0+k); rows past nbk are zero. */
static inline void mm_pack_b(const char * b, int64_t nb10, int64_t nb11, int64_t n0,
                             int64_t nbk, int64_t k0, int64_t kb, float * bp) {
#if defined(MM_AVX512)
    if (nb10 == 4) {    /* elements adjacent: two 8-row panels per 16 x 16 transpose */
        for (int64_t q = 0; q < nbk; q += 16) {
            const char * rows[16];
            const int nrows = (int)(nbk - q < 16 ? nbk - q : 16);
            for (int i = 0; i < nrows; i++) rows[i] = b + (n0 + q + i) * nb11 + k0 * 4;
            mm_tr_rows(rows, nrows, GGML_TYPE_F32, kb, bp + q * kb,
                       nrows > 8 ? bp + (q + 8) * kb : NULL, MM_MR, 1);
        }
        return;
    }
#endif
    for (int64_t q = 0; q < nbk; q += MM_MR) {
        float * dstp = bp + q * kb;
        for (int i = 0; i < MM_MR; i++) {
            if (q + i >= nbk) {
                for (int64_t k = 0; k < kb; k++) dstp[k * MM_MR + i] = 0.0f;
                continue;
            }
            const char * row = b + (n0 + q + i) * nb11 + k0 * nb10;
            if (nb10 == 4) {
                const float * r = (const float *)row;
                for (int64_t k = 0; k < kb; k++) dstp[k * MM_MR + i] = r[k];
            } else {
                for (int64_t k = 0; k < kb; k++)
                    dstp[k * MM_MR + i] = *(const float *)(row + k * nb10);
            }
        }
    }
}

#if defined(MM_AVX512)
/* C[0:rows, 0:cols] (+)= acc for one 8x32 tile (acc[i][h]: row i, columns 16h..16h+15); c has
 * row stride ldc floats. Columns past cols are masked off (edge tiles) and rows past rows
 * not touched. The tail of both AVX-512 micro-kernels (f32 FMAs here, VDPBF16PS in
 * mul_mat_bf16.h): one copy, so their edge tiles cannot drift apart. acc is a pointer to the
 * whole array, not to its first row: GCC then knows rows <= MM_MR, peels the loop and keeps
 * the 16 accumulators in registers (with a row pointer it spilled them to the stack). */
static inline __attribute__((always_inline)) void mm_store_tile(const __m512 (*acc)[MM_MR][2],
                                                                float * __restrict c,
                                                                int64_t ldc, int accumulate,
                                                                int rows, int cols) {
    const __mmask16 m0 = cols >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << cols) - 1u);
    const __mmask16 m1 = cols >= 32 ? (__mmask16)0xffff
                       : cols <= 16 ? (__mmask16)0 : (__mmask16)((1u << (cols - 16)) - 1u);
    for (int i = 0; i < rows; i++) {
        float * row = c + i * ldc;
        __m512 v0 = (*acc)[i][0], v1 = (*acc)[i][1];
        if (accumulate) {
            v0 = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, row), v0);
            v1 = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, row + 16), v1);
        }
        _mm512_mask_storeu_ps(row, m0, v0);
        _mm512_mask_storeu_ps(row + 16, m1, v1);
    }
}

/* The sixteen zmm accumulators of the AVX-512 8 x 32 tiles (cRH: row R, half H), zeroed,
 * and the array view of them that the tiles' stores take: shared by mm_micro, the
 * VDPBF16PS micro-kernel (mul_mat_bf16.h) and the thin tiles (mul_mat_thin.h). */
#define MM_ACC16_ZERO()                                                                      \
    __m512 c00 = _mm512_setzero_ps(), c01 = _mm512_setzero_ps();                             \
    __m512 c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps();                             \
    __m512 c20 = _mm512_setzero_ps(), c21 = _mm512_setzero_ps();                             \
    __m512 c30 = _mm512_setzero_ps(), c31 = _mm512_setzero_ps();                             \
    __m512 c40 = _mm512_setzero_ps(), c41 = _mm512_setzero_ps();                             \
    __m512 c50 = _mm512_setzero_ps(), c51 = _mm512_setzero_ps();                             \
    __m512 c60 = _mm512_setzero_ps(), c61 = _mm512_setzero_ps();                             \
    __m512 c70 = _mm512_setzero_ps(), c71 = _mm512_setzero_ps()
#define MM_ACC16_ARRAY(name)                                                                 \
    const __m512 name[8][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31},               \
                               {c40, c41}, {c50, c51}, {c60, c61}, {c70, c71}}

/* C[0:rows, 0:cols] (+)= Bpanel . Apanel^T for one 8x32 tile; c has row stride ldc floats.
 * Sixteen zmm accumulators; per k two loads of a and eight broadcasts of b. The tile's 16
 * lines of C are prefetched first (MM_PF_C), so that the loads and stores at the end do not
 * wait on the L2 / L3 after the FMA chains (BLIS's micro-kernels do the same). The a panel
 * streams from the L2 (the b panel stays in the L1); its lines are prefetched MM_PF_A
 * k-steps (2 KiB) ahead, past the panel's end into the next one, which lies right after it:
 * on the 16-core EMR host the hardware prefetchers alone left the kernel at 0.95-0.96x
 * torch's one-core rate, and at ~0.8x in the moments the machine slowed it; with the
 * prefetch 0.97x and ~0.97x (round w3: every CPU, calls taking turns with torch). */
#ifndef MM_PF_C
#define MM_PF_C 1
#endif
#ifndef MM_PF_A
#define MM_PF_A 16
#endif
static inline void mm_micro(int64_t kb, const float * __restrict bp,
                            const float * __restrict ap, float * __restrict c,
                            int64_t ldc, int accumulate, int rows, int cols) {
    if (MM_PF_C)
        for (int i = 0; i < rows; i++) {
            _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
            _mm_prefetch((const char *)(c + i * ldc) + 64, _MM_HINT_T0);
        }
    MM_ACC16_ZERO();
    for (int64_t k = 0; k < kb; k++) {
#if MM_PF_A > 0
        _mm_prefetch((const char *)(ap + (k + MM_PF_A) * MM_NR), _MM_HINT_T0);
        _mm_prefetch((const char *)(ap + (k + MM_PF_A) * MM_NR) + 64, _MM_HINT_T0);
#endif
        const __m512 a0 = _mm512_load_ps(ap + k * MM_NR);
        const __m512 a1 = _mm512_load_ps(ap + k * MM_NR + 16);
        const float * bk = bp + k * MM_MR;
        __m512 b;
        b = _mm512_set1_ps(bk[0]); c00 = _mm512_fmadd_ps(b, a0, c00); c01 = _mm512_fmadd_ps(b, a1, c01);
        b = _mm512_set1_ps(bk[1]); c10 = _mm512_fmadd_ps(b, a0, c10); c11 = _mm512_fmadd_ps(b, a1, c11);
        b = _mm512_set1_ps(bk[2]); c20 = _mm512_fmadd_ps(b, a0, c20); c21 = _mm512_fmadd_ps(b, a1, c21);
        b = _mm512_set1_ps(bk[3]); c30 = _mm512_fmadd_ps(b, a0, c30); c31 = _mm512_fmadd_ps(b, a1, c31);
        b = _mm512_set1_ps(bk[4]); c40 = _mm512_fmadd_ps(b, a0, c40); c41 = _mm512_fmadd_ps(b, a1, c41);
        b = _mm512_set1_ps(bk[5]); c50 = _mm512_fmadd_ps(b, a0, c50); c51 = _mm512_fmadd_ps(b, a1, c51);
        b = _mm512_set1_ps(bk[6]); c60 = _mm512_fmadd_ps(b, a0, c60); c61 = _mm512_fmadd_ps(b, a1, c61);
        b = _mm512_set1_ps(bk[7]); c70 = _mm512_fmadd_ps(b, a0, c70); c71 = _mm512_fmadd_ps(b, a1, c71);
    }
    MM_ACC16_ARRAY(acc);
    mm_store_tile(&acc, c, ldc, accumulate, rows, cols);
}
#else
/* C[0:rows, 0:cols] (+)= Bpanel . Apanel^T for one 6x16 tile; c has row stride ldc floats. */
static inline void mm_micro(int64_t kb, const float * __restrict bp,
                            const float * __restrict ap, float * __restrict c,
                            int64_t ldc, int accumulate, int rows, int cols) {
    mm_v8 c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};
    mm_v8 c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};
    for (int64_t k = 0; k < kb; k++) {
        const mm_v8 a0 = *(const mm_v8 *)(ap + k * MM_NR);
        const mm_v8 a1 = *(const mm_v8 *)(ap + k * MM_NR + 8);
        const float * bk = bp + k * MM_MR;
        float b;
        b = bk[0]; c00 += b * a0; c01 += b * a1;
        b = bk[1]; c10 += b * a0; c11 += b * a1;
        b = bk[2]; c20 += b * a0; c21 += b * a1;
        b = bk[3]; c30 += b * a0; c31 += b * a1;
        b = bk[4]; c40 += b * a0; c41 += b * a1;
        b = bk[5]; c50 += b * a0; c51 += b * a1;
    }
    mm_v8 acc[MM_MR][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                           {c30, c31}, {c40, c41}, {c50, c51}};
    if (rows == MM_MR && cols == MM_NR) {
        for (int i = 0; i < MM_MR; i++) {
            mm_v8u * row = (mm_v8u *)(c + i * ldc);
            if (accumulate) {
                row[0] += acc[i][0];
                row[1] += acc[i][1];
            } else {
                row[0] = acc[i][0];
                row[1] = acc[i][1];
            }
        }
        return;
    }
    float tile[MM_MR][MM_NR] __attribute__((aligned(32)));
    memcpy(tile, acc, sizeof(tile));
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            if (accumulate) c[i * ldc + j] += tile[i][j];
            else c[i * ldc + j] = tile[i][j];
        }
}
#endif

#include "mul_mat_bf16.h"
#include "mul_mat_thin.h"

/* ---------------------------------------------------------------- mat-vec (small N) */
/* Same arithmetic as the packed path, element for element (so a row of b gives the same
 * bits whatever N is, and prompt + decode equals one pass): per K block of MM_KC an FMA
 * chain over k in order from zero, blocks added in order. The vectors run across rows of a
 * (16 rows with AVX-512, transposed in registers; 8 elsewhere), each multiplied by the
 * broadcast b[k]; a is read once, straight from the tensor. */
#if defined(MM_AVX512)
#define MM_GV 16
#else
#define MM_GV 8
#endif

static inline float mm_a_scalar(const char * row, int type, int64_t k) {
    if (type == GGML_TYPE_F32) return ((const float *)row)[k];
    const uint16_t h = ((const uint16_t *)row)[k];
    return type == GGML_TYPE_F16 ? mm_f16_to_f32(h) : mm_bf16_to_f32(h);
}

#if !defined(MM_AVX512)
/* One k of the 8-lane mat-vec chains: acc[j] += b_j[k] * v, the packed micro-kernel's
 * expression (the same contraction wherever it is inlined). */
static inline __attribute__((always_inline)) void mm_v8_step(mm_v8 * acc, mm_v8 v, const char * b,
                                                             int64_t nb11, int64_t k, int nn) {
    for (int j = 0; j < nn; j++) {
        const float bk = ((const float *)(b + j * nb11))[k];
        acc[j] += bk * v;
    }
}

/* The end of a K block: the first block's sums start y, later ones are added in order. */
static inline __attribute__((always_inline)) void mm_v8_block_end(mm_v8 * y, const mm_v8 * acc,
                                                                  int64_t pc, int nn) {
    for (int j = 0; j < nn; j++) {
        if (pc == 0) y[j] = acc[j];
        else y[j] += acc[j];
    }
}
#endif

/* b's rows j < nn, elements [pc, ke) of K block [pc, ke) (pc even), rounded to bf16 in
 * VDPBF16PS's order into out[j * ld + t] for chain step pc + t: step t takes element
 * mm_bf16_order(pc + t) (each pair's odd element first, a lone last element in place), of a
 * as of b. Pairs swapped in a loop GCC vectorizes. */
static inline void mm_bf16_bblock_fill(const char * b, int64_t nb11, int64_t pc, int64_t ke,
                                       int nn, float * out, int64_t ld) {
    for (int j = 0; j < nn; j++) {
        const float * r = (const float *)(b + j * nb11);
        float * o = out + j * ld - pc;
        int64_t k = pc;
        for (; k + 1 < ke; k += 2) {
            o[k] = r[k + 1];
            o[k + 1] = r[k];
        }
        if (k < ke) o[k] = r[k];
        mm_round_bf16_n(out + j * ld, ke - pc);
    }
}

/* b's K block [pc, ke) for the mat-vec chains: the rows themselves from pc (row stride
 * nb11), or for BF16 weights (the f32 variant of ggml's rule) mm_bf16_bblock_fill's copy in
 * bl (row stride MM_KC floats). */
static inline __attribute__((always_inline)) const char * mm_gemv_bblock(
        const char * b, int64_t nb11, int type, int64_t pc, int64_t ke, int nn, float * bl) {
    if (type != GGML_TYPE_BF16) return b + pc * 4;
    mm_bf16_bblock_fill(b, nb11, pc, ke, nn, bl, MM_KC);
    return (const char *)bl;
}

#if defined(MM_AVX512)
/* The chain steps [k, ke) of K block [pc, ke) for a group of 16 rows (adjacent along K) into
 * acc: 16-element steps transposed in registers, then one element at a time. Chain step t
 * takes b's value ((const float *)(bb + j * bs))[t - pc] (bb: b's K block in the chains'
 * order, as mm_gemv_bblock gives it) and a's element mm_bf16_order(type, t, pc, ke): t
 * itself except for BF16 weights (VDPBF16PS's order, pairs swapped; k - pc must then be
 * even). The whole loop of mm_gemv_block, and the tail of the mat-vec forms below, which
 * read their full steps their own way. */
static inline __attribute__((always_inline)) void mm_gv_tail(
        const char * const * rows, const int type, const char * bb, int64_t bs, int64_t k,
        int64_t pc, int64_t ke, __m512 * acc, const int nn) {
    for (; k + 16 <= ke; k += 16) {
        __m512 r[16];
        for (int i = 0; i < 16; i++) r[i] = mm_load16(rows[i], type, k);
        if (type == GGML_TYPE_BF16)           /* VDPBF16PS's order: pairs swapped */
            for (int i = 0; i < 16; i++) r[i] = _mm512_permute_ps(r[i], 0xB1);
        mm_tr16(r);                           /* r[i]: the 16 rows' elements k + i */
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < nn; j++)
                acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(((const float *)(bb + j * bs))[k - pc + i]),
                                         r[i], acc[j]);
    }
    for (; k < ke; k++) {
        const int64_t e = mm_bf16_order(type, k, pc, ke);
        float col[16];
        for (int i = 0; i < 16; i++) col[i] = mm_a_scalar(rows[i], type, e);
        const __m512 v = _mm512_loadu_ps(col);
        for (int j = 0; j < nn; j++)
            acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(((const float *)(bb + j * bs))[k - pc]),
                                     v, acc[j]);
    }
}
#endif

/* dst[n][m0 .. m0+nr) for n < nn (nn <= MM_GEMV_MAX_N), nr <= MM_GV rows of a from m0. */
static inline __attribute__((always_inline)) void mm_gemv_block(
        const char * a, int type, int64_t nb01, const char * b, int64_t nb11, char * c,
        int64_t nb1, int64_t K, int64_t m0, int nr, const int nn) {
    const char * rows[MM_GV];
    for (int i = 0; i < MM_GV; i++) rows[i] = a + (m0 + (i < nr ? i : 0)) * nb01;
#if defined(MM_AVX512)
    const __mmask16 mask = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1u);
    __m512 y[MM_GEMV_MAX_N];
    for (int j = 0; j < MM_GEMV_MAX_N; j++) y[j] = _mm512_setzero_ps();
    float bl[MM_GEMV_MAX_N * MM_KC] __attribute__((aligned(64)));
    for (int64_t pc = 0; pc < K; pc += MM_KC) {
        const int64_t ke = (K - pc < MM_KC) ? K : pc + MM_KC;
        const char * bb = mm_gemv_bblock(b, nb11, type, pc, ke, nn, bl);
        const int64_t bs = type == GGML_TYPE_BF16 ? MM_KC * 4 : nb11;
        __m512 acc[MM_GEMV_MAX_N];
        for (int j = 0; j < nn; j++) acc[j] = _mm512_setzero_ps();
        mm_gv_tail(rows, type, bb, bs, pc, pc, ke, acc, nn);
        for (int j = 0; j < nn; j++) y[j] = pc == 0 ? acc[j] : _mm512_add_ps(y[j], acc[j]);
    }
    for (int j = 0; j < nn; j++)
        _mm512_mask_storeu_ps((float *)(c + j * nb1) + m0, mask, y[j]);
#else
    mm_v8 y[MM_GEMV_MAX_N];
    for (int j = 0; j < MM_GEMV_MAX_N; j++) { mm_v8 z = {0}; y[j] = z; }
    float bl[MM_GEMV_MAX_N * MM_KC] __attribute__((aligned(64)));
    for (int64_t pc = 0; pc < K; pc += MM_KC) {
        const int64_t ke = (K - pc < MM_KC) ? K : pc + MM_KC;
        const char * bb = mm_gemv_bblock(b, nb11, type, pc, ke, nn, bl);
        const int64_t bs = type == GGML_TYPE_BF16 ? MM_KC * 4 : nb11;
        mm_v8 acc[MM_GEMV_MAX_N];
        for (int j = 0; j < nn; j++) { mm_v8 z = {0}; acc[j] = z; }
        int64_t k = pc;
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
        for (; k + 8 <= ke; k += 8) {        /* 8 x 8 blocks transposed in registers */
            __m256 r[8];
            for (int i = 0; i < 8; i++) {
                if (type == GGML_TYPE_F32) {
                    r[i] = _mm256_loadu_ps((const float *)rows[i] + k);
                } else {
                    const __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)rows[i] + k));
                    r[i] = type == GGML_TYPE_F16 ? _mm256_cvtph_ps(h)   /* BF16: pairs swapped */
                         : _mm256_permute_ps(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)), 0xB1);
                }
            }
            const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
            const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
            const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
            const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
            const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
            const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
            const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
            const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
            __m256 col[8];                    /* col[i]: the 8 rows' elements k + i */
            col[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
            col[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
            col[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
            col[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
            col[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
            col[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
            col[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
            col[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
            for (int i = 0; i < 8; i++) {
                mm_v8 v;
                memcpy(&v, &col[i], sizeof(v));
                mm_v8_step(acc, v, bb, bs, k - pc + i, nn);
            }
        }
#endif
        for (; k < ke; k++) {
            const int64_t e = mm_bf16_order(type, k, pc, ke);
            mm_v8 v;
            for (int i = 0; i < 8; i++) v[i] = mm_a_scalar(rows[i], type, e);
            mm_v8_step(acc, v, bb, bs, k - pc, nn);
        }
        mm_v8_block_end(y, acc, pc, nn);
    }
    for (int j = 0; j < nn; j++) {
        float t[8];
        memcpy(t, &y[j], sizeof(t));
        for (int i = 0; i < nr; i++) ((float *)(c + j * nb1))[m0 + i] = t[i];
    }
#endif
}

#if defined(MM_AVX512)
/* (mvf32) The mat-vec for F32 rows whose 16 rows share L1 sets (F16 rows: mvf16 below).
 * mm_gemv_block reads the 16 rows of a group at the same k: when the row stride is a multiple
 * of 4 KiB (K = 4096, and every K a multiple of 1024), those 16 lines all fall in one
 * set of the 8-way L1, the lines the hardware brings in ahead evict one another, and the VM
 * read 4096 x 4096 f32 at 17 GB/s on one thread against 31 for a plain read (25 with the rows
 * padded apart). Here rows 8..15 are read MM_GV_SKEW bytes ahead of rows 0..7 and wait in a
 * ring on the stack (in L1) until their k comes: each set then sees 8 lines at a time. Every
 * row is also prefetched into L2 MM_GV_PREFETCH bytes ahead when the matrix exceeds the
 * last-level cache (mm_gv_prefetch_for): with a read from DRAM (a cold 64 MB matrix) the
 * hardware streams alone left one thread at 3.1 ms, 2.7 with it.
 * The products are mm_gemv_block's, in its order (the ring only delays loads), so the bits are
 * those of every other path. Needs MM_KC % 16 == 0 (16-element steps run through K without a
 * gap); the K % 16 tail of the last block is read straight from the rows (mm_gv_tail). */
#define MM_GV_SKEW 512       /* bytes rows 8..15 are read ahead: 8 lines apart */
#define MM_GV_RING 16        /* ring slots (16-element steps), >= MM_GV_SKEW / 32 */
#ifndef MM_GV_PREFETCH
#define MM_GV_PREFETCH 2048  /* software prefetch distance into L2, bytes along each row */
#endif

/* Whether a mat-vec over a matrix of `bytes` prefetches its rows (mm_gemv_block_skew): only
 * one larger than the last-level cache, or when the cache size is unknown. The prefetch is
 * for rows coming from DRAM (above); with the matrix in the L3 it costs: the 16-core host,
 * 4096 x 4096 f32 (64 MB, L3 300 MB) read again and again, 2 threads, four rounds
 * (bench/csrc/mm_tune.c per distance, round w36): medians 1.63 ms without, 1.75 at 1 KiB,
 * 1.78 at 2 KiB, 1.92 at 4 KiB, 2.13 at 8 KiB (torch 1.54); one thread 3.6-3.7 ms for 0 to
 * 2 KiB alike. mm_gv_llc: the cache size, set at import by each extension module that
 * includes this header from the one ggml_cy.cpu._kernels measured (llc_bytes(): sysfs,
 * sysconf, GGML_CY_LLC_BYTES; _mm_dealt.pxi); 0, unknown, prefetches as before. */
static inline int mm_gv_prefetch_for(int64_t bytes) {
    return mm_gv_llc == 0 || bytes > mm_gv_llc;
}

/* 1 when the 16 rows of a group start in at most 2 distinct L1 sets (64 sets of 64 bytes). */
static inline int mm_gemv_rows_alias(int64_t nb01) {
    uint64_t seen = 0;
    for (int i = 0; i < 16; i++) seen |= (uint64_t)1 << ((((uint64_t)i * (uint64_t)nb01) >> 6) & 63);
    return __builtin_popcountll(seen) <= 2 && MM_KC % 16 == 0;
}

static inline __attribute__((always_inline)) void mm_gemv_block_skew(
        const char * a, int64_t nb01, const char * b, int64_t nb11, char * c,
        int64_t nb1, int64_t K, int64_t m0, int nr, const int nn, int pf) {
    const int type = GGML_TYPE_F32;
    const int64_t es = 4;
    const int D = (int)(MM_GV_SKEW / (16 * es));     /* steps rows 8..15 run ahead */
    const int64_t nsteps = K / 16;
    const char * rows[16];
    for (int i = 0; i < 16; i++) rows[i] = a + (m0 + (i < nr ? i : 0)) * nb01;
    const __mmask16 mask = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1u);
    __m512 ring[MM_GV_RING][8];
    for (int64_t t = 0; t < D && t < nsteps; t++)
        for (int i = 0; i < 8; i++) ring[t][i] = mm_load16(rows[8 + i], type, 16 * t);
    int slot = 0;
    __m512 y[MM_GEMV_MAX_N];
    for (int j = 0; j < MM_GEMV_MAX_N; j++) y[j] = _mm512_setzero_ps();
    for (int64_t pc = 0; pc < K; pc += MM_KC) {
        const int64_t ke = (K - pc < MM_KC) ? K : pc + MM_KC;
        __m512 acc[MM_GEMV_MAX_N];
        for (int j = 0; j < nn; j++) acc[j] = _mm512_setzero_ps();
        int64_t k = pc;
        for (; k + 16 <= ke; k += 16) {          /* step k / 16 of nsteps, in order */
            __m512 r[16];
            if (pf)                              /* into L2 only (L1 has no room) */
                for (int i = 0; i < 16; i++)
                    _mm_prefetch(rows[i] + k * es + MM_GV_PREFETCH, _MM_HINT_T1);
            for (int i = 0; i < 8; i++) r[i] = mm_load16(rows[i], type, k);
            for (int i = 0; i < 8; i++) r[8 + i] = ring[slot][i];
            if (k + 16 * D + 16 <= K)            /* step k / 16 + D is whole: read it now */
                for (int i = 0; i < 8; i++) ring[slot][i] = mm_load16(rows[8 + i], type, k + 16 * D);
            if (++slot == D) slot = 0;
            mm_tr16(r);                       /* r[i]: the 16 rows' elements k + i */
            for (int i = 0; i < 16; i++)
                for (int j = 0; j < nn; j++)
                    acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(((const float *)(b + j * nb11))[k + i]),
                                             r[i], acc[j]);
        }
        mm_gv_tail(rows, type, b + pc * 4, nb11, k, pc, ke, acc, nn);
        for (int j = 0; j < nn; j++) y[j] = pc == 0 ? acc[j] : _mm512_add_ps(y[j], acc[j]);
    }
    for (int j = 0; j < nn; j++)
        _mm512_mask_storeu_ps((float *)(c + j * nb1) + m0, mask, y[j]);
}
#endif

#if defined(MM_AVX512)
/* (mvf16) The mat-vec for F16 rows, 32 elements of K per step. mm_gemv_block_skew widens
 * 16 rows' halves to f32 first and transposes 16 x 16 floats (64 shuffles per 256 products);
 * that left the VM's f16 mat-vec compute-bound (4096 x 4096: 2.2 ms on one thread against
 * torch's 1.46, which reads at the DRAM rate). Here the halves are transposed as 16-bit words
 * before widening: rows 0..7 and rows 8..15 each go through three unpack stages (each 128-bit
 * lane then holds 8 rows at one k), and one two-source qword permute joins the two groups'
 * lanes for a k into the 16 halves that one VCVTPH2PS widens: 40 shuffles per 256 products.
 * Each row is read a whole 64-byte line per step, so the 16 rows' lines, though they share
 * an L1 set (rows 4 KiB apart), are consumed as they arrive: the read-ahead ring of the f32
 * form measured slower here (VM, 4096 x 4096: 1.06 -> 0.89 ms at 2 threads without the ring,
 * 1.0 with it; bench/csrc/mm_tune.c). The FMA chain is mm_gemv_block's, k in order per K
 * block: the same bits as every other path. Needs MM_KC % 32 == 0.
 * BF16 rows where the CPU has no VDPBF16PS (the f32 variant of ggml's rule) take the same
 * form: widened by a shift, in that instruction's pair order, against b rounded to bf16 and
 * put in that order once per task (mm_bf16_bblock_fill over all of K; mm_gemv_block redid
 * it for every 16 rows), the chain of mm_gemv_block's BF16 case. Through mm_gemv_block they
 * took 3.4 / 1.75 ms (VM, 4096 x 4096, 1 / 2 threads; torch 2.8 / 1.25), now 2.0 / 1.05. */
/* 8 rows' 32 halves each (z[i]: row i, elements 0..31) to c[j]: 128-bit lane L holds the
 * 8 rows' element 8L + j, row 0 first (three unpack stages: words, dwords, qwords). */
static inline __attribute__((always_inline)) void mm_tr8x16_epi16(const __m512i * z, __m512i * c) {
    const __m512i l01 = _mm512_unpacklo_epi16(z[0], z[1]), h01 = _mm512_unpackhi_epi16(z[0], z[1]);
    const __m512i l23 = _mm512_unpacklo_epi16(z[2], z[3]), h23 = _mm512_unpackhi_epi16(z[2], z[3]);
    const __m512i l45 = _mm512_unpacklo_epi16(z[4], z[5]), h45 = _mm512_unpackhi_epi16(z[4], z[5]);
    const __m512i l67 = _mm512_unpacklo_epi16(z[6], z[7]), h67 = _mm512_unpackhi_epi16(z[6], z[7]);
    const __m512i b0 = _mm512_unpacklo_epi32(l01, l23), b1 = _mm512_unpackhi_epi32(l01, l23);
    const __m512i b2 = _mm512_unpacklo_epi32(h01, h23), b3 = _mm512_unpackhi_epi32(h01, h23);
    const __m512i b4 = _mm512_unpacklo_epi32(l45, l67), b5 = _mm512_unpackhi_epi32(l45, l67);
    const __m512i b6 = _mm512_unpacklo_epi32(h45, h67), b7 = _mm512_unpackhi_epi32(h45, h67);
    c[0] = _mm512_unpacklo_epi64(b0, b4); c[1] = _mm512_unpackhi_epi64(b0, b4);
    c[2] = _mm512_unpacklo_epi64(b1, b5); c[3] = _mm512_unpackhi_epi64(b1, b5);
    c[4] = _mm512_unpacklo_epi64(b2, b6); c[5] = _mm512_unpackhi_epi64(b2, b6);
    c[6] = _mm512_unpacklo_epi64(b3, b7); c[7] = _mm512_unpackhi_epi64(b3, b7);
}
/* One 32-element step (chain steps k .. k+31 of K block pc) of mm_gemv_h_block32: z[i] holds
 * row i's halves k .. k+31; F16 widened by VCVTPH2PS, BF16 by a 16-bit shift and taken in
 * VDPBF16PS's order (chain step k + t reads element k + (t ^ 1); k - pc is even). */
static inline __attribute__((always_inline)) void mm_gv16_step(
        const __m512i * z, const int type, const char * bb, int64_t bs, int64_t k, int64_t pc,
        __m512 * acc, const int nn) {
    const __m512i sel[4] = {_mm512_setr_epi64(0, 1, 8, 9, 0, 1, 8, 9),
                            _mm512_setr_epi64(2, 3, 10, 11, 2, 3, 10, 11),
                            _mm512_setr_epi64(4, 5, 12, 13, 4, 5, 12, 13),
                            _mm512_setr_epi64(6, 7, 14, 15, 6, 7, 14, 15)};
    __m512i cc[8], dd[8];
    mm_tr8x16_epi16(z, cc);
    mm_tr8x16_epi16(z + 8, dd);
#pragma GCC unroll 4
    for (int L = 0; L < 4; L++)                   /* chain steps k + 8L + jj */
#pragma GCC unroll 8
        for (int jj = 0; jj < 8; jj++) {
            const int e = type == GGML_TYPE_BF16 ? jj ^ 1 : jj;
            const __m256i h = _mm512_castsi512_si256(
                _mm512_permutex2var_epi64(cc[e], sel[L], dd[e]));
            const __m512 v = type == GGML_TYPE_BF16
                ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))
                : _mm512_cvtph_ps(h);
            const int64_t t = k - pc + 8 * L + jj;
            for (int j = 0; j < nn; j++)
                acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(((const float *)(bb + j * bs))[t]), v,
                                         acc[j]);
        }
}

/* dst[n][m0 .. m0+nr) for n < nn from 16 rows of a (F16, or BF16 with b given in the
 * chains' order: mm_bf16_bblock_fill over all of K, row stride nb11). */
static inline __attribute__((always_inline)) void mm_gemv_h_block32(
        const char * a, const int type, int64_t nb01, const char * b, int64_t nb11, char * c,
        int64_t nb1, int64_t K, int64_t m0, int nr, const int nn) {
    const char * rows[16];
    for (int i = 0; i < 16; i++) rows[i] = a + (m0 + (i < nr ? i : 0)) * nb01;
    const __mmask16 mask = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1u);
    /* rows a multiple of 64 bytes apart but not on a line: read whole lines (see above) */
    const int shift = (int)((uintptr_t)rows[0] & 63);
    const int lines = nb01 % 64 == 0 && shift != 0 && shift % 4 == 0;
    __m512i win = _mm512_setzero_si512();         /* dword j of the window: j + shift / 4 */
    if (lines)
        win = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                               _mm512_set1_epi32(shift / 4));
    __m512i prev[16];                              /* lines: the line before the window */
    int first = 1;                                 /* lines: prev not loaded yet */
    __m512 y[MM_GEMV_MAX_N];
    for (int j = 0; j < MM_GEMV_MAX_N; j++) y[j] = _mm512_setzero_ps();
    for (int64_t pc = 0; pc < K; pc += MM_KC) {
        const int64_t ke = (K - pc < MM_KC) ? K : pc + MM_KC;
        const char * bb = b + pc * 4;              /* chain step t: bb[t - pc] */
        __m512 acc[MM_GEMV_MAX_N];
        for (int j = 0; j < nn; j++) acc[j] = _mm512_setzero_ps();
        int64_t k = pc;
        if (lines) {
            /* step k's window starts shift bytes into the line at rows[i] + 2k - shift (the
             * line before, kept in prev) and ends in the next line, read here: each line is
             * read once. A step runs here only while that next line lies inside the row.
             * prev carries over into the next K block: its first step is k = ke of this one
             * (MM_KC % 32 == 0), and once a step falls out of this loop no later one enters. */
            for (; k + 32 <= ke && 2 * (k + 32) + 64 - shift <= 2 * K; k += 32, first = 0) {
                __m512i z[16];
                for (int i = 0; i < 16; i++) {
                    _mm_prefetch(rows[i] + k * 2 + MM_GV_PREFETCH, _MM_HINT_T1);
                    const __m512i next = _mm512_load_si512(rows[i] + 2 * k - shift + 64);
                    z[i] = first ? _mm512_loadu_si512(rows[i] + 2 * k)
                                 : _mm512_permutex2var_epi32(prev[i], win, next);
                    prev[i] = next;
                }
                mm_gv16_step(z, type, bb, nb11, k, pc, acc, nn);
            }
        }
        for (; k + 32 <= ke; k += 32) {
            __m512i z[16];
            for (int i = 0; i < 16; i++)             /* into L2 only (L1 has no room) */
                _mm_prefetch(rows[i] + k * 2 + MM_GV_PREFETCH, _MM_HINT_T1);
            for (int i = 0; i < 16; i++) z[i] = _mm512_loadu_si512(rows[i] + k * 2);
            mm_gv16_step(z, type, bb, nb11, k, pc, acc, nn);
        }
        mm_gv_tail(rows, type, bb, nb11, k, pc, ke, acc, nn);   /* K % 32 */
        for (int j = 0; j < nn; j++) y[j] = pc == 0 ? acc[j] : _mm512_add_ps(y[j], acc[j]);
    }
    for (int j = 0; j < nn; j++)
        _mm512_mask_storeu_ps((float *)(c + j * nb1) + m0, mask, y[j]);
}
#endif

static inline int64_t mm_type_size(int type) { return type == GGML_TYPE_F32 ? 4 : 2; }

/* The mat-vec path applies: few rows of b, every operand adjacent along K. */
static inline int mm_use_gemv(const ggml_tensor * dst) {
    const ggml_tensor * src0 = dst->src[0];
    const ggml_tensor * src1 = dst->src[1];
    return dst->ne[1] <= MM_GEMV_MAX_N && src0->nb[0] == mm_type_size(src0->type)
           && src1->nb[0] == 4;
}

/* mm_gemv_task's loop: CALL(m, nr, nn) for each group of MM_GV rows of [m_lo, m_hi), nn the
 * rows of b as a constant (1..4) so that each block is compiled for it. */
#define MM_GV_FOR_ROWS(CALL)                                                   \
    for (int64_t m = m_lo; m < m_hi; m += MM_GV) {                             \
        const int nr = (int)(m_hi - m < MM_GV ? m_hi - m : MM_GV);             \
        switch ((int)dst->ne[1]) {                                             \
        case 1: CALL(m, nr, 1); break;                                         \
        case 2: CALL(m, nr, 2); break;                                         \
        case 3: CALL(m, nr, 3); break;                                         \
        default: CALL(m, nr, 4); break;                                        \
        }                                                                      \
    }

static inline void mm_gemv_task(const ggml_tensor * dst, int64_t i2, int64_t i3,
                                int64_t m_lo, int64_t m_hi) {
    const ggml_tensor * src0 = dst->src[0];
    const ggml_tensor * src1 = dst->src[1];
    const int64_t K = src0->ne[0];
    const int64_t r2 = dst->ne[2] / src0->ne[2], r3 = dst->ne[3] / src0->ne[3];
    const char * a = (const char *)src0->data + (i2 / r2) * src0->nb[2] + (i3 / r3) * src0->nb[3];
    const char * b = (const char *)src1->data + i2 * src1->nb[2] + i3 * src1->nb[3];
    char * c = (char *)dst->data + i2 * dst->nb[2] + i3 * dst->nb[3];
    const int type = src0->type;
    const int64_t nb01 = src0->nb[1], nb11 = src1->nb[1], nb1 = dst->nb[1];
#if defined(MM_AVX512)
    if (type == GGML_TYPE_BF16 && mm_bf16_dp()) {
        mm_bf16_gemv_rows(a, nb01, b, nb11, c, nb1, K, m_lo, m_hi, (int)dst->ne[1]);
        return;
    }
    if (type == GGML_TYPE_F16 && MM_KC % 32 == 0) {                /* (mvf16) */
#define MM_GV16_CALL(M, NR, NN) \
        mm_gemv_h_block32(a, GGML_TYPE_F16, nb01, b, nb11, c, nb1, K, M, NR, NN)
        MM_GV_FOR_ROWS(MM_GV16_CALL);
#undef MM_GV16_CALL
        return;
    }
    if (type == GGML_TYPE_BF16 && MM_KC % 32 == 0) {   /* (mvf16) without VDPBF16PS */
        /* b in the chains' order and rounding once for every group of rows (no memory: the
         * general form below, which prepares it per group) */
        const int nn = (int)dst->ne[1];
        float * bq = (float *)malloc(sizeof(float) * (size_t)nn * (size_t)K);
        if (bq != NULL) {
            for (int64_t pc = 0; pc < K; pc += MM_KC)
                mm_bf16_bblock_fill(b, nb11, pc, (K - pc < MM_KC) ? K : pc + MM_KC, nn,
                                    bq + pc, K);
#define MM_GVB_CALL(M, NR, NN) mm_gemv_h_block32(a, GGML_TYPE_BF16, nb01, (const char *)bq, \
                                                 K * 4, c, nb1, K, M, NR, NN)
            MM_GV_FOR_ROWS(MM_GVB_CALL);
#undef MM_GVB_CALL
            free(bq);
            return;
        }
    }
    if (type == GGML_TYPE_F32 && mm_gemv_rows_alias(nb01)) {      /* (mvf32) */
        const int pf = mm_gv_prefetch_for(src0->ne[1] * nb01);
#define MM_GV_SKEW_CALL(M, NR, NN) mm_gemv_block_skew(a, nb01, b, nb11, c, nb1, K, M, NR, NN, pf)
        MM_GV_FOR_ROWS(MM_GV_SKEW_CALL);
#undef MM_GV_SKEW_CALL
        return;
    }
#endif
#define MM_GV_CALL(M, NR, NN) mm_gemv_block(a, type, nb01, b, nb11, c, nb1, K, M, NR, NN)
    MM_GV_FOR_ROWS(MM_GV_CALL);
#undef MM_GV_CALL
}

/* ---------------------------------------------------------------- row-interleaved copy
 * The mat-vec above transposes 16 rows of a in registers for every 16 elements of K: 64
 * shuffles per 256 products, and 16 row streams at once. For weights that many decode
 * steps read, a copy with rows interleaved in groups of 16 (matvec_repack.h: group g,
 * element k: the 16 values a[16g .. 16g+15][k] adjacent) makes the same products one
 * sequential stream with no shuffles. Every output element is still the same FMA chain
 * over k in order from zero per K block of MM_KC, blocks added in order: the bits are those
 * of every other path. */
#if defined(MM_AVX512)
static inline __m512 mm_rp_load(const char * p, int type) {
    if (type == GGML_TYPE_F32) return _mm512_loadu_ps((const float *)p);
    const __m256i h = _mm256_loadu_si256((const __m256i *)p);
    if (type == GGML_TYPE_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
#endif

/* MM_RP_Q groups at a time: independent FMA chains hide the FMA latency. */
#define MM_RP_Q 4

/* dst[n][16g ..] for n < nn, groups [g, g + ng) (ng <= MM_RP_Q) of the copy. */
static inline __attribute__((always_inline)) void mm_gemv_rp_block(
        const mm_repack * rp, const char * b, int64_t nb11, char * c, int64_t nb1,
        int64_t g, int ng, const int nn) {
    const int type = rp->type;
    const int64_t K = rp->ne0, M = rp->ne1, es = mm_type_size(type);
    const int64_t gstride = K * MM_RP_G * es, kstride = MM_RP_G * es;
    const char * base = rp->data + g * gstride;
#if defined(MM_AVX512)
    __m512 y[MM_RP_Q][MM_GEMV_MAX_N];
    for (int q = 0; q < MM_RP_Q; q++)
        for (int j = 0; j < MM_GEMV_MAX_N; j++) y[q][j] = _mm512_setzero_ps();
    for (int64_t pc = 0; pc < K; pc += MM_KC) {
        const int64_t ke = (K - pc < MM_KC) ? K : pc + MM_KC;
        __m512 acc[MM_RP_Q][MM_GEMV_MAX_N];
        for (int q = 0; q < MM_RP_Q; q++)
            for (int j = 0; j < nn; j++) acc[q][j] = _mm512_setzero_ps();
        if (ng == MM_RP_Q) {
            for (int64_t k = pc; k < ke; k++) {
                __m512 v[MM_RP_Q];
                for (int q = 0; q < MM_RP_Q; q++) v[q] = mm_rp_load(base + q * gstride + k * kstride, type);
                for (int j = 0; j < nn; j++) {
                    const __m512 bk = _mm512_set1_ps(((const float *)(b + j * nb11))[k]);
                    for (int q = 0; q < MM_RP_Q; q++) acc[q][j] = _mm512_fmadd_ps(bk, v[q], acc[q][j]);
                }
            }
        } else {
            for (int64_t k = pc; k < ke; k++) {
                for (int q = 0; q < ng; q++) {
                    const __m512 v = mm_rp_load(base + q * gstride + k * kstride, type);
                    for (int j = 0; j < nn; j++)
                        acc[q][j] = _mm512_fmadd_ps(_mm512_set1_ps(((const float *)(b + j * nb11))[k]),
                                                    v, acc[q][j]);
                }
            }
        }
        for (int q = 0; q < ng; q++)
            for (int j = 0; j < nn; j++) y[q][j] = pc == 0 ? acc[q][j] : _mm512_add_ps(y[q][j], acc[q][j]);
    }
    for (int q = 0; q < ng; q++) {
        const int64_t m0 = (g + q) * MM_RP_G;
        const int64_t nr = M - m0 < MM_RP_G ? M - m0 : MM_RP_G;
        const __mmask16 mask = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1u);
        for (int j = 0; j < nn; j++)
            _mm512_mask_storeu_ps((float *)(c + j * nb1) + m0, mask, y[q][j]);
    }
#else
    /* two 8-lane halves per group, each lane the same chain as mm_gemv_block's */
    for (int q = 0; q < ng; q++) {
        for (int h = 0; h < 2; h++) {
            mm_v8 y[MM_GEMV_MAX_N];
            for (int j = 0; j < MM_GEMV_MAX_N; j++) { mm_v8 z = {0}; y[j] = z; }
            const char * gb = base + q * gstride + h * 8 * es;
            for (int64_t pc = 0; pc < K; pc += MM_KC) {
                const int64_t ke = (K - pc < MM_KC) ? K : pc + MM_KC;
                mm_v8 acc[MM_GEMV_MAX_N];
                for (int j = 0; j < nn; j++) { mm_v8 z = {0}; acc[j] = z; }
                for (int64_t k = pc; k < ke; k++) {
                    const char * p = gb + k * kstride;
                    mm_v8 v;
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
                    __m256 r;
                    if (type == GGML_TYPE_F32) {
                        r = _mm256_loadu_ps((const float *)p);
                    } else {
                        const __m128i hh = _mm_loadu_si128((const __m128i *)p);
                        r = type == GGML_TYPE_F16 ? _mm256_cvtph_ps(hh)
                          : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(hh), 16));
                    }
                    memcpy(&v, &r, sizeof(v));
#else
                    for (int i = 0; i < 8; i++) v[i] = mm_a_scalar(p, type, i);
#endif
                    mm_v8_step(acc, v, b, nb11, k, nn);
                }
                mm_v8_block_end(y, acc, pc, nn);
            }
            const int64_t m0 = (g + q) * MM_RP_G + h * 8;
            for (int j = 0; j < nn; j++) {
                float t[8];
                memcpy(t, &y[j], sizeof(t));
                for (int i = 0; i < 8 && m0 + i < M; i++) ((float *)(c + j * nb1))[m0 + i] = t[i];
            }
        }
    }
#endif
}

/* Groups [g_lo, g_hi) of the copy for batch (i2, i3) of dst (a is 2-D: i2, i3 pick b). */
static inline void mm_gemv_rp_task(const ggml_tensor * dst, const mm_repack * rp, int64_t i2,
                                   int64_t i3, int64_t g_lo, int64_t g_hi) {
    const ggml_tensor * src1 = dst->src[1];
    const char * b = (const char *)src1->data + i2 * src1->nb[2] + i3 * src1->nb[3];
    char * c = (char *)dst->data + i2 * dst->nb[2] + i3 * dst->nb[3];
    const int64_t nb11 = src1->nb[1], nb1 = dst->nb[1];
#if defined(MM_AVX512)
    if (rp->type == GGML_TYPE_BF16) {   /* pairs as dwords, VDPBF16PS (mm_bf16_rp_used) */
        mm_bf16_gemv_rp(rp, b, nb11, c, nb1, g_lo, g_hi, (int)dst->ne[1]);
        return;
    }
#endif
    for (int64_t g = g_lo; g < g_hi; g += MM_RP_Q) {
        const int ng = (int)(g_hi - g < MM_RP_Q ? g_hi - g : MM_RP_Q);
        switch ((int)dst->ne[1]) {
        case 1: mm_gemv_rp_block(rp, b, nb11, c, nb1, g, ng, 1); break;
        case 2: mm_gemv_rp_block(rp, b, nb11, c, nb1, g, ng, 2); break;
        case 3: mm_gemv_rp_block(rp, b, nb11, c, nb1, g, ng, 3); break;
        default: mm_gemv_rp_block(rp, b, nb11, c, nb1, g, ng, 4); break;
        }
    }
}

/* ---------------------------------------------------------------- packed path */

/* The tiles of one packed b block (nbk rows, MM_MR-row panels at bp) against one packed a
 * block (mb columns, MM_NR-wide panels at ap) over one K block of kb: c = &dst[ic][jc], row
 * stride ldc floats; accumulate: add to what c holds (K blocks after the first). dp: the
 * VDPBF16PS variant's panels (pairs of k as dwords). */
static inline __attribute__((always_inline)) void mm_block_tiles(
        int dp, int64_t kb, const float * bp, const float * ap, float * c, int64_t ldc,
        int64_t nbk, int64_t mb, int accumulate) {
    const int64_t kp = (kb + 1) / 2;   /* pairs of the VDPBF16PS variant */
    (void)kp; (void)dp;
    for (int64_t ir = 0; ir < nbk; ir += MM_MR) {
        const int rows = (int)((nbk - ir < MM_MR) ? nbk - ir : MM_MR);
        float * crow = c + ir * ldc;
        for (int64_t jr = 0; jr < mb; jr += MM_NR) {
            const int cols = (int)((mb - jr < MM_NR) ? mb - jr : MM_NR);
#if defined(MM_AVX512)
            if (dp) {
                mm_bf16_micro(kp, (const uint32_t *)bp + ir * kp, (const uint32_t *)ap + jr * kp,
                              crow + jr, ldc, accumulate, rows, cols);
                continue;
            }
#endif
            mm_micro(kb, bp + ir * kb, ap + jr * kb, crow + jr, ldc, accumulate, rows, cols);
        }
    }
}

/* One task: dst rows n in [n_lo, n_hi), columns m in [m_lo, m_hi) of batch (i2, i3).
 * work: mm_work_floats_per_thread() floats of this thread's scratch. */
static inline void mm_task(const ggml_tensor * dst, int64_t i2, int64_t i3,
                           int64_t m_lo, int64_t m_hi, int64_t n_lo, int64_t n_hi,
                           float * work) {
    const ggml_tensor * src0 = dst->src[0];
    const ggml_tensor * src1 = dst->src[1];
    const int64_t K = src0->ne[0];
    const int64_t r2 = dst->ne[2] / src0->ne[2], r3 = dst->ne[3] / src0->ne[3];
    const char * a = (const char *)src0->data + (i2 / r2) * src0->nb[2] + (i3 / r3) * src0->nb[3];
    const char * b = (const char *)src1->data + i2 * src1->nb[2] + i3 * src1->nb[3];
    char * cbase = (char *)dst->data + i2 * dst->nb[2] + i3 * dst->nb[3];
    const int64_t ldc = dst->nb[1] / 4;
    float * ap = (float *)(((uintptr_t)work + 63) & ~(uintptr_t)63);
    float * bp = ap + (size_t)MM_NC * MM_KC;
    /* the widening scratch of mm_pack_a: the tail of the b block, used before b is packed */
    float * tmp = bp + (size_t)MM_MC * MM_KC;
#if defined(MM_AVX512)
    const int dp = src0->type == GGML_TYPE_BF16 && mm_bf16_dp();   /* VDPBF16PS variant */
#else
    const int dp = 0;
#endif
    if (K == 0) {  /* empty sum: zeros */
        for (int64_t n = n_lo; n < n_hi; n++)
            for (int64_t m = m_lo; m < m_hi; m++)
                ((float *)(cbase + n * dst->nb[1]))[m] = 0.0f;
        return;
    }
#if defined(MM_AVX512)
    if (mm_thin_takes(src0->type, n_hi - n_lo)) {   /* few rows of b: a not packed */
        mm_thin_task(dst, a, b, cbase, K, m_lo, m_hi, n_lo, n_hi, work, NULL, 0);
        return;
    }
#endif
    for (int64_t jc = m_lo; jc < m_hi; jc += MM_NC) {
        const int64_t mb = (m_hi - jc < MM_NC) ? m_hi - jc : MM_NC;
        for (int64_t pc = 0; pc < K; pc += MM_KC) {
            const int64_t kb = (K - pc < MM_KC) ? K - pc : MM_KC;
#if defined(MM_AVX512)
            if (dp) mm_bf16_pack_a(a, src0->nb[0], src0->nb[1], jc, mb, pc, kb, (uint32_t *)ap);
            else
#endif
            {
                mm_pack_a(a, src0->type, src0->nb[0], src0->nb[1], jc, mb, pc, kb, ap, tmp);
                if (src0->type == GGML_TYPE_BF16)   /* VDPBF16PS's order, f32 variant */
                    mm_bf16_swap_pairs(ap, mm_cdiv(mb, MM_NR), kb, MM_NR);
            }
            for (int64_t ic = n_lo; ic < n_hi; ic += MM_MC) {
                const int64_t nbk = (n_hi - ic < MM_MC) ? n_hi - ic : MM_MC;
#if defined(MM_AVX512)
                if (dp) mm_bf16_pack_b(b, src1->nb[0], src1->nb[1], ic, nbk, pc, kb, (uint32_t *)bp);
                else
#endif
                {
                    mm_pack_b(b, src1->nb[0], src1->nb[1], ic, nbk, pc, kb, bp);
                    if (src0->type == GGML_TYPE_BF16) {   /* ggml's rule, f32 variant */
                        mm_round_bf16_n(bp, mm_cdiv(nbk, MM_MR) * MM_MR * kb);
                        mm_bf16_swap_pairs(bp, mm_cdiv(nbk, MM_MR), kb, MM_MR);
                    }
                }
                mm_block_tiles(dp, kb, bp, ap, (float *)(cbase + ic * dst->nb[1]) + jc, ldc,
                               nbk, mb, pc > 0);
            }
        }
    }
}

/* 1 when this build (dispatch level) gives a task of nrows rows of b with weights of this
 * type to the thin path (mul_mat_thin.h; tests). */
static inline int mm_thin_built_takes(int type, int64_t nrows) {
#if defined(MM_AVX512)
    return mm_thin_takes(type, nrows);
#else
    (void)type; (void)nrows;
    return 0;
#endif
}

/* Chooses the per-matrix grid (gm parts of M, gn parts of N) for nth threads: the least
 * estimated time of the busiest thread, counting the padded flops of its tasks and the
 * elements it packs. Split statically (mm_grid): each thread's share of whole tasks, one
 * packed element ~ MM_PACK_COST flops, at most 4 tasks a thread and nth parts a side. */
#define MM_PACK_COST 24

/* The grid for tasks dealt to the threads (mm_compute_dealt): a thread that is free takes
 * what is left of another's share, so one that runs slow or starts late (a busy core of a
 * shared host) holds the call up by about one task instead of its whole share, at the price
 * of more packing for smaller tasks. The busiest thread's estimate (mm_dealt_cost) blends
 * the equal-speed case (whole tasks shared round by round) with a lag of one task, weighted
 * by how likely some thread lags: not at all at 2 threads, fully from 16 on; up to 4 tasks
 * per thread, a packed element at MM_PACK_COST_DEALT flops (the 2-core VM: 2x4 tasks
 * instead of 2x1 cost 8% at 1024^3, 2 threads). On the 16-core host (rounds w10/w11,
 * bench/results/mmgrid-xeon-w11.jsonl) the static 4x4 split of 1024^3 at 16 threads left
 * the busiest thread ~40% above the average; dealt 8x8 tasks (chosen here) ran 10-15%
 * faster, 64x1 for 4096x64x4096 and 16x4 for 4096x512x4096 4-8%. The package deals only
 * from 9 threads on (_kernels.mm_deals: at 4 and 8 threads these grids lost as often as
 * they won, round w13). */
#define MM_PACK_COST_DEALT 48
static inline double mm_dealt_cost(int64_t ntasks, double task, int nth) {
    const double lag = nth >= 16 ? 1.0 : nth <= 2 ? 0.0 : (double)(nth - 2) / 14.0;
    const double rounds = (double)mm_cdiv(ntasks, nth) * task;
    const double spread = (double)ntasks * task / (double)nth + task;
    return (1.0 - lag) * rounds + lag * spread;
}

static inline void mm_grid_search(int64_t M, int64_t N, int64_t K, int64_t nbatch, int nth,
                                  int dealt, int64_t * gm_out, int64_t * gn_out) {
    const int64_t mtiles = mm_cdiv(M, MM_NR), ntiles = mm_cdiv(N, MM_MR);
    const int64_t most = 4 * (int64_t)nth, side = dealt ? most : (int64_t)nth;
    const double pack_cost = dealt ? MM_PACK_COST_DEALT : MM_PACK_COST;
    int64_t best_gm = 1, best_gn = 1;
    double best = -1.0;
    for (int64_t gm = 1; gm <= side && gm <= mtiles; gm++) {
        for (int64_t gn = 1; gn <= side && gn <= ntiles; gn++) {
            const int64_t ntasks = nbatch * gm * gn;
            if (ntasks > most && (gm > 1 || gn > 1)) break;   /* grows with gn */
            const int64_t mt = mm_cdiv(mtiles, gm) * MM_NR, nt = mm_cdiv(ntiles, gn) * MM_MR;
            const double flops = 2.0 * (double)mt * (double)nt * (double)K;
            const double packed = (double)K * ((double)mt + (double)nt * (double)mm_cdiv(mt, MM_NC));
            const double task = flops + pack_cost * packed;
            const double cost = dealt ? mm_dealt_cost(ntasks, task, nth)
                                      : (double)mm_cdiv(ntasks, nth) * task;
            if (best < 0 || cost < best * 0.999) { best = cost; best_gm = gm; best_gn = gn; }
        }
    }
    *gm_out = best_gm;
    *gn_out = best_gn;
}

static inline void mm_grid(int64_t M, int64_t N, int64_t K, int64_t nbatch, int nth,
                           int64_t * gm_out, int64_t * gn_out) {
    mm_grid_search(M, N, K, nbatch, nth, 0, gm_out, gn_out);
}

static inline void mm_grid_dealt(int64_t M, int64_t N, int64_t K, int64_t nbatch, int nth,
                                 int64_t * gm_out, int64_t * gn_out) {
    mm_grid_search(M, N, K, nbatch, nth, 1, gm_out, gn_out);
}

/* Dealt tasks: thread r of nth owns the static share [ntasks*r/nth, ntasks*(r+1)/nth) of
 * the tasks and a counter for it (ctrs[r * MM_DEAL_STRIDE], zero before the job). A thread
 * takes its own share's tasks first -- so when every thread comes at the same pace each
 * keeps the part it had in the previous call (its caches stay warm, as with the static
 * split) -- then what is left of the others' shares. Returns the next task of thread
 * `home`, or -1 when every task is taken; *step: the thread's cursor (starts at 0). */
#define MM_DEAL_STRIDE 8      /* int64s between two counters: a cache line each */
static inline int64_t mm_deal_next(int64_t * ctrs, int64_t ntasks, int home, int nth,
                                   int * step) {
    while (*step < nth) {
        const int r = (home + *step) % nth;
        const int64_t lo = ntasks * r / nth, hi = ntasks * (r + 1) / nth;
        int64_t * c = ctrs + (size_t)r * MM_DEAL_STRIDE;
        /* another thread's share already taken: a load, not a read-for-ownership */
        if (*step == 0 || __atomic_load_n(c, __ATOMIC_RELAXED) < hi - lo) {
            const int64_t t = lo + __atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
            if (t < hi) return t;
        }
        (*step)++;
    }
    return -1;
}

/* The tasks of a packed engine's grid (mm_grid, mmx_grid): M cut into gm parts and N into gn
 * parts, each a whole number of the engine's tiles (mtile columns, ntile rows), times every
 * batch matrix; task t = (batch ib, M part mp, N part np), np fastest, and thread ith of nth
 * takes tasks [t0, t1). Both engines decode their tasks here. No bit depends on the split:
 * a task computes each of its dst elements whole. Always inlined (here and mm_task_part):
 * as plain inline functions they shifted GCC's inlining budget in mm_compute's callers, which
 * then inlined mm_micro at the avx2 level where it had been a call. */
typedef struct {
    int64_t M, N, ne2;             /* dst's columns, rows, and batch dim 2 */
    int64_t mstep, nstep;          /* one part's columns and rows (the last may be short) */
    int64_t mparts, nparts;
    int64_t t0, t1;                /* this thread's tasks */
} mm_tasks;

static inline __attribute__((always_inline)) mm_tasks mm_tasks_of(
        const ggml_tensor * dst, int64_t gm, int64_t gn, int64_t mtile, int64_t ntile, int ith,
        int nth) {
    mm_tasks g;
    g.M = dst->ne[0];
    g.N = dst->ne[1];
    g.ne2 = dst->ne[2];
    g.mstep = mm_cdiv(mm_cdiv(g.M, mtile), gm) * mtile;
    g.nstep = mm_cdiv(mm_cdiv(g.N, ntile), gn) * ntile;
    g.mparts = mm_cdiv(g.M, g.mstep);
    g.nparts = mm_cdiv(g.N, g.nstep);
    const int64_t ntasks = dst->ne[2] * dst->ne[3] * g.mparts * g.nparts;
    g.t0 = ntasks * ith / nth;
    g.t1 = ntasks * (ith + 1) / nth;
    return g;
}

/* Task t's batch matrix (i2, i3), columns [m_lo, m_hi) and rows [n_lo, n_hi) of dst. */
typedef struct { int64_t i2, i3, m_lo, m_hi, n_lo, n_hi; } mm_part;

static inline __attribute__((always_inline)) mm_part mm_task_part(const mm_tasks * g,
                                                                  int64_t t) {
    mm_part p;
    const int64_t np = t % g->nparts, mp = (t / g->nparts) % g->mparts;
    const int64_t ib = t / (g->nparts * g->mparts);
    p.i2 = ib % g->ne2;
    p.i3 = ib / g->ne2;
    p.m_lo = mp * g->mstep;
    p.m_hi = (p.m_lo + g->mstep < g->M) ? p.m_lo + g->mstep : g->M;
    p.n_lo = np * g->nstep;
    p.n_hi = (p.n_lo + g->nstep < g->N) ? p.n_lo + g->nstep : g->N;
    return p;
}

/* 1 when BF16 weights run on AMX tiles in this build (level) on this CPU. */
static inline int mm_amx_ready(void) {
    return mm_bf16_amx();
}

/* The engine of BF16-weight products here: 2 AMX tiles, 1 VDPBF16PS, 0 f32 FMAs (in
 * VDPBF16PS's order). */
static inline int mm_bf16_engine(void) {
#if defined(MM_AVX512)
    return mm_bf16_amx() ? 2 : mm_bf16_dp() ? 1 : 0;
#else
    return 0;
#endif
}

#if defined(MMX_BUILT)
/* BF16 weights go to the AMX tiles (mul_mat_amx.h) when the CPU and the kernel allow them
 * and both operands are adjacent along K; then every N, mat-vec included, takes that engine,
 * so a row of b still gives the same bits alone as inside a batch. */
static inline int mmx_takes(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0], * b = dst->src[1];
    return a->type == GGML_TYPE_BF16 && b->type == GGML_TYPE_F32 && a->nb[0] == 2 &&
           b->nb[0] == 4 && dst->nb[0] == 4 && mm_bf16_amx();
}

/* Task t of grid g on the tiles. key (NULL: none): which b rows the thread's scratch holds
 * converted from its previous task of this job, {batch matrix, n_lo, n_hi} (batch -1:
 * none); a task on the same rows skips converting them again when they make one panel. */
static inline void mmx_task(const ggml_tensor * dst, const mm_tasks * g, int64_t t,
                            float * work, int64_t * key, int nth) {
    const ggml_tensor * src0 = dst->src[0], * src1 = dst->src[1];
    const int64_t K = src0->ne[0];
    const int64_t r2 = dst->ne[2] / src0->ne[2], r3 = dst->ne[3] / src0->ne[3];
    const mm_part p = mm_task_part(g, t);
    const char * a = (const char *)src0->data + (p.i2 / r2) * src0->nb[2] +
                     (p.i3 / r3) * src0->nb[3] + p.m_lo * src0->nb[1];
    const char * b = (const char *)src1->data + p.i2 * src1->nb[2] + p.i3 * src1->nb[3] +
                     p.n_lo * src1->nb[1];
    float * d = (float *)((char *)dst->data + p.i2 * dst->nb[2] + p.i3 * dst->nb[3] +
                          p.n_lo * dst->nb[1]) + p.m_lo;
    int ready = 0;
    if (key != NULL) {
        const int64_t ib = p.i2 + p.i3 * dst->ne[2];
        ready = key[0] == ib && key[1] == p.n_lo && key[2] == p.n_hi;
        /* mmx_gemm leaves the panel in the scratch only when it packs one (and K > 0) */
        const int kept = K > 0 && p.m_hi > p.m_lo && mmx_one_panel(p.n_hi - p.n_lo, K);
        key[0] = kept ? ib : -1; key[1] = p.n_lo; key[2] = p.n_hi;
    }
    mmx_gemm(a, src0->nb[1], p.m_hi - p.m_lo, b, src1->nb[1], p.n_hi - p.n_lo, K, d,
             dst->nb[1] / 4, work, ready, mmx_pf_c_for(nth));
}

static inline void mmx_compute(const ggml_tensor * dst, int ith, int nth, float * work) {
    const int64_t M = dst->ne[0], N = dst->ne[1], K = dst->src[0]->ne[0];
    const int64_t nbatch = dst->ne[2] * dst->ne[3];
    int64_t gm, gn;
    mmx_grid(M, N, K, nbatch, nth, &gm, &gn);
    const mm_tasks g = mm_tasks_of(dst, gm, gn, 32, 8, ith, nth);   /* mmx_grid's units */
    int64_t key[3] = {-1, 0, 0};
    for (int64_t t = g.t0; t < g.t1; t++) mmx_task(dst, &g, t, work, key, nth);
}

/* The grid of dealt tile tasks (mmx_compute_dealt): mmx_grid's, and where each N part is one
 * converted panel (K <= MMX_KC, at most MMX_NX rows of b) its M parts cut MMX_DEAL_SPLIT times
 * finer, the tasks taken panel by panel (*panel_major; mmx_panel_major): a thread's share is
 * then its static task in MMX_DEAL_SPLIT pieces that reuse one conversion of b, and a thread
 * that is free takes pieces of another's share, converting that panel once. On the 16-core
 * hosts the tile loop alone runs 0.37 to 1.1 TFLOP/s on different cores of one call (round
 * w18, bench/csrc/mmx_loop.c): the static split waits for the slowest. Finer grids with a
 * conversion per task measured no better (rounds w12/w13). */
#define MMX_DEAL_SPLIT 4
static inline void mmx_grid_dealt(int64_t M, int64_t N, int64_t K, int64_t nbatch, int nth,
                                  int64_t * gm, int64_t * gn, int * panel_major) {
    mmx_grid(M, N, K, nbatch, nth, gm, gn);
    const int64_t mtiles = mm_cdiv(M, 32), nt = mm_cdiv(mm_cdiv(N, 8), *gn) * 8;
    *panel_major = mmx_one_panel(nt, K);
    if (*panel_major) *gm = *gm * MMX_DEAL_SPLIT < mtiles ? *gm * MMX_DEAL_SPLIT : mtiles;
    else if (nt > MMX_NX) {
        /* N parts of several panels: one panel each (a task converts its panel of b and
         * streams its a rows once, as inside the larger part), so that a thread that is
         * free takes whole panels of a slow thread's share (2 threads, 1024^3: 4 tasks
         * instead of 2; the slow thread of a pair ran its half up to 1.3x the average in
         * round w39's slow calls) */
        const int64_t parts = mm_cdiv(N, MMX_NX);
        if (parts > *gn) *gn = parts;
    }
}

/* Task u of g in panel-major order: per batch matrix, the M parts of N part 0, then of N
 * part 1, ... (mm_task_part's own order runs the N parts fastest). */
static inline int64_t mmx_panel_major(const mm_tasks * g, int64_t u) {
    const int64_t per = g->mparts * g->nparts, ib = u / per, r = u % per;
    return ib * per + (r % g->mparts) * g->nparts + r / g->mparts;
}

/* mmx_compute with its tasks dealt (see mm_compute_dealt) on mmx_grid_dealt's grid. */
static inline void mmx_compute_dealt(const ggml_tensor * dst, int64_t * ctrs, int ith, int nth,
                                     float * work) {
    const int64_t M = dst->ne[0], N = dst->ne[1], K = dst->src[0]->ne[0];
    const int64_t nbatch = dst->ne[2] * dst->ne[3];
    int64_t gm, gn;
    int pm;
    mmx_grid_dealt(M, N, K, nbatch, nth, &gm, &gn, &pm);
    const mm_tasks g = mm_tasks_of(dst, gm, gn, 32, 8, 0, 1);       /* every task */
    int64_t key[3] = {-1, 0, 0};
    int step = 0;
    for (int64_t u; (u = mm_deal_next(ctrs, g.t1, ith, nth, &step)) >= 0; )
        mmx_task(dst, &g, pm ? mmx_panel_major(&g, u) : u, work, key, nth);
}
#endif

/* 1 when dst runs on the AMX tiles (mmx_takes); its tasks are then dealt from 2 threads on
 * (_mm_dealt.pxi): on the shared 16-core host one core's tiles at times run much slower
 * than another's, and a static split of two waits for that core (round w39: in slow calls
 * the busiest of 2 threads took up to 1.3x the average). */
static inline int mm_amx_takes(const ggml_tensor * dst) {
#if defined(MMX_BUILT)
    return mmx_takes(dst);
#else
    (void)dst;
    return 0;
#endif
}

/* The mat-vec path's units [t0, t1): chunks of 16 rows of a over batch x M, in order. */
static inline void mm_gemv_units(const ggml_tensor * dst, int64_t t0, int64_t t1) {
    const int64_t M = dst->ne[0];
    const mm_repack * rp = mm_repack_of(dst->src[0]);
    if (rp != NULL && rp->type == GGML_TYPE_BF16 && !mm_bf16_rp_used()) rp = NULL;
    const int64_t chunks = mm_cdiv(M, 16);
    int64_t t = t0;
    while (t < t1) {
        const int64_t ib = t / chunks, c0 = t % chunks;
        const int64_t c1 = (t1 - ib * chunks < chunks) ? t1 - ib * chunks : chunks;
        const int64_t i2 = ib % dst->ne[2], i3 = ib / dst->ne[2];
        const int64_t m_lo = c0 * 16, m_hi = (c1 * 16 < M) ? c1 * 16 : M;
        if (rp != NULL) mm_gemv_rp_task(dst, rp, i2, i3, c0, c1);   /* chunks = groups */
        else mm_gemv_task(dst, i2, i3, m_lo, m_hi);
        t = ib * chunks + c1;
    }
}

/* (mvf32) 1 when mm_compute takes the mat-vec path for dst (and there is work). */
static inline int mm_gemv_applies(const ggml_tensor * dst) {
#if defined(MMX_BUILT)
    if (mmx_takes(dst)) return 0;       /* BF16 on AMX: every N there (mm_compute) */
#endif
    return dst->ne[0] > 0 && dst->ne[1] > 0 && dst->ne[2] * dst->ne[3] > 0
           && dst->src[0]->ne[0] > 0 && mm_use_gemv(dst);
}

/* (mvf32) The mat-vec with its units claimed from a shared counter (*next, zero before the
 * job) instead of split in equal shares: for a job whose workers are optional helpers
 * (gcy_pool_run_dyn), so that on a busy machine a worker that wakes late costs nothing --
 * the caller claims what is left, up to all of it. About 8 claims per thread, each of whole
 * 16-row chunks (a few MB of a read in order). Every unit is computed as in mm_compute, by
 * whichever thread claims it: the bits do not change. */
static inline void mm_gemv_dyn(const ggml_tensor * dst, int64_t * next, int nth) {
    const int64_t total = dst->ne[2] * dst->ne[3] * mm_cdiv(dst->ne[0], 16);
    const int64_t step = mm_cdiv(total, 8 * (int64_t)(nth > 0 ? nth : 1));
    for (;;) {
        const int64_t t0 = __atomic_fetch_add(next, step, __ATOMIC_RELAXED);
        if (t0 >= total) break;
        mm_gemv_units(dst, t0, t0 + step < total ? t0 + step : total);
    }
}

#include "mul_mat_ndeal.h"   /* 2..4 threads: the split timed, or tasks dealt while it lags */

/* Splits dst into tasks (batch x M parts x N parts) and runs thread ith's share. */
static inline void mm_compute(const ggml_tensor * dst, int ith, int nth, float * work) {
    const int64_t M = dst->ne[0], N = dst->ne[1];
    const int64_t nbatch = dst->ne[2] * dst->ne[3];
    const int64_t K = dst->src[0]->ne[0];
    if (M == 0 || N == 0 || nbatch == 0) return;
#if defined(MMX_BUILT)
    if (mmx_takes(dst)) { mmx_compute(dst, ith, nth, work); return; }
#endif
    if (mm_use_gemv(dst) && K > 0) {
        /* rows of a in chunks of 16, spread evenly over batch x M */
        const int64_t total = nbatch * mm_cdiv(M, 16);
        mm_gemv_units(dst, total * ith / nth, total * (ith + 1) / nth);
        return;
    }
    int64_t gm, gn;
    mm_grid(M, N, K, nbatch, nth, &gm, &gn);
    const mm_tasks g = mm_tasks_of(dst, gm, gn, MM_NR, MM_MR, ith, nth);
    for (int64_t t = g.t0; t < g.t1; t++) {
        const mm_part p = mm_task_part(&g, t);
        mm_task(dst, p.i2, p.i3, p.m_lo, p.m_hi, p.n_lo, p.n_hi, work);
    }
}

/* mm_compute with its tasks dealt (mm_deal_next; ctrs: nth counters MM_DEAL_STRIDE int64s
 * apart, zero before the job, the same for every thread of the job) instead of split in
 * fixed static shares: a thread that is free takes what is left of another's share, so a
 * slow or late thread costs about one task (mm_grid_dealt), and a job whose workers are
 * optional helpers (gcy_pool_run_dyn) is finished by whoever runs. Each task computes its
 * dst elements whole, as in mm_compute: the bits do not depend on who takes which task,
 * nor on the grid. The mat-vec claims its chunks from ctrs[0] (mm_gemv_dyn); on 2..4
 * threads most float products go to mm_compute_ndeal (mul_mat_ndeal.h). work: this thread's
 * mm_work_floats_for(dst, nth) floats. */
static inline void mm_compute_dealt(const ggml_tensor * dst, int64_t * ctrs, int ith, int nth,
                                    float * work) {
    const int64_t M = dst->ne[0], N = dst->ne[1];
    const int64_t nbatch = dst->ne[2] * dst->ne[3];
    const int64_t K = dst->src[0]->ne[0];
    if (M == 0 || N == 0 || nbatch == 0) return;
#if defined(MMX_BUILT)
    if (mmx_takes(dst)) { mmx_compute_dealt(dst, ctrs, ith, nth, work); return; }
#endif
    if (mm_use_gemv(dst) && K > 0) { mm_gemv_dyn(dst, ctrs, nth); return; }
    if (mm_ndeal_takes(dst, nth)) { mm_compute_ndeal(dst, ctrs, ith, nth, work); return; }
    int64_t gm, gn;
    mm_grid_dealt(M, N, K, nbatch, nth, &gm, &gn);
    const mm_tasks g = mm_tasks_of(dst, gm, gn, MM_NR, MM_MR, 0, 1);   /* every task */
    int step = 0;
    for (int64_t t; (t = mm_deal_next(ctrs, g.t1, ith, nth, &step)) >= 0; ) {
        const mm_part p = mm_task_part(&g, t);
        mm_task(dst, p.i2, p.i3, p.m_lo, p.m_hi, p.n_lo, p.n_hi, work);
    }
}
#endif
