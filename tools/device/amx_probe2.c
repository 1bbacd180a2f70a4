/* Developer probe (not shipped), round 2: ggml_cy/cpu/csrc/mul_mat_amx.h on the Xeon host:
 * correctness (float64 reference of the bf16-rounded operands), the bit promises (a row of b
 * alone = inside a batch; any split of the work), and speed at 16 and 2 threads.
 * Build: gcc -O3 -march=x86-64-v4 -fopenmp -I ggml_cy/cpu/csrc amx_probe2.c -lm */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef MMX_EMU_H
#include MMX_EMU_H
#endif
#include "mul_mat_amx.h"

static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + 1e-9 * ts.tv_nsec; }
static uint16_t f2bf(float f) { uint32_t u; memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); }
static float bf2f(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }

static void *works[64];

/* split: gm parts of M (multiples of 32) x gn parts of N */
static void run(const uint16_t *a, int64_t M, const float *b, int64_t N, int64_t K, float *d, int gm, int gn) {
    const int64_t ms = ((M + gm - 1) / gm + 31) / 32 * 32, ns = (N + gn - 1) / gn;
    #pragma omp parallel for schedule(static) collapse(2)
    for (int i = 0; i < gm; i++) for (int j = 0; j < gn; j++) {
        const int64_t m0 = i * ms, n0 = j * ns;
        if (m0 >= M || n0 >= N) continue;
        const int64_t mm = M - m0 < ms ? M - m0 : ms, nn = N - n0 < ns ? N - n0 : ns;
        mmx_gemm((const char *)(a + m0 * K), K * 2, mm, (const char *)(b + n0 * K), K * 4, nn, K,
                 d + n0 * M + m0, M, works[omp_get_thread_num()], 0, 1);
    }
}

static void grid(int64_t M, int64_t N, int64_t K, int nth, int *gm, int *gn) {
    int64_t a, b;
    mmx_grid(M, N, K, 1, nth, &a, &b);   /* the package's choice */
    *gm = (int)a; *gn = (int)b;
}

static int test_shape(int64_t M, int64_t N, int64_t K) {
    uint16_t *a = malloc(M * K * 2); float *b = malloc(N * K * 4), *d = malloc(M * N * 4), *d2 = malloc(M * N * 4);
    for (int64_t i = 0; i < M * K; i++) a[i] = f2bf((float)rand() / RAND_MAX - 0.5f);
    for (int64_t i = 0; i < N * K; i++) b[i] = (float)rand() / RAND_MAX - 0.5f;
    run(a, M, b, N, K, d, 1, 1);
    double maxrel = 0;
    for (int64_t n = 0; n < N; n++) for (int64_t m = 0; m < M; m++) {
        double ref = 0, mag = 0;
        for (int64_t k = 0; k < K; k++) { double p = (double)bf2f(a[m * K + k]) * bf2f(f2bf(b[n * K + k])); ref += p; mag += fabs(p); }
        double rel = fabs(d[n * M + m] - ref) / (mag + 1e-30);
        if (rel > maxrel) maxrel = rel;
    }
    int bad = 0;
    /* any split: same bits */
    for (int s = 0; s < 3; s++) {
        int gm = (int[]){3, 2, 5}[s], gn = (int[]){2, 7, 1}[s];
        run(a, M, b, N, K, d2, gm, gn);
        if (memcmp(d, d2, M * N * 4)) bad |= 1;
    }
    /* each row of b alone */
    for (int64_t n = 0; n < N; n += (N > 5 ? N / 5 : 1)) {
        run(a, M, b + n * K, 1, K, d2, 2, 1);
        if (memcmp(d + n * M, d2, M * 4)) bad |= 2;
    }
    printf("  M=%ld N=%ld K=%ld: max err/sum|terms| %.2g, same bits any split %s, row alone %s\n", (long)M, (long)N, (long)K,
           maxrel, bad & 1 ? "NO" : "yes", bad & 2 ? "NO" : "yes");
    free(a); free(b); free(d); free(d2);
    return maxrel < 1e-6 && !bad;
}

static void speed(int64_t M, int64_t N, int64_t K, int reps) {
    /* PROBE_A_OFFSET bytes past a 64-byte boundary: the weights' alignment in an arena */
    const int off = getenv("PROBE_A_OFFSET") ? atoi(getenv("PROBE_A_OFFSET")) : 0;
    char *abase = aligned_alloc(64, M * K * 2 + 64);
    uint16_t *a = (uint16_t *)(abase + off); float *b = aligned_alloc(64, N * K * 4), *d = aligned_alloc(64, M * N * 4);
    for (int64_t i = 0; i < M * K; i++) a[i] = f2bf((float)rand() / RAND_MAX - 0.5f);
    for (int64_t i = 0; i < N * K; i++) b[i] = (float)rand() / RAND_MAX - 0.5f;
    int nth = omp_get_max_threads(), gm, gn; grid(M, N, K, nth, &gm, &gn);
    double ts[64];
    for (int r = 0; r < reps; r++) { double t0 = now(); run(a, M, b, N, K, d, gm, gn); ts[r] = now() - t0; }
    for (int i = 0; i < reps; i++) for (int j = i + 1; j < reps; j++) if (ts[j] < ts[i]) { double t = ts[i]; ts[i] = ts[j]; ts[j] = t; }
    printf("[KS=%d PF=%d off=%d] mmx %ldx%ldx%ld threads=%d grid %dx%d: median %.1f us = %.0f GFLOP/s (min %.1f us)\n", MMX_KS, MMX_PF, off, (long)M, (long)K, (long)N,
           nth, gm, gn, ts[reps / 2] * 1e6, 2.0 * M * N * K / ts[reps / 2] * 1e-9, ts[0] * 1e6);
    free(abase); free(b); free(d);
}

int main(void) {
#ifndef MMX_EMU
    printf("mmx_ready = %d\n", mmx_ready());
    if (!mmx_ready()) return 1;
#endif
    for (int i = 0; i < 64; i++) works[i] = aligned_alloc(64, (mmx_work_bytes() + 63) / 64 * 64);
    int ok = 1;
    if (getenv("PROBE_SPEED_ONLY")) goto speed_only;
    int64_t shapes[][3] = {{64, 64, 96}, {37, 5, 33}, {33, 40, 1000}, {70, 3, 4100}, {16, 17, 31}, {100, 130, 2050}, {1, 1, 1}};
    for (int s = 0; s < 7; s++) ok &= test_shape(shapes[s][0], shapes[s][1], shapes[s][2]);
    {   /* the weights in place (64-byte aligned rows) and copied (rows 16 bytes off) */
        const int64_t M = 96, N = 40, K = 1536;
        char *al = aligned_alloc(64, M * K * 2 + 64);
        uint16_t *a0 = (uint16_t *)al, *a1 = (uint16_t *)(al + 16);
        float *b = malloc(N * K * 4), *d0 = malloc(M * N * 4), *d1 = malloc(M * N * 4);
        for (int64_t i = 0; i < M * K; i++) a0[i] = f2bf((float)rand() / RAND_MAX - 0.5f);
        for (int64_t i = 0; i < N * K; i++) b[i] = (float)rand() / RAND_MAX - 0.5f;
        run(a0, M, b, N, K, d0, 2, 2);
        memmove(a1, a0, M * K * 2);
        run(a1, M, b, N, K, d1, 3, 1);
        const int same = !memcmp(d0, d1, M * N * 4);
        printf("  in place vs copied panel: same bits %s\n", same ? "yes" : "NO");
        ok &= same;
        free(al); free(b); free(d0); free(d1);
    }
    printf("correctness: %s\n", ok ? "PASS" : "FAIL");
#ifdef MMX_EMU
    return !ok;
#endif
speed_only:
    speed(1024, 1024, 1024, 15);
    speed(4096, 64, 4096, 15);
    speed(4096, 1, 4096, 15);
    return 0;
}
