/* (issue 14) Packed panels shared by the threads of one float mul_mat (BLIS packs a block
 * once for the threads that use it; this is the same saving without a barrier).
 *
 * mm_task packs what its part needs into the thread's own scratch: the K blocks of its rows
 * of a (32-row panels) and of its rows of b (8-row panels). Tasks that share an M part (or
 * an N part) pack the same panels again: with the 8 x 8 dealt grid of 1024^3 at 16 threads
 * each panel of a and of b was packed 8 times, and with the 2 x 1 static split at 2 threads
 * each panel of b twice. Here every panel of the product is packed once, into one area that
 * holds them all (a: K block p, panel j at a + p*KC*ma*NR + j*NR*kb; b likewise with units
 * of two 8-row panels), by the first task that needs it.
 *
 * Each unit (one 32-row panel of a, or two 8-row panels of b, of one K block) has a flag:
 * 0 free, 1 being packed, 2 packed. A task about to use a range of units claims the free
 * ones (compare-and-swap 0 -> 1), packs them and marks them 2 (release), then waits for the
 * ones other threads claimed (acquire) -- a bounded wait: when one is not packed within
 * MM_SHARE_SPINS pauses (its packer descheduled, its core busy with another process), the
 * task packs that block into its own scratch as without sharing. So no thread waits long
 * for another, there is no barrier, and a thread that never comes (an optional helper of
 * pool_run_dyn) holds nothing up. The flags are zero before the job (the caller clears them
 * with the task counters).
 *
 * The panels hold exactly what mm_task packs for itself (a task's M and N parts are whole
 * panels: their bounds are multiples of MM_NR and MM_MR, or the matrix's end), and the
 * micro-kernels read them in the same order, so the bits do not change (tests compare).
 *
 * Used where the tasks are dealt (_kernels.mm_deals: from 9 threads on), by the eager
 * product and by a graph whose only working step is the product. On the 16-core host
 * (round w24, bench/results/mmshare-xeon-w24.jsonl, bench/csrc/mm_tune.c, medians of two
 * rounds, 16 threads, dealt grid): 2048^3 f32 13.0 / 13.0 -> 11.9 / 11.8 ms, f16 12.8 / 11.7
 * -> 12.5 / 11.4; 1024^3 f16 1.76 / 1.71 -> 1.65 / 1.59, f32 1.90 / 1.78 -> 1.66 / 1.81. At 2
 * threads (static split) it lost 0-5% (the 2-core VM: 1024^3 6.85 -> 7.2 ms): half of the
 * panels a thread reads were packed in the other core's cache, and only b's were packed
 * twice before. */
#ifndef GGML_CY_MUL_MAT_SHARE_H
#define GGML_CY_MUL_MAT_SHARE_H
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#define MM_SHARE_BU (2 * MM_MR)          /* rows of b per unit: one 16-row transpose */
/* At most this many bytes of packed panels: the product's a and b, f32 (1024^3: 8 MiB). */
#ifndef MM_SHARE_MAX_BYTES
#define MM_SHARE_MAX_BYTES ((size_t)32 << 20)
#endif

typedef struct {
    float * a, * b;                /* the packed panels */
    int32_t * fa, * fb;            /* their flags: K block p, unit u at p * units + u */
    int64_t ma, nq;                /* units of a (32-row panels), of b (16-row pairs) */
} mm_share;

static inline int64_t mm_share_kblocks(int64_t K) { return (K + MM_KC - 1) / MM_KC; }

/* Floats of packed panels and flags (int32) of dst's product. */
static inline size_t mm_share_floats(const ggml_tensor * dst) {
    const int64_t M = dst->ne[0], N = dst->ne[1], K = dst->src[0]->ne[0];
    const int64_t ma = (M + MM_NR - 1) / MM_NR, nq = (N + MM_SHARE_BU - 1) / MM_SHARE_BU;
    return (size_t)(ma * MM_NR + nq * MM_SHARE_BU) * (size_t)K;
}
static inline size_t mm_share_flags(const ggml_tensor * dst) {
    const int64_t M = dst->ne[0], N = dst->ne[1], K = dst->src[0]->ne[0];
    const int64_t ma = (M + MM_NR - 1) / MM_NR, nq = (N + MM_SHARE_BU - 1) / MM_SHARE_BU;
    return (size_t)((ma + nq) * mm_share_kblocks(K));
}

/* 1 when a float mul_mat on nth threads shares its packed panels: two or more threads, one
 * batch matrix, F32 / F16 weights (BF16 packs in its own orders), K > 0, and panels of at most
 * MM_SHARE_MAX_BYTES. The caller has ruled out the mat-vec path and AMX. */
static inline int mm_share_applies(const ggml_tensor * dst, int nth) {
    const ggml_tensor * src0 = dst->src[0];
    if (nth < 2 || dst->ne[2] * dst->ne[3] != 1 || src0->ne[0] <= 0) return 0;
    if (src0->type != GGML_TYPE_F32 && src0->type != GGML_TYPE_F16) return 0;
    if (dst->ne[0] <= 0 || dst->ne[1] <= 0) return 0;
    return mm_share_floats(dst) * 4 <= MM_SHARE_MAX_BYTES;
}

/* Lays sh out over data (mm_share_floats floats, 64-byte aligned) and flags
 * (mm_share_flags int32s, zero). */
static inline void mm_share_at(mm_share * sh, const ggml_tensor * dst, float * data,
                               int32_t * flags) {
    const int64_t M = dst->ne[0], N = dst->ne[1], K = dst->src[0]->ne[0];
    sh->ma = (M + MM_NR - 1) / MM_NR;
    sh->nq = (N + MM_SHARE_BU - 1) / MM_SHARE_BU;
    sh->a = data;
    sh->b = data + (size_t)(sh->ma * MM_NR) * (size_t)K;
    sh->fa = flags;
    sh->fb = flags + (size_t)(sh->ma * mm_share_kblocks(K));
}

static inline int mm_share_claim(int32_t * f) {
    int32_t expect = 0;
    return __atomic_load_n(f, __ATOMIC_RELAXED) == 0
        && __atomic_compare_exchange_n(f, &expect, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* Waits up to MM_SHARE_SPINS pauses for a unit another thread packs (packing one takes a
 * few microseconds); 1 when it is packed, 0 when the wait ran out: the packer is slow or
 * descheduled (a busy core, more threads than cores), and the caller packs the block for
 * itself instead, so a thread never waits longer than that for another. */
#ifndef MM_SHARE_SPINS
#define MM_SHARE_SPINS 512
#endif
static inline int mm_share_ready(int32_t * f) {
    for (int spins = 0; __atomic_load_n(f, __ATOMIC_ACQUIRE) != 2; spins++) {
        if (spins >= MM_SHARE_SPINS) return 0;
#if defined(__SSE2__)
        _mm_pause();
#endif
    }
    return 1;
}

/* The packed K block [pc, pc + kb) of a's rows [m0, m0 + mb) (m0 a multiple of MM_NR): the
 * free units packed here, the others waited for; its first panel, or NULL when a unit
 * another thread claimed was not packed in time (the caller packs the block itself). */
static inline const float * mm_share_a(const mm_share * sh, const char * a, int type,
                                       int64_t nb00, int64_t nb01, int64_t M, int64_t m0,
                                       int64_t mb, int64_t pc, int64_t kb, float * tmp) {
    float * blk = sh->a + (size_t)(sh->ma * MM_NR) * (size_t)pc;
    int32_t * f = sh->fa + (pc / MM_KC) * sh->ma;
    const int64_t u0 = m0 / MM_NR, u1 = (m0 + mb + MM_NR - 1) / MM_NR;
    for (int64_t u = u0; u < u1; u++)
        if (mm_share_claim(f + u)) {
            const int64_t r0 = u * MM_NR, rows = M - r0 < MM_NR ? M - r0 : MM_NR;
            mm_pack_a(a, type, nb00, nb01, r0, rows, pc, kb, blk + r0 * kb, tmp);
            __atomic_store_n(f + u, 2, __ATOMIC_RELEASE);
        }
    for (int64_t u = u0; u < u1; u++)
        if (!mm_share_ready(f + u)) return NULL;
    return blk + m0 * kb;
}

/* The same for b's rows [n0, n0 + nbk) (n0 a multiple of MM_MR): its first 8-row panel, or
 * NULL. */
static inline const float * mm_share_b(const mm_share * sh, const char * b, int64_t nb10,
                                       int64_t nb11, int64_t N, int64_t n0, int64_t nbk,
                                       int64_t pc, int64_t kb) {
    float * blk = sh->b + (size_t)(sh->nq * MM_SHARE_BU) * (size_t)pc;
    int32_t * f = sh->fb + (pc / MM_KC) * sh->nq;
    const int64_t u0 = n0 / MM_SHARE_BU, u1 = (n0 + nbk + MM_SHARE_BU - 1) / MM_SHARE_BU;
    for (int64_t u = u0; u < u1; u++)
        if (mm_share_claim(f + u)) {
            const int64_t r0 = u * MM_SHARE_BU;
            const int64_t rows = N - r0 < MM_SHARE_BU ? N - r0 : MM_SHARE_BU;
            mm_pack_b(b, nb10, nb11, r0, rows, pc, kb, blk + r0 * kb);
            __atomic_store_n(f + u, 2, __ATOMIC_RELEASE);
        }
    for (int64_t u = u0; u < u1; u++)
        if (!mm_share_ready(f + u)) return NULL;
    return blk + n0 * kb;
}

#endif
