/* ggml_cy SIMD math functions, float64 activations (issue 14 item 2): erf, gelu (ggml's
 * tanh approximation), gelu_erf, gelu_quick, softplus in double lanes. Included by
 * simd_math.h after simd_math_f64.h. Polynomial coefficients were fitted for this code
 * (Chebyshev fits in mpmath at 120-200 bits, rounded to double, checked by measurement).
 * Measured maxima (tests/test_simd_math.py, 80-bit / mpmath references, every level):
 * erf 1.17 ulp, gelu 0.76, gelu_erf 0.87, gelu_quick 0.96, softplus 0.85.
 *
 *   gelu, gelu_quick  x / (1 + e^w), w = -2 sqrt(2/pi) x (1 + 0.044715 x^2) resp.
 *          -1.702 x. For x < 0 the result has the relative error of w's absolute error
 *          (|w| up to 745): w is a double-double (x^2 exact, the constants in two parts,
 *          products with their exact errors) and e^(wh + wl) takes the low part as a
 *          shift of its reduced argument. e^w = 2^n (p + pl), 1 + e^w = d + dl, the
 *          quotient corrected by its exact residual. |w| <= 650 in the whole vector (the
 *          common case): this one formula for both signs; otherwise (noinline) the
 *          general form m sigmoid(v) on e^-|v|, scaled by 2^n last (subnormal results
 *          round once), for the lanes outside only (the others keep the fast form's bits).
 *   softplus  max(x, 0) + log1p(e), e = e^-|x| = 2^n (p + pl): 1 + e = 2^k (1 + f) with
 *          its rounding error c carried, log(1 + f) by the s = f / (2 + f) kernel
 *          (degree-6 fit in s^2) plus c / (1 + f); e < 2^-30: e (1 - e / 2).
 *   erf    |x| < 0.75: x P(x^2) (P degree 10, x c0 exact); above 1 - erfc |x|,
 *          erfc t = e^(-t^2) G(1/t) / t, t^2 a double-double, G of degree 12 on 7
 *          pieces (half octaves of t), the piece's coefficients chosen per lane.
 *   gelu_erf  x Phi(x) = x / 2 erfc(-x / sqrt 2); |x| < 0.75: x / 2 + x^2 R(x^2) with
 *          the cancelling sum a two-sum; above: e^(-x^2/2) H(1/|x|) (H of degree 13 on 8
 *          pieces), the exponent x^2 / 2 exact from x -- a rounded z = x / sqrt 2 would
 *          put z^2 2^-53 into it, ~1 ulp per 2^-53 at z = 27 -- and no division by z.
 *
 * Without FMA (the x86-64-v2 baseline) the exact products are Dekker's (Veltkamp split),
 * so every level is held to the same budget (2 ulp). Flags: the scalar long double code
 * raised none that numpy reports, nor does this (-inf gives a quiet NaN for the gelus,
 * large arguments are clamped before they can overflow, NaN lanes are compared as
 * integers). */
#ifndef GGML_CY_SIMD_MATH_F64_ACT_H
#define GGML_CY_SIMD_MATH_F64_ACT_H

#define SMA_ABS(v) ((sm_vd)((sm_vl)(v) & 0x7fffffffffffffffLL))

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
 * p + pl = (1 + em + eml) (1 + c) with em + eml = r + r^2 Q exactly (lite: eml left out) */
static inline sm_vd sma_exp_pp(sm_vd a, sm_vd al, sm_vl * n, sm_vd * pl, int lite) {
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
    /* Q by Estrin's scheme (a shorter dependency chain than Horner) */
    sm_vd r2 = r * r, r4 = r2 * r2;
    sm_vd q01 = 0x1.5555555555556p-3 * r + 0x1.0000000000001p-1, q23 = 0x1.11111111109adp-7 * r + 0x1.5555555553d4fp-5, q45 = 0x1.a01a01a7c8d47p-13 * r + 0x1.6c16c17893833p-10;
    sm_vd q67 = 0x1.71de0d9c145d0p-19 * r + 0x1.a019b8ef67c6cp-16, q89 = 0x1.af38d53857513p-26 * r + 0x1.2891a8c1d838dp-22;
    sm_vd q03 = q23 * r2 + q01, q47 = q67 * r2 + q45;
    sm_vd q = (q89 * r4 + q47) * r4 + q03;
    sm_vd tq = r2 * q;
    sm_vd em = r + tq;
    sm_vd p = 1.0 + em;
    /* c enters multiplied by e^r (it is a shift of the argument). lite: em's own rounding
     * (up to 0.3 ulp of p) left out -- 7% of gelu_quick's time, +0.2 ulp measured */
    sm_vd lo = (1.0 - p) + em;
    if (!lite) lo = lo + ((r - em) + tq);
    *pl = lo + c * p;
    return p;
}
static inline sm_vl sma_sell(sm_vl m, sm_vl a, sm_vl b) { return (a & m) | (b & ~m); }
static inline sm_vd sma_pow2(sm_vl n) { return (sm_vd)((n + 1023) << 52); }  /* n normal */
static inline sm_vd sma_max(sm_vd a, sm_vd b) {                  /* no NaN here */
#if SM_VB == 64
    return (sm_vd)_mm512_max_pd((__m512d)a, (__m512d)b);
#elif SM_VB == 32
    return (sm_vd)_mm256_max_pd((__m256d)a, (__m256d)b);
#elif defined(__SSE2__)
    return (sm_vd)_mm_max_pd((__m128d)a, (__m128d)b);
#else
    return sm_seld((sm_vl)(a > b), a, b);
#endif
}
static inline sm_vd sma_min(sm_vd a, sm_vd b) {
#if SM_VB == 64
    return (sm_vd)_mm512_min_pd((__m512d)a, (__m512d)b);
#elif SM_VB == 32
    return (sm_vd)_mm256_min_pd((__m256d)a, (__m256d)b);
#elif defined(__SSE2__)
    return (sm_vd)_mm_min_pd((__m128d)a, (__m128d)b);
#else
    return sm_seld((sm_vl)(a < b), a, b);
#endif
}
/* m / (1 + e^(wh + wl)), |wh| <= 650 (the common case: no clamps, and Dekker's split of
 * d stays finite at the baseline). Both signs of w by one formula: for w > 0 the quotient
 * is small and 1 + e^w has no cancellation either. e^w = 2^n (p + pl), 1 + e^w = d + dl
 * (a two-sum ordered by max/min), the quotient corrected by its exact residual. */
static inline sm_vd sma_mdiv_fast(sm_vd m, sm_vd wh, sm_vd wl, int lite) {
    sm_vl n;
    sm_vd pl;
    sm_vd p = sma_exp_pp(wh, wl, &n, &pl, lite);
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
    sm_vd p = sma_exp_pp(a, al, &n, &pl, 0);                   /* e = e^-|v| = 2^n (p + pl) */
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
    return (sm_vd)((sm_vl)sma_mdiv_fast(x, wh, wl, 1) | ((sm_vl)x & SM_SIGN64));
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
    return (sm_vd)((sm_vl)sma_mdiv_fast(x, wh, wl, 0) | ((sm_vl)x & SM_SIGN64));
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
 * n >= -30: u = 1 + e rounded, c = its rounding error (+ e's low part), u = 2^k (1 + f),
 * k in {0, 1} (u >= sqrt 2), log(1 + e) = k ln2 + log(1 + f) + c 2^-k / (1 + f), the last
 * division as (1 - 2s) (s = f / (2 + f): relative error 2 s^2 on a term below 2^-53 u);
 * log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), R a degree-6 fit (relative 1e-17);
 * n < -30: log(1 + e) = e (1 - e / 2), scaled by 2^n with one rounding (subnormals). */
static inline sm_vd sm_softplus_d(sm_vd x) {
    sm_vl ix = (sm_vl)x, ia = ix & 0x7fffffffffffffffLL;
    sm_vl nan = ia > 0x7ff0000000000000LL;
    sm_vd a = (sm_vd)(ia | SM_SIGN64);                       /* -|x| */
    a = sm_seld(ia > 0x4087c00000000000LL, sm_bcd(-760.0), a);   /* 760, inf, NaN */
    a = sm_seld(nan, sm_bcd(0.0), a);
    sm_vl n;
    sm_vd pl;
    sm_vd p = sma_exp_pp(a, sm_bcd(0.0), &n, &pl, 0);
    sm_vl tiny = n < -30;
    sm_vd sc = sma_pow2(sma_sell(n < -1000, sm_bcl(-1000), n));  /* e exact to 2^-1000 */
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
    /* log(1 + e) = A + Lr, A = k ln2 (hi part); x > 0: x + A as a two-sum, so that
     * x + log(1 + e) rounds once */
    sm_vd Lr = f - (hfsq - (s * (hfsq + R) + (dk * 0x1.abc9e3b39803fp-56 + c * (1.0 - (s + s)))));
    sm_vd A = dk * 0x1.62e42fefa39efp-1;
    sm_vd e1;
    sm_vd s1 = sma_two_sum(sm_seld(ix > 0, x, sm_bcd(0.0)), A, &e1);
    sm_vd r = s1 + (e1 + Lr);
    /* e < 2^-30: log(1 + e) = e (1 - e / 2) to 2^-62; 2^n once (subnormals) -- the log
     * form would round c, as large as the result below e = 2^-52, several times */
    sm_vd lt = ((p + (pl - 0.5 * p * e)) * sma_pow2(n + 128)) * 0x1p-128;
    r = sm_seld(tiny, sm_seld(ix > 0, x + lt, lt), r);
    return sm_seld(nan, x, r);
}

/* ------------------------------------------------------------------ erf, gelu_erf */
/* erf: G(y) = t e^(t^2) erfc t, y = 1 / t, per piece of t ([0.75, 1), [1, 1.5),
 * [1.5, 2), [2, 3), [3, 4), [4, 6), [6, 8], the last twice): the centre c of the piece in y,
 * the low part of c0, then c0 .. c12 of G = sum ck (y - c)^k (relative error 8e-17) */
static const double sma_erfc_tab[15][8] __attribute__((aligned(64))) = {
    {0x1.2aaaaaaaaad55p+0, 0x1.aaaaaaaaab000p-1, 0x1.2aaaaaaaaad55p-1, 0x1.aaaaaaaaab000p-2, 0x1.2aaaaaaaaad55p-2, 0x1.aaaaaaaaab000p-3, 0x1.2aaaaaaaaad55p-3, 0x1.2aaaaaaaaad55p-3},
    {-0x1.0c42d80fc1257p-56, -0x1.f1d95e38141c2p-57, -0x1.3ff1e2f88809bp-56, 0x1.1e008d02906bbp-55, -0x1.f0cdfb4ad3a7ep-55, -0x1.7315217077862p-56, -0x1.57f6fa95b80dbp-55, -0x1.57f6fa95b80dbp-55},
    {0x1.9c8946da3c38ep-2, 0x1.d125933ce9721p-2, 0x1.fc96239a8a5d4p-2, 0x1.0c7dc23b7575bp-1, 0x1.15e2b7aacd23fp-1, 0x1.1af73e2ac4277p-1, 0x1.1de2f1d9ce8c8p-1, 0x1.1de2f1d9ce8c8p-1},
    {-0x1.2316f949ab376p-3, -0x1.522d15bc21720p-3, -0x1.5e5e9e35879d5p-3, -0x1.445591ab6960ap-3, -0x1.0ef21f69712c2p-3, -0x1.ab49165c6e120p-4, -0x1.3d11e3f3a12d6p-4, -0x1.3d11e3f3a12d6p-4},
    {0x1.3094f01d019e2p-5, 0x1.c2f239715bb32p-6, -0x1.6d934c3617f05p-7, -0x1.23463702a0647p-4, -0x1.20658eb30a858p-3, -0x1.8ffa692fa7e53p-3, -0x1.e012ef3bcc899p-3, -0x1.e012ef3bcc899p-3},
    {-0x1.03eab8a97fecep-11, 0x1.a80ca073c55ecp-6, 0x1.602e01dafac9fp-4, 0x1.4289bde311d01p-3, 0x1.af773174409d8p-3, 0x1.c039365d6b0b7p-3, 0x1.8a6599ee0b50fp-3, 0x1.8a6599ee0b50fp-3},
    {-0x1.1bc9d8aec3570p-7, -0x1.2be39fe7bf89dp-5, -0x1.6ac066fc277d2p-4, -0x1.ea257406a8ebfp-4, -0x1.317c32d738dbcp-4, 0x1.43be26389a844p-5, 0x1.697ced2ebed4ap-3, 0x1.697ced2ebed4ap-3},
    {0x1.0dd94c4d30a97p-7, 0x1.daf2249325740p-6, 0x1.a2096f1b8193cp-5, 0x1.4bbd2775f0f43p-9, -0x1.683e7ff16d358p-3, -0x1.80aac86b5d4c5p-2, -0x1.efbb554d952fdp-2, -0x1.efbb554d952fdp-2},
    {-0x1.68414331bbf0dp-8, -0x1.0aa52df50619bp-6, -0x1.e8bed5ae753dep-12, 0x1.08369de5aeb30p-3, 0x1.6cef82b7fbc2bp-2, 0x1.953ef21018edcp-2, 0x1.f666e39136bf7p-4, 0x1.f666e39136bf7p-4},
    {0x1.869cf14e1822cp-9, 0x1.3df6b8dbdee2cp-8, -0x1.5d8d8c601f753p-5, -0x1.a15080e11b9abp-3, -0x1.01b8baf648c2ep-2, 0x1.e4da926047c96p-3, 0x1.0ca0c37544755p+0, 0x1.0ca0c37544755p+0},
    {-0x1.514a872063551p-10, 0x1.7dd097475c62fp-9, 0x1.0c570d6c4f863p-4, 0x1.521ad32f79c74p-3, -0x1.faa2dd326fc28p-3, -0x1.4ebf31e1feb26p+0, -0x1.b870abc5317e5p+0, -0x1.b870abc5317e5p+0},
    {0x1.65c96ef147c09p-12, -0x1.bdf159a0d86dcp-8, -0x1.023423b82e951p-4, 0x1.291f3235ede29p-8, 0x1.ebfc3b8c5b090p-1, 0x1.9717f543b3ce8p+0, -0x1.9d59565d4dbd3p-1, -0x1.9d59565d4dbd3p-1},
    {0x1.914928dbaacf6p-14, 0x1.f39810b4e75efp-8, 0x1.3297f5f87c730p-5, -0x1.0caf5167cd4dap-2, -0x1.4b1a583c7afcfp+0, 0x1.ae2a760f5cb7cp-1, 0x1.ce69dc578c0f4p+2, 0x1.ce69dc578c0f4p+2},
    {-0x1.0da2398d7c737p-12, -0x1.b0b937f78fd24p-8, 0x1.4e48c23d7d0b4p-8, 0x1.00c38f314c11ep-1, 0x1.45926dccf64e3p-2, -0x1.a11dec8d0d667p+2, -0x1.24fc888260d2dp+3, -0x1.24fc888260d2dp+3},
    {0x1.08723adb75a85p-12, 0x1.16eab4329ed3dp-8, -0x1.9307b762c9306p-5, -0x1.10a44ecd110c1p-1, 0x1.4044f92b699d0p+1, 0x1.4d1e39fb69157p+3, -0x1.93c4ab0897c3fp+3, -0x1.93c4ab0897c3fp+3},
};
/* gelu_erf: H(v) = u e^(u^2 / 2) erfc(u / sqrt 2) / 2, v = 1 / u, per piece of
 * t = u / sqrt 2 ([0.53, 0.75), [0.75, 1), [1, 1.5), [1.5, 2), [2, 3), [3, 4), [4, 6),
 * [6, 27.6]), laid out as above, c0 .. c13 (relative error 1.3e-17) */
static const double sma_gerf_tab[16][8] __attribute__((aligned(64))) = {
    {0x1.2358a222a6c64p+0, 0x1.a660e223f1edfp-1, 0x1.2db2eaabf6045p-1, 0x1.a660e223f1edfp-2, 0x1.2db2eaabf6045p-2, 0x1.a660e223f1edfp-3, 0x1.2db2eaabf6045p-3, 0x1.25df37247bd84p-4},
    {0x1.c9a3d1ad1eaf8p-57, -0x1.436b65325b711p-62, 0x1.9ca25739260f6p-60, 0x1.f45c5782f9a15p-56, 0x1.2e56a0ca838f5p-57, 0x1.ef97de23c6efbp-56, 0x1.c76000add427bp-59, -0x1.4a5ad78ffff46p-57},
    {0x1.f67032a4c9aa2p-3, 0x1.23b50927783f5p-2, 0x1.48e88f9579421p-2, 0x1.679ffcae985abp-2, 0x1.7bb436b9eaeb8p-2, 0x1.88fd56ca82e47p-2, 0x1.902c8f46b19e7p-2, 0x1.96721abfee732p-2},
    {-0x1.c81d984a28f9bp-4, -0x1.2316f949ab380p-3, -0x1.522d15bc2177dp-3, -0x1.5e5e9e35879d4p-3, -0x1.445591ab69607p-3, -0x1.0ef21f69712c2p-3, -0x1.ab49165c6e120p-4, -0x1.c7007ede22c68p-5},
    {0x1.68dd70b9c7853p-5, 0x1.aebe62e6f2ecbp-5, 0x1.3eddfacd86992p-5, -0x1.0280367c7a445p-6, -0x1.9bec8d6901e80p-4, -0x1.97dac2eb8ad28p-3, -0x1.1ad3c8443d94ep-2, -0x1.74f2de4a42ef7p-2},
    {-0x1.985d9d0142e57p-7, -0x1.03eab8a6fd493p-10, 0x1.a80ca0747d0f1p-5, 0x1.602e01daf8b2bp-3, 0x1.4289bde30f33bp-2, 0x1.af77317440b18p-2, 0x1.c039365d6b0abp-2, 0x1.369bb0d69fedbp-2},
    {-0x1.8e1006a34fdfep-11, -0x1.915665ea28045p-6, -0x1.a81b7906b7692p-4, -0x1.00810c702df40p-2, -0x1.5a95f5438b5d3p-2, -0x1.b0057033c1296p-3, 0x1.c9d7671bab732p-4, 0x1.9b1b6117b7a14p-1},
    {0x1.4c985703c3aa5p-8, 0x1.0dd94c1ffb957p-5, 0x1.daf223c4c173dp-4, 0x1.a2096f2e542f4p-3, 0x1.4bbd2a64228c3p-7, -0x1.683e7ff2d4bffp-1, -0x1.80aac86b56488p+0, -0x1.dce1f1c7dec71p+0},
    {-0x1.65e65cabcd6bbp-8, -0x1.fd7a37c0beb97p-6, -0x1.7917e2a64fb4ap-4, -0x1.59985bb53d202p-9, 0x1.75a772e3d6a9ep-1, 0x1.020c65db32d52p+1, 0x1.1e8d57200f758p+1, -0x1.9db286946082fp+0},
    {0x1.20c0cb2e56347p-8, 0x1.869d4885f6219p-6, 0x1.3df84681f65fdp-5, -0x1.5d8db0af424cfp-2, -0x1.a1509771904bcp+0, -0x1.01b8b58b7c009p+1, 0x1.e4da91f1a29a1p+0, 0x1.849254be595f5p+3},
    {-0x1.91420b4dc4920p-9, -0x1.dd0035b236f50p-7, 0x1.0dfbb866fc568p-5, 0x1.7b7d6f6d4a1f4p-1, 0x1.de271f093fa37p+0, -0x1.663eef0f9c09dp+1, -0x1.d9675298ccda9p+3, -0x1.e0ec90dbf5523p+2},
    {0x1.efb5de2e41789p-10, 0x1.6525d9a60b8d9p-8, -0x1.be4e79c588dc6p-4, -0x1.02231dd59635dp+0, 0x1.2bc31da32e878p-4, 0x1.ebf2134c78816p+3, 0x1.97182a08d90dbp+4, -0x1.250f16571ed79p+6},
    {-0x1.0d660e9a059a0p-10, 0x1.1b87e721e22efp-9, 0x1.614678a705cb5p-3, 0x1.b1a0ddc220e38p-1, -0x1.7c0198e3634ffp+2, -0x1.d441a6a08262bp+4, 0x1.3034747dbd3bep+4, 0x1.78e978eafb544p+7},
    {0x1.def1ae473c4f3p-12, -0x1.f673bfb83c896p-8, -0x1.a640ef698804dp-3, 0x1.a766aa24a13abp-4, 0x1.fcc7f32651e6dp+3, 0x1.6a235398d38f7p+3, -0x1.a13600f61c98ap+7, 0x1.08bb080d96394p+8},
    {-0x1.904593ab7d4f7p-14, 0x1.774f4e178fe87p-7, 0x1.8a3b5236f37f8p-3, -0x1.1def52352cf71p+1, -0x1.80e3aadf1239ap+4, 0x1.c586e0035ea74p+6, 0x1.d656d443886a0p+8, -0x1.0f691cacbbaffp+11},
    {-0x1.637ca3327fe34p-14, -0x1.97e2022b1e8b7p-7, -0x1.cfa51650c9220p-4, 0x1.53812615929b3p+2, 0x1.a434d7a59094ap+3, -0x1.9509ef1ffaccfp+8, 0x1.0dcde6cde6ba5p+4, 0x1.f115c672d3ecfp+10},
};
/* erf x = x P(x^2), |x| < 0.75, P degree 10 (c0 first); c0's low part 0x1.0ba72caf836ddp-56 */
#define SMA_ERF_P {0x1.20dd750429b6dp+0, -0x1.812746b0379e0p-2, 0x1.ce2f21a0424c3p-4, -0x1.b82ce31257412p-6, 0x1.565bcd03657c0p-8, -0x1.c02db1220cfe6p-11, 0x1.f9a2afa3a8f86p-14, -0x1.f4c5debf1228ap-17, 0x1.b90ecd4aeec12p-20, -0x1.564f71bbc0d35p-23, 0x1.8a312cb07e6ccp-27}
/* gelu_erf = x / 2 + x^2 R(x^2), |x| < 0.75, R degree 9; c0's low part -0x1.cc42d254509d4p-56 */
#define SMA_GERF_R {0x1.9884533d43651p-2, -0x1.1058377e2cee0p-4, 0x1.46d042976908fp-7, -0x1.37403f6b9252fp-10, 0x1.e42b0d476d198p-14, -0x1.3ce8f889a5533p-17, 0x1.658991852abc1p-21, -0x1.620bc60b503b1p-25, 0x1.364f3f5baee13p-29, -0x1.b5d84e1b4c0ebp-34}

/* per-lane choice of one of 8 table entries (the piece's coefficient): one permute with
 * AVX-512, two dword permutes and a blend with AVX2, two loads with SSE -- the same
 * values, so the levels agree */
typedef struct {
    sm_vl idx;
#if SM_VB == 32
    __m256i dw;
    __m256d hi;
#endif
} sma_sel;
static inline sma_sel sma_sel_make(sm_vl idx) {                 /* idx in [0, 7] */
    sma_sel r;
    r.idx = idx;
#if SM_VB == 32
    sm_vl j = (idx & 3) * 2;
    r.dw = (__m256i)(j | ((j + 1) << 32));
    r.hi = (__m256d)(idx > 3);
#endif
    return r;
}
static inline sm_vd sma_pick(const double * tab8, sma_sel s) {
#if SM_VB == 64
    return (sm_vd)_mm512_permutexvar_pd((__m512i)s.idx, _mm512_load_pd(tab8));
#elif SM_VB == 32
    __m256 a = _mm256_permutevar8x32_ps(_mm256_load_ps((const float *)tab8), s.dw);
    __m256 b = _mm256_permutevar8x32_ps(_mm256_load_ps((const float *)(tab8 + 4)), s.dw);
    return (sm_vd)_mm256_blendv_pd((__m256d)a, (__m256d)b, s.hi);
#else
    sm_vd r;
    for (int k = 0; k < SM_ND; k++) r[k] = tab8[s.idx[k]];
    return r;
#endif
}
/* sum ck w^k, k <= deg, over the piece's table rows (c0 in row 2); Horner (Estrin's
 * scheme measured 5% slower here: the permutes, not the chain, bound it) */
static inline sm_vd sma_piece_poly(const double (*tab)[8], int deg, sma_sel s, sm_vd w) {
    sm_vd K = sma_pick(tab[deg + 2], s);
    for (int j = deg + 1; j >= 2; j--) K = K * w + sma_pick(tab[j], s);
    return K;
}

/* erf: |x| < 0.75: x P(x^2) with P's c0 in two parts (x c0 exact); above 1 - erfc t
 * (t = |x| clamped to [0.75, 6]: erf = 1 in double beyond 5.93), erfc t = e^(-t^2) G(y) y,
 * t^2 exact as a double-double, y = 1 / t (erfc is needed to 2^-54 relative only:
 * erfc < 0.29 against erf's ulp) */
static inline sm_vd sm_erf_d(sm_vd x) {
    sm_vl ix = (sm_vl)x, ia = ix & 0x7fffffffffffffffLL;
    sm_vl small = ia < 0x3fe8000000000000LL;                 /* 0.75 */
    sm_vd xs = sm_seld(small, x, sm_bcd(0.0));
    sm_vd z = xs * xs;
    static const double P[] = SMA_ERF_P;
    sm_vd q = P[10] * z + P[9];
    for (int j = 8; j >= 1; j--) q = q * z + P[j];
    sm_vd rl;
    sm_vd rh = sma_two_prod(xs, sm_bcd(P[0]), &rl);
    sm_vd rs = rh + (rl + xs * (z * q + 0x1.0ba72caf836ddp-56));
    /* t in [0.75, 6]; inf and NaN lanes: 6 */
    sm_vd t = (sm_vd)sma_sell(ia > 0x4018000000000000LL, (sm_vl)sm_bcd(6.0), ia);
    t = sm_seld(small, sm_bcd(0.75), t);
    sm_vd y = 1.0 / t;
    sma_sel sl = sma_sel_make((((sm_vl)t) >> 51) - 0x7fd);
    sm_vd G = sma_piece_poly(sma_erfc_tab, 12, sl, y - sma_pick(sma_erfc_tab[0], sl));
    sm_vd tl;
    sm_vd th = sma_two_prod(t, t, &tl);
    sm_vl n;
    sm_vd pl;
    sm_vd p = sma_exp_pp(-th, -tl, &n, &pl, 0);
    sm_vd ec = ((p + pl) * (G * y)) * sma_pow2(n);          /* n >= -53 */
    sm_vd rb = 1.0 - ec;
    rb = (sm_vd)((sm_vl)rb | (ix & SM_SIGN64));
    sm_vd r = sm_seld(small, rs, rb);
    r = (sm_vd)((sm_vl)r | (ix & SM_SIGN64));                /* x's sign (-0 too) */
    return sm_seld(ia > 0x7ff0000000000000LL, x, r);
}

/* gelu_erf = x Phi(x) = x / 2 erfc(-x / sqrt 2).
 * |x| < 0.75: x / 2 + x^2 R(x^2), x^2 exact, R = r0 + x^2 R1 with r0 x^2 exact and r0 in
 * two parts: the sum x / 2 + r0 x^2 (cancelling for x < 0) is a two-sum, so only the
 * small terms round before the last addition.
 * |x| >= 0.75, u = |x| (clamped to 38.9, where the result is below the subnormals):
 * x / 2 erfc(u / sqrt 2) = e^(-u^2/2) H(1 / u) for x < 0 (x Phi(x) = -that; 1 - Phi(x)
 * for x > 0: x - that) -- no division by u or by sqrt 2 anywhere (H takes them), the
 * exponent u^2 / 2 exact from u (never from a rounded u / sqrt 2), H's last step and the
 * product e H as double-doubles, the scaling by 2^n last (subnormal results round once) */
static inline sm_vd sm_gelu_erf_d(sm_vd x) {
    sm_vl ix = (sm_vl)x, ia = ix & 0x7fffffffffffffffLL;
    sm_vl nan = ia > 0x7ff0000000000000LL;
    sm_vl small = ia < 0x3fe8000000000000LL;                 /* 0.75 */
    sm_vl neg = ix < 0;
    sm_vd xs = sm_seld(small, x, sm_bcd(0.0));
    sm_vd sl;
    sm_vd s = sma_two_prod(xs, xs, &sl);
    static const double R[] = SMA_GERF_R;
    sm_vd q = R[9] * s + R[8];
    for (int j = 7; j >= 1; j--) q = q * s + R[j];
    sm_vd pl0;
    sm_vd ph0 = sma_two_prod(s, sm_bcd(R[0]), &pl0);
    sm_vd hx = 0.5 * xs;
    sm_vd ah = hx + ph0;
    sm_vd ae = (hx - ah) + ph0;                              /* |x / 2| >= r0 x^2 */
    sm_vd rs = ah + (ae + ((pl0 + sl * R[0]) + s * (-0x1.cc42d254509d4p-56 + s * q)));
    /* u in [0.75, 38.9]; inf and NaN lanes: 38.9 */
    sm_vd u = (sm_vd)sma_sell(ia > 0x4043733333333333LL, (sm_vl)sm_bcd(38.9), ia);
    u = sm_seld(small, sm_bcd(0.75), u);
    sm_vd v = 1.0 / u;
    sm_vl pi = ((sm_vl)(u * 0x1.6a09e667f3bcdp-1) >> 51) - 0x7fc;   /* piece of u / sqrt 2 */
    sma_sel sel = sma_sel_make(sma_sell(pi > 7, sm_bcl(7), pi));
    sm_vd w = v - sma_pick(sma_gerf_tab[0], sel);
    sm_vd K = sma_piece_poly(sma_gerf_tab + 1, 12, sel, w);  /* rows 3.. : c1 .. c13 */
    sm_vd al;
    sm_vd a = sma_two_prod(w, K, &al);
    sm_vd c0 = sma_pick(sma_gerf_tab[2], sel);
    sm_vd Hh = c0 + a;                                       /* |c0| > |a| on each piece */
    sm_vd Hl = ((c0 - Hh) + a) + (al + sma_pick(sma_gerf_tab[1], sel));
    sm_vd ql;
    sm_vd qh = sma_two_prod(u, u, &ql);
    sm_vl n;
    sm_vd pl;
    sm_vd p = sma_exp_pp(-0.5 * qh, -0.5 * ql, &n, &pl, 0);
    sm_vd ml;
    sm_vd mh = sma_two_prod(p, Hh, &ml);
    ml = ml + (p * Hl + pl * Hh);
    /* x < 0: -(mh + ml) 2^n */
    sm_vd rn = (-(mh + ml) * sma_pow2(n + 128)) * 0x1p-128;
    /* x > 0: x - 2^n (mh + ml) (2^n clamped: below 2^-1000 the term is lost in x) */
    sm_vd sc = sma_pow2(sma_sell(n < -1000, sm_bcl(-1000), n));
    sm_vd dh = mh * sc;
    sm_vd xp = sm_seld(small, sm_bcd(0.75), u);             /* x > 0 lanes: u = x */
    sm_vd rp = xp - dh;
    rp = rp + (((xp - rp) - dh) - ml * sc);
    rp = sm_seld(ia > 0x4043733333333333LL, x, rp);         /* x > 38.9, inf: x */
    sm_vd r = sm_seld(small, rs, sm_seld(neg, rn, rp));
    r = (sm_vd)((sm_vl)r | (ix & SM_SIGN64));                /* x's sign (-0 too) */
    r = sm_seld(ix == (int64_t)0xfff0000000000000ULL, (sm_vd)sm_bcl((int64_t)0xfff8000000000000ULL), r);
    return sm_seld(nan, x, r);
}

/* ------------------------------------------------------------------ rows */
SM_ROW_F64(gelu, sm_gelu_d)
SM_ROW_F64(gelu_quick, sm_gelu_quick_d)
SM_ROW_F64(softplus, sm_softplus_d)
#if !SM_F64_512                  /* avx512: simd_math_exp64.h */
SM_ROW_F64(erf, sm_erf_d)
#endif
SM_ROW_F64(gelu_erf, sm_gelu_erf_d)

#endif
