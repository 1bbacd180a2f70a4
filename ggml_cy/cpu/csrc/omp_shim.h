/* The one place ggml_cy touches OpenMP (scikit-learn's _openmp_helpers idea): without
 * OpenMP every query answers "one thread" and parallel regions run serially. */
#ifndef GGML_CY_OMP_SHIM_H
#define GGML_CY_OMP_SHIM_H
#ifdef _OPENMP
#include <omp.h>
#define GGML_CY_HAVE_OPENMP 1
static inline int gcy_omp_thread_num(void) { return omp_get_thread_num(); }
static inline int gcy_omp_num_threads(void) { return omp_get_num_threads(); }
static inline int gcy_omp_max_threads(void) { return omp_get_max_threads(); }
static inline int gcy_omp_num_procs(void) { return omp_get_num_procs(); }
#else
#define GGML_CY_HAVE_OPENMP 0
static inline int gcy_omp_thread_num(void) { return 0; }
static inline int gcy_omp_num_threads(void) { return 1; }
static inline int gcy_omp_max_threads(void) { return 1; }
static inline int gcy_omp_num_procs(void) { return 1; }
#endif
#endif
