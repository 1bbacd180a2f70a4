/* The last-level cache as glibc reports it, on its own so that C probes outside the package
 * (bench/csrc/mm_tune.c) can ask it without the worker pool; the package asks it through
 * gcy_pool.h's users in _kernels (ggml_cy.cpu.cacheinfo's fallback). */
#ifndef GGML_CY_LLC_H
#define GGML_CY_LLC_H
#include <stdint.h>
/* The last-level cache from sysconf (glibc answers from CPUID): bytes of the highest level
 * it knows (3, else 2), level in *level; 0 when it does not say. ggml_cy.cpu.cacheinfo
 * asks sysfs first and falls back to this. */
#include <unistd.h>
static int64_t gcy_sysconf_llc(int * level) {
    long v = -1;
    *level = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
    v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (v > 0) { *level = 3; return (int64_t)v; }
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
    v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (v > 0) { *level = 2; return (int64_t)v; }
#endif
    (void)v;
    return 0;
}
#endif
