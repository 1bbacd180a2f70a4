/* Developer probe (not shipped): where a BF16-weight product on the AMX tiles spends its time
 * at many threads. For each thread's share of mmx_grid's tasks (the package's static split)
 * it times, in separate parallel regions, (full) the task itself (mmx_gemm, b converted per
 * task), (packb) only the conversion of the task's b rows into tile panels (mmx_pack_b, as
 * often as the task does it) and (copya) only the copies of misaligned a sub-blocks the task
 * makes; then the package's (static) mmx_compute and (dealt) mmx_compute_dealt whole. Prints
 * per mode the median wall time of a call and of its busiest and average thread.
 *   gcc -O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc \
 *       bench/csrc/mmx_parts.c -o /tmp/mmx_parts -lm
 *   [MMX_PARTS_OFFSET=16] [MMX_PARTS_GRID=GM,GN] /tmp/mmx_parts NTHREADS M N K
 * OFFSET: a, b and dst that many bytes past a cache line (context tensors are 16-byte
 * aligned; MMX_PARTS_OFFSET_C: dst alone at another); GRID: the grid of the full / packb / copya modes instead of mmx_grid's (static
 * and dealt keep the package's). Prints one JSON line per mode, with a hash of the result's bytes (builds with
 * another -DMMX_NX, or other loop variants, must print the same). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mul_mat.h"
#include "probe_clock.h"

#if !defined(MMX_BUILT)
int main(void) { puts("{\"error\": \"no AMX engine in this build\"}"); return 0; }
#else
static double median(double * v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

enum { FULL, PACKB, COPYA, STATIC, DEALT, NMODES };
static const char * const mode_name[NMODES] = {"full", "packb", "copya", "static", "dealt"};

/* One task in the chosen mode: the loops of mmx_gemm down to the part measured. */
static void task_mode(const ggml_tensor * d, const mm_tasks * g, int64_t t, int mode,
                      void * work, volatile uint32_t * sink, int nth) {
    if (mode == FULL) { mmx_task(d, g, t, work, NULL, nth); return; }
    const ggml_tensor * s0 = d->src[0], * s1 = d->src[1];
    const int64_t K = s0->ne[0];
    const mm_part p = mm_task_part(g, t);
    const char * a = (const char *)s0->data + p.m_lo * s0->nb[1];
    const char * b = (const char *)s1->data + p.n_lo * s1->nb[1];
    const int64_t M = p.m_hi - p.m_lo, N = p.n_hi - p.n_lo, lda = s0->nb[1];
    char * w = (char *)(((uintptr_t)work + 63) & ~(uintptr_t)63);
    const int64_t nx = mmx_panel_cols(N), kc = mmx_panel_k(nx);
    for (int64_t n0 = 0; n0 < N; n0 += nx) {
        const int64_t nn = N - n0 < nx ? N - n0 : nx;
        for (int64_t k0 = 0; k0 < K; k0 += kc) {
            const int64_t kb = K - k0 < kc ? K - k0 : kc;
            if (mode == PACKB) {
                mmx_pack_b(b + n0 * s1->nb[1], s1->nb[1], nn, k0, kb, (uint32_t *)w);
                *sink += ((uint32_t *)w)[0];
                continue;
            }
            for (int64_t m0 = 0; m0 + 32 <= M; m0 += 32)
                for (int64_t c0 = 0; c0 < kb / 32; c0 += MMX_KS / 32) {
                    const int64_t c1 = c0 + MMX_KS / 32 < kb / 32 ? c0 + MMX_KS / 32 : kb / 32;
                    const char * sap = a + m0 * lda + (k0 + c0 * 32) * 2;
                    if (nn >= MMX_COPY_MIN_N && (((uintptr_t)sap | (uintptr_t)lda) & 63)) {
                        for (int r = 0; r < 32; r++)
                            memcpy(w + (size_t)r * MMX_KS * 2, sap + r * lda, (size_t)(c1 - c0) * 64);
                        *sink += ((uint32_t *)w)[0];
                    }
                }
        }
    }
}

int main(int argc, char ** argv) {
    if (argc < 5) { fprintf(stderr, "usage: mmx_parts NTHREADS M N K\n"); return 2; }
    const int nth = atoi(argv[1]);
    const int64_t M = atol(argv[2]), N = atol(argv[3]), K = atol(argv[4]);
    if (!mm_bf16_amx()) { puts("{\"error\": \"no AMX tiles on this CPU\"}"); return 0; }
    const char * off_env = getenv("MMX_PARTS_OFFSET");
    const size_t off = off_env ? (size_t)atoi(off_env) % 64 / 16 * 16 : 0;
    char * a = (char *)aligned_alloc(64, ((size_t)(M * K * 2) + 127) / 64 * 64) + off;
    char * b = (char *)aligned_alloc(64, ((size_t)(N * K * 4) + 127) / 64 * 64) + off;
    const char * offc_env = getenv("MMX_PARTS_OFFSET_C");   /* dst alone at another offset */
    const size_t offc = offc_env ? (size_t)atoi(offc_env) % 64 / 16 * 16 : off;
    char * c = (char *)aligned_alloc(64, ((size_t)(M * N * 4) + 127) / 64 * 64) + offc;
    for (int64_t i = 0; i < M * K; i++) ((uint16_t *)a)[i] = (uint16_t)(0x3f80 + (i % 13));
    for (int64_t i = 0; i < N * K; i++) ((float *)b)[i] = (float)(i % 7) * 0.25f;
    memset(c, 0, (size_t)(M * N * 4));
    ggml_tensor s0, s1, d;
    memset(&s0, 0, sizeof s0); memset(&s1, 0, sizeof s1); memset(&d, 0, sizeof d);
    s0.type = GGML_TYPE_BF16; s0.ne[0] = K; s0.ne[1] = M; s0.ne[2] = s0.ne[3] = 1;
    s0.nb[0] = 2; s0.nb[1] = K * 2; s0.nb[2] = s0.nb[3] = M * K * 2; s0.data = a;
    s1.type = GGML_TYPE_F32; s1.ne[0] = K; s1.ne[1] = N; s1.ne[2] = s1.ne[3] = 1;
    s1.nb[0] = 4; s1.nb[1] = K * 4; s1.nb[2] = s1.nb[3] = N * K * 4; s1.data = b;
    d.type = GGML_TYPE_F32; d.ne[0] = M; d.ne[1] = N; d.ne[2] = d.ne[3] = 1;
    d.nb[0] = 4; d.nb[1] = M * 4; d.nb[2] = d.nb[3] = M * N * 4; d.data = c;
    d.src[0] = &s0; d.src[1] = &s1;
    int64_t gm, gn;
    mmx_grid(M, N, K, 1, nth, &gm, &gn);
    const char * grid_env = getenv("MMX_PARTS_GRID");
    if (grid_env) sscanf(grid_env, "%ld,%ld", (long *)&gm, (long *)&gn);
    const size_t wb = mm_work_floats_for(&d, nth) * 4 + 64;   /* the package's scratch */
    char * work = aligned_alloc(64, (wb + 63) / 64 * 64 * (size_t)nth);
    volatile uint32_t sink = 0;
    enum { REPS = 41 };
    static double wall[NMODES][REPS], busiest[NMODES][REPS], avg[NMODES][REPS];
    double tt[256];
    static int64_t ctrs[256 * MM_DEAL_STRIDE];
    uint64_t hash[NMODES] = {0};
    for (int r = 0; r < REPS; r++)
        for (int mode = 0; mode < NMODES; mode++) {   /* modes interleaved call by call */
            memset(c, 0, (size_t)(M * N * 4));
            memset(ctrs, 0, sizeof ctrs);
            const double t0 = now();
#pragma omp parallel num_threads(nth)
            {
                const int ith = omp_get_thread_num();
                const double st = now();
                float * w = (float *)(work + (wb + 63) / 64 * 64 * (size_t)ith);
                if (mode == STATIC) mmx_compute(&d, ith, nth, w);
                else if (mode == DEALT) mmx_compute_dealt(&d, ctrs, ith, nth, w);
                else {
                    const mm_tasks g = mm_tasks_of(&d, gm, gn, 32, 8, ith, nth);
                    for (int64_t t = g.t0; t < g.t1; t++) task_mode(&d, &g, t, mode, w, &sink, nth);
                }
                tt[ith & 255] = now() - st;
            }
            wall[mode][r] = now() - t0;
            double mx = 0, sum = 0;
            for (int i = 0; i < nth; i++) { mx = tt[i] > mx ? tt[i] : mx; sum += tt[i]; }
            busiest[mode][r] = mx;
            avg[mode][r] = sum / nth;
            if (r == REPS - 1 && (mode == FULL || mode == STATIC || mode == DEALT)) {
                uint64_t h = 1469598103934665603ull;   /* FNV-1a of dst: the modes must agree */
                for (int64_t i = 0; i < M * N * 4; i++) h = (h ^ (uint8_t)c[i]) * 1099511628211ull;
                hash[mode] = h;
            }
        }
    for (int mode = 0; mode < NMODES; mode++) {
        const double med = median(wall[mode], REPS);    /* sorts wall[mode] */
        printf("{\"mode\": \"%s\", \"M\": %ld, \"N\": %ld, \"K\": %ld, \"threads\": %d, "
               "\"offset\": %zu, \"offset_c\": %zu, \"panel_elems\": %d, \"grid\": \"%ld,%ld\", \"median_ms\": %.4f, "
               "\"busiest_ms\": %.4f, \"avg_thread_ms\": %.4f, \"min_ms\": %.4f, "
               "\"q1_ms\": %.4f, \"nx\": %d, "
               "\"dst_fnv\": \"%016llx\"}\n",
               mode_name[mode], (long)M, (long)N, (long)K, nth, off, offc,
               (int)MMX_PANEL_ELEMS, (long)gm, (long)gn,
               med * 1e3, median(busiest[mode], REPS) * 1e3,
               median(avg[mode], REPS) * 1e3, wall[mode][0] * 1e3,
               wall[mode][REPS / 4] * 1e3, MMX_NX, (unsigned long long)hash[mode]);
    }
    return (int)(sink & 0);
}
#endif
