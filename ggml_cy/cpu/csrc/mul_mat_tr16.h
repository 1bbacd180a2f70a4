/* The 16 x 16 in-register transpose of 32-bit lanes that every AVX-512 engine of mul_mat
 * uses: the f32 packs and mat-vec (mul_mat.h), the VDPBF16PS packs (mul_mat_bf16.h) and the
 * AMX b packing and C tiles (mul_mat_amx.h). A header of its own because mul_mat.h includes
 * mul_mat_amx.h before its own code, and the AMX probes (tools/device/amx_probe2.c) include
 * mul_mat_amx.h alone. */
#ifndef GGML_CY_MUL_MAT_TR16_H
#define GGML_CY_MUL_MAT_TR16_H
#if defined(__AVX512F__)
#include <immintrin.h>

/* The transpose's body, shared with kernels_transpose.h's always-inline copy (the
 * elementwise bands). */
#define MM_TR16_BODY(r)                                                                             \
    do {                                                                                            \
        __m512 t[16], u[16];                                                                        \
        for (int i = 0; i < 16; i += 2) {                                                           \
            t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);                                              \
            t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);                                          \
        }                                                                                           \
        for (int g = 0; g < 16; g += 4) {   /* u[g + e]: rows g..g+3, element e of each lane */     \
            u[g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[g]), _mm512_castps_pd(t[g + 2]))); \
            u[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[g]), _mm512_castps_pd(t[g + 2]))); \
            u[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[g + 1]), _mm512_castps_pd(t[g + 3]))); \
            u[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[g + 1]), _mm512_castps_pd(t[g + 3]))); \
        }                                                                                           \
        for (int e = 0; e < 4; e++) {                                                               \
            const __m512 v0 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0x88);                           \
            const __m512 w0 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0x88);                      \
            const __m512 v1 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0xDD);                           \
            const __m512 w1 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0xDD);                      \
            r[e] = _mm512_shuffle_f32x4(v0, w0, 0x88);                                              \
            r[8 + e] = _mm512_shuffle_f32x4(v0, w0, 0xDD);                                          \
            r[4 + e] = _mm512_shuffle_f32x4(v1, w1, 0x88);                                          \
            r[12 + e] = _mm512_shuffle_f32x4(v1, w1, 0xDD);                                         \
        }                                                                                           \
    } while (0)

/* In-register transpose of a 16 x 16 f32 block: r[i] holds row i on entry, column i on exit.
 * Three rounds: 32-bit interleave, 64-bit interleave, then 128-bit lane shuffles. Pure
 * data movement, so it serves any 32-bit lanes (the AMX code's bf16 pairs are cast to __m512,
 * its C tiles are f32 already). GCC inlines it into the AMX functions too: their target
 * attribute (MMX_TARGET) only adds to this build's ISA. */
static inline void mm_tr16(__m512 r[16]) {
    MM_TR16_BODY(r);
}
#endif
#endif
