/* Non-temporal write-out for the fused executor: a large fused output is computed into a
 * cache-resident block and then streamed to memory, skipping the read-for-ownership of
 * every output line (about 1/7 of the traffic of a*b + c*d - e). */
#ifndef GGML_CY_FUSED_STREAM_H
#define GGML_CY_FUSED_STREAM_H
#include <stdint.h>
#include <string.h>
#if defined(__AVX__)
#include <immintrin.h>
#endif

static inline void gcy_stream_store(char * dst, const char * src, int64_t nbytes) {
#if defined(__AVX__)
    /* whole 64-byte lines only: a line that a neighbouring piece also writes (an unaligned
     * head or tail) takes plain stores from both sides, never a mix of both kinds */
    int64_t head = (int64_t)((64u - ((uintptr_t)dst & 63u)) & 63u);
    if (head > nbytes) head = nbytes;
    memcpy(dst, src, (size_t)head);
    int64_t i = head;
    for (; i + 64 <= nbytes; i += 64) {
        _mm256_stream_ps((float *)(dst + i), _mm256_loadu_ps((const float *)(src + i)));
        _mm256_stream_ps((float *)(dst + i + 32), _mm256_loadu_ps((const float *)(src + i + 32)));
    }
    memcpy(dst + i, src + i, (size_t)(nbytes - i));
#else
    memcpy(dst, src, (size_t)nbytes);
#endif
}

/* Orders this thread's streamed stores before the barrier that follows the group. */
static inline void gcy_stream_fence(void) {
#if defined(__AVX__)
    _mm_sfence();
#endif
}
#endif
