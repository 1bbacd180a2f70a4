/* GGML_OP_MUL_MAT with a quantized weight (src0) and an f32 src1, ggml's way:
 *   a (src0) [K, M, ne02, ne03] quantized, rows of K/blck blocks;
 *   b (src1) [K, N, ne12, ne13] f32 (any strides);
 *   dst [M, N, ne12, ne13] f32, dst[n][m] = sum_k a[m][k] b[n][k], a broadcast over the
 *   batch dims by block repetition (i02 = i12 / (ne12/ne02)), as in mul_mat.h.
 *
 * Two phases with a barrier between them (the executor runs it as a STEP_QMM):
 *   1. mmq_convert_b: the threads convert b's rows, split among them, into the weight
 *      type's vec-dot partner (vecdot.h) in the shared work buffer, ONCE per call;
 *   2. mmq_dots: the threads split the output into (batch, 16 weight rows, column block)
 *      items; an item runs every column of its block against each of its 16 weight rows
 *      (rows stay in L1/L2 while the columns pass), VD_NC columns per unpacked tile.
 *
 * Path F (the rarer i-quants and NVFP4, which have no integer dot here): b's rows are
 * copied as f32 into the work buffer and each weight tile is dequantized (dequant.h) to
 * f32 before an f32 dot. */
#ifndef GGML_CY_MUL_MAT_Q_H
#define GGML_CY_MUL_MAT_Q_H
#include <stdint.h>
#include <string.h>
#include "core_defs.h"
#include "vecdot.h"
#include "quantize.h"        /* quantize_row_q8_0 / q8_1 / q8_K: the activation formats */
#include "dequant.h"

#define MMQ_RB 16   /* weight rows per work item */

/* Path F's dequantizer: one block of a type to f32 (dequant.h, the same code as
 * ggml_cy.dequantize), or NULL. */
typedef gcy_dq_block_fn mmq_dequant_fn;
static inline mmq_dequant_fn mmq_dequant_of(int type) { return gcy_dq_block_of(type); }

static inline int mmq_is_quantized(int type) { return ggml_cy_type_traits_of(type).is_quantized; }
static inline size_t mmq_block_bytes(int type) { return ggml_cy_type_traits_of(type).type_size; }

/* 1 when mul_mat can take src0 of this type with an f32 src1. */
static inline int mmq_supported(int type) {
    if (type == GGML_TYPE_Q8_1 || type == GGML_TYPE_Q8_K) return 0;  /* activation formats */
    return vd_partner(type) >= 0 || mmq_dequant_of(type) != NULL;
}

/* Bytes one converted row of b (K values) takes in the work buffer. */
static inline size_t mmq_b_row_bytes(int wtype, int64_t K) {
    const int p = vd_partner(wtype);
    if (p < 0) return (size_t)(K * 4 + 63) / 64 * 64;
    if (p != GGML_TYPE_Q8_K) return vd_a_row_bytes(K / 32);
    const ggml_cy_type_traits tr = ggml_cy_type_traits_of(p);
    return (size_t)(K / tr.blck_size) * tr.type_size;
}

/* Offset of phase 2's work counter in the shared buffer (after the converted b). */
static inline size_t mmq_counter_offset(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const size_t n = mmq_b_row_bytes(a->type, b->ne[0]) * (size_t)(b->ne[1] * b->ne[2] * b->ne[3]);
    return (n + 63) / 64 * 64;
}

/* Shared work-buffer bytes of a quantized MUL_MAT node (the converted b, a counter). */
static inline size_t mmq_work_size(const ggml_tensor * dst) {
    return mmq_counter_offset(dst) + 64;   /* counters: phase-2 items, rows claimed, rows done */
}

/* Quantizes n (a multiple of 32, at most 256) floats at x for block ib0 of a path-A row:
 * Q8_0/Q8_1 blocks, split into the row's quants / float scales / float sums. */
static inline void mmq_quantize_a(int p, const float * x, int64_t n, int64_t ib0, int64_t nb,
                                  char * row) {
    uint8_t blk[8 * 36];
    const int bsz = p == GGML_TYPE_Q8_1 ? 36 : 34, qoff = p == GGML_TYPE_Q8_1 ? 4 : 2;
    if (p == GGML_TYPE_Q8_1) quantize_row_q8_1(x, blk, n);
    else quantize_row_q8_0(x, blk, n);
    float * d = (float *)(row + 32 * nb), * sm = d + nb;
    for (int64_t b = 0; b < n / 32; b++) {
        memcpy(row + 32 * (ib0 + b), blk + b * bsz + qoff, 32);
        d[ib0 + b] = vd_ldh(blk + b * bsz);
        if (p == GGML_TYPE_Q8_1) {
            sm[ib0 + b] = vd_ldh(blk + b * bsz + 2);
        } else {  /* Q8_0: the quants' plain sum, for the biased weight types (vd_a_bias) */
            int32_t sum = 0;
            for (int j = 0; j < 32; j++) sum += (int8_t)blk[b * bsz + qoff + j];
            sm[ib0 + b] = (float)sum;
        }
    }
}

/* Converts row ir of b (rows numbered i11 + ne11 * (i12 + ne12 * i13)) into wdata. */
static inline void mmq_convert_row(const ggml_tensor * dst, int64_t ir, char * wdata) {
    const ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const int64_t K = b->ne[0], ne11 = b->ne[1], ne12 = b->ne[2];
    const int p = vd_partner(a->type);
    const size_t rb = mmq_b_row_bytes(a->type, K);
    float tmp[256] __attribute__((aligned(32)));
    const int64_t i13 = ir / (ne12 * ne11), i12 = (ir / ne11) % ne12, i11 = ir % ne11;
    const char * src = (const char *)b->data + i11 * b->nb[1] + i12 * b->nb[2] + i13 * b->nb[3];
    char * out = wdata + ir * rb;
    if (p < 0) {  /* path F: f32 copy */
        float * o = (float *)out;
        for (int64_t k = 0; k < K; k++) o[k] = *(const float *)(src + k * b->nb[0]);
        return;
    }
    /* 256 values (a multiple of every partner's block) at a time */
    for (int64_t k0 = 0; k0 < K; k0 += 256) {
        const int64_t n = K - k0 < 256 ? K - k0 : 256;
        const float * xs = (const float *)(src + k0 * 4);
        if (b->nb[0] != 4) {
            for (int64_t k = 0; k < n; k++) tmp[k] = *(const float *)(src + (k0 + k) * b->nb[0]);
            xs = tmp;
        }
        if (p == GGML_TYPE_Q8_K) quantize_row_q8_K(xs, out + (k0 / 256) * VD_Q8_K_SIZE, n);
        else mmq_quantize_a(p, xs, n, k0 / 32, K / 32, out);
    }
}

static inline int64_t mmq_b_rows(const ggml_tensor * dst) {
    const ggml_tensor * b = dst->src[1];
    return b->ne[1] * b->ne[2] * b->ne[3];
}

/* Phase 1 in the graph executor: thread ith of nth converts its share of b's rows into
 * wdata; thread 0 resets phase 2's counter. A barrier must follow. */
static inline void mmq_convert_b(const ggml_tensor * dst, int ith, int nth, char * wdata) {
    const int64_t nr = mmq_b_rows(dst);
    if (ith == 0) *(int64_t *)(wdata + mmq_counter_offset(dst)) = 0;
    for (int64_t ir = nr * ith / nth; ir < nr * (ith + 1) / nth; ir++)
        mmq_convert_row(dst, ir, wdata);
}

/* Phase 1 without a barrier (eager calls; the caller zeroed the three counters before the
 * parallel region): every thread claims rows until none is left, then waits until the
 * claimed ones are done. A thread the OS has not scheduled yet claims nothing, so the
 * others do not wait for it. */
static inline void mmq_convert_b_shared(const ggml_tensor * dst, char * wdata) {
    const int64_t nr = mmq_b_rows(dst);
    int64_t * cnt = (int64_t *)(wdata + mmq_counter_offset(dst));
    for (int64_t ir = __atomic_fetch_add(&cnt[1], 1, __ATOMIC_RELAXED); ir < nr;
         ir = __atomic_fetch_add(&cnt[1], 1, __ATOMIC_RELAXED)) {
        mmq_convert_row(dst, ir, wdata);
        __atomic_fetch_add(&cnt[2], 1, __ATOMIC_RELEASE);
    }
    while (__atomic_load_n(&cnt[2], __ATOMIC_ACQUIRE) < nr) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

/* f32 dot of n (a multiple of 8) values. */
static inline float mmq_dot_f32(const float * x, const float * y, int64_t n) {
#if defined(__AVX2__)
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), s1);
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
    float s = vd_hsum_ps(_mm256_add_ps(s0, s1));
    for (; i < n; i++) s += x[i] * y[i];
    return s;
#else
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
#endif
}

/* Path F: one weight row against nc f32 rows of b (row stride ystride floats). */
static inline void mmq_rows_f(mmq_dequant_fn dq, int nc, int64_t K, int64_t blck, size_t xbs,
                              const uint8_t * x, const float * y0, int64_t ystride,
                              float * s, int64_t os) {
    float tmp[256] __attribute__((aligned(32)));
    float acc[VD_NC];
    while (nc > 0) {
        const int n = nc < VD_NC ? nc : VD_NC;
        for (int c = 0; c < n; c++) acc[c] = 0.0f;
        for (int64_t k0 = 0; k0 < K; k0 += 256) {
            const int64_t kn = K - k0 < 256 ? K - k0 : 256;
            for (int64_t j = 0; j < kn; j += blck)
                dq(x + ((k0 + j) / blck) * xbs, tmp + j);
            for (int c = 0; c < n; c++) acc[c] += mmq_dot_f32(tmp, y0 + c * ystride + k0, kn);
        }
        for (int c = 0; c < n; c++) s[c * os] = acc[c];
        nc -= n;
        y0 += n * ystride;
        s += n * os;
    }
}

/* Phase 2: thread ith of nth computes its items of dst from the converted b in wdata.
 * Returns 0, or -1 when src0's type has no kernel. */
static inline int mmq_dots(const ggml_tensor * dst, int ith, int nth, const char * wdata) {
    const ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const int64_t K = a->ne[0], M = a->ne[1], N = b->ne[1], ne12 = b->ne[2], ne13 = b->ne[3];
    const int64_t r2 = ne12 / a->ne[2], r3 = ne13 / a->ne[3];
    const ggml_cy_type_traits tr = ggml_cy_type_traits_of(a->type);
    const int64_t nblk = K / tr.blck_size;
    const size_t xbs = tr.type_size, rb = mmq_b_row_bytes(a->type, K);
    const vd_rows_fn fn = vd_rows_for(a->type);
    const mmq_dequant_fn dq = fn ? NULL : mmq_dequant_of(a->type);
    if (!fn && !dq) return -1;
    if (M == 0 || N == 0) return 0;
    const int64_t nbatch = ne12 * ne13, nrb = (M + MMQ_RB - 1) / MMQ_RB;
    int64_t ncb = 1;  /* split the columns too when there are too few row blocks */
    while (nbatch * nrb * ncb < 4 * (int64_t)nth && ncb < N) ncb *= 2;
    const int64_t cbs = (N + ncb - 1) / ncb;
    ncb = (N + cbs - 1) / cbs;
    const int64_t total = nbatch * nrb * ncb;
    const int64_t os = dst->nb[1] / 4;
    /* items are taken from a shared counter (reset by phase 1's thread 0 before the
     * barrier): on a busy machine a descheduled thread then holds up one item, not a
     * fixed share of the work. */
    int64_t * counter = (int64_t *)(uintptr_t)(wdata + mmq_counter_offset(dst));
    (void)ith;
    /* several consecutive items per grab (an eighth of a thread's share): each thread then
     * streams long runs of adjacent weight rows, which the hardware prefetcher follows, and
     * the counter's cache line moves between cores a few times per node instead of once per
     * 16 rows (measured: a 2-thread decode on the VM read its weights 3x slower per thread
     * with one item per grab) */
    /* Q4_0 weights with a row-interleaved copy (matvec_repack.h): 16 rows per call, the
     * same bits as the row-wise dots */
#if defined(VD_Q4_0_RP)
    const mm_repack * rp = (a->type == GGML_TYPE_Q4_0 || a->type == GGML_TYPE_Q8_0) && nblk % 8 == 0
        ? mm_repack_of(a) : NULL;
    const int rp_q8 = a->type == GGML_TYPE_Q8_0;
#endif
    int64_t grab = total / (8 * (int64_t)nth);
    if (grab < 1) grab = 1;
    for (int64_t g0 = __atomic_fetch_add(counter, grab, __ATOMIC_RELAXED); g0 < total;
         g0 = __atomic_fetch_add(counter, grab, __ATOMIC_RELAXED))
    for (int64_t it = g0; it < g0 + grab && it < total; it++) {
        const int64_t cb = it % ncb, rbk = (it / ncb) % nrb, bt = it / (ncb * nrb);
        const int64_t i12 = bt % ne12, i13 = bt / ne12;
        const int64_t n0 = cb * cbs, n1 = n0 + cbs < N ? n0 + cbs : N;
        const int64_t m0 = rbk * MMQ_RB, m1 = m0 + MMQ_RB < M ? m0 + MMQ_RB : M;
        const char * xb = (const char *)a->data + (i12 / r2) * a->nb[2] + (i13 / r3) * a->nb[3];
        const char * yb = wdata + ((i13 * ne12 + i12) * N + n0) * rb;
        char * db = (char *)dst->data + i12 * dst->nb[2] + i13 * dst->nb[3] + n0 * dst->nb[1];
#if defined(VD_Q4_0_RP)
        if (rp != NULL) {
            const uint8_t * xg = (const uint8_t *)rp->data + rbk * nblk * mm_rp_qblock(a->type);
            for (int64_t n = n0; n < n1; n++)
                (rp_q8 ? vd_q8_0_rp16 : vd_q4_0_rp16)(nblk, xg, (const uint8_t *)(yb + (n - n0) * rb),
                                                      (float *)(db + (n - n0) * dst->nb[1]) + m0, (int)(m1 - m0));
            continue;
        }
#endif
        for (int64_t n = n0; n < n1; n += VD_NC) {
            const int nc = (int)(n1 - n < VD_NC ? n1 - n : VD_NC);
            const char * yc = yb + (n - n0) * rb;
            float * dc = (float *)(db + (n - n0) * dst->nb[1]);
            for (int64_t m = m0; m < m1; m++) {
                const uint8_t * x = (const uint8_t *)(xb + m * a->nb[1]);
                if (fn)
                    fn(nc, nblk, x, xbs, (const uint8_t *)yc, rb, dc + m, os);
                else
                    mmq_rows_f(dq, nc, K, tr.blck_size, xbs, x, (const float *)yc,
                               (int64_t)(rb / 4), dc + m, os);
            }
        }
    }
    return 0;
}

#endif
