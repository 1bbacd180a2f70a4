/* TEMPORARY: the activation quantizers until qquant's cpu/csrc/quantize.h lands on main
 * (same names and signatures as ggml's quantize_row_q8_0/q8_1/q8_K_ref). Removed then. */
#ifndef GGML_CY_VECDOT_Q8_TMP_H
#define GGML_CY_VECDOT_Q8_TMP_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "kernels_convert.h"

static inline void quantize_row_q8_0(const float * x, void * vy, int64_t k) {
    uint8_t * y = (uint8_t *)vy;
    for (int64_t i = 0; i < k / 32; i++, x += 32, y += 34) {
        float amax = 0.0f;
        for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[j]));
        const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        uint16_t h = kern_f2h_soft(d);
        memcpy(y, &h, 2);
        for (int j = 0; j < 32; j++) y[2 + j] = (uint8_t)(int8_t)roundf(x[j] * id);
    }
}

static inline void quantize_row_q8_1(const float * x, void * vy, int64_t k) {
    uint8_t * y = (uint8_t *)vy;
    for (int64_t i = 0; i < k / 32; i++, x += 32, y += 36) {
        float amax = 0.0f;
        for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[j]));
        const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        int sum = 0;
        for (int j = 0; j < 32; j++) {
            int8_t v = (int8_t)roundf(x[j] * id);
            y[4 + j] = (uint8_t)v;
            sum += v;
        }
        uint16_t h = kern_f2h_soft(d), s = kern_f2h_soft((float)sum * d);
        memcpy(y, &h, 2);
        memcpy(y + 2, &s, 2);
    }
}

static inline void quantize_row_q8_K(const float * x, void * vy, int64_t k) {
    uint8_t * y = (uint8_t *)vy;
    for (int64_t i = 0; i < k / 256; i++, x += 256, y += 292) {
        float max = 0.0f, amax = 0.0f;
        for (int j = 0; j < 256; j++) {
            float ax = fabsf(x[j]);
            if (ax > amax) { amax = ax; max = x[j]; }
        }
        if (amax == 0.0f) { memset(y, 0, 292); continue; }
        const float iscale = -127.0f / max;
        int8_t * qs = (int8_t *)(y + 4);
        for (int j = 0; j < 256; j++) {
            float t = iscale * x[j] + 12582912.0f;
            int32_t v;
            memcpy(&v, &t, 4);
            v = (v & 0x007fffff) - 0x00400000;
            qs[j] = (int8_t)(v < 127 ? v : 127);
        }
        for (int g = 0; g < 16; g++) {
            int16_t s = 0;
            for (int j = 0; j < 16; j++) s += qs[16 * g + j];
            memcpy(y + 260 + 2 * g, &s, 2);
        }
        float d = 1.0f / iscale;
        memcpy(y, &d, 4);
    }
}
#endif
