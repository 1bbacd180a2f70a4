/* Developer tool (not shipped): float32 -> float16 row variants as a shared library, so a
 * Python probe can time them on the arrays it hands ggml_cy and torch
 * (tools/device/cvt_probe.py):
 *   gcc -O3 -march=x86-64-v4 -fopenmp -fPIC -shared -Iggml_cy/cpu/csrc bench/csrc/cvt_lib.c -o /tmp/cvt_lib.so
 * gcy_probe_f2h(dst, src, n, nth, reps, variant): seconds per call over reps calls, OpenMP
 * static halves; variant 0: kern_f2h_row as in the tree (16 lanes on x86-64-v4 since
 * 2026-11-27, 8 before); 1: 16 lanes, float compares for the underflow check; 2: 1 with a
 * software prefetch 1 KiB ahead; 3: 1 unrolled to 32 lanes; 4: kern_f2h_row_nt (as in the
 * tree); 5: 16 lanes, no check (the bound). */
#include <omp.h>
#include <time.h>
#include "kernels_convert.h"

static inline __m256i f2h16(const float * s) {
    const __m512 x = _mm512_loadu_ps(s);
    const __m256i h = _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT);
    const __m512 ax = _mm512_abs_ps(x);
    const __mmask16 t = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(6.103515625e-05f), _CMP_LT_OQ)
                      & _mm512_cmp_ps_mask(ax, _mm512_setzero_ps(), _CMP_NEQ_OQ);
    if (__builtin_expect(t != 0, 0)) {
        uint16_t hs[16];
        _mm256_storeu_si256((__m256i *)hs, h);
        for (int j = 0; j < 16; j++) kern_f2h_underflow_check(s[j], hs[j]);
    }
    return h;
}

static void row(int v, const float * s, uint16_t * d, long n) {
    long i = 0;
    switch (v) {
    case 0: kern_f2h_row(s, d, n); return;
    case 4: kern_f2h_row_nt(s, d, n); return;
    case 1: for (; i + 16 <= n; i += 16) _mm256_storeu_si256((__m256i *)(d + i), f2h16(s + i)); break;
    case 2:
        for (; i + 16 <= n; i += 16) {
            _mm_prefetch((const char *)(s + i) + 1024, _MM_HINT_T0);
            _mm256_storeu_si256((__m256i *)(d + i), f2h16(s + i));
        }
        break;
    case 3:
        for (; i + 32 <= n; i += 32) {
            const __m256i h0 = f2h16(s + i), h1 = f2h16(s + i + 16);
            _mm256_storeu_si256((__m256i *)(d + i), h0);
            _mm256_storeu_si256((__m256i *)(d + i + 16), h1);
        }
        break;
    case 5:
        for (; i + 16 <= n; i += 16)
            _mm256_storeu_si256((__m256i *)(d + i),
                                _mm512_cvtps_ph(_mm512_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
        break;
    }
    for (; i < n; i++) d[i] = kern_f2h(s[i]);
}

double gcy_probe_f2h(uint16_t * d, const float * s, long n, int nth, int reps, int v) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int r = 0; r < reps; r++) {
#pragma omp parallel num_threads(nth)
        {
            const int t = omp_get_thread_num(), k = omp_get_num_threads();
            const long lo = n * t / k / 64 * 64, hi = t == k - 1 ? n : n * (t + 1) / k / 64 * 64;
            row(v, s + lo, d + lo, hi - lo);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9) / reps;
}
