/* Element types with alignment 1 (and may_alias) for the kernels' loads and stores.
 *
 * numpy arrays need not be aligned to their element size (a view at an odd byte offset of
 * a uint8 buffer, a packed record field): dereferencing a `const float *` there is
 * undefined behaviour (UBSan: "load of misaligned address"), and gcc may peel a loop to an
 * assumed alignment. Accessing through these typedefs is defined for any address; on x86
 * and ARM64 gcc emits the same unaligned vector loads (vmovups) it uses anyway, so the
 * aligned path is not slower. */
#ifndef GGML_CY_KERNELS_UNALIGNED_H
#define GGML_CY_KERNELS_UNALIGNED_H
#include <stdint.h>
typedef float gcy_u_float __attribute__((aligned(1), may_alias));
typedef double gcy_u_double __attribute__((aligned(1), may_alias));
typedef int16_t gcy_u_int16_t __attribute__((aligned(1), may_alias));
typedef int32_t gcy_u_int32_t __attribute__((aligned(1), may_alias));
typedef int64_t gcy_u_int64_t __attribute__((aligned(1), may_alias));
typedef uint16_t gcy_u_uint16_t __attribute__((aligned(1), may_alias));
typedef int8_t gcy_u_int8_t;
typedef uint8_t gcy_u_uint8_t;
#endif
