/* The graph's copies out of a quantized tensor (ggml's dup/cpy/cont with a quantized src0):
 * dequantize into F32 / F16 / BF16, or copy the blocks into a tensor of the same type.
 *
 * src is a quantized tensor whose rows are whole blocks side by side (nb[0] = bytes per
 * block; views guarantee it) with any row strides. dst either is contiguous (values in
 * src's row order, any shape with the same element count: ggml's cpy rule) or has src's ne
 * and rows of adjacent elements (any row strides). gcy_qcopy_check tells whether a pair is
 * supported; gcy_qcopy_part computes thread ith's share of nth, splitting the flat range of
 * blocks (so one long row is shared too). */
#ifndef GGML_CY_DEQUANT_TENSOR_H
#define GGML_CY_DEQUANT_TENSOR_H

#include <string.h>

#include "core_defs.h"
#include "dequant.h"

/* dst's "kind": 0 f32, 1 f16, 2 bf16 (dequantize), 3 same quantized type (block copy),
 * -1 unsupported */
static inline int gcy_qcopy_kind(const ggml_tensor * dst, const ggml_tensor * src) {
    if (!ggml_cy_is_quantized(src->type) || gcy_dq_block_of(src->type) == 0)
        return -1;
    if (dst->type == GGML_TYPE_F32) return GCY_DQ_F32;
    if (dst->type == GGML_TYPE_F16) return GCY_DQ_F16;
    if (dst->type == GGML_TYPE_BF16) return GCY_DQ_BF16;
    if (dst->type == src->type) return 3;
    return -1;
}

static inline int gcy_qcopy_contiguous(const ggml_tensor * t) {
    /* ggml_is_contiguous with block-aware dim 0 */
    int64_t next = (int64_t)ggml_cy_block_bytes(t->type);
    int64_t bs = ggml_cy_blck_size(t->type);
    if (t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3] == 0)
        return 1;
    for (int i = 0; i < 4; i++) {
        if (t->ne[i] != 1) {
            if (t->nb[i] != next)
                return 0;
            next *= i == 0 ? t->ne[0] / bs : t->ne[i];
        }
    }
    return 1;
}

/* 1 when gcy_qcopy_part can do dst <- src: a supported kind, the same element count, and
 * dst contiguous or with src's ne and rows of adjacent elements/blocks. */
static inline int gcy_qcopy_check(const ggml_tensor * dst, const ggml_tensor * src) {
    int kind = gcy_qcopy_kind(dst, src);
    if (kind < 0)
        return 0;
    const int64_t bs = ggml_cy_blck_size(src->type), ts = (int64_t)ggml_cy_block_bytes(src->type);
    if (src->ne[0] % bs != 0 || (src->ne[0] > bs && src->nb[0] != ts))
        return 0;
    int64_t n_src = src->ne[0] * src->ne[1] * src->ne[2] * src->ne[3];
    int64_t n_dst = dst->ne[0] * dst->ne[1] * dst->ne[2] * dst->ne[3];
    if (n_src != n_dst)
        return 0;
    if (gcy_qcopy_contiguous(dst))
        return 1;
    for (int i = 0; i < 4; i++)
        if (dst->ne[i] != src->ne[i])
            return 0;
    const int64_t unit = kind == 3 ? ts : (kind == GCY_DQ_F32 ? 4 : 2);
    return dst->ne[0] <= (kind == 3 ? bs : 1) || dst->nb[0] == unit;
}

/* Thread ith's share (of nth) of dst <- src; gcy_qcopy_check(dst, src) must hold. */
static inline void gcy_qcopy_part(ggml_tensor * dst, const ggml_tensor * src, int ith, int nth) {
    const int kind = gcy_qcopy_kind(dst, src);
    const int64_t bs = ggml_cy_blck_size(src->type), ts = (int64_t)ggml_cy_block_bytes(src->type);
    const int64_t nblk = src->ne[0] / bs, nrows = src->ne[1] * src->ne[2] * src->ne[3];
    const int64_t total = nblk * nrows;
    if (total <= 0 || kind < 0)
        return;
    const gcy_dq_block_fn fn = gcy_dq_block_of(src->type);
    const int64_t osz = kind == 3 ? ts : (kind == GCY_DQ_F32 ? 4 : 2);   /* bytes per unit */
    const int64_t per_blk = kind == 3 ? 1 : bs;                            /* units per block */
    const int dst_contig = gcy_qcopy_contiguous(dst);
    int64_t b0 = total * ith / nth, b1 = total * (ith + 1) / nth;
    while (b0 < b1) {
        const int64_t r = b0 / nblk, c = b0 % nblk;
        int64_t n = nblk - c;
        if (n > b1 - b0)
            n = b1 - b0;
        const int64_t i1 = r % src->ne[1], i2 = (r / src->ne[1]) % src->ne[2];
        const int64_t i3 = r / (src->ne[1] * src->ne[2]);
        const uint8_t * s = (const uint8_t *)src->data + i1 * src->nb[1] + i2 * src->nb[2] +
                            i3 * src->nb[3] + c * ts;
        char * d;
        if (dst_contig)
            d = (char *)dst->data + (r * nblk + c) * per_blk * osz;
        else
            d = (char *)dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3] +
                c * per_blk * osz;
        if (kind == 3)
            memmove(d, s, (size_t)(n * ts));
        else
            gcy_dq_run(fn, bs, ts, s, d, n, kind);
        b0 += n;
    }
}

#endif
