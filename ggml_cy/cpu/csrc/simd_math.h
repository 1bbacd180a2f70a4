/* ggml_cy SIMD math functions (issue 14 item 2): vectorized float32 exp, log, sin, cos,
 * tanh, sigmoid and silu with their own range reduction and polynomials.
 *
 * Written once with gcc's generic vector types, so one source compiles to the width of
 * each dispatch level: 16 floats (AVX-512) in the avx512 build, 8 (AVX2) in the avx2 build,
 * 4 (SSE) in the x86-64-v2 baseline. Every lane computes the same operations whatever the
 * width, so a row, its vector tail (computed in a padded block) and a single element (the
 * scalar kern_* functions use a broadcast block) give the same bits. Between levels the
 * results can differ: gcc contracts a*b+c into one fused multiply-add where the target has
 * FMA (avx2, avx512), which the baseline lacks, so the baseline's float results may be
 * 1 ulp away from avx2/avx512's (avx2 and avx512 agree bit for bit; tests/test_simd_math.py
 * and tests/test_pkg_dispatch.py check both statements).
 *
 * Accuracy (measured against a float64 reference by tests/test_simd_math.py; the budget
 * each function is held to is in README's "Math functions" section):
 *   exp      range reduction x = n ln2 + r (ln2 in two parts), degree-6 near-minimax
 *            polynomial of exp on |r| <= ln2/2, scaled by 2^n in two steps so that
 *            subnormal results are rounded once;
 *   log      x = 2^k m with m in [sqrt(1/2), sqrt 2), log m = 2 atanh(f / (2 + f)) with
 *            f = m - 1, the series in s = f/(2+f) written as f - f^2/2 + s (f^2/2 + R(s^2))
 *            (the classic split that keeps f's bits);
 *   sin/cos  evaluated in double lanes: x = n pi/2 + r (pi/2 in a 33-bit and a tail part,
 *            exact for |x| < 2^17), degree-9/10 polynomials, one rounding to float; the
 *            lanes with |x| >= 2^17 (and inf, NaN) take the C library's double sin/cos;
 *   tanh     odd degree-17 polynomial for |x| < 0.9, 1 - 2/(e^(2|x|) + 1) above;
 *   sigmoid  1/(1+e^-x) for x >= 0, e^x/(1+e^x) below (no cancellation, subnormal tails
 *            rounded once); silu = x * that, formed before the final scaling.
 *
 * Floating-point flags follow numpy's: comparisons are done on the integer bits (an
 * ordered float compare would raise "invalid" on a NaN), special inputs (inf, NaN, 0,
 * negatives of log, the overflow/underflow range of exp) are replaced by harmless values
 * before the polynomial and their results put back afterwards, with the flag numpy raises
 * produced by one real operation (1e4 -> exp overflows, log(0) divides by zero, log(-1) and
 * sin(inf) are invalid). */
#ifndef GGML_CY_SIMD_MATH_H
#define GGML_CY_SIMD_MATH_H

#include <stdint.h>
#include <string.h>
#include <math.h>
#include "line_peel.h"
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
#define SM_VB 64
#elif defined(__AVX2__)
#define SM_VB 32
#else
#define SM_VB 16
#endif
#define SM_NF (SM_VB / 4)     /* float lanes */
#define SM_ND (SM_VB / 8)     /* double lanes */

typedef float sm_vf __attribute__((vector_size(SM_VB)));
typedef int32_t sm_vi __attribute__((vector_size(SM_VB)));
typedef uint32_t sm_vu __attribute__((vector_size(SM_VB)));
typedef double sm_vd __attribute__((vector_size(SM_VB)));
typedef int64_t sm_vl __attribute__((vector_size(SM_VB)));
typedef uint64_t sm_vul __attribute__((vector_size(SM_VB)));
typedef float sm_vfh __attribute__((vector_size(SM_VB / 2)));   /* SM_ND floats */

/* ------------------------------------------------------------------ helpers */
static inline sm_vf sm_self(sm_vi m, sm_vf a, sm_vf b) {
    return (sm_vf)(((sm_vi)a & m) | ((sm_vi)b & ~m));
}
static inline sm_vi sm_seli(sm_vi m, sm_vi a, sm_vi b) { return (a & m) | (b & ~m); }
static inline sm_vd sm_seld(sm_vl m, sm_vd a, sm_vd b) {
    return (sm_vd)(((sm_vl)a & m) | ((sm_vl)b & ~m));
}
static inline sm_vf sm_bcf(float v) {
    sm_vf r;
    for (int k = 0; k < SM_NF; k++) r[k] = v;
    return r;
}
static inline sm_vi sm_bci(int32_t v) {
    sm_vi r;
    for (int k = 0; k < SM_NF; k++) r[k] = v;
    return r;
}

/* the lanes of an all-ones/all-zeros mask as bits (lane k: bit k), and whether any is set */
static inline int sm_lanebits(sm_vi m) {
#if SM_VB == 64
    return (int)_mm512_test_epi32_mask((__m512i)m, (__m512i)m);
#elif SM_VB == 32
    return _mm256_movemask_ps((__m256)m);
#elif defined(__SSE2__)
    return _mm_movemask_ps((__m128)m);
#else
    int o = 0;
    for (int k = 0; k < SM_NF; k++) o |= (m[k] != 0) << k;
    return o;
#endif
}
static inline int sm_lanebitsl(sm_vl m) {
#if SM_VB == 64
    return (int)_mm512_test_epi64_mask((__m512i)m, (__m512i)m);
#elif SM_VB == 32
    return _mm256_movemask_pd((__m256d)m);
#elif defined(__SSE2__)
    return _mm_movemask_pd((__m128d)m);
#else
    int o = 0;
    for (int k = 0; k < SM_ND; k++) o |= (m[k] != 0) << k;
    return o;
#endif
}
static inline int sm_any(sm_vi m) { return sm_lanebits(m) != 0; }
static inline int sm_anyl(sm_vl m) { return sm_lanebitsl(m) != 0; }

#if defined(__FMA__)
/* a*b - c with one rounding, written out: gcc would otherwise share a*b with a plain
 * product elsewhere and lose the error term */
static inline sm_vf sm_fmsf(sm_vf a, sm_vf b, sm_vf c) {
#if SM_VB == 64
    return (sm_vf)_mm512_fmsub_ps((__m512)a, (__m512)b, (__m512)c);
#elif SM_VB == 32
    return (sm_vf)_mm256_fmsub_ps((__m256)a, (__m256)b, (__m256)c);
#else
    return (sm_vf)_mm_fmsub_ps((__m128)a, (__m128)b, (__m128)c);
#endif
}
#endif

/* unsigned compares of bit patterns (no FP flags) */
#define SM_UGT(a, b) ((sm_vi)((sm_vu)(a) > (uint32_t)(b)))

/* 2^n for n in [-126, 127] */
static inline sm_vf sm_pow2i(sm_vi n) { return (sm_vf)((sm_vi)((sm_vu)(n + 127) << 23)); }
/* v * 2^n for n in [-252, 254], one rounding (the first product is exact) */
static inline sm_vf sm_ldexp2(sm_vf v, sm_vi n) {
    sm_vi n1 = n >> 1;
    return (v * sm_pow2i(n1)) * sm_pow2i(n - n1);
}

/* ------------------------------------------------------------------ exp (float) */
#define SM_LOG2E 0x1.715476p+0f
#define SM_LN2HI 0x1.62e4p-1f          /* ln 2 in 16 bits: n*LN2HI exact for |n| < 256 */
#define SM_LN2LO 0x1.7f7d1cp-20f
#define SM_MAGIC 0x1.8p23f
#define SM_MAGICD 0x1.8p52

/* exp(x) = p * 2^n with p in [0.7, 1.42]; x finite in [-130, 89] */
static inline sm_vf sm_expf_parts(sm_vf x, sm_vi * n) {
    sm_vf t = x * SM_LOG2E + SM_MAGIC;
    sm_vf fn = t - SM_MAGIC;
    *n = (sm_vi)t - (sm_vi)sm_bcf(SM_MAGIC);
    sm_vf rh = x - fn * SM_LN2HI;                       /* exact */
    sm_vf r = rh - fn * SM_LN2LO;
    sm_vf c = (rh - r) - fn * SM_LN2LO;                 /* what r lost */
    sm_vf q = 0x1.687c22p-10f * r + 0x1.123b8ep-7f;
    q = q * r + 0x1.555b58p-5f;
    q = q * r + 0x1.55548ep-3f;
    q = q * r + 0x1.fffff8p-2f;
    return (((r * r) * q + c) + r) + 1.0f;
}

static inline sm_vf sm_expf(sm_vf x) {
    sm_vi ix = (sm_vi)x, ia = ix & 0x7fffffff, n;
    if (!sm_any(ia > 0x42ad0000)) {                      /* |x| <= 86.5: all normal */
        sm_vf p = sm_expf_parts(x, &n);
        return (sm_vf)((sm_vi)p + (sm_vi)((sm_vu)n << 23));
    }
    sm_vi nan = ia > 0x7f800000, inf = ia == 0x7f800000;
    sm_vf xc = sm_self(ix > 0x42b20000, sm_bcf(89.0f), x);             /* x > 89 */
    xc = sm_self(SM_UGT(ix, 0xc2d00000), sm_bcf(-104.0f), xc);         /* x < -104 */
    xc = sm_self(nan | inf, sm_bcf(0.0f), xc);
    sm_vf p = sm_expf_parts(xc, &n);
    sm_vf r = sm_ldexp2(p, n);                           /* overflow/underflow raised here */
    r = sm_self(inf, sm_self(ix > 0, sm_bcf(INFINITY), sm_bcf(0.0f)), r);
    return sm_self(nan, x, r);
}

/* ------------------------------------------------------------------ log (float) */
static inline sm_vf sm_logf_core(sm_vf x, sm_vi kadd) {
    sm_vi ix = (sm_vi)x;
    sm_vi k = (ix - 0x3f3504f3) >> 23;
    sm_vf f = (sm_vf)(ix - (sm_vi)((sm_vu)k << 23)) - 1.0f;
    sm_vf s = f / (2.0f + f);
    sm_vf z = s * s;
    sm_vf R = z * (0x1.555556p-1f + z * (0x1.99999ap-2f + z * (0x1.24924ap-2f
                                                                + z * 0x1.c71c72p-3f)));
    sm_vf hfsq = 0.5f * f * f;
    sm_vf dk = __builtin_convertvector(k + kadd, sm_vf);
    return dk * 0x1.62e3p-1f - ((hfsq - (s * (hfsq + R) + dk * 0x1.2fefa4p-17f)) - f);
}

static inline sm_vf sm_logf(sm_vf x) {
    sm_vi ix = (sm_vi)x;
    /* special: negative, zero, subnormal, inf, NaN */
    if (!sm_any(SM_UGT(ix - 0x00800000, 0x7f800000 - 0x00800000 - 1)))
        return sm_logf_core(x, sm_bci(0));
    sm_vi ia = ix & 0x7fffffff;
    sm_vi zero = ia == 0, nan = ia > 0x7f800000, pinf = ix == 0x7f800000;
    sm_vi neg = (ix < 0) & ~zero & ~nan;
    sm_vi sub = (ix > 0) & (ix < 0x00800000);
    sm_vf xs = sm_self(sub, sm_self(sub, x, sm_bcf(0.0f)) * 0x1p23f, x);  /* no overflow */
    xs = sm_self(zero | nan | pinf | neg, sm_bcf(1.0f), xs);
    sm_vf r = sm_logf_core(xs, sm_seli(sub, sm_bci(-23), sm_bci(0)));
    if (sm_any(zero)) {
        sm_vf dz = -1.0f / sm_self(zero, sm_bcf(0.0f), sm_bcf(1.0f));   /* divide by zero */
        r = sm_self(zero, dz, r);
    }
    if (sm_any(neg)) {
        sm_vf q = sm_self(neg, sm_bcf(INFINITY), sm_bcf(0.0f));
        r = sm_self(neg, q - q, r);                                     /* invalid */
    }
    r = sm_self(pinf, x, r);
    return sm_self(nan, x, r);
}

/* ------------------------------------------------------------------ sigmoid, silu */
/* Evaluated in double lanes (a float formula would stack the roundings of exp, 1 + e and
 * the division to over 2 ulp): e = e^-x with x clamped to [-200, 200] (float-accuracy
 * polynomial, 2^n put into the exponent bits: no subnormal, no overflow in double), one
 * division, one rounding to float. */
#define SM_LN2HID 0x1.62e42fefa39efp-1
#define SM_LN2LOD 0x1.abc9e3b39803fp-56
static inline sm_vd sm_exp_lite_d(sm_vd x) {                  /* x in [-200, 200] */
    sm_vd magic = {0};
    magic += SM_MAGICD;
    sm_vd t = x * 0x1.71547652b82fep+0 + magic;
    sm_vd fn = t - magic;
    sm_vl n = (sm_vl)t - (sm_vl)magic;
    sm_vd r = x - fn * SM_LN2HID;
    r = r - fn * SM_LN2LOD;
    sm_vd q = 0x1.687c22p-10 * r + 0x1.123b8ep-7;
    q = q * r + 0x1.555b58p-5;
    q = q * r + 0x1.55548ep-3;
    q = q * r + 0x1.fffff8p-2;
    sm_vd p = ((r * r) * q + r) + 1.0;
    return (sm_vd)((sm_vl)p + (sm_vl)((sm_vul)n << 52));
}

typedef int32_t sm_vih __attribute__((vector_size(SM_VB / 2)));

/* silu: 1 -> x / (1 + e^-x); sigmoid: 0 -> 1 / (1 + e^-x) */
static inline sm_vfh sm_sigsilu_h(sm_vfh xf, int silu) {
    sm_vih ix = (sm_vih)xf, ia = ix & 0x7fffffff;
    sm_vl nan = __builtin_convertvector(ia > 0x7f800000, sm_vl);
    sm_vl big = __builtin_convertvector(ia > 0x43480000, sm_vl);          /* |x| > 200 */
    sm_vd x = __builtin_convertvector(xf, sm_vd);
    sm_vd lim = {0};
    lim += 200.0;
    sm_vd xc = sm_seld(big, (sm_vd)((sm_vl)lim | ((sm_vl)x & (int64_t)0x8000000000000000ULL)), x);
    xc = sm_seld(nan, (sm_vd){0}, xc);
    sm_vd d = 1.0 + sm_exp_lite_d(-xc);
    sm_vd r = (silu ? x : (sm_vd){0} + 1.0) / d;
    if (silu) /* x < -200: |silu| < 2^-280, -0; -inf: -inf * 0 = NaN (x / (1 + e^-x)) */
        r = sm_seld(big & ((sm_vl)x < 0), x * 0.0, r);
    r = sm_seld(nan, x, r);
    return __builtin_convertvector(r, sm_vfh);
}
/* Float lanes for |x| <= 86.5 (e = e^-|x| a normal float): 1 / (1 + e) or e / (1 + e),
 * silu x / (1 + e) or x e / (1 + e). Three roundings on top of exp's: within 2.5 ulp
 * (sigmoid) and 3 ulp (silu), measured (tests/test_simd_math.py). The compensated form
 * this replaced (float-float numerator and denominator, exact division residual) was
 * within 0.6 ulp at 2.3x the time, 0.57x torch's speed; the budget outside exp/log
 * is 4 ulp. No FMA is needed, so the baseline runs the same form. */
static inline sm_vf sm_sigsilu_fast(sm_vf x, int silu) {         /* |x| <= 86.5 */
    sm_vi ix = (sm_vi)x, n;
    sm_vf na = (sm_vf)(ix | (int32_t)0x80000000);
    /* e^-|x| as sm_expf_parts without the reduced argument's correction term (0.2 ulp
     * more, three instructions fewer) */
    sm_vf t = na * SM_LOG2E + SM_MAGIC;
    sm_vf fn = t - SM_MAGIC;
    n = (sm_vi)t - (sm_vi)sm_bcf(SM_MAGIC);
    sm_vf r = (na - fn * SM_LN2HI) - fn * SM_LN2LO;
    sm_vf q = 0x1.687c22p-10f * r + 0x1.123b8ep-7f;
    q = q * r + 0x1.555b58p-5f;
    q = q * r + 0x1.55548ep-3f;
    q = q * r + 0x1.fffff8p-2f;
    sm_vf p = ((r * r) * q + r) + 1.0f;
    sm_vf e = (sm_vf)((sm_vi)p + (sm_vi)((sm_vu)n << 23));
    sm_vi pos = ix >= 0;
    sm_vf num = silu ? sm_self(pos, x, x * e) : sm_self(pos, sm_bcf(1.0f), e);
    return num / (1.0f + e);
}

/* a float vector through a double-lane function, half a vector at a time (the slow paths
 * and the baseline forms of the float-lane functions) */
static inline sm_vf sm_via_halves(sm_vf x, sm_vfh (*fn)(sm_vfh)) {
    sm_vfh lo, hi;
    sm_vf w;
    memcpy(&lo, &x, sizeof lo);
    memcpy(&hi, (const char *)&x + sizeof lo, sizeof hi);
    lo = fn(lo);
    hi = fn(hi);
    memcpy(&w, &lo, sizeof lo);
    memcpy((char *)&w + sizeof lo, &hi, sizeof hi);
    return w;
}
/* The lanes beyond a fast range (rare: out of line so that the hot loop keeps its
 * registers; inlined, it cost sigmoid's loop a third of its speed) from the double-lane
 * function; r holds the fast lanes, computed inline by the caller on the same instructions
 * as every other vector (computed in here, they came out of differently contracted code:
 * 1 ulp apart from a row of small values), so a value's result does not depend on its
 * neighbours. */
__attribute__((noinline, cold)) static sm_vf sm_act_slow(sm_vf x, sm_vi big, sm_vf r,
                                                         sm_vfh (*fn)(sm_vfh)) {
    return sm_self(big, sm_via_halves(x, fn), r);
}
static inline sm_vfh sm_sigmoidf_h(sm_vfh x);
static inline sm_vfh sm_siluf_h(sm_vfh x);
static inline sm_vf sm_sigsiluf(sm_vf x, int silu) {
    sm_vi slow = ((sm_vi)x & 0x7fffffff) > 0x42ad0000;
    sm_vf r = sm_sigsilu_fast(sm_self(slow, sm_bcf(0.0f), x), silu);
    if (__builtin_expect(sm_any(slow), 0))
        r = sm_act_slow(x, slow, r, silu ? sm_siluf_h : sm_sigmoidf_h);
    return r;
}
static inline sm_vf sm_sigmoidf(sm_vf x) { return sm_sigsiluf(x, 0); }
static inline sm_vf sm_siluf(sm_vf x) { return sm_sigsiluf(x, 1); }

static inline sm_vfh sm_sigmoidf_h(sm_vfh x) { return sm_sigsilu_h(x, 0); }
static inline sm_vfh sm_siluf_h(sm_vfh x) { return sm_sigsilu_h(x, 1); }

/* ------------------------------------------------------------------ rows */
/* Contiguous rows of any alignment (memcpy loads/stores). A row's head, up to the
 * destination's 64-byte boundary (line_peel.h: rows of KERN_LINE_PEEL_MIN elements or more),
 * and its tail are computed in a block padded with 1.0 (a harmless input for every function
 * here); every lane computes the same function of its own element, so the bits do not
 * depend on where a row starts. In-place (d == a) is fine: each block is loaded before it
 * is stored. */
#define SM_ROW_BLOCK(VT, fn, src, dst, m)                                                 \
    do {                                                                                \
        VT v_;                                                                          \
        for (int k_ = 0; k_ < (int)(sizeof v_ / sizeof v_[0]); k_++) v_[k_] = 1;        \
        memcpy(&v_, (src), (size_t)(m) * sizeof v_[0]);                                 \
        v_ = fn(v_);                                                                    \
        memcpy((dst), &v_, (size_t)(m) * sizeof v_[0]);                                 \
    } while (0)
/* elements [0, m) of src / dst (a head: up to 15 of them, more than a narrow vector holds)
 * in padded blocks of LANES */
#define SM_ROW_SPAN(VT, LANES, fn, src, dst, m)                                           \
    do {                                                                                \
        for (int64_t j_ = 0; j_ < (m); j_ += (LANES))                                   \
            SM_ROW_BLOCK(VT, fn, (src) + j_, (dst) + j_,                                \
                         (m) - j_ < (LANES) ? (m) - j_ : (LANES));                      \
    } while (0)
#define SM_ROW_BODY(T, VT, LANES, fn)                                                     \
    do {                                                                                \
        int64_t i = kern_line_peel(d, (int64_t)sizeof(T), n);                           \
        SM_ROW_SPAN(VT, LANES, fn, a, d, i);                                            \
        for (; i + (LANES) <= n; i += (LANES)) {                                        \
            VT v;                                                                       \
            memcpy(&v, a + i, sizeof v);                                                \
            v = fn(v);                                                                  \
            memcpy(d + i, &v, sizeof v);                                                \
        }                                                                               \
        SM_ROW_SPAN(VT, LANES, fn, a + i, d + i, n - i);                                \
    } while (0)
#include "simd_math_more.h"
#include "simd_math_act32.h"
#include "simd_math_sincos32.h"
#include "simd_math_erf.h"
#include "simd_math_gelu32.h"
#include "simd_math_log32.h"
#include "simd_math_exp32.h"
#include "simd_math_tanh.h"
#include "simd_math_f64.h"
#include "simd_math_f64_act.h"
#include "simd_math_exp64.h"
#include "simd_math_pow32.h"
#include "simd_math_pow64.h"

#define SM_ROW_F32(name, fn)                                                              \
static inline void sm_row_##name##_f32(const float * a, float * d, int64_t n) {         \
    SM_ROW_BODY(float, sm_vf, SM_NF, fn);                                               \
}                                                                                       \
static inline float sm_one_##name##_f32(float x) { return fn(sm_bcf(x))[0]; }

/* float32 through double lanes (the baseline's sin / cos / gelu family) */
#define SM_ROW_F32H(name, fn)                                                             \
static inline void sm_row_##name##_f32(const float * a, float * d, int64_t n) {         \
    SM_ROW_BODY(float, sm_vfh, SM_ND, fn);                                              \
}                                                                                       \
static inline float sm_one_##name##_f32(float x) {                                      \
    sm_vfh v;                                                                           \
    for (int k = 0; k < SM_ND; k++) v[k] = x;                                           \
    return fn(v)[0];                                                                    \
}


#if defined(SM_EXP32)            /* simd_math_exp32.h: avx2/avx512 */
SM_ROW_F32(exp, sm_expf_v)
SM_ROW_F32(log, sm_logf_v)
#else
SM_ROW_F32(exp, sm_expf)
SM_ROW_F32(log, sm_logf)
#endif
#if defined(__FMA__) && (SM_NF == 8 || SM_NF == 16)    /* simd_math_tanh.h: table pieces */
SM_ROW_F32(tanh, sm_tanhf_lut)
#else
SM_ROW_F32(tanh, sm_tanhf)
#endif
SM_ROW_F32(sigmoid, sm_sigmoidf)
SM_ROW_F32(silu, sm_siluf)
#if defined(__FMA__)            /* simd_math_sincos32.h: float lanes */
SM_ROW_F32(sin, sm_sinf)
SM_ROW_F32(cos, sm_cosf)
#else
SM_ROW_F32H(sin, sm_sinf_h)
SM_ROW_F32H(cos, sm_cosf_h)
#endif
SM_ROW_F32(expm1, sm_expm1f)
SM_ROW_F32(log1p, sm_log1pf)
#if defined(SM_EXP32)
SM_ROW_F32(log2, sm_log2f_v)
#else
SM_ROW_F32(log2, sm_log2f)
#endif
SM_ROW_F32(erf, sm_erff)                 /* simd_math_erf.h (double lanes at the baseline) */
#if SM_VB != 64                 /* AVX-512: simd_math_gelu32.h's own row */
SM_ROW_F32(gelu_erf, sm_gelu_erff)
#endif
#if defined(__FMA__)            /* simd_math_act32.h: float lanes */
SM_ROW_F32(gelu, sm_geluf)
SM_ROW_F32(gelu_quick, sm_gelu_quickf)
SM_ROW_F32(softplus, sm_softplusf)
#else
SM_ROW_F32H(gelu, sm_geluf_h)
SM_ROW_F32H(gelu_quick, sm_gelu_quickf_h)
SM_ROW_F32H(softplus, sm_softplusf_h)
#endif

#endif
