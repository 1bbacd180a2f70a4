/* float64 tanh at the AVX-512 levels (issue 14 item 2), included by simd_math_f64.h where
 * it dispatches tanh (SM_F64_512: AVX512F + DQ, FMA).
 *
 * The same numerics as the form it replaces (tanh |x| = -em / (2 + em), em = e^(-2|x|) - 1
 * from sm_expm1t_core's table and polynomial, the quotient corrected by its exact residual:
 * within 0.53 ulp), in 43 vector operations per 8 lanes instead of 53 (vdivpd counted as
 * its 3 uops on Intel; the cost model of the 16-core Xeon, where 512-bit operations issue
 * on two ports, so the count is the time). Where the operations went:
 *   - |x| clamped to 20 by one vrangepd (min of magnitudes, sign forced negative: -a),
 *     instead of an and, a 64-bit integer min and a multiply by -2; the 2 of -2a goes into
 *     the reduction's constants. A quiet NaN makes vrangepd return 20 (no flag), so NaN
 *     lanes are put back at the end by one vfixupimmpd (token "source" for QNaN and SNaN,
 *     no exception reported) instead of a compare and a masked blend. The sign of x goes
 *     back by one vpternlogq (bit select).
 *   - 2^(j/16) = T_hi + T_lo: T_lo's second table read and the three operations that fold
 *     T_lo (1 + p) into the result are replaced by a reduction against T_hi itself:
 *     T_hi = e^(j ln2/16 + eps_j), eps_j (below 2^-53) read from a register table in place
 *     of T_lo and added to the low part of k ln2/16 in the multiply-add that already
 *     forms it (tools/fit_tanh64.py).
 *   - the polynomial takes rh = -a - k Lhi/2 (exact; its coefficients scaled by powers of 2
 *     for 2 rh) instead of the rounded r = 2 rh + nd and r's rounding error (two operations):
 *     the small rest nd (|nd| < 2^-31) joins the low part as nd (1 + p), one multiply-add.
 *   - everything is halved: g = em/2 = (S/2 - 1/2) + (S/2) p (S/2 from the table with its
 *     exponent one lower, no operation), tanh = -g / (1 + g), and 1 / (1 + g) = 1 - q for
 *     the correction (the old form's 1/(2 + em) = (1 - q)/2 needed the extra half).
 *   - hi + lo = (S/2 - 1/2) + (S/2) p as one FMA and the FMA of its exact error (the
 *     product stays exact inside both), instead of a rounded product, its error by a
 *     separate FMA and a two-sum.
 * Steps (a = min(|x|, 20), beyond which tanh rounds to 1):
 *   -2a = k ln2/16 + eps_j + 2 rh + nd, k = 16 n + j <= 0, |2 rh| <= ln2/32, rh exact;
 *   e^(2 rh + nd) - 1 = p + pl: p = e^(2 rh) - 1 (sm_expm1t_core's degree-5 Q,
 *     tools/fit_expm1_64.py), pl = p's rounding + nd (1 + p);
 *   g = (e^(-2a) - 1)/2 = hi + lo, S = 2^n T_hi:  Q = S/2 - 1/2 (exact when S >= 1/2,
 *     its error Qe otherwise), hi = fma(S/2, p, Q), lo = fma(S/2, p, Q - hi) + Qe
 *     + (S/2) pl;
 *   d = 1 + hi (derr its rounding error), q = hi / d, q += ((hi - q d) - q derr
 *     + lo (1 - q)) (1 - q): tanh |x| = -q.
 * The result keeps every special value of the old form: +-0 (sign kept), subnormals
 * (tanh x = x), +-inf and |x| >= 20 -> +-1, NaN -> x, no floating-point flag for any
 * finite x or a quiet NaN (vrangepd signals only a signalling NaN). */
#ifndef GGML_CY_SIMD_MATH_TANH64_H
#define GGML_CY_SIMD_MATH_TANH64_H

#if SM_F64_512
/* tools/fit_tanh64.py: -eps_j = j ln2/16 - ln(T_hi_j), T_hi_j = 2^(j/16) rounded (simd_math_f64.h's sm_expt_hi) */
static const double __attribute__((aligned(64))) sm_tanh64_neps[16] = {
    0.0, 0x1.79aa65d837b6cp-54, -0x1.01b15eaa59348p-55, 0x1.68efde3a8a894p-54,
    0x1.34d754db0abb6p-55, 0x1.59f48a72a4c6dp-55, 0x1.690cebb7aafb0p-56, 0x1.063e1e21c5409p-54,
    -0x1.3b3efbf5e2229p-54, -0x1.b32dcb94da51dp-56, 0x1.db72fc1f0eab4p-55, 0x1.1affc2b91ce27p-56,
    0x1.c1a7792cb3387p-55, 0x1.36eae30af0cb3p-56, 0x1.4a385a63d07a7p-56, -0x1.ff7128fd391f1p-55
};
/* bits(T_hi_j / 2) - (j << 48): sm_expt_hi with the exponent one lower (S/2 directly) */
static const int64_t __attribute__((aligned(64))) sm_tanh64_shi[16] = {
    0x3fe0000000000000LL, 0x3fdfb5586cf9890fLL, 0x3fdf72b83c7d517bLL, 0x3fdf387a6e756238LL,
    0x3fdf06fe0a31b715LL, 0x3fdedea64c123422LL, 0x3fdebfdad5362a27LL, 0x3fdeab07dd485429LL,
    0x3fdea09e667f3bcdLL, 0x3fdea11473eb0187LL, 0x3fdeace5422aa0dbLL, 0x3fdec49182a3f090LL,
    0x3fdee89f995ad3adLL, 0x3fdf199bdd85529cLL, 0x3fdf5818dcfba487LL, 0x3fdfa4afa2a490daLL
};

static inline sm_vd sm_tanh_d512(sm_vd x) {
    /* -a = -min(|x|, 20) (imm 0x0e: minimum of magnitudes, sign set); QNaN -> -20 */
    sm_vd na = (sm_vd)_mm512_range_pd((__m512d)x, (__m512d)sm_bcd(20.0), 0x0e);
    /* -2a = k ln2/16 + eps_j + 2 rh + nd: k from -a 32/ln2, rh = -a - k Lhi/2 exact (Lhi:
     * 21 trailing zero bits, |k| <= 924), nd = -(k Llo + eps_j) */
    sm_vd t = na * (2.0 * SM_EXPT_INVL16) + SM_MAGICD;
    sm_vd fn = t - SM_MAGICD;
    sm_vl kt = (sm_vl)t;
    sm_vd S = (sm_vd)((sm_vl)_mm512_permutex2var_epi64(_mm512_load_si512(sm_tanh64_shi),
                                                       (__m512i)kt,
                                                       _mm512_load_si512(sm_tanh64_shi + 8))
                      + (kt << 48));                                /* 2^n T_hi / 2 */
    sm_vd ne = sm_lut16d(sm_tanh64_neps, kt);
    sm_vd rh = na - fn * (0.5 * SM_EXPT_L16HI);
    sm_vd nd = ne - fn * SM_EXPT_L16LO;
    /* e^(2 rh) - 1 = 2 rh + rh^2 Q'(rh), Q' = sm_expm1t_core's Q(r) with r = 2 rh (its
     * coefficients times 4 2^i, exact); e^(2 rh + nd) - 1 = p + pl with pl = p's rounding
     * error + nd (1 + p) (nd^2 and the rounding of pl's terms are far below an ulp of g) */
    sm_vd r2 = rh * rh;
    sm_vd p01 = (4 * 2 * 0x1.5555555555551p-3) * rh + (4 * 0x1.0000000000003p-1);
    sm_vd p23 = (4 * 8 * 0x1.111111115e8eap-7) * rh + (4 * 4 * 0x1.55555554aaa4cp-5);
    sm_vd p45 = (4 * 32 * 0x1.a01a58f0c33b7p-13) * rh + (4 * 16 * 0x1.6c1821fc9e7d7p-10);
    sm_vd q = (p45 * r2 + p23) * r2 + p01;
    sm_vd tq = r2 * q;
    sm_vd p = rh * 2.0 + tq;
    sm_vd pl = ((rh * 2.0 - p) + tq) + (nd * p + nd);
    /* g = (e^(-2a) - 1)/2 = hi + lo; Q - hi is exact (|Q| >= |S p / 2| or Q = 0) */
    sm_vd Q = S - 0.5;
    sm_vd hi = (sm_vd)_mm512_fmadd_pd((__m512d)S, (__m512d)p, (__m512d)Q);
    sm_vd lo = (sm_vd)_mm512_fmadd_pd((__m512d)S, (__m512d)p, (__m512d)(Q - hi));
    lo = lo + ((-0.5 - Q) + S);                       /* Q's rounding (S < 1/2) */
    lo = lo + S * pl;
    /* tanh a = -g / (1 + g): q = hi / d, corrected by the exact residual hi - q d, d's
     * rounding derr and lo, with 1 / (1 + g) = 1 - q */
    sm_vd d = 1.0 + hi;
    sm_vd derr = (1.0 - d) + hi;
    sm_vd qt = hi / d;
    sm_vd rr = -sm_fmsd(qt, d, hi);
    sm_vd t1 = rr - qt * derr;
    sm_vd u = 1.0 - qt;
    sm_vd t2 = lo * u + t1;
    qt = t2 * u + qt;
    /* |tanh| = -qt with x's sign (bit select: sign bit from x, the rest from qt); NaN: x */
    sm_vd res = (sm_vd)_mm512_ternarylogic_epi64((__m512i)qt, (__m512i)x,
                                                 (__m512i)sm_bcl(SM_SIGN64), 0xd8);
    return (sm_vd)_mm512_fixupimm_pd((__m512d)res, (__m512d)x, (__m512i)sm_bcl(0x11), 0);
}
#endif

#endif
