/* GGML_OP_GET_ROWS (ggml's ggml_compute_forward_get_rows): rows of a table picked by
 * int32 ids, converted to f32.
 *   src0 table [ne00, ne01, ne02, ne03] of f32, f16, bf16 or any quantized type with a
 *        dequantizer (rows of whole blocks);
 *   src1 ids [ne10, ne11, ne12, 1] int32, each in [0, ne01);
 *   dst [ne00, ne10, ne11, ne12] f32 (an i32 table gives an i32 dst, bits copied):
 *     dst[:, i10, i11, i12] = table[:, ids[i10, i11, i12], i11, i12]
 * (ggml's rule: a.ne[2] == b.ne[1], a.ne[3] == b.ne[2]: one table per id batch).
 * Quantized rows go through the same dequantizer as ggml_cy.dequantize, so a row is
 * bitwise what dequantizing it gives. Rows are split over threads (ith/nth). */
#ifndef GGML_CY_GET_ROWS_H
#define GGML_CY_GET_ROWS_H
#include <stdint.h>
#include <string.h>
#include "core_defs.h"
#include "kernels_convert.h"
#include "mul_mat_q.h"

/* 1 when get_rows reads tables of this type. */
static inline int gr_supported(int type) {
    if (type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16) return 1;
    return ggml_cy_type_traits_of(type).is_quantized && mmq_dequant_of(type) != NULL;
}

/* Thread ith of nth: its share of the rows. 0, -1 (unsupported type) or -2 (an id out
 * of range: the rows of this thread after it are left unwritten). */
static inline int gr_compute(const ggml_tensor * dst, int ith, int nth) {
    const ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const int64_t ne00 = a->ne[0], ne01 = a->ne[1];
    const int64_t ne10 = b->ne[0], ne11 = b->ne[1], ne12 = b->ne[2];
    const int64_t nr = ne10 * ne11 * ne12;
    const int64_t ir0 = nr * ith / nth, ir1 = nr * (ith + 1) / nth;
    const int type = a->type;
    const mmq_dequant_fn dq = ggml_cy_type_traits_of(type).is_quantized ? mmq_dequant_of(type) : NULL;
    /* (issue 13, ops3) ggml also gathers i32 tables, into an i32 result */
    if (!gr_supported(type) && !(type == GGML_TYPE_I32 && dst->type == GGML_TYPE_I32)) return -1;
    for (int64_t ir = ir0; ir < ir1; ir++) {
        const int64_t i12 = ir / (ne11 * ne10), i11 = (ir / ne10) % ne11, i10 = ir % ne10;
        const int32_t i01 = *(const int32_t *)((const char *)b->data + i10 * b->nb[0]
                                               + i11 * b->nb[1] + i12 * b->nb[2]);
        if (i01 < 0 || i01 >= ne01) return -2;
        const char * src = (const char *)a->data + i01 * a->nb[1] + i11 * a->nb[2] + i12 * a->nb[3];
        float * out = (float *)((char *)dst->data + i10 * dst->nb[1] + i11 * dst->nb[2]
                                + i12 * dst->nb[3]);
        if (dq) {
            const int64_t bs = ggml_cy_type_traits_of(type).blck_size;
            const size_t ts = ggml_cy_type_traits_of(type).type_size;
            for (int64_t j = 0; j < ne00 / bs; j++) dq(src + j * ts, out + j * bs);
        } else if (type == GGML_TYPE_F32 || type == GGML_TYPE_I32) {
            if (a->nb[0] == 4) memcpy(out, src, (size_t)ne00 * 4);
            else for (int64_t k = 0; k < ne00; k++) out[k] = *(const float *)(src + k * a->nb[0]);
        } else if (type == GGML_TYPE_F16) {
            if (a->nb[0] == 2) kern_h2f_row((const uint16_t *)src, out, ne00);
            else for (int64_t k = 0; k < ne00; k++) out[k] = kern_h2f_hw(*(const uint16_t *)(src + k * a->nb[0]));
        } else {
            if (a->nb[0] == 2) kern_bf2f_row((const uint16_t *)src, out, ne00);
            else for (int64_t k = 0; k < ne00; k++) out[k] = kern_bf2f(*(const uint16_t *)(src + k * a->nb[0]));
        }
    }
    return 0;
}
#endif
