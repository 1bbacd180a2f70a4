/* GGML_OP_ROPE (ggml's ggml_compute_forward_rope): rotary position embedding with ggml's
 * YaRN scaling, normal (mode 0) and NeoX (mode 2) pair layouts, partial rotation.
 *   src0 a [ne0 = head size, ne1 = heads, ne2 = tokens, ne3 = batch], f32 or f16;
 *   src1 positions [ne2] int32 (one per token);
 *   src2 optional freq factors [>= n_dims/2] f32 (each pair's frequency is divided by it);
 *   dst: a's shape and type.
 * op_params (ggml's layout): [1] n_dims, [2] mode, [4] n_ctx_orig, floats [5] freq_base,
 * [6] freq_scale, [7] ext_factor, [8] attn_factor, [9] beta_fast, [10] beta_slow.
 *
 * For pair k (k < n_dims/2) of a row at position p:
 *   theta_extrap = p * freq_base^(-2k/n_dims) / ff[k]
 *   theta_interp = freq_scale * theta_extrap
 *   with ext_factor != 0 (YaRN): mix = ramp(k) * ext_factor,
 *       theta = theta_interp * (1 - mix) + theta_extrap * mix,
 *       mscale = attn_factor * (1 + 0.1 ln(1 / freq_scale));
 *   else theta = theta_interp, mscale = attn_factor;
 *   ramp(k) = 1 - clamp((k - lo) / max(0.001, hi - lo), 0, 1), where lo/hi are the
 *   "correction dims" of beta_fast/beta_slow (rope_corr_dims below);
 *   (x0, x1) -> ((x0 cos - x1 sin) * mscale, (x0 sin + x1 cos) * mscale),
 *   x0 = row[2k], x1 = row[2k+1] (normal) or x0 = row[k], x1 = row[k + n_dims/2] (NeoX).
 * Elements from n_dims on are copied unchanged. The arithmetic is float32 in ggml's
 * order (the frequency is a running product of base^(-2/n_dims), as ggml computes it), so
 * results follow ggml's CPU backend rather than an exact evaluation of the formula.
 * Rows are split over threads (ith/nth); the per-row cos/sin table is rebuilt when the
 * token (i2) changes, in `cache` (n_dims floats per thread, from the work buffer).
 * Any strides: rows need not be contiguous (ggml needs nb0 == element size). */
#ifndef GGML_CY_OPS_ROPE_H
#define GGML_CY_OPS_ROPE_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "core_defs.h"
#include "kernels_convert.h"

#define GCY_ROPE_NORMAL 0
#define GCY_ROPE_NEOX 2

static inline float rope_param_f32(const ggml_tensor * t, int i) {
    float f;
    memcpy(&f, &t->op_params[i], sizeof f);
    return f;
}

/* The dimension (pair index, as a float) at which n_rot full rotations happen over
 * n_ctx_orig positions: solving n_ctx_orig = 2 pi n_rot base^(2 d / n_dims) for d. */
static inline float rope_corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    return n_dims * logf(n_ctx_orig / (n_rot * 2 * (float)M_PI)) / (2 * logf(base));
}

/* YaRN's correction range [lo, hi] (ggml_rope_yarn_corr_dims). */
static inline void rope_corr_dims(int n_dims, int n_ctx_orig, float base, float beta_fast,
                                  float beta_slow, float dims[2]) {
    const float lo = floorf(rope_corr_dim(n_dims, n_ctx_orig, beta_fast, base));
    const float hi = ceilf(rope_corr_dim(n_dims, n_ctx_orig, beta_slow, base));
    dims[0] = lo > 0 ? lo : 0;
    dims[1] = hi < (float)(n_dims - 1) ? hi : (float)(n_dims - 1);
}

/* cache[2k], cache[2k+1] = cos, sin of pair k's angle at position p (times mscale). */
static inline void rope_fill_cache(float * cache, int n_dims, float p, const ggml_tensor * ff,
                                   float freq_scale, float ext_factor, float attn_factor,
                                   const float corr[2], float theta_scale) {
    float theta = p;
    for (int k = 0; k < n_dims / 2; k++) {
        const float f = ff ? *(const float *)((const char *)ff->data + k * ff->nb[0]) : 1.0f;
        const float theta_extrap = theta / f;
        const float theta_interp = freq_scale * theta_extrap;
        float th = theta_interp, mscale = attn_factor;
        if (ext_factor != 0.0f) {
            float y = ((float)k - corr[0]) / fmaxf(0.001f, corr[1] - corr[0]);
            y = fminf(1.0f, fmaxf(0.0f, y));
            const float mix = (1.0f - y) * ext_factor;
            th = theta_interp * (1 - mix) + theta_extrap * mix;
            mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);
        }
        cache[2 * k] = cosf(th) * mscale;
        cache[2 * k + 1] = sinf(th) * mscale;
        theta *= theta_scale;
    }
}

static inline float rope_load(const char * p, int type) {
    return type == GGML_TYPE_F32 ? *(const float *)p : kern_h2f_hw(*(const uint16_t *)p);
}

static inline void rope_store(char * p, int type, float v) {
    if (type == GGML_TYPE_F32) *(float *)p = v;
    else *(uint16_t *)p = kern_f2h(v);
}

/* Per-thread work bytes: the cos/sin table of one position. */
static inline size_t rope_work_bytes(const ggml_tensor * dst) {
    return (size_t)(dst->op_params[1] > 0 ? dst->op_params[1] : 0) * sizeof(float);
}

/* 0, or -1 for parameters the builder refuses (checked again: nothing here may crash). */
static inline int rope_compute(const ggml_tensor * dst, int ith, int nth, float * cache) {
    const ggml_tensor * a = dst->src[0], * pos = dst->src[1], * ff = dst->src[2];
    const int n_dims = dst->op_params[1], mode = dst->op_params[2];
    const int n_ctx_orig = dst->op_params[4];
    const float freq_base = rope_param_f32(dst, 5), freq_scale = rope_param_f32(dst, 6);
    const float ext_factor = rope_param_f32(dst, 7), attn_factor = rope_param_f32(dst, 8);
    const float beta_fast = rope_param_f32(dst, 9), beta_slow = rope_param_f32(dst, 10);
    const int64_t ne0 = a->ne[0], ne1 = a->ne[1], ne2 = a->ne[2], ne3 = a->ne[3];
    const int type = a->type;
    if ((type != GGML_TYPE_F32 && type != GGML_TYPE_F16) || dst->type != type) return -1;
    if (n_dims <= 0 || n_dims % 2 || n_dims > ne0) return -1;
    if (mode != GCY_ROPE_NORMAL && mode != GCY_ROPE_NEOX) return -1;
    if (pos->ne[0] != ne2) return -1;
    if (ff && ff->ne[0] < n_dims / 2) return -1;
    const size_t es = type == GGML_TYPE_F32 ? 4 : 2;
    const float theta_scale = powf(freq_base, -2.0f / n_dims);
    float corr[2];
    rope_corr_dims(n_dims, n_ctx_orig, freq_base, beta_fast, beta_slow, corr);
    const int64_t nr = ne1 * ne2 * ne3;
    const int64_t ir0 = nr * ith / nth, ir1 = nr * (ith + 1) / nth;
    const int64_t half = n_dims / 2;
    const int64_t step = mode == GCY_ROPE_NEOX ? 1 : 2;        /* x0 of pair k at k*step */
    const int64_t off = mode == GCY_ROPE_NEOX ? half : 1;      /* x1 = x0 + off */
    int64_t last = -1;
    for (int64_t ir = ir0; ir < ir1; ir++) {
        const int64_t i3 = ir / (ne1 * ne2), i2 = (ir / ne1) % ne2, i1 = ir % ne1;
        if (i3 * ne2 + i2 != last) {
            const int32_t p = *(const int32_t *)((const char *)pos->data + i2 * pos->nb[0]);
            rope_fill_cache(cache, n_dims, (float)p, ff, freq_scale, ext_factor, attn_factor,
                            corr, theta_scale);
            last = i3 * ne2 + i2;
        }
        const char * src = (const char *)a->data + i1 * a->nb[1] + i2 * a->nb[2] + i3 * a->nb[3];
        char * out = (char *)dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
        const int64_t nb00 = a->nb[0], nb0 = dst->nb[0];
        if (type == GGML_TYPE_F32 && nb00 == 4 && nb0 == 4) {
            const float * x = (const float *)src;
            float * y = (float *)out;
            for (int64_t k = 0; k < half; k++) {
                const float c = cache[2 * k], s = cache[2 * k + 1];
                const float x0 = x[k * step], x1 = x[k * step + off];
                y[k * step] = x0 * c - x1 * s;
                y[k * step + off] = x0 * s + x1 * c;
            }
            if (y != x) for (int64_t i0 = n_dims; i0 < ne0; i0++) y[i0] = x[i0];
        } else {
            for (int64_t k = 0; k < half; k++) {
                const float c = cache[2 * k], s = cache[2 * k + 1];
                const float x0 = rope_load(src + k * step * nb00, type);
                const float x1 = rope_load(src + (k * step + off) * nb00, type);
                rope_store(out + k * step * nb0, type, x0 * c - x1 * s);
                rope_store(out + (k * step + off) * nb0, type, x0 * s + x1 * c);
            }
            for (int64_t i0 = n_dims; i0 < ne0; i0++)
                memmove(out + i0 * nb0, src + i0 * nb00, es);
        }
    }
    return 0;
}
#endif
