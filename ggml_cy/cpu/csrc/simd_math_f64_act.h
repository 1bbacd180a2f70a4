/* ggml_cy SIMD math functions, float64 activations (issue 14 item 2): erf, gelu (ggml's
 * tanh approximation), gelu_erf, gelu_quick, softplus in double lanes. Included by
 * simd_math.h after simd_math_f64.h. Polynomial coefficients were fitted for this code
 * (Chebyshev fits at 200 bits in mpmath, rounded to double, checked by measurement).
 *
 *   gelu, gelu_quick  x sigmoid(v), v = 2 sqrt(2/pi) x (1 + 0.044715 x^2) resp. 1.702 x.
 *          For x < 0 the result x e^v / (1 + e^v) has the relative error of v's absolute
 *          error times 1 (|v| up to 745): v is formed as a double-double (x^2 exact, the
 *          constants in two parts, products with their exact errors) and e^(vh + vl)
 *          takes the low part into its reduced argument. e^-|v| = 2^n (p + pl), the
 *          quotient m / (1 + e) (resp. m e / (1 + e)) corrected by its exact residual,
 *          scaled by 2^n at the end (subnormal results rounded once).
 *   softplus  max(x, 0) + log1p(e), e = e^-|x| = 2^n (p + pl): 1 + e = 2^k (1 + f) with
 *          its rounding error c carried, log(1 + f) by the s = f / (2 + f) kernel
 *          (degree-6 fit in s^2) plus c / (1 + f); e < 2^-54: e itself.
 *   erf    |x| < 0.84375: x P(x^2); above 1 - erfc |x|;
 *   erfc (erf, gelu_erf)  t >= 0.84375 (to 27.3, where 0.5 x erfc underflows):
 *          erfc t = e^(-t^2) F(t), t^2 as a double-double (from x^2 / 2 exactly for
 *          gelu_erf: z = x / sqrt 2 rounded would put z^2 2^-53 into the exponent), F
 *          a polynomial in pieces whose coefficients are chosen per lane.
 *   gelu_erf  x Phi(x) = 0.5 x erfc(-x / sqrt 2); |x| small: 0.5 x + x^2 R(x^2).
 *
 * Without FMA (the x86-64-v2 baseline) the exact products are Dekker's (Veltkamp split),
 * so every level is held to the same budget. No input raises a floating-point flag that
 * the scalar long double code did not (none: -inf gives a quiet NaN, overflow is clamped
 * away). Accuracy is measured by tests/test_simd_math.py (README "Math functions"). */
#ifndef GGML_CY_SIMD_MATH_F64_ACT_H
#define GGML_CY_SIMD_MATH_F64_ACT_H

#define SMA_ABS(v) ((sm_vd)((sm_vl)(v) & 0x7fffffffffffffffLL))
#define SMA_NANL(v) ((((sm_vl)(v)) & 0x7fffffffffffffffLL) > 0x7ff0000000000000LL)

/* a b = p + *e exactly (|a|, |b| < 2^900) */
static inline sm_vd sma_two_prod(sm_vd a, sm_vd b, sm_vd * e) {
    sm_vd p = a * b;
#if defined(__FMA__)
    *e = sm_fmsd(a, b, p);
#else
    sm_vd ta = a * 134217729.0, tb = b * 134217729.0;     /* Veltkamp split, 26 + 27 bits */
    sm_vd ah = ta - (ta - a), bh = tb - (tb - b);
    sm_vd al = a - ah, bl = b - bh;
    *e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
#endif
    return p;
}
/* n - q d exactly, q ~ n / d */
static inline sm_vd sma_resid(sm_vd n, sm_vd q, sm_vd d) {
#if defined(__FMA__)
    return -sm_fmsd(q, d, n);
#else
    sm_vd l;
    sm_vd h = sma_two_prod(q, d, &l);
    return (n - h) - l;
#endif
}
/* a + b = s + *e exactly */
static inline sm_vd sma_two_sum(sm_vd a, sm_vd b, sm_vd * e) {
    sm_vd s = a + b;
    sm_vd bb = s - a;
    *e = (a - (s - bb)) + (b - bb);
    return s;
}

/* e^(a + al) = 2^n (p + *pl), a in [-760, 710], |al| <= 2^-40 |a|: n = round(a / ln2),
 * r = a - n ln2 (ln2 in 32 + 53 bits: the first product exact), c = r's rounding + al,
 * e^r - 1 = r + r^2 Q(r) (Q degree 9, Chebyshev fit on |r| <= ln2 / 2: relative 1.3e-17),
 * p + pl = (1 + em + eml) (1 + c) with em + eml = r + r^2 Q exactly: ~2^-60 */
static inline sm_vd sma_exp_pp(sm_vd a, sm_vd al, sm_vl * n, sm_vd * pl) {
    sm_vd t = a * 0x1.71547652b82fep+0 + SM_MAGICD;
    sm_vd fn = t - SM_MAGICD;
    *n = (sm_vl)t - (sm_vl)sm_bcd(SM_MAGICD);
#if defined(__FMA__)
    /* r = a - fn ln2 rounded once (ln2 in 53 + 53 bits); its rounding, below 2^-55, is
     * left out (0.2 ulp at most), the second part of ln2 goes into c */
    sm_vd r = a - fn * 0x1.62e42fefa39efp-1;
    sm_vd c = al - fn * 0x1.abc9e3b39803fp-56;
#else
    sm_vd rh = a - fn * 0x1.62e42feep-1;                 /* exact */
    sm_vd r = rh - fn * 0x1.a39ef35793c76p-33;
    sm_vd c = ((rh - r) - fn * 0x1.a39ef35793c76p-33) + al;
#endif
    sm_vd q = 0x1.af38d53857513p-26 * r + 0x1.2891a8c1d838dp-22;
    q = q * r + 0x1.71de0d9c145d0p-19;
    q = q * r + 0x1.a019b8ef67c6cp-16;
    q = q * r + 0x1.a01a01a7c8d47p-13;
    q = q * r + 0x1.6c16c17893833p-10;
    q = q * r + 0x1.11111111109adp-7;
    q = q * r + 0x1.5555555553d4fp-5;
    q = q * r + 0x1.5555555555556p-3;
    q = q * r + 0x1.0000000000001p-1;
    sm_vd tq = (r * r) * q;
    sm_vd em = r + tq;
    sm_vd eml = (r - em) + tq;
    sm_vd p = 1.0 + em;
    /* c enters multiplied by e^r (it is a shift of the argument) */
    *pl = (((1.0 - p) + em) + eml) + c * p;
    return p;
}
static inline sm_vl sma_sell(sm_vl m, sm_vl a, sm_vl b) { return (a & m) | (b & ~m); }
static inline sm_vd sma_pow2(sm_vl n) { return (sm_vd)((n + 1023) << 52); }  /* n normal */
static inline sm_vd sma_max(sm_vd a, sm_vd b) {                  /* no NaN here */
#if SM_VB == 64
    return (sm_vd)_mm512_max_pd((__m512d)a, (__m512d)b);
#elif SM_VB == 32
    return (sm_vd)_mm256_max_pd((__m256d)a, (__m256d)b);
#else
    return (sm_vd)_mm_max_pd((__m128d)a, (__m128d)b);
#endif
}
static inline sm_vd sma_min(sm_vd a, sm_vd b) {
#if SM_VB == 64
    return (sm_vd)_mm512_min_pd((__m512d)a, (__m512d)b);
#elif SM_VB == 32
    return (sm_vd)_mm256_min_pd((__m256d)a, (__m256d)b);
#else
    return (sm_vd)_mm_min_pd((__m128d)a, (__m128d)b);
#endif
}
/* m / (1 + e^(wh + wl)), |wh| <= 650 (the common case: no clamps, and Dekker's split of d
 * stays finite at the baseline; both signs of w by one formula -- for w > 0 the quotient is small and 1 + e^w has no cancellation either):
 * e^w = 2^n (p + pl), 1 + e^w = d + dl (two-sum ordered by max/min), the quotient
 * corrected by its exact residual */
static inline sm_vd sma_mdiv_fast(sm_vd m, sm_vd wh, sm_vd wl) {
    sm_vl n;
    sm_vd pl;
    sm_vd p = sma_exp_pp(wh, wl, &n, &pl);
    sm_vd sc = sma_pow2(n);
    sm_vd e = p * sc;
    sm_vd d = 1.0 + e;
    sm_vd dl = ((sma_max(e, sm_bcd(1.0)) - d) + sma_min(e, sm_bcd(1.0))) + pl * sc;
    sm_vd inv = 1.0 / d;
    sm_vd qh = m * inv;
    return qh + (sma_resid(m, qh, d) - qh * dl) * inv;
}

/* m sigmoid(vh + vl) = m / (1 + e^-v), m finite with |m| <= 2^900, |vl| <= 2^-40 |vh|,
 * vh not NaN; rounded about once (see the header comment) */
static inline sm_vd sma_msig(sm_vd m, sm_vd vh, sm_vd vl) {
    sm_vl neg = (sm_vl)vh < 0;
    sm_vd a = (sm_vd)((sm_vl)vh | SM_SIGN64);               /* -|v| */
    sm_vd al = sm_seld(neg, vl, -vl);
    sm_vl far = (sm_vl)(a < -760.0);
    a = sm_seld(far, sm_bcd(-760.0), a);
    al = sm_seld(far, sm_bcd(0.0), al);
    sm_vl n;
    sm_vd pl;
    sm_vd p = sma_exp_pp(a, al, &n, &pl);                   /* e = e^-|v| = 2^n (p + pl) */
    sm_vd sc = sma_pow2(sma_sell(n < -1000, sm_bcl(-1000), n));  /* 1 + e = 1 below */
    sm_vd e = p * sc;
    sm_vd d = 1.0 + e;
    sm_vd dl = ((1.0 - d) + e) + pl * sc;
    /* numerator: v >= 0: m; v < 0: m (p + pl) (times 2^n at the end) */
    sm_vd ml;
    sm_vd mp = sma_two_prod(m, p, &ml);
    sm_vd nh = sm_seld(neg, mp, m);
    sm_vd nl = sm_seld(neg, ml + m * pl, sm_bcd(0.0));
    sm_vd inv = 1.0 / d;
    sm_vd qh = nh * inv;
    sm_vd q = qh + ((sma_resid(nh, qh, d) + nl) - qh * dl) * inv;
    sm_vl ns = n & neg;
    return (q * sma_pow2(ns + 128)) * 0x1p-128;
}

/* ------------------------------------------------------------------ gelu_quick */
/* -1.702 = C + CL; w = x (C + CL) as a double-double */
static inline sm_vd sma_gelu_quick_fast(sm_vd x) {
    sm_vd wl;
    sm_vd wh = sma_two_prod(x, sm_bcd(-0x1.b3b645a1cac08p+0), &wl);
    wl = wl + x * -0x1.89374bc6a7efap-55;
    /* x / (1 + e^w) has x's sign; -0 would come out +0 from the correction */
    return (sm_vd)((sm_vl)sma_mdiv_fast(x, wh, wl) | ((sm_vl)x & SM_SIGN64));
}
/* a vector with |x| > 380 or NaN: those lanes by the clamped general form (x > 500: x,
 * x < -500: -0, -inf: NaN as ggml's -inf * 0, NaN: x), the others by the fast form (the
 * same bits as in any other vector) */
__attribute__((noinline)) static sm_vd sma_gelu_quick_slow(sm_vd x, sm_vl slow) {
    sm_vl ia = (sm_vl)x & 0x7fffffffffffffffLL;
    sm_vl nan = ia > 0x7ff0000000000000LL, big = ia > 0x407f400000000000LL;  /* 500 */
    sm_vd xc = sm_seld(big | nan, sm_bcd(500.0), SMA_ABS(x));
    xc = (sm_vd)((sm_vl)xc | ((sm_vl)x & SM_SIGN64));
    sm_vd vl;
    sm_vd vh = sma_two_prod(xc, sm_bcd(0x1.b3b645a1cac08p+0), &vl);
    vl = vl + xc * 0x1.89374bc6a7efap-55;
    sm_vd r = sma_msig(xc, vh, vl);
    r = sm_seld(big, (sm_vd)((sm_vl)x & (((sm_vl)x >> 63 ^ -1) | SM_SIGN64)), r);
    r = sm_seld(big & (ia == 0x7ff0000000000000LL) & ((sm_vl)x < 0), (sm_vd)sm_bcl((int64_t)0xfff8000000000000ULL), r);
    r = sm_seld(nan, x, r);
    return sm_seld(slow, r, sma_gelu_quick_fast(sm_seld(slow, sm_bcd(0.0), x)));
}
static inline sm_vd sm_gelu_quick_d(sm_vd x) {
    sm_vl slow = ((sm_vl)x & 0x7fffffffffffffffLL) > 0x4077c00000000000LL;   /* 380 */
    if (__builtin_expect(sm_anyl(slow), 0)) return sma_gelu_quick_slow(x, slow);
    return sma_gelu_quick_fast(x);
}

/* ------------------------------------------------------------------ gelu */
/* w = -2u = x (C1 + C2 x^2), C1 = -2 sqrt(2/pi), C2 = 0.044715 C1, each in two parts:
 * x^2 = s + sl exactly, C2 x^2 = ph + pl, g = C1 + C2 x^2 = gh + gl (two-sum ordered by
 * max/min of the magnitudes: both are negative), w = x g = wh + wl */
static inline sm_vd sma_gelu_w(sm_vd x, sm_vd * wl) {
    sm_vd sl;
    sm_vd s = sma_two_prod(x, x, &sl);
    sm_vd pl;
    sm_vd ph = sma_two_prod(sm_bcd(-0x1.2444f2a4d8b4bp-4), s, &pl);
    pl = pl + (-0x1.2444f2a4d8b4bp-4 * sl + 0x1.6c843a29d1c70p-61 * s);
    sm_vd gh = -0x1.9884533d43651p+0 + ph;
    sm_vd big = sma_min(ph, sm_bcd(-0x1.9884533d43651p+0));     /* the larger magnitude */
    sm_vd sml = sma_max(ph, sm_bcd(-0x1.9884533d43651p+0));
    sm_vd gl = ((big - gh) + sml) + (pl + 0x1.cbc0d30ebfd15p-54);
    sm_vd wh = sma_two_prod(x, gh, wl);
    *wl = *wl + x * gl;
    return wh;
}
static inline sm_vd sma_gelu_fast(sm_vd x) {
    sm_vd wl;
    sm_vd wh = sma_gelu_w(x, &wl);
    /* x / (1 + e^w) has x's sign; -0 would come out +0 from the correction */
    return (sm_vd)((sm_vl)sma_mdiv_fast(x, wh, wl) | ((sm_vl)x & SM_SIGN64));
}
/* |x| > 20.5 (|2u| > 650) or NaN in the vector: those lanes by the general form, x clamped
 * to +-30 (x > 30: x, x < -30: -0, -inf: NaN, NaN: x) */
__attribute__((noinline)) static sm_vd sma_gelu_slow(sm_vd x, sm_vl slow) {
    sm_vl ia = (sm_vl)x & 0x7fffffffffffffffLL;
    sm_vl nan = ia > 0x7ff0000000000000LL, big = ia > 0x403e000000000000LL;  /* 30 */
    sm_vd xc = sm_seld(big | nan, sm_bcd(30.0), SMA_ABS(x));
    xc = (sm_vd)((sm_vl)xc | ((sm_vl)x & SM_SIGN64));
    sm_vd wl;
    sm_vd wh = sma_gelu_w(xc, &wl);
    sm_vd r = sma_msig(xc, -wh, -wl);
    r = sm_seld(big, (sm_vd)((sm_vl)x & (((sm_vl)x >> 63 ^ -1) | SM_SIGN64)), r);
    r = sm_seld(big & (ia == 0x7ff0000000000000LL) & ((sm_vl)x < 0), (sm_vd)sm_bcl((int64_t)0xfff8000000000000ULL), r);
    r = sm_seld(nan, x, r);
    return sm_seld(slow, r, sma_gelu_fast(sm_seld(slow, sm_bcd(0.0), x)));
}
static inline sm_vd sm_gelu_d(sm_vd x) {
    sm_vl slow = ((sm_vl)x & 0x7fffffffffffffffLL) > 0x4034800000000000LL;   /* 20.5 */
    if (__builtin_expect(sm_anyl(slow), 0)) return sma_gelu_slow(x, slow);
    return sma_gelu_fast(x);
}

/* ------------------------------------------------------------------ softplus */
/* e = e^-|x| = 2^n (p + pl) (|x| clamped to 760; NaN lanes computed on 0);
 * n >= -60: u = 1 + e rounded, c = its rounding error (+ e's low part), u = 2^k (1 + f),
 * k in {0, 1} (u >= sqrt 2), log(1 + e) = k ln2 + log(1 + f) + c 2^-k / (1 + f), the last
 * division as (1 - 2s) (s = f / (2 + f): relative error 2 s^2 on a term below 2^-53 u);
 * log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), R a degree-6 fit (relative 1e-17);
 * n < -60: log(1 + e) = e (to 2^-60), scaled by 2^n with one rounding (subnormals). */
static inline sm_vd sm_softplus_d(sm_vd x) {
    sm_vl ix = (sm_vl)x, ia = ix & 0x7fffffffffffffffLL;
    sm_vl nan = ia > 0x7ff0000000000000LL;
    sm_vd a = (sm_vd)(ia | SM_SIGN64);                       /* -|x| */
    a = sm_seld(ia > 0x4087c00000000000LL, sm_bcd(-760.0), a);   /* 760, inf, NaN */
    a = sm_seld(nan, sm_bcd(0.0), a);
    sm_vl n;
    sm_vd pl;
    sm_vd p = sma_exp_pp(a, sm_bcd(0.0), &n, &pl);
    sm_vl tiny = n < -60;
    sm_vd sc = sma_pow2(sma_sell(tiny, sm_bcl(0), n));
    sm_vd e = p * sc;
    sm_vd u = 1.0 + e;
    sm_vd c = ((1.0 - u) + e) + pl * sc;
    sm_vl k = ((sm_vl)u - 0x3ff6a09e667f3bcdLL) >> 63;       /* -1: u < sqrt 2, 0: above */
    sm_vd dk = (sm_vd)((sm_vl)sm_bcd(1.0) & ~k);             /* 1.0 or 0.0 */
    sm_vd hk = 1.0 - 0.5 * dk;                               /* 2^-k */
    sm_vd f = u * hk - 1.0;                                  /* exact */
    c = c * hk;
    sm_vd s = f / (2.0 + f);
    sm_vd z = s * s;
    sm_vd R = 0x1.2b5f68a50d903p-3 * z + 0x1.39fdcceb4bb45p-3;
    R = R * z + 0x1.7462b91b8df65p-3;
    R = R * z + 0x1.c71c62d5e53e0p-3;
    R = R * z + 0x1.2492492dfd86cp-2;
    R = R * z + 0x1.9999999995273p-2;
    R = R * z + 0x1.5555555555558p-1;
    R = R * z;
    sm_vd hfsq = 0.5 * f * f;
    sm_vd L = dk * 0x1.62e42fefa39efp-1
              - ((hfsq - (s * (hfsq + R) + (dk * 0x1.abc9e3b39803fp-56 + c * (1.0 - (s + s)))))
                 - f);
    L = sm_seld(tiny, sm_ldexp_d(p + pl, n), L);
    sm_vd r = sm_seld(ix > 0, x + L, L);
    return sm_seld(nan, x, r);
}

/* ------------------------------------------------------------------ rows */
SM_ROW_F64(gelu, sm_gelu_d)
SM_ROW_F64(gelu_quick, sm_gelu_quick_d)
SM_ROW_F64(softplus, sm_softplus_d)

#endif
