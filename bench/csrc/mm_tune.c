/* Developer tool (not shipped): times ggml_cy's float mul_mat kernel (ggml_cy/cpu/csrc/
 * mul_mat.h) outside Python, so its blocking constants can be swept on a machine:
 *   gcc -O3 -march=x86-64-v4 -fopenmp -DMM_KC=256 -DMM_NC=512 -DMM_MC=192 \
 *       -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc bench/csrc/mm_tune.c -o /tmp/mm_tune -lm
 *   [MM_TUNE_TYPES=f32,f16] [MM_TUNE_THP=1] [MM_TUNE_OFFSET=16] [MM_TUNE_GRID=GM,GN]
 *   [MM_TUNE_DYN=1] /tmp/mm_tune NTHREADS [M N K ...]
 * Prints one JSON line per (shape, type): the best and median of the timed calls and the
 * GFLOP/s of the best, plus the largest error of 64 sampled outputs against a double sum,
 * and per call the busiest thread's and the average thread's time inside the kernel
 * (medians over the calls: their gap is the load imbalance).
 * MM_TUNE_GRID: the f32/f16 packed path with this grid instead of mm_grid's (M cut in GM
 * parts, N in GN); MM_TUNE_DYN=1: its tasks dealt one at a time from a shared counter
 * instead of the static ranges (whoever is free takes the next). MM_TUNE_NDEAL=1 / 2 / 3:
 * the package's entry through the counters (mm_compute_dealt; on 2..4 threads
 * mul_mat_ndeal.h's path) with mm_work_floats_for's scratch, its tasks always dealt / always
 * the timed static split / as the measured lag chooses. MM_TUNE_GV_LLC=BYTES: the
 * last-level cache the f32 mat-vec's prefetch rule compares with (0: unknown, prefetch). */
#include <math.h>
#include "llc.h"
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/mman.h>
#include "mul_mat.h"
#include "probe_clock.h"

/* MM_TUNE_GRID / MM_TUNE_DYN: the packed path's tasks with a chosen grid, statically split
 * (as mm_compute) or dealt from *next. */
static void grid_compute(const ggml_tensor * d, int64_t gm, int64_t gn, int dyn,
                         int64_t * next, int ith, int nth, float * work) {
    const mm_tasks all = mm_tasks_of(d, gm, gn, MM_NR, MM_MR, 0, 1);
    if (!dyn) {
        const mm_tasks g = mm_tasks_of(d, gm, gn, MM_NR, MM_MR, ith, nth);
        for (int64_t t = g.t0; t < g.t1; t++) {
            const mm_part p = mm_task_part(&g, t);
            mm_task(d, p.i2, p.i3, p.m_lo, p.m_hi, p.n_lo, p.n_hi, work);
        }
        return;
    }
    for (;;) {
        const int64_t t = __atomic_fetch_add(next, 1, __ATOMIC_RELAXED);
        if (t >= all.t1) break;
        const mm_part p = mm_task_part(&all, t);
        mm_task(d, p.i2, p.i3, p.m_lo, p.m_hi, p.n_lo, p.n_hi, work);
    }
}

static float to_stored(float v, int type, void * dst, int64_t i) {
    uint32_t bits;
    if (type == GGML_TYPE_F32) { ((float *)dst)[i] = v; return v; }
    if (type == GGML_TYPE_F16) {
#if defined(__F16C__)
        const uint16_t h = _cvtss_sh(v, 0);
        ((uint16_t *)dst)[i] = h;
        return mm_f16_to_f32(h);
#endif
    }
    memcpy(&bits, &v, 4);
    ((uint16_t *)dst)[i] = (uint16_t)(bits >> 16);
    return mm_bf16_to_f32((uint16_t)(bits >> 16));
}

static void run(int64_t M, int64_t N, int64_t K, int type, int nth) {
    const int64_t es = type == GGML_TYPE_F32 ? 4 : 2;
    /* MM_TUNE_OFFSET=16 (32, 48): a, b and dst that many bytes past a cache line, as numpy's
     * big arrays (page + 16) and context tensors (16-byte aligned) are */
    const char * off_env = getenv("MM_TUNE_OFFSET");
    const size_t off = off_env ? (size_t)atoi(off_env) % 64 / 16 * 16 : 0;
    char * a_raw = aligned_alloc(64, ((size_t)(M * K * es) + 127) / 64 * 64);
    float * af = malloc((size_t)(M * K) * 4);
    char * b_raw = aligned_alloc(64, ((size_t)(N * K * 4) + 127) / 64 * 64);
    char * c_raw = aligned_alloc(64, ((size_t)(M * N * 4) + 127) / 64 * 64);
    char * a = a_raw + off;
    float * b = (float *)(b_raw + off), * c = (float *)(c_raw + off);
    uint64_t s = 88172645463325252ull;
    for (int64_t i = 0; i < M * K; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        af[i] = to_stored((float)((s >> 11) * 0x1.0p-53) - 0.5f, type, a, i);
    }
    for (int64_t i = 0; i < N * K; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        b[i] = (float)((s >> 11) * 0x1.0p-53) - 0.5f;
    }
    memset(c, 0, (size_t)(M * N) * 4);
    ggml_tensor s0, s1, d;
    memset(&s0, 0, sizeof s0); memset(&s1, 0, sizeof s1); memset(&d, 0, sizeof d);
    s0.type = type; s0.ne[0] = K; s0.ne[1] = M; s0.ne[2] = s0.ne[3] = 1;
    s0.nb[0] = es; s0.nb[1] = K * es; s0.nb[2] = s0.nb[3] = M * K * es; s0.data = a;
    s1.type = GGML_TYPE_F32; s1.ne[0] = K; s1.ne[1] = N; s1.ne[2] = s1.ne[3] = 1;
    s1.nb[0] = 4; s1.nb[1] = K * 4; s1.nb[2] = s1.nb[3] = N * K * 4; s1.data = b;
    d.type = GGML_TYPE_F32; d.ne[0] = M; d.ne[1] = N; d.ne[2] = d.ne[3] = 1;
    d.nb[0] = 4; d.nb[1] = M * 4; d.nb[2] = d.nb[3] = M * N * 4; d.data = c;
    d.src[0] = &s0; d.src[1] = &s1;
    const char * ndeal_env = getenv("MM_TUNE_NDEAL");
    const int ndeal = ndeal_env ? atoi(ndeal_env) : 0;
    if (ndeal > 0) mm_ndeal_set(ndeal == 1 ? 1 : ndeal == 2 ? 0 : -1, 0);
    const size_t wf = ndeal ? (mm_work_floats_for(&d, nth) + 15) / 16 * 16
                            : mm_work_floats_per_thread();
    /* MM_TUNE_THP=1: the scratch on transparent huge pages (2 MiB aligned, madvised), to
     * see whether the packed blocks' page placement moves the rate on a machine */
    float * work;
    const char * thp = getenv("MM_TUNE_THP");
    if (thp && thp[0] == '1') {
        const size_t bytes = (wf * 4 * (size_t)nth + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
        work = aligned_alloc(2u << 20, bytes);
        madvise(work, bytes, MADV_HUGEPAGE);
    } else {
        work = aligned_alloc(64, wf * 4 * (size_t)nth);
    }
    const char * grid_env = getenv("MM_TUNE_GRID");
    const char * dyn_env = getenv("MM_TUNE_DYN");
    long ggm = 0, ggn = 0;
    if (grid_env) sscanf(grid_env, "%ld,%ld", &ggm, &ggn);
    const int dyn = dyn_env && dyn_env[0] == '1';
    double t[64], tmax[64], tavg[64], tt[256];
    int reps = 0;
    const double t_start = now();
    while (reps < 64 && (reps < 5 || now() - t_start < 0.5)) {
        int64_t next = 0;
        int64_t ctrs[256 * MM_DEAL_STRIDE] __attribute__((aligned(64)));
        memset(ctrs, 0, sizeof ctrs);
        const double t0 = now();
#pragma omp parallel num_threads(nth)
        {
            const int ith = omp_get_thread_num();
            const double s0 = now();
            float * w = work + wf * (size_t)ith;
            if (ndeal) mm_compute_dealt(&d, ctrs, ith, nth, w);
            else if (ggm > 0 && ggn > 0) grid_compute(&d, ggm, ggn, dyn, &next, ith, nth, w);
            else mm_compute(&d, ith, nth, w);
            tt[ith & 255] = now() - s0;
        }
        double mx = 0.0, sum = 0.0;
        for (int i = 0; i < nth && i < 256; i++) { mx = fmax(mx, tt[i]); sum += tt[i]; }
        tmax[reps] = mx;
        tavg[reps] = sum / nth;
        t[reps++] = now() - t0;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_d);
    qsort(tmax, (size_t)reps, sizeof(double), cmp_d);
    qsort(tavg, (size_t)reps, sizeof(double), cmp_d);
    double maxerr = 0.0, maxref = 0.0;
    for (int q = 0; q < 64; q++) {
        const int64_t n = (q * 7919) % N, m = (q * 104729) % M;
        double ref = 0.0;
        for (int64_t k = 0; k < K; k++) ref += (double)af[m * K + k] * b[n * K + k];
        maxerr = fmax(maxerr, fabs(ref - c[n * M + m]));
        maxref = fmax(maxref, fabs(ref));
    }
    printf("{\"M\": %ld, \"N\": %ld, \"K\": %ld, \"type\": \"%s\", \"threads\": %d, "
           "\"KC\": %d, \"NC\": %d, \"MC\": %d, \"MR\": %d, \"NR\": %d, \"best_ms\": %.4f, "
           "\"median_ms\": %.4f, \"gflops\": %.1f, \"rel_err\": %.2g, \"busiest_ms\": %.4f, "
           "\"avg_thread_ms\": %.4f, \"grid\": \"%ld,%ld%s%s\"}\n",
           (long)M, (long)N, (long)K, type == GGML_TYPE_F32 ? "f32" : type == GGML_TYPE_F16 ? "f16" : "bf16",
           nth, MM_KC, MM_NC, MM_MC, MM_MR, MM_NR, t[0] * 1e3, t[reps / 2] * 1e3,
           2.0 * M * N * K / t[0] / 1e9, maxerr / (maxref > 0 ? maxref : 1.0),
           tmax[reps / 2] * 1e3, tavg[reps / 2] * 1e3, ggm, ggn, dyn ? " dyn" : "",
           !ndeal || !mm_ndeal_takes(&d, nth) ? "" : ndeal == 1 ? " dealt" : ndeal == 2
           ? " split" : mm_ndeal_on_now() ? " auto:dealt" : " auto:split");
    fflush(stdout);
    free(a_raw); free(af); free(b_raw); free(c_raw); free(work);
}

int main(int argc, char ** argv) {
    const int nth = argc > 1 ? atoi(argv[1]) : 1;
    int llc_level;   /* the package takes _kernels' LLC; here glibc's, as its fallback */
    mm_gv_llc = getenv("MM_TUNE_GV_LLC") ? atoll(getenv("MM_TUNE_GV_LLC"))
                                         : gcy_sysconf_llc(&llc_level);
    int64_t shapes[16][3] = {{1024, 1024, 1024}, {4096, 64, 4096}, {4096, 1, 4096}};
    int ns = 3;
    if (argc > 4) {
        ns = 0;
        for (int i = 2; i + 2 < argc && ns < 16; i += 3, ns++) {
            shapes[ns][0] = atol(argv[i]); shapes[ns][1] = atol(argv[i + 1]);
            shapes[ns][2] = atol(argv[i + 2]);
        }
    }
    const int types[3] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16};
    /* MM_TUNE_TYPES=f32 (or f16, bf16, comma-separated) limits the weight types */
    const char * only = getenv("MM_TUNE_TYPES");
    const char * names[3] = {"f32", "f16", "bf16"};
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < 3; j++)
            if (!only || strstr(only, names[j]))
                run(shapes[i][0], shapes[i][1], shapes[i][2], types[j], nth);
    return 0;
}
