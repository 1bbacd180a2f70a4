/* ggml_cy SIMD math functions, part 2 (issue 14 item 2), included by simd_math.h (which
 * defines the vector types and helpers used here). float32: sin, cos, tanh, expm1, log1p,
 * log2 in float lanes (sin/cos reduce in double lanes), erf, gelu, gelu_erf, gelu_quick,
 * softplus and pow in double lanes rounded once; the double-lane exp core is the float64
 * exp's too (simd_math_f64.h). Polynomial coefficients were fitted for this code (weighted
 * least squares iterated toward minimax, tools/ none: see tests/test_simd_math.py for the
 * budgets they meet). */
#ifndef GGML_CY_SIMD_MATH_MORE_H
#define GGML_CY_SIMD_MATH_MORE_H

static inline sm_vd sm_bcd(double v) {
    sm_vd r;
    for (int k = 0; k < SM_ND; k++) r[k] = v;
    return r;
}
static inline sm_vl sm_bcl(int64_t v) {
    sm_vl r;
    for (int k = 0; k < SM_ND; k++) r[k] = v;
    return r;
}
#define SM_UGTL(a, b) ((sm_vl)((sm_vul)(a) > (uint64_t)(b)))

/* ------------------------------------------------------------------ exp core (double) */
/* ln 2 = LN2HID + LN2LOD with LN2HID's last 21 bits zero: n * LN2HID exact for |n| < 2^21 */
#define SM_EXP_LN2HI 0x1.62e42feep-1
#define SM_EXP_LN2LO 0x1.a39ef35793c76p-33

/* (e^r - 1 - r) / r^2 on |r| <= ln2/2: a degree-9 Chebyshev fit made for this code (mpmath,
 * 120 bits; the error it adds to e^r is below 1.3e-17, 0.06 ulp), two multiply-adds fewer
 * than the degree-11 Taylor polynomial it replaced */
#define SM_EXPM1_Q(r) ({                                                                  \
    sm_vd q_ = 0x1.af38a9b0ec855p-26 * (r) + 0x1.289185613a3d6p-22;                     \
    q_ = q_ * (r) + 0x1.71de0dae63bb3p-19;                                              \
    q_ = q_ * (r) + 0x1.a019b90d2ae7ap-16;                                              \
    q_ = q_ * (r) + 0x1.a01a01a7c41d5p-13;                                              \
    q_ = q_ * (r) + 0x1.6c16c1788bd90p-10;                                              \
    q_ = q_ * (r) + 0x1.11111111109b3p-7;                                               \
    q_ = q_ * (r) + 0x1.5555555553d63p-5;                                               \
    q_ = q_ * (r) + 0x1.5555555555556p-3;                                               \
    q_ * (r) + 0x1.0000000000001p-1; })

/* e^(x + xl) - 1 - r split: returns em = e^r - 1 and n with e^(x+xl) = 2^n (1 + em);
 * x in [-746, 710], |xl| <= 2^-40 |x| (an optional low part of the argument) */
static inline sm_vd sm_expm1_core_d(sm_vd x, sm_vd xl, sm_vl * n) {
    sm_vd t = x * 0x1.71547652b82fep+0 + SM_MAGICD;
    sm_vd fn = t - SM_MAGICD;
    *n = (sm_vl)t - (sm_vl)sm_bcd(SM_MAGICD);
    sm_vd rh = x - fn * SM_EXP_LN2HI;                   /* exact */
    sm_vd r = rh - fn * SM_EXP_LN2LO;
    sm_vd c = ((rh - r) - fn * SM_EXP_LN2LO) + xl;     /* what r lost, plus the low part */
    sm_vd q = SM_EXPM1_Q(r);
    sm_vd tq = (r * r) * q + c;
    return r + tq;
}
/* the same with the rounding of the last addition returned in *lo (em + lo = r + tq) */
static inline sm_vd sm_expm1_core2_d(sm_vd x, sm_vl * n, sm_vd * lo) {
    sm_vd t = x * 0x1.71547652b82fep+0 + SM_MAGICD;
    sm_vd fn = t - SM_MAGICD;
    *n = (sm_vl)t - (sm_vl)sm_bcd(SM_MAGICD);
    sm_vd rh = x - fn * SM_EXP_LN2HI;
    sm_vd r = rh - fn * SM_EXP_LN2LO;
    sm_vd c = (rh - r) - fn * SM_EXP_LN2LO;
    sm_vd q = SM_EXPM1_Q(r);
    sm_vd tq = (r * r) * q + c;
    sm_vd em = r + tq;
    *lo = (r - em) + tq;
    return em;
}
/* 2^n (1 + em) for n in [-1074, 1024]; one rounding in the normal range */
static inline sm_vd sm_exp_scale_d(sm_vd em, sm_vl n) {
    sm_vl n1 = n >> 1;
    sm_vd s1 = (sm_vd)((n1 + 1023) << 52), s2 = (sm_vd)((n - n1 + 1023) << 52);
    return ((1.0 + em) * s1) * s2;
}

/* ------------------------------------------------------------------ sin, cos (f32) */
/* x = n pi + r (cosine: x = (n + 1/2) pi + r) in double lanes, pi in a 33-bit and a
 * 53-bit part (n * PI_1 exact for |n| < 2^20, so r is exact but for one rounding), one
 * odd polynomial of sin on |r| <= pi/2 (relative error 7.6e-9), sign (-1)^n (cosine:
 * (-1)^(n+1)), one rounding to float: within 0.65 ulp. |x| >= 2^17, inf, NaN: the C
 * library in double. */
#define SM_PI_1 0x1.921fb544p+1
#define SM_PI_1T 0x1.0b4611a626331p-33
#define SM_1_PI 0x1.45f306dc9c883p-2

static inline sm_vd sm_sinpi_d(sm_vd x, int cosine) {
    sm_vd u = x * SM_1_PI;
    if (cosine) u = u - 0.5;
    sm_vd t = u + SM_MAGICD;
    sm_vd fn = t - SM_MAGICD;
    sm_vl q = (sm_vl)t - (sm_vl)sm_bcd(SM_MAGICD) + cosine;
    if (cosine) fn = fn + 0.5;
    sm_vd r = x - fn * SM_PI_1;
    r = r - fn * SM_PI_1T;
    sm_vd z = r * r;
    sm_vd p = 0x1.5e2a4b0447ab9p-19 * z - 0x1.9f781affc8925p-13;
    p = p * z + 0x1.110f029957ddep-7;
    p = p * z - 0x1.55554d01b563bp-3;
    sm_vd s = (r * z) * p + r;
    return (sm_vd)((sm_vul)s ^ ((sm_vul)(q & 1) << 63));
}

/* the lanes with |x| >= 2^17, inf or NaN: the C library in double (out of line) */
__attribute__((noinline, cold)) static void sm_sincos_big(const sm_vfh * xf, sm_vfh * r,
                                                          int cosine) {
    for (int k = 0; k < SM_ND; k++) {
        float v = (*xf)[k];
        uint32_t b;
        memcpy(&b, &v, 4);
        if ((b & 0x7fffffffu) >= 0x48000000u)
            (*r)[k] = (float)(cosine ? cos((double)v) : sin((double)v));
    }
}

static inline sm_vfh sm_sincosf_h(sm_vfh xf, int cosine) {
    sm_vih ia = (sm_vih)xf & 0x7fffffff;
    sm_vih big = ia >= 0x48000000;                       /* |x| >= 2^17, inf, NaN */
    sm_vd x = __builtin_convertvector(xf, sm_vd);
    sm_vl bigl = __builtin_convertvector(big, sm_vl);
    int any_big = sm_anyl(bigl);
    if (any_big) x = sm_seld(bigl, (sm_vd){0}, x);
    sm_vfh r = __builtin_convertvector(sm_sinpi_d(x, cosine), sm_vfh);
    if (!cosine) {                    /* sin x = x below 2^-12 (in float): keeps -0's sign */
        sm_vih tiny = ia < 0x39800000;
        r = (sm_vfh)(((sm_vih)xf & tiny) | ((sm_vih)r & ~tiny));
    }
    if (__builtin_expect(any_big, 0))
        sm_sincos_big(&xf, &r, cosine);
    return r;
}
static inline sm_vfh sm_sinf_h(sm_vfh x) { return sm_sincosf_h(x, 0); }
static inline sm_vfh sm_cosf_h(sm_vfh x) { return sm_sincosf_h(x, 1); }

/* ------------------------------------------------------------------ expm1 (float) */
/* x finite in [-87, 86.5]: n = round(x / ln2), r = x - n ln2 (+ the rounding error c),
 * e^r - 1 = r + r^2 Q(r) (degree 5, relative 2.4e-10), e^x - 1 = 2^n (e^r - 1) + (2^n - 1)
 * (2^n - 1 exact for |n| <= 24; beyond, the term it loses is below half an ulp) */
static inline sm_vf sm_expm1f_core2(sm_vf x, sm_vf * lo_out) {
    sm_vf t = x * SM_LOG2E + SM_MAGIC;
    sm_vf fn = t - SM_MAGIC;
    sm_vi n = (sm_vi)t - (sm_vi)sm_bcf(SM_MAGIC);
    sm_vf rh = x - fn * SM_LN2HI;                       /* exact */
    sm_vf r = rh - fn * SM_LN2LO;
    sm_vf c = (rh - r) - fn * SM_LN2LO;
    sm_vf q = 0x1.a03366p-13f * r + 0x1.6d71eep-10f;
    q = q * r + 0x1.111188p-7f;
    q = q * r + 0x1.5554b2p-5f;
    q = q * r + 0x1.555554p-3f;
    q = q * r + 0.5f;
    sm_vf tq = (r * r) * q + c;
    sm_vf em = r + tq;
    sm_vf eml = (r - em) + tq;                          /* em + eml = r + tq (|r| > |tq|) */
    sm_vf s = sm_pow2i(n);
    sm_vi tiny = ((sm_vi)x & 0x7fffffff) < 0x33000000;  /* |x| < 2^-25: x (keeps -0) */
    sm_vf P = s * em, Q = s - 1.0f;                     /* exact for n <= 24 */
    sm_vf hi = P + Q;                                   /* two-sum */
    sm_vf bb = hi - P;
    sm_vf lo = ((P - (hi - bb)) + (Q - bb)) + (((s - Q) - 1.0f) + s * eml);
    if (lo_out) {                            /* e^x - 1 ~ hi + lo (lo: em's rounding) */
        *lo_out = sm_self(tiny, sm_bcf(0.0f), lo);
        return sm_self(tiny, x, hi);
    }
    return sm_self(tiny, x, hi + lo);
}
#if defined(__FMA__)
/* The row's form with FMA: e^x - 1 = 2^n (e^r - 1) + (2^n - 1) as one fused multiply-add
 * (2^n - 1 exact for n >= -24, and a rounding below half an ulp beyond), r without its
 * correction term: within 2 ulp (numpy's own float32 expm1 here: 2.2), 1.5x the speed of
 * the compensated two-sum form below (0.82 ulp), which stays for the baseline. */
static inline __attribute__((always_inline)) sm_vf sm_expm1f_fma(sm_vf x) {
    sm_vf t = x * SM_LOG2E + SM_MAGIC;
    sm_vf fn = t - SM_MAGIC;
    sm_vf r = (x - fn * SM_LN2HI) - fn * SM_LN2LO;
    sm_vf q = 0x1.a03366p-13f * r + 0x1.6d71eep-10f;
    q = q * r + 0x1.111188p-7f;
    q = q * r + 0x1.5554b2p-5f;
    q = q * r + 0x1.555554p-3f;
    q = q * r + 0.5f;
    sm_vf em = (r * r) * q + r;
#if SM_VB == 64
    /* 2^n as one vscalefps (n = fn, an integer): two integer uops fewer than from t's bits */
    sm_vf s = (sm_vf)_mm512_scalef_ps((__m512)sm_bcf(1.0f), (__m512)fn);
#else
    sm_vf s = sm_pow2i((sm_vi)t - (sm_vi)sm_bcf(SM_MAGIC));
#endif
    return s * em + (s - 1.0f);
}
/* |x| < 2^-25: x itself (the sum above makes +0 of -0) */
static inline sm_vf sm_expm1f_core(sm_vf x) {
    return sm_self(((sm_vi)x & 0x7fffffff) < 0x33000000, x, sm_expm1f_fma(x));
}
#else
static inline sm_vf sm_expm1f_core(sm_vf x) { return sm_expm1f_core2(x, 0); }
#endif

/* always_inline: with more SIMD kernels in the same module GCC stopped inlining this into
 * the row loop (an out-of-line call per vector: expm1 float32 1e5 went 28 -> 35 us on one
 * VM core, 2026-11-26); inlined again it is back to 28. */
static inline __attribute__((always_inline)) sm_vf sm_expm1f(sm_vf x) {
    sm_vi ix = (sm_vi)x, ia = ix & 0x7fffffff;
#if defined(__FMA__)
    /* the common vector: every |x| in [2^-25, 86.5] (one unsigned compare), no selects */
    if (!sm_any((sm_vi)((sm_vu)(ia - 0x33000000) > (sm_vu)sm_bci(0x42ad0000 - 0x33000000))))
        return sm_expm1f_fma(x);
#endif
    sm_vi spec = ia > 0x42ad0000;                       /* |x| > 86.5, inf, NaN */
    if (!sm_any(spec)) return sm_expm1f_core(x);
    sm_vi neg = ix < 0;
    sm_vf xc = sm_self(spec, sm_bcf(0.0f), x);
    sm_vf r = sm_expm1f_core(xc);
    /* x > 86.5: e^x - 1 = e^x (overflow raised by exp); x < -86.5: -1; NaN: NaN */
    sm_vf e = sm_expf(sm_self(spec & ~neg, x, sm_bcf(0.0f)));
    r = sm_self(spec & ~neg, e, r);
    r = sm_self(spec & neg, sm_bcf(-1.0f), r);
    return sm_self(ia > 0x7f800000, x, r);
}

/* ------------------------------------------------------------------ tanh (float) */
/* odd degree-17 polynomial for |x| < 0.9, 1 - 2/(e^(2|x|) + 1) above (the first
 * session's code: 0.97 ulp; an expm1-based em/(em + 2) with compensated division was
 * tried: 0.78 ulp at 1.65x the time) */
static inline sm_vf sm_tanhf(sm_vf x) {
    sm_vi ix = (sm_vi)x, ia = ix & 0x7fffffff, n;
    sm_vi small = ia < 0x3f666666;                      /* |x| < 0.9 */
    sm_vf a = (sm_vf)ia;
    sm_vf as = sm_self(small, a, sm_bcf(0.0f));
    sm_vf z = as * as;
    sm_vf P = 0x1.4b9d2ep-13f * z - 0x1.f979e4p-11f;
    P = P * z + 0x1.a969b4p-9f;
    P = P * z - 0x1.1d7e7cp-7f;
    P = P * z + 0x1.65a9dcp-6f;
    P = P * z - 0x1.ba0f68p-5f;
    P = P * z + 0x1.1110d8p-3f;
    P = P * z - 0x1.555554p-2f;
    sm_vf ps = (as * z) * P + as;
    /* |x| >= 0.9: 1 - 2/(e^2a + 1); a clamped to 9 (tanh = 1 in float beyond), NaN kept */
    sm_vf ab = sm_self(small, sm_bcf(1.0f), a);
    ab = sm_self((ia > 0x41100000) & (ia <= 0x7f800000), sm_bcf(9.0f), ab);
    sm_vf p = sm_expf_parts(ab + ab, &n);
    sm_vf e = (sm_vf)((sm_vi)p + (sm_vi)((sm_vu)n << 23));
    sm_vf pb = 1.0f - 2.0f / (e + 1.0f);
    sm_vf r = sm_self(small, ps, pb);
    r = (sm_vf)((sm_vi)r | (ix & (int32_t)0x80000000));
    return sm_self(ia > 0x7f800000, x, r);
}


/* ------------------------------------------------------------------ log1p, log2 (float) */
/* the log kernel on f = m - 1, m in [sqrt(1/2), sqrt 2): log(1 + f) = f - hfsq + s (hfsq + R),
 * s = f / (2 + f); here split as hi + lo for log2's extra precision */
static inline sm_vf sm_log1pf_kern(sm_vf f, sm_vf dk) {
    sm_vf s = f / (2.0f + f);
    sm_vf z = s * s;
    sm_vf R = z * (0x1.555556p-1f + z * (0x1.99999ap-2f + z * (0x1.24924ap-2f
                                                                + z * 0x1.c71c72p-3f)));
    sm_vf hfsq = 0.5f * f * f;
    return dk * 0x1.62e3p-1f - ((hfsq - (s * (hfsq + R) + dk * 0x1.2fefa4p-17f)) - f);
}

/* the lanes that are not positive normal numbers: x <= 0, subnormal, inf, NaN */
static inline int sm_log_any_special(sm_vi ix) {
#if SM_VB == 64
    return _mm512_cmpgt_epu32_mask(_mm512_sub_epi32((__m512i)ix, _mm512_set1_epi32(0x00800000)),
                                   _mm512_set1_epi32(0x7f800000 - 0x00800000 - 1)) != 0;
#else
    return sm_any(SM_UGT(ix - 0x00800000, 0x7f800000 - 0x00800000 - 1));
#endif
}

/* log1p: u = 1 + x rounded, c = the rounding error (exact), u = 2^k m, and
 * log(1 + x) = k ln2 + log(m + c 2^-k) (the x86-64-v2 baseline's form) */
static inline sm_vf sm_log1pf_div(sm_vf x) {
    sm_vi ix = (sm_vi)x, ia = ix & 0x7fffffff;
    sm_vf u = 1.0f + x;
    sm_vi iu = (sm_vi)u;
    sm_vi k = (iu - 0x3f3504f3) >> 23;
    sm_vf f = (sm_vf)(iu - (sm_vi)((sm_vu)k << 23)) - 1.0f;
    sm_vi ks = sm_seli(k > 100, sm_bci(100), k);
    sm_vf c = x - (u - 1.0f);                       /* exact */
    f = f + c * sm_pow2i(-ks);
    sm_vf r = sm_log1pf_kern(f, __builtin_convertvector(k, sm_vf));
    return sm_self(ia < 0x33800000, x, r);             /* |x| < 2^-24: x (keeps -0) */
}
/* the lanes x <= -1, inf, NaN (u = 1 + x not a positive finite number) */
static inline int sm_log1p_any_special(sm_vf x) {
#if SM_VB == 64 && defined(__AVX512DQ__)   /* 1 + x <= 0, inf, NaN (never subnormal) */
    return _mm512_fpclass_ps_mask(_mm512_add_ps((__m512)x, _mm512_set1_ps(1.0f)), 0xdf) != 0;
#else
    return sm_log_any_special((sm_vi)(1.0f + x));
#endif
}
/* a vector with special lanes: the others from core on x with those lanes zeroed */
static inline sm_vf sm_log1pf_spec(sm_vf x, sm_vf (*core)(sm_vf)) {
    sm_vi ix = (sm_vi)x, ia = ix & 0x7fffffff;
    sm_vi spec = (ia >= 0x7f800000) | ((ix < 0) & (ia >= 0x3f800000));
    sm_vf r = core(sm_self(spec, sm_bcf(0.0f), x));
    sm_vi m1 = ix == (int32_t)0xbf800000, nan = ia > 0x7f800000;
    sm_vi lt = spec & (ix < 0) & ~m1 & ~nan;          /* x < -1, -inf */
    if (sm_any(m1)) {
        sm_vf dz = -1.0f / sm_self(m1, sm_bcf(0.0f), sm_bcf(1.0f));   /* divide by zero */
        r = sm_self(m1, dz, r);
    }
    if (sm_any(lt)) {
        sm_vf q = sm_self(lt, sm_bcf(INFINITY), sm_bcf(0.0f));
        r = sm_self(lt, q - q, r);                                   /* invalid */
    }
    r = sm_self(ix == 0x7f800000, x, r);
    return sm_self(nan, x, r);
}
#if defined(__FMA__) && (SM_NF == 8 || SM_NF == 16)      /* simd_math_log32.h: the table */
static inline sm_vf sm_log1pf_tab(sm_vf x);
__attribute__((noinline, cold)) static sm_vf sm_log1pf_slow(sm_vf x) {
    return sm_log1pf_spec(x, sm_log1pf_tab);
}
static inline sm_vf sm_log1pf(sm_vf x) {
    if (__builtin_expect(sm_log1p_any_special(x), 0))
        return sm_log1pf_slow(x);
    return sm_log1pf_tab(x);
}
#else
static inline sm_vf sm_log1pf(sm_vf x) {
    if (!sm_log1p_any_special(x))
        return sm_log1pf_div(x);
    return sm_log1pf_spec(x, sm_log1pf_div);
}
#endif

/* log2 core on a positive normal x (times 2^kadd): k + log(m)/ln2 with log(m) = hi + lo,
 * hi with its last 12 bits cleared so hi * IVLN2HI (12 bits) is exact */
static inline sm_vf sm_log2f_core(sm_vf x, sm_vi kadd) {
    sm_vi ix = (sm_vi)x;
    sm_vi k = (ix - 0x3f3504f3) >> 23;
    sm_vf f = (sm_vf)(ix - (sm_vi)((sm_vu)k << 23)) - 1.0f;
    sm_vf s = f / (2.0f + f);
    sm_vf z = s * s;
    sm_vf R = z * (0x1.555556p-1f + z * (0x1.99999ap-2f + z * (0x1.24924ap-2f
                                                                + z * 0x1.c71c72p-3f)));
    sm_vf hfsq = 0.5f * f * f;
    sm_vf hi = (sm_vf)((sm_vi)(f - hfsq) & (int32_t)0xfffff000);
    sm_vf lo = (f - hi) - hfsq + s * (hfsq + R);
    sm_vf y = __builtin_convertvector(k + kadd, sm_vf);
    sm_vf vhi = hi * 0x1.716p+0f;                           /* 1.4428710938 */
    sm_vf vlo = (lo + hi) * -0x1.7135a8p-13f + lo * 0x1.716p+0f;
    sm_vf w = y + vhi;
    vlo = vlo + ((y - w) + vhi);
    return vlo + w;
}

/* log2 of a vector with special lanes: subnormals scaled by 2^23 first (unless the core
 * takes them as they are: scale_sub 0), the others put back with numpy's results and flags */
static inline sm_vf sm_log2f_spec(sm_vf x, sm_vf (*core)(sm_vf, sm_vi), int scale_sub) {
    sm_vi ix = (sm_vi)x;
    sm_vi ia = ix & 0x7fffffff;
    sm_vi zero = ia == 0, nan = ia > 0x7f800000, pinf = ix == 0x7f800000;
    sm_vi neg = (ix < 0) & ~zero & ~nan;
    sm_vi sub = (ix > 0) & (ix < 0x00800000) & sm_bci(scale_sub ? -1 : 0);
    sm_vf xs = sm_self(sub, sm_self(sub, x, sm_bcf(0.0f)) * 0x1p23f, x);
    xs = sm_self(zero | nan | pinf | neg, sm_bcf(1.0f), xs);
    sm_vf r = core(xs, sm_seli(sub, sm_bci(-23), sm_bci(0)));
    if (sm_any(zero)) {
        sm_vf dz = -1.0f / sm_self(zero, sm_bcf(0.0f), sm_bcf(1.0f));
        r = sm_self(zero, dz, r);
    }
    if (sm_any(neg)) {
        sm_vf q = sm_self(neg, sm_bcf(INFINITY), sm_bcf(0.0f));
        r = sm_self(neg, q - q, r);
    }
    r = sm_self(pinf, x, r);
    return sm_self(nan, x, r);
}

#if defined(__FMA__) && (SM_NF == 8 || SM_NF == 16)
/* simd_math_log32.h's table form; its special vectors out of line (it writes every
 * multiply-add as an FMA, so the normal lanes there get the same bits as in the loop) */
static inline sm_vf sm_log2f_tab(sm_vf x, sm_vi kadd);
__attribute__((noinline, cold)) static sm_vf sm_log2f_slow(sm_vf x) {
    return sm_log2f_spec(x, sm_log2f_tab, SM_VB != 64);    /* AVX-512: getexp/getmant */
}
static inline sm_vf sm_log2f(sm_vf x) {
#if SM_VB == 64 && defined(__AVX512DQ__)   /* x <= 0, inf, NaN (getmant/getexp take subnormals) */
    if (__builtin_expect(_mm512_fpclass_ps_mask((__m512)x, 0xdf) != 0, 0))
#else
    if (__builtin_expect(sm_log_any_special((sm_vi)x), 0))
#endif
        return sm_log2f_slow(x);
    return sm_log2f_tab(x, sm_bci(0));
}
#else
static inline sm_vf sm_log2f(sm_vf x) {
    if (!sm_log_any_special((sm_vi)x))
        return sm_log2f_core(x, sm_bci(0));
    return sm_log2f_spec(x, sm_log2f_core, 1);
}
#endif

/* ------------------------------------------------------------------ activations (f32) */
/* Computed in double lanes and rounded once (float inputs are exact in double, so the
 * argument of every exponential is exact to 2^-53 and the results are within 0.5 ulp plus
 * the double kernels' ~1e-15). erf / erfc: erf x = x P(x^2) for |x| < 1 (degree 12,
 * 1.2e-9), erfc t = e^(-t^2) R(1 / (1 + t/2)) for t >= 1 (degree 10, relative 1.2e-10),
 * t clamped to 10.6 (erfc below the float range beyond). */
/* e^x to float accuracy and beyond (relative 2e-10: Taylor to r^8), x in [-745, 709] */
static inline sm_vd sm_exp_d_fast(sm_vd x) {
    sm_vd t = x * 0x1.71547652b82fep+0 + SM_MAGICD;
    sm_vd fn = t - SM_MAGICD;
    sm_vl n = (sm_vl)t - (sm_vl)sm_bcd(SM_MAGICD);
    sm_vd r = x - fn * SM_EXP_LN2HI;
    r = r - fn * SM_EXP_LN2LO;
    sm_vd q = 0x1.a01a01a01a01ap-16 * r + 0x1.a01a01a01a01ap-13;
    q = q * r + 0x1.6c16c16c16c17p-10;
    q = q * r + 0x1.1111111111111p-7;
    q = q * r + 0x1.5555555555555p-5;
    q = q * r + 0x1.5555555555555p-3;
    q = q * r + 0.5;
    return sm_exp_scale_d((r * r) * q + r, n);
}
static inline sm_vd sm_erfc_big_d(sm_vd t) {               /* t in [1, 10.6] */
    sm_vd u = 1.0 / (1.0 + 0.5 * t);
    sm_vd p = -0x1.c744b5f3fb097p-5 * u + 0x1.48b2bc2094c2fp-3;
    p = p * u - 0x1.5eca837b75b97p-4;
    p = p * u - 0x1.20aae9bfda2b3p-3;
    p = p * u + 0x1.53e5274f6a8aep-4;
    p = p * u + 0x1.4a65e66d86a25p-5;
    p = p * u + 0x1.83ff7942272a3p-3;
    p = p * u + 0x1.f44fc42c5087bp-3;
    p = p * u + 0x1.212de95f74525p-2;
    p = p * u + 0x1.20d7e93e33c35p-2;
    p = p * u + 0x1.5523286b4da96p-21;
    return sm_exp_d_fast(-(t * t)) * p;
}
static inline sm_vd sm_erf_small_d(sm_vd x) {              /* |x| <= 1 */
    sm_vd z = x * x;
    sm_vd p = 0x1.4ae8992bde41ap-14 * z - 0x1.a487740cb80ecp-11;
    p = p * z + 0x1.541a31e009148p-8;
    p = p * z - 0x1.b7fbbd6d386f3p-6;
    p = p * z + 0x1.ce2d203dd2491p-4;
    p = p * z - 0x1.81273ecfc1b50p-2;
    p = p * z + 0x1.20dd74ff21a33p+0;
    return x * p;
}
static inline sm_vd sm_absd(sm_vd x) { return (sm_vd)((sm_vl)x & 0x7fffffffffffffffLL); }

/* erf of finite x (|x| clamped to 10.6 inside) */
static inline sm_vd sm_erf_fin_d(sm_vd x) {
    sm_vd a = sm_absd(x);
    sm_vl small = (sm_vl)(a <= 1.0);
    sm_vd t = sm_seld(small, sm_bcd(1.0), a);
    t = sm_seld((sm_vl)(t > 10.6), sm_bcd(10.6), t);
    sm_vd big = 1.0 - sm_erfc_big_d(t);
    big = (sm_vd)((sm_vl)big | ((sm_vl)x & (int64_t)0x8000000000000000ULL));
    return sm_seld(small, sm_erf_small_d(sm_seld(small, x, sm_bcd(0.0))), big);
}
/* erfc(t) for finite t >= -... : t <= 1 via 1 - erf, above via the big form */
static inline sm_vd sm_erfc_fin_d(sm_vd t) {
    sm_vl small = (sm_vl)(t < 1.0);
    sm_vd tb = sm_seld(small, sm_bcd(1.0), t);
    tb = sm_seld((sm_vl)(tb > 10.6), sm_bcd(10.6), tb);
    sm_vd big = sm_erfc_big_d(tb);
    /* t < 1: 1 - erf(t); erf(t) for t < -1 is -(1 - erfc|t|) */
    sm_vd e = sm_erf_fin_d(sm_seld(small, t, sm_bcd(0.0)));
    big = sm_seld((sm_vl)(t > 10.59), (sm_vd){0}, big);
    return sm_seld(small, 1.0 - e, big);
}

/* NaN-keeping wrapper: lanes of xf that are NaN return xf; the function f sees 0 there.
 * inf lanes are passed as +-1e300 / handled by f's clamps. */
#define SM_ACT_H(name, body)                                                              \
static inline sm_vfh sm_##name##f_h(sm_vfh xf) {                                        \
    sm_vih ia = (sm_vih)xf & 0x7fffffff;                                                \
    sm_vl nan = __builtin_convertvector(ia > 0x7f800000, sm_vl);                        \
    sm_vd x = __builtin_convertvector(xf, sm_vd);                                       \
    x = sm_seld(nan, (sm_vd){0}, x);                                                    \
    sm_vd r;                                                                            \
    body                                                                                \
    sm_vfh rf = __builtin_convertvector(r, sm_vfh);                                     \
    sm_vih nanf = ia > 0x7f800000;                                                      \
    return (sm_vfh)((nanf & (sm_vih)xf) | (~nanf & (sm_vih)rf));                        \
}

/* erf: +-inf -> +-1 (the clamp) */
SM_ACT_H(erf, {
    sm_vd a = sm_absd(x);
    x = sm_seld((sm_vl)(a > 10.6), (sm_vd)((sm_vl)sm_bcd(10.6) | ((sm_vl)x & (int64_t)0x8000000000000000ULL)), x);
    r = sm_erf_fin_d(x);
})

/* x sigmoid(v) = x / (1 + e^-v) for x >= 0 ... written for any sign with e = e^-|v|:
 * v >= 0: m / (1 + e), v < 0: m e / (1 + e); v clamped to +-745 */
static inline sm_vd sm_msig_d(sm_vd m, sm_vd v) {
    sm_vd a = sm_absd(v);
    a = sm_seld((sm_vl)(a > 745.0), sm_bcd(745.0), a);
    sm_vd e = sm_exp_d_fast(-a);
    sm_vd q = m / (1.0 + e);
    return sm_seld((sm_vl)(v < 0.0), q * e, q);
}
/* inf inputs: gelu(+inf) = inf, gelu(-inf) = -0 * ... -> numpy-like: x * sigmoid = -inf * 0
 * = NaN in ggml's formula; ggml_cy's scalar kernels give -0 (x / (1 + e^inf) = -0)... here
 * the same: m / (1 + e) with e = inf is -0; v = +-inf clamps to 745 */
SM_ACT_H(gelu, {
    /* u = sqrt(2/pi) x (1 + 0.044715 x^2); gelu = x sigmoid(2u) */
    sm_vd xc = sm_seld((sm_vl)(sm_absd(x) > 1e100), (sm_vd)((sm_vl)sm_bcd(1e100) | ((sm_vl)x & (int64_t)0x8000000000000000ULL)), x);
    sm_vd v = (2 * 0.797884560802865355879892119868763737) * xc * (1.0 + 0.044715 * xc * xc);
    r = sm_msig_d(x, v);
    r = sm_seld((sm_vl)(x < -1e308), sm_bcd(NAN), r);       /* -inf: NaN (ggml: -inf * 0) */
})
SM_ACT_H(gelu_quick, {
    r = sm_msig_d(x, 1.702 * x);
    r = sm_seld((sm_vl)(x < -1e308), sm_bcd(NAN), r);
})
SM_ACT_H(gelu_erf, {
    /* 0.5 x erfc(-x / sqrt 2) */
    sm_vd t = -x * 0.707106781186547524400844362104849;
    r = 0.5 * x * sm_erfc_fin_d(sm_seld((sm_vl)(t > 11.0), sm_bcd(11.0), sm_seld((sm_vl)(t < -11.0), sm_bcd(-11.0), t)));
    r = sm_seld((sm_vl)(x < -1e308), sm_bcd(NAN), r);
})
/* softplus = max(x, 0) + log1p(e^-|x|), log1p(e) for e in (0, 1] in double: log(1 + e)
 * with 1 + e's rounding error put back (log(u) + (e - (u - 1)) / u) */
static inline sm_vd sm_log_d_lite(sm_vd u, sm_vd c) {     /* log(u + c), u in [1, 2] */
    sm_vl iu = (sm_vl)u;
    sm_vl k = (iu - 0x3fe6a09e667f3bcdLL) >> 52;
    sm_vd m = (sm_vd)(iu - (k << 52));
    sm_vd f = (m - 1.0) + c * (sm_vd)((1023 - k) << 52);
    sm_vd s = f / (2.0 + f);
    sm_vd z = s * s;
    sm_vd R = 0x1.c71c71c71c71cp-3 * z + 0x1.2492492492492p-2;
    R = R * z + 0x1.999999999999ap-2;
    R = R * z + 0x1.5555555555555p-1;
    R = R * z;
    sm_vd dk = __builtin_convertvector(k, sm_vd);
    return dk * 0x1.62e42fefa39efp-1 + (f - s * (f - R));
}
SM_ACT_H(softplus, {
    sm_vd a = sm_absd(x);
    a = sm_seld((sm_vl)(a > 745.0), sm_bcd(745.0), a);
    sm_vd e = sm_exp_d_fast(-a);
    sm_vd u = 1.0 + e;
    sm_vd l = sm_log_d_lite(u, e - (u - 1.0));
    l = sm_seld((sm_vl)(e < 0x1p-30), e - 0.5 * e * e, l);
    r = sm_seld((sm_vl)(x > 0.0), x + l, l);
})

#endif
