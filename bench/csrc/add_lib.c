/* Developer tool (not shipped): the plain C add of add_probe.c as a shared library, so a
 * Python probe can time it on the very arrays it hands ggml_cy (tools/device/addlib_probe.py):
 *   gcc -O3 -march=x86-64-v4 -fopenmp -fPIC -shared -Iggml_cy/cpu/csrc bench/csrc/add_lib.c -o /tmp/add_lib.so -lpthread
 * gcy_probe_add(o, a, b, n, nth, reps, mode): seconds per call of o = a + b over reps calls;
 * mode 0: this library's own copy of ggml_cy's pool, optional helpers, 8 chunks per thread in
 * one range per thread (home first, then the others'); 1: the pool, static split; 2: OpenMP,
 * static split. */
#define _GNU_SOURCE   /* sched_getcpu and CPU_SET in gcy_pool.h */
#include <omp.h>
#include "gcy_pool.h"
#include "probe_split.h"

typedef struct { float * o; const float * a; const float * b; long n; long ctr[256 * 8]; } job_t;

static void add_range(job_t * j, long lo, long hi) {
    float * __restrict o = j->o;
    const float * __restrict a = j->a;
    const float * __restrict b = j->b;
    for (long i = lo; i < hi; i++) o[i] = a[i] + b[i];
}
static void job_static(void * arg, int ith, int nth) {
    job_t * j = (job_t *)arg;
    add_range(j, j->n * ith / nth, j->n * (ith + 1) / nth);
}
typedef struct { job_t * j; long nch; } dyn_ctx;
static void dyn_chunk(void * ctx, long c) {
    dyn_ctx * d = (dyn_ctx *)ctx;
    add_range(d->j, d->j->n * c / d->nch, d->j->n * (c + 1) / d->nch);
}
static void job_dyn(void * arg, int ith, int nth) {
    dyn_ctx d = {(job_t *)arg, (long)nth * 8};
    probe_dyn_split(d.j->ctr, ith, nth, d.nch, dyn_chunk, &d);
}

double gcy_probe_add(float * o, const float * a, const float * b, long n, int nth, int reps,
                     int mode) {
    static job_t j;
    static int inited = 0;
    if (!inited) { gcy_pool_init(-1); inited = 1; }
    if (nth < 1 || nth > 256 || reps < 1) return -1.0;
    j.o = o; j.a = a; j.b = b; j.n = n;
    long long t = gcy_mono_ns();
    for (int r = 0; r < reps; r++) {
        if (mode == 0) {
            for (int k = 0; k < nth; k++) j.ctr[k * 8] = 0;
            gcy_pool_run_dyn(job_dyn, &j, nth);
        } else if (mode == 1) {
            gcy_pool_run(job_static, &j, nth);
        } else {
#pragma omp parallel num_threads(nth)
            job_static(&j, omp_get_thread_num(), nth);
        }
    }
    return (double)(gcy_mono_ns() - t) * 1e-9 / reps;
}
