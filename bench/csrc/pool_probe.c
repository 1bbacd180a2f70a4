/* Developer tool (not shipped): the fixed cost of one parallel region of ggml_cy's worker
 * pool (ggml_cy/cpu/csrc/gcy_pool.h) against an OpenMP region, outside Python:
 *   gcc -O2 -fopenmp -Iggml_cy/cpu/csrc bench/csrc/pool_probe.c -o /tmp/pool_probe -lpthread
 *   /tmp/pool_probe [NTH ...]
 * For each thread count: the median over 15 blocks of the mean ns per back-to-back call of an
 * empty job (gcy_pool_run, gcy_pool_run_dyn, omp parallel), and of a job touching one cache
 * line per thread (what a real split does at least). One JSON line per thread count. */
#define _GNU_SOURCE   /* sched_getcpu and CPU_SET in gcy_pool.h */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "gcy_pool.h"

static char lines[64][64] __attribute__((aligned(64)));
static void noop(void * arg, int ith, int nth) { (void)arg; (void)ith; (void)nth; }
static void touch(void * arg, int ith, int nth) { (void)arg; (void)nth; lines[ith][0]++; }

static double ns_now(void) { return (double)gcy_mono_ns(); }
static int cmp(const void * a, const void * b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define CALLS 2000
#define BLOCKS 15
static double med(double * v) { qsort(v, BLOCKS, sizeof(double), cmp); return v[BLOCKS / 2]; }

int main(int argc, char ** argv) {
    int counts[16] = {2, 4, 8, 16}, nc = 4, i, b, c;
    if (argc > 1) { nc = 0; for (i = 1; i < argc && nc < 16; i++) counts[nc++] = atoi(argv[i]); }
    gcy_pool_init(-1);
    for (c = 0; c < nc; c++) {
        int nth = counts[c];
        double r[5][BLOCKS];
        for (b = 0; b < BLOCKS; b++) {
            double t;
            t = ns_now(); for (i = 0; i < CALLS; i++) gcy_pool_run(noop, NULL, nth);
            r[0][b] = (ns_now() - t) / CALLS;
            t = ns_now(); for (i = 0; i < CALLS; i++) gcy_pool_run_dyn(noop, NULL, nth);
            r[1][b] = (ns_now() - t) / CALLS;
            t = ns_now(); for (i = 0; i < CALLS; i++) gcy_pool_run(touch, NULL, nth);
            r[2][b] = (ns_now() - t) / CALLS;
            t = ns_now();
            for (i = 0; i < CALLS; i++) {
#pragma omp parallel num_threads(nth)
                { noop(NULL, omp_get_thread_num(), nth); }
            }
            r[3][b] = (ns_now() - t) / CALLS;
            t = ns_now();
            for (i = 0; i < CALLS; i++) {
#pragma omp parallel num_threads(nth)
                { touch(NULL, omp_get_thread_num(), nth); }
            }
            r[4][b] = (ns_now() - t) / CALLS;
        }
        printf("{\"nth\": %d, \"pool_ns\": %.0f, \"pool_dyn_ns\": %.0f, \"pool_touch_ns\": %.0f, "
               "\"omp_ns\": %.0f, \"omp_touch_ns\": %.0f}\n", nth, med(r[0]), med(r[1]),
               med(r[2]), med(r[3]), med(r[4]));
        fflush(stdout);
    }
    return 0;
}
