/* Developer tool (not shipped): calls of a 2..N-thread add of 1e6 float32 on ggml_cy's
 * worker pool (ggml_cy/cpu/csrc/gcy_pool.h) right after the process sat idle, the way a
 * Python program calls after a pause (and the bench after its settle time):
 *   gcc -O3 -march=native -Iggml_cy/cpu/csrc bench/csrc/wake_probe.c -o /tmp/wake_probe -lpthread
 *   /tmp/wake_probe NTH IDLE_US CALLS ROUNDS DYN
 * Each round: for each pool setting, sleep IDLE_US, then CALLS calls back to back
 * (gcy_pool_run with a static split, or gcy_pool_run_dyn with ggml_cy's home ranges when DYN
 * is 1). The settings (SETTINGS=old,yield,... picks some; default all):
 *   old    - pause spin only, then sleep (the pool before issue 14's wake-up work);
 *   yield  - a sched_yield() every 256 pauses (YIELD_EVERY), then 2 ms of yielding before sleeping;
 *   spread - yield, and a worker found on its caller's CPU moves (gcy_spread);
 *   every  - spread, the spin's yields, no yield phase before sleeping;
 *   phase  - spread, the yield phase, no yields inside the spin.
 * Prints per setting the calls after each round's first 5, how many took over 300 us, their
 * mean, and the migrations gcy_spread made; with TRACE set, every call's microseconds. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gcy_pool.h"
#include "probe_split.h"

static float *A, *B, *O;
static const long N = 1000000;
static long ctr[256 * 8];

static void add_range(long lo, long hi) { for (long i = lo; i < hi; i++) O[i] = A[i] + B[i]; }
static void job_static(void * arg, int ith, int nth) {
    (void)arg;
    add_range(N * ith / nth, N * (ith + 1) / nth);
}
static void dyn_chunk(void * ctx, long c) {
    long nch = (long)(intptr_t)ctx;
    add_range(N * c / nch, N * (c + 1) / nch);
}
static void job_dyn(void * arg, int ith, int nth) {   /* home range first, then the others' */
    (void)arg;
    probe_dyn_split(ctr, ith, nth, (long)nth * 8, dyn_chunk, (void *)(intptr_t)((long)nth * 8));
}

int main(int argc, char ** argv) {
    if (argc < 6) { fprintf(stderr, "usage: %s NTH IDLE_US CALLS ROUNDS DYN\n", argv[0]); return 2; }
    int nth = atoi(argv[1]), idle_us = atoi(argv[2]), calls = atoi(argv[3]);
    int rounds = atoi(argv[4]), dyn = atoi(argv[5]), trace = getenv("TRACE") != NULL;
    int yield_every = getenv("YIELD_EVERY") ? atoi(getenv("YIELD_EVERY")) : 256;
    if (nth < 2 || nth > 256 || calls < 6) { fprintf(stderr, "bad arguments\n"); return 2; }
    A = malloc(N * 4); B = malloc(N * 4); O = malloc(N * 4);
    for (long i = 0; i < N; i++) { A[i] = (float)i; B[i] = 1.0f; O[i] = 0.0f; }
    gcy_pool_init(-1);
    const char * names[5] = {"old", "yield", "spread", "every", "phase"};
    const char * pick = getenv("SETTINGS");
    int on[5];
    for (int k = 0; k < 5; k++) on[k] = pick == NULL || strstr(pick, names[k]) != NULL;
    double sum[5] = {0};
    int bad[5] = {0}, tot[5] = {0}, moves[5] = {0};
    for (int r = 0; r < rounds; r++) {
        for (int cfg = 0; cfg < 5; cfg++) {
            if (!on[cfg]) continue;
            gcy_pool_set_spread(cfg >= 2);
            gcy_pool_set_job_yield(cfg == 0 || cfg == 3 ? 0 : 2000000,
                                   cfg == 0 || cfg == 4 ? 0 : yield_every);
            int m0 = gcy_pool_spread_moves();
            usleep((useconds_t)idle_us);
            if (trace) printf("%s:", names[cfg]);
            for (int c = 0; c < calls; c++) {
                long long t = gcy_mono_ns();
                if (dyn) {
                    for (int k = 0; k < nth; k++) ctr[k * 8] = 0;
                    gcy_pool_run_dyn(job_dyn, NULL, nth);
                } else {
                    gcy_pool_run(job_static, NULL, nth);
                }
                long long us = (gcy_mono_ns() - t) / 1000;
                if (trace) printf(" %lld", us);
                if (c >= 5) { tot[cfg]++; bad[cfg] += us > 300; sum[cfg] += (double)us; }
            }
            if (trace) printf("\n");
            moves[cfg] += gcy_pool_spread_moves() - m0;
        }
    }
    for (int cfg = 0; cfg < 5; cfg++)
        if (on[cfg]) printf("{\"setting\": \"%s\", \"nth\": %d, \"dyn\": %d, \"idle_us\": %d, \"calls\": %d, "
               "\"over_300us\": %d, \"mean_us\": %.1f, \"moves\": %d}\n", names[cfg], nth, dyn,
               idle_us, tot[cfg], bad[cfg], sum[cfg] / tot[cfg], moves[cfg]);
    return 0;
}
