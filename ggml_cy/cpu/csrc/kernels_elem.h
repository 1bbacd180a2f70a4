/* ggml_cy CPU kernels: one scalar function per (op, compute type), numpy-exact.
 *
 * The row loops generated from _kernels.pyx.tp call these; every one is a small static
 * inline function, so gcc inlines it and if-converts the branchless ones into vector
 * blends (the loops stay free of function pointers). Names: kern_<op>_<type> with type
 * f32 f64 i8 i16 i32 i64 u8 b (bool, one byte 0/1).
 *
 * Where numpy's answer is subtle the function follows numpy's own C loops:
 *  - maximum/minimum: the first operand wins when it is NaN, else the larger (smaller)
 *    one, the SECOND one on ties, so maximum(+0, -0) = -0 (numpy's AVX2 loop, measured);
 *  - fmax/fmin: NaN ignored, ties give the second operand (measured);
 *  - floor_divide/remainder on floats: numpy's npy_divmod (fmod, sign fix-up, quotient
 *    snapped to an integer), flags raised like npy_floor_divide;
 *  - integer //, %, fmod by zero: 0 and FE_DIVBYZERO; MIN // -1: MIN and FE_OVERFLOW;
 *  - power on floats: libm's pow, plus the flags numpy's own loop raises where libm's pow
 *    does not (KERN_POW_*, probed once at import: numpy's AVX-512 loop is SVML's pow);
 *  - sign(NaN) = NaN (same bits), sign(-0.0) = +0.0;
 *  - integer +, -, *, negative, abs, square wrap around (computed unsigned: no C UB).
 * Comparisons inside helpers use the quiet forms (isless, ...) so that a NaN operand
 * raises no FE_INVALID where numpy raises none. */
#ifndef GGML_CY_KERNELS_ELEM_H
#define GGML_CY_KERNELS_ELEM_H

#include <math.h>
#include <float.h>
#include <stdint.h>
#include <fenv.h>
#include "kernels_convert.h"
#include "simd_math.h"

/* Extra status bit (beyond the FE_* flags) returned by compute_parallel: an integer
 * power had a negative exponent (numpy raises ValueError). */
#define KERN_STATUS_NEG_INT_POWER 0x10000

/* op_params layout read by the elementwise kernels. Slots 0 and 1 hold up to two float32
 * parameters (ggml's layout: LEAKY_RELU [slope], CLAMP [min, max], SCALE [s]); when slot
 * KERN_PARAM_F64_FLAG_SLOT is 1 the same parameters are also stored exactly as float64
 * (slots 4-5 and 6-7), which float64 and integer kernels then use. ELU: alpha is the
 * float64 parameter when present, else 1 (ggml's elu). */
#define KERN_PARAM_F64_SLOT 4
#define KERN_PARAM_F64_FLAG_SLOT 8

/* Float power flags. On a CPU with AVX-512 (numpy's AVX512_SKX dispatch) numpy computes
 * float32/float64 power with SVML's pow, which raises a few flags glibc's pow does not
 * (measured on numpy 2.5.2, Xeon with AVX-512; numpy's AVX2 and baseline loops call libm
 * and raise none of these). Its values are within 1 ulp of glibc's, inside the 2 ulp that
 * power is held to, but its warnings are part of numpy's answer. _kernels probes numpy once
 * at import and passes the rule bits of each type to the power rows (kparams.pow_rule):
 *   KERN_POW_DIVZERO_NEGINF  pow(+-0, -inf) = inf: "divide by zero";
 *   KERN_POW_OVERFLOW_INF    pow(x, +inf) = inf with x finite and x*x overflowing
 *                            (|x| >= 2^64 in float32, 2^512 in float64): "overflow";
 *   KERN_POW_UNDERFLOW_TINY  a nonzero subnormal result, even an exact one: "underflow"
 *                            (float32 only). */
#define KERN_POW_DIVZERO_NEGINF 1
#define KERN_POW_OVERFLOW_INF 2
#define KERN_POW_UNDERFLOW_TINY 4

/* ------------------------------------------------------------------ floats */
#define KERN_DEF_FLOAT(tn, T, SFX, SQRT_OVF, TMIN)                                      \
static inline T kern_add_##tn(T x, T y) { return x + y; }                               \
static inline T kern_sub_##tn(T x, T y) { return x - y; }                               \
static inline T kern_mul_##tn(T x, T y) { return x * y; }                               \
static inline T kern_div_##tn(T x, T y) { return x / y; }                               \
static inline T kern_divmod_##tn(T a, T b, T * modulus) {                               \
    T mod = fmod##SFX(a, b);                                                            \
    T div = (a - mod) / b;                                                              \
    if (mod) {                                                                          \
        if (isless(b, (T)0) != isless(mod, (T)0)) { mod += b; div -= (T)1; }            \
    } else {                                                                            \
        mod = copysign##SFX((T)0, b);                                                   \
    }                                                                                   \
    T floordiv;                                                                         \
    if (div) {                                                                          \
        floordiv = floor##SFX(div);                                                     \
        if (isgreater(div - floordiv, (T)0.5)) floordiv += (T)1;                        \
    } else {                                                                            \
        floordiv = copysign##SFX((T)0, a / b);                                          \
    }                                                                                   \
    *modulus = mod;                                                                     \
    return floordiv;                                                                    \
}                                                                                       \
static inline T kern_floordiv_##tn(T a, T b) {                                          \
    /* by zero: the division's own flags (numpy 2.4: 1//0 "divide by zero", 0//0        \
     * "invalid", inf//0 and nan//0 nothing) */                                          \
    if (__builtin_expect(b == 0, 0)) return a / b;                                      \
    T mod;                                                                              \
    return kern_divmod_##tn(a, b, &mod);                                                \
}                                                                                       \
static inline T kern_mod_##tn(T a, T b) {                                               \
    if (__builtin_expect(b == 0, 0)) return fmod##SFX(a, b);                            \
    T mod;                                                                              \
    kern_divmod_##tn(a, b, &mod);                                                       \
    return mod;                                                                         \
}                                                                                       \
static inline T kern_fmod_##tn(T x, T y) { return fmod##SFX(x, y); }                   \
static inline T kern_max_##tn(T x, T y) { return (x > y || x != x) ? x : y; }           \
static inline T kern_min_##tn(T x, T y) { return (x < y || x != x) ? x : y; }           \
static inline T kern_fmax_##tn(T x, T y) { return (x > y || y != y) ? x : y; }          \
static inline T kern_fmin_##tn(T x, T y) { return (x < y || y != y) ? x : y; }          \
static inline T kern_pow_libm_##tn(T x, T y, int rule) {                                \
    T r = pow##SFX(x, y);                                                               \
    if (rule) {                                                                         \
        if ((rule & KERN_POW_DIVZERO_NEGINF) && x == 0 && y == -(T)INFINITY)            \
            kern_raise(FE_DIVBYZERO);                                                   \
        if ((rule & KERN_POW_OVERFLOW_INF) && y == (T)INFINITY && isfinite(x)           \
            && isgreaterequal(fabs##SFX(x), SQRT_OVF))                                  \
            kern_raise(FE_OVERFLOW);                                                    \
        if ((rule & KERN_POW_UNDERFLOW_TINY) && r != 0 && isless(fabs##SFX(r), TMIN))   \
            kern_raise(FE_UNDERFLOW);                                                   \
    }                                                                                   \
    return r;                                                                           \
}                                                                                       \
static inline T kern_prelu_##tn(T x, T s) { return x > 0 ? x : s * x; }                 \
static inline T kern_neg_##tn(T x) { return -x; }                                       \
static inline T kern_abs_##tn(T x) { return fabs##SFX(x); }                             \
static inline T kern_sgn_##tn(T x) {                                                    \
    return x > 0 ? (T)1 : (x < 0 ? (T)-1 : (x == 0 ? (T)0 : x));                        \
}                                                                                       \
static inline T kern_sqr_##tn(T x) { return x * x; }                                    \
static inline T kern_sqrt_##tn(T x) { return sqrt##SFX(x); }                            \
static inline T kern_floor_##tn(T x) { return floor##SFX(x); }                          \
static inline T kern_ceil_##tn(T x) { return ceil##SFX(x); }                            \
static inline T kern_round_##tn(T x) { return rint##SFX(x); }                           \
static inline T kern_trunc_##tn(T x) { return trunc##SFX(x); }                          \
/* ggml's activations, with ggml's constants */                                         \
/* ggml's activations; a NaN input gives NaN back (numpy's habit), where ggml's         \
 * comparisons would turn it into 0 */                                                  \
static inline T kern_relu_##tn(T x) { return (x > 0 || x != x) ? x : (T)0; }            \
static inline T kern_leaky_relu_##tn(T x, T slope) {                                    \
    return x != x ? x : (x > 0 ? x : (T)0) + slope * (x < 0 ? x : (T)0);                \
}                                                                                       \
static inline T kern_hardsigmoid_##tn(T x) {                                            \
    T t = (x + (T)3) / (T)6;                                                            \
    t = (t > 0 || t != t) ? t : (T)0;                                                   \
    return (t < 1 || t != t) ? t : (T)1;                                                \
}                                                                                       \
static inline T kern_hardswish_##tn(T x) {                                              \
    T t = (x + (T)3) / (T)6;                                                            \
    t = (t > 0 || t != t) ? t : (T)0;                                                   \
    t = (t < 1 || t != t) ? t : (T)1;                                                   \
    return x * t;                                                                       \
}                                                                                       \
static inline T kern_step_##tn(T x) { return x > 0 ? (T)1 : (x != x ? x : (T)0); }     \
/* numpy's clip: minimum(maximum(x, lo), hi), NaN propagating */                        \
static inline T kern_clamp_##tn(T x, T lo, T hi) { return kern_min_##tn(kern_max_##tn(x, lo), hi); } \
static inline T kern_scale_##tn(T x, T s) { return x * s; }

KERN_DEF_FLOAT(f32, float, f, 0x1p64f, FLT_MIN)
KERN_DEF_FLOAT(f64, double, , 0x1p512, DBL_MIN)

/* power on floats: the vector forms of simd_math_pow32.h / simd_math_pow64.h where the
 * level has them (SM_POW32_VECTOR: avx2, avx512; SM_POW64_VECTOR: FMA levels), else the C
 * library's pow with the rule flags (the x86-64-v2 baseline, where two double lanes and
 * element-wise table reads made the vector forms slower than the C library). The lanes the
 * vector forms leave (zeros, infinities, NaN, a negative base to a fractional power,
 * results near or past the type's range) go to the C library's pow with the rule flags,
 * out of the vector loop. Rows of any layout and the one-element kern_pow_<type> run the
 * same vector code (the scalar one on a block padded with 1 ** 1), so every layout gives the
 * same bits. VT: the vector type, LANES its lanes, BC a broadcast, FAST the vector form
 * (its slow lanes as bits: lane k, bit k). */
#define KERN_POW_CHUNK 32
/* The vector forms' flags are dropped: MXCSR's are read before and put back after them, and
 * the lanes they leave are computed afterwards (raising their own). Their steps can raise
 * flags numpy would not: y log2 x overflowing on a lane they leave, a tiny y's products
 * underflowing on a lane whose result is 1. Reading and writing MXCSR costs a few cycles,
 * once a chunk of vectors. The compiler does not see that arithmetic touches MXCSR, so the
 * two are volatile asm, and the fences tie values to that order: inputs fenced after the read
 * cannot be worked on before it (nor hoisted out of the loop, a broadcast operand's log
 * included), results fenced before the write are computed before it (the loop's results are
 * stored before it: the write's memory clobber orders them). */
#if defined(__SSE__)
#define KERN_POW_FLAGS_SAVE(v)                                                          \
    unsigned v;                                                                         \
    __asm__ volatile("stmxcsr %0" : "=m"(v) : : "memory")
#define KERN_POW_FLAGS_RESTORE(v) __asm__ volatile("ldmxcsr %0" : : "m"(v) : "memory")
#define KERN_POW_FENCE_IN(x, y) __asm__ volatile("" : "+v"(x), "+v"(y))
#define KERN_POW_FENCE_OUT(r, bits) __asm__ volatile("" : "+v"(r), "+r"(bits))
#else
#define KERN_POW_FLAGS_SAVE(v) (void)0
#define KERN_POW_FLAGS_RESTORE(v) (void)0
#define KERN_POW_FENCE_IN(x, y) (void)0
#define KERN_POW_FENCE_OUT(r, bits) (void)0
#endif
#define KERN_POW_VECTOR_DEF(tn, T, VT, LANES, BC, FAST)                                     \
__attribute__((noinline, cold)) static VT kern_pow_slow_##tn(VT x, VT y, int slow, VT r,  \
                                                            int rule) {                  \
    for (int k = 0; k < (LANES); k++)                                                   \
        if (slow >> k & 1) r[k] = kern_pow_libm_##tn(x[k], y[k], rule);                 \
    return r;                                                                           \
}                                                                                       \
static inline VT kern_pow_vec_##tn(VT x, VT y, int rule) {                              \
    int slow;                                                                           \
    VT vx = x, vy = y;                                                                  \
    KERN_POW_FLAGS_SAVE(csr);                                                           \
    KERN_POW_FENCE_IN(vx, vy);                                                          \
    VT r = FAST(vx, vy, &slow);                                                         \
    KERN_POW_FENCE_OUT(r, slow);                                                        \
    KERN_POW_FLAGS_RESTORE(csr);                                                        \
    if (__builtin_expect(slow != 0, 0))                                                 \
        r = kern_pow_slow_##tn(x, y, slow, r, rule);                                    \
    return r;                                                                           \
}                                                                                       \
static inline T kern_pow_##tn(T x, T y, int rule, int * status) {                       \
    (void)status;                                                                       \
    VT vx = BC((T)1), vy = BC((T)1);                                                    \
    vx[0] = x;                                                                          \
    vy[0] = y;                                                                          \
    return kern_pow_vec_##tn(vx, vy, rule)[0];                                          \
}                                                                                       \
/* elements [i, i + m) of a row (byte strides; 0: a broadcast operand), m up to LANES,  \
 * through a block padded with 1 */                                                     \
static inline void kern_pow_block_##tn(char * d, int64_t sd, const char * a, int64_t sa, \
                                       const char * b, int64_t sb, int64_t i, int m,     \
                                       int rule) {                                       \
    VT vx = BC((T)1), vy = BC((T)1);                                                    \
    for (int k = 0; k < m; k++) {                                                       \
        memcpy(&vx[k], a + (i + k) * sa, sizeof(T));                                    \
        memcpy(&vy[k], b + (i + k) * sb, sizeof(T));                                    \
    }                                                                                   \
    VT r = kern_pow_vec_##tn(vx, vy, rule);                                             \
    for (int k = 0; k < m; k++) memcpy(d + (i + k) * sd, &r[k], sizeof(T));             \
}                                                                                       \
/* The vector loop (sa, sb: sizeof(T) or 0 for a broadcast operand, whose vector is     \
 * given). No call in it, so that the polynomial constants stay in registers (a call    \
 * clobbers every vector register): a vector with slow lanes keeps its inputs aside (a  \
 * chunk's worth at most), computed after the chunk -- also right when d is a or b (the  \
 * inputs are copied before the store). */                                              \
static inline __attribute__((always_inline)) int64_t kern_pow_vectors_##tn(             \
        int64_t i, int64_t n, char * d, const char * a, int64_t sa, const char * b,     \
        int64_t sb, VT vx, VT vy, int rule) {                                           \
    VT px[KERN_POW_CHUNK], py[KERN_POW_CHUNK];                                          \
    int64_t pi[KERN_POW_CHUNK];                                                         \
    int pm[KERN_POW_CHUNK];                                                             \
    while (i + (LANES) <= n) {                                                          \
        int np = 0;                                                                     \
        KERN_POW_FLAGS_SAVE(csr);                                                       \
        for (int v = 0; v < KERN_POW_CHUNK && i + (LANES) <= n; v++, i += (LANES)) {    \
            if (sa) memcpy(&vx, a + sizeof(T) * i, sizeof vx);                          \
            if (sb) memcpy(&vy, b + sizeof(T) * i, sizeof vy);                          \
            KERN_POW_FENCE_IN(vx, vy);                                                  \
            int bits;                                                                   \
            VT r = FAST(vx, vy, &bits);                                                 \
            if (__builtin_expect(bits != 0, 0)) {                                       \
                px[np] = vx;                                                            \
                py[np] = vy;                                                            \
                pi[np] = i;                                                             \
                pm[np++] = bits;                                                        \
            }                                                                           \
            memcpy(d + sizeof(T) * i, &r, sizeof r);                                    \
        }                                                                               \
        KERN_POW_FLAGS_RESTORE(csr);                                                    \
        for (int q = 0; q < np; q++)                                                    \
            for (int k = 0; k < (LANES); k++)                                           \
                if (pm[q] >> k & 1) {                                                   \
                    T r = kern_pow_libm_##tn(px[q][k], py[q][k], rule);                 \
                    memcpy(d + sizeof(T) * (pi[q] + k), &r, sizeof(T));                 \
                }                                                                       \
    }                                                                                   \
    return i;                                                                           \
}                                                                                       \
/* A row: contiguous (or broadcast) operands a vector at a time from the destination's  \
 * first 64-byte boundary on (line_peel.h), everything else in blocks. */               \
static void kern_pow_row_##tn(int64_t n, char * d, int64_t sd, const char * a,          \
                              int64_t sa, const char * b, int64_t sb, int rule) {       \
    const int64_t es = (int64_t)sizeof(T);                                              \
    int64_t i = 0;                                                                      \
    if (n > 0 && sd == es && (sa == es || sa == 0) && (sb == es || sb == 0)) {          \
        int64_t i0 = kern_line_peel(d, es, n);                                          \
        for (; i < i0; i += (LANES))                                                    \
            kern_pow_block_##tn(d, sd, a, sa, b, sb, i,                                 \
                                (int)(i0 - i < (LANES) ? i0 - i : (LANES)), rule);      \
        T x0, y0;                                                                       \
        memcpy(&x0, a, sizeof(T));                                                      \
        memcpy(&y0, b, sizeof(T));                                                      \
        /* constant strides: one loop each, without the tests */                        \
        if (sa && sb)                                                                   \
            i = kern_pow_vectors_##tn(i0, n, d, a, es, b, es, BC(x0), BC(y0), rule);    \
        else if (sa)                                                                    \
            i = kern_pow_vectors_##tn(i0, n, d, a, es, b, 0, BC(x0), BC(y0), rule);     \
        else if (sb)                                                                    \
            i = kern_pow_vectors_##tn(i0, n, d, a, 0, b, es, BC(x0), BC(y0), rule);     \
        else                                                                            \
            i = i0;                                                                     \
    }                                                                                   \
    for (; i < n; i += (LANES))                                                         \
        kern_pow_block_##tn(d, sd, a, sa, b, sb, i,                                     \
                            (int)(n - i < (LANES) ? n - i : (LANES)), rule);            \
}
/* the C library's pow on every element */
#define KERN_POW_LIBM_DEF(tn, T)                                                          \
static inline T kern_pow_##tn(T x, T y, int rule, int * status) {                       \
    (void)status;                                                                       \
    return kern_pow_libm_##tn(x, y, rule);                                              \
}                                                                                       \
static void kern_pow_row_##tn(int64_t n, char * d, int64_t sd, const char * a,          \
                              int64_t sa, const char * b, int64_t sb, int rule) {       \
    for (int64_t i = 0; i < n; i++) {                                                   \
        T x, y, r;                                                                      \
        memcpy(&x, a + i * sa, sizeof(T));                                              \
        memcpy(&y, b + i * sb, sizeof(T));                                              \
        r = kern_pow_libm_##tn(x, y, rule);                                             \
        memcpy(d + i * sd, &r, sizeof(T));                                              \
    }                                                                                   \
}
#if SM_POW32_VECTOR
KERN_POW_VECTOR_DEF(f32, float, sm_vf, SM_NF, sm_bcf, sm_powf_fast)
#else
KERN_POW_LIBM_DEF(f32, float)
#endif
#if SM_POW64_VECTOR
KERN_POW_VECTOR_DEF(f64, double, sm_vd, SM_ND, sm_bcd, sm_pow_fast_d)
#else
KERN_POW_LIBM_DEF(f64, double)
#endif

/* exp, expm1, log, log1p, log2, sin, cos (and tanh, sigmoid, silu below): float32 and
 * float64 from the vectorized functions of simd_math.h, one element at a time (the rows call
 * the vector code directly: same bits); erf float64 likewise (simd_math_f64_act.h);
 * erf float32: simd_math_erf.h */
static inline double kern_exp_f64(double x) { return sm_one_exp_f64(x); }
static inline double kern_log_f64(double x) { return sm_one_log_f64(x); }
static inline double kern_sin_f64(double x) { return sm_one_sin_f64(x); }
static inline double kern_cos_f64(double x) { return sm_one_cos_f64(x); }
static inline float kern_exp_f32(float x) { return sm_one_exp_f32(x); }
static inline float kern_log_f32(float x) { return sm_one_log_f32(x); }
static inline float kern_sin_f32(float x) { return sm_one_sin_f32(x); }
static inline float kern_cos_f32(float x) { return sm_one_cos_f32(x); }
static inline double kern_expm1_f64(double x) { return sm_one_expm1_f64(x); }
static inline double kern_log1p_f64(double x) { return sm_one_log1p_f64(x); }
static inline double kern_log2_f64(double x) { return sm_one_log2_f64(x); }
static inline double kern_erf_f64(double x) { return sm_one_erf_f64(x); }
static inline float kern_expm1_f32(float x) { return sm_one_expm1_f32(x); }
static inline float kern_log1p_f32(float x) { return sm_one_log1p_f32(x); }
static inline float kern_log2_f32(float x) { return sm_one_log2_f32(x); }
static inline float kern_erf_f32(float x) { return sm_one_erf_f32(x); }     /* the row's code */

/* float16 maximum/minimum/fmax/fmin: numpy's half loops are scalar and keep the FIRST
 * operand on ties (maximum(+0, -0) = +0 in float16, -0 in float32/float64). Computed on
 * the float32 values of the halves ("h16" compute type). */
static inline float kern_max_h16(float x, float y) { return (x >= y || x != x) ? x : y; }
static inline float kern_min_h16(float x, float y) { return (x <= y || x != x) ? x : y; }
static inline float kern_fmax_h16(float x, float y) { return (x >= y || y != y) ? x : y; }
static inline float kern_fmin_h16(float x, float y) { return (x <= y || y != y) ? x : y; }

/* ggml's transcendental activations, mathematically ggml's formulas, computed so that the
 * result is within a couple of ulp of the exact value: forms without cancellation (gelu as
 * x*sigmoid(2u) rather than 0.5x(1+tanh u), gelu_erf with erfc, softplus as
 * max(x,0)+log1p(exp(-|x|))), evaluated one precision up (float64 in long double, float32
 * -- and so float16/bfloat16, which compute through float32 rows -- in double) and
 * rounded once. In the float types ggml's softplus cutoff (x > 20: x) changes nothing. */
#define KERN_DEF_ACT(tn, T, W, SFX)                                                       \
static inline T kern_elu_##tn(T x, T alpha) {                                           \
    return x > 0 ? x : (T)((W)alpha * expm1##SFX((W)x));                                \
}                                                                                       \
static inline T kern_gelu_##tn(T x) {                                                   \
    W w = (W)x;                                                                         \
    W u = (W)0.797884560802865355879892119868763737L * w * ((W)1 + (W)0.044715L * w * w); \
    return (T)(w / ((W)1 + exp##SFX((W)-2 * u)));                                       \
}                                                                                       \
static inline T kern_gelu_erf_##tn(T x) {                                               \
    return (T)((W)0.5 * (W)x * erfc##SFX(-(W)x * (W)0.707106781186547524400844362104849L)); \
}                                                                                       \
static inline T kern_gelu_quick_##tn(T x) {                                             \
    return (T)((W)x / ((W)1 + exp##SFX((W)-1.702L * (W)x)));                            \
}                                                                                       \
static inline T kern_softplus_##tn(T x) {                                               \
    W w = (W)x;                                                                         \
    return (T)(w > 0 ? w + log1p##SFX(exp##SFX(-w)) : log1p##SFX(exp##SFX(w)));         \
}

KERN_DEF_ACT(f32d, float, double, )
KERN_DEF_ACT(f64ld, double, long double, l)
/* float64: gelu, gelu_erf, gelu_quick, softplus (and erf above) from simd_math_f64_act.h's
 * vector code, one element at a time (the rows run the same code: same bits; measured
 * maxima in README "Math functions"); elu in long double as above */
static inline double kern_elu_f64(double x, double alpha) { return kern_elu_f64ld(x, alpha); }
static inline double kern_gelu_f64(double x) { return sm_one_gelu_f64(x); }
static inline double kern_gelu_erf_f64(double x) { return sm_one_gelu_erf_f64(x); }
static inline double kern_gelu_quick_f64(double x) { return sm_one_gelu_quick_f64(x); }
static inline double kern_softplus_f64(double x) { return sm_one_softplus_f64(x); }
/* The float32 rows of gelu, gelu_erf, gelu_quick, softplus (and erf) run simd_math.h's
 * vector code (optable.SIMD_ROWS; every layout goes through it, ops_norm.h's GLU rows
 * too), and the one-element float32 forms run the same code on one element, so a 0-d
 * input gives the row's bits (the float-lane gelu, gelu_quick, softplus and gelu_erf are
 * within 1.7-3.5 ulp, not the correctly rounded value the double forms above give). */
static inline float kern_elu_f32(float x, float alpha) { return kern_elu_f32d(x, alpha); }
static inline float kern_gelu_f32(float x) { return sm_one_gelu_f32(x); }
static inline float kern_gelu_erf_f32(float x) { return sm_one_gelu_erf_f32(x); }
static inline float kern_gelu_quick_f32(float x) { return sm_one_gelu_quick_f32(x); }
static inline float kern_softplus_f32(float x) { return sm_one_softplus_f32(x); }

/* sigmoid, silu: float64 one precision up (long double); float32 from simd_math.h (double
 * lanes, rounded once) */
static inline double kern_sigmoid_f64(double x) { return sm_one_sigmoid_f64(x); }
static inline double kern_silu_f64(double x) { return sm_one_silu_f64(x); }
static inline float kern_sigmoid_f32(float x) { return sm_one_sigmoid_f32(x); }
static inline float kern_silu_f32(float x) { return sm_one_silu_f32(x); }

/* tanh: numpy's own SIMD tanh is within 1 ulp of the correctly rounded result, glibc's
 * tanhf/tanh within 2, so the two could differ by 3 ulp. Evaluating one precision higher
 * and rounding once gives (almost always) the correctly rounded value: within 1 ulp of
 * numpy (measured, .notes/kernels.md). */
static inline float kern_tanh_f32(float x) { return sm_one_tanh_f32(x); }   /* simd_math.h */
static inline double kern_tanh_f64(double x) { return sm_one_tanh_f64(x); }

/* ------------------------------------------------------------------ integers */
/* UT: the unsigned type used for wrapping arithmetic (int for the narrow types, where C
 * promotion already avoids overflow). */
#define KERN_DEF_INT_COMMON(tn, T, UT)                                                    \
static inline T kern_add_##tn(T x, T y) { return (T)((UT)x + (UT)y); }                  \
static inline T kern_sub_##tn(T x, T y) { return (T)((UT)x - (UT)y); }                  \
static inline T kern_mul_##tn(T x, T y) { return (T)((UT)x * (UT)y); }                  \
static inline T kern_max_##tn(T x, T y) { return x > y ? x : y; }                       \
static inline T kern_min_##tn(T x, T y) { return x < y ? x : y; }                       \
static inline T kern_fmax_##tn(T x, T y) { return x > y ? x : y; }                      \
static inline T kern_fmin_##tn(T x, T y) { return x < y ? x : y; }                      \
static inline T kern_pow_##tn(T x, T y, int rule, int * status) {                       \
    (void)rule;                                                                         \
    if (y < 0) { *status |= KERN_STATUS_NEG_INT_POWER; return 0; }                      \
    UT base = (UT)x, out = 1;                                                           \
    while (y) {                                                                         \
        if (y & 1) out = (UT)(out * base);                                              \
        base = (UT)(base * base);                                                       \
        y = (T)(y >> 1);                                                                \
    }                                                                                   \
    return (T)out;                                                                      \
}                                                                                       \
static inline T kern_neg_##tn(T x) { return (T)((UT)0 - (UT)x); }                       \
static inline T kern_sqr_##tn(T x) { return (T)((UT)x * (UT)x); }                       \
static inline T kern_floor_##tn(T x) { return x; }                                      \
static inline T kern_ceil_##tn(T x) { return x; }                                       \
static inline T kern_round_##tn(T x) { return x; }                                      \
static inline T kern_trunc_##tn(T x) { return x; }                                      \
static inline T kern_relu_##tn(T x) { return x > 0 ? x : (T)0; }                        \
static inline T kern_clamp_##tn(T x, T lo, T hi) { T t = x > lo ? x : lo; return t < hi ? t : hi; }

#define KERN_DEF_SIGNED(tn, T, UT, TMIN)                                                  \
KERN_DEF_INT_COMMON(tn, T, UT)                                                          \
static inline T kern_floordiv_##tn(T a, T b) {                                          \
    if (__builtin_expect(b == 0, 0)) { kern_raise(FE_DIVBYZERO); return 0; }            \
    if (__builtin_expect(b == -1 && a == TMIN, 0)) { kern_raise(FE_OVERFLOW); return TMIN; } \
    T q = (T)(a / b);                                                                   \
    if ((a % b != 0) && ((a < 0) != (b < 0))) q = (T)(q - 1);                           \
    return q;                                                                           \
}                                                                                       \
static inline T kern_mod_##tn(T a, T b) {                                               \
    if (__builtin_expect(b == 0, 0)) { kern_raise(FE_DIVBYZERO); return 0; }            \
    if (__builtin_expect(b == -1, 0)) return 0;                                         \
    T r = (T)(a % b);                                                                   \
    if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);                                 \
    return r;                                                                           \
}                                                                                       \
static inline T kern_fmod_##tn(T a, T b) {                                              \
    if (__builtin_expect(b == 0, 0)) { kern_raise(FE_DIVBYZERO); return 0; }            \
    if (__builtin_expect(b == -1, 0)) return 0;                                         \
    return (T)(a % b);                                                                  \
}                                                                                       \
static inline T kern_prelu_##tn(T x, T s) { return x > 0 ? x : (T)((UT)s * (UT)x); }    \
static inline T kern_abs_##tn(T x) { return x < 0 ? (T)((UT)0 - (UT)x) : x; }           \
static inline T kern_sgn_##tn(T x) { return (T)((x > 0) - (x < 0)); }

KERN_DEF_SIGNED(i8, int8_t, int, INT8_MIN)
KERN_DEF_SIGNED(i16, int16_t, int, INT16_MIN)
KERN_DEF_SIGNED(i32, int32_t, uint32_t, INT32_MIN)
KERN_DEF_SIGNED(i64, int64_t, uint64_t, INT64_MIN)

KERN_DEF_INT_COMMON(u8, uint8_t, unsigned)
static inline uint8_t kern_floordiv_u8(uint8_t a, uint8_t b) {
    if (__builtin_expect(b == 0, 0)) { kern_raise(FE_DIVBYZERO); return 0; }
    return (uint8_t)(a / b);
}
static inline uint8_t kern_mod_u8(uint8_t a, uint8_t b) {
    if (__builtin_expect(b == 0, 0)) { kern_raise(FE_DIVBYZERO); return 0; }
    return (uint8_t)(a % b);
}
static inline uint8_t kern_fmod_u8(uint8_t a, uint8_t b) { return kern_mod_u8(a, b); }
static inline uint8_t kern_abs_u8(uint8_t x) { return x; }
static inline uint8_t kern_sgn_u8(uint8_t x) { return x > 0; }

/* ------------------------------------------------------------------ bool (numpy ??->?) */
static inline uint8_t kern_add_b(uint8_t x, uint8_t y) { return (x != 0) | (y != 0); }
static inline uint8_t kern_mul_b(uint8_t x, uint8_t y) { return (x != 0) & (y != 0); }
static inline uint8_t kern_max_b(uint8_t x, uint8_t y) { return (x != 0) | (y != 0); }
static inline uint8_t kern_min_b(uint8_t x, uint8_t y) { return (x != 0) & (y != 0); }
static inline uint8_t kern_fmax_b(uint8_t x, uint8_t y) { return (x != 0) | (y != 0); }
static inline uint8_t kern_fmin_b(uint8_t x, uint8_t y) { return (x != 0) & (y != 0); }
static inline uint8_t kern_abs_b(uint8_t x) { return x != 0; }
static inline uint8_t kern_floor_b(uint8_t x) { return x != 0; }
static inline uint8_t kern_ceil_b(uint8_t x) { return x != 0; }
static inline uint8_t kern_trunc_b(uint8_t x) { return x != 0; }

/* ------------------------------------------------------------------ any type -> bool */
#define KERN_DEF_LOGIC(tn, T)                                                             \
static inline uint8_t kern_land_##tn(T x, T y) { return (x != 0) & (y != 0); }          \
static inline uint8_t kern_lor_##tn(T x, T y) { return (x != 0) | (y != 0); }           \
static inline uint8_t kern_lxor_##tn(T x, T y) { return (x != 0) ^ (y != 0); }          \
static inline uint8_t kern_lnot_##tn(T x) { return x == 0; }                            \
static inline uint8_t kern_eq_##tn(T x, T y) { return x == y; }                         \
static inline uint8_t kern_ne_##tn(T x, T y) { return x != y; }                         \
static inline uint8_t kern_gt_##tn(T x, T y) { return x > y; }                          \
static inline uint8_t kern_ge_##tn(T x, T y) { return x >= y; }                         \
static inline uint8_t kern_lt_##tn(T x, T y) { return x < y; }                          \
static inline uint8_t kern_le_##tn(T x, T y) { return x <= y; }

KERN_DEF_LOGIC(f32, float)
KERN_DEF_LOGIC(f64, double)
KERN_DEF_LOGIC(i8, int8_t)
KERN_DEF_LOGIC(i16, int16_t)
KERN_DEF_LOGIC(i32, int32_t)
KERN_DEF_LOGIC(i64, int64_t)
KERN_DEF_LOGIC(u8, uint8_t)
KERN_DEF_LOGIC(b, uint8_t)

/* ------------------------------------------------------------------ FP exception flags */
#define KERN_FE_ALL (FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW)
static inline int kern_fe_test(void) { return kern_fe_test_all() & KERN_FE_ALL; }

#endif
