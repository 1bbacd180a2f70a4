/* float32 exp, log and log2 rows at avx2 and avx512 (FMA), fewer vector instructions than
 * simd_math.h's sm_expf / sm_logf and simd_math_log32.h's sm_log2f_tab (issue 14 item 2:
 * torch's Sleef kernels were 1.4x faster on the Xeon host, whose 512-bit units issue on two
 * ports only, so time per vector ~ instructions / 2). Included by simd_math.h after
 * simd_math_log32.h (sm_fmaf, sm_fnmaf, sm_lut16, the log tables); the x86-64-v2 baseline
 * keeps the old forms, and sm_expf_parts (shared by sigmoid, silu, ...) is unchanged.
 *
 * exp: x = n ln2 + r as sm_expf_parts does (n by the magic-number rounding, ln2 in two
 * parts), but without the correction term for r's rounding (below 0.25 ulp here) and with
 * e^r as one Horner chain of FMAs, ((((c6 r + c5) r + c4) r + c3) r + c2) r + 1) r + 1
 * (sm_expf_parts' coefficients): the last two steps round near 1, so no separate r^2 and
 * final additions. On AVX-512 the scaling is vscalefps (p * 2^fn, fn the float n: one
 * instruction for the shift and add, overflow/underflow/subnormal results rounded once),
 * so the fast path takes |x| <= 127 (one unsigned compare on |x|'s bits: inf, NaN and the
 * rest go out of line, where the same core runs on clamped inputs). AVX2 adds n << 23 to
 * the bits (t's low bits are n) for |x| <= 86.5, and sm_ldexp2 (one rounding) beyond: the
 * same bits as AVX-512. Hot loop at avx512: 14 zmm instructions (+2 register copies), was
 * 22 (+3). Measured over every float32 input: within 0.904 ulp (avx2 = avx512 bit for bit;
 * sm_expf, with its correction term: 0.876).
 *
 * log / log2: simd_math_log32.h's 16-piece table form (r = z invc - 1 exact, hi = e ln2hi +
 * lh, or e + lh, exact), summed as hi + (r + t) (log) and hi + (r/ln2 + t) (log2, the FMA
 * r * 0x1.715476p+0 + t) instead of the compensated sum: hi is 0 around 1 (the first piece
 * and the last piece of the octave below, whose table terms are 0), so there the result is
 * r + t, relative, and elsewhere |hi| >= 0.06 leaves r + t's rounding below a quarter of
 * the result's ulp. No division (sm_logf divides by 2 + f: vdivps zmm takes 8 cycles on the
 * Xeon). Hot loops at avx512: log 18 zmm instructions (+1 copy), was 28 with a vdivps (+1);
 * log2 17 (+1), was 20 (+2). Measured over every positive float32: log within 0.787 ulp
 * (sm_logf: 0.86), log2 0.881 (sm_log2f_tab: 0.752), both non-decreasing over all positive
 * floats, avx2 = avx512 bit for bit. */
#ifndef GGML_CY_SIMD_MATH_EXP32_H
#define GGML_CY_SIMD_MATH_EXP32_H

#if defined(__FMA__) && (SM_NF == 8 || SM_NF == 16) && defined(SM_LOG32)
#define SM_EXP32 1

/* ------------------------------------------------------------------ exp */
/* e^x = p 2^fn for finite |x| <= 127 (p in [0.7, 1.42]); *t_ = x log2e + SM_MAGIC, whose
 * low bits are n. Every multiply-add an FMA (written out: the same bits inline or not). */
static inline sm_vf sm_expf_core(sm_vf x, sm_vf * fn_, sm_vf * t_) {
    sm_vf t = sm_fmaf(x, sm_bcf(SM_LOG2E), sm_bcf(SM_MAGIC));
    sm_vf fn = t - SM_MAGIC;
    sm_vf r = sm_fnmaf(fn, sm_bcf(SM_LN2HI), x);                            /* exact */
    r = sm_fnmaf(fn, sm_bcf(SM_LN2LO), r);
    sm_vf p = sm_fmaf(sm_bcf(0x1.687c22p-10f), r, sm_bcf(0x1.123b8ep-7f));
    p = sm_fmaf(p, r, sm_bcf(0x1.555b58p-5f));
    p = sm_fmaf(p, r, sm_bcf(0x1.55548ep-3f));
    p = sm_fmaf(p, r, sm_bcf(0x1.fffff8p-2f));
    p = sm_fmaf(p, r, sm_bcf(1.0f));
    p = sm_fmaf(p, r, sm_bcf(1.0f));
    *fn_ = fn;
    *t_ = t;
    return p;
}

/* a vector with a lane out of the fast range: the core on clamped inputs (overflow and
 * underflow raised by the scaling, as numpy's), inf and NaN put back */
__attribute__((noinline, cold)) static sm_vf sm_expf_slow(sm_vf x) {
    sm_vi ix = (sm_vi)x, ia = ix & 0x7fffffff;
    sm_vi nan = ia > 0x7f800000, inf = ia == 0x7f800000;
    sm_vf fn, t;
#if SM_VB == 64
    sm_vf xc = sm_self(ix > 0x42fe0000, sm_bcf(127.0f), x);              /* x > 127 */
    xc = sm_self(SM_UGT(ix, 0xc2fe0000), sm_bcf(-127.0f), xc);           /* x < -127 */
    xc = sm_self(nan | inf, sm_bcf(0.0f), xc);
    sm_vf p = sm_expf_core(xc, &fn, &t);
    sm_vf r = (sm_vf)_mm512_scalef_ps((__m512)p, (__m512)fn);
#else
    sm_vf xc = sm_self(ix > 0x42b20000, sm_bcf(89.0f), x);               /* x > 89 */
    xc = sm_self(SM_UGT(ix, 0xc2d00000), sm_bcf(-104.0f), xc);           /* x < -104 */
    xc = sm_self(nan | inf, sm_bcf(0.0f), xc);
    sm_vf p = sm_expf_core(xc, &fn, &t);
    sm_vf r = sm_ldexp2(p, (sm_vi)t - (sm_vi)sm_bcf(SM_MAGIC));
#endif
    r = sm_self(inf, sm_self(ix > 0, sm_bcf(INFINITY), sm_bcf(0.0f)), r);
    return sm_self(nan, x, r);
}

static inline sm_vf sm_expf_v(sm_vf x) {
    sm_vf fn, t;
#if SM_VB == 64
    __mmask16 big = _mm512_cmpgt_epu32_mask(_mm512_and_si512((__m512i)x, _mm512_set1_epi32(0x7fffffff)),
                                            _mm512_set1_epi32(0x42fe0000));     /* |x| > 127 */
    if (__builtin_expect(big == 0, 1)) {
        sm_vf p = sm_expf_core(x, &fn, &t);
        return (sm_vf)_mm512_scalef_ps((__m512)p, (__m512)fn);
    }
#else
    if (__builtin_expect(!sm_any(((sm_vi)x & 0x7fffffff) > 0x42ad0000), 1)) {  /* |x| <= 86.5 */
        sm_vf p = sm_expf_core(x, &fn, &t);
        return (sm_vf)((sm_vi)p + ((sm_vi)t << 23));
    }
#endif
    return sm_expf_slow(x);
}

/* ------------------------------------------------------------------ log, log2 */
/* log of a positive normal x (times 2^kadd; AVX-512 takes subnormals as they are) */
static inline sm_vf sm_logf_tab(sm_vf x, sm_vi kadd) {
    SM_LOG32_SPLIT(x, kadd, z, j, e)
    sm_vf r = sm_fmaf(z, sm_lut16(sm_log32_t_invc, j), sm_bcf(-1.0f));       /* exact */
    sm_vf p = sm_fmaf(sm_bcf(SM_LN_Q3), r, sm_bcf(SM_LN_Q2));
    p = sm_fmaf(p, r, sm_bcf(SM_LN_Q1));
    p = sm_fmaf(p, r, sm_bcf(SM_LN_Q0));
    sm_vf w = sm_fmaf(e, sm_bcf(SM_LN2LO), sm_lut16(sm_ln_t_ll, j));
    sm_vf t = sm_fmaf(r * r, p, w);
    sm_vf hi = sm_fmaf(e, sm_bcf(SM_LN2HI), sm_lut16(sm_ln_t_lh, j));      /* exact */
    return hi + (r + t);
}

/* log2 of a positive normal x (times 2^kadd) */
static inline sm_vf sm_log2f_tab1(sm_vf x, sm_vi kadd) {
    SM_LOG32_SPLIT(x, kadd, z, j, e)
    sm_vf r = sm_fmaf(z, sm_lut16(sm_log32_t_invc, j), sm_bcf(-1.0f));       /* exact */
    sm_vf p = sm_fmaf(sm_bcf(SM_L2_Q3), r, sm_bcf(SM_L2_Q2));
    p = sm_fmaf(p, r, sm_bcf(SM_L2_Q1));
    p = sm_fmaf(p, r, sm_bcf(SM_L2_Q0));
    sm_vf t = sm_fmaf(r * r, p, sm_lut16(sm_l2_t_ll, j));
    sm_vf hi = e + sm_lut16(sm_l2_t_lh, j);                                   /* exact */
    return hi + sm_fmaf(r, sm_bcf(0x1.715476p+0f), t);
}

/* vectors with x <= 0, inf, NaN (or, at AVX2, subnormal) lanes: simd_math_more.h's
 * sm_log2f_spec (numpy's results and flags), the normal lanes from the same core */
__attribute__((noinline, cold)) static sm_vf sm_logf_slow(sm_vf x) {
    return sm_log2f_spec(x, sm_logf_tab, SM_VB != 64);
}
__attribute__((noinline, cold)) static sm_vf sm_log2f_slow1(sm_vf x) {
    return sm_log2f_spec(x, sm_log2f_tab1, SM_VB != 64);
}
static inline int sm_log_special(sm_vf x) {
#if SM_VB == 64 && defined(__AVX512DQ__)   /* x <= 0, inf, NaN (getmant/getexp take subnormals) */
    return _mm512_fpclass_ps_mask((__m512)x, 0xdf) != 0;
#else
    return sm_log_any_special((sm_vi)x);
#endif
}
static inline sm_vf sm_logf_v(sm_vf x) {
    if (__builtin_expect(sm_log_special(x), 0))
        return sm_logf_slow(x);
    return sm_logf_tab(x, sm_bci(0));
}
static inline sm_vf sm_log2f_v(sm_vf x) {
    if (__builtin_expect(sm_log_special(x), 0))
        return sm_log2f_slow1(x);
    return sm_log2f_tab1(x, sm_bci(0));
}

#endif
#endif
