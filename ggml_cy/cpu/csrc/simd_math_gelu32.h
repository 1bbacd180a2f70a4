/* ggml_cy SIMD math functions, part 3b (issue 14 item 2): float32 gelu_erf, AVX-512 form,
 * included by simd_math.h after simd_math_erf.h (whose form avx2 keeps; the x86-64-v2
 * baseline keeps the double-lane one). Coefficients: tools/fit_gelu_erf32.py.
 *
 * gelu_erf x Phi(x) = m for x < 0 and x - m for x >= 0, with m = x Q(a), a = |x|, Q the upper
 * normal tail, Q(a) = e^(-a^2/2) G(a) as in simd_math_erf.h, each factor cheaper, for issue
 * 14's 4-ulp budget instead of 1.7: 33 zmm uops a vector instead of 40 (32.5 in the row,
 * which tests two vectors' range at once).
 *   G        32 pieces, eighth octaves of a + 1 on [0, 15) (one vpermt2ps a coefficient),
 *            degree 4 in v = a - mid, G = c0 + v q(v) rounded once on G's scale, mid where
 *            G / C is a float (Gal), so c0 is exact. Relative error of the fit 6.1e-8.
 *   e^-a^2/2 a^2 = hh + ll exactly (FMA); -a^2/2 = u ln2 + r with u a multiple of 1/16 (the
 *            magic sum 1.5 2^19 rounds to sixteenths; the low 4 bits of its bits are
 *            j = 16u mod 16); R = 2r = (-hh - u 2ln2) + (-ll - u 2ln2lo), the first exact
 *            (u 2ln2 has bits down to 2^-27 only), |R| <= ln2/16; then
 *            e^(-a^2/2) = 2^floor(u) 2^(j/16) (1 + R p(R)), p of degree 2 (1.7e-9).
 *            The table holds C 2^(j/16) and the G pieces fit G / C, C = 1.8131 chosen so
 *            that all 16 entries are floats to 1.6e-8 (2^(j/16) rounded: 4.7e-8).
 *   m        y = (x G/C) C 2^(j/16), m = 2^floor(u) (y + y R p) by one vscalefps (it floors
 *            its exponent): one rounding where m is subnormal (the tail x < -13.3).
 * Vectors with all |x| <= 12 run it as is; others clamp |x| to 14.5 (the result is -0 below
 * -14.36, and x - m = x above 12) and put the special values back (NaN; -inf -> NaN as
 * ggml's formula gives, without a flag): the lanes within 12 get the same bits either way.
 * Measured over every float32 input: max 3.44 ulp for x < 0 (near -7.4, the widest pieces),
 * 2.78 for x >= 0. */
#ifndef GGML_CY_SIMD_MATH_GELU32_H
#define GGML_CY_SIMD_MATH_GELU32_H

#if SM_VB == 64

/* sm_g32_t: G / C (C = 1.8130948543548584) in 32 pieces (eighth octaves of a + 1 on [0, 15), rotated by 1016 mod 32 = 24: the index is bits(a + 1) >> 20), degree 4, relative error (exact arithmetic) 6.05e-08 */
static const float sm_g32_t_mid[32] = {
    0x1.200084p0f, 0x1.600206p0f, 0x1.a00f18p0f, 0x1.e010dep0f, 0x1.0ffda0p1f, 0x1.2ff6b8p1f, 0x1.50061ep1f, 0x1.700beap1f,
    0x1.a001fcp1f, 0x1.dffe30p1f, 0x1.100fbcp2f, 0x1.2ffd4ep2f, 0x1.50044ep2f, 0x1.701022p2f, 0x1.8ff820p2f, 0x1.b000dep2f,
    0x1.e00a96p2f, 0x1.100182p3f, 0x1.30106cp3f, 0x1.4ffe5cp3f, 0x1.701096p3f, 0x1.8fff70p3f, 0x1.afee02p3f, 0x1.c9a398p3f,
    0x1.000026p-4f, 0x1.800388p-3f, 0x1.400136p-2f, 0x1.c00102p-2f, 0x1.1ff216p-1f, 0x1.600954p-1f, 0x1.a0094ap-1f, 0x1.dffd44p-1f};
static const float sm_g32_t_c0[32] = {
    0x1.151d92p-3f, 0x1.ebaaecp-4f, 0x1.b889bep-4f, 0x1.8e38fep-4f, 0x1.6ac77ep-4f, 0x1.4cb23ap-4f, 0x1.32d9e4p-4f, 0x1.1c8852p-4f,
    0x1.004c3ap-4f, 0x1.c401dap-5f, 0x1.93a9f0p-5f, 0x1.6c85cap-5f, 0x1.4c05a0p-5f, 0x1.30b3d6p-5f, 0x1.198ba2p-5f, 0x1.058696p-5f,
    0x1.d8819cp-6f, 0x1.a27898p-6f, 0x1.7753e2p-6f, 0x1.544f5cp-6f, 0x1.371bdap-6f, 0x1.1e97cap-6f, 0x1.09a400p-6f, 0x1.f5ba5cp-7f,
    0x1.0cd774p-2f, 0x1.e94d9ap-3f, 0x1.bf8b32p-3f, 0x1.9b4702p-3f, 0x1.7ba078p-3f, 0x1.5fc4c4p-3f, 0x1.473708p-3f, 0x1.317358p-3f};
static const float sm_g32_t_c1[32] = {
    -0x1.15be7ap-4f, -0x1.c26688p-5f, -0x1.7290c6p-5f, -0x1.34fa38p-5f, -0x1.04c20ep-5f, -0x1.bccc3cp-6f, -0x1.7ede66p-6f, -0x1.4c7f4ep-6f,
    -0x1.1119d8p-6f, -0x1.ae0f70p-7f, -0x1.5a3bd6p-7f, -0x1.1c6138p-7f, -0x1.da84c4p-8f, -0x1.916ccep-8f, -0x1.57f340p-8f, -0x1.29a3c6p-8f,
    -0x1.e77532p-9f, -0x1.7fa12cp-9f, -0x1.355b70p-9f, -0x1.fd91c6p-10f, -0x1.aa765cp-10f, -0x1.6a49e4p-10f, -0x1.3784dap-10f, -0x1.15fbb6p-10f,
    -0x1.a10622p-3f, -0x1.66e1b4p-3f, -0x1.36c512p-3f, -0x1.0eb1a2p-3f, -0x1.da4252p-4f, -0x1.a186dap-4f, -0x1.717cecp-4f, -0x1.488d38p-4f};
static const float sm_g32_t_c2[32] = {
    0x1.e38836p-6f, 0x1.6c0514p-6f, 0x1.16d22ep-6f, 0x1.b210a4p-7f, 0x1.56eebap-7f, 0x1.1283eep-7f, 0x1.bc9ab4p-8f, 0x1.6c287cp-8f,
    0x1.132f5ep-8f, 0x1.86a4cep-9f, 0x1.1da71cp-9f, 0x1.ad5390p-10f, 0x1.49a6cep-10f, 0x1.020edcp-10f, 0x1.9b5b18p-11f, 0x1.4c7bf2p-11f,
    0x1.ef22f8p-12f, 0x1.5b58aep-12f, 0x1.f8d0f4p-13f, 0x1.7a4d74p-13f, 0x1.2238eep-13f, 0x1.c7342ep-14f, 0x1.6b68c6p-14f, 0x1.329742p-14f,
    0x1.ff9e74p-4f, 0x1.a602aap-4f, 0x1.5e6d34p-4f, 0x1.24d900p-4f, 0x1.ec887ep-5f, 0x1.a07534p-5f, 0x1.6231d6p-5f, 0x1.2ee408p-5f};
static const float sm_g32_t_c3[32] = {
    -0x1.7ae216p-7f, -0x1.0b652cp-7f, -0x1.80b2d4p-8f, -0x1.19c210p-8f, -0x1.a3bd80p-9f, -0x1.3d6010p-9f, -0x1.e65c72p-10f, -0x1.799e4cp-10f,
    -0x1.091a08p-10f, -0x1.559abcp-11f, -0x1.c84fe4p-12f, -0x1.3b29d0p-12f, -0x1.bf1f2ep-13f, -0x1.44e07cp-13f, -0x1.e2f706p-14f, -0x1.6d613cp-14f,
    -0x1.f1d8fcp-15f, -0x1.37eafep-15f, -0x1.991b3ap-16f, -0x1.174408p-16f, -0x1.891ecap-17f, -0x1.1cce02p-17f, -0x1.a66fa0p-18f, -0x1.50cb90p-18f,
    -0x1.0b9f3ep-4f, -0x1.aa2010p-5f, -0x1.55a8e6p-5f, -0x1.13bd68p-5f, -0x1.c007b6p-6f, -0x1.6e0f46p-6f, -0x1.2d01ccp-6f, -0x1.f1de9ep-7f};
static const float sm_g32_t_c4[32] = {
    0x1.0f6fa8p-8f, 0x1.69b040p-9f, 0x1.ec178ap-10f, 0x1.553542p-10f, 0x1.e1b5b8p-11f, 0x1.59f512p-11f, 0x1.f7d068p-12f, 0x1.748a00p-12f,
    0x1.e70de4p-13f, 0x1.1ec762p-13f, 0x1.6013cap-14f, 0x1.c0b310p-15f, 0x1.273eb0p-15f, 0x1.8fcc30p-16f, 0x1.15a24ap-16f, 0x1.8a4122p-17f,
    0x1.eb36dcp-18f, 0x1.13ceeap-18f, 0x1.47a226p-19f, 0x1.97e41ep-20f, 0x1.080fb0p-20f, 0x1.619b40p-21f, 0x1.e765c4p-22f, 0x1.701072p-22f,
    0x1.ef8112p-6f, 0x1.7e4600p-6f, 0x1.296f7ap-6f, 0x1.d19f62p-7f, 0x1.6eea8ap-7f, 0x1.22d7b4p-7f, 0x1.d05190p-8f, 0x1.74cf68p-8f};
/* C 2^(j/16), j = 0..15, rounded to float (relative error 1.55e-08) */
static const float sm_g32_exp2t[16] = {
    0x1.d026fcp0f, 0x1.e4b3bap0f, 0x1.fa2962p0f, 0x1.084922p1f, 0x1.13fc92p1f, 0x1.2034a0p1f, 0x1.2cf72cp1f, 0x1.3a4a58p1f,
    0x1.48348ap1f, 0x1.56bc72p1f, 0x1.65e90cp1f, 0x1.75c1a2p1f, 0x1.864dd2p1f, 0x1.979590p1f, 0x1.a9a128p1f, 0x1.bc7948p1f};
/* e^(R/2) = 1 + R (1/2 + c1 R + c2 R^2) on |R| <= ln2/16: c1 = 0x1.000234p-3f, c2 = 0x1.5555a2p-6f, relative error 1.72e-09 */

/* m = x Q(|x|) for a = |x| <= 14.5, xc = x there (see the top) */
static inline sm_vf sm_gelu_erf_m16(sm_vf a, sm_vf xc) {
    sm_vi k = (sm_vi)(a + 1.0f) >> 20;            /* eighth octaves of a + 1: piece k - 1016 */
    sm_vf v = a - sm_lut32(sm_g32_t_mid, k);      /* (the tables rotated by 1016 mod 32) */
    sm_vf g = sm_lut32(sm_g32_t_c4, k) * v + sm_lut32(sm_g32_t_c3, k);
    g = g * v + sm_lut32(sm_g32_t_c2, k);
    g = g * v + sm_lut32(sm_g32_t_c1, k);
    g = g * v + sm_lut32(sm_g32_t_c0, k);
    sm_vf hh = a * a;
    sm_vf ll = sm_fmsf(a, a, hh);
    sm_vf t = hh * (-0.5f * SM_LOG2E) + 0x1.8p19f;                /* sixteenths of ln2 */
    sm_vf u = t - 0x1.8p19f;
    sm_vf rh = -(u * 0x1.62e430p0f) - hh;                          /* exact */
    sm_vf cr = -(u * -0x1.05c610p-28f) - ll;                      /* 2ln2 - 0x1.62e430p0 */
    sm_vf R = rh + cr;
    sm_vf p = (0x1.5555a2p-6f * R + 0x1.000234p-3f) * R + 0.5f;
    sm_vf rp = R * p;                                             /* e^(R/2) - 1 */
    sm_vf y = xc * g * sm_lut16(sm_g32_exp2t, (sm_vi)t);         /* j = low 4 bits of t */
    return (sm_vf)_mm512_scalef_ps((__m512)(y * rp + y), (__m512)u);
}

/* the fast form (all |x| <= 12; ia = the bits of |x|) */
static inline sm_vf sm_gelu_erf_fast16(sm_vf x, sm_vi ia) {
    return sm_subpos((sm_vi)x, x, sm_gelu_erf_m16((sm_vf)ia, x));
}

static inline sm_vf sm_gelu_erff_z(sm_vf x) {
    sm_vi ix = (sm_vi)x, ia = ix & 0x7fffffff;
    if (!sm_any_gt(ia, 0x41400000))                              /* all |x| <= 12 */
        return sm_gelu_erf_fast16(x, ia);
    sm_vi ic = sm_seli(ia < 0x41680000, ia, sm_bci(0x41680000));  /* 14.5 (NaN, inf too) */
    sm_vf m = sm_gelu_erf_m16((sm_vf)ic, (sm_vf)(ic | (ix & (int32_t)0x80000000)));
    sm_vf r = sm_subpos(ix, x, m);
    r = sm_self(ia > 0x7f800000, x, r);                          /* NaN */
    return sm_self(ix == (int32_t)0xff800000, sm_bcf(NAN), r);   /* -inf: NaN (ggml: -inf * 0) */
}

/* The row: two vectors a range test (two compares, one kortestw: 1.5 uops a vector instead
 * of 2); every vector still computes what sm_gelu_erff_z computes, so a row, its tail (a
 * padded block) and one element (sm_one_gelu_erf_f32) give the same bits. */
static inline void sm_row_gelu_erf_f32(const float * a, float * d, int64_t n) {
    const __m512i lim = _mm512_set1_epi32(0x41400000);
    int64_t i = kern_line_peel(d, (int64_t)sizeof(float), n);   /* the head: SM_ROW_BODY's */
    SM_ROW_SPAN(sm_vf, SM_NF, sm_gelu_erff_z, a, d, i);
    for (; i + 2 * SM_NF <= n; i += 2 * SM_NF) {
        sm_vf x0, x1;
        memcpy(&x0, a + i, sizeof x0);
        memcpy(&x1, a + i + SM_NF, sizeof x1);
        sm_vi i0 = (sm_vi)x0 & 0x7fffffff, i1 = (sm_vi)x1 & 0x7fffffff;
        if (_kortestz_mask16_u8(_mm512_cmpgt_epi32_mask((__m512i)i0, lim),
                                _mm512_cmpgt_epi32_mask((__m512i)i1, lim))) {
            x0 = sm_gelu_erf_fast16(x0, i0);
            x1 = sm_gelu_erf_fast16(x1, i1);
        } else {
            x0 = sm_gelu_erff_z(x0);
            x1 = sm_gelu_erff_z(x1);
        }
        memcpy(d + i, &x0, sizeof x0);
        memcpy(d + i + SM_NF, &x1, sizeof x1);
    }
    for (; i < n; i += SM_NF) {
        sm_vf v = sm_bcf(1.0f);
        const int64_t m = n - i < SM_NF ? n - i : SM_NF;
        memcpy(&v, a + i, (size_t)m * sizeof(float));
        v = sm_gelu_erff_z(v);
        memcpy(d + i, &v, (size_t)m * sizeof(float));
    }
}
static inline float sm_one_gelu_erf_f32(float x) { return sm_gelu_erff_z(sm_bcf(x))[0]; }

#endif
#endif
