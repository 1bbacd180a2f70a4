/* ggml_cy SIMD math: float32 power (issue 14 item 2), included by simd_math.h after
 * simd_math_f64.h (the AVX2 form reads simd_math_tab64.h's tables).
 *
 * x^y = 2^(y log2 x). Two forms, one per level:
 * - AVX-512, in float lanes (tools/fit_pow32_avx512.py): vgetexpps and vgetmantps split x
 *   into 2^k m, m in [0.75, 1.5) (subnormals too); m's bits 18..22 pick one of 32 intervals
 *   (vpermt2ps reads the tables), whose 1/c makes r = m/c - 1 exact in one FMA, |r| <= 2^-5.
 *   log2 x = k + log2 c + r/ln2 + r^2 C2 + r^3 P(r) is carried as a float pair (S, lo): the
 *   r/ln2 and r^2 C2 products and their sums keep their rounding errors (FMA residuals), so
 *   the pair is good to 2^-35 relative; t = y (S + lo) likewise as a pair (T, Tl), and 2^t =
 *   2^n T_j (1 + d_j) (1 + f E(f)) with 32-entry tables, |f| <= 1/64 + |Tl|. Measured 0.576
 *   ulp (the worst: x just below 1 + 2^-5, where the r^3 term, rounded in floats, is 2^-11.6
 *   of log2 x, times |t| near 125); about 80 instructions for 16 elements, against some 135
 *   for the double form below.
 * - AVX2, in double lanes (half a float vector at a time, rounded once to float32): log2 x =
 *   k + log2 c + r P(r) from the 16-interval table (r = z/c - 1, |r| <= 0.0342), t = y log2
 *   x, 2^t = 2^n T_j (1 + s E(s)) with T_j = 2^(j/16) from the exp table and |s| <= 1/32
 *   (tools/fit_pow32.py: P degree 5, relative 2^-37; E degree 3, 2^-38.5); the error before
 *   the final rounding stays below 2^-29 relative, so the result is within 0.53 ulp.
 * Either way an exactly representable power (2^10, 3^2, 0.5^3, 1^y, x^0) comes out exact.
 *
 * The fast lanes: x finite and nonzero (negative only with an integral y, the sign put back
 * for an odd one), y finite, and t inside [-125.5, 127.5], where the result is a normal
 * float32. Every other lane (zeros, infinities, NaN, a negative base to a fractional power,
 * results that overflow, underflow or come near either) is marked in *slow (lane k: bit k)
 * and computed by the caller with the C library's powf and numpy's flag rules (kernels_elem.h,
 * kern_pow_vec_f32). The float-lane form's steps can raise flags numpy would not (y log2 x
 * overflowing on a lane it leaves, a tiny y's products underflowing on a lane whose result
 * is 1): kernels_elem.h restores the flags after the vector code, before the slow lanes. Which lanes are fast depends on the lane's own x and y
 * only, so a value's result does not depend on its neighbours. The x86-64-v2 baseline keeps
 * powf (SM_POW32_VECTOR). */
#ifndef GGML_CY_SIMD_MATH_POW32_H
#define GGML_CY_SIMD_MATH_POW32_H

/* the levels that take the vector form (kernels_elem.h): with two double lanes and the
 * table read element by element, the x86-64-v2 baseline ran it at 1.4x powf's time (the
 * eager call, 1e6 elements: 11.5 against 8.2 ns an element) */
#if SM_VB >= 32
#define SM_POW32_VECTOR 1
#else
#define SM_POW32_VECTOR 0
#endif

/* t[idx & 15] (also simd_math_pow64.h's) */
static inline sm_vd sm_tab16_any(const double * t, sm_vl idx) {
#if SM_F64_512
    return sm_lut16d(t, idx);                        /* simd_math_f64.h: one vpermt2pd */
#elif SM_VB == 32 && defined(__AVX2__)
    return (sm_vd)_mm256_i64gather_pd(t, (__m256i)(idx & 15), 8);
#else
    sm_vd r;
    for (int k = 0; k < SM_ND; k++) r[k] = t[idx[k] & 15];
    return r;
#endif
}

#if SM_VB == 64
/* ---- AVX-512: float lanes ---- */
/* tools/fit_pow32_avx512.py: r in [-0.02051, 0.03125] */
static const float sm_pow32f_invc[32] __attribute__((aligned(64))) = {
    0x1p+0f, 0x1.e8p-1f, 0x1.d8p-1f, 0x1.dp-1f,
    0x1.cp-1f, 0x1.b4p-1f, 0x1.a8p-1f, 0x1.ap-1f,
    0x1.94p-1f, 0x1.8cp-1f, 0x1.8p-1f, 0x1.78p-1f,
    0x1.7p-1f, 0x1.68p-1f, 0x1.6p-1f, 0x1.58p-1f,
    0x1.5p+0f, 0x1.4cp+0f, 0x1.44p+0f, 0x1.4p+0f,
    0x1.38p+0f, 0x1.34p+0f, 0x1.2cp+0f, 0x1.28p+0f,
    0x1.2p+0f, 0x1.1cp+0f, 0x1.18p+0f, 0x1.14p+0f,
    0x1.1p+0f, 0x1.0cp+0f, 0x1.08p+0f, 0x1p+0f};
static const float sm_pow32f_th[32] __attribute__((aligned(64))) = {
    0x0p+0f, 0x1.1bbp-4f, 0x1.e0bp-4f, 0x1.22d8p-3f,
    0x1.8a88p-3f, 0x1.dacp-3f, 0x1.169cp-2f, 0x1.32cp-2f,
    0x1.5dfcp-2f, 0x1.7b88p-2f, 0x1.a9p-2f, 0x1.c818p-2f,
    0x1.e7ep-2f, 0x1.042cp-1f, 0x1.14c6p-1f, 0x1.25cp-1f,
    0x1.3722p-1f, 0x1.3ffap-1f, 0x1.52p-1f, 0x1.5b2cp-1f,
    0x1.6dep-1f, 0x1.7768p-1f, 0x1.8ad8p-1f, 0x1.94c2p-1f,
    0x1.a9p-1f, 0x1.b354p-1f, 0x1.bdcep-1f, 0x1.c87p-1f,
    0x1.d338p-1f, 0x1.de2ap-1f, 0x1.e946p-1f, 0x1p+0f};
static const float sm_pow32f_tl[32] __attribute__((aligned(64))) = {
    0x0p+0f, 0x1.953002p-19f, 0x1.ae8f3p-20f, 0x1.6e155ap-18f,
    0x1.80abfcp-19f, 0x1.169f22p-18f, 0x1.4d8fc6p-24f, -0x1.1c8f12p-22f,
    0x1.cf1eeap-18f, 0x1.f02cf2p-18f, -0x1.a39fbep-20f, 0x1.dc2d46p-18f,
    -0x1.40358ep-19f, -0x1.5a32c2p-20f, -0x1.3e032ep-18f, 0x1.408c78p-18f,
    0x1.5db83ap-20f, 0x1.a9ce9ep-18f, -0x1.a39fbep-18f, 0x1.ed0cbap-20f,
    -0x1.eac382p-20f, -0x1.f6b4c2p-20f, 0x1.1b3cdap-19f, 0x1.0e9258p-18f,
    -0x1.a39fbep-19f, 0x1.61d876p-19f, 0x1.3b992cp-18f, -0x1.0902b6p-18f,
    0x1.20a6dep-21f, -0x1.c4fd14p-19f, -0x1.a6eb1ep-18f, 0x0p+0f};
static const float sm_pow32f_t[32] __attribute__((aligned(64))) = {
    0x1p+0f, 0x1.059b0ep+0f, 0x1.0b5586p+0f, 0x1.11301ep+0f,
    0x1.172b84p+0f, 0x1.1d4874p+0f, 0x1.2387a6p+0f, 0x1.29e9ep+0f,
    0x1.306fep+0f, 0x1.371a74p+0f, 0x1.3dea64p+0f, 0x1.44e086p+0f,
    0x1.4bfdaep+0f, 0x1.5342b6p+0f, 0x1.5ab07ep+0f, 0x1.6247ecp+0f,
    0x1.6a09e6p+0f, 0x1.71f75ep+0f, 0x1.7a1148p+0f, 0x1.82589ap+0f,
    0x1.8ace54p+0f, 0x1.93737cp+0f, 0x1.9c4918p+0f, 0x1.a5503cp+0f,
    0x1.ae89fap+0f, 0x1.b7f77p+0f, 0x1.c199bep+0f, 0x1.cb720ep+0f,
    0x1.d5818ep+0f, 0x1.dfc974p+0f, 0x1.ea4afap+0f, 0x1.f50766p+0f};
static const float sm_pow32f_d[32] __attribute__((aligned(64))) = {
    0x0p+0f, -0x1.947414p-25f, 0x1.8d96d4p-25f, -0x1.dda2fcp-25f,
    -0x1.9c0c22p-27f, -0x1.a2fbb2p-25f, 0x1.964904p-25f, -0x1.2b0dbcp-25f,
    0x1.125002p-25f, -0x1.cde8cep-26f, 0x1.370be4p-25f, 0x1.336de2p-30f,
    -0x1.0a355p-25f, -0x1.c541b4p-26f, -0x1.00d8acp-27f, -0x1.6cb284p-25f,
    0x1.26055cp-26f, 0x1.8b2bb8p-26f, -0x1.05cb44p-25f, -0x1.1c2142p-26f,
    0x1.67a1cap-28f, -0x1.348e56p-25f, 0x1.a3b5e4p-28f, -0x1.0b7ec8p-25f,
    -0x1.f9c304p-27f, -0x1.e4c886p-26f, -0x1.6961b4p-28f, -0x1.b5151ep-28f,
    -0x1.a5217cp-28f, -0x1.ab7132p-26f, 0x1.61428ep-28f, -0x1.2ad5f8p-27f};
#define SM_POW32F_ILH 0x1.715476p+0f
#define SM_POW32F_ILL 0x1.4ae0cp-26f
#define SM_POW32F_C2H -0x1.715476p-1f
#define SM_POW32F_C2L -0x1.4ae0cp-27f
/* log2(1 + r) relative error 2.69e-12 (2^-38.4) */
#define SM_POW32F_P0 0x1.ec709ep-2f
#define SM_POW32F_P1 -0x1.715476p-2f
#define SM_POW32F_P2 0x1.2777d4p-2f
#define SM_POW32F_P3 -0x1.eca286p-3f
#define SM_POW32F_P4 0x1.9927f2p-3f
/* 2^f relative error 1.25e-10 (2^-32.9) */
#define SM_POW32F_E0 0x1.62e43p-1f
#define SM_POW32F_E1 0x1.ebfce6p-3f
#define SM_POW32F_E2 0x1.c6af84p-5f

/* t[idx & 31] for a 32-entry table */
#define SM_POW32F_TAB(t, idx) \
    _mm512_permutex2var_ps(_mm512_load_ps(t), (idx), _mm512_load_ps((t) + 16))

/* x^y on the fast lanes; *slow: the lanes (bits) the caller must compute otherwise. The
 * lanes it leaves compute garbage (NaN, infinities) without harm: their flags are dropped
 * (kernels_elem.h) and their results replaced. */
static inline __attribute__((always_inline)) sm_vf sm_powf_fast(sm_vf vx, sm_vf vy, int * slow) {
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 x = (__m512)vx, y = (__m512)vy;
    /* fpclass 0x9f: NaN, zeros, infinities; 0x99: NaN, infinities */
    __mmask16 ok = ~(_mm512_fpclass_ps_mask(x, 0x9f) | _mm512_fpclass_ps_mask(y, 0x99));
    __mmask16 neg = ok & _mm512_movepi32_mask((__m512i)x);
    /* |x| = 2^k m: the sign dropped by both; the table's Th adds the 1 that k lacks for m
     * below 1 */
    __m512 m = _mm512_getmant_ps(x, _MM_MANT_NORM_p75_1p5, _MM_MANT_SIGN_zero);
    __m512 k = _mm512_getexp_ps(x);
    __m512i idx = _mm512_srli_epi32(_mm512_castps_si512(m), 18);
    __m512 r = _mm512_fmsub_ps(m, SM_POW32F_TAB(sm_pow32f_invc, idx), one);      /* exact */
    __m512 tl = SM_POW32F_TAB(sm_pow32f_tl, idx);
    const __m512 ilh = _mm512_set1_ps(SM_POW32F_ILH), c2h = _mm512_set1_ps(SM_POW32F_C2H);
    /* the high part: h0 = k + Th (exact), h1 = h0 + r ILh and S = h1 + r^2 C2H, each with
     * its rounding error (l1, e2); rr: r^2's */
    __m512 h0 = _mm512_add_ps(k, SM_POW32F_TAB(sm_pow32f_th, idx));
    __m512 h1 = _mm512_fmadd_ps(r, ilh, h0);
    __m512 l1 = _mm512_fmsub_ps(r, ilh, _mm512_sub_ps(h1, h0));
    __m512 s = _mm512_mul_ps(r, r);
    __m512 rr = _mm512_fmsub_ps(r, r, s);
    __m512 S = _mm512_fmadd_ps(s, c2h, h1);
    __m512 e2 = _mm512_fmadd_ps(s, c2h, _mm512_sub_ps(h1, S));
    /* the low part: Tl + r ILL + rr C2H + r^2 (C2L + r P(r)) + the errors */
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(SM_POW32F_P4), r, _mm512_set1_ps(SM_POW32F_P3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SM_POW32F_P2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SM_POW32F_P1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SM_POW32F_P0));
    __m512 lo = _mm512_fmadd_ps(r, _mm512_set1_ps(SM_POW32F_ILL), tl);
    lo = _mm512_fmadd_ps(rr, c2h, lo);
    lo = _mm512_fmadd_ps(s, _mm512_fmadd_ps(r, p, _mm512_set1_ps(SM_POW32F_C2L)), lo);
    lo = _mm512_add_ps(lo, _mm512_add_ps(l1, e2));
    /* t = T + Tl; Tl (y lo, up to 0.04) goes into the rounding to 1/32 too */
    __m512 T = _mm512_mul_ps(y, S);
    __m512 Tl = _mm512_fmadd_ps(y, lo, _mm512_fmsub_ps(y, S, T));
    __mmask16 in = _mm512_mask_cmp_ps_mask(
        _mm512_cmp_ps_mask(T, _mm512_set1_ps(-125.5f), _CMP_GE_OQ), T,
        _mm512_set1_ps(127.5f), _CMP_LE_OQ);
    const __m512 magic = _mm512_set1_ps(0x1.8p18f);      /* spacing 1/32 */
    __m512 nb = _mm512_add_ps(_mm512_add_ps(T, Tl), magic);
    __m512 f = _mm512_add_ps(_mm512_sub_ps(T, _mm512_sub_ps(nb, magic)), Tl);
    /* nb's low bits: 32 (t rounded to 1/32), j its last 5, n = its rest */
    __m512i nbi = _mm512_castps_si512(nb);
    __m512 tj = SM_POW32F_TAB(sm_pow32f_t, nbi);
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(SM_POW32F_E2), f, _mm512_set1_ps(SM_POW32F_E1));
    q = _mm512_fmadd_ps(q, f, _mm512_set1_ps(SM_POW32F_E0));
    __m512 res = _mm512_fmadd_ps(tj, _mm512_fmadd_ps(f, q, SM_POW32F_TAB(sm_pow32f_d, nbi)), tj);
    __m512i ex = _mm512_and_si512(_mm512_slli_epi32(nbi, 18), _mm512_set1_epi32((int)0xff800000));
    res = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(res), ex));
    __mmask16 bad = (__mmask16)~(ok & in);
    if (__builtin_expect(neg != 0, 0)) {
        /* y integral: rounding leaves it; odd: the last bit of its int32 (every float from
         * 2^24 on is even, and the conversion's 0x80000000 beyond 2^31 is too) */
        __mmask16 integral = _mm512_cmp_ps_mask(_mm512_roundscale_ps(y, 0x08), y, _CMP_EQ_OQ);
        __mmask16 odd = _mm512_test_epi32_mask(_mm512_cvtps_epi32(y), _mm512_set1_epi32(1));
        res = _mm512_mask_xor_ps(res, neg & odd, res, _mm512_set1_ps(-0.0f));
        bad |= neg & ~integral;
    }
    *slow = bad;
    return (sm_vf)res;
}

#else
/* ---- AVX2 (and generic): double lanes ---- */
/* tools/fit_pow32.py: relative error 7.16e-12 (2^-37.0) */
#define SM_POW32_L0 0x1.71547652c3895p+0
#define SM_POW32_L1 -0x1.71547652f6845p-1
#define SM_POW32_L2 0x1.ec70931b0c1f1p-2
#define SM_POW32_L3 -0x1.715468907aadfp-2
#define SM_POW32_L4 0x1.27d5a8e5ad5d6p-2
#define SM_POW32_L5 -0x1.ed2e5cbdf0705p-3
/* tools/fit_pow32.py: relative error 2.51e-12 (2^-38.5) */
#define SM_POW32_E0 0x1.62e42fec3b360p-1
#define SM_POW32_E1 0x1.ebfbdffd1f3f7p-3
#define SM_POW32_E2 0x1.c6b3f6d835442p-5
#define SM_POW32_E3 0x1.3b2a5643f82f6p-7

/* Halves of a float vector as double lanes and back (and k's half as doubles) */
static inline sm_vd sm_half_fd(sm_vf v, int h) {
    sm_vfh x;
    memcpy(&x, (const char *)&v + h * sizeof x, sizeof x);
    return __builtin_convertvector(x, sm_vd);
}
static inline sm_vd sm_half_id(sm_vi v, int h) {
    sm_vih x;
    memcpy(&x, (const char *)&v + h * sizeof x, sizeof x);
    return __builtin_convertvector(x, sm_vd);
}
static inline sm_vl sm_half_il(sm_vi v, int h) {
    sm_vih x;
    memcpy(&x, (const char *)&v + h * sizeof x, sizeof x);
    return __builtin_convertvector(x, sm_vl);
}
static inline sm_vf sm_join_df(sm_vd lo, sm_vd hi) {
    sm_vfh l = __builtin_convertvector(lo, sm_vfh), h = __builtin_convertvector(hi, sm_vfh);
    sm_vf r;
    memcpy(&r, &l, sizeof l);
    memcpy((char *)&r + sizeof l, &h, sizeof h);
    return r;
}
static inline sm_vi sm_join_li(sm_vl lo, sm_vl hi) {
    sm_vih l = __builtin_convertvector(lo, sm_vih), h = __builtin_convertvector(hi, sm_vih);
    sm_vi r;
    memcpy(&r, &l, sizeof l);
    memcpy((char *)&r + sizeof l, &h, sizeof h);
    return r;
}

/* log2 x = k + log2 c + log2(1 + r) for x = 2^k z, z in [0.765625, 1.53125) (a double), idx
 * its table interval; relative error about 2^-37 */
static inline sm_vd sm_pow32_log2(sm_vd z, sm_vd k, sm_vl idx) {
    sm_vd r = z * sm_tab16_any(sm_logt_invc, idx) - 1.0;
    sm_vd r2 = r * r;
    sm_vd p = (SM_POW32_L5 * r + SM_POW32_L4) * r2 + (SM_POW32_L3 * r + SM_POW32_L2);
    p = p * r2 + (SM_POW32_L1 * r + SM_POW32_L0);
    /* log2 c's high part (a multiple of 2^-42) alone: the low part, below 2^-44, moves t by
     * under 2^-32 on the fast lanes */
    return (k + sm_tab16_any(sm_log2t_hi, idx)) + r * p;
}

/* 2^t for t in [-125.5, 127.5] (a normal float32 result) */
static inline sm_vd sm_pow32_exp2(sm_vd t) {
    sm_vd kt = t * 16.0 + SM_MAGICD;                 /* 16 t rounded to an integer k */
    sm_vd fn = kt - SM_MAGICD;
    sm_vd s = t - fn * 0.0625;                       /* exact */
    sm_vl kb = (sm_vl)kt;
    sm_vd S = (sm_vd)((sm_vl)sm_tab16_any((const double *)sm_expt_hi, kb) + (kb << 48));
    sm_vd e = (SM_POW32_E3 * s + SM_POW32_E2) * (s * s) + (SM_POW32_E1 * s + SM_POW32_E0);
    return S + S * (s * e);
}


/* half a vector: l = log2 |x|, y finite, neg: the lanes whose x was negative. Returns the
 * result; *slow gets the lanes to recompute. */
static inline __attribute__((always_inline)) sm_vd sm_pow32_half(sm_vd l, sm_vd y, sm_vl neg,
                                                                 sm_vl * slow) {
    sm_vd t = y * l;
    sm_vl in = (sm_vl)(t >= -125.5) & (sm_vl)(t <= 127.5);
    sm_vd r = sm_pow32_exp2(t);                       /* garbage where !in: replaced */
    *slow = ~in;
    if (sm_anyl(neg)) {
        /* y integral: y + 1.5 2^52 has y's parity in its last bit (|y| < 2^24; above, every
         * float is an even integer) */
        sm_vd ay = (sm_vd)((sm_vl)y & 0x7fffffffffffffffLL);
        sm_vl big = (sm_vl)(ay >= 0x1p24);
        sm_vd m = sm_seld(big, sm_bcd(0.0), y) + SM_MAGICD;
        sm_vl integral = big | (sm_vl)(m - SM_MAGICD == sm_seld(big, sm_bcd(0.0), y));
        sm_vl odd = ~big & -((sm_vl)m & 1);
        r = sm_seld(neg & odd, -r, r);
        *slow |= neg & ~integral;
    }
    return r;
}

/* x^y on the fast lanes; *slow: the lanes (bits) the caller must compute otherwise. x's
 * reduction is done on the float bits, all lanes at once (32-bit integer
 * operations, which AVX2 has; a subnormal x is scaled by 2^23 first), the double halves get
 * z, k and the interval. */
static inline __attribute__((always_inline)) sm_vf sm_powf_fast(sm_vf x, sm_vf y, int * slow) {
    sm_vi ix = (sm_vi)x, iy = (sm_vi)y;
    sm_vi ax = ix & 0x7fffffff;
    sm_vi ok = ((sm_vu)(ax - 1) < 0x7f7fffffu) & ((iy & 0x7fffffff) < 0x7f800000);
    sm_vf ys = y;
    sm_vi neg = ok & (ix < 0);
    sm_vd l0, l1;
    /* the other lanes compute garbage without harm, as in the AVX-512 form (their flags, a
     * big x times 2^23 overflowing among them, are dropped by kernels_elem.h) */
    sm_vi sub = ax < 0x00800000;
    sm_vf xs = sm_self(sub, (sm_vf)ax * 0x1p23f, (sm_vf)ax);   /* exact where taken */
    sm_vi tmp = (sm_vi)xs - 0x3f440000;              /* 0.765625 */
    sm_vi k = (tmp >> 23) + (sub & -23);
    sm_vi idx = tmp >> 19;                           /* the low 4 bits: the interval */
    sm_vf z = (sm_vf)((sm_vi)xs - (tmp & (int32_t)0xff800000));
    l0 = sm_pow32_log2(sm_half_fd(z, 0), sm_half_id(k, 0), sm_half_il(idx, 0));
    l1 = sm_pow32_log2(sm_half_fd(z, 1), sm_half_id(k, 1), sm_half_il(idx, 1));
    sm_vl s0, s1;
    sm_vd r0 = sm_pow32_half(l0, sm_half_fd(ys, 0), sm_half_il(neg, 0), &s0);
    sm_vd r1 = sm_pow32_half(l1, sm_half_fd(ys, 1), sm_half_il(neg, 1), &s1);
    *slow = sm_lanebits(sm_join_li(s0, s1) | ~ok);
    return sm_join_df(r0, r1);
}

#endif   /* SM_VB */

#endif
