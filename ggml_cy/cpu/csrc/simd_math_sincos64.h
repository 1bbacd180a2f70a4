/* float64 sin and cos with FMA (issue 14 item 2), included by simd_math_f64.h: the rows of
 * the avx2 and avx512 levels use it; the x86-64-v2 baseline (no FMA) keeps simd_math_f64.h's
 * sm_sincos_d. About 0.6x the old form's vector operations (AVX-512 loop: 35 for sin, 34 for
 * cos, were 59 and 56).
 *
 * x = n pi/2 + r, |r| <= pi/4, n = x 2/pi rounded, for |x| < 2^20 (|n| < 2^20). pi/2 =
 * C1 + C2 + C3 (tools/fit_sincos64.py): C1 in 53 bits, so that r1 = x - n C1 is exact in one
 * FMA (both multiples of 2^-53 for n != 0, difference below 1); C2 in 33 bits, so that n C2
 * is exact and r1 - n C2 = r + rl exactly by a fast two-sum (r1 is a multiple of 2^-53, n C2
 * of its own last bit, far below: the two-sum's exponent condition holds even where
 * |r1| < |n C2|); C3 the next 53 bits, n C3 taken into rl (one rounding, relative to rl).
 * What C1 + C2 + C3 misses of pi/2, 2^-141.8 a unit of n, is below 2^-122 absolute, and no
 * double below 2^20 is closer than 2^-60.5 to a multiple of pi/2 (the nearest ones are
 * tested: within 0.5 ulp). rl enters to first order: sin(r + rl) = sin r + rl cos r,
 * cos(r + rl) = cos r - r rl.
 * sin r = r + r^3 S(r^2), cos r = 1 + (-r^2/2 + r^4 C(r^2)), S and C of degree 5 (minimax
 * fits, relative error 2^-57.9 and 2^-63.9); -r^2/2 is exact inside the FMA that adds the
 * rest, so the cos lanes round twice (cos r - 1, then 1 +, within 0.75 ulp and what the
 * rest adds: measured 0.83 at most over 10^8 samples against long double, the sin lanes 0.72;
 * the old form 0.77, and 1.06 next to multiples of pi/2). Carrying cos r - 1's rounding
 * error too took 2 more operations for 0.72. Both are computed; the quadrant (n mod 4, t's
 * last bits) picks one and its sign. The FMAs are written out and nothing else can be
 * contracted, so avx2, avx512 (and an -O1 build) give the same bits.
 * Vectors with a lane of |x| >= 2^20, inf or NaN take an out-of-line path: those lanes from
 * sm_sincos_big_d (the C library, as before), the others from this code on a copy with those
 * lanes zeroed (nothing huge reaches the polynomials), so flags and specials are the old
 * form's. */
#ifndef GGML_CY_SIMD_MATH_SINCOS64_H
#define GGML_CY_SIMD_MATH_SINCOS64_H

#if defined(__FMA__) && (SM_VB == 64 || SM_VB == 32)
#define SM_SC64 1

/* tools/fit_sincos64.py */
#define SM_SC_C1 0x1.921fb54442d18p+0
#define SM_SC_C2 0x1.1a62633100000p-54
#define SM_SC_C3 0x1.1701b839a2520p-88
#define SM_SC_2PI 0x1.45f306dc9c883p-1
/* sin: degree 5 in r^2, |r| <= 0.785398912, relative error 3.77e-18 (2^-57.9) */
#define SM_SC_S0 -0x1.5555555555548p-3
#define SM_SC_S1 0x1.111111110f753p-7
#define SM_SC_S2 -0x1.a01a019bf077ap-13
#define SM_SC_S3 0x1.71de355d781f8p-19
#define SM_SC_S4 -0x1.ae5e533bc3c03p-26
#define SM_SC_S5 0x1.5d8dde39afeaap-33
/* cos: degree 5 in r^2, |r| <= 0.785398912, relative error 5.66e-20 (2^-63.9) */
#define SM_SC_K0 0x1.555555555554bp-5
#define SM_SC_K1 -0x1.6c16c16c15016p-10
#define SM_SC_K2 0x1.a01a019c8f4afp-16
#define SM_SC_K3 -0x1.27e4f7f1b1846p-22
#define SM_SC_K4 0x1.1ee9dbe6d27abp-29
#define SM_SC_K5 -0x1.8fa69170edcaap-37

/* a*b + c, c - a*b, a*b - c, one rounding (written out: the exactness of the reduction
 * depends on it, and gcc contracts by itself only from -O2) */
#if SM_VB == 64
#define SM_SC_FMA(f, a, b, c) (sm_vd)_mm512_##f##_pd((__m512d)(a), (__m512d)(b), (__m512d)(c))
#else
#define SM_SC_FMA(f, a, b, c) (sm_vd)_mm256_##f##_pd((__m256d)(a), (__m256d)(b), (__m256d)(c))
#endif
static inline sm_vd sm_fmad(sm_vd a, sm_vd b, sm_vd c) { return SM_SC_FMA(fmadd, a, b, c); }
static inline sm_vd sm_fnmad(sm_vd a, sm_vd b, sm_vd c) { return SM_SC_FMA(fnmadd, a, b, c); }
static inline sm_vd sm_fmsd2(sm_vd a, sm_vd b, sm_vd c) { return SM_SC_FMA(fmsub, a, b, c); }
#define SM_SCB(v) sm_bcd(v)

/* |x| < 2^20 (not inf, NaN) */
static inline sm_vd sm_sincos_d_fast(sm_vd x, int cosine) {
    /* cos x = sin(x + pi/2): the quadrant n + 1 (t's last bits), the same n and r */
    const double magic = cosine ? SM_MAGICD + 1.0 : SM_MAGICD;
    sm_vd t = sm_fmad(x, SM_SCB(SM_SC_2PI), SM_SCB(magic));
    sm_vd fn = t - magic;
    sm_vd r1 = sm_fnmad(fn, SM_SCB(SM_SC_C1), x);                   /* exact */
    sm_vd r = sm_fnmad(fn, SM_SCB(SM_SC_C2), r1);                   /* fast two-sum: */
    sm_vd rl = sm_fnmad(fn, SM_SCB(SM_SC_C2), r1 - r);              /* exact */
    rl = sm_fnmad(fn, SM_SCB(SM_SC_C3), rl);
    sm_vd z = r * r;
    sm_vd C = sm_fmad(SM_SCB(SM_SC_K5), z, SM_SCB(SM_SC_K4));
    C = sm_fmad(C, z, SM_SCB(SM_SC_K3));
    C = sm_fmad(C, z, SM_SCB(SM_SC_K2));
    C = sm_fmad(C, z, SM_SCB(SM_SC_K1));
    C = sm_fmad(C, z, SM_SCB(SM_SC_K0));
    sm_vd S = sm_fmad(SM_SCB(SM_SC_S5), z, SM_SCB(SM_SC_S4));
    S = sm_fmad(S, z, SM_SCB(SM_SC_S3));
    S = sm_fmad(S, z, SM_SCB(SM_SC_S2));
    S = sm_fmad(S, z, SM_SCB(SM_SC_S1));
    S = sm_fmad(S, z, SM_SCB(SM_SC_S0));
    /* cos r - 1 = -r^2/2 + (r^4 C - r rl), rounded once (r^2/2 exact in the FMA: from z it
     * would lose up to 0.25 ulp more); 1 + cm1 the second rounding */
    sm_vd nrh = -0.5 * r, rrl = r * rl;
    sm_vd cm1 = sm_fmad(nrh, r, sm_fmsd2(z * z, C, rrl));
    sm_vd cs = 1.0 + cm1;
    /* + rl cos r, cos r as 1 - r^2/2 (rl r^4/24 is below 2^-59 ulp): not waiting for cm1 */
    sm_vd sn = r + sm_fmad(r * z, S, sm_fmad(nrh, rrl, rl));
    sm_vl q = (sm_vl)t;                                  /* n (+1) in the low bits */
#if SM_VB == 64
    __mmask8 odd = _mm512_test_epi64_mask((__m512i)q, _mm512_set1_epi64(1));
    sm_vd v = (sm_vd)_mm512_mask_blend_pd(odd, (__m512d)sn, (__m512d)cs);
    v = (sm_vd)((sm_vl)v ^ ((q << 62) & SM_SIGN64));     /* quadrants 2, 3: negated */
    if (!cosine)   /* sin(-0) = -0 (the reduction gives +0): the input where it is +-0 */
        v = (sm_vd)_mm512_fixupimm_pd((__m512d)v, (__m512d)x, _mm512_set1_epi64(0x100), 0);
#else
    sm_vd v = sm_seld((q << 63) >> 63, cs, sn);
    v = (sm_vd)((sm_vl)v ^ ((q << 62) & SM_SIGN64));
    if (!cosine)
        v = sm_seld((sm_vl)(x == 0.0), x, v);
#endif
    return v;
}

__attribute__((noinline, cold)) static sm_vd sm_sincos_d_slow(sm_vd x, sm_vl big,
                                                              int cosine) {
    sm_vd v = sm_sincos_d_fast(sm_seld(big, sm_bcd(0.0), x), cosine);
    sm_sincos_big_d(&x, &v, cosine);
    return v;
}
static inline sm_vd sm_sincos_d2(sm_vd x, int cosine) {
    sm_vl big = (sm_vl)(((sm_vul)x << 1) >= 0x8260000000000000ULL);  /* |x| >= 2^20 */
#if SM_VB == 64
    /* the mask straight from the compare (sm_anyl would test a vector made from it) */
    __m512i lim = _mm512_set1_epi64((int64_t)0x8260000000000000ULL);
    if (__builtin_expect(_mm512_cmpge_epu64_mask(_mm512_slli_epi64((__m512i)x, 1), lim) != 0, 0))
#else
    if (__builtin_expect(sm_anyl(big), 0))
#endif
        return sm_sincos_d_slow(x, big, cosine);
    return sm_sincos_d_fast(x, cosine);
}
static inline sm_vd sm_sin_d2(sm_vd x) { return sm_sincos_d2(x, 0); }
static inline sm_vd sm_cos_d2(sm_vd x) { return sm_sincos_d2(x, 1); }

#else
#define SM_SC64 0
#endif
#endif
