/* ggml_cy's element and block types with ggml's numbers (ggml.h: enum ggml_type) and
 * their traits (ggml.c: type_traits): name, elements per block, bytes per block.
 *
 * A "block" is ggml's unit of storage: plain types have blocks of one element; quantized
 * types pack blck_size values into type_size bytes (ggml-common.h's block_* structs), and a
 * row of ne0 values (ne0 a multiple of blck_size) takes ggml_row_size(type, ne0) bytes.
 *
 * The numbers are written into GGUF files, so they are ggml's exactly. Numbers ggml has
 * retired (4, 5: Q4_2/Q4_3; 31-33: Q4_0_4_4.. repacks; 36-38: IQ4_NL_4_4.. repacks) are not
 * types. ggml_cy's own types (U8, BOOL: relational results) start at 128, a range ggml does
 * not use; they may never be written into a GGUF file. */
#ifndef GGML_CY_GGML_TYPES_H
#define GGML_CY_GGML_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    GGML_TYPE_F32 = 0,
    GGML_TYPE_F16 = 1,
    GGML_TYPE_Q4_0 = 2,
    GGML_TYPE_Q4_1 = 3,
    GGML_TYPE_Q5_0 = 6,
    GGML_TYPE_Q5_1 = 7,
    GGML_TYPE_Q8_0 = 8,
    GGML_TYPE_Q8_1 = 9,
    GGML_TYPE_Q2_K = 10,
    GGML_TYPE_Q3_K = 11,
    GGML_TYPE_Q4_K = 12,
    GGML_TYPE_Q5_K = 13,
    GGML_TYPE_Q6_K = 14,
    GGML_TYPE_Q8_K = 15,
    GGML_TYPE_IQ2_XXS = 16,
    GGML_TYPE_IQ2_XS = 17,
    GGML_TYPE_IQ3_XXS = 18,
    GGML_TYPE_IQ1_S = 19,
    GGML_TYPE_IQ4_NL = 20,
    GGML_TYPE_IQ3_S = 21,
    GGML_TYPE_IQ2_S = 22,
    GGML_TYPE_IQ4_XS = 23,
    GGML_TYPE_I8 = 24,
    GGML_TYPE_I16 = 25,
    GGML_TYPE_I32 = 26,
    GGML_TYPE_I64 = 27,
    GGML_TYPE_F64 = 28,
    GGML_TYPE_IQ1_M = 29,
    GGML_TYPE_BF16 = 30,
    GGML_TYPE_TQ1_0 = 34,
    GGML_TYPE_TQ2_0 = 35,
    GGML_TYPE_MXFP4 = 39,
    GGML_TYPE_NVFP4 = 40,
    GGML_TYPE_Q1_0 = 41,
    GGML_TYPE_Q2_0 = 42,
    GGML_TYPE_GGML_COUNT = 43,   /* one past ggml's largest number: a GGUF file's limit */
    /* ggml_cy's own types (never in a file) */
    GGML_TYPE_U8 = 128,
    GGML_TYPE_BOOL = 129,
    GGML_TYPE_COUNT = 130        /* one past the largest number (table sizes) */
} ggml_type;

#define GGML_QK_K 256   /* super-block of the K-, i- and ternary quants */

typedef struct {
    const char * name;     /* ggml's type_name ("f32", "q4_K", ...); NULL: not a type */
    int64_t blck_size;     /* elements per block */
    size_t type_size;      /* bytes per block */
    int is_quantized;
} ggml_cy_type_traits;

/* The traits of a type number; {NULL, 0, 0, 0} for numbers that are not types (retired
 * or unused). A switch rather than an indexed table so that C and C++ (nvcc) share it. */
static inline ggml_cy_type_traits ggml_cy_type_traits_of(int type) {
    ggml_cy_type_traits t = {NULL, 0, 0, 0};
    switch (type) {
    case GGML_TYPE_F32: t.name = "f32"; t.blck_size = 1; t.type_size = 4; t.is_quantized = 0; break;
    case GGML_TYPE_F16: t.name = "f16"; t.blck_size = 1; t.type_size = 2; t.is_quantized = 0; break;
    case GGML_TYPE_Q4_0: t.name = "q4_0"; t.blck_size = 32; t.type_size = 2 + 16; t.is_quantized = 1; break;
    case GGML_TYPE_Q4_1: t.name = "q4_1"; t.blck_size = 32; t.type_size = 2 + 2 + 16; t.is_quantized = 1; break;
    case GGML_TYPE_Q5_0: t.name = "q5_0"; t.blck_size = 32; t.type_size = 2 + 4 + 16; t.is_quantized = 1; break;
    case GGML_TYPE_Q5_1: t.name = "q5_1"; t.blck_size = 32; t.type_size = 2 + 2 + 4 + 16; t.is_quantized = 1; break;
    case GGML_TYPE_Q8_0: t.name = "q8_0"; t.blck_size = 32; t.type_size = 2 + 32; t.is_quantized = 1; break;
    case GGML_TYPE_Q8_1: t.name = "q8_1"; t.blck_size = 32; t.type_size = 2 + 2 + 32; t.is_quantized = 1; break;
    case GGML_TYPE_Q2_K: t.name = "q2_K"; t.blck_size = 256; t.type_size = 2 + 2 + 256 / 16 + 256 / 4; t.is_quantized = 1; break;
    case GGML_TYPE_Q3_K: t.name = "q3_K"; t.blck_size = 256; t.type_size = 2 + 256 / 4 + 256 / 8 + 12; t.is_quantized = 1; break;
    case GGML_TYPE_Q4_K: t.name = "q4_K"; t.blck_size = 256; t.type_size = 2 + 2 + 12 + 256 / 2; t.is_quantized = 1; break;
    case GGML_TYPE_Q5_K: t.name = "q5_K"; t.blck_size = 256; t.type_size = 2 + 2 + 12 + 256 / 2 + 256 / 8; t.is_quantized = 1; break;
    case GGML_TYPE_Q6_K: t.name = "q6_K"; t.blck_size = 256; t.type_size = 2 + 256 / 16 + 3 * 256 / 4; t.is_quantized = 1; break;
    case GGML_TYPE_Q8_K: t.name = "q8_K"; t.blck_size = 256; t.type_size = 4 + 256 + 256 / 16 * 2; t.is_quantized = 1; break;
    case GGML_TYPE_IQ2_XXS: t.name = "iq2_xxs"; t.blck_size = 256; t.type_size = 2 + 256 / 8 * 2; t.is_quantized = 1; break;
    case GGML_TYPE_IQ2_XS: t.name = "iq2_xs"; t.blck_size = 256; t.type_size = 2 + 256 / 8 * 2 + 256 / 32; t.is_quantized = 1; break;
    case GGML_TYPE_IQ3_XXS: t.name = "iq3_xxs"; t.blck_size = 256; t.type_size = 2 + 3 * 256 / 8; t.is_quantized = 1; break;
    case GGML_TYPE_IQ1_S: t.name = "iq1_s"; t.blck_size = 256; t.type_size = 2 + 256 / 8 + 256 / 16; t.is_quantized = 1; break;
    case GGML_TYPE_IQ4_NL: t.name = "iq4_nl"; t.blck_size = 32; t.type_size = 2 + 16; t.is_quantized = 1; break;
    case GGML_TYPE_IQ3_S: t.name = "iq3_s"; t.blck_size = 256; t.type_size = 2 + 13 * 256 / 32 + 256 / 64; t.is_quantized = 1; break;
    case GGML_TYPE_IQ2_S: t.name = "iq2_s"; t.blck_size = 256; t.type_size = 2 + 256 / 4 + 256 / 16; t.is_quantized = 1; break;
    case GGML_TYPE_IQ4_XS: t.name = "iq4_xs"; t.blck_size = 256; t.type_size = 2 + 2 + 256 / 64 + 256 / 2; t.is_quantized = 1; break;
    case GGML_TYPE_I8: t.name = "i8"; t.blck_size = 1; t.type_size = 1; t.is_quantized = 0; break;
    case GGML_TYPE_I16: t.name = "i16"; t.blck_size = 1; t.type_size = 2; t.is_quantized = 0; break;
    case GGML_TYPE_I32: t.name = "i32"; t.blck_size = 1; t.type_size = 4; t.is_quantized = 0; break;
    case GGML_TYPE_I64: t.name = "i64"; t.blck_size = 1; t.type_size = 8; t.is_quantized = 0; break;
    case GGML_TYPE_F64: t.name = "f64"; t.blck_size = 1; t.type_size = 8; t.is_quantized = 0; break;
    case GGML_TYPE_IQ1_M: t.name = "iq1_m"; t.blck_size = 256; t.type_size = 256 / 8 + 256 / 16 + 256 / 32; t.is_quantized = 1; break;
    case GGML_TYPE_BF16: t.name = "bf16"; t.blck_size = 1; t.type_size = 2; t.is_quantized = 0; break;
    case GGML_TYPE_TQ1_0: t.name = "tq1_0"; t.blck_size = 256; t.type_size = 2 + 256 / 64 + (256 - 4 * 256 / 64) / 5; t.is_quantized = 1; break;
    case GGML_TYPE_TQ2_0: t.name = "tq2_0"; t.blck_size = 256; t.type_size = 2 + 256 / 4; t.is_quantized = 1; break;
    case GGML_TYPE_MXFP4: t.name = "mxfp4"; t.blck_size = 32; t.type_size = 1 + 16; t.is_quantized = 1; break;
    case GGML_TYPE_NVFP4: t.name = "nvfp4"; t.blck_size = 64; t.type_size = 64 / 16 + 64 / 2; t.is_quantized = 1; break;
    case GGML_TYPE_Q1_0: t.name = "q1_0"; t.blck_size = 128; t.type_size = 2 + 128 / 8; t.is_quantized = 1; break;
    case GGML_TYPE_Q2_0: t.name = "q2_0"; t.blck_size = 64; t.type_size = 2 + 64 / 4; t.is_quantized = 1; break;
    case GGML_TYPE_U8: t.name = "u8"; t.blck_size = 1; t.type_size = 1; t.is_quantized = 0; break;
    case GGML_TYPE_BOOL: t.name = "bool"; t.blck_size = 1; t.type_size = 1; t.is_quantized = 0; break;
    default: break;
    }
    return t;
}

/* True for every number that names a type (ggml's and ggml_cy's). */
static inline int ggml_cy_type_known(int type) {
    return ggml_cy_type_traits_of(type).name != NULL;
}

/* True for the types a GGUF file may hold: ggml's own numbers. */
static inline int ggml_cy_type_in_ggml(int type) {
    return type >= 0 && type < GGML_TYPE_GGML_COUNT && ggml_cy_type_known(type);
}

/* ggml_blck_size / ggml_type_size (bytes per block) / the name; 0 / "?" when unknown. */
static inline int64_t ggml_cy_blck_size(int type) {
    return ggml_cy_type_known(type) ? ggml_cy_type_traits_of(type).blck_size : 0;
}
static inline size_t ggml_cy_block_bytes(int type) {
    return ggml_cy_type_known(type) ? ggml_cy_type_traits_of(type).type_size : 0;
}
static inline const char * ggml_cy_type_name(int type) {
    return ggml_cy_type_known(type) ? ggml_cy_type_traits_of(type).name : "?";
}
static inline int ggml_cy_is_quantized(int type) {
    return ggml_cy_type_known(type) && ggml_cy_type_traits_of(type).is_quantized;
}

/* ggml_row_size: bytes of ne values of the type; -1 when ne is negative, not a multiple of
 * the block size, the type is unknown, or the size overflows int64. */
static inline int64_t ggml_cy_row_size(int type, int64_t ne) {
    int64_t bs = ggml_cy_blck_size(type);
    if (bs <= 0 || ne < 0 || ne % bs != 0)
        return -1;
    int64_t nblocks = ne / bs, ts = (int64_t)ggml_cy_block_bytes(type);
    if (nblocks > INT64_MAX / ts)
        return -1;
    return nblocks * ts;
}

#ifdef __cplusplus
}
#endif
#endif
