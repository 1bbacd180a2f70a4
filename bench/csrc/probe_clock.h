/* Developer probes (not shipped): the monotonic clock and the double comparison for qsort
 * that the GEMM probes (mm_tune.c, mmx_parts.c) time and sort their calls with. */
#ifndef GCY_PROBE_CLOCK_H
#define GCY_PROBE_CLOCK_H
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp_d(const void * x, const void * y) {
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

#endif
