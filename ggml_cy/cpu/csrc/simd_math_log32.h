/* float32 log2 and log1p in float lanes from a 16-piece table (issue 14 item 2), avx2 and
 * avx512 (FMA); included by simd_math.h after simd_math_erf.h (sm_lut16: one vpermps on
 * AVX-512, a 32-entry vpermt2ps table cost 10% more). The x86-64-v2 baseline keeps
 * simd_math_more.h's division forms (sm_log2f_core, sm_log1pf_div).
 *
 * x = 2^e z with z in [1, 2) (AVX-512: vgetexpps / vgetmantps), the piece j = the top 4
 * mantissa bits. Each piece has invc = J/32 (tools/fit_log32.py) with |z invc - 1| < 2^-4
 * over the piece, so r = z invc - 1 (a multiple of 2^-28) is exact in one FMA; |r| <= 0.039,
 * and below 0.0625 in the first piece, whose invc is 1 (and the last's 1/2: there e + lh is
 * e + 1), so that around 1 the result is log(1 + r) alone, relative. log z = -log(invc) +
 * log(1 + r), -log(invc) from the table as lh + ll (lh a multiple of 2^-16: e + lh, or
 * e ln2hi + lh for the natural log, is exact). log(1 + r) = r + r^2 q(r) (natural) and
 * r/ln2 + r^2 q2(r) (log2), q and q2 of degree 3 (relative error 2^-27 over [-0.039,
 * 0.0625] with the coefficients rounded). The sum: hi = e + lh (exact), s = hi + r/ln2 (or
 * hi + r) rounded, its error by one FMA (or Fast2Sum: |hi| >= the term whenever hi != 0),
 * y = s + (error + the small terms): one rounding on y's scale. No division (the forms they
 * replace divide by 2 + f: 0.6x numpy's float32 log2 on AVX-512). Measured over every
 * float32 input: log2 within 0.752 ulp, log1p 0.633 (both avx2 and avx512, the same bits;
 * numpy's own float32 loops here: 2.1 and 1.95). */
#ifndef GGML_CY_SIMD_MATH_LOG32_H
#define GGML_CY_SIMD_MATH_LOG32_H

#if defined(__FMA__) && (SM_NF == 8 || SM_NF == 16)
#define SM_LOG32 1

/* a*b + c with one rounding (r must be exact: written out, not left to contraction) */
static inline sm_vf sm_fmaf(sm_vf a, sm_vf b, sm_vf c) {
#if SM_VB == 64
    return (sm_vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#else
    return (sm_vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#endif
}

/* tools/fit_log32.py: invc = J/32 and -log2(invc), -log(invc) as lh + ll, per piece */
static const float sm_l2_t_lh[16] = {
    0.0f, 0x1.22d8p-3f, 0x1.8a88p-3f, 0x1.32cp-2f, 0x1.6cbp-2f, 0x1.a9p-2f,
    0x1.e7ep-2f, 0x1.14c6p-1f, 0x1.3722p-1f, 0x1.5b2cp-1f, 0x1.811p-1f, 0x1.811p-1f,
    0x1.a9p-1f, 0x1.d338p-1f, 0x1.d338p-1f, 0x1p+0f};
static const float sm_l2_t_ll[16] = {
    0.0f, 0x1.6e155ap-18f, 0x1.80abfcp-19f, -0x1.1c8f12p-22f, 0x1.ed0cbap-19f, -0x1.a39fbep-20f,
    -0x1.40358ep-19f, -0x1.3e032ep-18f, 0x1.5db83ap-20f, 0x1.ed0cbap-20f, -0x1.6b9026p-19f, -0x1.6b9026p-19f,
    -0x1.a39fbep-19f, 0x1.20a6dep-21f, 0x1.20a6dep-21f, 0.0f};
static const float sm_log32_t_invc[16] = {
    0x1p+0f, 0x1.dp-1f, 0x1.cp-1f, 0x1.ap-1f, 0x1.9p-1f, 0x1.8p-1f,
    0x1.7p-1f, 0x1.6p-1f, 0x1.5p-1f, 0x1.4p-1f, 0x1.3p-1f, 0x1.3p-1f,
    0x1.2p-1f, 0x1.1p-1f, 0x1.1p-1f, 0x1p-1f};
static const float sm_ln_t_lh[16] = {
    0.0f, 0x1.933p-4f, 0x1.1178p-3f, 0x1.a94p-3f, 0x1.f99p-3f, 0x1.2698p-2f,
    0x1.522cp-2f, 0x1.7fbp-2f, 0x1.af54p-2f, 0x1.e148p-2f, 0x1.0ae8p-1f, 0x1.0ae8p-1f,
    0x1.2696p-1f, 0x1.43dap-1f, 0x1.43dap-1f, 0x1.62e4p-1f};
static const float sm_ln_t_ll[16] = {
    0.0f, 0x1.797566p-18f, 0x1.d044fcp-20f, -0x1.2c3752p-19f, 0x1.c6cb3cp-19f, -0x1.deecb2p-18f,
    -0x1.1f8c76p-18f, -0x1.7109fap-20f, -0x1.6adb74p-18f, 0x1.4344e4p-19f, -0x1.23a5f6p-18f, -0x1.23a5f6p-18f,
    0x1.089a6ep-20f, -0x1.a0db88p-26f, -0x1.a0db88p-26f, 0x1.7f7d1cp-20f};
/* log2(1 + r) = r/ln2 + r^2 q2(r), log(1 + r) = r + r^2 q(r) */
#define SM_L2_Q0 -0x1.715472p-1f
#define SM_L2_Q1 0x1.ec75fap-2f
#define SM_L2_Q2 -0x1.71ab18p-2f
#define SM_L2_Q3 0x1.189338p-2f
#define SM_LN_Q0 -0x1.fffffcp-2f
#define SM_LN_Q1 0x1.55592p-2f
#define SM_LN_Q2 -0x1.00364ap-2f
#define SM_LN_Q3 0x1.84540ap-3f

/* the reduction of a positive x: x = 2^e z with z in [1, 2), j: the piece (the low 4 bits
 * of bits(z) >> 19). AVX-512 has both in one instruction each, subnormals included; AVX2
 * takes normal x (the caller scales subnormals, kadd = -23). */
#if SM_VB == 64
#define SM_LOG32_SPLIT(x, kadd, z, j, e)                                                  \
    sm_vf z = (sm_vf)_mm512_getmant_ps((__m512)(x), _MM_MANT_NORM_1_2, _MM_MANT_SIGN_src);  \
    sm_vf e = (sm_vf)_mm512_getexp_ps((__m512)(x));                                       \
    sm_vi j = (sm_vi)((sm_vu)z >> 19);                                                    \
    (void)(kadd);
#else
#define SM_LOG32_SPLIT(x, kadd, z, j, e)                                                  \
    sm_vi ix_ = (sm_vi)(x);                                                               \
    sm_vf z = (sm_vf)((ix_ & 0x007fffff) | 0x3f800000);                                   \
    sm_vf e = __builtin_convertvector(((ix_ >> 23) - 127) + (kadd), sm_vf);               \
    sm_vi j = ix_ >> 19;
#endif

/* log2 of a positive normal x (times 2^kadd). Every multiply-add is written as an FMA, so
 * that no contraction is left to the compiler: the same bits at -O1 and -O3, inline or not */
static inline sm_vf sm_log2f_tab(sm_vf x, sm_vi kadd) {
    SM_LOG32_SPLIT(x, kadd, z, j, e)
    sm_vf r = sm_fmaf(z, sm_lut16(sm_log32_t_invc, j), sm_bcf(-1.0f));       /* exact */
    /* r/ln2 is taken as r * 0x1.715476p+0 (a relative 2^-26.5 short: 0.2 ulp of the worst
     * case; with the rest, 2^-26 r in the tail, 0.53 ulp at one FMA more and a longer chain:
     * 5% slower, measured) */
    sm_vf p = sm_fmaf(sm_bcf(SM_L2_Q3), r, sm_bcf(SM_L2_Q2));
    p = sm_fmaf(p, r, sm_bcf(SM_L2_Q1));
    p = sm_fmaf(p, r, sm_bcf(SM_L2_Q0));
    sm_vf t = sm_fmaf(r * r, p, sm_lut16(sm_l2_t_ll, j));
    sm_vf hi = e + sm_lut16(sm_l2_t_lh, j);                                   /* exact */
    /* s = hi + r/ln2 rounded, se its error: hi - s is exact (hi = 0, or |hi| above the
     * term), the FMA rounds the error once */
    sm_vf s = sm_fmaf(r, sm_bcf(0x1.715476p+0f), hi);
    sm_vf se = sm_fmaf(r, sm_bcf(0x1.715476p+0f), hi - s);
    return s + (se + t);
}

/* log1p of x > -1 (not NaN): u = 1 + x rounded, c = x - (u - 1) its rounding error (exact
 * for u < 2^24; beyond, c/u is below 2^-24 of a result above 16), log1p x = log(u) +
 * log(1 + c/u), the second as c 2^-k invc (1 - r) (= c/u to a relative r^2: below 2^-34).
 * |x| < 2^-5 (u in the pieces at 1 and 2 (times 1/2), k = 0, table terms 0): r = x itself and no c, so
 * that the result is relative there (r and c can be of the size of the result and of
 * opposite signs: 0.88 ulp with the correction). +-0 and tiny x give x (the sign put back). */
static inline sm_vf sm_log1pf_tab(sm_vf x) {
    sm_vi ix = (sm_vi)x;
    sm_vf u = 1.0f + x;
    sm_vf c = x - (u - 1.0f);
    SM_LOG32_SPLIT(u, sm_bci(0), z, j, e)
    sm_vf invc = sm_lut16(sm_log32_t_invc, j);
    sm_vf r = sm_fmaf(z, invc, sm_bcf(-1.0f));                               /* exact */
#if SM_VB == 64
    /* c 2^-k: c scaled by getexp(z) - getexp(u); 0 in the small lanes */
    __mmask16 small = _mm512_cmplt_epu32_mask(_mm512_and_si512((__m512i)ix, _mm512_set1_epi32(0x7fffffff)),
                                              _mm512_set1_epi32(0x3d000000));
    sm_vf cs = (sm_vf)_mm512_maskz_scalef_ps((__mmask16)~small, (__m512)c,
                                       _mm512_sub_ps(_mm512_getexp_ps((__m512)z), (__m512)e));
    r = (sm_vf)_mm512_mask_blend_ps(small, (__m512)r, (__m512)x);
#else
    /* 2^-k from the exponent fields (0 for u >= 2^127, where c is 0) */
    sm_vi small = (ix & 0x7fffffff) < 0x3d000000;
    sm_vi sb = (sm_vi)z - (sm_vi)u + 0x3f800000;
    sm_vf cs = c * (sm_vf)sm_seli(sb > 0, sb, sm_bci(0));
    cs = sm_self(small, sm_bcf(0.0f), cs);
    r = sm_self(small, x, r);
#endif
    sm_vf g = sm_fnmaf(invc, r, invc);                                 /* invc (1 - r) */
    sm_vf p = sm_fmaf(sm_bcf(SM_LN_Q3), r, sm_bcf(SM_LN_Q2));
    p = sm_fmaf(p, r, sm_bcf(SM_LN_Q1));
    p = sm_fmaf(p, r, sm_bcf(SM_LN_Q0));
    sm_vf w = sm_fmaf(e, sm_bcf(SM_LN2LO), sm_lut16(sm_ln_t_ll, j));
    w = sm_fmaf(cs, g, w);
    sm_vf t = sm_fmaf(r * r, p, w);
    sm_vf hi = sm_fmaf(e, sm_bcf(SM_LN2HI), sm_lut16(sm_ln_t_lh, j));      /* exact */
    sm_vf s = hi + r;
    sm_vf se = (hi - s) + r;                                     /* exact (Fast2Sum) */
    sm_vf y = s + (se + t);
    return (sm_vf)((sm_vi)y | (ix & (int32_t)0x80000000));
}

#endif
#endif
