/* Overflow-checked 64-bit arithmetic for the core's size computations (ggml aborts on
 * overflow; ggml_cy reports it). Each returns nonzero when the result does not fit. */
#ifndef GGML_CY_CORE_CHECKED_H
#define GGML_CY_CORE_CHECKED_H
#include <stddef.h>
#include <stdint.h>

static inline int gcy_mul_i64(int64_t a, int64_t b, int64_t * out) {
    return __builtin_mul_overflow(a, b, out);
}
static inline int gcy_add_i64(int64_t a, int64_t b, int64_t * out) {
    return __builtin_add_overflow(a, b, out);
}
static inline int gcy_add_size(size_t a, size_t b, size_t * out) {
    return __builtin_add_overflow(a, b, out);
}
#endif
