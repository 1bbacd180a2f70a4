/* float32 sin and cos in float lanes (issue 14 item 2), with FMA (avx2, avx512).
 *
 * simd_math_more.h's sm_sinf_h / sm_cosf_h reduce and evaluate in double lanes (within
 * 0.65 ulp, 0.77x numpy's float32 loops). Here: x = n pi/2 + r with pi/2 in three float
 * parts: n * P1 is exact in the first FMA and x - n P1 is representable (both multiples of
 * P1's last bit, difference below 1), the next two FMAs round once each, so r carries a
 * relative error near 2^-24 for |x| <= 2^17 (n below 2^17; what the three parts miss of pi/2, 2^-72 per unit of n,
 * stays below 1e-17 absolute). sin r = r + r^3 S(r^2) (degree 3
 * in r^2), cos r = 1 - r^2/2 + r^4 C(r^2) (degree 2), both Chebyshev fits made for this code
 * (relative error 3.4e-9 and 8.5e-10 with the coefficients rounded to float); the quadrant
 * picks one and its sign. Measured within 1.5 ulp (tests/test_simd_math.py); numpy's
 * float32 sin/cos on the bench machine are within 1.4 (its own AVX-512 loops). Lanes with |x| > 2^17, inf or NaN take the
 * double-lane form (out of line, as in simd_math_act32.h), so specials and flags are its.
 * The fast path runs on |x| (sin's sign put back last, so no tiny-x test), takes the
 * quadrant from the magic-number sum's low bits (cos: magic + 1) and, at AVX-512, selects
 * with a vptestmd mask and signs with one vpternlogd: 27 zmm uops a vector for sin, 26 for
 * cos, instead of 38 / 33, the same bits at avx2 and avx512 as before. */
#ifndef GGML_CY_SIMD_MATH_SINCOS32_H
#define GGML_CY_SIMD_MATH_SINCOS32_H

#if defined(__FMA__)

#define SM_PIO2_1 0x1.921fb6p+0f
#define SM_PIO2_2 -0x1.777a5cp-25f
#define SM_PIO2_3 -0x1.ee59dap-50f
#define SM_2OPI 0x1.45f306p-1f

/* c - a*b with one rounding, written out: the reduction's first step is exact only fused,
 * and gcc contracts a*b+c by itself only from -O2 (the -O1 sanitizer build lost 3e-6) */
static inline sm_vf sm_fnmaf(sm_vf a, sm_vf b, sm_vf c) {
#if SM_VB == 64
    return (sm_vf)_mm512_fnmadd_ps((__m512)a, (__m512)b, (__m512)c);
#elif SM_VB == 32
    return (sm_vf)_mm256_fnmadd_ps((__m256)a, (__m256)b, (__m256)c);
#else
    return (sm_vf)_mm_fnmadd_ps((__m128)a, (__m128)b, (__m128)c);
#endif
}

/* sin (cosine = 0) or cos of x, a = |x| <= 2^17 (x's sign matters to sin only). The
 * reduction and the polynomials run on a, sin's sign is x's put back at the end: the same
 * bits as reducing x itself (every step is odd in its input, rounding to nearest is
 * symmetric), and sin(-0) = -0 and sin x = x for tiny x come out of the polynomial
 * (x z S(z) is below half an ulp of x for |x| < 2^-12) with no test of their own. */
static inline sm_vf sm_sincosf_core(sm_vf x, sm_vf a, int cosine) {
    /* t = n (+1 for cos: its quadrant) + magic, so t's low bits are the quadrant's (magic's
     * are zero); fn = n exactly (no tie can round n differently: a * 2/pi is never a
     * half-integer below 2^17) */
    const float mg = cosine ? SM_MAGIC + 1.0f : SM_MAGIC;
    sm_vf t = a * SM_2OPI + mg;
    sm_vf fn = t - mg;
    sm_vf r = sm_fnmaf(fn, sm_bcf(SM_PIO2_1), a);       /* exact */
    r = sm_fnmaf(fn, sm_bcf(SM_PIO2_2), r);
    r = sm_fnmaf(fn, sm_bcf(SM_PIO2_3), r);
    sm_vf z = r * r;
    sm_vf s = 0x1.6dbcfcp-19f * z - 0x1.a013a4p-13f;
    s = s * z + 0x1.11110ep-7f;
    s = s * z - 0x1.555556p-3f;
    s = (r * z) * s + r;
    sm_vf c = 0x1.9bd786p-16f * z - 0x1.6c12d0p-10f;
    c = c * z + 0x1.555554p-5f;
    /* 1 - z/2 with what its rounding loses put back (z/2 up to 0.31: 1.56 ulp near
     * r = pi/4 without; putting z's own rounding back too gained 0.001 ulp for 8% time) */
    sm_vf hz = 0.5f * z, w = 1.0f - hz;
    c = (z * z) * c + (((1.0f - w) - hz));
    c = c + w;
    sm_vi q = (sm_vi)t;                                  /* the quadrant in bits 0, 1 */
#if SM_VB == 64
    /* odd quadrants take c: vptestmd + one masked move; the sign (quadrants 2, 3; for sin
     * also x's) by a shift and one or two vpternlogd */
    sm_vf v = (sm_vf)_mm512_mask_mov_ps((__m512)s, _mm512_test_epi32_mask((__m512i)q, _mm512_set1_epi32(1)),
                                        (__m512)c);
    sm_vi sg = q << 30;                                  /* bit 31: the quadrant's bit 1 */
    if (!cosine) sg = sg ^ (sm_vi)x;
    return (sm_vf)_mm512_ternarylogic_epi32((__m512i)v, (__m512i)sg, _mm512_set1_epi32((int32_t)0x80000000),
                                            0x78);       /* A ^ (B & C) */
#else
    sm_vf v = sm_self((q & 1) != 0, c, s);
    sm_vi sg = q << 30;
    if (!cosine) sg = sg ^ (sm_vi)x;
    return (sm_vf)((sm_vi)v ^ (sg & (int32_t)0x80000000));
#endif
}

/* lanes with |x| > 2^17, inf or NaN take the double-lane form (out of line, as in
 * simd_math_act32.h's SM_ACT_F32); the common case costs one compare into a mask and a
 * kortest (two: gcc tests the mask again after the core) and runs the core on |x| as it is.
 * (The same with the slow vector's work in one cold function made gcc rebuild constants
 * inside the loop: slower.) */
static inline sm_vf sm_sincosf(sm_vf x, int cosine) {
    sm_vi ia = (sm_vi)x & 0x7fffffff;
#if SM_VB == 64
    int anybig = _mm512_cmpgt_epi32_mask((__m512i)ia, _mm512_set1_epi32(0x48000000)) != 0;
#else
    int anybig = sm_any(ia > 0x48000000);
#endif
    sm_vi big = ia > 0x48000000;
    sm_vf xs = x, as = (sm_vf)ia;
    if (__builtin_expect(anybig, 0)) {
        xs = sm_self(big, sm_bcf(0.0f), x);
        as = sm_self(big, sm_bcf(0.0f), as);
    }
    sm_vf r = sm_sincosf_core(xs, as, cosine);
    if (__builtin_expect(anybig, 0)) r = sm_act_slow(x, big, r, cosine ? sm_cosf_h : sm_sinf_h);
    return r;
}
static inline sm_vf sm_sinf(sm_vf x) { return sm_sincosf(x, 0); }
static inline sm_vf sm_cosf(sm_vf x) { return sm_sincosf(x, 1); }

#endif /* __FMA__ */
#endif
