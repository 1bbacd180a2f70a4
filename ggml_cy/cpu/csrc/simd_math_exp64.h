/* ggml_cy SIMD math functions, float64 exp and erf at the AVX-512 levels (issue 14 item 2),
 * included by simd_math.h after simd_math_f64_act.h; the rows of exp and erf come from here
 * at SM_F64_512 (the avx2 and baseline levels keep simd_math_f64.h's / _f64_act.h's forms;
 * sm_exp_d, which expm1 and others use, is unchanged). Written for the Xeon, where 512-bit
 * uops issue on two ports only: these loops are bound by their uop count, not latency.
 *   exp  x = (16 n + j) ln2/16 + r, |r| <= ln2/32, e^x = 2^n T_j e^r, T_j = 2^(j/16) =
 *        T_hi (1 + T_l) from register tables (one vpermt2pd each; T_l is expm1's sm_expt_lo),
 *        e^r - 1 = r + r^2 Q(r), Q of degree 4 (tools/fit_exp64.py: absolute error 2^-56.2),
 *        y = T_hi + T_hi (r + T_l + r^2 Q) (one rounding of the sum), 2^n put in by vscalefpd
 *        from the same f = n + j/16 that gives r (it takes floor(f) = n), which also rounds a
 *        subnormal result once and overflows / underflows with numpy's flags. The row loop:
 *        17 zmm uops and 2 register moves a vector (the old form, whose out-of-range blends
 *        gcc if-converted into the loop: 50 and 5). Vectors with a lane beyond |x| = 1000,
 *        inf or NaN: out of line. Measured (2M samples against expl): 0.64 ulp, 0.80 where
 *        the result is subnormal (rounded twice).
 *   erf  a = |x| on 16 pieces of width 0.375 (floor(a / 0.375), a clamped to 5.98, above which
 *        erf rounds to 1, by an integer min that takes inf and NaN too), one polynomial of
 *        degree 13 per piece in w = a - c_i (tools/fit_erf64.py: c_0 = 0 and a relative fit
 *        on piece 0; elsewhere c_i is chosen so that erf(c_i) is within a small fraction of an
 *        ulp of the double c0, and w is exact), its coefficients chosen per lane by vpermt2pd
 *        from 16-entry tables, NaN put back by vfixupimmpd. No exp, no division: 36 zmm uops
 *        a vector (the erfc-and-exp form: 90, 7 moves and a vdivpd). Measured (4M samples
 *        against erfl): 0.72 ulp (the other form: 1.40). */
#ifndef GGML_CY_SIMD_MATH_EXP64_H
#define GGML_CY_SIMD_MATH_EXP64_H

#if SM_F64_512
/* ------------------------------------------------------------------ exp */
/* tools/fit_exp64.py: |r| <= 0.021745, Q degree 4, absolute error of r + r^2 Q 1.19e-17 (2^-56.2) */
static const double __attribute__((aligned(64))) sm_exp64_thi[16] = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,
    0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0,
    0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0
};
#define SM_EXP64_INVLN2 0x1.71547652b82fep+0
#define SM_EXP64_LN2HI 0x1.62e42fefa0000p-1
#define SM_EXP64_LN2LO 0x1.cf79abc9e3b3ap-40
#define SM_EXP64_MAGIC 0x1.8p48                /* t's ulp 2^-4: t - MAGIC = k / 16 */

/* e^x for |x| <= 1000 (finite): 2^n by vscalefpd, overflow to inf / underflow to
 * subnormals and 0 there */
static inline sm_vd sm_exp64_core(sm_vd x) {
    sm_vd t = x * SM_EXP64_INVLN2 + SM_EXP64_MAGIC;
    sm_vd f = t - SM_EXP64_MAGIC;                         /* n + j/16, k = 16 n + j */
    /* the tables read from memory in the loop (an opaque pointer; see sm_erf_d512) */
    const double * thi = sm_exp64_thi, * tlo = sm_expt_lo;
    __asm__("" : "+r"(thi), "+r"(tlo));
    sm_vd Th = sm_lut16d(thi, (sm_vl)t);                  /* j: t's low 4 bits */
    sm_vd Tl = sm_lut16d(tlo, (sm_vl)t);
    sm_vd r = x - f * SM_EXP64_LN2HI;                     /* exact (f: 15 bits at most) */
    r = r - f * SM_EXP64_LN2LO;
    sm_vd r2 = r * r;
    sm_vd q = 0x1.6c18611ff73c6p-10 * r + 0x1.11123d052758ap-7;
    q = q * r + 0x1.555555545ad40p-5;
    q = q * r + 0x1.555555548c693p-3;
    q = q * r + 0x1.0000000000005p-1;
    sm_vd tmp = r2 * q + (r + Tl);                        /* e^r (1 + T_l) - 1, but T_l r */
    sm_vd y = Th * tmp + Th;
    return (sm_vd)_mm512_scalef_pd((__m512d)y, (__m512d)f);   /* y 2^floor(f) */
}
/* a vector with a lane beyond |x| = 1000, inf or NaN: the others as in any vector, those
 * clamped (finite: +-1000, whose result overflows / underflows as numpy's does), then inf
 * and NaN put in (no flag for them: numpy raises none) */
__attribute__((noinline, cold)) static sm_vd sm_exp64_slow(sm_vd x) {
    sm_vl ix = (sm_vl)x, ia = ix & 0x7fffffffffffffffLL;
    sm_vl nan = ia > 0x7ff0000000000000LL, inf = ia == 0x7ff0000000000000LL;
    sm_vl big = ia > 0x408f400000000000LL;                /* 1000 */
    sm_vd xc = sm_seld(big, (sm_vd)(0x408f400000000000LL | (ix & SM_SIGN64)), x);
    xc = sm_seld(nan | inf, sm_bcd(0.0), xc);
    sm_vd r = sm_exp64_core(xc);
    r = sm_seld(inf, sm_seld(ix > 0, sm_bcd(INFINITY), sm_bcd(0.0)), r);
    return sm_seld(nan, x, r);
}
static inline sm_vd sm_exp_d512(sm_vd x) {
    __mmask8 big = _mm512_cmpgt_epu64_mask(
        _mm512_and_si512((__m512i)x, (__m512i)sm_bcl(0x7fffffffffffffffLL)),
        (__m512i)sm_bcl(0x408f400000000000LL));
    if (__builtin_expect(big != 0, 0)) return sm_exp64_slow(x);
    return sm_exp64_core(x);
}

/* ------------------------------------------------------------------ erf */
/* tools/fit_erf64.py per-piece error (units of 2^-53; piece 0 relative): 0.14, 0.011, 0.011,
 * 0.0098, 0.002, 0.00074, 0.0002, 0.00028, 6.6e-05, 4.5e-05, 9.2e-05, 6.5e-05, 2.2e-05,
 * 8.6e-06, 2.1e-05, 0.16 */
/* tools/fit_erf64.py: erf on 16 pieces of width 0.375, degree 13 per piece */
static const double __attribute__((aligned(64))) sm_erf64_tab[16][16] = {
    {  /* c_i */
        0.0, 0x1.1fe4200000000p-1, 0x1.e006fe0000000p-1, 0x1.5001740000000p+0,
        0x1.b0060b0000000p+0, 0x1.07ff1e8000000p+1, 0x1.37fda00000000p+1, 0x1.6806690000000p+1,
        0x1.9805850000000p+1, 0x1.c7f9220000000p+1, 0x1.f8056b8000000p+1, 0x1.1400a24000000p+2,
        0x1.2c00244000000p+2, 0x1.440250c000000p+2, 0x1.5bfd334000000p+2, 0x1.73fc180000000p+2
    },
    {  /* c0 */
        0.0, 0x1.25a1bbc1ea297p-1, 0x1.a15860bdcd2a4p-1, 0x1.df86807a995e6p-1,
        0x1.f74b37fdbe353p-1, 0x1.fe3070b4f64b2p-1, 0x1.ffb5b6bfb7fe1p-1, 0x1.fff6e1a00f5b8p-1,
        0x1.ffff2475c0bbbp-1, 0x1.fffff033b865ap-1, 0x1.ffffff238aaf5p-1, 0x1.fffffff6d2b33p-1,
        0x1.ffffffffb5bfep-1, 0x1.fffffffffe38bp-1, 0x1.fffffffffff7bp-1, 0x1.ffffffffffffep-1
    },
    {  /* c1 */
        0x1.06eba8214db68p-3, 0x1.a5211744840afp-1, 0x1.dfbdddec139f8p-2, 0x1.9caf9719b1602p-3,
        0x1.0be425f0993e9p-4, 0x1.06b588b404881p-6, 0x1.84dd5af0ef976p-9, 0x1.b1c0183fcbab1p-12,
        0x1.6dbece623fbccp-15, 0x1.d2c5e1b0c49ecp-19, 0x1.bf421807790a8p-23, 0x1.44b6b09485ce1p-27,
        0x1.63a50abc51ff9p-32, 0x1.258e51c692e31p-37, 0x1.6f819f6f990a1p-43, 0x1.5a777c92246acp-49
    },
    {  /* c2 */
        0x1.b845683c364d1p-47, -0x1.d9975f32abf67p-2, -0x1.c1c88d461d421p-2, -0x1.0ed46700702fbp-2,
        -0x1.c41752e1b3de0p-4, -0x1.0eea4d90bcc23p-5, -0x1.d9ea2b47ec03bp-8, -0x1.31007f4108da9p-10,
        -0x1.2377fdd55f39bp-13, -0x1.9fb1fa4bfbe18p-17, -0x1.b849cbb4e7badp-21, -0x1.5e15c42acbfdbp-25,
        -0x1.a0c59b07c4696p-30, -0x1.738ac851478a0p-35, -0x1.f390db3cdbb90p-41, -0x1.f770579af920cp-47
    },
    {  /* c3 */
        -0x1.812746b03ec30p-2, -0x1.9ce49bba0617ep-4, 0x1.e4ddefea3e9ecp-4, 0x1.5065e3f3bb737p-3,
        0x1.a3554de90329bp-4, 0x1.48b80059d3b2fp-5, 0x1.60a38d38ec99dp-7, 0x1.0be2e307c5065p-9,
        0x1.2676659cd0048p-12, 0x1.da2900b8116abp-16, 0x1.17a2289fc6172p-19, 0x1.e9b8d526b5aa9p-24,
        0x1.3e31c2d5987a3p-28, 0x1.3361b3f3784ccp-33, 0x1.bd0ef3c8567edp-39, 0x1.e077e33ea30ffp-45
    },
    {  /* c4 */
        0x1.75b8ae696a2d6p-34, 0x1.75c4c6b0b78d2p-3, 0x1.746ab9ab11e79p-4, -0x1.41b1c00d81829p-6,
        -0x1.9644f791e819fp-5, -0x1.f15d09e74695cp-6, -0x1.5ec7b20cf41b0p-7, -0x1.45e859e9851c7p-9,
        -0x1.a4bf0b99f2532p-12, -0x1.83a1fe6085dcbp-15, -0x1.00ee2d4455708p-18, -0x1.f2d001da3d817p-23,
        -0x1.6384e89179839p-27, -0x1.758f24096812dp-32, -0x1.2407974c5951cp-37, -0x1.52966f9b42f98p-43
    },
    {  /* c5 */
        0x1.ce2f2101b8b6bp-4, -0x1.621d7fc42eae9p-7, -0x1.1d1fd666ce700p-4, -0x1.3f3b3e6fb9c9bp-5,
        0x1.6a59b31657debp-9, 0x1.aa2d2c8c46810p-7, 0x1.d86ade4d0e852p-8, 0x1.1e4e41efd9011p-9,
        0x1.c0241ef71e6f1p-12, 0x1.e1385f382f9d1p-15, 0x1.6abcc1adf1eddp-18, 0x1.898021257cdc9p-22,
        0x1.356f70bd9355dp-26, 0x1.632fad26f8c7ap-31, 0x1.2cf1e60413624p-36, 0x1.77930d2e040fbp-42
    },
    {  /* c6 */
        0x1.3f3c117114c5dp-25, -0x1.7e17fc2b4a3f9p-5, -0x1.468d36cd2a9e5p-9, 0x1.6d1e0be953ff7p-6,
        0x1.7e654e0b095a6p-7, -0x1.bbb646c96df05p-11, -0x1.897d79bc675e2p-9, -0x1.6b0b099268d53p-10,
        -0x1.6bf9dfd87aa56p-12, -0x1.d40befdf2c69cp-15, -0x1.979918c422944p-18, -0x1.f327307d351e1p-22,
        -0x1.b4182a249bbc7p-26, -0x1.12d0585ee988cp-30, -0x1.fdc1e05285b25p-36, -0x1.553ff3323fc87p-41
    },
    {  /* c7 */
        -0x1.b82e7db947cfcp-6, 0x1.49da17ce052eep-7, 0x1.1a7b35640d3bdp-6, 0x1.e2ff1245e7085p-11,
        -0x1.9be555425976dp-8, -0x1.5483d0fc42b2fp-9, 0x1.888d2d5da9889p-12, 0x1.36d4a50d9d288p-11,
        0x1.c197471bbe496p-13, 0x1.69cce346e107ap-15, 0x1.743372359640ep-18, 0x1.04abfada94c23p-21,
        0x1.fe605fdd322b7p-26, 0x1.6332538d09e3cp-30, 0x1.65769e528454ep-35, 0x1.04fdfbee1a152p-40
    },
    {  /* c8 */
        0x1.5f843ac6ec850p-19, 0x1.192416c8c4702p-7, -0x1.cbb4f059c49afp-9, -0x1.4cc4bedbaddadp-8,
        0x1.3c9c7bb04c31bp-13, 0x1.8eb1303cff242p-10, 0x1.b359c580c0301p-12, -0x1.f7d3610f8de1ep-14,
        -0x1.9498166446e68p-14, -0x1.bbd3e4fd210c3p-16, -0x1.170e1eaf7bbbbp-18, -0x1.c726dd8b59598p-22,
        -0x1.f877553552ab3p-26, -0x1.8585d36c5da0fp-30, -0x1.569a46e2628dfp-35, -0x1.56b21a2868cdbp-40
    },
    {  /* c9 */
        0x1.558ff13b6090ap-8, -0x1.8d10e6aa0bf59p-9, -0x1.57a324b47f5e8p-9, 0x1.55472dc46aad7p-10,
        0x1.318585c82cc23p-10, -0x1.9278d6754559cp-13, -0x1.3823315e91cccp-12, -0x1.5134303dd7f62p-15,
        0x1.bf0beaef898bfp-16, 0x1.a5490701bc253p-17, 0x1.57a093cfb3e6fp-19, 0x1.4ec92cd25826fp-22,
        0x1.aa705b5803619p-26, 0x1.72683daf729e8p-30, 0x1.c8bd57ed3d8a2p-35, 0x1.87df742e2b84dp-40
    },
    {  /* c10 */
        0x1.3f95ddac1c3e3p-15, -0x1.3687df158c4acp-10, 0x1.2448f7e4c7ff1p-10, 0x1.261e70cc81bf9p-11,
        -0x1.b892ebbac40f0p-12, -0x1.91102fc4ebbc4p-13, 0x1.2b0ca91014b95p-14, 0x1.70e515caaa9b8p-15,
        0x1.5cc54cea5f7d3p-23, -0x1.1cae6b677643dp-18, -0x1.571e586664b54p-20, -0x1.9dec0c5dd822cp-23,
        -0x1.3aad1eb1889c8p-26, -0x1.4e8dec2d2284cp-30, -0x1.4d4dde27552bdp-32, -0x1.89cb14bcc820ap-40
    },
    {  /* c11 */
        -0x1.e954d9d4b487fp-11, 0x1.432177c565710p-11, 0x1.f500a55b8ea3ap-13, -0x1.6bb2ec168a375p-12,
        -0x1.033bb1cb636a2p-14, 0x1.b0790938f7d48p-14, 0x1.1f2ba1002ececp-16, -0x1.0ae31a8ab265ap-16,
        -0x1.2aeac83574575p-18, 0x1.7421f79210bd5p-21, 0x1.09f5d27faccd1p-21, 0x1.b0baf9fd5dac2p-24,
        0x1.84eb04065e518p-27, 0x1.ba793a5dfefdap-31, 0x1.161a3dfbc62e4p-35, 0x1.604f3cbe53444p-40
    },
    {  /* c12 */
        0x1.9daddbb4e39b8p-14, 0x1.fafb7d1220947p-14, -0x1.a9e2fb5ecaf95p-13, -0x1.51a0b50e67d59p-17,
        0x1.50069921fcdbbp-14, -0x1.8e46b11dba59bp-18, -0x1.283a3b9aebe95p-16, 0x1.632e6a79b78e7p-21,
        0x1.3811bca2e48aep-19, 0x1.fb665bc98983dp-23, -0x1.004fe23264b8ep-23, -0x1.b6f9f7afa784fp-25,
        -0x1.f4e0b3058f646p-29, 0x1.06915dd1aeb79p-31, 0x1.493e8d006da10p-29, -0x1.2a84b9d1e0054p-40
    },
    {  /* c13 */
        0x1.f501a272d8fb9p-15, -0x1.83837aae5762dp-14, -0x1.0aa976c50bdf3p-18, 0x1.a39147d13abc4p-15,
        -0x1.8e174374ec073p-17, -0x1.a22f16fcbea73p-17, 0x1.15ef90115aa9cp-18, 0x1.004953eebf902p-19,
        -0x1.113aac91556dcp-21, -0x1.e4b88e5e1b1cfp-23, 0x1.309a6375d4a1dp-27, 0x1.eea3496dd705ep-27,
        0x1.877998d9929f7p-29, 0x1.3a710b8c98fcdp-32, 0x1.17ddf6cf27433p-35, 0x1.a9b91b8db33dfp-41
    },
    {  /* S */
        0x1.0000000000000p+0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0
    }
};
#define SM_ERF64_INVW 0x1.5555555555555p+1             /* 1 / 0.375 */

/* a = min(|x|, 5.98), piece i = floor(a / 0.375) (the multiply-add rounded down: no extra
 * uop), w = a - c_i; erf a = c0 + c1 w + ... + c13 w^13, Horner to c1, then K w + u with
 * u = c0, or on piece 0 (c0 = 0, c1 stored less 1) u = w: there a c1 = a + a (c1 - 1) keeps
 * c1's rounding and K's at 0.128 / 1.128 of their size. Rows of sm_erf64_tab: c_i, c0 .. c13,
 * the 1 / 0 of piece 0. */
static inline sm_vd sm_erf_d512(sm_vd x) {
    sm_vl ix = (sm_vl)x, ia = ix & 0x7fffffffffffffffLL;
    /* a = min(|x|, 5.98) on the bits: inf and NaN give 5.98 too, no flag */
    sm_vd a = (sm_vd)_mm512_min_epi64((__m512i)ia, (__m512i)sm_bcl(0x4017eb851eb851ecLL));
    sm_vl i = (sm_vl)_mm512_fmadd_round_pd((__m512d)a, (__m512d)sm_bcd(SM_ERF64_INVW),
                                           (__m512d)sm_bcd(SM_MAGICD),
                                           _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    /* (i: in the low 4 bits.) The tables read from memory in the loop (an opaque pointer):
     * held in registers, each vpermt2pd (which overwrites its first table) needed a
     * register copy, a p0/p5 uop on the Xeon, where a load is not */
    const double (*tb)[16] = sm_erf64_tab;
    __asm__("" : "+r"(tb));
    sm_vd w = a - sm_lut16d(tb[0], i);                    /* exact */
    sm_vd K = sm_lut16d(tb[14], i);
    for (int k = 13; k >= 2; k--) K = K * w + sm_lut16d(tb[k], i);
    /* piece 0: w, the others: c0 (both exact) */
    sm_vd u = sm_lut16d(tb[15], i) * w + sm_lut16d(tb[1], i);
    sm_vd r = K * w + u;
    r = (sm_vd)((sm_vl)r | (ix & SM_SIGN64));             /* x's sign (-0 too) */
    /* NaN lanes: x (quieted); the others unchanged */
    return (sm_vd)_mm512_fixupimm_pd((__m512d)r, (__m512d)x, (__m512i)sm_bcl(0x22), 0);
}

SM_ROW_F64(exp, sm_exp_d512)
SM_ROW_F64(erf, sm_erf_d512)
#endif

#endif
