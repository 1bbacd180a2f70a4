/* Read-only passes for tools/diag_transpose_reads.py (developer tool, not shipped): the read
 * patterns of a.T + b on an n x n float32 matrix, without the arithmetic and the stores, to
 * see what the memory system gives each pattern. Every pass sums what it reads (so no load
 * is dropped) and returns the sum. */
#include <stdint.h>
#include <immintrin.h>
#include <omp.h>

#if defined(__AVX512F__)
typedef __m512 vec;
#define VL 16
#define VLOAD _mm512_loadu_ps
#define VADD _mm512_add_ps
#define VZERO _mm512_setzero_ps
static float vsum(vec v) { return _mm512_reduce_add_ps(v); }
#else
typedef __m256 vec;
#define VL 8
#define VLOAD _mm256_loadu_ps
#define VADD _mm256_add_ps
#define VZERO _mm256_setzero_ps
static float vsum(vec v) {
    float t[8], s = 0;
    _mm256_storeu_ps(t, v);
    for (int i = 0; i < 8; i++) s += t[i];
    return s;
}
#endif

/* `rows` rows of `len` floats from p (row stride n), `streams` rows read line by line in
 * lockstep; the sum added to s */
static vec read_block(const float * p, int64_t n, int64_t rows, int64_t len, int streams, vec s) {
    for (int64_t c = 0; c < rows; c += streams)
        for (int64_t k = 0; k < len; k += VL)
            for (int j = 0; j < streams && c + j < rows; j++)
                s = VADD(s, VLOAD(p + (c + j) * n + k));
    return s;
}

/* this thread's share [lo, hi) of nb bands */
static void share(int64_t nb, int64_t * lo, int64_t * hi) {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t per = (nb + nt - 1) / nt;
    *lo = per * t < nb ? per * t : nb;
    *hi = per * (t + 1) < nb ? per * (t + 1) : nb;
}

/* a and b read front to back (the STREAM add's reads) */
float diag_read_seq(const float * a, const float * b, int64_t n, int nth) {
    float total = 0;
    #pragma omp parallel num_threads(nth) reduction(+:total)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t lo = n / nt * t / VL * VL;
        int64_t hi = t == nt - 1 ? n / VL * VL : n / nt * (t + 1) / VL * VL;
        vec s = VZERO();
        for (int64_t i = lo; i < hi; i += VL) s = VADD(s, VADD(VLOAD(a + i), VLOAD(b + i)));
        total += vsum(s);
    }
    return total;
}

/* The fused band's order (kernels_transpose.h): bands of `band` output rows split across the
 * threads; each band in panels of `panel` columns; in a panel, row blocks of 16 outer, column
 * blocks inner. Block (r, c) reads a's lines at a[c + j][r .. r + 16) (j < 16, the
 * transposed operand) and b's at b[r + i][c .. c + 16) (i < 16). */
float diag_read_bands(const float * a, const float * b, int64_t n, int band, int panel, int nth) {
    float total = 0;
    const int64_t nb = n / band;
    #pragma omp parallel num_threads(nth) reduction(+:total)
    {
        int64_t lo, hi;
        share(nb, &lo, &hi);
        vec s = VZERO();
        for (int64_t u = lo; u < hi; u++)
            for (int64_t c0 = 0; c0 < n; c0 += panel)
                for (int64_t r = u * band; r < (u + 1) * band; r += 16)
                    for (int64_t c = c0; c < c0 + panel; c += 16)
                        for (int j = 0; j < 16; j++)
                            for (int k = 0; k < 16; k += VL)
                                s = VADD(s, VADD(VLOAD(a + (c + j) * n + r + k),
                                                 VLOAD(b + (r + j) * n + c + k)));
        total += vsum(s);
    }
    return total;
}

/* a alone in runs of `run` floats from every row (a column band of a), `streams` rows read
 * line by line in lockstep: how fast the transposed operand can come in at best */
float diag_read_runs(const float * a, int64_t n, int run, int streams, int nth) {
    float total = 0;
    #pragma omp parallel num_threads(nth) reduction(+:total)
    {
        int64_t lo, hi;
        share(n / run, &lo, &hi);
        vec s = VZERO();
        for (int64_t u = lo; u < hi; u++) s = read_block(a + u * run, n, n, run, streams, s);
        total += vsum(s);
    }
    return total;
}

/* a and b by tiles of `tile` x `tile` (a's part: `tile` rows, runs of `tile` floats; b's the
 * same), each part read `streams` rows in lockstep: the best read order found for both
 * operands of a.T + b (runs of 4 KiB at tile 1024), if the tile could then be consumed from
 * the caches */
float diag_read_tiles(const float * a, const float * b, int64_t n, int tile, int streams, int nth) {
    float total = 0;
    #pragma omp parallel num_threads(nth) reduction(+:total)
    {
        int64_t lo, hi;
        share(n / tile, &lo, &hi);
        vec s = VZERO();
        for (int64_t u = lo; u < hi; u++)
            for (int64_t c0 = 0; c0 < n; c0 += tile) {
                s = read_block(a + c0 * n + u * tile, n, tile, tile, streams, s);
                s = read_block(b + u * tile * n + c0, n, tile, tile, streams, s);
            }
        total += vsum(s);
    }
    return total;
}

/* Row-block-major order: a strip of `rows` output rows (16 or 32) walked across every column:
 * b's rows read front to back in lockstep (long runs), a's column strip one line (rows = 16)
 * or two per source row, `pf` source rows ahead prefetched (0: none). The strips are dealt
 * to the threads in contiguous shares. */
float diag_read_strips(const float * a, const float * b, int64_t n, int rows, int pf, int nth) {
    float total = 0;
    #pragma omp parallel num_threads(nth) reduction(+:total)
    {
        int64_t lo, hi;
        share(n / rows, &lo, &hi);
        vec s = VZERO();
        for (int64_t u = lo; u < hi; u++) {
            const int64_t r = u * rows;
            for (int64_t c = 0; c < n; c += 16) {
                if (pf)
                    for (int j = 0; j < 16; j++) {
                        const int64_t jp = c + j + pf < n ? c + j + pf : n - 1;
                        for (int k = 0; k < rows; k += 16)
                            __builtin_prefetch(a + jp * n + r + k, 0, 3);
                    }
                for (int j = 0; j < 16; j++)
                    for (int k = 0; k < rows; k += VL)
                        s = VADD(s, VLOAD(a + (c + j) * n + r + k));
                for (int i = 0; i < rows; i++)
                    for (int k = 0; k < 16; k += VL)
                        s = VADD(s, VLOAD(b + (r + i) * n + c + k));
            }
        }
        total += vsum(s);
    }
    return total;
}
