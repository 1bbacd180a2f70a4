/* Barrier between graph nodes inside the executor's one parallel region.
 * Cython has no barrier primitive; an orphaned `omp barrier` binds to the innermost
 * enclosing parallel region (the executor's), which is exactly what we need. Without
 * OpenMP the executor runs on one thread and the barrier is a no-op. */
#ifndef GGML_CY_GRAPH_BARRIER_H
#define GGML_CY_GRAPH_BARRIER_H
#ifdef _OPENMP
#include <omp.h>
static inline void gcy_barrier(void) {
    _Pragma("omp barrier")
}
#else
static inline void gcy_barrier(void) {}
#endif
#endif
