/* Developer probe (not shipped): ggml_cy's float mul_mat kernel (ggml_cy/cpu/csrc/mul_mat.h)
 * as a one-thread C function a Python process can call through ctypes, so that kernel
 * variants (compile-time knobs of mul_mat.h) and torch take turns call by call on one pinned
 * CPU (tools/device/mm_ab_probe.py). Build one object per variant, each under its own name:
 *   gcc -O3 -march=x86-64-v4 -fPIC -c -DMM_AB_NAME=mm_ab_pf16 -DMM_PF_A=16 \
 *       -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc bench/csrc/mm_ab.c -o /tmp/pf16.o
 * and link the objects into one shared library (gcc -shared ... -o /tmp/mm_ab.so).
 * With -DMM_AB_MR=8 / 12 the object wraps bench/csrc/mm_mr_probe.c's kernel instead (an
 * MR x 32 tile, simplified packing; rows past the last whole MR panel of a block skipped). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifndef MM_AB_NAME
#error "MM_AB_NAME: the exported function's name"
#endif

#if defined(MM_AB_MR)
#define MR MM_AB_MR
#define main static mm_ab_unused_main
#include "mm_mr_probe.c"
#undef main
/* dst (N x M) = b (N x K) . a (M x K)^T; work: (NC*KC + (MC+MR)*KC) floats, 64-aligned */
void MM_AB_NAME(const float * a, const float * b, float * c, int64_t M, int64_t N, int64_t K,
                float * work) {
    gemm(a, b, c, M, N, K, 0, N, work, work + (size_t)NC * KC);
}
#else
#include "mul_mat.h"
void MM_AB_NAME(const float * a, const float * b, float * c, int64_t M, int64_t N, int64_t K,
                float * work) {
    ggml_tensor s0, s1, d;
    memset(&s0, 0, sizeof s0); memset(&s1, 0, sizeof s1); memset(&d, 0, sizeof d);
    s0.type = GGML_TYPE_F32; s0.ne[0] = K; s0.ne[1] = M; s0.ne[2] = s0.ne[3] = 1;
    s0.nb[0] = 4; s0.nb[1] = K * 4; s0.nb[2] = s0.nb[3] = M * K * 4; s0.data = (void *)a;
    s1.type = GGML_TYPE_F32; s1.ne[0] = K; s1.ne[1] = N; s1.ne[2] = s1.ne[3] = 1;
    s1.nb[0] = 4; s1.nb[1] = K * 4; s1.nb[2] = s1.nb[3] = N * K * 4; s1.data = (void *)b;
    d.type = GGML_TYPE_F32; d.ne[0] = M; d.ne[1] = N; d.ne[2] = d.ne[3] = 1;
    d.nb[0] = 4; d.nb[1] = M * 4; d.nb[2] = d.nb[3] = M * N * 4; d.data = c;
    d.src[0] = &s0; d.src[1] = &s1;
    mm_compute(&d, 0, 1, work);
}
#endif
