/* tests/test_quant_mul_mat.py::test_simd_levels: mul_mat_q.h compiled for other CPUs (AVX2
 * without AVX-512, plain x86-64: the scalar fallback). Reads type, M, K, N, raw weights
 * and b (f32) from stdin; writes dst (f32) to stdout. */
#include <stdio.h>
#include <stdlib.h>
#include "mul_mat_q.h"
int main(void) {
    int32_t hdr[4];
    if (fread(hdr, 4, 4, stdin) != 4) return 1;
    int type = hdr[0]; int64_t M = hdr[1], K = hdr[2], N = hdr[3];
    ggml_cy_type_traits tr = ggml_cy_type_traits_of(type);
    size_t rb = (size_t)(K / tr.blck_size) * tr.type_size;
    uint8_t * a = malloc(rb * M); float * b = malloc(4 * K * N); float * d = malloc(4 * M * N);
    if (fread(a, 1, rb * M, stdin) != rb * M || fread(b, 4, K * N, stdin) != (size_t)(K * N)) return 2;
    ggml_tensor ta = {0}, tb = {0}, td = {0};
    ta.type = type; ta.ne[0] = K; ta.ne[1] = M; ta.ne[2] = ta.ne[3] = 1;
    ta.nb[0] = tr.type_size; ta.nb[1] = rb; ta.nb[2] = ta.nb[3] = rb * M; ta.data = a;
    tb.type = GGML_TYPE_F32; tb.ne[0] = K; tb.ne[1] = N; tb.ne[2] = tb.ne[3] = 1;
    tb.nb[0] = 4; tb.nb[1] = 4 * K; tb.nb[2] = tb.nb[3] = 4 * K * N; tb.data = b;
    td.type = GGML_TYPE_F32; td.ne[0] = M; td.ne[1] = N; td.ne[2] = td.ne[3] = 1;
    td.nb[0] = 4; td.nb[1] = 4 * M; td.nb[2] = td.nb[3] = 4 * M * N; td.data = d;
    td.src[0] = &ta; td.src[1] = &tb;
    char * w = aligned_alloc(64, (mmq_work_size(&td) + 63) / 64 * 64);
    mmq_convert_b(&td, 0, 1, w);
    if (mmq_dots(&td, 0, 1, w) < 0) return 3;
    fwrite(d, 4, M * N, stdout);
    return 0;
}
