/* ggml's quantized block layouts (ggml-common.h), one C struct per type, byte for byte.
 *
 * A quantized row of ne0 values (ne0 a multiple of the block size QK) is ne0/QK of these
 * structs back to back, with no padding: every struct's size is asserted below against the
 * bytes-per-block of ggml_types.h (the numbers GGUF files are written with).
 *
 * Plain C (C99 + _Static_assert), no unions, no C++-only constructs: the same header is
 * included by the CPU kernels (C, Cython) and by CUDA (.cu, compiled as C++); nothing here is
 * host- or device-specific. Half-precision scales are stored as their 16-bit pattern
 * (ggml_half_bits) so no fp16 type is needed to include this file; ggml's unions of two halves
 * (d/m, d/dmin, d/s) are two uint16 fields here, at the same offsets.
 *
 * Field names follow ggml's, so ggml's kernels can be read side by side with ours. */
#ifndef GGML_CY_QUANT_BLOCKS_H
#define GGML_CY_QUANT_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "ggml_types.h"

#ifdef __cplusplus
#define GGML_CY_QB_ASSERT(c, m) static_assert(c, m)
extern "C" {
#else
#define GGML_CY_QB_ASSERT(c, m) _Static_assert(c, m)
#endif

typedef uint16_t ggml_half_bits;   /* an IEEE binary16 value, as stored */

/* elements per block (ggml's QK* names) */
#define QK_K 256            /* super-block of the K-, i- and ternary quants */
#define K_SCALE_SIZE 12
#define QK1_0 128
#define QK2_0 64
#define QK4_0 32
#define QK4_1 32
#define QK5_0 32
#define QK5_1 32
#define QK8_0 32
#define QK8_1 32
#define QK4_NL 32
#define QK_MXFP4 32
#define QK_NVFP4 64
#define QK_NVFP4_SUB 16     /* NVFP4: one scale per 16 values */
#define IQ3S_N_SCALE (QK_K / 64)

/* ---------------------------------------------------------------- 32-value blocks */
typedef struct { ggml_half_bits d; uint8_t qs[QK1_0 / 8]; } block_q1_0;     /* d * (bit ? +1 : -1) */
typedef struct { ggml_half_bits d; uint8_t qs[QK2_0 / 4]; } block_q2_0;
typedef struct { ggml_half_bits d; uint8_t qs[QK4_0 / 2]; } block_q4_0;     /* d * (q - 8) */
typedef struct { ggml_half_bits d, m; uint8_t qs[QK4_1 / 2]; } block_q4_1; /* d * q + m */
typedef struct { ggml_half_bits d; uint8_t qh[4]; uint8_t qs[QK5_0 / 2]; } block_q5_0;
typedef struct { ggml_half_bits d, m; uint8_t qh[4]; uint8_t qs[QK5_1 / 2]; } block_q5_1;
typedef struct { ggml_half_bits d; int8_t qs[QK8_0]; } block_q8_0;           /* d * q */
typedef struct { ggml_half_bits d, s; int8_t qs[QK8_1]; } block_q8_1;     /* s = d * sum(qs) */
typedef struct { uint8_t e; uint8_t qs[QK_MXFP4 / 2]; } block_mxfp4;         /* e: E8M0 */
typedef struct { uint8_t d[QK_NVFP4 / QK_NVFP4_SUB]; uint8_t qs[QK_NVFP4 / 2]; } block_nvfp4; /* d: UE4M3 */
typedef struct { ggml_half_bits d; uint8_t qs[QK4_NL / 2]; } block_iq4_nl;

/* ---------------------------------------------------------------- ternary */
typedef struct {
    uint8_t qs[(QK_K - 4 * QK_K / 64) / 5];  /* 5 values per byte (3^5 = 243 < 256) */
    uint8_t qh[QK_K / 64];                   /* 4 values per byte */
    ggml_half_bits d;
} block_tq1_0;
typedef struct { uint8_t qs[QK_K / 4]; ggml_half_bits d; } block_tq2_0;

/* ---------------------------------------------------------------- K-quants */
typedef struct {
    uint8_t scales[QK_K / 16];   /* 4-bit scale | 4-bit min per 16 values */
    uint8_t qs[QK_K / 4];
    ggml_half_bits d, dmin;
} block_q2_K;
typedef struct {
    uint8_t hmask[QK_K / 8];     /* high bit of each quant */
    uint8_t qs[QK_K / 4];        /* low 2 bits */
    uint8_t scales[12];          /* 16 six-bit scales */
    ggml_half_bits d;
} block_q3_K;
typedef struct {
    ggml_half_bits d, dmin;
    uint8_t scales[K_SCALE_SIZE];  /* 8 six-bit scales and 8 six-bit mins */
    uint8_t qs[QK_K / 2];
} block_q4_K;
typedef struct {
    ggml_half_bits d, dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
} block_q5_K;
typedef struct {
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t scales[QK_K / 16];
    ggml_half_bits d;
} block_q6_K;
typedef struct {                 /* ggml's activation format for K-quant dot products */
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];    /* sums of qs in groups of 16 */
} block_q8_K;

/* ---------------------------------------------------------------- i-quants */
typedef struct { ggml_half_bits d; uint16_t qs[QK_K / 8]; } block_iq2_xxs;
typedef struct { ggml_half_bits d; uint16_t qs[QK_K / 8]; uint8_t scales[QK_K / 32]; } block_iq2_xs;
typedef struct {
    ggml_half_bits d;
    uint8_t qs[QK_K / 4];        /* grid index low bits (first half), then sign bytes */
    uint8_t qh[QK_K / 32];
    uint8_t scales[QK_K / 32];
} block_iq2_s;
typedef struct { ggml_half_bits d; uint8_t qs[3 * QK_K / 8]; } block_iq3_xxs;
typedef struct {
    ggml_half_bits d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t signs[QK_K / 8];
    uint8_t scales[IQ3S_N_SCALE];
} block_iq3_s;
typedef struct { ggml_half_bits d; uint8_t qs[QK_K / 8]; uint16_t qh[QK_K / 32]; } block_iq1_s;
typedef struct {
    uint8_t qs[QK_K / 8];        /* grid index, low 8 bits */
    uint8_t qh[QK_K / 16];       /* grid index high 3 bits + delta sign, per 8 values */
    uint8_t scales[QK_K / 32];   /* 3-bit scales; the f16 super-scale in the top nibbles */
} block_iq1_m;
typedef struct {
    ggml_half_bits d;
    uint16_t scales_h;
    uint8_t scales_l[QK_K / 64];
    uint8_t qs[QK_K / 2];
} block_iq4_xs;

/* ---------------------------------------------------------------- sizes vs ggml_types.h */
/* The bytes-per-block of ggml_types.h, as constant expressions (the switch there is not). */
GGML_CY_QB_ASSERT(sizeof(block_q1_0) == 2 + 128 / 8, "q1_0");
GGML_CY_QB_ASSERT(sizeof(block_q2_0) == 2 + 64 / 4, "q2_0");
GGML_CY_QB_ASSERT(sizeof(block_q4_0) == 2 + 16, "q4_0");
GGML_CY_QB_ASSERT(sizeof(block_q4_1) == 2 + 2 + 16, "q4_1");
GGML_CY_QB_ASSERT(sizeof(block_q5_0) == 2 + 4 + 16, "q5_0");
GGML_CY_QB_ASSERT(sizeof(block_q5_1) == 2 + 2 + 4 + 16, "q5_1");
GGML_CY_QB_ASSERT(sizeof(block_q8_0) == 2 + 32, "q8_0");
GGML_CY_QB_ASSERT(sizeof(block_q8_1) == 2 + 2 + 32, "q8_1");
GGML_CY_QB_ASSERT(sizeof(block_mxfp4) == 1 + 16, "mxfp4");
GGML_CY_QB_ASSERT(sizeof(block_nvfp4) == 64 / 16 + 64 / 2, "nvfp4");
GGML_CY_QB_ASSERT(sizeof(block_iq4_nl) == 2 + 16, "iq4_nl");
GGML_CY_QB_ASSERT(sizeof(block_tq1_0) == 2 + 256 / 64 + (256 - 4 * 256 / 64) / 5, "tq1_0");
GGML_CY_QB_ASSERT(sizeof(block_tq2_0) == 2 + 256 / 4, "tq2_0");
GGML_CY_QB_ASSERT(sizeof(block_q2_K) == 2 + 2 + 256 / 16 + 256 / 4, "q2_K");
GGML_CY_QB_ASSERT(sizeof(block_q3_K) == 2 + 256 / 4 + 256 / 8 + 12, "q3_K");
GGML_CY_QB_ASSERT(sizeof(block_q4_K) == 2 + 2 + 12 + 256 / 2, "q4_K");
GGML_CY_QB_ASSERT(sizeof(block_q5_K) == 2 + 2 + 12 + 256 / 2 + 256 / 8, "q5_K");
GGML_CY_QB_ASSERT(sizeof(block_q6_K) == 2 + 256 / 16 + 3 * 256 / 4, "q6_K");
GGML_CY_QB_ASSERT(sizeof(block_q8_K) == 4 + 256 + 256 / 16 * 2, "q8_K");
GGML_CY_QB_ASSERT(sizeof(block_iq2_xxs) == 2 + 256 / 8 * 2, "iq2_xxs");
GGML_CY_QB_ASSERT(sizeof(block_iq2_xs) == 2 + 256 / 8 * 2 + 256 / 32, "iq2_xs");
GGML_CY_QB_ASSERT(sizeof(block_iq2_s) == 2 + 256 / 4 + 256 / 16, "iq2_s");
GGML_CY_QB_ASSERT(sizeof(block_iq3_xxs) == 2 + 3 * 256 / 8, "iq3_xxs");
GGML_CY_QB_ASSERT(sizeof(block_iq3_s) == 2 + 13 * 256 / 32 + 256 / 64, "iq3_s");
GGML_CY_QB_ASSERT(sizeof(block_iq1_s) == 2 + 256 / 8 + 256 / 16, "iq1_s");
GGML_CY_QB_ASSERT(sizeof(block_iq1_m) == 256 / 8 + 256 / 16 + 256 / 32, "iq1_m");
GGML_CY_QB_ASSERT(sizeof(block_iq4_xs) == 2 + 2 + 256 / 64 + 256 / 2, "iq4_xs");

/* The block struct size of a type (0 for plain or unknown types), for run-time checks
 * against ggml_cy_block_bytes (tests call it through the core). */
static inline size_t ggml_cy_block_struct_size(int type) {
    switch (type) {
    case GGML_TYPE_Q1_0: return sizeof(block_q1_0);
    case GGML_TYPE_Q2_0: return sizeof(block_q2_0);
    case GGML_TYPE_Q4_0: return sizeof(block_q4_0);
    case GGML_TYPE_Q4_1: return sizeof(block_q4_1);
    case GGML_TYPE_Q5_0: return sizeof(block_q5_0);
    case GGML_TYPE_Q5_1: return sizeof(block_q5_1);
    case GGML_TYPE_Q8_0: return sizeof(block_q8_0);
    case GGML_TYPE_Q8_1: return sizeof(block_q8_1);
    case GGML_TYPE_MXFP4: return sizeof(block_mxfp4);
    case GGML_TYPE_NVFP4: return sizeof(block_nvfp4);
    case GGML_TYPE_IQ4_NL: return sizeof(block_iq4_nl);
    case GGML_TYPE_TQ1_0: return sizeof(block_tq1_0);
    case GGML_TYPE_TQ2_0: return sizeof(block_tq2_0);
    case GGML_TYPE_Q2_K: return sizeof(block_q2_K);
    case GGML_TYPE_Q3_K: return sizeof(block_q3_K);
    case GGML_TYPE_Q4_K: return sizeof(block_q4_K);
    case GGML_TYPE_Q5_K: return sizeof(block_q5_K);
    case GGML_TYPE_Q6_K: return sizeof(block_q6_K);
    case GGML_TYPE_Q8_K: return sizeof(block_q8_K);
    case GGML_TYPE_IQ2_XXS: return sizeof(block_iq2_xxs);
    case GGML_TYPE_IQ2_XS: return sizeof(block_iq2_xs);
    case GGML_TYPE_IQ2_S: return sizeof(block_iq2_s);
    case GGML_TYPE_IQ3_XXS: return sizeof(block_iq3_xxs);
    case GGML_TYPE_IQ3_S: return sizeof(block_iq3_s);
    case GGML_TYPE_IQ1_S: return sizeof(block_iq1_s);
    case GGML_TYPE_IQ1_M: return sizeof(block_iq1_m);
    case GGML_TYPE_IQ4_XS: return sizeof(block_iq4_xs);
    default: return 0;
    }
}

#ifdef __cplusplus
}
#endif
#endif
