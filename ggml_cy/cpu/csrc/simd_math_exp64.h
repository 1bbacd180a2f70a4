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
 *   erf  a = min(|x|, 5.96) (vrangepd; erf rounds to 1 above 5.9216) on 16 pieces, piece
 *        i = round(a / 0.385): piece 0 is [0, 0.1925), piece i >= 1 [(i - 1/2) 0.385,
 *        (i + 1/2) 0.385); one polynomial of degree 12 per piece in w = a - c_i
 *        (tools/fit_erf64.py: c_0 = 0 and a relative fit on piece 0; elsewhere c_i is chosen so
 *        that erf(c_i) is within a small fraction of an ulp of the double c0, and w is exact),
 *        its coefficients chosen per lane by vpermt2pd from 16-entry tables, NaN put back by
 *        vfixupimmpd. No exp, no division: 32 zmm uops a vector, 14 of them permutes (the
 *        degree-13 form on pieces of width 0.375 from 0: 36, 16; the erfc-and-exp form: 90,
 *        7 moves and a vdivpd). The half-width piece 0 is what lets degree 12 do it; piece 1's
 *        c_1 = 0.29 (not its centre) keeps |w| small where erf < 1/4 (ulp 2^-55) and
 *        erf(c_1) > |w| on the piece. Measured (12M samples in each of 13 ranges against
 *        erfl): 0.98 ulp at 0.19-0.23 (piece 1's low end), 0.83 on [0.375, 0.75), 0.68
 *        above (the degree-13 form: 0.73; the other: 1.40); within 1 ulp of the avx2 form. */
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
/* tools/fit_erf64.py per-piece error (units of 2^-53; piece 0 relative): 0.102, 0.0799, 0.0848,
 * 0.0605, 0.0137, 0.0225, 0.0014, 0.00381, 0.000331, 0.000416, 1.77e-05, 0.000197, 0.000195,
 * 0.000224, 4.8e-05, 0.151 */
/* tools/fit_erf64.py: erf on 16 pieces of width 0.385 (piece 0: half), degree 12 */
static const double __attribute__((aligned(64))) sm_erf64_tab[14][16] = {
    {  /* c_i */
        0.0, 0x1.28ec940000000p-2, 0x1.8a387aa3d70a4p-1, 0x1.27a9d17ae147bp+0,
        0x1.8a403ca3d70a4p+0, 0x1.ecc979ccccccdp+0, 0x1.27ad33fae147bp+1, 0x1.58f2ec8f5c290p+1,
        0x1.8a3ede23d70a4p+1, 0x1.bb8645b851eb8p+1, 0x1.eccadb4cccccdp+1, 0x1.0f0af070a3d71p+2,
        0x1.27ae1dfae147bp+2, 0x1.40512a451eb85p+2, 0x1.58f5304f5c290p+2, 0x1.719822999999ap+2
    },
    {  /* c0 */
        0.0, 0x1.45e2956d7aaa1p-2, 0x1.7295a707766aep-1, 0x1.cb9221d9b53d7p-1,
        0x1.f0f132543b3bep-1, 0x1.fcae3e19f547bp-1, 0x1.ff716e189b0dcp-1, 0x1.ffeddf502f105p-1,
        0x1.fffe4335968bep-1, 0x1.ffffdfe43e5f3p-1, 0x1.fffffe42170fep-1, 0x1.ffffffede45b1p-1,
        0x1.ffffffff72df6p-1, 0x1.fffffffffcc92p-1, 0x1.fffffffffff20p-1, 0x1.ffffffffffffdp-1
    },
    {  /* c1 */
        0x1.06eba8214db69p-3, 0x1.0992064376a1fp+0, 0x1.3f57c20c39e7cp-1, 0x1.30694122ca444p-2,
        0x1.af4e3dc7f5e6bp-4, 0x1.c69908b931f03p-6, 0x1.6414f795b66aep-8, 0x1.9ee48db85445bp-11,
        0x1.6702b43d56eaep-14, 0x1.ce4410c63380ap-18, 0x1.bad0e4bd01adbp-22, 0x1.3ae1f2b32a44dp-26,
        0x1.4d51c7babbab6p-31, 0x1.065a99b2252b9p-36, 0x1.32de2a77f9223p-42, 0x1.0b0c883c5746cp-48
    },
    {  /* c2 */
        -0x1.1682491b0a40ap-46, -0x1.3406436432fa9p-2, -0x1.ebc384d57765cp-2, -0x1.5f9338a323451p-2,
        -0x1.4c1d5267c904ep-3, -0x1.b589f19ae40eep-5, -0x1.9b4513c5f88bfp-7, -0x1.178668f0599b2p-9,
        -0x1.147129ca54eabp-12, -0x1.90711f46773c3p-16, -0x1.aa342de2a3f68p-20, -0x1.4d62a4806329ap-24,
        -0x1.80fbf225a32e2p-29, -0x1.48447bd2797e5p-34, -0x1.9d812daabe367p-40, -0x1.818bc3ec9233dp-46
    },
    {  /* c3 */
        -0x1.812746b029862p-2, -0x1.268cb763b01bep-2, 0x1.3c3fb732bd261p-5, 0x1.5274521941911p-3,
        0x1.0d189a412e6a7p-3, 0x1.e5ba226c30cf0p-5, 0x1.1f00280464338p-6, 0x1.d39f6f5980d44p-9,
        0x1.0cdbec39abed8p-11, 0x1.bb41058f8e811p-15, 0x1.084051636d7cbp-18, 0x1.c9837a06ed0f7p-23,
        0x1.217e692232077p-27, 0x1.0c5c85a48eae0p-32, 0x1.6d111ee5f7a5ap-38, 0x1.6d84cccc76b9ep-44
    },
    {  /* c4 */
        -0x1.1cb484b64c4a6p-32, 0x1.22c23c4638737p-3, 0x1.2967b08d581ebp-3, 0x1.377ef4ade8892p-6,
        -0x1.82050364b66d8p-5, -0x1.41a75a54f8d57p-5, -0x1.06efd832b82a2p-6, -0x1.0c76966772f2ep-8,
        -0x1.6ff9a3d3fadedp-11, -0x1.5e9a3e14ff8c7p-14, -0x1.d928a8613908ep-18, -0x1.c89d81cc050cep-22,
        -0x1.3e530333dbe6dp-26, -0x1.42191fb90c9edp-31, -0x1.da953e2347047p-37, -0x1.ffa52519dd4b3p-43
    },
    {  /* c5 */
        0x1.ce2f2481865dbp-4, 0x1.1e0300b777b43p-4, -0x1.cd4279375b526p-5, -0x1.de18c549a9717p-5,
        -0x1.547b91635d2c2p-7, 0x1.97cb7b9d89858p-7, 0x1.39b38dc17863dp-7, 0x1.b68055695fa85p-9,
        0x1.74b1af77b2676p-11, 0x1.a373b09b24e70p-14, 0x1.44b061d41e7edp-17, 0x1.60718a1729015p-21,
        0x1.106b807136e8fp-25, 0x1.2e4c64e22db70p-30, 0x1.e456d8681f145p-36, 0x1.19c340ba4cb50p-41
    },
    {  /* c6 */
        -0x1.166bf7ee1864bp-22, -0x1.6d6e7b8c605f3p-5, -0x1.8db21d53f3e7ap-6, 0x1.1d0c56c894627p-6,
        0x1.25452496d235bp-6, 0x1.45be4b2aa0f0bp-9, -0x1.9541cc68d8e08p-9, -0x1.f5746041047a0p-10,
        -0x1.1c82e45712343p-11, -0x1.86fa55e38f340p-14, -0x1.619706c746856p-17, -0x1.b4a80d5651644p-21,
        -0x1.791899141609ap-25, -0x1.cdd9f29a627d6p-30, -0x1.96aa1deb0a954p-35, -0x1.fc468d0876914p-41
    },
    {  /* c7 */
        -0x1.b81c8108bb647p-6, -0x1.a7af45f049dd1p-7, 0x1.3322d6823c834p-6, 0x1.0b3590e759e67p-7,
        -0x1.6208f3808632ep-8, -0x1.1bc3e6cfd60c8p-8, -0x1.f4bf257a6fdcbp-13, 0x1.62985f622881dp-11,
        0x1.43460826026c2p-12, 0x1.1f33ccf3fd0e5p-14, 0x1.37a2d0cd58781p-17, 0x1.bc71b33238ae6p-21,
        0x1.b0e3df4d45205p-25, 0x1.25e5c20991515p-29, 0x1.19cee0f4e5ff9p-34, 0x1.81d0aaaac619bp-40
    },
    {  /* c8 */
        -0x1.3cccadb137b5bp-15, 0x1.57f14d0ad389cp-7, 0x1.a198afd245a16p-10, -0x1.8ea1a87e1fc7ap-8,
        -0x1.cc44df2de610dp-10, 0x1.96a113e8bf38bp-10, 0x1.a3a86e455e2ffp-11, -0x1.7fdde3b3579f4p-15,
        -0x1.fbf69aee82ebcp-14, -0x1.4a05766f88671p-15, -0x1.c059efdbdc7dap-18, -0x1.78f46d1ba081ap-21,
        -0x1.a28b2e83ae462p-25, -0x1.32225499340e1p-29, -0x1.fa27ce6b3a680p-35, -0x1.f689f8c20eff1p-40
    },
    {  /* c9 */
        0x1.65b6994137346p-8, 0x1.e1ccc0362d928p-10, -0x1.00b8b890f2fc4p-8, -0x1.9fcbd4369777cp-16,
        0x1.b0dd35a4499a9p-10, 0x1.7656b9e87fdbdp-13, -0x1.7e2a84fa871cfp-12, -0x1.b4ba77862c5fcp-14,
        0x1.80fe4773bc8cfp-16, 0x1.1ce3e7d1065d4p-16, 0x1.06657b70fe9e4p-18, 0x1.0c57777d6884ep-21,
        0x1.5a16772ce3cf7p-25, 0x1.28c148955e683p-29, 0x1.5c827f07ae976p-34, 0x1.1c1b682d1a60fp-39
    },
    {  /* c10 */
        -0x1.d80ce1db3e75cp-11, -0x1.02fc71d2c7f75p-9, 0x1.4f74d835f982dp-12, 0x1.1cf11238f0ec2p-10,
        -0x1.9bd62bb37ba55p-13, -0x1.69307dc704658p-12, 0x1.b52f8d5e4c4f7p-16, 0x1.0d7e4dd7e7dcep-14,
        0x1.f06b8fc435cbap-18, -0x1.4050a333c0d79p-18, -0x1.e95f2f9475ed6p-20, -0x1.4239aecff203bp-22,
        -0x1.047fcb6879cc5p-25, -0x1.09e5c05363d79p-28, -0x1.21298c5b19c74p-31, -0x1.1bb8a88668240p-39
    },
    {  /* c11 */
        0x1.1d36e44c777b3p-10, -0x1.7f186f33b7526p-13, 0x1.34447923d3fd8p-11, -0x1.c8f91523370cap-13,
        -0x1.c0b6f08ef0b62p-13, 0x1.7554bb2de2b0ap-14, 0x1.998867d4c7199p-15, -0x1.d707f95462570p-17,
        -0x1.0a029f62f663ep-17, 0x1.91468d7ebe683p-23, 0x1.54c6fd44aaaaep-21, 0x1.41b9a580e94b2p-23,
        0x1.312a69cc4d0bcp-26, 0x1.5e51ba3042483p-30, 0x1.00e56a639ceefp-34, 0x1.0d8c768e07cddp-39
    },
    {  /* c12 */
        -0x1.cdf706a8ad78cp-10, 0x1.2f968e3252933p-12, -0x1.fed4a2cc1a2a7p-14, -0x1.f9c585384e33cp-14,
        0x1.5ce8f355406ecp-14, 0x1.84f372590dadcp-16, -0x1.76cc0f2ddfae0p-16, -0x1.c339a6c84845ep-19,
        0x1.84d886e79cc52p-19, 0x1.442308d20beadp-21, -0x1.14a63ebca19d5p-23, -0x1.8d75c18ce5992p-25,
        0x1.c07fc5e9928d4p-28, 0x1.398fbfd911799p-26, 0x1.158cb35cd6c27p-28, -0x1.a86388295503fp-40
    }
};
#define SM_ERF64_DEG 12
#define SM_ERF64_INVW (1.0 / 0.385)
#define SM_ERF64_AMAX 5.96

/* piece i = round(a / 0.385) (a multiply-add to 1.5 2^52: i in the low 4 bits), w = a - c_i;
 * erf a = c0 + c1 w + ... + c12 w^12, Horner to c1, then K w + u with u = c0, or on piece 0
 * (c0 = 0, c1 stored less 1) u = w: there a c1 = a + a (c1 - 1) keeps c1's rounding and K's at
 * 0.128 / 1.128 of their size. Rows of sm_erf64_tab: c_i, c0 .. c12. */
static inline sm_vd sm_erf_d512(sm_vd x) {
    /* a = min(|x|, 5.96) by vrangepd (the smaller magnitude, sign cleared): inf gives 5.96
     * (erf(5.96) rounds to 1 by 0.19 ulp); NaN gives 5.96 or NaN (put right at the end) */
    sm_vd a = (sm_vd)_mm512_range_pd((__m512d)x, (__m512d)sm_bcd(SM_ERF64_AMAX), 0x0a);
    sm_vl i = (sm_vl)(a * SM_ERF64_INVW + SM_MAGICD);      /* round(a / 0.385), low 4 bits */
    /* The tables read from memory in the loop (an opaque pointer): held in registers, each
     * vpermt2pd (which overwrites its first table) needed a register copy, a p0/p5 uop on
     * the Xeon, where a load is not */
    const double (*tb)[16] = sm_erf64_tab;
    __asm__("" : "+r"(tb));
    sm_vd w = a - sm_lut16d(tb[0], i);                    /* exact */
    sm_vd K = sm_lut16d(tb[SM_ERF64_DEG + 1], i);
    for (int k = SM_ERF64_DEG; k >= 2; k--) K = K * w + sm_lut16d(tb[k], i);
    /* u: piece 0 w (c0 = +0 <= w), the others c0 (c0 >= erf(0.19) > |w|); an integer max
     * (the bits of doubles of either sign order as their values against a positive one),
     * which no NaN can make raise a flag */
    sm_vd u = (sm_vd)_mm512_max_epi64((__m512i)sm_lut16d(tb[1], i), (__m512i)w);
    sm_vd r = K * w + u;
    r = (sm_vd)((sm_vl)r | ((sm_vl)x & SM_SIGN64));       /* x's sign (-0 too) */
    /* NaN lanes: x (quieted); the others unchanged */
    return (sm_vd)_mm512_fixupimm_pd((__m512d)r, (__m512d)x, (__m512i)sm_bcl(0x22), 0);
}

SM_ROW_F64(exp, sm_exp_d512)
SM_ROW_F64(erf, sm_erf_d512)
#endif

#endif
