/* Developer probe (not shipped): can ggml_cy use Intel AMX for BF16 mul_mat on the GPU
 * machine's Xeon host, and how fast is it against the AVX-512 FMA/VDPBF16PS rates?
 *   - CPUID flags (AMX-TILE/BF16/INT8, AVX512_BF16) and the Linux permission request
 *     (arch_prctl ARCH_REQ_XCOMP_PERM for XTILEDATA, needed before the first tile op);
 *   - a BF16 GEMM with ggml's rule (b rounded to bf16): A operand = rows of a read in place
 *     (16 rows x 32 bf16 per tile), B operand = b converted once into the pair-interleaved
 *     ("VNNI") layout, 2x2 C tiles per step, C[m][n] transposed into dst[n][m];
 *   - correctness against a float64 reference of the same rounded operands, and whether the
 *     tile unit's sums equal a pair-by-pair FMA chain bit for bit;
 *   - throughput loops for VFMADD231PS and VDPBF16PS (zmm) on one core.
 * Build: gcc -O3 -march=native -mamx-tile -mamx-bf16 -fopenmp amx_probe.c -o amx_probe */
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cpuid.h>

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static uint16_t f2bf(float f) {  /* round to nearest even, NaN made quiet */
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static float bf2f(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

typedef struct {
    uint8_t palette, start_row, pad[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tilecfg;

static void tile_config(void) {
    tilecfg c;
    memset(&c, 0, sizeof c);
    c.palette = 1;
    for (int t = 0; t < 8; t++) { c.colsb[t] = 64; c.rows[t] = 16; }
    _tile_loadconfig(&c);
}

/* b (N x K f32) -> bv: for each 16-column block nb and pair p, 16 dwords (b[n][2p], b[n][2p+1]
 * as bf16), zero for columns past N. K must be even here. */
static void pack_b(const float * b, int64_t N, int64_t K, uint32_t * bv) {
    const int64_t KP = K / 2, NB = (N + 15) / 16;
    #pragma omp parallel for schedule(static)
    for (int64_t nb = 0; nb < NB; nb++)
        for (int64_t p = 0; p < KP; p++)
            for (int j = 0; j < 16; j++) {
                const int64_t n = nb * 16 + j;
                uint32_t v = 0;
                if (n < N) v = (uint32_t)f2bf(b[n * K + 2 * p]) | ((uint32_t)f2bf(b[n * K + 2 * p + 1]) << 16);
                bv[(nb * KP + p) * 16 + j] = v;
            }
}

/* dst[n][m] for m in [m0, m0+32), n in [n0, n0+32) (both full); a: M x K bf16 row-major. */
static inline void tile_block(const uint16_t * a, int64_t K, const uint32_t * bv, int64_t m0,
                              int64_t n0, float * dst, int64_t M) {
    const int64_t KP = K / 2;
    const uint32_t * b0 = bv + (n0 / 16) * KP * 16, * b1 = b0 + KP * 16;
    const uint16_t * a0 = a + m0 * K, * a1 = a0 + 16 * K;
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    for (int64_t k = 0; k < K; k += 32) {
        _tile_loadd(4, a0 + k, K * 2);
        _tile_loadd(5, a1 + k, K * 2);
        _tile_loadd(6, b0 + (k / 2) * 16, 64);
        _tile_loadd(7, b1 + (k / 2) * 16, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    float c[4][16][16];
    _tile_stored(0, c[0], 64); _tile_stored(1, c[1], 64);
    _tile_stored(2, c[2], 64); _tile_stored(3, c[3], 64);
    for (int q = 0; q < 4; q++) {
        const int64_t mo = m0 + (q >> 1) * 16, no = n0 + (q & 1) * 16;
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 16; j++) dst[(no + j) * M + mo + i] = c[q][i][j];
    }
}

/* One column block only (N <= 16: mat-vec): 2 rows of C tiles along m, 1 along n. */
static inline void tile_block_n16(const uint16_t * a, int64_t K, const uint32_t * bv, int64_t m0,
                                  float * dst, int64_t M, int64_t N) {
    const uint16_t * a0 = a + m0 * K, * a1 = a0 + 16 * K;
    _tile_zero(0); _tile_zero(2);
    for (int64_t k = 0; k < K; k += 32) {
        _tile_loadd(4, a0 + k, K * 2);
        _tile_loadd(5, a1 + k, K * 2);
        _tile_loadd(6, bv + (k / 2) * 16, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(2, 5, 6);
    }
    float c[2][16][16];
    _tile_stored(0, c[0], 64); _tile_stored(2, c[1], 64);
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < N; j++) dst[j * M + m0 + q * 16 + i] = c[q][i][j];
}

static void gemm_amx(const uint16_t * a, const uint32_t * bv, float * dst, int64_t M, int64_t N,
                     int64_t K) {
    const int64_t MB = M / 32, NB = N / 32;
    #pragma omp parallel
    {
        tile_config();
        if (N <= 16) {
            #pragma omp for schedule(static)
            for (int64_t mb = 0; mb < MB; mb++) tile_block_n16(a, K, bv, mb * 32, dst, M, N);
        } else {
            /* tasks: m blocks outer (a rows stay in L2 while b's blocks pass) */
            #pragma omp for schedule(static) collapse(2)
            for (int64_t mb = 0; mb < MB; mb++)
                for (int64_t nb = 0; nb < NB; nb++) tile_block(a, K, bv, mb * 32, nb * 32, dst, M);
        }
        _tile_release();
    }
}

static int check(const uint16_t * a, const float * b, const float * dst, int64_t M, int64_t N,
                 int64_t K, int samples) {
    double maxrel = 0;
    int seq_equal = 0, tried = 0;
    for (int s = 0; s < samples; s++) {
        const int64_t m = (s * 7919) % M, n = (s * 104729) % N;
        double ref = 0, mag = 0;
        float seq = 0.0f;
        for (int64_t k = 0; k < K; k += 2) {
            const float x0 = bf2f(a[m * K + k]), y0 = bf2f(f2bf(b[n * K + k]));
            const float x1 = bf2f(a[m * K + k + 1]), y1 = bf2f(f2bf(b[n * K + k + 1]));
            ref += (double)x0 * y0 + (double)x1 * y1;
            mag += fabs((double)x0 * y0) + fabs((double)x1 * y1);
            seq = fmaf(x0, y0, seq);
            seq = fmaf(x1, y1, seq);
        }
        const double got = dst[n * M + m];
        const double rel = fabs(got - ref) / (mag + 1e-30);
        if (rel > maxrel) maxrel = rel;
        tried++;
        if (seq == (float)got) seq_equal++;
    }
    printf("  check: %d samples, max |err|/sum|terms| = %.3g (f32 eps 6e-8), equal to a pairwise "
           "FMA chain: %d/%d\n", tried, maxrel, seq_equal, tried);
    return maxrel < 1e-5;
}

static void run_shape(int64_t M, int64_t N, int64_t K, int reps) {
    uint16_t * a = aligned_alloc(64, (size_t)M * K * 2);
    float * b = aligned_alloc(64, (size_t)N * K * 4);
    const int64_t NBp = (N + 15) / 16;
    uint32_t * bv = aligned_alloc(64, (size_t)NBp * 16 * (K / 2) * 4 + 64);
    float * dst = aligned_alloc(64, (size_t)M * N * 4);
    srand(1);
    for (int64_t i = 0; i < M * K; i++) a[i] = f2bf((float)rand() / RAND_MAX - 0.5f);
    for (int64_t i = 0; i < N * K; i++) b[i] = (float)rand() / RAND_MAX - 0.5f;
    double best_pack = 1e9, best_mm = 1e9;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        pack_b(b, N, K, bv);
        double t1 = now();
        gemm_amx(a, bv, dst, M, N, K);
        double t2 = now();
        if (t1 - t0 < best_pack) best_pack = t1 - t0;
        if (t2 - t1 < best_mm) best_mm = t2 - t1;
    }
    const double fl = 2.0 * M * N * K;
    printf("AMX %ldx%ldx%ld threads=%d: pack b %.1f us, tiles %.1f us, total %.1f us = %.0f GFLOP/s "
           "(tiles alone %.0f)\n", (long)M, (long)K, (long)N, omp_get_max_threads(), best_pack * 1e6,
           best_mm * 1e6, (best_pack + best_mm) * 1e6, fl / (best_pack + best_mm) * 1e-9,
           fl / best_mm * 1e-9);
    check(a, b, dst, M, N, K, 400);
    free(a); free(b); free(bv); free(dst);
}

static void ubench(void) {
    const long iters = 20000000;
    __m512 acc[12];
    for (int i = 0; i < 12; i++) acc[i] = _mm512_set1_ps(0.0f);
    __m512 x = _mm512_set1_ps(1e-8f), y = _mm512_set1_ps(1e-8f);
    double t0 = now();
    for (long it = 0; it < iters; it++) {
        for (int i = 0; i < 12; i++) acc[i] = _mm512_fmadd_ps(x, y, acc[i]);
        __asm__ volatile("" : "+v"(x));
    }
    double t1 = now();
    float s = 0;
    for (int i = 0; i < 12; i++) s += _mm512_reduce_add_ps(acc[i]);
    printf("one core: vfmadd231ps zmm %.2f per ns (%.1f GFLOP/s)", 12.0 * iters / (t1 - t0) * 1e-9,
           12.0 * iters * 32 / (t1 - t0) * 1e-9);
#if defined(__AVX512BF16__)
    __m512bh xb = (__m512bh)_mm512_set1_epi16(0x3f80), yb = xb;
    for (int i = 0; i < 12; i++) acc[i] = _mm512_set1_ps(0.0f);
    t0 = now();
    for (long it = 0; it < iters; it++) {
        for (int i = 0; i < 12; i++) acc[i] = _mm512_dpbf16_ps(acc[i], xb, yb);
        __asm__ volatile("" : "+v"(xb));
    }
    t1 = now();
    for (int i = 0; i < 12; i++) s += _mm512_reduce_add_ps(acc[i]);
    printf("; vdpbf16ps zmm %.2f per ns (%.1f GFLOP/s)", 12.0 * iters / (t1 - t0) * 1e-9,
           12.0 * iters * 64 / (t1 - t0) * 1e-9);
#endif
    printf("  [%g]\n", (double)s);
}

int main(int argc, char ** argv) {
    unsigned int ea, eb, ec, ed;
    __cpuid_count(7, 0, ea, eb, ec, ed);
    printf("cpuid7.0: amx_bf16=%u amx_tile=%u amx_int8=%u; ", (ed >> 22) & 1, (ed >> 24) & 1,
           (ed >> 25) & 1);
    __cpuid_count(7, 1, ea, eb, ec, ed);
    printf("avx512_bf16=%u\n", (ea >> 5) & 1);
    long rc = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA);
    printf("arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) = %ld\n", rc);
    if (rc != 0) return 1;
    ubench();
    const int reps = argc > 1 ? atoi(argv[1]) : 7;
    run_shape(64, 64, 96, 3);
    run_shape(1024, 1024, 1024, reps);
    run_shape(4096, 64, 4096, reps);
    run_shape(4096, 1, 4096, reps);
    return 0;
}
