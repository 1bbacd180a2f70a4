/* Issue 13's shape and sorting ops (ggml's ggml_compute_forward_concat / _repeat / _pad /
 * _argsort / _top_k / _argmax), row-parallel over threads (ith/nth), any strides.
 *
 *   CONCAT  dst = a and b joined along dim op_params[0] (any non-quantized type);
 *   REPEAT  dst[i] = a[i mod a.ne] (a tiled over dst's shape; any non-quantized type);
 *   PAD     dst = a with op_params [lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3] elements added
 *           before/after each dim: zeros, or (op_params[8] != 0, ggml's circular pad) the
 *           values wrapped around from the other end (any non-quantized type);
 *   ARGSORT dst (i32, a's shape) = each row's indices ordered by value, ascending
 *           (op_params[0] == 0) or descending (1); f32 rows;
 *   TOP_K   dst (i32 [k, ...]) = the indices of each row's k largest values; f32 rows;
 *   ARGMAX  dst (i32 [ne1]) = each row's index of its largest value; f32 rows.
 *
 * Sorting: a stable merge sort, so equal values keep their index order (ggml uses
 * std::sort, whose order among ties is unspecified: ggml_cy's order is one of those ggml
 * allows). NaN sorts as larger than +inf: last ascending, first descending. TOP_K gives
 * its k indices in descending order of value (ggml leaves their order unspecified).
 * ARGMAX follows ggml's CPU loop exactly: ties go to the LAST index (numpy: the first),
 * and a NaN is skipped but resets the running maximum to the value after it. */
#ifndef GGML_CY_OPS_SHAPE_H
#define GGML_CY_OPS_SHAPE_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "core_defs.h"

static inline size_t shp_elsize(int type) {
    const ggml_cy_type_traits tt = ggml_cy_type_traits_of(type);
    return (tt.blck_size == 1 && !tt.is_quantized) ? tt.type_size : 0;
}

/* 1 when the shape ops (concat, repeat, pad) handle this type: every non-quantized type. */
static inline int shp_type_ok(int type) {
    return type >= 0 && type < GGML_TYPE_COUNT && shp_elsize(type) > 0;
}

/* Copies n elements of es bytes between strided rows (memcpy when both are packed). */
static inline void shp_copy_row(char * dst, int64_t nbd, const char * src, int64_t nbs,
                                int64_t n, size_t es) {
    if (n <= 0) return;
    if (nbd == (int64_t)es && nbs == (int64_t)es) { memcpy(dst, src, (size_t)n * es); return; }
    for (int64_t i = 0; i < n; i++) memcpy(dst + i * nbd, src + i * nbs, es);
}

static inline void shp_zero_row(char * dst, int64_t nbd, int64_t n, size_t es) {
    if (n <= 0) return;
    if (nbd == (int64_t)es) { memset(dst, 0, (size_t)n * es); return; }
    for (int64_t i = 0; i < n; i++) memset(dst + i * nbd, 0, es);
}

/* dst's rows (i1, i2, i3) shared out: thread ith takes rows [*r0, *r1). */
static inline int64_t shp_rows(const ggml_tensor * t, int ith, int nth, int64_t * r0, int64_t * r1) {
    const int64_t nr = t->ne[1] * t->ne[2] * t->ne[3];
    *r0 = nr * ith / nth;
    *r1 = nr * (ith + 1) / nth;
    return nr;
}

#define SHP_ROW_INDEX(t, ir, i1, i2, i3) \
    const int64_t i3 = (ir) / ((t)->ne[1] * (t)->ne[2]); \
    const int64_t i2 = ((ir) / (t)->ne[1]) % (t)->ne[2]; \
    const int64_t i1 = (ir) % (t)->ne[1];

/* ------------------------------------------------------------------ CONCAT */
static inline int concat_compute(const ggml_tensor * dst, int ith, int nth) {
    const ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const int dim = dst->op_params[0];
    const size_t es = shp_elsize(a->type);
    if (!es || b->type != a->type || dst->type != a->type || dim < 0 || dim > 3) return -1;
    for (int d = 0; d < 4; d++) {
        const int64_t want = d == dim ? a->ne[d] + b->ne[d] : a->ne[d];
        if (dst->ne[d] != want || (d != dim && b->ne[d] != a->ne[d])) return -1;
    }
    int64_t r0, r1;
    shp_rows(dst, ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        SHP_ROW_INDEX(dst, ir, i1, i2, i3)
        char * out = (char *)dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
        if (dim == 0) {
            shp_copy_row(out, dst->nb[0], (const char *)a->data + i1 * a->nb[1] + i2 * a->nb[2]
                         + i3 * a->nb[3], a->nb[0], a->ne[0], es);
            shp_copy_row(out + a->ne[0] * dst->nb[0], dst->nb[0], (const char *)b->data
                         + i1 * b->nb[1] + i2 * b->nb[2] + i3 * b->nb[3], b->nb[0], b->ne[0], es);
            continue;
        }
        int64_t j[4] = {0, i1, i2, i3};
        const ggml_tensor * s = a;
        if (j[dim] >= a->ne[dim]) { j[dim] -= a->ne[dim]; s = b; }
        shp_copy_row(out, dst->nb[0], (const char *)s->data + j[1] * s->nb[1] + j[2] * s->nb[2]
                     + j[3] * s->nb[3], s->nb[0], s->ne[0], es);
    }
    return 0;
}

/* ------------------------------------------------------------------ REPEAT */
static inline int repeat_compute(const ggml_tensor * dst, int ith, int nth) {
    const ggml_tensor * a = dst->src[0];
    const size_t es = shp_elsize(a->type);
    if (!es || dst->type != a->type) return -1;
    for (int d = 0; d < 4; d++) {
        if (a->ne[d] == 0 ? dst->ne[d] != 0 : dst->ne[d] % a->ne[d] != 0) return -1;
    }
    const int64_t ne00 = a->ne[0];
    int64_t r0, r1;
    shp_rows(dst, ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        SHP_ROW_INDEX(dst, ir, i1, i2, i3)
        char * out = (char *)dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
        const char * src = (const char *)a->data + (i1 % a->ne[1]) * a->nb[1]
                           + (i2 % a->ne[2]) * a->nb[2] + (i3 % a->ne[3]) * a->nb[3];
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0 += ne00)
            shp_copy_row(out + i0 * dst->nb[0], dst->nb[0], src, a->nb[0], ne00, es);
    }
    return 0;
}

/* ------------------------------------------------------------------ PAD */
static inline int64_t shp_wrap(int64_t i, int64_t n) {
    const int64_t r = i % n;
    return r < 0 ? r + n : r;
}

static inline int pad_compute(const ggml_tensor * dst, int ith, int nth) {
    const ggml_tensor * a = dst->src[0];
    const size_t es = shp_elsize(a->type);
    const int32_t * pp = dst->op_params;
    const int circular = pp[8] != 0;
    if (!es || dst->type != a->type) return -1;
    for (int d = 0; d < 4; d++) {
        if (pp[2 * d] < 0 || pp[2 * d + 1] < 0) return -1;
        if (dst->ne[d] != a->ne[d] + pp[2 * d] + pp[2 * d + 1]) return -1;
        if (circular && a->ne[d] == 0 && dst->ne[d] != 0) return -1;
    }
    const int64_t lp0 = pp[0], ne00 = a->ne[0], ne0 = dst->ne[0];
    int64_t r0, r1;
    shp_rows(dst, ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        SHP_ROW_INDEX(dst, ir, i1, i2, i3)
        char * out = (char *)dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
        int64_t j[4] = {0, i1 - pp[2], i2 - pp[4], i3 - pp[6]};
        int inside = 1;
        for (int d = 1; d < 4; d++) {
            if (circular) j[d] = shp_wrap(j[d], a->ne[d]);
            else if (j[d] < 0 || j[d] >= a->ne[d]) inside = 0;
        }
        if (!inside) { shp_zero_row(out, dst->nb[0], ne0, es); continue; }
        const char * src = (const char *)a->data + j[1] * a->nb[1] + j[2] * a->nb[2] + j[3] * a->nb[3];
        if (circular) {
            for (int64_t i0 = 0; i0 < ne0; i0++)
                memcpy(out + i0 * dst->nb[0], src + shp_wrap(i0 - lp0, ne00) * a->nb[0], es);
        } else {
            shp_zero_row(out, dst->nb[0], lp0, es);
            shp_copy_row(out + lp0 * dst->nb[0], dst->nb[0], src, a->nb[0], ne00, es);
            shp_zero_row(out + (lp0 + ne00) * dst->nb[0], dst->nb[0], ne0 - lp0 - ne00, es);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ sorting */
/* i before j in the order (ties: not before, so merging keeps index order). */
static inline int srt_before(const float * v, int32_t i, int32_t j, int desc) {
    const float x = v[i], y = v[j];
    if (desc) return x > y || (isnan(x) && !isnan(y));
    return x < y || (isnan(y) && !isnan(x));
}

/* Stable sort of idx[0..n) by v (insertion-sorted runs of 16, then bottom-up merges
 * through tmp). The result ends in idx. */
static inline void srt_sort(int32_t * idx, int32_t * tmp, const float * v, int64_t n, int desc) {
    const int64_t RUN = 16;
    for (int64_t s = 0; s < n; s += RUN) {
        const int64_t e = s + RUN < n ? s + RUN : n;
        for (int64_t i = s + 1; i < e; i++) {
            const int32_t x = idx[i];
            int64_t k = i;
            while (k > s && srt_before(v, x, idx[k - 1], desc)) { idx[k] = idx[k - 1]; k--; }
            idx[k] = x;
        }
    }
    int32_t * from = idx, * to = tmp;
    for (int64_t w = RUN; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            const int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                to[k++] = srt_before(v, from[j], from[i], desc) ? from[j++] : from[i++];
            while (i < mid) to[k++] = from[i++];
            while (j < hi) to[k++] = from[j++];
        }
        int32_t * t = from; from = to; to = t;
    }
    if (from != idx) memcpy(idx, from, (size_t)n * sizeof(int32_t));
}

/* The first k of the stable order of idx-free row v[0..n) into out (k small): a sorted
 * buffer of the best k so far; a value enters only if it is strictly before the k-th
 * (so among equal values the lower index stays), at the first place it is before.
 * O(n + insertions * k): for k <= SRT_SMALL_K, cheaper than sorting the whole row. */
#define SRT_SMALL_K 64
static inline void srt_select(int32_t * out, const float * v, int64_t n, int64_t k, int desc) {
    int64_t cur = 0;
    for (int64_t i = 0; i < n; i++) {
        if (cur == k && !srt_before(v, (int32_t)i, out[k - 1], desc)) continue;
        int64_t p = cur < k ? cur : k - 1;      /* the slot freed at the end */
        while (p > 0 && srt_before(v, (int32_t)i, out[p - 1], desc)) { out[p] = out[p - 1]; p--; }
        out[p] = (int32_t)i;
        if (cur < k) cur++;
    }
}

/* Per-thread work bytes of ARGSORT / TOP_K: a row's values and two index arrays. */
static inline size_t sort_work_bytes(const ggml_tensor * dst) {
    return (size_t)dst->src[0]->ne[0] * (sizeof(float) + 2 * sizeof(int32_t)) + 64;
}

/* ARGSORT (top_k < 0: every index, order op_params[0]) or TOP_K (the first top_k of the
 * descending order). work: sort_work_bytes(dst) bytes of this thread. */
static inline int sort_compute(const ggml_tensor * dst, int ith, int nth, char * work, int top_k) {
    const ggml_tensor * a = dst->src[0];
    const int64_t ne00 = a->ne[0];
    const int desc = top_k >= 0 ? 1 : dst->op_params[0];
    const int64_t nout = top_k >= 0 ? top_k : ne00;
    if (a->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_I32 || (desc != 0 && desc != 1)) return -1;
    if (ne00 > INT32_MAX || nout > ne00 || dst->ne[0] != nout) return -1;
    for (int d = 1; d < 4; d++) if (dst->ne[d] != a->ne[d]) return -1;
    float * v = (float *)work;
    int32_t * idx = (int32_t *)(work + ((ne00 * sizeof(float) + 15) & ~(size_t)15));
    int32_t * tmp = idx + ne00;
    int64_t r0, r1;
    shp_rows(a, ith, nth, &r0, &r1);
    for (int64_t ir = r0; ir < r1; ir++) {
        SHP_ROW_INDEX(a, ir, i1, i2, i3)
        const char * src = (const char *)a->data + i1 * a->nb[1] + i2 * a->nb[2] + i3 * a->nb[3];
        char * out = (char *)dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
        for (int64_t i = 0; i < ne00; i++) {
            v[i] = *(const float *)(src + i * a->nb[0]);
            idx[i] = (int32_t)i;
        }
        if (top_k >= 0 && top_k <= SRT_SMALL_K && top_k < ne00) {
            if (top_k > 0) srt_select(idx, v, ne00, top_k, desc);
        } else {
            srt_sort(idx, tmp, v, ne00, desc);
        }
        for (int64_t i = 0; i < nout; i++) *(int32_t *)(out + i * dst->nb[0]) = idx[i];
    }
    return 0;
}

/* ------------------------------------------------------------------ ARGMAX */
static inline int argmax_compute(const ggml_tensor * dst, int ith, int nth) {
    const ggml_tensor * a = dst->src[0];
    const int64_t ne00 = a->ne[0], ne01 = a->ne[1];
    if (a->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_I32 || dst->ne[0] != ne01) return -1;
    if (a->ne[2] != 1 || a->ne[3] != 1 || ne00 > INT32_MAX) return -1;
    const int64_t r0 = ne01 * ith / nth, r1 = ne01 * (ith + 1) / nth;
    for (int64_t i1 = r0; i1 < r1; i1++) {
        const char * src = (const char *)a->data + i1 * a->nb[1];
        float mx = -INFINITY;
        int32_t best = 0;
        for (int64_t i = 0; i < ne00; i++) {
            const float x = *(const float *)(src + i * a->nb[0]);
            mx = mx > x ? mx : x;        /* ggml's MAX(mx, x): a NaN x becomes the max */
            if (mx == x) best = (int32_t)i;
        }
        *(int32_t *)((char *)dst->data + i1 * dst->nb[0]) = best;
    }
    return 0;
}
#endif
