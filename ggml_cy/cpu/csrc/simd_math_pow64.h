/* ggml_cy SIMD math: float64 power (issue 14 item 2), included by simd_math.h after
 * simd_math_pow32.h (its table reader) and simd_math_tab64.h's tables.
 *
 * x^y = 2^(y log2 x) with log2 x carried as hi + lo to about 2^-64 relative, so that
 * t = y log2 x (up to 1075 in magnitude) keeps about 2^-54 absolute:
 *   log2 x = k + log2 c + log2(1 + r), r = z/c - 1 exact (one FMA, the float64 log's
 *   16-interval table), log2(1 + r) = r IL + r^2 (-IL/2) + r^3 Q(r), the first two terms as
 *   double-doubles (IL = 1/ln2 in two parts, r^2 exact by an FMA), Q of degree 8
 *   (tools/fit_pow64.py: 2^-64.8 relative); k + (log2 c)_hi is exact, r IL is added by a
 *   two-sum, the r^2 and r^3 terms (first summed by a fast two-sum) by a fast two-sum
 *   (|them| < 0.04 |the sum|: the sum is log2 x, at least 0.022 outside c = 1's interval,
 *   r IL inside it), the low parts gathered in lo;
 *   t = th + tl (th = y hi, tl = its FMA residual + y lo);
 *   2^t = 2^n T_j (1 + T_lo) 2^s, 16 n + j = round(16 th), s = (th - (16 n + j)/16) + tl,
 *   |s| <= 1/32, 2^s - 1 = s E(s), E of degree 6 (2^-60.2); one rounding at the end.
 * Measured within 0.59 ulp of an 80-bit reference (tests/test_simd_pow.py).
 *
 * Fast lanes, as in float32: x a finite normal number (negative only with an integral y
 * below 2^51, the sign put back for an odd one), y finite, th within [-1021.5, 1023.5] (a
 * normal result). The rest (zeros, subnormal x, infinities, NaN, a negative base to a
 * fractional power, results near or past the double range) is marked in *slow and computed
 * by the caller with the C library's pow and numpy's flag rules; the flags the vector code
 * raises on the way are dropped (kernels_elem.h).
 * Levels with FMA (avx2, avx512); the baseline keeps pow (SM_POW64_VECTOR). */
#ifndef GGML_CY_SIMD_MATH_POW64_H
#define GGML_CY_SIMD_MATH_POW64_H

#if defined(__FMA__) && SM_VB >= 32
#define SM_POW64_VECTOR 1

#define SM_POW64_ILH 0x1.71547652b82fep+0              /* 1/ln2 = ILH + ILL */
#define SM_POW64_ILL 0x1.777d0ffda0d24p-56
/* tools/fit_pow64.py: Q, relative error of the log2(1 + r) sum 2^-64.8 */
#define SM_POW64_Q0 0x1.ec709dc3a03fep-2
#define SM_POW64_Q1 -0x1.71547652b8148p-2
#define SM_POW64_Q2 0x1.2776c50ef9845p-2
#define SM_POW64_Q3 -0x1.ec709dc96d9c1p-3
#define SM_POW64_Q4 0x1.a61762afe63b1p-3
#define SM_POW64_Q5 -0x1.7154422d679d3p-3
#define SM_POW64_Q6 0x1.484ad7eaad39cp-3
#define SM_POW64_Q7 -0x1.2835e0693d3dfp-3
#define SM_POW64_Q8 0x1.0d5b787769afep-3
/* tools/fit_pow64.py: E, relative error of 1 + s E(s) 2^-60.2 */
#define SM_POW64_E0 0x1.62e42fefa39efp-1
#define SM_POW64_E1 0x1.ebfbdff82c597p-3
#define SM_POW64_E2 0x1.c6b08d704a094p-5
#define SM_POW64_E3 0x1.3b2ab6fadf667p-7
#define SM_POW64_E4 0x1.5d87fe7b31a54p-10
#define SM_POW64_E5 0x1.430a67af9fb39p-13
#define SM_POW64_E6 0x1.ffca13374cff5p-17

/* v, opaque to the compiler: a product that a two-sum takes must be rounded on its own
 * (gcc would contract "h + r2 * c" into one FMA, and the two-sum's error term would then
 * describe a different sum) */
static inline sm_vd sm_pow64_rounded(sm_vd v) {
    __asm__("" : "+v"(v));
    return v;
}

/* log2 x = hi + *lo for a positive normal double x */
static inline sm_vd sm_pow64_log2(sm_vd x, sm_vd * lo) {
    sm_vl ix = (sm_vl)x;
    sm_vl tmp = ix - 0x3fe8800000000000LL;             /* 0.765625 */
    sm_vl k = tmp >> 52;
    sm_vd z = (sm_vd)(ix - (k << 52));
    sm_vl idx = tmp >> 48;
#if SM_F64_512
    sm_vd kd = __builtin_convertvector(k, sm_vd);
#else
    sm_vd kd = (sm_vd)(k + (sm_vl)sm_bcd(SM_MAGICD)) - SM_MAGICD;
#endif
    sm_vd r = sm_fmsd(z, sm_tab16_any(sm_logt_invc, idx), sm_bcd(1.0));   /* exact */
    sm_vd p1 = sm_pow64_rounded(r * SM_POW64_ILH);
    sm_vd p1l = sm_fmsd(r, sm_bcd(SM_POW64_ILH), p1) + r * SM_POW64_ILL;
    sm_vd r2 = r * r;
    sm_vd r2l = sm_fmsd(r, r, r2);
    sm_vd p2 = sm_pow64_rounded(r2 * (-0.5 * SM_POW64_ILH));
    sm_vd p2l = sm_fmsd(r2, sm_bcd(-0.5 * SM_POW64_ILH), p2)
                + (r2l * (-0.5 * SM_POW64_ILH) + r2 * (-0.5 * SM_POW64_ILL));
    sm_vd r4 = r2 * r2;
    sm_vd q01 = SM_POW64_Q1 * r + SM_POW64_Q0, q23 = SM_POW64_Q3 * r + SM_POW64_Q2;
    sm_vd q45 = SM_POW64_Q5 * r + SM_POW64_Q4, q67 = SM_POW64_Q7 * r + SM_POW64_Q6;
    sm_vd q = ((SM_POW64_Q8 * r4 + (q67 * r2 + q45)) * r4 + (q23 * r2 + q01));
    sm_vd p3 = sm_pow64_rounded((r2 * r) * q);
    sm_vd p23 = p2 + p3;                                        /* fast two-sums: */
    sm_vd e23 = (p2 - p23) + p3;                                /* |p3| < 0.023 |p2| */
    sm_vd A = kd + sm_tab16_any(sm_log2t_hi, idx);             /* exact */
    sm_vd h = A + p1;                                           /* two-sum */
    sm_vd bb = h - A;
    sm_vd e1 = (A - (h - bb)) + (p1 - bb);
    sm_vd h2 = h + p23;
    sm_vd e2 = (h - h2) + p23;
    /* lo stays below 2^-50 |hi|, so y lo keeps s = t - round(16 t)/16 within 1/32 + a hair
     * (E's range) */
    *lo = ((sm_tab16_any(sm_log2t_lo, idx) + p1l) + (p2l + e23)) + (e1 + e2);
    return h2;
}

/* 2^(th + tl) for th within [-1021.5, 1023.5], |tl| tiny (a normal result) */
static inline sm_vd sm_pow64_exp2(sm_vd th, sm_vd tl) {
    sm_vd kt = th * 16.0 + SM_MAGICD;
    sm_vd fn = kt - SM_MAGICD;
    sm_vd s = (th - fn * 0.0625) + tl;                          /* the difference: exact */
    sm_vl kb = (sm_vl)kt;
    sm_vd S = (sm_vd)((sm_vl)sm_tab16_any((const double *)sm_expt_hi, kb) + (kb << 48));
    sm_vd Tl = sm_tab16_any(sm_expt_lo, kb);
    sm_vd s2 = s * s;
    sm_vd e = ((SM_POW64_E6 * s + SM_POW64_E5) * s2 + (SM_POW64_E4 * s + SM_POW64_E3)) * s2
              + (SM_POW64_E2 * s + SM_POW64_E1);
    sm_vd p = s * (e * s + SM_POW64_E0);
    /* S + S (p + Tl) in one explicit FMA: S (p + Tl) alone can fall below the smallest
     * normal (S near 2^-1022, or p tiny) and raise "underflow" */
    return sm_fmsd(S, p + Tl, -S);
}

/* x^y on the fast lanes; *slow: the lanes (bits) the caller must compute otherwise */
static inline __attribute__((always_inline)) sm_vd sm_pow_fast_d(sm_vd x, sm_vd y, int * slow) {
    sm_vl ix = (sm_vl)x, iy = (sm_vl)y;
    sm_vl ax = ix & 0x7fffffffffffffffLL;
    /* x finite, normal; y finite. The other lanes compute garbage without harm: their flags
     * are dropped (kernels_elem.h), their results replaced -- as are the flags of a huge y
     * times log2 x overflowing, or a tiny one's products underflowing (y = 0 or |y| below
     * 2^-64 give 1, |y| above 2^64 a result out of range but for x = 1) */
    sm_vl ok = ((sm_vul)(ax - 0x0010000000000000LL) < 0x7fe0000000000000ULL)
               & ((iy & 0x7fffffffffffffffLL) < 0x7ff0000000000000LL);
    sm_vd xs = (sm_vd)ax, ys = y;
    sm_vl neg = ok & (ix < 0);
    sm_vd lo;
    sm_vd hi = sm_pow64_log2(xs, &lo);
    sm_vd th = sm_pow64_rounded(ys * hi);                      /* tl holds its error */
    sm_vd tl = sm_fmsd(ys, hi, th) + ys * lo;
    sm_vl in = (sm_vl)(th >= -1021.5) & (sm_vl)(th <= 1023.5);
    sm_vd r = sm_pow64_exp2(th, tl);
    sm_vl sl = ~in | ~ok;
    if (sm_anyl(neg)) {
        /* y integral below 2^51: y + 1.5 2^52 lies in [2^52, 2^53), whose spacing is 1, and
         * has y's parity in its last bit (from 2^51 on, a negative y's sum falls below 2^52,
         * where halves are kept: those lanes go to the C library) */
        sm_vd yabs = (sm_vd)((sm_vl)ys & 0x7fffffffffffffffLL);
        sm_vl big = (sm_vl)(yabs >= 0x1p51);
        sm_vd yc = sm_seld(big, sm_bcd(0.0), ys);
        sm_vd m = yc + SM_MAGICD;
        sm_vl integral = (sm_vl)(m - SM_MAGICD == yc) & ~big;
        sm_vl odd = -((sm_vl)m & 1);
        r = sm_seld(neg & odd, -r, r);
        sl |= neg & ~integral;
    }
    *slow = sm_lanebitsl(sl);
    return r;
}
#else
#define SM_POW64_VECTOR 0
#endif

#endif
