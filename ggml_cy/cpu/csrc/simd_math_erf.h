/* ggml_cy SIMD math functions, part 3 (issue 14 item 2): float32 erf and gelu_erf in float
 * lanes, included by simd_math.h after simd_math_more.h. The x86-64-v2 baseline (no FMA)
 * keeps simd_math_more.h's double-lane sm_erff_h / sm_gelu_erff_h (see the end of this file).
 *
 * Both evaluate one polynomial per lane whose coefficients are looked up by the lane's piece
 * index, a permute of a small table (16 entries: one vpermps on AVX-512, two and a blend on
 * AVX2; 32 entries: one vpermt2ps / four vpermps and three blends), so a vector costs one
 * polynomial whatever pieces its lanes fall in. Each piece is centred, v = |x| - mid.
 * Coefficients: tools/fit_erf.py (Lawson-weighted least squares in float64 against mpmath,
 * rounded to float one coefficient at a time with the rest refitted).
 *
 * erf      |x| clamped to 3.99 (erf rounds to 1 from 3.92), 32 pieces of width 1/8, degree 5.
 *          Below 1/2 the form is erf a = a + a q(v) (relative near 0, and no rounding on the
 *          result's scale but the last where erf is steep); above, c0 + (v q(v) + c0lo) with
 *          c0 + c0lo = erf(mid) in two floats. The sign put back. Relative error of the
 *          coefficients 3.4e-9; measured max 0.76 ulp.
 * gelu_erf x Phi(x) = m for x < 0 and x - m for x >= 0, with m = x Q(|x|), Q the upper normal
 *          tail, Q(a) = e^(-a^2/2) G(a), G smooth (the Mills ratio / sqrt(2 pi)): 16 pieces
 *          on [0, 15) (quarter octaves of a + 1), degree 6, expanded about points where G
 *          is a float to 2e-11 (searched near each centre, Gal's accurate tables), so
 *          G = c0 + v q(v) needs no second float. a^2 is formed exactly as hh + ll (FMA)
 *          and -a^2/2 reduced to n ln2 + R/2 with ll and the ln2 tail carried into R = 2r
 *          (no halving of a), e^(-a^2/2) = 2^n (1 + te), te = R p(R); m = x 2^n (c0 + w),
 *          w = (c0 + g)(1 + te) - c0 by two FMAs and x c0 + x w by one more: no rounding on
 *          c0's scale but m's. Relative accuracy holds far into the tail, where x Phi(x) is
 *          subnormal (to x = -14.36; -0 beyond). Vectors with all |x| <= 12 scale x by 2^n
 *          first (all normal); others take a second form with |x| clamped (x < 0: 14.5,
 *          x > 0: 12) whose lanes beyond 12 scale last (two steps, one rounding), the
 *          special values put back (NaN; -inf -> NaN as ggml's formula gives, without a
 *          flag). Measured max 1.65 ulp
 *          (near x = -1.4 .. -2.5, where c0 and the e^r - 1 part partly cancel). */
#ifndef GGML_CY_SIMD_MATH_ERF_H
#define GGML_CY_SIMD_MATH_ERF_H

#if defined(__FMA__) && (SM_NF == 8 || SM_NF == 16)

/* sm_erf_t: 32 pieces of 1/8, degree 5 (the first 4: erf a = a + a q(v)), max relative error (exact arithmetic) 3.40e-09 */
static const float sm_erf_t_mid[32] = {
    0.0f, 0x1.800000p-3f, 0x1.400000p-2f, 0x1.c00000p-2f, 0x1.200000p-1f, 0x1.600000p-1f, 0x1.a00000p-1f, 0x1.e00000p-1f,
    0x1.100000p0f, 0x1.300000p0f, 0x1.500000p0f, 0x1.700000p0f, 0x1.900000p0f, 0x1.b00000p0f, 0x1.d00000p0f, 0x1.f00000p0f,
    0x1.080000p1f, 0x1.180000p1f, 0x1.280000p1f, 0x1.380000p1f, 0x1.480000p1f, 0x1.580000p1f, 0x1.680000p1f, 0x1.780000p1f,
    0x1.880000p1f, 0x1.980000p1f, 0x1.a80000p1f, 0x1.b80000p1f, 0x1.c80000p1f, 0x1.d80000p1f, 0x1.e80000p1f, 0x1.f80000p1f};
static const float sm_erf_t_c0[32] = {
    0.0f, 0.0f, 0.0f, 0.0f, 0x1.25b8a8p-1f, 0x1.569244p-1f, 0x1.7fb9c0p-1f, 0x1.a1551ap-1f,
    0x1.bbef10p-1f, 0x1.d0580cp-1f, 0x1.df85eap-1f, 0x1.ea7730p-1f, 0x1.f21ca0p-1f, 0x1.f74a6ep-1f, 0x1.fab0dep-1f, 0x1.fcdaccp-1f,
    0x1.fe3080p-1f, 0x1.fefccep-1f, 0x1.ff7338p-1f, 0x1.ffb5bep-1f, 0x1.ffd9f8p-1f, 0x1.ffed16p-1f, 0x1.fff6dep-1f, 0x1.fffbb8p-1f,
    0x1.fffe0ep-1f, 0x1.ffff24p-1f, 0x1.ffffa2p-1f, 0x1.ffffd8p-1f, 0x1.fffff0p-1f, 0x1.fffffap-1f, 0x1.fffffep-1f, 0x1.000000p0f};
static const float sm_erf_t_c0lo[32] = {
    0.0f, 0.0f, 0.0f, 0.0f, 0x1.16dbb0p-26f, -0x1.6a62b2p-28f, -0x1.449fe2p-27f, 0x1.6aaeb0p-29f,
    -0x1.086778p-27f, -0x1.a605b6p-26f, 0x1.1b6312p-26f, 0x1.da1778p-26f, -0x1.da1f32p-26f, -0x1.971f20p-27f, -0x1.d8bb3ep-27f, 0x1.417f6ep-26f,
    -0x1.a95f86p-26f, 0x1.a04e5cp-27f, 0x1.4af88cp-29f, -0x1.300322p-30f, -0x1.ce2b6ep-27f, 0x1.ec4ab0p-27f, 0x1.d126a6p-26f, 0x1.e20938p-26f,
    0x1.40856ep-33f, 0x1.b510eep-28f, -0x1.0b9d3ep-28f, 0x1.c345e4p-26f, 0x1.cfcf48p-28f, -0x1.5dc99ap-28f, -0x1.5e4156p-27f, -0x1.b9823cp-26f};
static const float sm_erf_t_c1[32] = {
    0x1.06eba8p-3f, 0x1.d83ed0p-4f, 0x1.7bb29ap-4f, 0x1.ee4b36p-5f, 0x1.a5074ep-1f, 0x1.681ff2p-1f, 0x1.2a8dcep-1f, 0x1.dfca26p-2f,
    0x1.75a91ap-2f, 0x1.1a0dc6p-2f, 0x1.9cb5bep-3f, 0x1.24a7b8p-3f, 0x1.92470ap-4f, 0x1.0bf97ep-4f, 0x1.5a08e8p-5f, 0x1.b1160ap-6f,
    0x1.06ae14p-6f, 0x1.34d7dcp-7f, 0x1.5ff276p-8f, 0x1.84ba30p-9f, 0x1.a02436p-10f, 0x1.afc85ep-11f, 0x1.b23a5ap-12f, 0x1.a74068p-13f,
    0x1.8fdc1cp-14f, 0x1.6e2368p-15f, 0x1.44f220p-16f, 0x1.1783d0p-17f, 0x1.d2139cp-19f, 0x1.789fbap-20f, 0x1.26f9e4p-21f, 0x1.bfd75cp-23f};
static const float sm_erf_t_c2[32] = {
    0x1.63512ap-22f, -0x1.1ad8ecp-3f, -0x1.c63106p-3f, -0x1.2cd338p-2f, -0x1.d9a828p-2f, -0x1.ef2be6p-2f, -0x1.e52670p-2f, -0x1.c1cd84p-2f,
    -0x1.8d03aep-2f, -0x1.4ef05cp-2f, -0x1.0ed74ap-2f, -0x1.a4b128p-3f, -0x1.3a478cp-3f, -0x1.c43512p-4f, -0x1.39981cp-4f, -0x1.a38d5ep-5f,
    -0x1.0ee384p-5f, -0x1.51cc08p-6f, -0x1.96f032p-7f, -0x1.d9c296p-8f, -0x1.0a96ecp-8f, -0x1.221a32p-9f, -0x1.31506cp-10f, -0x1.36d27ep-11f,
    -0x1.32237ep-12f, -0x1.23c300p-13f, -0x1.0d171cp-14f, -0x1.e06782p-16f, -0x1.9f164ep-17f, -0x1.5b3018p-18f, -0x1.19232ap-19f, -0x1.b8d280p-21f};
static const float sm_erf_t_c3[32] = {
    -0x1.812bfcp-2f, -0x1.6948b2p-2f, -0x1.413f86p-2f, -0x1.0a938ap-2f, -0x1.9c3fc6p-4f, -0x1.a3f6c4p-7f, 0x1.fe38b2p-5f, 0x1.e4d882p-4f,
    0x1.3957dep-3f, 0x1.5642c6p-3f, 0x1.5064f8p-3f, 0x1.319d52p-3f, 0x1.04547ap-3f, 0x1.a36a08p-4f, 0x1.41417ep-4f, 0x1.d5bd12p-5f,
    0x1.48b0c4p-5f, 0x1.b92564p-6f, 0x1.1c59ccp-6f, 0x1.608980p-7f, 0x1.a4bf78p-8f, 0x1.e3c974p-9f, 0x1.0c240ap-9f, 0x1.1eb6a0p-10f,
    0x1.27db60p-11f, 0x1.26be50p-12f, 0x1.1b94f6p-13f, 0x1.07963cp-14f, 0x1.d97f70p-16f, 0x1.9b1000p-17f, 0x1.58fd30p-18f, 0x1.17f622p-19f};
static const float sm_erf_t_c4[32] = {
    0x1.55ae88p-12f, 0x1.4bd640p-4f, 0x1.00a336p-3f, 0x1.40c998p-3f, 0x1.75447ep-3f, 0x1.52d47ap-3f, 0x1.0f8662p-3f, 0x1.747500p-4f,
    0x1.8938dcp-5f, 0x1.434462p-7f, -0x1.3ff128p-6f, -0x1.3cd5d8p-5f, -0x1.89c87cp-5f, -0x1.95d556p-5f, -0x1.74f104p-5f, -0x1.3b20f8p-5f,
    -0x1.f1628cp-6f, -0x1.721f2ap-6f, -0x1.0538b4p-6f, -0x1.5f3a92p-7f, -0x1.c31e7ap-8f, -0x1.15630ap-8f, -0x1.472c62p-9f, -0x1.729edcp-10f,
    -0x1.93abc4p-11f, -0x1.a71974p-12f, -0x1.ab18ecp-13f, -0x1.9f7732p-14f, -0x1.85ac96p-15f, -0x1.609040p-16f, -0x1.33d30ep-17f, -0x1.037396p-18f};
static const float sm_erf_t_c5[32] = {
    0x1.c5ceb4p-4f, 0x1.958e9ep-4f, 0x1.38fecap-4f, 0x1.8a01d8p-5f, -0x1.6a5d42p-7f, -0x1.5bd6ecp-5f, -0x1.0e7120p-4f, -0x1.287cd8p-4f,
    -0x1.141b80p-4f, -0x1.b01924p-5f, -0x1.3a93a6p-5f, -0x1.74a564p-6f, -0x1.0d1b8ap-7f, 0x1.478308p-9f, 0x1.338edcp-7f, 0x1.9e10acp-7f,
    0x1.aac882p-7f, 0x1.7ed012p-7f, 0x1.38db3ep-7f, 0x1.d879fcp-8f, 0x1.4f514cp-8f, 0x1.c25506p-9f, 0x1.1effa0p-9f, 0x1.5cad62p-10f,
    0x1.950112p-11f, 0x1.c20f92p-12f, 0x1.e00ec2p-13f, 0x1.eb3cacp-14f, 0x1.e3713ep-15f, 0x1.c96e88p-16f, 0x1.a10008p-17f, 0x1.6df270p-18f};

/* sm_gq_t: G in 16 pieces (rotated by 508 mod 16 = 12: the index is bits(a + 1) >> 21), degree 6, relative error (exact arithmetic) 5.09e-09, of c0 2.2e-11 */
static const float sm_gq_t_mid[16] = {
    0x1.3ff1b8p0f, 0x1.bffd44p0f, 0x1.1ff240p1f, 0x1.5fe1e6p1f, 0x1.bffd08p1f, 0x1.1ff760p2f, 0x1.5ff446p2f, 0x1.a001dap2f,
    0x1.00051cp3f, 0x1.3ff586p3f, 0x1.7fff9ap3f, 0x1.b988dap3f, 0x1.001932p-3f, 0x1.80088ep-2f, 0x1.400008p-1f, 0x1.bffe78p-1f};
static const float sm_gq_t_c0[16] = {
    0x1.d8a57ep-3f, 0x1.7b5c60p-3f, 0x1.3ab994p-3f, 0x1.0bcc6ap-3f, 0x1.b39984p-4f, 0x1.5b645ep-4f, 0x1.2028b6p-4f, 0x1.eba3e6p-5f,
    0x1.9261a6p-5f, 0x1.43adf0p-5f, 0x1.0e7e14p-5f, 0x1.d74352p-6f, 0x1.d0aadcp-2f, 0x1.84b4d4p-2f, 0x1.4b1ddep-2f, 0x1.1e7ca6p-2f};
static const float sm_gq_t_c1[16] = {
    -0x1.c4a850p-4f, -0x1.325618p-4f, -0x1.b423a2p-5f, -0x1.4355f6p-5f, -0x1.b6086ap-6f, -0x1.1bf1dep-6f, -0x1.8b3184p-7f, -0x1.21ac28p-7f,
    -0x1.86a95cp-8f, -0x1.fc1328p-9f, -0x1.63d082p-9f, -0x1.0e704ap-9f, -0x1.5e6940p-2f, -0x1.06bd44p-2f, -0x1.932346p-3f, -0x1.3bb03ap-3f};
static const float sm_gq_t_c2[16] = {
    0x1.7b91dcp-5f, 0x1.bd4ab8p-6f, 0x1.15c4fep-6f, 0x1.6ca2a0p-7f, 0x1.a2a5aep-8f, 0x1.bfdd7cp-9f, 0x1.07fb8ep-9f, 0x1.4ea0eap-10f,
    0x1.7610b4p-11f, 0x1.8b17a0p-12f, 0x1.d0fcccp-13f, 0x1.34d46cp-13f, 0x1.a4d964p-3f, 0x1.222ba8p-3f, 0x1.9a45a8p-4f, 0x1.28c00ap-4f};
static const float sm_gq_t_c3[16] = {
    -0x1.1f46c6p-6f, -0x1.296536p-7f, -0x1.49e11ep-8f, -0x1.83e456p-9f, -0x1.7e8008p-10f, -0x1.55d72ep-11f, -0x1.5824f8p-12f, -0x1.7b53acp-13f,
    -0x1.616046p-14f, -0x1.307564p-15f, -0x1.2ddebep-16f, -0x1.5ee8c6p-17f, -0x1.b02248p-4f, -0x1.15c6a8p-4f, -0x1.6e9452p-5f, -0x1.efa6d2p-6f};
static const float sm_gq_t_c4[16] = {
    0x1.9012e4p-8f, 0x1.722452p-9f, 0x1.70f96ap-10f, 0x1.882282p-11f, 0x1.4fb6dep-12f, 0x1.fa6fe6p-14f, 0x1.b67f48p-15f, 0x1.a66748p-16f,
    0x1.499f38p-17f, 0x1.d12d44p-19f, 0x1.857e1ep-20f, 0x1.8cc8cap-21f, 0x1.89d610p-5f, 0x1.dc2eb0p-6f, 0x1.27bcfep-6f, 0x1.78ae04p-7f};
static const float sm_gq_t_c5[16] = {
    -0x1.06a488p-9f, -0x1.b4f464p-11f, -0x1.8a4be4p-12f, -0x1.7f8c5ap-13f, -0x1.211ee2p-14f, -0x1.72a932p-16f, -0x1.142326p-17f, -0x1.d576bap-19f,
    -0x1.36cb76p-20f, -0x1.6622e8p-22f, -0x1.f881f6p-24f, -0x1.c5b1d6p-25f, -0x1.4616b2p-6f, -0x1.7364d0p-7f, -0x1.b3c1fep-8f, -0x1.051262p-8f};
static const float sm_gq_t_c6[16] = {
    0x1.408bbap-11f, 0x1.e3d8a4p-13f, 0x1.8e7f9ap-14f, 0x1.6415c0p-15f, 0x1.d817cep-17f, 0x1.03fadcp-18f, 0x1.512172p-20f, 0x1.f85ea2p-22f,
    0x1.1b194ap-23f, 0x1.0cc800p-25f, 0x1.4132fep-27f, 0x1.001ad4p-28f, 0x1.f093dcp-8f, 0x1.0c48e6p-8f, 0x1.283d32p-9f, 0x1.55456cp-10f};

/* t[k mod 32] for each lane's k */
static inline sm_vf sm_lut32(const float * t, sm_vi k) {
#if SM_NF == 16
    sm_vf t0, t1;
    memcpy(&t0, t, sizeof t0);
    memcpy(&t1, t + 16, sizeof t1);
    return __builtin_shuffle(t0, t1, k);                    /* vpermt2ps: k mod 32 */
#else
    sm_vf t0, t1, t2, t3;
    memcpy(&t0, t, sizeof t0);
    memcpy(&t1, t + 8, sizeof t1);
    memcpy(&t2, t + 16, sizeof t2);
    memcpy(&t3, t + 24, sizeof t3);
    sm_vf lo = __builtin_shuffle(t0, t1, k), hi = __builtin_shuffle(t2, t3, k);  /* k mod 16 */
    return (sm_vf)_mm256_blendv_ps((__m256)lo, (__m256)hi, (__m256)(k << 27));  /* bit 4 */
#endif
}

/* any lane of a above b (the compare straight into a mask register on AVX-512) */
static inline int sm_any_gt(sm_vi a, int32_t b) {
#if SM_VB == 64
    return _mm512_cmpgt_epi32_mask((__m512i)a, _mm512_set1_epi32(b)) != 0;
#else
    sm_vi m = a > b;
    return !_mm256_testz_si256((__m256i)m, (__m256i)m);
#endif
}
/* per lane: s < 0 ? n : p, one blend */
static inline sm_vf sm_selsign(sm_vi s, sm_vf n, sm_vf p) {
#if SM_VB == 64
    return (sm_vf)_mm512_mask_blend_ps(_mm512_cmplt_epi32_mask((__m512i)s, _mm512_setzero_si512()),
                                       (__m512)p, (__m512)n);
#else
    return (sm_vf)_mm256_blendv_ps((__m256)p, (__m256)n, (__m256)s);
#endif
}

/* per lane: s >= 0 ? x - m : m (AVX-512: one masked subtraction, 3% of gelu_erf's time) */
static inline sm_vf sm_subpos(sm_vi s, sm_vf x, sm_vf m) {
#if SM_VB == 64
    return (sm_vf)_mm512_mask_sub_ps((__m512)m, _mm512_cmpge_epi32_mask((__m512i)s, _mm512_setzero_si512()),
                                     (__m512)x, (__m512)m);
#else
    return sm_selsign(s, m, x - m);
#endif
}

static inline sm_vf sm_erff(sm_vf x) {
    sm_vi ix = (sm_vi)x, ia = ix & 0x7fffffff;
    /* |x| clamped to 3.99 (NaN's bits are above and clamp too; put back at the end) */
    sm_vi ic = sm_seli(ia < 0x407f5c29, ia, sm_bci(0x407f5c29));
    sm_vf a = (sm_vf)ic;
    sm_vi k = __builtin_convertvector(a * 8.0f, sm_vi);         /* piece [k/8, (k+1)/8) */
    sm_vf v = a - sm_lut32(sm_erf_t_mid, k);
    sm_vf q = sm_lut32(sm_erf_t_c5, k) * v + sm_lut32(sm_erf_t_c4, k);
    q = q * v + sm_lut32(sm_erf_t_c3, k);
    q = q * v + sm_lut32(sm_erf_t_c2, k);
    q = q * v + sm_lut32(sm_erf_t_c1, k);
    /* |x| < 1/2: a + a q (relative); above: c0 + (v q + c0lo) */
    sm_vi rel = k < 4;
    sm_vf r = sm_self(rel, a, sm_lut32(sm_erf_t_c0, k)) + (sm_self(rel, a, v) * q + sm_lut32(sm_erf_t_c0lo, k));
    r = (sm_vf)((sm_vi)r | (ix & (int32_t)0x80000000));
    return sm_self(ia > 0x7f800000, x, r);
}

/* t[k mod 16] for each lane's k */
static inline sm_vf sm_lut16(const float * t, sm_vi k) {
#if SM_NF == 16
    sm_vf t0;
    memcpy(&t0, t, sizeof t0);
    return __builtin_shuffle(t0, k);                        /* vpermps: k mod 16 */
#else
    sm_vf t0, t1;
    memcpy(&t0, t, sizeof t0);
    memcpy(&t1, t + 8, sizeof t1);
    return __builtin_shuffle(t0, t1, k);                    /* k mod 16 */
#endif
}

/* gelu_erf for a = |x| <= 14.5: Q(a) = 2^n (c0 + w) (see the top); returns w, sets *c0 and
 * *tt (n in its low bits, the format sm_gelu_erff's scalings take) */
static inline sm_vf sm_gelu_erf_parts(sm_vf a, sm_vf * c0, sm_vf * tt) {
    sm_vi k = (sm_vi)(a + 1.0f) >> 21;            /* quarter octaves of a + 1: piece k - 508 */
    sm_vf v = a - sm_lut16(sm_gq_t_mid, k);       /* (the tables rotated by 508 mod 16) */
    sm_vf q = sm_lut16(sm_gq_t_c6, k) * v + sm_lut16(sm_gq_t_c5, k);
    q = q * v + sm_lut16(sm_gq_t_c4, k);
    q = q * v + sm_lut16(sm_gq_t_c3, k);
    q = q * v + sm_lut16(sm_gq_t_c2, k);
    q = q * v + sm_lut16(sm_gq_t_c1, k);
    sm_vf g = q * v;                              /* G = c0 + g (c0 exact to 2e-11) */
    *c0 = sm_lut16(sm_gq_t_c0, k);
    /* a^2 = hh + ll exactly; the exponent -a^2/2 = n ln2 + R/2, R = -(hh + ll) - 2 n ln2
     * (ln2 in two parts): R is 2r formed without halving a (one product fewer), the same
     * roundings as r; exp's coefficients scaled by powers of 2 */
    sm_vf hh = a * a;
    sm_vf ll = sm_fmsf(a, a, hh);
    sm_vf t = hh * (-0.5f * SM_LOG2E) + SM_MAGIC;
    sm_vf fn = t - SM_MAGIC;
    *tt = t;
    sm_vf rh = -(fn * (2.0f * SM_LN2HI)) - hh;                   /* exact */
    sm_vf cr = -(fn * (2.0f * SM_LN2LO)) - ll;
    sm_vf R = rh + cr;
    sm_vf p = 0x1.6a4390p-16f * R + 0x1.123d0cp-12f;
    p = p * R + 0x1.5558c0p-9f;
    p = p * R + 0x1.55548ep-6f;
    p = p * R + 0x1.fffffcp-4f;
    p = p * R + 0.5f;
    sm_vf te = R * p;                                            /* e^(-a^2/2) = 2^n (1 + te) */
    return *c0 * te + (g * te + g);                              /* (c0 + g)(1 + te) - c0 */
}

static inline sm_vf sm_gelu_erff(sm_vf x) {
    sm_vi ix = (sm_vi)x, ia = ix & 0x7fffffff;
    sm_vf c0, tt;
    if (!sm_any_gt(ia, 0x41400000)) {                            /* all |x| <= 12 */
        sm_vf w = sm_gelu_erf_parts((sm_vf)ia, &c0, &tt);
#if SM_VB == 64
        /* x 2^n (normal) in one vscalefps instead of a shift and an add: the same value */
        sm_vf xs = (sm_vf)_mm512_scalef_ps((__m512)x, (__m512)(tt - SM_MAGIC));
#else
        sm_vf xs = (sm_vf)(ix + ((sm_vi)tt << 23));              /* x 2^n, normal */
#endif
        sm_vf m = xs * c0 + xs * w;
        return sm_subpos(ix, x, m);
    }
    /* second form: |x| clamped (x < 0: to 14.5, beyond the last nonzero result at -14.36;
     * x > 0: to 12, where x - m is x); the lanes beyond 12 scaled last */
    sm_vi slow = ia > 0x41400000;                                /* |x| > 12, inf, NaN */
    sm_vi neg = ix < 0;
    sm_vi lim = sm_seli(neg, sm_bci(0x41680000), sm_bci(0x41400000));
    sm_vi ic = sm_seli(ia < lim, ia, lim);
    sm_vf w = sm_gelu_erf_parts((sm_vf)ic, &c0, &tt);
    sm_vf xc = (sm_vf)(ic | (ix & (int32_t)0x80000000));
    sm_vf xs = sm_self(slow, xc, (sm_vf)(ix + ((sm_vi)tt << 23)));
    sm_vf m = xs * c0 + xs * w;
    sm_vi n = (sm_vi)tt - (sm_vi)sm_bcf(SM_MAGIC);
    m = sm_self(slow, sm_ldexp2(m, n), m);                      /* one rounding (subnormal) */
    sm_vf r = sm_subpos(ix, x, m);
    r = sm_self(ia > 0x7f800000, x, r);                          /* NaN */
    return sm_self(ix == (int32_t)0xff800000, sm_bcf(NAN), r);   /* -inf: NaN (ggml: -inf * 0) */
}

#else
/* the x86-64-v2 baseline (no FMA): the double-lane forms of simd_math_more.h, per half */
#define SM_HALVES(name, fh) static inline sm_vf name(sm_vf x) { return sm_via_halves(x, fh); }
SM_HALVES(sm_erff, sm_erff_h)
SM_HALVES(sm_gelu_erff, sm_gelu_erff_h)
#endif

#endif
