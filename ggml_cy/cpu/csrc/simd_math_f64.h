/* ggml_cy SIMD math functions, float64 (issue 14 item 2), included by simd_math.h after
 * simd_math_more.h. Double lanes (8 with AVX-512, 4 with AVX2, 2 with SSE), the same
 * range reductions as the float32 code carried to double precision, Taylor polynomials
 * long enough that truncation is far below an ulp:
 *   exp    x = n ln2 + r (ln2 in two parts, the rounding of r carried as c), e^r - 1 to
 *          r^13/13!, 2^n put in by two exact multiplications (one rounding);
 *   expm1  the same e^r - 1, then 2^n em + (2^n - 1); x > 700: exp; x < -40: -1;
 *          AVX-512: a 16-entry table of 2^(j/16), |r| <= ln2/32 (sm_expm1t_core);
 *   log    log1p/log2: the float32 code's split (s = f / (2 + f), R(s^2) to s^20);
 *          AVX-512: table-driven, no division (below, tools/fit_log64.py);
 *   sin/cos x = n pi/2 + r with pi/2 in 33 + 33 + 53 bits (r and its rounding error kept
 *          by a two-sum), sin r to r^17, cos r to r^18; |x| >= 2^20 (and inf, NaN) through
 *          the C library; with FMA (avx2, avx512) the rows take simd_math_sincos64.h's
 *          form (minimax polynomials, an FMA reduction: 0.6x the operations);
 *   tanh   em / (em + 2), em = expm1(2|x|); AVX-512: -g / (1 + g), g = expm1(-2|x|)/2
 *          from sm_expm1t_core's table and polynomial (simd_math_tanh64.h);
 *   sigmoid, silu  1 / (1 + e) with 1 + e's rounding error corrected, e = e^-|x|.
 * Accuracy is measured against mpmath by tests/test_simd_math.py (README "Math
 * functions"). */
#ifndef GGML_CY_SIMD_MATH_F64_H
#define GGML_CY_SIMD_MATH_F64_H

#include "simd_math_tab64.h"

#define SM_SIGN64 ((int64_t)0x8000000000000000ULL)

/* v 2^n for n in [-2000, 2000], one rounding */
static inline sm_vd sm_ldexp_d(sm_vd v, sm_vl n) {
    sm_vl n1 = n >> 1;
    return (v * (sm_vd)((n1 + 1023) << 52)) * (sm_vd)((n - n1 + 1023) << 52);
}

/* the AVX-512 forms below (register tables, vfpclasspd, vcvtqq2pd, 64-bit integer min):
 * AVX512F + DQ, which every avx512 build level has (x86-64-v4) */
#if SM_VB == 64 && defined(__AVX512DQ__) && defined(__FMA__)
#define SM_F64_512 1
#else
#define SM_F64_512 0
#endif

#if defined(__FMA__)
static inline sm_vd sm_fmsd(sm_vd a, sm_vd b, sm_vd c) {          /* a*b - c, one rounding */
#if SM_VB == 64
    return (sm_vd)_mm512_fmsub_pd((__m512d)a, (__m512d)b, (__m512d)c);
#elif SM_VB == 32
    return (sm_vd)_mm256_fmsub_pd((__m256d)a, (__m256d)b, (__m256d)c);
#else
    return (sm_vd)_mm_fmsub_pd((__m128d)a, (__m128d)b, (__m128d)c);
#endif
}
#endif

#if SM_F64_512
/* t[idx & 15] from a 16-entry register table (one vpermt2pd) */
static inline sm_vd sm_lut16d(const double * t, sm_vl idx) {      /* t[idx & 15] */
    return (sm_vd)_mm512_permutex2var_pd(_mm512_load_pd(t), (__m512i)idx, _mm512_load_pd(t + 8));
}
#endif

/* ------------------------------------------------------------------ exp, expm1 */
static inline sm_vd sm_exp_d(sm_vd x) {
    sm_vl ix = (sm_vl)x, ia = ix & 0x7fffffffffffffffLL, n;
    /* |x| <= 708: no overflow, no subnormal */
    if (!sm_anyl(ia > 0x4086200000000000LL)) {           /* |x| > 708 */
        sm_vd em = sm_expm1_core_d(x, (sm_vd){0}, &n);
        return (sm_vd)((sm_vl)(1.0 + em) + (n << 52));
    }
    sm_vl nan = ia > 0x7ff0000000000000LL, inf = ia == 0x7ff0000000000000LL;
    sm_vd xc = sm_seld(nan | inf, sm_bcd(0.0), x);      /* no NaN in the compares below */
    xc = sm_seld((sm_vl)(xc > 710.0), sm_bcd(710.0), xc);
    xc = sm_seld((sm_vl)(xc < -746.0), sm_bcd(-746.0), xc);
    sm_vd em = sm_expm1_core_d(xc, (sm_vd){0}, &n);
    sm_vd r = sm_exp_scale_d(em, n);                    /* overflow / underflow raised here */
    r = sm_seld(inf, sm_seld(ix > 0, sm_bcd(INFINITY), sm_bcd(0.0)), r);
    return sm_seld(nan, x, r);
}

/* e^x - 1 ~ hi + *lo, x in [-40, 700] */
static inline sm_vd sm_expm1_d_core2(sm_vd x, sm_vd * lo) {
    sm_vl n;
    sm_vd eml;
    sm_vd em = sm_expm1_core2_d(x, &n, &eml);
    sm_vd s = (sm_vd)((n + 1023) << 52);
    sm_vd P = s * em, Q = s - 1.0;                       /* both exact (n <= 53) */
    sm_vd hi = P + Q;                                    /* two-sum */
    sm_vd bb = hi - P;
    sm_vd err = (P - (hi - bb)) + (Q - bb);
    sm_vl tiny = ((sm_vl)x & 0x7fffffffffffffffLL) < 0x3c90000000000000LL;   /* 2^-54 */
    err = err + ((s - Q) - 1.0);                         /* Q's rounding (n > 53) */
    *lo = sm_seld(tiny, sm_bcd(0.0), err + s * eml);
    return sm_seld(tiny, x, hi);
}
static inline sm_vd sm_expm1_d_core(sm_vd x) {
    sm_vd lo;
    sm_vd hi = sm_expm1_d_core2(x, &lo);
    sm_vl tiny = ((sm_vl)x & 0x7fffffffffffffffLL) < 0x3c90000000000000LL;
    return sm_seld(tiny, x, hi + lo);
}
#if SM_F64_512
/* AVX-512 expm1 (and tanh's e^(-2|x|) - 1), x in [-40, 709.7]: x = (16 n + j) ln2/16 + r,
 * |r| <= ln2/32, e^x = 2^n T_j e^r with T_j = 2^(j/16) from register tables (one
 * vpermt2pd each: high part as bits(T_hi) - (j << 48), so that adding k << 48, k = 16 n + j,
 * gives 2^n T_hi = S; low part relative to T_hi), e^r - 1 = p + pl = r + r^2 Q(r), Q of
 * degree 5 (tools/fit_expm1_64.py: relative error 2^-58.9; the terms after r are below
 * 2.4e-4 of it, so their rounding is negligible). e^x - 1 = (S - 1) + S p + S (pl + Tl (1 + p)):
 * S - 1 and S p both with their exact errors (two-sum, FMA), added by a fast two-sum (|S - 1|
 * has the larger exponent): em = hi + *lo. */
#define SM_EXPT_INVL16 0x1.71547652b82fep+4
#define SM_EXPT_L16HI 0x1.62e42fefa0000p-5
#define SM_EXPT_L16LO 0x1.cf79abc9e3b3ap-44
/* nonpos: x <= 0 only (S <= 1: S - 1 by a fast two-sum) */
static inline sm_vd sm_expm1t_core(sm_vd x, sm_vd * lo, int nonpos) {
    sm_vd t = x * SM_EXPT_INVL16 + SM_MAGICD;
    sm_vd fn = t - SM_MAGICD;
    sm_vl kt = (sm_vl)t;                         /* k in the low bits (j: the low 4) */
    sm_vd S = (sm_vd)((sm_vl)_mm512_permutex2var_epi64(_mm512_load_si512(sm_expt_hi),
                                                       (__m512i)kt,
                                                       _mm512_load_si512(sm_expt_hi + 8))
                      + (kt << 48));
    sm_vd Tl = sm_lut16d(sm_expt_lo, kt);
    sm_vd rh = x - fn * SM_EXPT_L16HI;                             /* exact */
    sm_vd r = rh - fn * SM_EXPT_L16LO;
    sm_vd c = (rh - r) - fn * SM_EXPT_L16LO;
    sm_vd r2 = r * r;
    sm_vd p01 = 0x1.5555555555551p-3 * r + 0x1.0000000000003p-1;
    sm_vd p23 = 0x1.111111115e8eap-7 * r + 0x1.55555554aaa4cp-5;
    sm_vd p45 = 0x1.a01a58f0c33b7p-13 * r + 0x1.6c1821fc9e7d7p-10;
    sm_vd q = (p45 * r2 + p23) * r2 + p01;
    sm_vd tq = r2 * q + c;
    sm_vd p = r + tq;
    sm_vd pl = (r - p) + tq;
    sm_vd Q = S - 1.0, Qe;                                         /* two-sum */
    if (nonpos) {
        Qe = (-1.0 - Q) + S;
    } else {
        sm_vd bb = Q - S;
        Qe = (S - (Q - bb)) + (-1.0 - bb);
    }
    sm_vd P = S * p;
    sm_vd Pe = sm_fmsd(S, p, P);
    sm_vd hi = Q + P;
    *lo = ((((Q - hi) + P) + Qe) + Pe) + S * ((Tl * p + Tl) + pl);
    return hi;
}
static inline sm_vd sm_expm1_d512_core(sm_vd x) {
    sm_vd lo;
    sm_vd hi = sm_expm1t_core(x, &lo, 0);
    return sm_seld((sm_vl)(x == 0.0), x, hi + lo);                 /* -0 */
}
#endif
/* always_inline: see sm_expm1f (simd_math_more.h); float64 1e5 95 -> 120 us out of line */
static inline __attribute__((always_inline)) sm_vd sm_expm1_d(sm_vd x) {
    sm_vl ix = (sm_vl)x, ia = ix & 0x7fffffffffffffffLL;
#if SM_F64_512
    /* the table form up to 709.7 (2^n T_hi finite: n <= 1023); above (+inf, +NaN) or,
     * unsigned, x < -40 (-inf, -NaN): the lanes below */
#define SM_EXPM1_BIG 0x40862d999999999aLL
    if (__builtin_expect(
            !(_mm512_cmpgt_epi64_mask((__m512i)ix, (__m512i)sm_bcl(SM_EXPM1_BIG))
              | _mm512_cmpgt_epu64_mask((__m512i)ix, (__m512i)sm_bcl((int64_t)0xc044000000000000ULL))),
            1))
        return sm_expm1_d512_core(x);
#define sm_expm1_d_core sm_expm1_d512_core
#else
#define SM_EXPM1_BIG 0x4085e00000000000LL
#endif
    /* x > 700 (709.7), x < -40, inf, NaN (integer compares: no "invalid" from a NaN) */
    sm_vl spec = (ix > SM_EXPM1_BIG) | ((ix < 0) & (ia > 0x4044000000000000LL))
                 | (ia >= 0x7ff0000000000000LL);
    if (!sm_anyl(spec)) return sm_expm1_d_core(x);
    sm_vd r = sm_expm1_d_core(sm_seld(spec, sm_bcd(0.0), x));
    sm_vl big = spec & (ix > 0);
    r = sm_seld(big, sm_exp_d(sm_seld(big, x, sm_bcd(0.0))), r);  /* inf, NaN, overflow */
    r = sm_seld(spec & (ix < 0), sm_bcd(-1.0), r);
    return sm_seld(ia > 0x7ff0000000000000LL, x, r);
}
#undef SM_EXPM1_BIG
#if SM_F64_512
#undef sm_expm1_d_core
#endif

/* ------------------------------------------------------------------ log, log1p, log2 */

#if SM_F64_512
/* AVX-512: table-driven log, no division (tools/fit_log64.py has the tables' derivation).
 * x = 2^k z, z in [0.765625, 1.53125), interval i of z (its top bits, 16 intervals, a
 * register table read with one vpermt2pd), invc = 1/c a short multiple of 2^-q chosen so
 * that r = z invc - 1 is exact in one FMA, |r| <= 0.0342; log x = k ln2 + log c + log1p(r),
 * log1p(r) = r + r^2 Q(r) with Q of degree 8, as even and odd halves in r^2 (Horner's
 * count of multiply-adds, the loop's limit on Zen 4, with half its dependency chain).
 * k LN2HI + log c's high part is exact (both multiples of 2^-42), r is added to it by a
 * two-sum, the rest (the low parts, r^2 Q) rounded into it once: within 0.52 ulp
 * (tests/test_simd_math.py). The interval of 1 has c = 1, so near 1 the result is relative.
 * The avx2 and baseline levels keep the division form below (their float64 log/log2/log1p
 * may differ from avx512's by 1 ulp, each within the budget). */
#define SM_LOG_TABLE 1
#define SM_LOGT_LN2HI 0x1.62e42fefa3800p-1
#define SM_LOGT_LN2LO 0x1.ef35793c76730p-45
/* any lane NaN, +-0, +-inf, subnormal or negative (one vfpclasspd) */
static inline int sm_log_spec_any(sm_vd x) {
    return _mm512_fpclass_pd_mask((__m512d)x, 0xff) != 0;
}
/* base2 = 0: log x, 1: log2 x; x a positive normal double, the exponent plus kadd.
 * log1p: with cor = 1 + v's rounding error (x = 1 + v rounded), log x + cor / x, the
 * quotient as cor 2^-k invc (1 - r) (relative error r^2, on a term below x's ulp) */
static inline sm_vd sm_logt_core(sm_vd x, sm_vl kadd, int base2, int has_cor, sm_vd cor) {
    sm_vl ix = (sm_vl)x;
    sm_vl tmp = ix - 0x3fe8800000000000LL;
    sm_vl k = tmp >> 52;
    sm_vd z = (sm_vd)(ix - (k << 52));
    sm_vl idx = tmp >> 48;
    sm_vd invc = sm_lut16d(sm_logt_invc, idx);
    sm_vd r = sm_fmsd(z, invc, sm_bcd(1.0));                 /* exact */
    sm_vd kd = __builtin_convertvector(k + kadd, sm_vd);
    sm_vd r2 = r * r;
#define SM_LOGT_C0 -0x1.0000000000000p-1
#define SM_LOGT_C1 0x1.5555555555480p-2
#define SM_LOGT_C2 -0x1.ffffffffffc53p-3
#define SM_LOGT_C3 0x1.9999999cfcc01p-3
#define SM_LOGT_C4 -0x1.5555555a25fdfp-3
#define SM_LOGT_C5 0x1.249226f44f928p-3
#define SM_LOGT_C6 -0x1.ffffb19721f7ap-4
#define SM_LOGT_C7 0x1.c82c5c857fefbp-4
#define SM_LOGT_C8 -0x1.9aaab2420b7d4p-4
    if (!base2) {
        sm_vd E = SM_LOGT_C8 * r2 + SM_LOGT_C6;
        E = E * r2 + SM_LOGT_C4; E = E * r2 + SM_LOGT_C2; E = E * r2 + SM_LOGT_C0;
        sm_vd O = SM_LOGT_C7 * r2 + SM_LOGT_C5;
        O = O * r2 + SM_LOGT_C3; O = O * r2 + SM_LOGT_C1;
        sm_vd Q = O * r + E;
        sm_vd A = kd * SM_LOGT_LN2HI + sm_lut16d(sm_logt_hi, idx);   /* exact */
        sm_vd h = A + r;                                   /* two-sum, |A| >= |r| or A = 0 */
        sm_vd herr = (A - h) + r;
        if (has_cor) {    /* invc 2^-k by its exponent bits; k >= 54: cor = 0 (the clamp
                           * keeps invc 2^-k finite) */
            sm_vl ks = (sm_vl)_mm512_min_epi64((__m512i)k, (__m512i)sm_bcl(1000));
            sm_vd t = cor * (sm_vd)((sm_vl)invc - (ks << 52));
            herr = herr + (t - t * r);
        }
        sm_vd lo = (kd * SM_LOGT_LN2LO + sm_lut16d(sm_logt_lo, idx)) + herr;
        return h + (r2 * Q + lo);
    }
    /* log2: log2(1 + r) = rh + rl + r P(r), rh + rl = r IL_HI exactly, P = IL_LO + r IL Q(r)
     * (Q's coefficients times IL, rounded: below 2^-58 of the result) */
#define SM_IL 0x1.71547652b82fep+0
    sm_vd E = (SM_IL * SM_LOGT_C7) * r2 + SM_IL * SM_LOGT_C5;
    E = E * r2 + SM_IL * SM_LOGT_C3; E = E * r2 + SM_IL * SM_LOGT_C1;
    E = E * r2 + 0x1.777d0ffda0d24p-56;
    sm_vd O = (SM_IL * SM_LOGT_C8) * r2 + SM_IL * SM_LOGT_C6;
    O = O * r2 + SM_IL * SM_LOGT_C4; O = O * r2 + SM_IL * SM_LOGT_C2;
    O = O * r2 + SM_IL * SM_LOGT_C0;
    sm_vd P = O * r + E;
    sm_vd rh = r * SM_IL;
    sm_vd rl = sm_fmsd(r, sm_bcd(SM_IL), rh);
    sm_vd A = kd + sm_lut16d(sm_log2t_hi, idx);                     /* exact */
    sm_vd h = A + rh;
    sm_vd herr = (A - h) + rh;
    sm_vd lo = sm_lut16d(sm_log2t_lo, idx) + (herr + rl);
    return h + (r * P + lo);
#undef SM_IL
}
#endif
static inline sm_vd sm_log_R_d(sm_vd z) {                /* R(z) = z (2/3 + 2/5 z + ...) */
    /* even and odd halves in z^2: Horner's count of multiply-adds with half its chain (the
     * ten-deep chain bounded the loop; Estrin's form spilled registers at avx2) */
    sm_vd z2 = z * z;
    sm_vd E = 0x1.af286bca1af28p-4 * z2 + 0x1.1111111111111p-3;
    E = E * z2 + 0x1.745d1745d1746p-3;
    E = E * z2 + 0x1.2492492492492p-2;
    E = E * z2 + 0x1.5555555555555p-1;
    sm_vd O = 0x1.8618618618618p-4 * z2 + 0x1.e1e1e1e1e1e1ep-4;
    O = O * z2 + 0x1.3b13b13b13b14p-3;
    O = O * z2 + 0x1.c71c71c71c71cp-3;
    O = O * z2 + 0x1.999999999999ap-2;
    return (O * z + E) * z;
}
#define SM_LOG_LN2HI 0x1.62e42fee00000p-1
#define SM_LOG_LN2LO 0x1.a39ef35793c76p-33
/* log(1 + f) + k ln2, f in [sqrt(1/2) - 1, sqrt 2 - 1] */
static inline sm_vd sm_log1p_kern_d(sm_vd f, sm_vd dk) {
    sm_vd s = f / (2.0 + f);
    sm_vd R = sm_log_R_d(s * s);
    sm_vd hfsq = 0.5 * f * f;
    return dk * SM_LOG_LN2HI - ((hfsq - (s * (hfsq + R) + dk * SM_LOG_LN2LO)) - f);
}
static inline sm_vd sm_logd_core(sm_vd x, sm_vl kadd, int base2) {
#ifdef SM_LOG_TABLE
    return sm_logt_core(x, kadd, base2, 0, (sm_vd){0});
#endif
    sm_vl ix = (sm_vl)x;
    sm_vl k = (ix - 0x3fe6a09e667f3bcdLL) >> 52;
    sm_vd f = (sm_vd)(ix - (k << 52)) - 1.0;
    sm_vd dk = __builtin_convertvector(k + kadd, sm_vd);
    if (!base2) return sm_log1p_kern_d(f, dk);
    sm_vd s = f / (2.0 + f);
    sm_vd R = sm_log_R_d(s * s);
    sm_vd hfsq = 0.5 * f * f;
    sm_vd hi = (sm_vd)((sm_vl)(f - hfsq) & (int64_t)0xffffffff00000000ULL);
    sm_vd lo = (f - hi) - hfsq + s * (hfsq + R);
    sm_vd vhi = hi * 0x1.71547p+0;
    sm_vd vlo = (lo + hi) * 0x1.94ae0bf85ddf4p-22 + lo * 0x1.71547p+0;
    sm_vd w = dk + vhi;
    vlo = vlo + ((dk - w) + vhi);
    return vlo + w;
}
static inline sm_vd sm_logd_any(sm_vd x, int base2) {
    sm_vl ix = (sm_vl)x;
    /* special: negative, zero, subnormal, inf, NaN */
#ifdef SM_LOG_TABLE
    if (!sm_log_spec_any(x))
#else
    if (!sm_anyl(SM_UGTL(ix - 0x0010000000000000LL,
                         0x7ff0000000000000LL - 0x0010000000000000LL - 1)))
#endif
        return sm_logd_core(x, sm_bcl(0), base2);
    sm_vl ia = ix & 0x7fffffffffffffffLL;
    sm_vl zero = ia == 0, nan = ia > 0x7ff0000000000000LL, pinf = ix == 0x7ff0000000000000LL;
    sm_vl neg = (ix < 0) & ~zero & ~nan;
    sm_vl sub = (ix > 0) & (ix < 0x0010000000000000LL);
    sm_vd xs = sm_seld(sub, sm_seld(sub, x, sm_bcd(0.0)) * 0x1p54, x);
    xs = sm_seld(zero | nan | pinf | neg, sm_bcd(1.0), xs);
    sm_vd r = sm_logd_core(xs, sub & -54, base2);
    if (sm_anyl(zero)) {
        sm_vd dz = -1.0 / sm_seld(zero, sm_bcd(0.0), sm_bcd(1.0));
        r = sm_seld(zero, dz, r);
    }
    if (sm_anyl(neg)) {
        sm_vd q = sm_seld(neg, sm_bcd(INFINITY), sm_bcd(0.0));
        r = sm_seld(neg, q - q, r);
    }
    r = sm_seld(pinf, x, r);
    return sm_seld(nan, x, r);
}
static inline sm_vd sm_log_d(sm_vd x) { return sm_logd_any(x, 0); }
static inline sm_vd sm_log2_d(sm_vd x) { return sm_logd_any(x, 1); }

static inline sm_vd sm_log1p_d(sm_vd x) {
    sm_vl ix = (sm_vl)x, ia = ix & 0x7fffffffffffffffLL;
#ifdef SM_LOG_TABLE
    {   /* x > -1 finite: 1 + x a positive normal double; |x| < 2^-54 gives x itself (cor),
         * but for -0 */
        sm_vd u = 1.0 + x;
        if (__builtin_expect(!sm_log_spec_any(u), 1)) {
            sm_vd r = sm_logt_core(u, sm_bcl(0), 0, 1, x - (u - 1.0));
            return sm_seld((sm_vl)(x == 0.0), x, r);
        }
    }
#endif
    sm_vl spec = (ia >= 0x7ff0000000000000LL) | ((ix < 0) & (ia >= 0x3ff0000000000000LL));
    sm_vd xs = x;
    int any_spec = sm_anyl(spec);
    if (any_spec) xs = sm_seld(spec, sm_bcd(0.0), x);
    sm_vd u = 1.0 + xs;
#ifdef SM_LOG_TABLE
    sm_vd r = sm_logt_core(u, sm_bcl(0), 0, 1, xs - (u - 1.0));
#else
    sm_vl iu = (sm_vl)u;
    sm_vl k = (iu - 0x3fe6a09e667f3bcdLL) >> 52;
    sm_vd f = (sm_vd)(iu - (k << 52)) - 1.0;
    sm_vl big = k > 1000;
    sm_vl ks = (big & 1000) | (~big & k);
    sm_vd c = xs - (u - 1.0);
    f = f + c * (sm_vd)((1023 - ks) << 52);
    sm_vd r = sm_log1p_kern_d(f, __builtin_convertvector(k, sm_vd));
#endif
    r = sm_seld(ia < 0x3c90000000000000LL, x, r);        /* |x| < 2^-54: x */
    if (__builtin_expect(any_spec, 0)) {
        sm_vl m1 = ix == (int64_t)0xbff0000000000000ULL, nan = ia > 0x7ff0000000000000LL;
        sm_vl lt = spec & (ix < 0) & ~m1 & ~nan;
        if (sm_anyl(m1)) {
            sm_vd dz = -1.0 / sm_seld(m1, sm_bcd(0.0), sm_bcd(1.0));
            r = sm_seld(m1, dz, r);
        }
        if (sm_anyl(lt)) {
            sm_vd q = sm_seld(lt, sm_bcd(INFINITY), sm_bcd(0.0));
            r = sm_seld(lt, q - q, r);
        }
        r = sm_seld(ix == 0x7ff0000000000000LL, x, r);
        r = sm_seld(nan, x, r);
    }
    return r;
}

/* ------------------------------------------------------------------ sin, cos */
#define SM_DPI_1 0x1.921fb54400000p+1
#define SM_DPI_2 0x1.0b4611a600000p-33
#define SM_DPI_3 0x1.3198a2e037073p-68

__attribute__((noinline, cold)) static void sm_sincos_big_d(const sm_vd * x, sm_vd * r,
                                                            int cosine) {
    for (int k = 0; k < SM_ND; k++) {
        double v = (*x)[k];
        if (!isless(fabs(v), 0x1p20)) (*r)[k] = cosine ? cos(v) : sin(v);
    }
}
static inline sm_vd sm_sincos_d(sm_vd x, int cosine) {
    sm_vl big = (sm_vl)((sm_vul)((sm_vl)x & 0x7fffffffffffffffLL) >= 0x4130000000000000ULL);
    int any_big = sm_anyl(big);
    sm_vd xs = any_big ? sm_seld(big, sm_bcd(0.0), x) : x;
    /* x = n pi/2 + r, |r| <= pi/4 (pi/2 = the halves of the three pi parts) */
    sm_vd t = xs * (2 * SM_1_PI) + SM_MAGICD;
    sm_vd fn = t - SM_MAGICD;
    sm_vl q = (sm_vl)t - (sm_vl)sm_bcd(SM_MAGICD) + cosine;
    sm_vd r1 = xs - fn * (0.5 * SM_DPI_1);               /* exact */
    sm_vd w = fn * (0.5 * SM_DPI_2);                     /* exact */
    sm_vd r2 = r1 - w;                                   /* two-sum: r2 + e = r1 - w */
    sm_vd bb = r2 - r1;
    sm_vd e = (r1 - (r2 - bb)) - (w + bb);
    e = e - fn * (0.5 * SM_DPI_3);
    sm_vd r = r2 + e;
    sm_vd rl = (r2 - r) + e;
    sm_vd z = r * r;
    /* sin r = r + r z S(z) (Taylor to r^17), cos r = 1 - z/2 + z^2 C(z) (to r^18) */
    sm_vd S = 0x1.952c77030ad4ap-49 * z - 0x1.ae7f3e733b81fp-41;
    S = S * z + 0x1.6124613a86d09p-33;
    S = S * z - 0x1.ae64567f544e4p-26;
    S = S * z + 0x1.71de3a556c734p-19;
    S = S * z - 0x1.a01a01a01a01ap-13;
    S = S * z + 0x1.1111111111111p-7;
    S = S * z - 0x1.5555555555555p-3;
    sm_vd sn = r + ((r * z) * S + rl * (1.0 - 0.5 * z));
    sm_vd C = -0x1.6827863b97d97p-53 * z + 0x1.ae7f3e733b81fp-45;
    C = C * z - 0x1.93974a8c07c9dp-37;
    C = C * z + 0x1.1eed8eff8d898p-29;
    C = C * z - 0x1.27e4fb7789f5cp-22;
    C = C * z + 0x1.a01a01a01a01ap-16;
    C = C * z - 0x1.6c16c16c16c17p-10;
    C = C * z + 0x1.5555555555555p-5;
    sm_vd hz = 0.5 * z;
    sm_vd wc = 1.0 - hz;
    sm_vd cs = wc + (((1.0 - wc) - hz) + ((z * z) * C - r * rl));
    sm_vd v = sm_seld((q & 1) != 0, cs, sn);
    v = (sm_vd)((sm_vul)v ^ ((sm_vul)(q & 2) << 62));
    if (!cosine)                      /* sin x = x below 2^-27: keeps -0's sign */
        v = sm_seld(((sm_vl)x & 0x7fffffffffffffffLL) < 0x3e40000000000000LL, x, v);
    if (__builtin_expect(any_big, 0)) sm_sincos_big_d(&x, &v, cosine);
    return v;
}
static inline sm_vd sm_sin_d(sm_vd x) { return sm_sincos_d(x, 0); }
static inline sm_vd sm_cos_d(sm_vd x) { return sm_sincos_d(x, 1); }
#include "simd_math_sincos64.h"

/* ------------------------------------------------------------------ tanh */
/* AVX-512: sm_tanh_d512, tanh |x| = -g / (1 + g), g = (e^(-2|x|) - 1)/2 from the expm1
 * table (one form for every |x|, no branch), simd_math_tanh64.h */
#include "simd_math_tanh64.h"
static inline sm_vd sm_tanh_d(sm_vd x) {
#if SM_F64_512
    return sm_tanh_d512(x);
#endif
    sm_vl ix = (sm_vl)x, ia = ix & 0x7fffffffffffffffLL;
    sm_vd a = (sm_vd)sm_seld(ia > 0x4034000000000000LL, sm_bcd(20.0), (sm_vd)ia);  /* NaN -> 20 */
#if defined(__FMA__)
    sm_vd el;
    sm_vd em = sm_expm1_d_core2(a + a, &el);
    /* tanh = em / d (|x| < 0.55) or 1 - 2 / d, d + dl = em + 2 + el; the quotient
     * corrected by its exact residual, 1 / d = (1 - q) / 2 resp. q / 2 */
    sm_vd d = em + 2.0;
    sm_vd bb = d - em;
    sm_vd dl = ((em - (d - bb)) + (2.0 - bb)) + el;
    sm_vl small = ia < 0x3fe199999999999aLL;                  /* |x| < 0.55 */
    sm_vd N = sm_seld(small, em, sm_bcd(2.0));
    sm_vd q = N / d;
    sm_vd rr = -sm_fmsd(q, d, N);
    q = q + ((rr + sm_seld(small, el, sm_bcd(0.0))) - q * dl)
            * sm_seld(small, 0.5 - 0.5 * q, 0.5 * q);
    sm_vd r = sm_seld(small, q, 1.0 - q);
#else
    sm_vd em = sm_expm1_d_core(a + a);
    sm_vd r = em / (em + 2.0);
#endif
    r = (sm_vd)((sm_vl)r | (ix & SM_SIGN64));
    return sm_seld(ia > 0x7ff0000000000000LL, x, r);
}

/* ------------------------------------------------------------------ sigmoid, silu */
/* e = e^-|x| = 2^n (ph + pl) (unscaled, so subnormal results round once at the end),
 * d + dl = 1 + e, the quotient corrected by its exact residual (FMA) */
static inline sm_vd sm_sigsilu_d(sm_vd x, int silu) {
    sm_vl ix = (sm_vl)x, ia = ix & 0x7fffffffffffffffLL, n;
    sm_vl nan = ia > 0x7ff0000000000000LL;
    sm_vl huge = ia > 0x4089000000000000LL;                  /* |x| > 800 (inf, NaN) */
    sm_vd a = (sm_vd)sm_seld(huge, sm_bcd(800.0), (sm_vd)ia);
    sm_vd eml;
    sm_vd em = sm_expm1_core2_d(-a, &n, &eml);
    sm_vd ph = 1.0 + em;
    sm_vd pl = ((1.0 - ph) + em) + eml;
    sm_vd e = sm_ldexp_d(ph, n);                          /* e^-|x|, maybe subnormal */
    sm_vd d = 1.0 + e;
    sm_vd inv = 1.0 / d;
    sm_vl neg = ix < 0;
    sm_vd xs = silu ? sm_seld(ia > 0x7fefffffffffffffLL, sm_bcd(1.0), x) : sm_bcd(1.0);
    /* numerator: x >= 0: xs; x < 0: xs (ph + pl) (times 2^n at the end) */
    sm_vd nh = sm_seld(neg, xs * ph, xs);
#if defined(__FMA__)
    sm_vd dl = ((1.0 - d) + e) + sm_ldexp_d(pl, n);      /* (only the FMA form uses it) */
    sm_vd nl = sm_seld(neg, sm_fmsd(xs, ph, nh) + xs * pl, sm_bcd(0.0));
    sm_vd qh = nh * inv;
    /* residual of nh / d, in the unscaled frame for x < 0 (d is near 1 there) */
    sm_vd rr = -sm_fmsd(qh, d, nh);
    sm_vd q = qh + ((rr + nl) - qh * dl) * inv;
#else
    sm_vd q = (nh + sm_seld(neg, xs * pl, sm_bcd(0.0))) * inv;
#endif
    sm_vd r = sm_seld(neg, sm_ldexp_d(q, n), q);
    if (silu) {   /* x < -800: -0; -inf: -inf * 0 = NaN (x / (1 + e^-x)); +inf: inf */
        r = sm_seld(huge, x * sm_seld(neg, sm_bcd(0.0), sm_bcd(1.0)), r);
        r = sm_seld(ia < 0x3c00000000000000LL, 0.5 * x, r);      /* |x| < 2^-63: x / 2 */
    }
    return sm_seld(nan, x, r);
}
/* The rows' form: |x| <= 708 (e^-|x| a normal double) in plain double lanes, 1 / (1 + e)
 * or e / (1 + e) (silu: x, x e over 1 + e), three roundings on exp's: within 2.5 ulp
 * (tests/test_simd_math.py), at 1.9x the compensated form's speed above (0.6x torch's);
 * vectors with a lane beyond take those lanes from the compensated form, out of line. */
static inline sm_vd sm_sigsilu_d_fast(sm_vd x, int silu) {
    sm_vl ix = (sm_vl)x, n;
    sm_vd em = sm_expm1_core_d((sm_vd)(ix | SM_SIGN64), (sm_vd){0}, &n);
    sm_vd e = (sm_vd)((sm_vl)(1.0 + em) + (n << 52));
    sm_vl pos = ix >= 0;
    sm_vd num = silu ? sm_seld(pos, x, x * e) : sm_seld(pos, sm_bcd(1.0), e);
    return num / (1.0 + e);
}
__attribute__((noinline, cold)) static sm_vd sm_sigsilu_d_slow(sm_vd x, sm_vl big, sm_vd r,
                                                               int silu) {
    return sm_seld(big, sm_sigsilu_d(x, silu), r);
}
static inline sm_vd sm_sigsilu_d_row(sm_vd x, int silu) {
    sm_vl big = ((sm_vl)x & 0x7fffffffffffffffLL) > 0x4086200000000000LL;   /* |x| > 708 */
    sm_vd r = sm_sigsilu_d_fast(sm_seld(big, (sm_vd){0}, x), silu);
    if (__builtin_expect(sm_anyl(big), 0)) r = sm_sigsilu_d_slow(x, big, r, silu);
    return r;
}
static inline sm_vd sm_sigmoid_d(sm_vd x) { return sm_sigsilu_d_row(x, 0); }
static inline sm_vd sm_silu_d(sm_vd x) { return sm_sigsilu_d_row(x, 1); }

/* ------------------------------------------------------------------ rows */
#define SM_ROW_F64(name, fn)                                                              \
static inline void sm_row_##name##_f64(const double * a, double * d, int64_t n) {       \
    SM_ROW_BODY(double, sm_vd, SM_ND, fn);                                              \
}                                                                                       \
static inline double sm_one_##name##_f64(double x) { return fn(sm_bcd(x))[0]; }

#if !SM_F64_512                  /* avx512: simd_math_exp64.h */
SM_ROW_F64(exp, sm_exp_d)
#endif
SM_ROW_F64(expm1, sm_expm1_d)
SM_ROW_F64(log, sm_log_d)
SM_ROW_F64(log1p, sm_log1p_d)
SM_ROW_F64(log2, sm_log2_d)
#if SM_SC64
SM_ROW_F64(sin, sm_sin_d2)
SM_ROW_F64(cos, sm_cos_d2)
#else
SM_ROW_F64(sin, sm_sin_d)
SM_ROW_F64(cos, sm_cos_d)
#endif
SM_ROW_F64(tanh, sm_tanh_d)
SM_ROW_F64(sigmoid, sm_sigmoid_d)
SM_ROW_F64(silu, sm_silu_d)

#endif
