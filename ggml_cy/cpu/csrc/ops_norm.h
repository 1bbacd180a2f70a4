/* Issue 13 row ops (ops1): NORM, RMS_NORM, GROUP_NORM, SOFT_MAX, DIAG_MASK_INF, GLU.
 *
 * ggml's semantics (ggml-cpu/ops.cpp, ggml_compute_forward_<op>), written for ggml_cy:
 *   NORM          y = (x - mean) / sqrt(var + eps) over each row (ne0);  op_params [eps]
 *   RMS_NORM      y = x / sqrt(mean(x^2) + eps) over each row;             [eps]
 *   GROUP_NORM    NORM over groups of ceil(ne2 / n_groups) consecutive channels (dim 2),
 *                 each group one (ne0 * ne1 * channels) block per i3;    [n_groups, eps]
 *   SOFT_MAX      y = softmax(x * scale + slope * mask) over each row;  [scale, max_bias]
 *                 mask (src1, optional, f32 or f16) row i1 of batch (i2 % m.ne2, i3 % m.ne3);
 *                 ALiBi slope per head h = i2 of n_head = ne2 (ggml's m0/m1 formula)
 *   DIAG_MASK_INF y = -inf where i0 > n_past + i1, else x;                [n_past]
 *   GLU           y = act(x) * g, x/g the two halves of a row (fused: x first half unless
 *                 swapped) or src0/src1 (split);            [ggml_glu_op, swapped]
 *
 * Types: f32 (ggml's), f64 (ggml_cy's float64 data) for all; GLU also f16 (computed in f32,
 * rounded once, as ggml's f16 rows). Every kernel reads its operands through their byte
 * strides, so permuted and strided views work (ggml asserts contiguous rows for several of
 * these). Each row is read completely before its result is written, and each element is
 * read before the same element is written, so an in-place result that aliases src0
 * element for element (the *_inplace builders) is safe.
 *
 * Precision: sums in double. f32 RMS_NORM follows ggml's float steps (mean and scale in
 * float, y = x * scale); NORM and GROUP_NORM follow ggml's scalar path (mean in float,
 * x - mean in float, variance summed in double). GLU's activations are the formulas of the
 * elementwise kernels (kernels_elem.h: gelu is the tanh approximation evaluated exactly;
 * ggml's CPU reads it from an f16 table, within ~1e-3 relative of the formula).
 *
 * Threads: thread ith of nth takes rows [nr*ith/nth, nr*(ith+1)/nth) (GROUP_NORM: units of
 * (group, i3)). No barrier and no work buffer are needed. */
#ifndef GGML_CY_OPS_NORM_H
#define GGML_CY_OPS_NORM_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "core_defs.h"
#include "ops_defs.h"
#include "kernels_elem.h"

/* ggml's enum ggml_glu_op */
enum { ON_GLU_REGLU = 0, ON_GLU_GEGLU = 1, ON_GLU_SWIGLU = 2, ON_GLU_SWIGLU_OAI = 3,
       ON_GLU_GEGLU_ERF = 4, ON_GLU_GEGLU_QUICK = 5 };

static inline float on_param_f32(const ggml_tensor * t, int i) {
    float f;
    memcpy(&f, &t->op_params[i], sizeof(f));
    return f;
}

static inline int on_same_ne(const ggml_tensor * a, const ggml_tensor * b) {
    return a->ne[0] == b->ne[0] && a->ne[1] == b->ne[1] && a->ne[2] == b->ne[2]
        && a->ne[3] == b->ne[3];
}

#define ON_PTR(t, i1, i2, i3) ((char *)(t)->data + (i1) * (t)->nb[1] + (i2) * (t)->nb[2] \
                               + (i3) * (t)->nb[3])
#define ON_AT(T, p, i, nb0) (*(T *)((char *)(p) + (int64_t)(i) * (nb0)))

/* ----------------------------------------------------------------------------- norms
 * T: element type, R: the float type of mean/scale (float for f32, as ggml), SQ: sqrt.
 * Row helpers take the strides as arguments and are inlined twice: with the element size
 * (contiguous rows: the compiler vectorizes the float loops) and with the real strides.
 * Double sums run in 4 interleaved partial sums (a fixed order for every layout). */
#define ON_INL static inline __attribute__((always_inline))
#define ON_ROWS(T, CALL)                                                                  \
    if (sb == (int64_t)sizeof(T) && db == (int64_t)sizeof(T)) {                            \
        const int64_t sb_ = sizeof(T), db_ = sizeof(T); CALL;                              \
    } else {                                                                               \
        const int64_t sb_ = sb, db_ = db; CALL;                                            \
    }

#define ON_SUM4(EXPR)                                                                     \
    double s0_ = 0.0, s1_ = 0.0, s2_ = 0.0, s3_ = 0.0;                                    \
    int64_t i = 0;                                                                         \
    for (; i + 4 <= n; i += 4) {                                                           \
        { const int64_t k = i; s0_ += (double)(EXPR); }                                    \
        { const int64_t k = i + 1; s1_ += (double)(EXPR); }                                \
        { const int64_t k = i + 2; s2_ += (double)(EXPR); }                                \
        { const int64_t k = i + 3; s3_ += (double)(EXPR); }                                \
    }                                                                                      \
    for (; i < n; i++) { const int64_t k = i; s0_ += (double)(EXPR); }                     \
    const double sum = (s0_ + s1_) + (s2_ + s3_);

/* The row-parallel driver shared by norm and rms_norm: rows of src0 split evenly over the
 * threads, each normalized by on_<op>_row_<tn> with eps from op_params[0]. */
#define ON_DEF_ROW_DRIVER(op, tn, T, R)                                                   \
static void on_##op##_##tn(const ggml_tensor * dst, int ith, int nth) {                  \
    const ggml_tensor * s = dst->src[0];                                                   \
    const R eps = (R)on_param_f32(dst, 0);                                                 \
    const int64_t n = s->ne[0], ne1 = s->ne[1], ne2 = s->ne[2];                            \
    const int64_t nr = ne1 * ne2 * s->ne[3], ir0 = nr * ith / nth, ir1 = nr * (ith + 1) / nth; \
    const int64_t sb = s->nb[0], db = dst->nb[0];                                          \
    if (n == 0) return;                                                                    \
    for (int64_t ir = ir0; ir < ir1; ir++) {                                               \
        const int64_t i1 = ir % ne1, i2 = (ir / ne1) % ne2, i3 = ir / (ne1 * ne2);         \
        const char * x = ON_PTR(s, i1, i2, i3);                                            \
        char * y = ON_PTR(dst, i1, i2, i3);                                                \
        ON_ROWS(T, on_##op##_row_##tn(x, sb_, y, db_, n, eps))                             \
    }                                                                                      \
}

#define ON_DEF_NORMS(tn, T, R, SQ)                                                        \
ON_INL void on_norm_row_##tn(const char * x, int64_t sb, char * y, int64_t db, int64_t n, \
                             R eps) {                                                      \
    R mean;                                                                                \
    {                                                                                      \
        ON_SUM4(ON_AT(const T, x, k, sb))                                                  \
        mean = (R)(sum / (double)n);                                                       \
    }                                                                                      \
    ON_SUM4(((R)ON_AT(const T, x, k, sb) - mean) * ((R)ON_AT(const T, x, k, sb) - mean))   \
    const R scale = (R)1 / SQ((R)(sum / (double)n) + eps);                                 \
    for (int64_t j = 0; j < n; j++)                                                        \
        ON_AT(T, y, j, db) = (T)(((R)ON_AT(const T, x, j, sb) - mean) * scale);            \
}                                                                                          \
ON_INL void on_rms_norm_row_##tn(const char * x, int64_t sb, char * y, int64_t db,        \
                                 int64_t n, R eps) {                                       \
    ON_SUM4(ON_AT(const T, x, k, sb) * ON_AT(const T, x, k, sb))                           \
    const R mean = (R)(sum / (double)n);                                                   \
    const R scale = (R)1 / SQ(mean + eps);                                                 \
    for (int64_t j = 0; j < n; j++)                                                        \
        ON_AT(T, y, j, db) = (T)((R)ON_AT(const T, x, j, sb) * scale);                     \
}                                                                                          \
ON_DEF_ROW_DRIVER(norm, tn, T, R)                                                        \
ON_DEF_ROW_DRIVER(rms_norm, tn, T, R)                                                    \
static void on_group_norm_##tn(const ggml_tensor * dst, int ith, int nth) {              \
    const ggml_tensor * s = dst->src[0];                                                   \
    const int64_t n_groups = dst->op_params[0];                                            \
    const R eps = (R)on_param_f32(dst, 1);                                                 \
    const int64_t ne0 = s->ne[0], ne1 = s->ne[1], ne2 = s->ne[2], ne3 = s->ne[3];          \
    const int64_t sb = s->nb[0], db = dst->nb[0];                                          \
    if (n_groups < 1 || ne0 == 0 || ne1 == 0) return;                                      \
    const int64_t cpg = (ne2 + n_groups - 1) / n_groups;                                   \
    const int64_t nu = n_groups * ne3, u0 = nu * ith / nth, u1 = nu * (ith + 1) / nth;     \
    for (int64_t u = u0; u < u1; u++) {                                                    \
        const int64_t g = u % n_groups, i3 = u / n_groups;                                 \
        const int64_t start = g * cpg;                                                     \
        const int64_t end = start + cpg < ne2 ? start + cpg : ne2;                         \
        if (start >= end) continue;                                                        \
        const double count = (double)(ne0 * ne1 * (end - start));                         \
        double sum = 0.0, sum2 = 0.0;                                                      \
        for (int64_t i2 = start; i2 < end; i2++)                                           \
            for (int64_t i1 = 0; i1 < ne1; i1++) {                                         \
                const char * x = ON_PTR(s, i1, i2, i3);                                    \
                double sr = 0.0;                                                           \
                for (int64_t i = 0; i < ne0; i++) sr += (double)ON_AT(const T, x, i, sb);  \
                sum += sr;                                                                 \
            }                                                                              \
        const R mean = (R)(sum / count);                                                   \
        for (int64_t i2 = start; i2 < end; i2++)                                           \
            for (int64_t i1 = 0; i1 < ne1; i1++) {                                         \
                const char * x = ON_PTR(s, i1, i2, i3);                                    \
                char * y = ON_PTR(dst, i1, i2, i3);                                        \
                double sr = 0.0;                                                           \
                for (int64_t i = 0; i < ne0; i++) {                                        \
                    const R v = (R)ON_AT(const T, x, i, sb) - mean;                        \
                    ON_AT(T, y, i, db) = (T)v;                                             \
                    sr += (double)(v * v);                                                 \
                }                                                                          \
                sum2 += sr;                                                                \
            }                                                                              \
        const R scale = (R)1 / SQ((R)(sum2 / count) + eps);                                \
        for (int64_t i2 = start; i2 < end; i2++)                                           \
            for (int64_t i1 = 0; i1 < ne1; i1++) {                                         \
                char * y = ON_PTR(dst, i1, i2, i3);                                        \
                for (int64_t i = 0; i < ne0; i++) ON_AT(T, y, i, db) *= (T)scale;          \
            }                                                                              \
    }                                                                                      \
}                                                                                          \
static void on_diag_mask_inf_##tn(const ggml_tensor * dst, int ith, int nth) {           \
    const ggml_tensor * s = dst->src[0];                                                   \
    const int64_t n_past = dst->op_params[0];                                              \
    const int64_t n = s->ne[0], ne1 = s->ne[1], ne2 = s->ne[2];                            \
    const int64_t nr = ne1 * ne2 * s->ne[3], ir0 = nr * ith / nth, ir1 = nr * (ith + 1) / nth; \
    const int64_t sb = s->nb[0], db = dst->nb[0];                                          \
    for (int64_t ir = ir0; ir < ir1; ir++) {                                               \
        const int64_t i1 = ir % ne1, i2 = (ir / ne1) % ne2, i3 = ir / (ne1 * ne2);         \
        const char * x = ON_PTR(s, i1, i2, i3);                                            \
        char * y = ON_PTR(dst, i1, i2, i3);                                                \
        for (int64_t i = 0; i < n; i++)                                                    \
            ON_AT(T, y, i, db) = i > n_past + i1 ? (T)(-INFINITY) : ON_AT(const T, x, i, sb); \
    }                                                                                      \
}

ON_DEF_NORMS(f32, float, float, sqrtf)
ON_DEF_NORMS(f64, double, double, sqrt)

/* ----------------------------------------------------------------------------- soft_max */
static inline uint32_t on_head_log2(uint32_t n_head) {
    uint32_t p = 1;
    while (p * 2 <= n_head) p *= 2;      /* 1 << floor(log2(n_head)) */
    return p;
}

/* ggml's ALiBi slope of head h (1 when max_bias is 0) */
static inline float on_alibi_slope(float max_bias, uint32_t n_head, uint32_t h) {
    if (!(max_bias > 0.0f)) return 1.0f;
    const uint32_t nl2 = on_head_log2(n_head ? n_head : 1);
    const float m0 = powf(2.0f, -(max_bias) / (float)nl2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / (float)nl2);
    return h < nl2 ? powf(m0, (float)(h + 1)) : powf(m1, (float)(2 * (h - nl2) + 1));
}

#define ON_DEF_SOFTMAX(tn, T, EXP)                                                         \
ON_INL void on_soft_max_row_##tn(const char * x, int64_t sb, char * y, int64_t db,        \
                                 int64_t n, T scale, T slope, const char * mp, int64_t mb, \
                                 int m16) {                                                \
    T mx = (T)(-INFINITY);                                                                 \
    if (mp == NULL) {                                                                      \
        for (int64_t j = 0; j < n; j++) {                                                  \
            const T w = ON_AT(const T, x, j, sb) * scale;                                  \
            ON_AT(T, y, j, db) = w;                                                        \
            mx = w > mx ? w : mx;                                                          \
        }                                                                                  \
    } else {                                                                               \
        for (int64_t j = 0; j < n; j++) {                                                  \
            const T w = ON_AT(const T, x, j, sb) * scale                                   \
                + slope * (T)(m16 ? kern_h2f_hw(ON_AT(const uint16_t, mp, j, mb))             \
                                  : ON_AT(const float, mp, j, mb));                        \
            ON_AT(T, y, j, db) = w;                                                        \
            mx = w > mx ? w : mx;                                                          \
        }                                                                                  \
    }                                                                                      \
    for (int64_t j = 0; j < n; j++) ON_AT(T, y, j, db) = EXP(ON_AT(T, y, j, db) - mx);    \
    ON_SUM4(ON_AT(T, y, k, db))                                                            \
    const T inv = (T)(1.0 / sum);                                                          \
    for (int64_t j = 0; j < n; j++) ON_AT(T, y, j, db) *= inv;                             \
}                                                                                          \
static void on_soft_max_##tn(const ggml_tensor * dst, int ith, int nth) {                \
    const ggml_tensor * s = dst->src[0], * m = dst->src[1];                                \
    const T scale = (T)on_param_f32(dst, 0);                                               \
    const float max_bias = on_param_f32(dst, 1);                                           \
    const int64_t n = s->ne[0], ne1 = s->ne[1], ne2 = s->ne[2];                            \
    const int64_t nr = ne1 * ne2 * s->ne[3], ir0 = nr * ith / nth, ir1 = nr * (ith + 1) / nth; \
    const int64_t sb = s->nb[0], db = dst->nb[0];                                          \
    const int m16 = m != NULL && m->type == GGML_TYPE_F16;                                 \
    const int64_t mb = m ? m->nb[0] : 0, me2 = m ? m->ne[2] : 1, me3 = m ? m->ne[3] : 1;   \
    if (n == 0) return;                                                                    \
    for (int64_t ir = ir0; ir < ir1; ir++) {                                               \
        const int64_t i1 = ir % ne1, i2 = (ir / ne1) % ne2, i3 = ir / (ne1 * ne2);         \
        const char * x = ON_PTR(s, i1, i2, i3);                                            \
        char * y = ON_PTR(dst, i1, i2, i3);                                                \
        const char * mp = m ? ON_PTR(m, i1, i2 % me2, i3 % me3) : NULL;                    \
        const T slope = (T)on_alibi_slope(max_bias, (uint32_t)ne2, (uint32_t)i2);          \
        ON_ROWS(T, on_soft_max_row_##tn(x, sb_, y, db_, n, scale, slope, mp, mb, m16))     \
    }                                                                                      \
}

ON_DEF_SOFTMAX(f32, float, expf)
ON_DEF_SOFTMAX(f64, double, exp)

/* ----------------------------------------------------------------------------- GLU
 * One row: y[i] = act(x[i]) * g[i]; R is the compute type, LD/ST convert storage. */
#define ON_LD_F32(p) (*(const float *)(p))
#define ON_ST_F32(p, v) (*(float *)(p) = (v))
#define ON_LD_F64(p) (*(const double *)(p))
#define ON_ST_F64(p, v) (*(double *)(p) = (v))
#define ON_LD_F16(p) kern_h2f_hw(*(const uint16_t *)(p))
#define ON_ST_F16(p, v) (*(uint16_t *)(p) = kern_f2h(v))

#define ON_GLU_LOOP(R, LD, ST, EXPR)                                                      \
    for (int64_t i = 0; i < n; i++) {                                                      \
        const R a = LD(x + i * xb), b = LD(g + i * gb);                                    \
        ST(y + i * yb, (R)(EXPR));                                                         \
    }

#define ON_DEF_GLU(tn, R, LD, ST, AT)                                                     \
static int on_glu_row_##tn(int op, int64_t n, char * y, int64_t yb, const char * x,       \
                           int64_t xb, const char * g, int64_t gb) {                       \
    switch (op) {                                                                          \
    case ON_GLU_REGLU: ON_GLU_LOOP(R, LD, ST, a > 0 ? a * b : (R)0) break;                 \
    case ON_GLU_GEGLU: ON_GLU_LOOP(R, LD, ST, kern_gelu_##AT(a) * b) break;                \
    case ON_GLU_SWIGLU: ON_GLU_LOOP(R, LD, ST, kern_silu_##AT(a) * b) break;               \
    case ON_GLU_GEGLU_ERF: ON_GLU_LOOP(R, LD, ST, kern_gelu_erf_##AT(a) * b) break;        \
    case ON_GLU_GEGLU_QUICK: ON_GLU_LOOP(R, LD, ST, kern_gelu_quick_##AT(a) * b) break;    \
    default: return -1;                                                                    \
    }                                                                                      \
    return 0;                                                                              \
}

ON_DEF_GLU(f64, double, ON_LD_F64, ON_ST_F64, f64)

/* float32 and float16 rows: the activation runs simd_math.h's row functions over chunks
 * (kern_silu_f32 computes a whole vector for its one element, 16x the work per element in
 * the avx512 build); silu's row and one-element forms give the same bits (simd_math.h), and
 * the gelu family's rows are the eager float32 gelu's. REGLU stays elementwise. */
#define ON_GLU_CHUNK 256
#define ON_DEF_GLU_SIMD(tn, LD, ST)                                                       static int on_glu_row_##tn(int op, int64_t n, char * y, int64_t yb, const char * x,                                  int64_t xb, const char * g, int64_t gb) {                           void (*row)(const float *, float *, int64_t);                                              switch (op) {                                                                              case ON_GLU_REGLU: { ON_GLU_LOOP(float, LD, ST, a > 0 ? a * b : 0.0f) return 0; }          case ON_GLU_GEGLU: row = sm_row_gelu_f32; break;                                           case ON_GLU_SWIGLU: row = sm_row_silu_f32; break;                                          case ON_GLU_GEGLU_ERF: row = sm_row_gelu_erf_f32; break;                                   case ON_GLU_GEGLU_QUICK: row = sm_row_gelu_quick_f32; break;                               default: return -1;                                                                        }                                                                                          float xa[ON_GLU_CHUNK], t[ON_GLU_CHUNK];                                                   for (int64_t i0 = 0; i0 < n; i0 += ON_GLU_CHUNK) {                                             const int64_t m = n - i0 < ON_GLU_CHUNK ? n - i0 : ON_GLU_CHUNK;                           for (int64_t j = 0; j < m; j++) xa[j] = LD(x + (i0 + j) * xb);                             row(xa, t, m);                                                                             for (int64_t j = 0; j < m; j++)                                                                ST(y + (i0 + j) * yb, t[j] * LD(g + (i0 + j) * gb));                               }                                                                                          return 0;                                                                              }

ON_DEF_GLU_SIMD(f32, ON_LD_F32, ON_ST_F32)
ON_DEF_GLU_SIMD(f16, ON_LD_F16, ON_ST_F16)

static inline int on_glu_op_supported(int op) {
    return op == ON_GLU_REGLU || op == ON_GLU_GEGLU || op == ON_GLU_SWIGLU
        || op == ON_GLU_GEGLU_ERF || op == ON_GLU_GEGLU_QUICK;
}

static int on_glu(const ggml_tensor * dst, int ith, int nth) {
    const ggml_tensor * s0 = dst->src[0], * s1 = dst->src[1];
    const int op = dst->op_params[0], swapped = dst->op_params[1] != 0;
    const int64_t nc = dst->ne[0], ne1 = dst->ne[1], ne2 = dst->ne[2];
    const int64_t nr = ne1 * ne2 * dst->ne[3], ir0 = nr * ith / nth, ir1 = nr * (ith + 1) / nth;
    const int64_t b0 = s0->nb[0];
    const int64_t b1 = s1 ? s1->nb[0] : b0;
    int rc = 0;
    for (int64_t ir = ir0; ir < ir1 && rc == 0; ir++) {
        const int64_t i1 = ir % ne1, i2 = (ir / ne1) % ne2, i3 = ir / (ne1 * ne2);
        const char * x = ON_PTR(s0, i1, i2, i3);
        const char * g = s1 ? ON_PTR(s1, i1, i2, i3) : x;
        if (!s1) {
            if (swapped) x += nc * b0;
            else g += nc * b0;
        }
        char * y = ON_PTR(dst, i1, i2, i3);
        if (dst->type == GGML_TYPE_F32) rc = on_glu_row_f32(op, nc, y, dst->nb[0], x, b0, g, b1);
        else if (dst->type == GGML_TYPE_F64) rc = on_glu_row_f64(op, nc, y, dst->nb[0], x, b0, g, b1);
        else if (dst->type == GGML_TYPE_F16) rc = on_glu_row_f16(op, nc, y, dst->nb[0], x, b0, g, b1);
        else rc = -1;
    }
    return rc;
}

/* ----------------------------------------------------------------------------- entry */
/* 0 when the node can run here; 1: types the kernels do not take; 2: shapes or params
 * that do not fit (the builders refuse both first; this guards the kernels). */
static int on_check(const ggml_tensor * t) {
    const ggml_tensor * s = t->src[0];
    const int op = t->op;
    const int fl = t->type == GGML_TYPE_F32 || t->type == GGML_TYPE_F64;
    if (s == NULL) return 2;
    if (op == GGML_OP_GLU) {
        const ggml_tensor * b = t->src[1];
        if (!(fl || t->type == GGML_TYPE_F16) || s->type != t->type) return 1;
        if (b && b->type != t->type) return 1;
        if (!on_glu_op_supported(t->op_params[0])) return 2;
        if (b) { if (!on_same_ne(s, b) || !on_same_ne(s, t)) return 2; }
        else if (t->ne[0] != s->ne[0] / 2) return 2;
        for (int d = 1; d < 4; d++) if (t->ne[d] != s->ne[d]) return 2;
        return 0;
    }
    if (!fl || s->type != t->type) return 1;
    if (!on_same_ne(s, t)) return 2;
    if (op == GGML_OP_SOFT_MAX) {
        const ggml_tensor * m = t->src[1];
        if (m) {
            if (m->type != GGML_TYPE_F32 && m->type != GGML_TYPE_F16) return 1;
            if (m->ne[0] != s->ne[0] || m->ne[1] < s->ne[1] || m->ne[2] <= 0 || m->ne[3] <= 0
                || s->ne[2] % m->ne[2] || s->ne[3] % m->ne[3]) return 2;
        }
        return 0;
    }
    if (op == GGML_OP_GROUP_NORM && t->op_params[0] < 1) return 2;
    return 0;
}

static inline int on_is_op(int op) {
    return op == GGML_OP_NORM || op == GGML_OP_RMS_NORM || op == GGML_OP_GROUP_NORM
        || op == GGML_OP_SOFT_MAX || op == GGML_OP_DIAG_MASK_INF || op == GGML_OP_GLU;
}

static int on_compute(const ggml_tensor * t, int ith, int nth) {
    const int f64 = t->type == GGML_TYPE_F64;
    const int op = t->op;
    if (op == GGML_OP_GLU) return on_glu(t, ith, nth);
    if (t->type != GGML_TYPE_F32 && !f64) return -1;
    if (op == GGML_OP_NORM) { if (f64) on_norm_f64(t, ith, nth); else on_norm_f32(t, ith, nth); }
    else if (op == GGML_OP_RMS_NORM) { if (f64) on_rms_norm_f64(t, ith, nth); else on_rms_norm_f32(t, ith, nth); }
    else if (op == GGML_OP_GROUP_NORM) { if (f64) on_group_norm_f64(t, ith, nth); else on_group_norm_f32(t, ith, nth); }
    else if (op == GGML_OP_SOFT_MAX) { if (f64) on_soft_max_f64(t, ith, nth); else on_soft_max_f32(t, ith, nth); }
    else if (op == GGML_OP_DIAG_MASK_INF) { if (f64) on_diag_mask_inf_f64(t, ith, nth); else on_diag_mask_inf_f32(t, ith, nth); }
    else return -1;
    return 0;
}

/* rows (units) the node splits over threads */
static int64_t on_units(const ggml_tensor * t) {
    if (t->op == GGML_OP_GROUP_NORM) {
        const int64_t g = t->op_params[0];
        return (g > 0 ? g : 1) * t->ne[3];
    }
    return t->ne[1] * t->ne[2] * t->ne[3];
}
#endif
