/* ggml_cy SIMD math: the 16-entry float64 tables the AVX-512 float64 exp/expm1/tanh and
 * log/log2/log1p forms (simd_math_f64.h) and the float32 power (simd_math_pow32.h, every
 * level) read. Derivations: tools/fit_expm1_64.py (2^(j/16), high part as bits(T_j) - (j << 48)
 * so that adding k << 48 with k = 16 n + j gives 2^n T_j; low part relative to T_j) and
 * tools/fit_log64.py (x = 2^k z, z in [0.765625, 1.53125), interval i = the top 4 bits of
 * bits(z) - bits(0.765625); invc = 1/c, log c and log2 c split hi + lo, hi a multiple of
 * 2^-42; the interval holding 1 has c = 1). */
#ifndef GGML_CY_SIMD_MATH_TAB64_H
#define GGML_CY_SIMD_MATH_TAB64_H
#include <stdint.h>

/* tools/fit_expm1_64.py: |r| <= 0.021745, Q degree 5, relative error of r + r^2 Q 1.81e-18 (2^-58.9) */
static const int64_t __attribute__((aligned(64))) sm_expt_hi[16] = {
    0x3ff0000000000000LL, 0x3fefb5586cf9890fLL, 0x3fef72b83c7d517bLL, 0x3fef387a6e756238LL,
    0x3fef06fe0a31b715LL, 0x3feedea64c123422LL, 0x3feebfdad5362a27LL, 0x3feeab07dd485429LL,
    0x3feea09e667f3bcdLL, 0x3feea11473eb0187LL, 0x3feeace5422aa0dbLL, 0x3feec49182a3f090LL,
    0x3feee89f995ad3adLL, 0x3fef199bdd85529cLL, 0x3fef5818dcfba487LL, 0x3fefa4afa2a490daLL
};
static const double __attribute__((aligned(64))) sm_expt_lo[16] = {
    0.0, 0x1.79aa65d837b6dp-54, -0x1.01b15eaa59348p-55, 0x1.68efde3a8a894p-54,
    0x1.34d754db0abb6p-55, 0x1.59f48a72a4c6dp-55, 0x1.690cebb7aafb0p-56, 0x1.063e1e21c5409p-54,
    -0x1.3b3efbf5e2228p-54, -0x1.b32dcb94da51dp-56, 0x1.db72fc1f0eab4p-55, 0x1.1affc2b91ce27p-56,
    0x1.c1a7792cb3387p-55, 0x1.36eae30af0cb3p-56, 0x1.4a385a63d07a7p-56, -0x1.ff7128fd391f0p-55
};
/* tools/fit_log64.py: max |r| = 0.03418, Q degree 8, relative error of r + r^2 Q 4.94e-19 (2^-60.8) */
static const double __attribute__((aligned(64))) sm_logt_invc[16] = {
    0x1.4800000000000p+0, 0x1.3800000000000p+0, 0x1.3000000000000p+0, 0x1.2800000000000p+0,
    0x1.1800000000000p+0, 0x1.1000000000000p+0, 0x1.0800000000000p+0, 0x1.0000000000000p+0,
    0x1.e000000000000p-1, 0x1.c800000000000p-1, 0x1.b000000000000p-1, 0x1.9800000000000p-1,
    0x1.8800000000000p-1, 0x1.7000000000000p-1, 0x1.6000000000000p-1, 0x1.5800000000000p-1
};
static const double __attribute__((aligned(64))) sm_logt_hi[16] = {
    -0x1.fb9186d5e4000p-3, -0x1.9525a9cf46000p-3, -0x1.5ff3070a7a000p-3, -0x1.29552f8200000p-3,
    -0x1.6f0d28ae58000p-4, -0x1.f0a30c0118000p-5, -0x1.f829b0e780000p-6, 0.0,
    0x1.08598b59e4000p-4, 0x1.da72763844000p-4, 0x1.5bf406b544000p-3, 0x1.d1037f2656000p-3,
    0x1.1178e8227e000p-2, 0x1.522ae0738a000p-2, 0x1.7fafa3bd81000p-2, 0x1.973a343135000p-2
};
static const double __attribute__((aligned(64))) sm_logt_lo[16] = {
    0x1.d572aab993c87p-47, 0x1.297137d9f158fp-44, 0x1.8586f183bebf2p-44, 0x1.5b967f4471dfcp-44,
    0x1.4b4641b664613p-44, 0x1.d599e83368e91p-45, -0x1.980267c7e09e4p-45, 0.0,
    -0x1.7e5dd7009902cp-46, 0x1.a89401fa71733p-46, -0x1.27023eb68981cp-46, -0x1.84a7e75b6f6e4p-47,
    0x1.1ef78ce2d07f2p-44, 0x1.ebe708164c759p-45, 0x1.46fb79bf6d4cbp-44, 0x1.ab73b16bf4984p-44
};
static const double __attribute__((aligned(64))) sm_log2t_hi[16] = {
    -0x1.6e221cd9d1000p-2, -0x1.24407ab0e0000p-2, -0x1.fbc16b9026000p-3, -0x1.acf5e2db4e000p-3,
    -0x1.08c588cda8000p-3, -0x1.663f6fac90000p-4, -0x1.6bad3758f0000p-5, 0.0,
    0x1.7d60496cfc000p-4, 0x1.563dc29ffa000p-3, 0x1.f5fd8a9064000p-3, 0x1.4f6fbb2cec000p-2,
    0x1.8a8980abfc000p-2, 0x1.e7df5fe539000p-2, 0x1.14c560fe68800p-1, 0x1.25c0a0463c000p-1
};
static const double __attribute__((aligned(64))) sm_log2t_lo[16] = {
    0x1.90d43956fa5d8p-45, -0x1.ce60916e52e91p-44, -0x1.0144751b3314fp-44, -0x1.927dfc23d9780p-44,
    0x1.871a7610e40bdp-45, -0x1.3167ccc538261p-44, 0x1.3c6764fc87b4ap-48, 0.0,
    -0x1.2ce6312ebb81dp-46, 0x1.964190e41bca7p-44, -0x1.cb6f70109b0f1p-47, 0x1.661e393a16b95p-44,
    -0x1.66cccab240e90p-45, -0x1.532c412ba94dbp-44, 0x1.7c407050799bfp-44, -0x1.50520a377c7ecp-45
};
#endif
