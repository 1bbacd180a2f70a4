/* Developer check (not shipped): the AMX engine's addressing (mul_mat_amx.h) on a CPU without
 * AMX. The tile instructions are replaced by a plain-C model (8 tiles of 16 rows x 64 bytes;
 * TDPBF16PS as 16 x 16 f32 sums of bf16 pair products), so what runs is mmx_gemm's own loops:
 * the b panels, the K blocks and sub-blocks, the zero-padded tails and the copies of
 * misaligned a. For each shape the result must be near a float64 product, and the same bits
 * with a and dst 16, 32 or 48 bytes past a line as aligned; the last line is a hash of every
 * result, which builds of other panel sizes (-DMMX_NX=..., -DMMX_PANEL_ELEMS=...) must
 * print alike (the K blocks and panels change no bit). Under -fsanitize=address a write past
 * the scratch (mmx_work_bytes) or dst fails.
 *   gcc -O1 -g -march=x86-64-v4 -fsanitize=address,undefined -Iggml_cy/cpu/csrc \
 *       -Iggml_cy/core/csrc tools/amx_emu_check.c -o /tmp/amx_emu -lm && /tmp/amx_emu
 * Prints one line per shape, then "ok CASES hash H"; exits 1 on the first difference. */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t emu_tile[8][16 * 64];
static void emu_load(int t, const void * base, long stride) {
    for (int r = 0; r < 16; r++) memcpy(emu_tile[t] + r * 64, (const char *)base + r * stride, 64);
}
static void emu_store(int t, void * base, long stride) {
    for (int r = 0; r < 16; r++) memcpy((char *)base + r * stride, emu_tile[t] + r * 64, 64);
}
static float emu_bf16(uint16_t h) {
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static void emu_dp(int c, int a, int b) {
    float * cf = (float *)emu_tile[c];
    const uint16_t * av = (const uint16_t *)emu_tile[a];
    const uint16_t * bv = (const uint16_t *)emu_tile[b];
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 16; n++) {
            float s = cf[m * 16 + n];
            for (int p = 0; p < 16; p++)
                s += emu_bf16(av[m * 32 + 2 * p]) * emu_bf16(bv[p * 32 + 2 * n]) +
                     emu_bf16(av[m * 32 + 2 * p + 1]) * emu_bf16(bv[p * 32 + 2 * n + 1]);
            cf[m * 16 + n] = s;
        }
}
#undef _tile_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbf16ps
#define _tile_loadd(t, base, stride) emu_load(t, base, stride)
#define _tile_stored(t, base, stride) emu_store(t, base, stride)
#define _tile_zero(t) memset(emu_tile[t], 0, sizeof emu_tile[t])
#define _tile_dpbf16ps(c, a, b) emu_dp(c, a, b)
#define _tile_loadconfig(cfg) ((void)(cfg))
#define _tile_release() ((void)0)

#include "mul_mat.h"

#if !defined(MMX_BUILT)
int main(void) { puts("no AMX engine in this build"); return 0; }
#else
static uint16_t to_bf16(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

/* dst = a (bf16, M x K) x b^T (f32, N x K), a and dst `off` bytes past a 64-byte line. */
static float * run(const uint16_t * a0, int64_t M, int64_t K, const float * b, int64_t N,
                   size_t off) {
    char * araw = aligned_alloc(64, ((size_t)M * K * 2 + 64 + 63) / 64 * 64);
    char * a = araw + off;
    memcpy(a, a0, (size_t)M * K * 2);
    char * draw = aligned_alloc(64, ((size_t)M * N * 4 + 64 + 63) / 64 * 64);
    float * d = (float *)(draw + off);
    void * work = aligned_alloc(64, (mmx_work_bytes() + 63) / 64 * 64);
    mmx_gemm(a, K * 2, M, (const char *)b, K * 4, N, K, d, M, work, 0, 1);
    float * out = malloc((size_t)M * N * 4);
    memcpy(out, d, (size_t)M * N * 4);
    free(araw); free(draw); free(work);
    return out;
}

int main(void) {
    const int64_t Ms[] = {32, 64, 70, 96};
    const int64_t Ks[] = {32, 100, 600, 2100, 4100};
    const int64_t Ns[] = {1, 40, 129, 300, 600};
    const size_t offs[] = {16, 32, 48};
    int cases = 0;
    uint64_t hash = 1469598103934665603ull;
    for (size_t im = 0; im < sizeof Ms / sizeof *Ms; im++)
        for (size_t ik = 0; ik < sizeof Ks / sizeof *Ks; ik++)
            for (size_t in = 0; in < sizeof Ns / sizeof *Ns; in++) {
                const int64_t M = Ms[im], K = Ks[ik], N = Ns[in];
                uint16_t * a = malloc((size_t)M * K * 2);
                float * b = malloc((size_t)N * K * 4);
                srand((unsigned)(M * 131 + K * 7 + N));
                for (int64_t i = 0; i < M * K; i++)
                    a[i] = to_bf16((float)rand() / RAND_MAX - 0.5f);
                for (int64_t i = 0; i < N * K; i++) b[i] = (float)rand() / RAND_MAX - 0.5f;
                float * ref = run(a, M, K, b, N, 0);
                for (int64_t i = 0; i < M * N * 4; i++)
                    hash = (hash ^ ((const uint8_t *)ref)[i]) * 1099511628211ull;
                double worst = 0;
                for (int64_t n = 0; n < N; n++)
                    for (int64_t m = 0; m < M; m++) {
                        double s = 0;
                        for (int64_t k = 0; k < K; k++)
                            s += (double)emu_bf16(a[m * K + k]) * emu_bf16(to_bf16(b[n * K + k]));
                        const double e = fabs(s - ref[n * M + m]) / (1.0 + fabs(s));
                        if (e > worst) worst = e;
                    }
                if (worst > 1e-4) {
                    printf("FAIL M%ld K%ld N%ld: in place off the float64 product by %g\n",
                           (long)M, (long)K, (long)N, worst);
                    return 1;
                }
                for (size_t io = 0; io < sizeof offs / sizeof *offs; io++) {
                    float * got = run(a, M, K, b, N, offs[io]);
                    if (memcmp(got, ref, (size_t)M * N * 4)) {
                        printf("FAIL M%ld K%ld N%ld offset %zu: bits differ from aligned\n",
                               (long)M, (long)K, (long)N, offs[io]);
                        return 1;
                    }
                    free(got);
                    cases++;
                }
                printf("M%ld K%ld N%ld: same bits at offsets 16/32/48, max rel err %.2g\n",
                       (long)M, (long)K, (long)N, worst);
                free(ref); free(a); free(b);
            }
    printf("ok %d hash %016llx (MMX_NX %d, MMX_PANEL_ELEMS %d)\n", cases,
           (unsigned long long)hash, (int)MMX_NX, (int)MMX_PANEL_ELEMS);
    return 0;
}
#endif
