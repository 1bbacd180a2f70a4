/* ggml_cy CPU kernels: how many elements a contiguous row runs before its destination
 * reaches a 64-byte boundary (issue 14). Shared by the binary rows (kernels_stream.h), the
 * row template of _kernels and the SIMD math rows (simd_math.h).
 *
 * Why: numpy's large arrays start 16 bytes past a page, so every 64-byte vector store of a
 * row that starts there straddles two cache lines; operands at the destination's offset
 * (the usual case) line up with it once the head is done. 16-core host, one thread, float32
 * add: 1e5 elements at offset 16 took 24.6 us against 12.1 at offset 0
 * (tools/device/align_probe.py); this VM, one thread, exp float32 1e7: 4.97 ms at offset 16
 * against 4.06 ms at offset 0 before the math rows peeled. */
#ifndef GGML_CY_LINE_PEEL_H
#define GGML_CY_LINE_PEEL_H

#include <stdint.h>

/* Rows shorter than this run without a head (it would cost more than it saves). */
#define KERN_LINE_PEEL_MIN 256

/* Elements before d reaches a 64-byte boundary: 0 when d is there, is not element-aligned or
 * the row is shorter than KERN_LINE_PEEL_MIN; at most n. */
static inline int64_t kern_line_peel(const void * d, int64_t esize, int64_t n) {
    const int64_t off = (int64_t)((uintptr_t)d & 63u);
    if (n < KERN_LINE_PEEL_MIN || off == 0 || off % esize != 0) return 0;
    const int64_t k = (64 - off) / esize;
    return k < n ? k : n;
}

#endif
