/* float32 tanh in float lanes (issue 14 item 2), avx2/avx512 with FMA.
 *
 * simd_math_more.h's sm_tanhf evaluates both an odd polynomial (|x| < 0.9) and
 * 1 - 2/(e^2|x| + 1) for every lane, an exponential and a division per vector: 0.6x numpy's
 * AVX-512 loop. Here one polynomial per lane, its coefficients looked up by the lane's piece
 * (simd_math_erf.h's sm_lut16: one vpermps per coefficient on AVX-512): 16 pieces,
 * quarter octaves of a + 1 (a = |x|, clamped to 9.02, beyond which tanh rounds to 1),
 * tanh a = c0 + v q(v), v = a - mid, q of degree 5, c0 = tanh(mid) with mid chosen where
 * tanh is a float to 2^-12 of its ulp (no rounding error of its own); piece 0 has mid = c0
 * = 0, so the result is v q(v), relative near 0 (tiny x: x itself, -0 kept by the sign
 * put back). Coefficients: tools/fit_tanh.py (fits made for this code; relative error of the
 * pieces below 6e-9 in exact arithmetic). Measured within 1.2 ulp (tests/test_simd_math.py;
 * numpy's own float32 tanh here: 1.37). NaN lanes return x; no floating-point flag is
 * raised (the clamp is an integer compare). The baseline keeps sm_tanhf.
 * AVX-512 (the same bits, fewer uops: 20 zmm uops a vector instead of 25, where 8 are the
 * port-5 vpermps): the clamp is one vrangeps (min of magnitudes: no and/compare/select),
 * and the sign and the NaN lanes go back in one masked vpternlogd under an ordered quiet
 * compare (vrangeps returns 9.02 for a NaN, raising no flag). */
#ifndef GGML_CY_SIMD_MATH_TANH_H
#define GGML_CY_SIMD_MATH_TANH_H

#if defined(__FMA__) && (SM_NF == 8 || SM_NF == 16)

/* sm_tanh_t: 16 pieces (quarter octaves of |x| + 1), degree 6, max relative error (exact arithmetic) 2.92e-08; tables rotated by 508 mod 16 */
static const float sm_tanh_t_mid[16] = {
    0x1.3ff0e4p+0f, 0x1.c003c0p+0f, 0x1.200394p+1f, 0x1.5ff05ep+1f,
    0x1.bffdc0p+1f, 0x1.1fe142p+2f, 0x1.6005f2p+2f, 0x1.9fef2ep+2f,
    0x1.fe2884p+2f, 0x1.20ac08p+3f, 0x1.20ac08p+3f, 0x1.20ac08p+3f,
    0.0f, 0x1.7ffa76p-2f, 0x1.4003d8p-1f, 0x1.c0129cp-1f};
static const float sm_tanh_t_c0[16] = {
    0x1.b249c2p-1f, 0x1.e1fcd4p-1f, 0x1.f4c076p-1f, 0x1.fbd406p-1f,
    0x1.ff1124p-1f, 0x1.ffdf88p-1f, 0x1.fffba0p-1f, 0x1.ffff68p-1f,
    0x1.fffff8p-1f, 0x1.p+0f, 0x1.p+0f, 0x1.p+0f,
    0.0f, 0x1.6ef06ap-2f, 0x1.1bf728p-1f, 0x1.686fb4p-1f};
static const float sm_tanh_t_c1[16] = {
    0x1.1f41cep-2f, 0x1.d21fbap-4f, 0x1.63fd12p-5f, 0x1.09e80cp-6f,
    0x1.dd4adap-9f, 0x1.03b92ap-11f, 0x1.180066p-14f, 0x1.300094p-17f,
    0x1.0056bap-21f, 0x1.f6dd58p-25f, 0x1.f6dd58p-25f, 0x1.f6dd58p-25f,
    0x1.p+0f, 0x1.be4176p-1f, 0x1.6281d0p-1f, 0x1.0242d2p-1f};
static const float sm_tanh_t_c2[16] = {
    -0x1.e75060p-3f, -0x1.b6ccf2p-4f, -0x1.5c2af0p-5f, -0x1.07bd62p-6f,
    -0x1.dc6b60p-9f, -0x1.03a81cp-11f, -0x1.17fdd2p-14f, -0x1.2ffdeap-17f,
    -0x1.000158p-21f, -0x1.1ccdf4p-9f, -0x1.1ccdf4p-9f, -0x1.1ccdf4p-9f,
    -0x1.268ec2p-20f, -0x1.3fd256p-2f, -0x1.893bc2p-2f, -0x1.6b9eaap-2f};
static const float sm_tanh_t_c3[16] = {
    0x1.bbbf7ep-4f, 0x1.01bb1ap-4f, 0x1.bbb792p-6f, 0x1.59e692p-7f,
    0x1.3c2870p-9f, 0x1.59acf4p-12f, 0x1.74e4fcp-15f, 0x1.94f84ep-18f,
    0x1.4f6216p-22f, -0x1.3d1106p-4f, -0x1.3d1106p-4f, -0x1.3d1106p-4f,
    -0x1.5544c8p-2f, -0x1.6dcd98p-3f, -0x1.240220p-6f, 0x1.4f3bccp-4f};
static const float sm_tanh_t_c4[16] = {
    -0x1.9baa9ep-7f, -0x1.816b38p-6f, -0x1.93bbb2p-7f, -0x1.4e8892p-8f,
    -0x1.39eaf0p-10f, -0x1.596eb4p-13f, -0x1.74de62p-16f, -0x1.95383ap-19f,
    -0x1.53931ap-23f, 0x1.45ecc0p+4f, 0x1.45ecc0p+4f, 0x1.45ecc0p+4f,
    -0x1.36509ap-10f, 0x1.584966p-3f, 0x1.1a61f6p-3f, 0x1.f1b9eep-5f};
static const float sm_tanh_t_c5[16] = {
    -0x1.42ce94p-6f, 0x1.c8edf2p-9f, 0x1.04a2aap-8f, 0x1.f635f4p-10f,
    0x1.0112f2p-11f, 0x1.1f7ef2p-14f, 0x1.37216cp-17f, 0x1.511ddep-20f,
    0x1.40c6a8p-24f, 0x1.692ef2p+10f, 0x1.692ef2p+10f, 0x1.692ef2p+10f,
    0x1.250978p-3f, 0x1.37261ap-6f, -0x1.bc9768p-5f, -0x1.e16e26p-5f};
static const float sm_tanh_t_c6[16] = {
    0x1.eeea74p-7f, 0x1.13d156p-9f, -0x1.77a7c2p-11f, -0x1.1def84p-11f,
    -0x1.4ab1f0p-13f, -0x1.7b7530p-16f, -0x1.9e2f90p-19f, -0x1.bcee32p-22f,
    -0x1.918644p-26f, 0x1.829888p+14f, 0x1.829888p+14f, 0x1.829888p+14f,
    -0x1.2eeb32p-5f, -0x1.1b0d3ap-4f, -0x1.84ab3ep-6f, 0x1.a2922cp-7f};

static inline sm_vf sm_tanhf_lut(sm_vf x) {
#if SM_VB == 64
    /* min(|x|, 9.02) in one vrangeps (min of magnitudes, sign cleared; a NaN gives 9.02,
     * without a flag: put back below) */
    sm_vf a = (sm_vf)_mm512_range_ps((__m512)x, _mm512_set1_ps(0x1.20a4p+3f), 0x0a);
#else
    sm_vi ix = (sm_vi)x, ia = ix & 0x7fffffff;
    sm_vf a = (sm_vf)sm_seli(ia > 0x41105200, sm_bci(0x41105200), ia);    /* min(|x|, 9.02) */
#endif
    sm_vi k = (sm_vi)(a + 1.0f) >> 21;                  /* the piece, rotated by 508 */
    sm_vf v = a - sm_lut16(sm_tanh_t_mid, k);
    sm_vf q = sm_lut16(sm_tanh_t_c6, k) * v + sm_lut16(sm_tanh_t_c5, k);
    q = q * v + sm_lut16(sm_tanh_t_c4, k);
    q = q * v + sm_lut16(sm_tanh_t_c3, k);
    q = q * v + sm_lut16(sm_tanh_t_c2, k);
    q = q * v + sm_lut16(sm_tanh_t_c1, k);
    sm_vf r = q * v + sm_lut16(sm_tanh_t_c0, k);
#if SM_VB == 64
    /* x's sign put back in the lanes that are not NaN (quiet compare: no flag), NaN lanes
     * keep x: one masked vpternlogd (B | (A & C)) */
    __mmask16 ok = _mm512_cmp_ps_mask((__m512)x, (__m512)x, _CMP_ORD_Q);
    return (sm_vf)_mm512_mask_ternarylogic_epi32((__m512i)x, ok, (__m512i)r,
                                                 _mm512_set1_epi32((int32_t)0x80000000), 0xec);
#else
    r = (sm_vf)((sm_vi)r | (ix & (int32_t)0x80000000));
    return sm_self(ia > 0x7f800000, x, r);              /* NaN */
#endif
}

#endif
#endif
