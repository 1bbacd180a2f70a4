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
 * double-lane form (out of line, as in simd_math_act32.h), so specials and flags are its. */
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

static inline sm_vf sm_sincosf_fast(sm_vf x, int cosine) {        /* |x| <= 2^17 */
    sm_vf t = x * SM_2OPI + SM_MAGIC;
    sm_vf fn = t - SM_MAGIC;
    sm_vi n = (sm_vi)t - (sm_vi)sm_bcf(SM_MAGIC);
    sm_vf r = sm_fnmaf(fn, sm_bcf(SM_PIO2_1), x);       /* exact */
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
    if (cosine) n = n + 1;
    sm_vf v = sm_self((n & 1) != 0, c, s);
    v = (sm_vf)((sm_vi)v ^ ((n & 2) << 30));            /* quadrants 2, 3: negated */
    /* sin x = x for |x| < 2^-12 (x^3/6 is below half an ulp): keeps -0, which the
     * reduction's x - 0 * P2 turns into +0 */
    if (!cosine) v = sm_self(((sm_vi)x & 0x7fffffff) < 0x39800000, x, v);
    return v;
}

static inline sm_vf sm_sinf_fast(sm_vf x) { return sm_sincosf_fast(x, 0); }
static inline sm_vf sm_cosf_fast(sm_vf x) { return sm_sincosf_fast(x, 1); }
SM_ACT_F32(sin, 0x48000000)                               /* |x| > 2^17, inf, NaN */
SM_ACT_F32(cos, 0x48000000)

#endif /* __FMA__ */
#endif
