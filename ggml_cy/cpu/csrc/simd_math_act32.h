/* float32 activations in float lanes (issue 14 item 2): gelu, gelu_quick and softplus.
 *
 * simd_math_more.h computes these in double lanes (8 per AVX-512 vector, two conversions,
 * a double division): within 0.6 ulp but 1.2-4.5x slower than torch's float loops. Here
 * they run 16 float lanes with FMA (avx2, avx512) and the double-lane forms stay for the
 * x86-64-v2 baseline and for any vector holding an input beyond the fast range (|v| > 86.5
 * for the exponent v: subnormal or vanishing results, inf, NaN), so every special value and
 * floating-point flag is the double-lane code's.
 *
 * gelu(x) = x sigmoid(v), v = 2 sqrt(2/pi) x (1 + 0.044715 x^2); gelu_quick: v = 1.702 x.
 * For x < 0 the result is x e^v / (1 + e^v), whose relative error is |v| times v's: v is
 * therefore formed as a float-float vh + vl (exact products by FMA) and e^-|v| takes the
 * low part into its reduced argument. The quotient is rounded once more than the
 * double-lane form: measured within 2 ulp (tests/test_simd_math.py holds the budget).
 *
 * softplus(x) = max(x, 0) + log1p(e) with e = e^-|x| in (0, 1]: log1p(e) = e + e^2 Q(e),
 * Q a degree-8 polynomial fitted for this code (relative error of log1p(e)/e on [0, 1]:
 * 5e-9), so no logarithm and no division. */
#ifndef GGML_CY_SIMD_MATH_ACT32_H
#define GGML_CY_SIMD_MATH_ACT32_H

#if defined(__FMA__)

/* e^(-(a + al)) for a in [0, 86.5] (|al| <= ulp(a)): p 2^-n with the low part folded into
 * the reduced argument; the result is a normal float */
static inline sm_vf sm_expneg_ff(sm_vf a, sm_vf al) {
    sm_vi n;
    sm_vf x = -a;
    sm_vf t = x * SM_LOG2E + SM_MAGIC;
    sm_vf fn = t - SM_MAGIC;
    n = (sm_vi)t - (sm_vi)sm_bcf(SM_MAGIC);
    sm_vf rh = x - fn * SM_LN2HI;                       /* exact */
    /* al joins the reduced argument itself (as a correction term beside the polynomial it
     * would miss its e^r - 1 share: ~45 ulp at a = 80) */
    sm_vf t1 = fn * SM_LN2LO + al;
    sm_vf r = rh - t1;
    sm_vf c = (rh - r) - t1;                            /* what r lost */
    sm_vf q = 0x1.687c22p-10f * r + 0x1.123b8ep-7f;
    q = q * r + 0x1.555b58p-5f;
    q = q * r + 0x1.55548ep-3f;
    q = q * r + 0x1.fffff8p-2f;
    sm_vf p = (((r * r) * q + c) + r) + 1.0f;
    return (sm_vf)((sm_vi)p + (sm_vi)((sm_vu)n << 23));
}

/* x sigmoid(vh + vl), |vh| <= 86.5, x and v of one sign: x / (1 + e) for v >= 0,
 * x e / (1 + e) below, e = e^-|v| */
static inline sm_vf sm_xsig_ff(sm_vf x, sm_vf vh, sm_vf vl) {
    sm_vi neg = (sm_vi)vh < 0;
    sm_vf a = (sm_vf)((sm_vi)vh & 0x7fffffff);
    sm_vf al = sm_self(neg, -vl, vl);
    sm_vf e = sm_expneg_ff(a, al);
    return sm_self(neg, x * e, x) / (1.0f + e);
}

/* sm_act_slow (simd_math.h): the lanes beyond the fast range, out of line */
#define SM_ACT_F32(name, limbits)                                                         \
static inline sm_vf sm_##name##f(sm_vf x) {                                             \
    sm_vi big = ((sm_vi)x & 0x7fffffff) > (limbits);                                    \
    sm_vf r = sm_##name##f_fast(sm_self(big, sm_bcf(0.0f), x));                          \
    if (__builtin_expect(sm_any(big), 0)) r = sm_act_slow(x, big, r, sm_##name##f_h);   \
    return r;                                                                           \
}

/* 2 sqrt(2/pi) and 2 sqrt(2/pi) 0.044715 as float-floats */
#define SM_GELU_K1H 0x1.988454p+0f
#define SM_GELU_K1L -0x1.857936p-25f
#define SM_GELU_K3H 0x1.2444f2p-4f
#define SM_GELU_K3L 0x1.49b16ap-29f

static inline sm_vf sm_geluf_fast(sm_vf x) {                       /* |x| <= 10 */
    /* v = K1 x + K3 x^3: each product exact to float-float, the sum two-summed */
    sm_vf sh = x * x, sl = sm_fmsf(x, x, sh);
    sm_vf ch = x * sh, cl = sm_fmsf(x, sh, ch) + x * sl;             /* x^3 */
    sm_vf ah = SM_GELU_K1H * x, al = sm_fmsf(sm_bcf(SM_GELU_K1H), x, ah) + SM_GELU_K1L * x;
    sm_vf bh = SM_GELU_K3H * ch;
    sm_vf bl = sm_fmsf(sm_bcf(SM_GELU_K3H), ch, bh) + (SM_GELU_K3H * cl + SM_GELU_K3L * ch);
    sm_vf vh = ah + bh;                                               /* two-sum */
    sm_vf bv = vh - ah;
    sm_vf vl = ((ah - (vh - bv)) + (bh - bv)) + (al + bl);
    return sm_xsig_ff(x, vh, vl);
}
SM_ACT_F32(gelu, 0x41200000)                            /* |x| > 10, inf, NaN: slow */

#define SM_GELUQ_KH 0x1.b3b646p+0f                      /* 1.702 as a float-float */
#define SM_GELUQ_KL -0x1.78d4fep-26f

static inline sm_vf sm_gelu_quickf_fast(sm_vf x) {                 /* |x| <= 50 */
    sm_vf vh = SM_GELUQ_KH * x;
    sm_vf vl = sm_fmsf(sm_bcf(SM_GELUQ_KH), x, vh) + SM_GELUQ_KL * x;
    return sm_xsig_ff(x, vh, vl);
}
SM_ACT_F32(gelu_quick, 0x42480000)                      /* |x| > 50 */

static inline sm_vf sm_softplusf_fast(sm_vf x) {                   /* |x| <= 86.5 */
    sm_vi ix = (sm_vi)x, ia = ix & 0x7fffffff;
    sm_vf e = sm_expneg_ff((sm_vf)ia, sm_bcf(0.0f));
    sm_vf q = -0x1.b2f176p-9f * e + 0x1.4b05ecp-6f;
    q = q * e - 0x1.d860fep-5f;
    q = q * e + 0x1.b578aep-4f;
    q = q * e - 0x1.3a7a30p-3f;
    q = q * e + 0x1.935c84p-3f;
    q = q * e - 0x1.ff26dcp-3f;
    q = q * e + 0x1.554df0p-2f;
    q = q * e - 0x1.ffffd2p-2f;
    sm_vf l = (e * e) * q + e;                          /* log1p(e) */
    return sm_self(ix > 0, x + l, l);
}
SM_ACT_F32(softplus, 0x42ad0000)                        /* |x| > 86.5 */

#endif /* __FMA__ */
#endif
