/* Developer probe (not shipped): the rate of mul_mat_amx.h's tile loop (mmx_chunks, 2 x 2 C
 * tiles per 32 x 32 block) on operands already in the caches, without packing, copies or the
 * C transposes: each thread runs 32 rows of A (32 x 512 bf16, 32 KiB, L1) against NCOLS
 * columns of packed B (NCOLS x 512 bf16: 32 -> 32 KiB, L1; 128 -> 128 KiB and 512 -> 512
 * KiB, L2), the C tiles zeroed per block and stored to a scratch after it. Prints per thread
 * count the median over threads of TFLOP/s per core (a bound for the full kernel there).
 *   gcc -O3 -march=x86-64-v4 -fopenmp -Iggml_cy/cpu/csrc -Iggml_cy/core/csrc \
 *       bench/csrc/mmx_loop.c -o /tmp/mmx_loop
 *   /tmp/mmx_loop NTHREADS NCOLS */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mul_mat.h"
#include "probe_clock.h"

#if !defined(MMX_BUILT)
int main(void) { puts("{\"error\": \"no AMX engine in this build\"}"); return 0; }
#else
MMX_TARGET static double loop_rate(int64_t ncols, double seconds) {
    const int64_t chunks = 16, gstride = chunks * 256;          /* dwords per 16-column group */
    char * ap = aligned_alloc(64, 32 * 1024);
    uint32_t * bv = aligned_alloc(64, (size_t)(ncols / 16) * gstride * 4);
    float * cs = aligned_alloc(64, 4096);
    for (int i = 0; i < 32 * 512; i++) ((uint16_t *)ap)[i] = (uint16_t)(0x3f80 + (i % 7));
    for (int64_t i = 0; i < (ncols / 16) * gstride; i++) bv[i] = 0x3f803f80u + (uint32_t)(i % 5);
    mmx_config();
    int64_t blocks = 0;
    const double t0 = now();
    double t = t0;
    while (t - t0 < seconds) {
        for (int r = 0; r < 64; r++)
            for (int64_t j = 0; j < ncols; j += 32) {
                _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
                mmx_chunks(ap, 1024, 0, chunks, NULL, bv + (j / 16) * gstride,
                           bv + (j / 16 + 1) * gstride, 32, 32);
                _tile_stored(0, cs, 64); _tile_stored(1, cs + 256, 64);
                _tile_stored(2, cs + 512, 64); _tile_stored(3, cs + 768, 64);
                blocks++;
            }
        t = now();
    }
    _tile_release();
    free(ap); free(bv); free(cs);
    return (double)blocks * chunks * 4 * 16.0 * 16.0 * 32.0 * 2.0 / (t - t0) * 1e-12;
}

int main(int argc, char ** argv) {
    if (argc < 3) { fprintf(stderr, "usage: mmx_loop NTHREADS NCOLS\n"); return 2; }
    const int nth = atoi(argv[1]);
    const int64_t ncols = atol(argv[2]) / 32 * 32;
    if (!mm_bf16_amx()) { puts("{\"error\": \"no AMX tiles on this CPU\"}"); return 0; }
    if (ncols < 32) return 2;
    double rate[256];
#pragma omp parallel num_threads(nth)
    rate[omp_get_thread_num() & 255] = loop_rate(ncols, 0.3);
    qsort(rate, (size_t)nth, sizeof rate[0], cmp_d);
    printf("{\"threads\": %d, \"ncols\": %ld, \"tflops_per_core_median\": %.3f, \"min\": %.3f, "
           "\"max\": %.3f}\n", nth, (long)ncols, rate[nth / 2], rate[0], rate[nth - 1]);
    return 0;
}
#endif
