/* ggml_cy SIMD math: float32 power (issue 14 item 2), included by simd_math.h after
 * simd_math_f64.h (it reads simd_math_tab64.h's tables).
 *
 * x^y = 2^(y log2 x), evaluated in double lanes (half a float vector at a time) and rounded
 * once to float32: log2 x = k + log2 c + r P(r) from the 16-interval table (r = z/c - 1,
 * |r| <= 0.0342, one FMA where the level has it), t = y log2 x, 2^t = 2^n T_j (1 + s E(s))
 * with T_j = 2^(j/16) from the exp table and |s| <= 1/32 (tools/fit_pow32.py: P degree 5,
 * relative 2^-37; E degree 3, 2^-38.5). Against the exact value the error before the final
 * rounding stays below 2^-29 relative (1/32 of a float ulp), so the result is within
 * 0.53 ulp, and an exactly representable power (2^10, 3^2, 0.5^3, 1^y, x^0) comes out exact.
 *
 * The fast lanes: x finite and nonzero (negative only with an integral y, the sign put back
 * for an odd one), y finite, and |t| inside [-125.5, 127.5], where the result is a normal
 * float32 and none of the computation's steps can raise a flag but "inexact". Every other
 * lane (zeros, infinities, NaN, a negative base to a fractional power, results that
 * overflow, underflow or come near either) is marked in *slow and computed by the caller with
 * the C library's powf and numpy's flag rules (kernels_elem.h, kern_pow_vec_f32); its inputs
 * are replaced by 1 here, so that it raises nothing on the way. Which lanes are fast depends
 * on the lane's own x and y only, so a value's result does not depend on its neighbours.
 * Lookups: vpermt2pd with AVX-512, a gather with AVX2 (the baseline keeps powf:
 * SM_POW32_VECTOR). */
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

/* t[idx & 15] */
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

/* Halves of a float vector as double lanes and back (AVX-512: one instruction each, where
 * gcc's generic conversions take four). h: 0 the low half, 1 the high one. */
#if SM_VB == 64
static inline sm_vd sm_half_fd(sm_vf v, int h) {
    __m256 x = h ? _mm512_extractf32x8_ps((__m512)v, 1) : _mm512_castps512_ps256((__m512)v);
    return (sm_vd)_mm512_cvtps_pd(x);
}
static inline sm_vl sm_half_il(sm_vi v, int h) {
    __m256i x = h ? _mm512_extracti32x8_epi32((__m512i)v, 1) : _mm512_castsi512_si256((__m512i)v);
    return (sm_vl)_mm512_cvtepi32_epi64(x);
}
static inline sm_vf sm_join_df(sm_vd lo, sm_vd hi) {
    return (sm_vf)_mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps((__m512d)lo)),
                                     _mm512_cvtpd_ps((__m512d)hi), 1);
}
static inline sm_vi sm_join_li(sm_vl lo, sm_vl hi) {
    return (sm_vi)_mm512_inserti32x8(_mm512_castsi256_si512(_mm512_cvtepi64_epi32((__m512i)lo)),
                                     _mm512_cvtepi64_epi32((__m512i)hi), 1);
}
#else
/* (and k's half as doubles: the AVX2 reduction's) */
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
#endif

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

#if SM_VB == 64
/* AVX-512: log2 of a positive double from its own bits (64-bit shifts and the int64 to
 * double conversion are single instructions there; 9% faster on Zen 4 than converting the
 * float reduction's k and interval) */
static inline sm_vd sm_pow32_log2x(sm_vd x) {
    sm_vl ix = (sm_vl)x;
    sm_vl tmp = ix - 0x3fe8800000000000LL;           /* 0.765625 */
    sm_vl k = tmp >> 52;
    return sm_pow32_log2((sm_vd)(ix - (k << 52)), __builtin_convertvector(k, sm_vd), tmp >> 48);
}
#endif

/* half a vector: l = log2 |x|, y finite, neg: the lanes whose x was negative. Returns the
 * result; *slow gets the lanes to recompute. */
static inline __attribute__((always_inline)) sm_vd sm_pow32_half(sm_vd l, sm_vd y, sm_vl neg,
                                                                 sm_vl * slow) {
    sm_vd t = y * l;
    sm_vl in = (sm_vl)(t >= -125.5) & (sm_vl)(t <= 127.5);
    sm_vd r = sm_pow32_exp2(sm_seld(in, t, sm_bcd(0.0)));
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

/* x^y on the fast lanes; *slow: the lanes (all ones) the caller must compute otherwise.
 * AVX2: x's reduction is done on the float bits, all lanes at once (32-bit integer
 * operations, which AVX2 has; a subnormal x is scaled by 2^23 first), the double halves get
 * z, k and the interval. */
static inline __attribute__((always_inline)) sm_vf sm_powf_fast(sm_vf x, sm_vf y, sm_vi * slow) {
    sm_vi ix = (sm_vi)x, iy = (sm_vi)y;
    sm_vi ax = ix & 0x7fffffff;
    sm_vi ok = ((sm_vu)(ax - 1) < 0x7f7fffffu) & ((iy & 0x7fffffff) < 0x7f800000);
    sm_vf xs = sm_self(ok, (sm_vf)ax, sm_bcf(1.0f));
    sm_vf ys = sm_self(ok, y, sm_bcf(1.0f));
    sm_vi neg = ok & (ix < 0);
    sm_vd l0, l1;
#if SM_VB == 64
    l0 = sm_pow32_log2x(sm_half_fd(xs, 0));
    l1 = sm_pow32_log2x(sm_half_fd(xs, 1));
#else
    sm_vi sub = ax < 0x00800000;
    xs = sm_self(sub, sm_self(sub, xs, sm_bcf(0.0f)) * 0x1p23f, xs);   /* exact, no overflow */
    sm_vi tmp = (sm_vi)xs - 0x3f440000;              /* 0.765625 */
    sm_vi k = (tmp >> 23) + (sub & -23);
    sm_vi idx = tmp >> 19;                           /* the low 4 bits: the interval */
    sm_vf z = (sm_vf)((sm_vi)xs - (tmp & (int32_t)0xff800000));
    l0 = sm_pow32_log2(sm_half_fd(z, 0), sm_half_id(k, 0), sm_half_il(idx, 0));
    l1 = sm_pow32_log2(sm_half_fd(z, 1), sm_half_id(k, 1), sm_half_il(idx, 1));
#endif
    sm_vl s0, s1;
    sm_vd r0 = sm_pow32_half(l0, sm_half_fd(ys, 0), sm_half_il(neg, 0), &s0);
    sm_vd r1 = sm_pow32_half(l1, sm_half_fd(ys, 1), sm_half_il(neg, 1), &s1);
    *slow = sm_join_li(s0, s1) | ~ok;
    return sm_join_df(r0, r1);
}

#endif
