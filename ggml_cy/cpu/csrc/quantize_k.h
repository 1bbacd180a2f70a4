/* ggml_cy CPU kernels: float32 -> K-quants (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K).
 *
 * The algorithm is ggml's reference one (ggml-quants.c: quantize_row_q{2..6}_K_ref with its
 * helpers make_qkx2_quants, make_q3_quants, make_qx_quants): per sub-block of 16 or 32
 * values a least-squares search for the scale (and min), then the sub-block scales are
 * themselves quantized to 4/6/8 bits against one float16 super-scale, and the values are
 * re-quantized with the scales as stored. Every expression is evaluated in the order the C
 * reference reads, in strict float32 (no FMA contraction; see quantize.h), so the blocks
 * equal those of ggml's reference compiled with -ffp-contract=off (tests/test_quant_kquants.py
 * builds that oracle when ggml's sources and a compiler are at hand).
 *
 * Non-finite input: like the reference, nothing is checked; ggml's nearest_int of a NaN or
 * of a value beyond 2^22 yields the reference's own (meaningless but deterministic) level,
 * reproduced here. Included by quantize.h (needs its helpers). */
#ifndef GGML_CY_QUANTIZE_K_H
#define GGML_CY_QUANTIZE_K_H

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize ("fp-contract=off")
#endif

#define QK_GROUP_EPS 1e-15f   /* a sub-block below this magnitude is all zero */

static inline int qk_clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
static inline float qk_h2f(uint16_t h) { return kern_h2f_soft(h); }

/* Scale and min of one sub-block for levels 0..nmax: start from (max - min)/nmax, then try
 * nstep+1 stretched grids, each refit by weighted least squares (scale, min), keeping the
 * one of least weighted error (|e| with use_mad, e^2 otherwise). Returns the scale, stores
 * -min (>= 0) in *the_min and the levels in L. */
static float qk_fit_scale_min(int n, int nmax, const float * x, const float * w, uint8_t * L,
                              float * the_min, float rmin, float rdelta, int nstep, int use_mad) {
    uint8_t La[32];
    float lo = x[0], hi = x[0];
    float sum_w = w[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < lo) lo = x[i];
        if (x[i] > hi) hi = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (lo > 0) lo = 0;
    if (hi == lo) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        *the_min = -lo;
        return 0.f;
    }
    float iscale = (float)nmax / (hi - lo);
    float scale = 1 / iscale;
    float best_err = 0;
    for (int i = 0; i < n; ++i) {
        L[i] = (uint8_t)qk_clampi(qz_nearest_int(iscale * (x[i] - lo)), 0, nmax);
        float e = scale * L[i] + lo - x[i];
        e = use_mad ? fabsf(e) : e * e;
        best_err += w[i] * e;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * is + nmax) / (hi - lo);
        float sl = 0, sl2 = 0, sxl = 0;
        for (int i = 0; i < n; ++i) {
            int l = qk_clampi(qz_nearest_int(iscale * (x[i] - lo)), 0, nmax);
            La[i] = (uint8_t)l;
            sl += w[i] * l;
            sl2 += w[i] * l * l;
            sxl += w[i] * l * x[i];
        }
        float det = sum_w * sl2 - sl * sl;
        if (!(det > 0)) continue;
        float s = (sum_w * sxl - sum_x * sl) / det;
        float m = (sl2 * sum_x - sl * sxl) / det;
        if (m > 0) {
            m = 0;
            s = sxl / sl2;
        }
        float err = 0;
        for (int i = 0; i < n; ++i) {
            float e = s * La[i] + m - x[i];
            e = use_mad ? fabsf(e) : e * e;
            err += w[i] * e;
        }
        if (err < best_err) {
            memcpy(L, La, (size_t)n);
            best_err = err;
            scale = s;
            lo = m;
        }
    }
    *the_min = -lo;
    return scale;
}

/* Symmetric levels -nmax..nmax-1 for Q3_K: start from -nmax/x[argmax|x|], then up to five
 * passes of coordinate descent on the x^2-weighted fit. Stores levels + nmax in L. */
static float qk_fit_sym_q3(int n, int nmax, const float * x, int8_t * L) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i) {
        float ax = fabsf(x[i]);
        if (ax > amax) { amax = ax; max = x[i]; }
    }
    if (amax < QK_GROUP_EPS) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    const float iscale = (float)(-nmax) / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = qk_clampi(qz_nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t)l;
        float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    for (int pass = 0; pass < 5; ++pass) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * L[i];
            if (!(slx > 0)) continue;
            float sl2 = suml2 - w * L[i] * L[i];
            int nl = qk_clampi(qz_nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
            if (nl == L[i]) continue;
            slx += w * x[i] * nl;
            sl2 += w * nl * nl;
            if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                L[i] = (int8_t)nl;
                sumlx = slx;
                suml2 = sl2;
                ++changed;
            }
        }
        if (!changed) break;
    }
    for (int i = 0; i < n; ++i) L[i] = (int8_t)(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* Symmetric levels for Q6_K (ggml's make_qx_quants, rmse_type 1, no importance weights):
 * scale -nmax/x[argmax|x|] and 18 stretched variants, keeping the best x^2-weighted fit. */
static float qk_fit_sym_q6(int n, int nmax, const float * x, int8_t * L) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i) {
        float ax = fabsf(x[i]);
        if (ax > amax) { amax = ax; max = x[i]; }
    }
    if (amax < QK_GROUP_EPS) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    float iscale = (float)(-nmax) / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = qk_clampi(qz_nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t)(l + nmax);
        float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    float scale = suml2 ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(nmax + 0.1f * is) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            int l = qk_clampi(qz_nearest_int(iscale * x[i]), -nmax, nmax - 1);
            float w = x[i] * x[i];
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i)
                L[i] = (int8_t)(nmax + qk_clampi(qz_nearest_int(iscale * x[i]), -nmax, nmax - 1));
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

/* four 2-bit levels per byte: values j, j+32, j+64, j+96 of each 128 */
static inline void qk_pack2(const uint8_t * L, uint8_t * qs) {
    for (int j = 0; j < QK_K; j += 128)
        for (int l = 0; l < 32; ++l)
            qs[j / 4 + l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) |
                                      (L[j + l + 96] << 6));
}

static void quantize_row_q2_K(const float * x, void * vy, int64_t k) {
    block_q2_K * y = (block_q2_K *)vy;
    const int64_t nb = k / QK_K;
    uint8_t L[QK_K];
    float w[16], mins[QK_K / 16], scales[QK_K / 16];
    for (int64_t i = 0; i < nb; ++i, x += QK_K) {
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            for (int l = 0; l < 16; ++l) w[l] = fabsf(x[16 * j + l]);
            scales[j] = qk_fit_scale_min(16, 3, x + 16 * j, w, L + 16 * j, &mins[j],
                                         -0.5f, 0.1f, 15, 1);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        if (max_scale > 0) {
            const float iscale = 15.f / max_scale;
            for (int j = 0; j < QK_K / 16; ++j) y[i].scales[j] = (uint8_t)qz_nearest_int(iscale * scales[j]);
            y[i].d = qz_f2h(max_scale / 15.f);
        } else {
            for (int j = 0; j < QK_K / 16; ++j) y[i].scales[j] = 0;
            y[i].d = qz_f2h(0.f);
        }
        if (max_min > 0) {
            const float iscale = 15.f / max_min;
            for (int j = 0; j < QK_K / 16; ++j)
                y[i].scales[j] |= (uint8_t)(qz_nearest_int(iscale * mins[j]) << 4);
            y[i].dmin = qz_f2h(max_min / 15.f);
        } else {
            y[i].dmin = qz_f2h(0.f);
        }
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = qk_h2f(y[i].d) * (y[i].scales[j] & 0xF);
            if (!d) continue;
            const float dm = qk_h2f(y[i].dmin) * (y[i].scales[j] >> 4);
            for (int ii = 0; ii < 16; ++ii)
                L[16 * j + ii] = (uint8_t)qk_clampi(qz_nearest_int((x[16 * j + ii] + dm) / d), 0, 3);
        }
        qk_pack2(L, y[i].qs);
    }
}

static void quantize_row_q3_K(const float * x, void * vy, int64_t k) {
    block_q3_K * y = (block_q3_K *)vy;
    const int64_t nb = k / QK_K;
    int8_t L[QK_K];
    float scales[QK_K / 16];
    for (int64_t i = 0; i < nb; ++i, x += QK_K) {
        float max_scale = 0, amax = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            scales[j] = qk_fit_sym_q3(16, 4, x + 16 * j, L + 16 * j);
            const float a = fabsf(scales[j]);
            if (a > amax) { amax = a; max_scale = scales[j]; }
        }
        memset(y[i].scales, 0, 12);
        if (max_scale) {
            const float iscale = -32.f / max_scale;
            for (int j = 0; j < QK_K / 16; ++j) {
                int8_t l = (int8_t)qz_nearest_int(iscale * scales[j]);
                l = (int8_t)(qk_clampi(l, -32, 31) + 32);          /* 6 bits: 0..63 */
                if (j < 8) y[i].scales[j] = (uint8_t)(l & 0xF);
                else y[i].scales[j - 8] |= (uint8_t)((l & 0xF) << 4);
                y[i].scales[j % 4 + 8] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
            }
            y[i].d = qz_f2h(1 / iscale);
        } else {
            y[i].d = qz_f2h(0.f);
        }
        for (int j = 0; j < QK_K / 16; ++j) {
            int8_t sc = (int8_t)(j < 8 ? y[i].scales[j] & 0xF : y[i].scales[j - 8] >> 4);
            sc = (int8_t)((sc | (((y[i].scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32);
            const float d = qk_h2f(y[i].d) * sc;
            if (!d) continue;
            for (int ii = 0; ii < 16; ++ii)
                L[16 * j + ii] = (int8_t)(qk_clampi(qz_nearest_int(x[16 * j + ii] / d), -4, 3) + 4);
        }
        /* high bit of level j goes to bit j/32 of hmask[j%32] */
        memset(y[i].hmask, 0, QK_K / 8);
        for (int j = 0; j < QK_K; ++j) {
            if (L[j] > 3) {
                y[i].hmask[j % 32] |= (uint8_t)(1u << (j / 32));
                L[j] = (int8_t)(L[j] - 4);
            }
        }
        qk_pack2((const uint8_t *)L, y[i].qs);
    }
}

/* Q4_K/Q5_K: eight 6-bit scales and mins in 12 bytes (ggml's get_scale_min_k4 layout) */
static inline void qk_put_scale_min(uint8_t * s, int j, uint8_t ls, uint8_t lm) {
    if (j < 4) {
        s[j] = ls;
        s[j + 4] = lm;
    } else {
        s[j + 4] = (uint8_t)((ls & 0xF) | ((lm & 0xF) << 4));
        s[j - 4] |= (uint8_t)((ls >> 4) << 6);
        s[j] |= (uint8_t)((lm >> 4) << 6);
    }
}

static inline void qk_get_scale_min(const uint8_t * s, int j, uint8_t * sc, uint8_t * m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (uint8_t)((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
        *m = (uint8_t)((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
    }
}

/* The shared part of Q4_K (nmax 15) and Q5_K (nmax 31): levels in L, scales, d, dmin. */
static inline void qk_q45_block(const float * x, int nmax, float rmin, int nstep, uint8_t * L,
                                uint8_t * sc12, uint16_t * pd, uint16_t * pdmin) {
    float w[32], mins[QK_K / 32], scales[QK_K / 32];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < QK_K / 32; ++j) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av_x = sqrtf(sum_x2 / 32);
        for (int l = 0; l < 32; ++l) w[l] = av_x + fabsf(x[32 * j + l]);
        scales[j] = qk_fit_scale_min(32, nmax, x + 32 * j, w, L + 32 * j, &mins[j],
                                     rmin, 0.1f, nstep, 0);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    for (int j = 0; j < QK_K / 32; ++j) {
        uint8_t ls = (uint8_t)qz_nearest_int(inv_scale * scales[j]);
        uint8_t lm = (uint8_t)qz_nearest_int(inv_min * mins[j]);
        qk_put_scale_min(sc12, j, ls < 63 ? ls : 63, lm < 63 ? lm : 63);
    }
    *pd = qz_f2h(max_scale / 63.f);
    *pdmin = qz_f2h(max_min / 63.f);
    for (int j = 0; j < QK_K / 32; ++j) {
        uint8_t sc, m;
        qk_get_scale_min(sc12, j, &sc, &m);
        const float d = qk_h2f(*pd) * sc;
        if (!d) continue;
        const float dm = qk_h2f(*pdmin) * m;
        for (int ii = 0; ii < 32; ++ii)
            L[32 * j + ii] = (uint8_t)qk_clampi(qz_nearest_int((x[32 * j + ii] + dm) / d), 0, nmax);
    }
}

static void quantize_row_q4_K(const float * x, void * vy, int64_t k) {
    block_q4_K * y = (block_q4_K *)vy;
    const int64_t nb = k / QK_K;
    uint8_t L[QK_K];
    for (int64_t i = 0; i < nb; ++i, x += QK_K) {
        memset(y[i].scales, 0, K_SCALE_SIZE);
        qk_q45_block(x, 15, -1.f, 20, L, y[i].scales, &y[i].d, &y[i].dmin);
        for (int j = 0; j < QK_K / 64; ++j)
            for (int l = 0; l < 32; ++l)
                y[i].qs[32 * j + l] = (uint8_t)(L[64 * j + l] | (L[64 * j + l + 32] << 4));
    }
}

static void quantize_row_q5_K(const float * x, void * vy, int64_t k) {
    block_q5_K * y = (block_q5_K *)vy;
    const int64_t nb = k / QK_K;
    uint8_t L[QK_K];
    for (int64_t i = 0; i < nb; ++i, x += QK_K) {
        memset(y[i].scales, 0, K_SCALE_SIZE);
        qk_q45_block(x, 31, -0.5f, 15, L, y[i].scales, &y[i].d, &y[i].dmin);
        /* 64 values per 32 bytes of qs; their fifth bits go to bits 2c and 2c+1 of qh */
        memset(y[i].qh, 0, QK_K / 8);
        for (int c = 0; c < QK_K / 64; ++c)
            for (int j = 0; j < 32; ++j) {
                int l1 = L[64 * c + j], l2 = L[64 * c + j + 32];
                if (l1 > 15) { l1 -= 16; y[i].qh[j] |= (uint8_t)(1u << (2 * c)); }
                if (l2 > 15) { l2 -= 16; y[i].qh[j] |= (uint8_t)(2u << (2 * c)); }
                y[i].qs[32 * c + j] = (uint8_t)(l1 | (l2 << 4));
            }
    }
}

static void quantize_row_q6_K(const float * x, void * vy, int64_t k) {
    block_q6_K * y = (block_q6_K *)vy;
    const int64_t nb = k / QK_K;
    int8_t L[QK_K];
    float scales[QK_K / 16];
    for (int64_t i = 0; i < nb; ++i, x += QK_K) {
        float max_scale = 0, max_abs = 0;
        for (int ib = 0; ib < QK_K / 16; ++ib) {
            scales[ib] = qk_fit_sym_q6(16, 32, x + 16 * ib, L + 16 * ib);
            const float a = fabsf(scales[ib]);
            if (a > max_abs) { max_abs = a; max_scale = scales[ib]; }
        }
        if (max_abs < QK_GROUP_EPS) {
            memset(&y[i], 0, sizeof(block_q6_K));
            y[i].d = qz_f2h(0.f);
            continue;
        }
        const float iscale = -128.f / max_scale;
        y[i].d = qz_f2h(1 / iscale);
        for (int ib = 0; ib < QK_K / 16; ++ib) {
            const int v = qz_nearest_int(iscale * scales[ib]);
            y[i].scales[ib] = (int8_t)(v < 127 ? v : 127);
        }
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = qk_h2f(y[i].d) * y[i].scales[j];
            if (!d) continue;
            for (int ii = 0; ii < 16; ++ii)
                L[16 * j + ii] = (int8_t)(qk_clampi(qz_nearest_int(x[16 * j + ii] / d), -32, 31) + 32);
        }
        /* per 128 values: low nibbles of j and j+64 share ql[j], j+32 and j+96 share
         * ql[j+32]; the four high 2-bit pairs share qh[j] */
        for (int h = 0; h < QK_K / 128; ++h) {
            const int8_t * Lh = L + 128 * h;
            uint8_t * ql = y[i].ql + 64 * h;
            uint8_t * qh = y[i].qh + 32 * h;
            for (int l = 0; l < 32; ++l) {
                ql[l] = (uint8_t)((Lh[l] & 0xF) | ((Lh[l + 64] & 0xF) << 4));
                ql[l + 32] = (uint8_t)((Lh[l + 32] & 0xF) | ((Lh[l + 96] & 0xF) << 4));
                qh[l] = (uint8_t)((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) |
                                  ((Lh[l + 64] >> 4) << 4) | ((Lh[l + 96] >> 4) << 6));
            }
        }
    }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

#endif
