/* Row-interleaved copies of 2-D weight tensors for the mat-vec (decode) paths of mul_mat
 * (the idea of llama.cpp's CPU "repack" buffers; issue 13's decode speed).
 *
 * A decode step multiplies every weight matrix by one column. Read row by row, that is a
 * dot product per row (a horizontal sum per row, or 16 rows transposed in registers to
 * keep the FMA order of the GEMM). A copy with the rows interleaved in groups of 16 puts
 * the 16 rows' values for the same k side by side, so one vector instruction serves 16
 * rows and the copy is read as one sequential stream.
 *
 * Layouts (rows past M are zero; each group starts 64-byte aligned when data does):
 *   F32 / F16: group g, element k: the 16 values a[16g + i][k], i = 0..15, in a's own type
 *     (mul_mat.h's mm_gemv_rp_*).
 *   BF16: group g, pair p: 16 dwords, dword i the pair (a[16g + i][2p], a[16g + i][2p + 1])
 *     (an odd K's last pair padded with zero): what VDPBF16PS takes (mul_mat_bf16.h's
 *     mm_bf16_gemv_rp). Only the VDPBF16PS variant reads it; elsewhere the copy is ignored
 *     (the plain mat-vec gives the same bits).
 *   Q4_0 / Q8_0 (K a multiple of 256): group g, block b: 32 bytes of the 16 rows' float16
 *     scales, then for j = 0..3 (Q8_0: 0..7) the 16 rows' quant bytes qs[4j .. 4j+3] (64
 *     bytes): 288 (544) bytes per 16 row-blocks, exactly the rows' own bytes (vecdot.h's
 *     vd_rp16).
 * The kernels compute every output with the float operations of the row-wise paths in the
 * same order, so the bits are the same with or without the copy.
 *
 * The tensor's `extra` (ggml's slot for a backend's per-tensor data) points to an
 * mm_repack header; a kernel uses it only while it still describes the tensor (same data
 * pointer, type, shape and row stride, 2-D): views, reshaped tensors and other tensors over
 * the same memory take the plain path. The copy is a snapshot of the values. */
#ifndef GGML_CY_MATVEC_REPACK_H
#define GGML_CY_MATVEC_REPACK_H
#include <stdint.h>
#include <string.h>
#include "core_defs.h"

#define MM_RP_MAGIC 0x4d4d5250u
#define MM_RP_G 16           /* rows per group */
#define MM_RP_Q4_0_BLOCK 288 /* bytes of 16 rows' Q4_0 block */
#define MM_RP_Q8_0_BLOCK 544 /* bytes of 16 rows' Q8_0 block */

typedef struct {
    uint32_t magic;
    int32_t type;
    int64_t ne0, ne1, nb1;   /* K, M and the row stride of the tensor it copies */
    const void * src;        /* the tensor's data when copied */
    const char * data;       /* the copy */
} mm_repack;

/* The element size of a float type's copy, or 0 for Q4_0 / Q8_0 (block layouts), -1
 * unsupported. */
static inline int mm_rp_elem(int type) {
    if (type == GGML_TYPE_F32) return 4;
    if (type == GGML_TYPE_F16 || type == GGML_TYPE_BF16) return 2;
    if (type == GGML_TYPE_Q4_0 || type == GGML_TYPE_Q8_0) return 0;
    return -1;
}

/* A quantized copy's bytes per 16 row-blocks, and the source block's size and quant words. */
static inline int64_t mm_rp_qblock(int type) {
    return type == GGML_TYPE_Q8_0 ? MM_RP_Q8_0_BLOCK : MM_RP_Q4_0_BLOCK;
}

/* 1 when a copy of a (type, K, M) matrix can be made. */
static inline int mm_repack_supported(int type, int64_t K) {
    const int es = mm_rp_elem(type);
    return es > 0 || (es == 0 && K > 0 && K % 256 == 0);
}

static inline int64_t mm_repack_bytes(int type, int64_t K, int64_t M) {
    const int64_t groups = (M + MM_RP_G - 1) / MM_RP_G;
    const int es = mm_rp_elem(type);
    if (es == 0) return groups * (K / 32) * mm_rp_qblock(type);
    if (type == GGML_TYPE_BF16) return groups * ((K + 1) / 2) * MM_RP_G * 4;
    return groups * K * MM_RP_G * es;
}

/* The copy's groups [g0, g1) of a 2-D tensor a (rows adjacent along K). */
static inline void mm_repack_fill(const ggml_tensor * a, char * out, int64_t g0, int64_t g1) {
    const int64_t K = a->ne[0], M = a->ne[1];
    const int es = mm_rp_elem(a->type);
    if (es == 0) {           /* Q4_0 {d, qs[16]} 18 bytes, Q8_0 {d, qs[32]} 34 bytes */
        const int64_t nb = K / 32, qb = mm_rp_qblock(a->type);
        const int words = a->type == GGML_TYPE_Q8_0 ? 8 : 4, sb = 2 + 4 * words;
        for (int64_t g = g0; g < g1; g++) {
            char * o = out + g * nb * qb;
            for (int64_t b = 0; b < nb; b++, o += qb) {
                memset(o, 0, (size_t)qb);
                for (int i = 0; i < MM_RP_G; i++) {
                    const int64_t m = g * MM_RP_G + i;
                    if (m >= M) break;
                    const char * blk = (const char *)a->data + m * a->nb[1] + b * sb;
                    memcpy(o + 2 * i, blk, 2);
                    for (int j = 0; j < words; j++) memcpy(o + 32 + 64 * j + 4 * i, blk + 2 + 4 * j, 4);
                }
            }
        }
        return;
    }
    if (a->type == GGML_TYPE_BF16) {   /* pairs as dwords */
        const int64_t kp = (K + 1) / 2;
        for (int64_t g = g0; g < g1; g++) {
            uint32_t * o = (uint32_t *)(out + g * kp * MM_RP_G * 4);
            for (int i = 0; i < MM_RP_G; i++) {
                const int64_t m = g * MM_RP_G + i;
                const uint16_t * row = (const uint16_t *)((const char *)a->data + m * a->nb[1]);
                for (int64_t p = 0; p < kp; p++) {
                    uint32_t v = 0;
                    if (m < M) {
                        v = row[2 * p];
                        if (2 * p + 1 < K) v |= (uint32_t)row[2 * p + 1] << 16;
                    }
                    o[p * MM_RP_G + i] = v;
                }
            }
        }
        return;
    }
    for (int64_t g = g0; g < g1; g++) {
        char * o = out + g * K * MM_RP_G * es;
        for (int i = 0; i < MM_RP_G; i++) {
            const int64_t m = g * MM_RP_G + i;
            if (m < M) {
                const char * row = (const char *)a->data + m * a->nb[1];
                if (es == 4)
                    for (int64_t k = 0; k < K; k++) memcpy(o + (k * MM_RP_G + i) * 4, row + k * 4, 4);
                else
                    for (int64_t k = 0; k < K; k++) memcpy(o + (k * MM_RP_G + i) * 2, row + k * 2, 2);
            } else {
                for (int64_t k = 0; k < K; k++) memset(o + (k * MM_RP_G + i) * es, 0, (size_t)es);
            }
        }
    }
}

/* The header in a->extra when it still describes a (see above), else NULL. */
static inline const mm_repack * mm_repack_of(const ggml_tensor * a) {
    const mm_repack * r = (const mm_repack *)a->extra;
    const int es = mm_rp_elem(a->type);
    if (r == NULL || es < 0 || r->magic != MM_RP_MAGIC || r->type != a->type || r->src != a->data
        || r->ne0 != a->ne[0] || r->ne1 != a->ne[1] || r->nb1 != a->nb[1]
        || a->ne[2] != 1 || a->ne[3] != 1
        || a->nb[0] != (es ? es : (a->type == GGML_TYPE_Q8_0 ? 34 : 18))
        || !mm_repack_supported(a->type, a->ne[0]))
        return NULL;
    return r;
}
#endif
