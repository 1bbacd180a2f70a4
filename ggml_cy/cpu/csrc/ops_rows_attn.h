/* Issue 13 ops (ops3): GGML_OP_SET_ROWS and GGML_OP_FLASH_ATTN_EXT on the CPU
 * (ggml's ggml_compute_forward_set_rows / ggml_compute_forward_flash_attn_ext).
 *
 * SET_ROWS   dst is a view of a (src[2]); src[0] = b [ne0, n, ne2, ne3] f32 or f16 with
 *            rows of adjacent elements; src[1] = c [n, ne11, ne12, 1] i32 or i64, with
 *            ne2 % ne11 == 0 and ne3 % ne12 == 0 (c is broadcast by modulo, as ggml):
 *              a[:, c[i, i2 % ne11, i3 % ne12], i2, i3] = convert(b[:, i, i2, i3])
 *            converted to a's type: f32, f16, bf16 or a quantized type with a quantizer
 *            (rows of whole blocks; the blocks are those of ggml_cy.quantize).
 *            Threads split b's rows (dim 1), as ggml does.
 * FLASH_ATTN_EXT
 *            q [DK, n_q, n_head, batch] f32; k [DK, n_kv, n_head_kv, batch] and
 *            v [DV, n_kv, n_head_v, batch] f32, f16, bf16 or quantized (rows converted to f32);
 *            optional mask [>= n_kv, >= n_q, m2, m3] f16 (broadcast by modulo over heads
 *            and batch); dst [DV, n_head, n_q, batch] f32 (ggml's permuted result):
 *              dst[:, h, i, b] = softmax_j(s_ij) . v[:, j, h / rv2, b]
 *              s_ij = softcap(scale * q_i . k_j) + slope(h) * mask[j, i]
 *            with softcap(x) = c * tanh(x / c) when logit_softcap c != 0 and ALiBi slopes
 *            when max_bias > 0. One pass over the keys per query row with an online
 *            softmax (running maximum and sum), all in f32: q is not rounded to f16 and
 *            the V accumulator is f32 (ggml's GGML_PREC_F32 precision, for either prec).
 *            Threads split the query rows (n_q * n_head * batch), taken so that rows
 *            sharing a k/v head form tiles that widen each k/v row once.
 * Rows of k/v/q/b/a are read through their strides, so permuted views work. */
#ifndef GGML_CY_OPS_ROWS_ATTN_H
#define GGML_CY_OPS_ROWS_ATTN_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "core_defs.h"
#include "kernels_convert.h"
#include "mul_mat_q.h"
#include "quantize.h"
#include "simd_math.h"

/* ------------------------------------------------------------------ row conversions */

/* 1 when rows of `type` can be widened to f32 by ra_row_to_f32. */
static inline int ra_readable(int type) {
    if (type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16) return 1;
    return ggml_cy_type_traits_of(type).is_quantized && mmq_dequant_of(type) != NULL;
}

/* n values of a row of `type` (elements adjacent; quantized: whole blocks) into out. */
static inline void ra_row_to_f32(int type, const char * src, float * out, int64_t n) {
    if (type == GGML_TYPE_F32) {
        memcpy(out, src, (size_t)n * 4);
    } else if (type == GGML_TYPE_F16) {
        kern_h2f_row((const uint16_t *)src, out, n);
    } else if (type == GGML_TYPE_BF16) {
        kern_bf2f_row((const uint16_t *)src, out, n);
    } else {
        const mmq_dequant_fn dq = mmq_dequant_of(type);
        const int64_t bs = ggml_cy_type_traits_of(type).blck_size;
        const size_t ts = ggml_cy_type_traits_of(type).type_size;
        for (int64_t j = 0; j < n / bs; j++) dq(src + j * ts, out + j * bs);
    }
}

/* ------------------------------------------------------------------ SET_ROWS */

/* 1 when set_rows can write rows into a tensor of `type`. */
static inline int sr_dst_supported(int type) {
    if (type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16) return 1;
    return ggml_cy_is_quantized(type) && ggml_cy_quantize_fn_of(type) != 0;
}

/* n f32 values into a row of dst type `type`. */
static inline void sr_store_row(int type, const float * x, char * d, int64_t n) {
    if (type == GGML_TYPE_F32) memcpy(d, x, (size_t)n * 4);
    else if (type == GGML_TYPE_F16) kern_f2h_row(x, (uint16_t *)d, n);
    else if (type == GGML_TYPE_BF16) kern_f2bf_row(x, (uint16_t *)d, n);
    else ggml_cy_quantize_fn_of(type)(x, d, n);
}

/* Floats of per-thread scratch set_rows needs (an f16 row widened before conversion). */
static inline size_t sr_work_floats(const ggml_tensor * dst) {
    return (size_t)dst->src[0]->ne[0] + 16;
}

/* Thread ith of nth. 0, or -2 when a row index is out of range (rows of this thread
 * after it are left unwritten). */
static inline int sr_compute(const ggml_tensor * dst, int ith, int nth, float * work) {
    const ggml_tensor * b = dst->src[0], * c = dst->src[1];
    const int64_t nc = b->ne[0], nr = b->ne[1], ne02 = b->ne[2], ne03 = b->ne[3];
    const int64_t ne11 = c->ne[1], ne12 = c->ne[2], ne1 = dst->ne[1];
    const int64_t ir0 = nr * ith / nth, ir1 = nr * (ith + 1) / nth;
    const int wide = c->type == GGML_TYPE_I64;
    for (int64_t i03 = 0; i03 < ne03; i03++) {
        for (int64_t i02 = 0; i02 < ne02; i02++) {
            for (int64_t i = ir0; i < ir1; i++) {
                const char * pi = (const char *)c->data + i * c->nb[0] + (i02 % ne11) * c->nb[1]
                                  + (i03 % ne12) * c->nb[2];
                const int64_t i1 = wide ? *(const int64_t *)pi : (int64_t)*(const int32_t *)pi;
                if (i1 < 0 || i1 >= ne1) return -2;
                const char * s = (const char *)b->data + i * b->nb[1] + i02 * b->nb[2]
                                 + i03 * b->nb[3];
                char * d = (char *)dst->data + i1 * dst->nb[1] + i02 * dst->nb[2]
                           + i03 * dst->nb[3];
                if (b->type == dst->type) {
                    memcpy(d, s, (size_t)nc * (b->type == GGML_TYPE_F32 ? 4 : 2));
                } else if (b->type == GGML_TYPE_F32) {
                    sr_store_row(dst->type, (const float *)s, d, nc);
                } else {
                    kern_h2f_row((const uint16_t *)s, work, nc);
                    sr_store_row(dst->type, work, d, nc);
                }
            }
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ FLASH_ATTN_EXT */

/* Query rows are taken in the order (batch, k/v head, query, head within the group), so
 * consecutive rows read the same k and v rows; a thread walks its share of rows in tiles of
 * up to FA_TILE rows, widening each k and v row to f32 once per tile and k/v head. A tile
 * may span several k/v heads (a decode step: every head's one query row in one tile): then
 * each key's cache row is read for all its heads at once, one sequential stream over the
 * keys instead of one pass per head at the cache row's stride. */
#define FA_TILE 16
#define FA_KB 64        /* keys per block */

/* Floats of per-thread scratch: a k row, a v row, and per tile row its accumulator. */
static inline size_t fa_work_floats(const ggml_tensor * dst) {
    const size_t dk = ((size_t)dst->src[1]->ne[0] + 15) & ~(size_t)15;
    const size_t dv = ((size_t)dst->src[2]->ne[0] + 15) & ~(size_t)15;
    return dk + dv + (size_t)FA_TILE * dv + 32;
}

/* The sum of a vector's lanes in registers (a reduction through a stack array stalls on
 * store forwarding: measured, most of a decode step's attention time). */
static inline float fa_hsum(sm_vf v) {
#if defined(__AVX512F__)
    return _mm512_reduce_add_ps((__m512)v);
#elif defined(__AVX__)
    __m128 h = _mm_add_ps(_mm256_castps256_ps128((__m256)v), _mm256_extractf128_ps((__m256)v, 1));
#else
    __m128 h = (__m128)v;
#endif
#if !defined(__AVX512F__)
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    return _mm_cvtss_f32(h);
#endif
}

static inline float fa_dot(const float * a, const float * b, int64_t n) {
    sm_vf acc0 = sm_bcf(0.0f), acc1 = sm_bcf(0.0f);
    int64_t i = 0;
    for (; i + 2 * SM_NF <= n; i += 2 * SM_NF) {
        sm_vf x0, y0, x1, y1;
        memcpy(&x0, a + i, sizeof x0);
        memcpy(&y0, b + i, sizeof y0);
        memcpy(&x1, a + i + SM_NF, sizeof x1);
        memcpy(&y1, b + i + SM_NF, sizeof y1);
        acc0 += x0 * y0;
        acc1 += x1 * y1;
    }
    for (; i + SM_NF <= n; i += SM_NF) {
        sm_vf x0, y0;
        memcpy(&x0, a + i, sizeof x0);
        memcpy(&y0, b + i, sizeof y0);
        acc0 += x0 * y0;
    }
    float s = fa_hsum(acc0 + acc1);
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

/* The f32 parameters: op_params[0] scale, [1] max_bias, [2] logit_softcap; [3] prec. */
/* Software prefetch of cache row i (bytes bytes at base + i * nb1) FA_PF keys ahead: in a
 * decode step the KV cache rows come from memory (the weights streamed through the caches
 * since the last step), at a stride of the cache's row (all KV heads), one dependent miss
 * per key without it (the model decode at one thread: 77 us per layer, mostly waiting). */
#define FA_PF 8
static inline void fa_prefetch_row(const char * base, int64_t i, int64_t n, int64_t nb1,
                                   int64_t bytes) {
#if defined(__SSE__)
    if (i < n)
        for (int64_t o = 0; o < bytes; o += 64) _mm_prefetch(base + i * nb1 + o, _MM_HINT_T0);
#else
    (void)base; (void)i; (void)n; (void)nb1; (void)bytes;
#endif
}

static inline float fa_param(const ggml_tensor * dst, int i) {
    float f;
    memcpy(&f, &dst->op_params[i], 4);
    return f;
}

typedef struct {
    int64_t iq1, iq2, iq3;
    const float * q;
    const uint16_t * mask;
    const char * kb, * vb;   /* this row's k and v head (key 0) */
    float slope, M, S;
} fa_row;

static inline void fa_compute(const ggml_tensor * dst, int ith, int nth, float * work) {
    const ggml_tensor * q = dst->src[0], * k = dst->src[1], * v = dst->src[2];
    const ggml_tensor * mask = dst->src[3];
    const int64_t DK = k->ne[0], DV = v->ne[0], n_kv = k->ne[1];
    const int64_t nq1 = q->ne[1], nq2 = q->ne[2], nq3 = q->ne[3];
    const int64_t nk2 = k->ne[2];
    const int64_t rk2 = nq2 / nk2, rk3 = nq3 / k->ne[3];
    const int64_t rv2 = nq2 / v->ne[2], rv3 = nq3 / v->ne[3];
    float scale = fa_param(dst, 0);
    const float max_bias = fa_param(dst, 1), softcap = fa_param(dst, 2);
    if (softcap != 0.0f) scale /= softcap;
    const uint32_t n_head = (uint32_t)nq2;
    const uint32_t n_head_log2 = n_head ? 1u << (uint32_t)floor(log2((double)n_head)) : 1u;
    const float m0 = powf(2.0f, -max_bias / (float)n_head_log2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / (float)n_head_log2);
    const int64_t dvp = (DV + 15) & ~(int64_t)15;
    const ggml_cy_type_traits ktr = ggml_cy_type_traits_of(k->type), vtr = ggml_cy_type_traits_of(v->type);
    const int64_t krow_bytes = DK / ktr.blck_size * ktr.type_size;
    const int64_t vrow_bytes = DV / vtr.blck_size * vtr.type_size;
    float * kbuf = (float *)(((uintptr_t)work + 63) & ~(uintptr_t)63);
    float * vbuf = kbuf + ((DK + 15) & ~(int64_t)15);
    float * accs = vbuf + dvp;
    fa_row rows[FA_TILE];
    float sc[FA_TILE][FA_KB];      /* a block's scores, then its weights */
    const int64_t nr = nq1 * nq2 * nq3;
    const int64_t ir0 = nr * ith / nth, ir1 = nr * (ith + 1) / nth;
    int64_t ir = ir0;
    while (ir < ir1) {
        /* gather a tile: rows of one (batch, k head, v head) */
        int nt = 0;
        for (; ir < ir1 && nt < FA_TILE; ir++) {
            /* ir = ((iq3 * nk2 + g) * nq1 + iq1) * rk2 + j, head iq2 = g * rk2 + j */
            const int64_t j = ir % rk2, iq1 = (ir / rk2) % nq1;
            const int64_t g = (ir / (rk2 * nq1)) % nk2, iq3 = ir / (rk2 * nq1 * nk2);
            const int64_t iq2 = g * rk2 + j;
            fa_row * r = &rows[nt++];
            r->kb = (const char *)k->data + g * k->nb[2] + (iq3 / rk3) * k->nb[3];
            r->vb = (const char *)v->data + (iq2 / rv2) * v->nb[2] + (iq3 / rv3) * v->nb[3];
            r->iq1 = iq1; r->iq2 = iq2; r->iq3 = iq3;
            const uint32_t h = (uint32_t)iq2;
            r->slope = max_bias > 0.0f
                ? (h < n_head_log2 ? powf(m0, (float)(h + 1))
                                   : powf(m1, (float)(2 * (h - n_head_log2) + 1)))
                : 1.0f;
            r->q = (const float *)((const char *)q->data + iq1 * q->nb[1] + iq2 * q->nb[2]
                                   + iq3 * q->nb[3]);
            r->mask = mask ? (const uint16_t *)((const char *)mask->data + iq1 * mask->nb[1]
                                                + (iq2 % mask->ne[2]) * mask->nb[2]
                                                + (iq3 % mask->ne[3]) * mask->nb[3]) : NULL;
            r->M = -INFINITY;
            r->S = 0.0f;
        }
        for (int t = 0; t < nt; t++)
            for (int64_t d = 0; d < DV; d++) accs[t * dvp + d] = 0.0f;
        /* keys in blocks of FA_KB: the scores of every tile row first (each k row widened
         * once), then per row the block's maximum and its exponentials as one vector row
         * (simd_math.h) -- one rescale of the accumulator per block, not per new maximum --
         * then the v rows (each widened once) added with those weights. (A prefetch of the
         * block's cache rows was measured: no gain, not kept.) */
        for (int64_t kb0 = 0; kb0 < n_kv; kb0 += FA_KB) {
            const int64_t nk = n_kv - kb0 < FA_KB ? n_kv - kb0 : FA_KB;
            int any = 0;
            for (int64_t j = 0; j < nk; j++) {
                const int64_t ic = kb0 + j;
                const float * kr = NULL;
                const char * khead = NULL;     /* the head kr holds */
                for (int t = 0; t < nt; t++) {
                    fa_row * r = &rows[t];
                    if (r->kb != khead && (t == 0 || r->kb != rows[t - 1].kb))
                        fa_prefetch_row(r->kb, ic + FA_PF, n_kv, k->nb[1], krow_bytes);
                    const float mv = r->mask ? r->slope * kern_h2f_hw(r->mask[ic]) : 0.0f;
                    if (mv == -INFINITY) { sc[t][j] = -INFINITY; continue; }
                    if (r->kb != khead) {
                        khead = r->kb;
                        if (k->type == GGML_TYPE_F32) {
                            kr = (const float *)(khead + ic * k->nb[1]);
                        } else {
                            ra_row_to_f32(k->type, khead + ic * k->nb[1], kbuf, DK);
                            kr = kbuf;
                        }
                    }
                    float sv = fa_dot(r->q, kr, DK) * scale;
                    if (softcap != 0.0f) sv = softcap * tanhf(sv);
                    sc[t][j] = sv + mv;
                    any = 1;
                }
            }
            if (!any) continue;
            for (int t = 0; t < nt; t++) {
                fa_row * r = &rows[t];
                float bm = -INFINITY;
                for (int64_t j = 0; j < nk; j++) bm = sc[t][j] > bm ? sc[t][j] : bm;
                if (!(bm > r->M)) bm = r->M;          /* the running maximum (NaN-safe) */
                if (bm == -INFINITY) {                  /* nothing seen yet for this row */
                    for (int64_t j = 0; j < nk; j++) sc[t][j] = 0.0f;
                    continue;
                }
                const float ms = r->M == -INFINITY ? 0.0f : expf(r->M - bm);
                if (ms != 1.0f) {
                    float * acc = accs + t * dvp;
                    for (int64_t d = 0; d < DV; d++) acc[d] *= ms;
                }
                for (int64_t j = 0; j < nk; j++) sc[t][j] -= bm;
                sm_row_exp_f32(sc[t], sc[t], nk);        /* exp(-inf) = 0: masked keys */
                float sum = 0.0f;
                for (int64_t j = 0; j < nk; j++) sum += sc[t][j];
                r->S = r->S * ms + sum;
                r->M = bm;
            }
            for (int64_t j = 0; j < nk; j++) {
                const int64_t ic = kb0 + j;
                const float * vr = NULL;
                const char * vhead = NULL;     /* the head vr holds */
                for (int t = 0; t < nt; t++) {
                    if (t == 0 || rows[t].vb != rows[t - 1].vb)
                        fa_prefetch_row(rows[t].vb, ic + FA_PF, n_kv, v->nb[1], vrow_bytes);
                    const float w = sc[t][j];
                    if (w == 0.0f) continue;
                    if (rows[t].vb != vhead) {
                        vhead = rows[t].vb;
                        if (v->type == GGML_TYPE_F32) {
                            vr = (const float *)(vhead + ic * v->nb[1]);
                        } else {
                            ra_row_to_f32(v->type, vhead + ic * v->nb[1], vbuf, DV);
                            vr = vbuf;
                        }
                    }
                    float * acc = accs + t * dvp;
                    for (int64_t d = 0; d < DV; d++) acc[d] += w * vr[d];
                }
            }
        }
        for (int t = 0; t < nt; t++) {
            const fa_row * r = &rows[t];
            const float inv = r->S == 0.0f ? 0.0f : 1.0f / r->S;
            float * out = (float *)((char *)dst->data + r->iq2 * dst->nb[1] + r->iq1 * dst->nb[2]
                                    + r->iq3 * dst->nb[3]);
            const float * acc = accs + t * dvp;
            for (int64_t d = 0; d < DV; d++) out[d] = acc[d] * inv;
        }
    }
}
#endif
