/* The graph's copies into a quantized tensor (ggml's cpy/dup with a quantized destination:
 * ggml's way to quantize; ggml_compute_forward_dup_f32/_f16 with type_traits.from_float).
 *
 * src is F32, F16 or BF16 with rows of adjacent elements (nb[0] = element size) and any row
 * strides; ne[0] must be a multiple of dst's block size. dst is contiguous; src's rows are
 * quantized one after the other into it (ggml's rule: the element counts match, the shapes
 * may differ). The blocks are those of ggml_cy.quantize (csrc/quantize.h): F16/BF16 rows are
 * widened to float32 first, exactly. Threads split the flat range of blocks, so a single
 * long row is shared as well. */
#ifndef GGML_CY_QUANTIZE_TENSOR_H
#define GGML_CY_QUANTIZE_TENSOR_H

#include "core_defs.h"
#include "quantize.h"

/* dst contiguous, counting dim 0 in blocks */
static inline int gcy_qz_dst_contiguous(const ggml_tensor * t) {
    int64_t next = (int64_t)ggml_cy_block_bytes(t->type);
    const int64_t bs = ggml_cy_blck_size(t->type);
    if (t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3] == 0) return 1;
    for (int i = 0; i < 4; i++) {
        if (t->ne[i] == 1) continue;
        if (t->nb[i] != next) return 0;
        next *= i == 0 ? t->ne[0] / bs : t->ne[i];
    }
    return 1;
}

/* 1 when dst (quantized) <- src is a copy this header performs */
static inline int gcy_qz_check(const ggml_tensor * dst, const ggml_tensor * src) {
    if (!ggml_cy_is_quantized(dst->type) || ggml_cy_quantize_fn_of(dst->type) == 0) return 0;
    int64_t es;
    switch (src->type) {
    case GGML_TYPE_F32: es = 4; break;
    case GGML_TYPE_F16: case GGML_TYPE_BF16: es = 2; break;
    default: return 0;
    }
    const int64_t bs = ggml_cy_blck_size(dst->type);
    if (src->ne[0] % bs) return 0;
    if (src->ne[0] > 1 && src->nb[0] != es) return 0;
    if (src->ne[0] * src->ne[1] * src->ne[2] * src->ne[3] !=
        dst->ne[0] * dst->ne[1] * dst->ne[2] * dst->ne[3]) return 0;
    return gcy_qz_dst_contiguous(dst);
}

#define GCY_QZ_CHUNK 1024   /* floats widened at a time from F16/BF16 (a multiple of 256) */

/* Thread ith's share (of nth) of dst <- src; gcy_qz_check(dst, src) must hold. */
static inline void gcy_qz_part(ggml_tensor * dst, const ggml_tensor * src, int ith, int nth) {
    const ggml_cy_quantize_fn fn = ggml_cy_quantize_fn_of(dst->type);
    const int64_t bs = ggml_cy_blck_size(dst->type);
    const int64_t ts = (int64_t)ggml_cy_block_bytes(dst->type);
    const int64_t nblk = src->ne[0] / bs;
    const int64_t nrows = src->ne[1] * src->ne[2] * src->ne[3];
    const int64_t total = nblk * nrows;
    if (total <= 0) return;
    int64_t b = total * ith / nth;
    const int64_t b1 = total * (ith + 1) / nth;
    float buf[GCY_QZ_CHUNK];
    const int64_t chunk_blk = GCY_QZ_CHUNK / bs;
    while (b < b1) {
        const int64_t r = b / nblk, j = b % nblk;
        int64_t n = nblk - j;                         /* blocks left in this row */
        if (n > b1 - b) n = b1 - b;
        const int64_t i1 = r % src->ne[1], i2 = (r / src->ne[1]) % src->ne[2],
                      i3 = r / (src->ne[1] * src->ne[2]);
        const char * s = (const char *)src->data + i1 * src->nb[1] + i2 * src->nb[2] +
                         i3 * src->nb[3];
        char * d = (char *)dst->data + b * ts;
        if (src->type == GGML_TYPE_F32) {
            fn((const float *)s + j * bs, d, n * bs);
        } else {
            const uint16_t * h = (const uint16_t *)s + j * bs;
            for (int64_t k = 0; k < n; k += chunk_blk) {
                const int64_t m = (n - k < chunk_blk ? n - k : chunk_blk) * bs;
                if (src->type == GGML_TYPE_F16)
                    for (int64_t e = 0; e < m; ++e) buf[e] = kern_h2f_hw(h[k * bs + e]);
                else
                    for (int64_t e = 0; e < m; ++e) buf[e] = kern_bf2f(h[k * bs + e]);
                fn(buf, d + k * ts, m);
            }
        }
        b += n;
    }
}

#endif
