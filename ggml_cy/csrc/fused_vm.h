/* The fused executor's chunk loops: for groups of plain float arithmetic (+ - * /,
 * maximum, minimum, negative, abs, square on f32 or f64), a block is run in chunks of
 * VM_CHUNK elements, every node of the group applied chunk by chunk, so that all input
 * streams are read concurrently (as in a hand-fused loop) instead of two at a time.
 *
 * Each element goes through the kernel layer's own scalar functions (kernels_elem.h:
 * kern_add_f32 and friends), one op per store, so the bits are those of the unfused
 * kernels; contraction into FMAs is switched off for this file's loops. */
#ifndef GGML_CY_FUSED_VM_H
#define GGML_CY_FUSED_VM_H
#include <stdint.h>
#include "kernels_elem.h"

#define VM_CHUNK 128

enum { VM_NONE = -1, VM_ADD = 0, VM_SUB, VM_MUL, VM_DIV, VM_MAX, VM_MIN, VM_NEG, VM_ABS,
       VM_SQR };

/* sa/sb: 1 when the operand advances with the element index, 0 when it is one value. */
#define VM_BINARY(tn, T, name)                                                          \
__attribute__((optimize("fp-contract=off")))                                            \
static void vm_##name##_##tn(T * d, const T * a, int sa, const T * b, int sb, int64_t n) { \
    int64_t i;                                                                          \
    if (sa && sb) { for (i = 0; i < n; i++) d[i] = kern_##name##_##tn(a[i], b[i]); }    \
    else if (sa) { const T y = b[0]; for (i = 0; i < n; i++) d[i] = kern_##name##_##tn(a[i], y); } \
    else if (sb) { const T x = a[0]; for (i = 0; i < n; i++) d[i] = kern_##name##_##tn(x, b[i]); } \
    else { const T v = kern_##name##_##tn(a[0], b[0]); for (i = 0; i < n; i++) d[i] = v; } \
}
#define VM_UNARY(tn, T, name)                                                           \
__attribute__((optimize("fp-contract=off")))                                            \
static void vm_##name##_##tn(T * d, const T * a, int sa, int64_t n) {                   \
    int64_t i;                                                                          \
    if (sa) { for (i = 0; i < n; i++) d[i] = kern_##name##_##tn(a[i]); }                \
    else { const T v = kern_##name##_##tn(a[0]); for (i = 0; i < n; i++) d[i] = v; }    \
}
#define VM_TYPE(tn, T)                                                                  \
VM_BINARY(tn, T, add) VM_BINARY(tn, T, sub) VM_BINARY(tn, T, mul) VM_BINARY(tn, T, div) \
VM_BINARY(tn, T, max) VM_BINARY(tn, T, min)                                             \
VM_UNARY(tn, T, neg) VM_UNARY(tn, T, abs) VM_UNARY(tn, T, sqr)                          \
static void vm_apply_##tn(int op, char * d, const char * a, int sa, const char * b, int sb, \
                          int64_t n) {                                                  \
    T * dd = (T *)d; const T * aa = (const T *)a; const T * bb = (const T *)b;          \
    switch (op) {                                                                       \
    case VM_ADD: vm_add_##tn(dd, aa, sa, bb, sb, n); break;                             \
    case VM_SUB: vm_sub_##tn(dd, aa, sa, bb, sb, n); break;                             \
    case VM_MUL: vm_mul_##tn(dd, aa, sa, bb, sb, n); break;                             \
    case VM_DIV: vm_div_##tn(dd, aa, sa, bb, sb, n); break;                             \
    case VM_MAX: vm_max_##tn(dd, aa, sa, bb, sb, n); break;                             \
    case VM_MIN: vm_min_##tn(dd, aa, sa, bb, sb, n); break;                             \
    case VM_NEG: vm_neg_##tn(dd, aa, sa, n); break;                                     \
    case VM_ABS: vm_abs_##tn(dd, aa, sa, n); break;                                     \
    case VM_SQR: vm_sqr_##tn(dd, aa, sa, n); break;                                     \
    default: break;                                                                     \
    }                                                                                   \
}

VM_TYPE(f32, float)
VM_TYPE(f64, double)

/* One node on n elements; type 0 = f32, 1 = f64. */
static inline void vm_apply(int type, int op, char * d, const char * a, int sa,
                            const char * b, int sb, int64_t n) {
    if (type == 0) vm_apply_f32(op, d, a, sa, b, sb, n);
    else vm_apply_f64(op, d, a, sa, b, sb, n);
}
#endif
