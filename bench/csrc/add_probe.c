#define _GNU_SOURCE   /* sched_getcpu and CPU_SET in gcy_pool.h */
/* Developer tool (not shipped): where a 16-thread eager add of ~1e6 float32 loses time
 * against an OpenMP static loop (torch's scheme), outside Python and outside ggml_cy's plan:
 *   gcc -O3 -march=native -fopenmp -Iggml_cy/cpu/csrc bench/csrc/add_probe.c -o /tmp/add_probe -lpthread
 *   /tmp/add_probe N NTH [OUT_SHIFT_BYTES]
 * The same add loop (o = a + b, out= style) run:
 *   one     - on the calling thread alone;
 *   omp     - omp parallel, thread i takes slice i (static);
 *   static  - gcy_pool_run, thread i takes slice i;
 *   dyn     - gcy_pool_run_dyn, 8 chunks per thread cut into one range per thread, each
 *             thread taking its own range first, then stealing (ggml_cy's dyn_worker);
 * and for `static`, the mean lag from the caller's start to each thread's start and the
 * mean time each thread spends in its slice (when the last starter starts, how long a
 * slice takes). Median of 15 blocks. One JSON line. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gcy_pool.h"
#include "probe_split.h"

static float *A, *B, *O;
static long N;
static int NCH = 8;
static long long t_call;
static long long lag_sum[64], dur_sum[64];
static long ctr[64 * 8] __attribute__((aligned(64)));

static void add_range(long lo, long hi) {
    float * __restrict o = O; const float * __restrict a = A; const float * __restrict b = B;
    for (long i = lo; i < hi; i++) o[i] = a[i] + b[i];
}
static void slice(int ith, int nth) {
    long lo = (N * ith / nth) & ~15L, hi = ith == nth - 1 ? N : (N * (ith + 1) / nth) & ~15L;
    add_range(lo, hi);
}
static void job_static(void * arg, int ith, int nth) { (void)arg; slice(ith, nth); }
static void job_static_timed(void * arg, int ith, int nth) {
    (void)arg;
    long long s = gcy_mono_ns();
    slice(ith, nth);
    long long e = gcy_mono_ns();
    lag_sum[ith] += s - t_call;
    dur_sum[ith] += e - s;
}
static void dyn_chunk(void * ctx, long c) {
    long nchunks = (long)(intptr_t)ctx;
    long e0 = (N * c / nchunks) & ~15L, e1 = c == nchunks - 1 ? N : (N * (c + 1) / nchunks) & ~15L;
    add_range(e0, e1);
}
static void job_dyn(void * arg, int ith, int nth) {
    (void)arg;
    long nchunks = (long)nth * NCH;
    probe_dyn_split(ctr, ith, nth, nchunks, dyn_chunk, (void *)(intptr_t)nchunks);
}

static double ns_now(void) { return (double)gcy_mono_ns(); }
static int cmp(const void * a, const void * b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
#define BLOCKS 15
static double med(double * v) { qsort(v, BLOCKS, sizeof(double), cmp); return v[BLOCKS / 2]; }

static float * alloc_at(long n, long shift) {
    char * p = NULL;
    if (posix_memalign((void **)&p, 4096, (size_t)n * 4 + 8192)) exit(1);
    memset(p, 0, (size_t)n * 4 + 8192);
    return (float *)(p + shift);
}

int main(int argc, char ** argv) {
    N = argc > 1 ? atol(argv[1]) : 1000000;
    int nth = argc > 2 ? atoi(argv[2]) : 16;
    long shift = argc > 3 ? atol(argv[3]) : 0;
    int calls = (int)(4e7 / N); if (calls < 20) calls = 20; if (calls > 20000) calls = 20000;
    A = alloc_at(N, 16); B = alloc_at(N, 16); O = alloc_at(N, 16 + shift);
    for (long i = 0; i < N; i++) { A[i] = (float)i; B[i] = 1.0f; }
    gcy_pool_init(-1);
    double r[5][BLOCKS];
    int b, i, k;
    memset(lag_sum, 0, sizeof lag_sum); memset(dur_sum, 0, sizeof dur_sum);
    long long timed_calls = 0;
    for (b = 0; b < BLOCKS; b++) {
        double t;
        for (k = 0; k < 2; k++) slice(0, 1);
        t = ns_now(); for (i = 0; i < calls; i++) slice(0, 1);
        r[0][b] = (ns_now() - t) / calls;
        for (k = 0; k < 2; k++) {
#pragma omp parallel num_threads(nth)
            slice(omp_get_thread_num(), nth);
        }
        t = ns_now();
        for (i = 0; i < calls; i++) {
#pragma omp parallel num_threads(nth)
            slice(omp_get_thread_num(), nth);
        }
        r[1][b] = (ns_now() - t) / calls;
        for (k = 0; k < 2; k++) gcy_pool_run(job_static, NULL, nth);
        t = ns_now(); for (i = 0; i < calls; i++) gcy_pool_run(job_static, NULL, nth);
        r[2][b] = (ns_now() - t) / calls;
        t = ns_now();
        for (i = 0; i < calls; i++) {
            for (k = 0; k < nth; k++) ctr[k * 8] = 0;
            gcy_pool_run_dyn(job_dyn, NULL, nth);
        }
        r[3][b] = (ns_now() - t) / calls;
        t = ns_now();
        for (i = 0; i < calls; i++) { t_call = gcy_mono_ns(); gcy_pool_run(job_static_timed, NULL, nth); }
        r[4][b] = (ns_now() - t) / calls;
        timed_calls += calls;
    }
    double maxlag = 0, meanlag = 0, maxdur = 0, meandur = 0;
    for (k = 0; k < nth; k++) {
        double l = (double)lag_sum[k] / timed_calls, d = (double)dur_sum[k] / timed_calls;
        meanlag += l / nth; meandur += d / nth;
        if (l > maxlag) maxlag = l;
        if (d > maxdur) maxdur = d;
    }
    printf("{\"n\": %ld, \"nth\": %d, \"out_shift\": %ld, \"one_us\": %.2f, \"omp_us\": %.2f, "
           "\"static_us\": %.2f, \"dyn_us\": %.2f, \"static_timed_us\": %.2f, "
           "\"lag_mean_us\": %.2f, \"lag_max_us\": %.2f, \"slice_mean_us\": %.2f, \"slice_max_us\": %.2f, "
           "\"lag_us\": [", N, nth, shift, med(r[0]) / 1e3, med(r[1]) / 1e3, med(r[2]) / 1e3,
           med(r[3]) / 1e3, med(r[4]) / 1e3, meanlag / 1e3, maxlag / 1e3, meandur / 1e3, maxdur / 1e3);
    for (k = 0; k < nth; k++) printf("%s%.2f", k ? ", " : "", (double)lag_sum[k] / timed_calls / 1e3);
    printf("], \"slice_us\": [");
    for (k = 0; k < nth; k++) printf("%s%.2f", k ? ", " : "", (double)dur_sum[k] / timed_calls / 1e3);
    printf("]}\n");
    return 0;
}
