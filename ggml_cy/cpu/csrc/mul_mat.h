/* ggml_cy's CPU matrix product for GGML_OP_MUL_MAT (ggml's convention, all ne order):
 *   a (src0) [K, M, ne02, ne03], f32, f16 or bf16;  b (src1) [K, N, ne12, ne13], f32;
 *   dst [M, N, ne12, ne13] f32 with dst[n][m] = sum_k a[m][k] * b[n][k],
 *   a broadcast over the batch dims by block repetition (i02 = i12 / (ne12/ne02)).
 * In row-major terms dst (N x M) = B (N x K) . A^T, so both operands are read along K.
 *
 * Structure (the classic Goto/BLIS blocking, written from the description in the
 * literature): for an M block of MM_NC columns and a K block of MM_KC, A is packed into
 * 16-wide panels laid out k-major (f16 converted here, once per panel); for each N block
 * of MM_MC rows, B is packed into 6-wide k-major panels; a 6x16 register-blocked
 * micro-kernel (12 accumulators of 8 floats) then sweeps the block. The micro-kernel uses
 * GCC vector extensions, so -march=native turns it into AVX2 FMAs without intrinsics and
 * any other target still compiles. Edge tiles are zero-padded in the packs and written
 * through a small local tile. */
#ifndef GGML_CY_MUL_MAT_H
#define GGML_CY_MUL_MAT_H
#include <stdint.h>
#include <string.h>
#include "core_defs.h"
#if defined(__F16C__)
#include <immintrin.h>
#endif

#define MM_MR 6      /* rows of the C tile (b rows, N) */
#define MM_NR 16     /* columns of the C tile (a rows, M) */
#define MM_KC 256    /* K block: a 6 x KC B panel (6 KiB) stays in L1 */
#define MM_NC 256    /* M block: the packed A block (KC x NC, 256 KiB) stays in L2 */
#define MM_MC 72     /* N block: the packed B block (MC x KC, 72 KiB) */

typedef float mm_v8 __attribute__((vector_size(32), aligned(32)));
typedef float mm_v8u __attribute__((vector_size(32), aligned(4)));

/* Floats of per-thread scratch the kernel needs (packed A block + packed B block), plus
 * slack for 64-byte alignment. */
static inline size_t mm_work_floats_per_thread(void) {
    return (size_t)MM_NC * MM_KC + (size_t)(MM_MC + MM_MR) * MM_KC + 64;
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

/* Packs a[m0:m0+mb, k0:k0+kb] (rows of a are M, elements along K) into 16-wide panels:
 * ap[p*kb*16 + k*16 + j] = a(m0 + 16p + j, k0 + k); rows past mb are zero. */
static inline void mm_pack_a(const char * a, int type, int64_t nb00, int64_t nb01,
                             int64_t m0, int64_t mb, int64_t k0, int64_t kb, float * ap) {
    for (int64_t p = 0; p < mb; p += MM_NR) {
        float * dstp = ap + p * kb;
        for (int j = 0; j < MM_NR; j++) {
            if (p + j >= mb) {
                for (int64_t k = 0; k < kb; k++) dstp[k * MM_NR + j] = 0.0f;
                continue;
            }
            const char * row = a + (m0 + p + j) * nb01 + k0 * nb00;
            if (type == GGML_TYPE_F32) {
                if (nb00 == 4) {
                    const float * r = (const float *)row;
                    for (int64_t k = 0; k < kb; k++) dstp[k * MM_NR + j] = r[k];
                } else {
                    for (int64_t k = 0; k < kb; k++)
                        dstp[k * MM_NR + j] = *(const float *)(row + k * nb00);
                }
            } else if (type == GGML_TYPE_BF16) {  /* (issue 13, ops3) bf16: the high half */
                for (int64_t k = 0; k < kb; k++) {
                    const uint32_t bits = (uint32_t)*(const uint16_t *)(row + k * nb00) << 16;
                    memcpy(&dstp[k * MM_NR + j], &bits, 4);
                }
            } else {  /* GGML_TYPE_F16 */
                for (int64_t k = 0; k < kb; k++)
                    dstp[k * MM_NR + j] = mm_f16_to_f32(*(const uint16_t *)(row + k * nb00));
            }
        }
    }
}

/* Packs b[n0:n0+nb, k0:k0+kb] into 6-wide panels: bp[q*kb*6 + k*6 + i] = b(n0+6q+i, k0+k). */
static inline void mm_pack_b(const char * b, int64_t nb10, int64_t nb11, int64_t n0,
                             int64_t nbk, int64_t k0, int64_t kb, float * bp) {
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

/* C[0:rows, 0:cols] (+)= Bpanel . Apanel^T for one 6x16 tile; c has row stride ldc floats. */
static inline void mm_micro_6x16(int64_t kb, const float * __restrict bp,
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
    if (K == 0) {  /* empty sum: zeros */
        for (int64_t n = n_lo; n < n_hi; n++)
            for (int64_t m = m_lo; m < m_hi; m++)
                ((float *)(cbase + n * dst->nb[1]))[m] = 0.0f;
        return;
    }
    for (int64_t jc = m_lo; jc < m_hi; jc += MM_NC) {
        const int64_t mb = (m_hi - jc < MM_NC) ? m_hi - jc : MM_NC;
        for (int64_t pc = 0; pc < K; pc += MM_KC) {
            const int64_t kb = (K - pc < MM_KC) ? K - pc : MM_KC;
            mm_pack_a(a, src0->type, src0->nb[0], src0->nb[1], jc, mb, pc, kb, ap);
            for (int64_t ic = n_lo; ic < n_hi; ic += MM_MC) {
                const int64_t nbk = (n_hi - ic < MM_MC) ? n_hi - ic : MM_MC;
                mm_pack_b(b, src1->nb[0], src1->nb[1], ic, nbk, pc, kb, bp);
                for (int64_t ir = 0; ir < nbk; ir += MM_MR) {
                    const int rows = (int)((nbk - ir < MM_MR) ? nbk - ir : MM_MR);
                    float * crow = (float *)(cbase + (ic + ir) * dst->nb[1]) + jc;
                    for (int64_t jr = 0; jr < mb; jr += MM_NR) {
                        const int cols = (int)((mb - jr < MM_NR) ? mb - jr : MM_NR);
                        mm_micro_6x16(kb, bp + ir * kb, ap + jr * kb, crow + jr, ldc,
                                      pc > 0, rows, cols);
                    }
                }
            }
        }
    }
}

/* Splits dst into tasks (batch x M blocks x N blocks) and runs thread ith's share. */
static inline void mm_compute(const ggml_tensor * dst, int ith, int nth, float * work) {
    const int64_t M = dst->ne[0], N = dst->ne[1];
    const int64_t nbatch = dst->ne[2] * dst->ne[3];
    if (M == 0 || N == 0 || nbatch == 0) return;
    int64_t mparts = (M + MM_NC - 1) / MM_NC;
    int64_t mstep = ((M + mparts - 1) / mparts + MM_NR - 1) / MM_NR * MM_NR;
    mparts = (M + mstep - 1) / mstep;
    int64_t nparts = 1;
    if ((nbatch * mparts) % nth != 0) {
        /* split N too, so every thread gets the same share */
        nparts = nth;
        if (nparts > (N + MM_MR - 1) / MM_MR) nparts = (N + MM_MR - 1) / MM_MR;
    }
    int64_t nstep = ((N + nparts - 1) / nparts + MM_MR - 1) / MM_MR * MM_MR;
    nparts = (N + nstep - 1) / nstep;
    const int64_t ntasks = nbatch * mparts * nparts;
    const int64_t t0 = ntasks * ith / nth, t1 = ntasks * (ith + 1) / nth;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t np = t % nparts, mp = (t / nparts) % mparts, ib = t / (nparts * mparts);
        const int64_t i2 = ib % dst->ne[2], i3 = ib / dst->ne[2];
        const int64_t m_lo = mp * mstep, m_hi = (m_lo + mstep < M) ? m_lo + mstep : M;
        const int64_t n_lo = np * nstep, n_hi = (n_lo + nstep < N) ? n_lo + nstep : N;
        mm_task(dst, i2, i3, m_lo, m_hi, n_lo, n_hi, work);
    }
}
#endif
