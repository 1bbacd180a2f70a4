/* The bench's roofline loops (bench/roofline.py compiles this file and loads it with ctypes):
 * STREAM's add, plain and with non-temporal stores, and the fused a*b + c*d - e loop.
 *
 * Non-temporal stores:
 *
 * A plain store to a line that is not in cache first reads that line (write-allocate), so a
 * plain c = a + b moves 4 streams of bytes for every 3 it counts. _mm256_stream_ps writes
 * around the caches and skips that read: for arrays far larger than the last-level cache this
 * is the fastest add the machine can do, and it is one known way past a plain loop.
 * Without AVX the "non-temporal" functions fall back to plain loops and
 * GCY_ROOFLINE_HAVE_NT is 0, so the bench can say which one it measured. */
#include <stdint.h>

#ifdef __AVX__
#include <immintrin.h>
#define GCY_ROOFLINE_HAVE_NT 1
#else
#define GCY_ROOFLINE_HAVE_NT 0
#endif

/* c[i] = a[i] + b[i] for i in [0, n), streaming stores when AVX is there. */
static void add_f32_nt(const float *a, const float *b, float *c, int64_t n)
{
    int64_t i = 0;
#ifdef __AVX__
    /* _mm256_stream_ps needs a 32-byte aligned destination: peel the head. */
    while (i < n && ((uintptr_t)(c + i) & 31u) != 0) {
        c[i] = a[i] + b[i];
        i++;
    }
    for (; i + 8 <= n; i += 8) {
        __m256 va = _mm256_loadu_ps(a + i);
        __m256 vb = _mm256_loadu_ps(b + i);
        _mm256_stream_ps(c + i, _mm256_add_ps(va, vb));
    }
    _mm_sfence(); /* streaming stores are weakly ordered: publish them before returning */
#endif
    for (; i < n; i++)
        c[i] = a[i] + b[i];
}

/* out[i] = a[i]*b[i] + c[i]*d[i] - e[i], the graph bench's fused-loop roofline. */
static void fused_abcde_f32_nt(const float *a, const float *b,
                                                   const float *c, const float *d,
                                                   const float *e, float *out, int64_t n)
{
    int64_t i = 0;
#ifdef __AVX__
    while (i < n && ((uintptr_t)(out + i) & 31u) != 0) {
        out[i] = a[i] * b[i] + c[i] * d[i] - e[i];
        i++;
    }
    for (; i + 8 <= n; i += 8) {
        __m256 ab = _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        __m256 cd = _mm256_mul_ps(_mm256_loadu_ps(c + i), _mm256_loadu_ps(d + i));
        __m256 r = _mm256_sub_ps(_mm256_add_ps(ab, cd), _mm256_loadu_ps(e + i));
        _mm256_stream_ps(out + i, r);
    }
    _mm_sfence();
#endif
    for (; i < n; i++)
        out[i] = a[i] * b[i] + c[i] * d[i] - e[i];
}

int gcy_roofline_have_nt(void) { return GCY_ROOFLINE_HAVE_NT; }

/* Each thread takes one contiguous block, as ggml splits rows; blocks start on a multiple of
 * 16 floats (64 bytes) so that only the first needs a scalar head before aligned stores. */
static int64_t block_of(int64_t n, int nth) { return ((n + nth - 1) / nth + 15) / 16 * 16; }

/* c = a + b on n floats with nth threads: a plain loop (what a compiler makes of it) or
 * non-temporal stores. */
void gcy_roofline_add_f32(const float *a, const float *b, float *c, int64_t n, int nth, int nt)
{
    if (!nt) {
        #pragma omp parallel for schedule(static) num_threads(nth)
        for (int64_t i = 0; i < n; i++)
            c[i] = a[i] + b[i];
        return;
    }
    int64_t dr = block_of(n, nth);
    #pragma omp parallel for schedule(static) num_threads(nth)
    for (int ith = 0; ith < nth; ith++) {
        int64_t i0 = dr * ith, i1 = i0 + dr < n ? i0 + dr : n;
        if (i0 < i1)
            add_f32_nt(a + i0, b + i0, c + i0, i1 - i0);
    }
}

/* out = a*b + c*d - e in one pass (a speed bound, not a reference: the plain loop may be
 * contracted into FMAs). */
void gcy_roofline_fused_abcde_f32(const float *a, const float *b, const float *c,
                                  const float *d, const float *e, float *out, int64_t n,
                                  int nth, int nt)
{
    if (!nt) {
        #pragma omp parallel for schedule(static) num_threads(nth)
        for (int64_t i = 0; i < n; i++)
            out[i] = a[i] * b[i] + c[i] * d[i] - e[i];
        return;
    }
    int64_t dr = block_of(n, nth);
    #pragma omp parallel for schedule(static) num_threads(nth)
    for (int ith = 0; ith < nth; ith++) {
        int64_t i0 = dr * ith, i1 = i0 + dr < n ? i0 + dr : n;
        if (i0 < i1)
            fused_abcde_f32_nt(a + i0, b + i0, c + i0, d + i0, e + i0, out + i0, i1 - i0);
    }
}

/* ---- copy (bench/quant.py: the dequantize roofline) ----------------------------------
 * c[i] = a[i] on n floats with nth threads, plain or with non-temporal stores: the
 * fastest "read this, write that" loop, to which a dequantizer (read blocks, write floats)
 * is compared in bytes moved per second. */
static void copy_f32_nt(const float *a, float *c, int64_t n)
{
    int64_t i = 0;
#ifdef __AVX__
    while (i < n && ((uintptr_t)(c + i) & 31u) != 0) {
        c[i] = a[i];
        i++;
    }
    for (; i + 8 <= n; i += 8)
        _mm256_stream_ps(c + i, _mm256_loadu_ps(a + i));
    _mm_sfence();
#endif
    for (; i < n; i++)
        c[i] = a[i];
}

void gcy_roofline_copy_f32(const float *a, float *c, int64_t n, int nth, int nt)
{
    if (!nt) {
        #pragma omp parallel for schedule(static) num_threads(nth)
        for (int64_t i = 0; i < n; i++)
            c[i] = a[i];
        return;
    }
    int64_t dr = block_of(n, nth);
    #pragma omp parallel for schedule(static) num_threads(nth)
    for (int ith = 0; ith < nth; ith++) {
        int64_t i0 = dr * ith, i1 = i0 + dr < n ? i0 + dr : n;
        if (i0 < i1)
            copy_f32_nt(a + i0, c + i0, i1 - i0);
    }
}

/* ---- fill (bench/quant.py: the write-only bound of a dequantizer) ---------------------
 * c[i] = v on n floats with nth threads, non-temporal when AVX is there: only the writes
 * of a copy, so no dequantizer writing the same float32 output can be faster (qcpu2). */
static void fill_f32_nt(float *c, float v, int64_t n)
{
    int64_t i = 0;
#ifdef __AVX__
    const __m256 vv = _mm256_set1_ps(v);
    while (i < n && ((uintptr_t)(c + i) & 31u) != 0)
        c[i++] = v;
    for (; i + 8 <= n; i += 8)
        _mm256_stream_ps(c + i, vv);
    _mm_sfence();
#endif
    for (; i < n; i++)
        c[i] = v;
}

void gcy_roofline_fill_f32(float *c, float v, int64_t n, int nth)
{
    int64_t dr = block_of(n, nth);
    #pragma omp parallel for schedule(static) num_threads(nth)
    for (int ith = 0; ith < nth; ith++) {
        int64_t i0 = dr * ith, i1 = i0 + dr < n ? i0 + dr : n;
        if (i0 < i1)
            fill_f32_nt(c + i0, v, i1 - i0);
    }
}
