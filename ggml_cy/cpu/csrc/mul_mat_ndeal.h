/* Float mul_mat on a few threads (2..MM_NDEAL_MAX_THREADS) with its tasks dealt and no
 * packing added (issue 14; included at the end of mul_mat.h).
 *
 * Why: with ggml's static split each of 2 threads owns half of dst, and a call lasts as long
 * as its slower thread. On the 16-core host of the GPU machines one core often runs 10-25%
 * slower than another for a while (bench/results/mmpairs-xeon-w27.txt: one thread runs
 * 3.4-3.6 ms at best on every CPU, but 2-thread medians spread 7.4-13.3 ms with the busiest
 * thread up to 23% above the average), which is where the 2-thread 1024^3 misses against
 * torch came from. Dealing small tasks from a counter (mm_compute_dealt) evens that out,
 * but there each task packs its own panels, so finer tasks pack more (2 threads: 1-3%
 * slower on a quiet host, rounds w12/w13), and packing once for all threads (shared panels)
 * made every task wait for a thread that was descheduled while packing (withdrawn, rounds
 * w24-w26).
 *
 * So here one operand stays whole in each thread's scratch: the tasks are thin slices of
 * the other operand, and a thread packs the whole operand once, in its first task, as the
 * static split's thread packs its half of dst's operand anyway:
 *  - packed path (mm_task's blocking): tasks are chunks of b's rows (N); the thread's first
 *    task packs all of a (every MM_NC x MM_KC block) into its copy; every task packs its own
 *    b rows once per K block (the static split packs b once per M block instead).
 *  - thin path (24..64 rows of b, mul_mat_thin.h): tasks are chunks of a's rows (M, read
 *    where they lie); the thread's first task packs all of b into its copy.
 * Tasks are dealt with mm_deal_next (each thread's own share first, then what is left of
 * the others'). Every dst element is computed as on the other paths (per K block an FMA
 * chain from zero, the blocks' sums added in order): the bits do not change.
 * Not taken (mm_ndeal_plan_of returns 0): batched products, bf16 weights, the mat-vec, and
 * a whole operand over MM_NDEAL_MAX_PRE floats (then the static split). */
#ifndef GGML_CY_MUL_MAT_NDEAL_H
#define GGML_CY_MUL_MAT_NDEAL_H

#ifndef MM_NDEAL_MAX_THREADS
#define MM_NDEAL_MAX_THREADS 4
#endif
#define MM_NDEAL_MAX_PRE ((size_t)1 << 21)   /* floats (8 MiB) of one thread's copy */

/* Each thread's share of the sliced dimension is cut into MM_NDEAL_STEPS tasks that shrink
 * towards its end (cumulative 16ths of the share below): the big ones keep the cost of
 * reading the whole operand's copy per task low (on the 2-core VM, 1024^3 at 2 threads with
 * equal tasks of 64 / 128 / 192 rows of b took 5% / 2% / 0% more thread time than the static
 * split), the small last ones let a thread that is ahead take little pieces of another's
 * share. */
#ifndef MM_NDEAL_STEPS
#define MM_NDEAL_STEPS 5
#define MM_NDEAL_CUM16 {6, 12, 14, 15, 16}
#endif
static const int mm_ndeal_cum16[MM_NDEAL_STEPS] = MM_NDEAL_CUM16;

typedef struct {
    int thin;          /* 1: thin path (mul_mat_thin.h), 0: packed path (mm_task's blocking) */
    int64_t dim;       /* the sliced dimension: M (a's rows) */
    int64_t unit;      /* slices are whole multiples of this many rows (the tile's side) */
    int64_t ntasks;    /* nth x MM_NDEAL_STEPS */
    size_t pre;        /* floats of the thread's copy of the whole operand */
} mm_ndeal_plan;

/* 1 (and *p filled) when dst on nth threads takes this path. */
static inline int mm_ndeal_plan_of(const ggml_tensor * dst, int nth, mm_ndeal_plan * p) {
    const ggml_tensor * a = dst->src[0];
    const int64_t M = dst->ne[0], N = dst->ne[1], K = a->ne[0];
    if (nth < 2 || nth > MM_NDEAL_MAX_THREADS) return 0;
    if (a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16) return 0;
    if (dst->ne[2] * dst->ne[3] != 1 || M <= 0 || N <= 0 || K <= 0) return 0;
    if (mm_use_gemv(dst)) return 0;
    p->ntasks = (int64_t)nth * MM_NDEAL_STEPS;
    p->dim = M;
#if defined(MM_AVX512)
    if (mm_thin_takes(a->type, N)) {
        p->thin = 1;
        p->unit = MM_THIN_MR;
        p->pre = mm_thin_pre_floats(N, K);
    } else
#endif
    {
        p->thin = 0;
        p->unit = MM_NR;
        p->pre = (size_t)mm_cdiv(K, MM_KC) * (size_t)(mm_cdiv(N, MM_MR) * MM_MR) * MM_KC;
    }
    /* at least 4 tiles' rows in each thread's share */
    return mm_cdiv(p->dim, p->unit) >= 4 * (int64_t)nth && p->pre <= MM_NDEAL_MAX_PRE;
}

/* Task t's rows [*lo, *hi) of the sliced dimension (empty when *lo >= *hi). */
static inline void mm_ndeal_rows(const mm_ndeal_plan * p, int nth, int64_t t, int64_t * lo,
                                 int64_t * hi) {
    const int64_t r = t / MM_NDEAL_STEPS, s = t % MM_NDEAL_STEPS;
    const int64_t units = mm_cdiv(p->dim, p->unit);
    const int64_t u0 = units * r / nth, n = units * (r + 1) / nth - u0;
    const int64_t a = u0 + (s == 0 ? 0 : n * mm_ndeal_cum16[s - 1] / 16);
    const int64_t b = u0 + n * mm_ndeal_cum16[s] / 16;
    *lo = a * p->unit < p->dim ? a * p->unit : p->dim;
    *hi = b * p->unit < p->dim ? b * p->unit : p->dim;
}

/* 1 when dst on nth threads takes this path (the callers then run mm_compute_dealt with
 * mm_work_floats_for's scratch). */
static inline int mm_ndeal_takes(const ggml_tensor * dst, int nth) {
    mm_ndeal_plan p;
    return mm_ndeal_plan_of(dst, nth, &p);
}

/* Floats of scratch per thread for dst on nth threads: mm_work_floats_per_thread(), plus the
 * copy of the whole operand where this path is taken. */
static inline size_t mm_work_floats_for(const ggml_tensor * dst, int nth) {
    mm_ndeal_plan p;
    const size_t base = mm_work_floats_per_thread();
    return mm_ndeal_plan_of(dst, nth, &p) ? base + p.pre + 16 : base;
}

/* The most mm_work_floats_for(dst, t) over t = 1..nth (a graph plans its scratch before it
 * knows how many threads a step gets). */
static inline size_t mm_work_floats_upto(const ggml_tensor * dst, int nth) {
    size_t most = mm_work_floats_per_thread();
    for (int t = 2; t <= nth && t <= MM_NDEAL_MAX_THREADS; t++) {
        const size_t w = mm_work_floats_for(dst, t);
        if (w > most) most = w;
    }
    return most;
}

/* The thread's copy of the whole operand: after the base scratch, 64-byte aligned. */
static inline float * mm_ndeal_pre(float * work) {
    return (float *)(((uintptr_t)(work + mm_work_floats_per_thread()) + 63) & ~(uintptr_t)63);
}

/* A packed-path task: dst columns [m_lo, m_hi), every row. pre: the thread's copy of b,
 * block (ic, pc) at pre + (pc / MM_KC) * npad * MM_KC + ic * MM_KC (each block at most
 * MM_MC x MM_KC floats), packed here when ready is 0. */
static inline void mm_task_pre(const ggml_tensor * dst, int64_t m_lo, int64_t m_hi,
                               float * work, float * pre, int ready) {
    const ggml_tensor * src0 = dst->src[0], * src1 = dst->src[1];
    const int64_t K = src0->ne[0], N = dst->ne[1];
    const int64_t npad = mm_cdiv(N, MM_MR) * MM_MR;
    const int64_t ldc = dst->nb[1] / 4;
    float * ap = (float *)(((uintptr_t)work + 63) & ~(uintptr_t)63);
    float * tmp = ap + (size_t)MM_NC * MM_KC;   /* mm_pack_a's row scratch */
    for (int64_t pc = 0; pc < K; pc += MM_KC) {
        const int64_t kb = (K - pc < MM_KC) ? K - pc : MM_KC;
        for (int64_t jc = m_lo; jc < m_hi; jc += MM_NC) {
            const int64_t mb = (m_hi - jc < MM_NC) ? m_hi - jc : MM_NC;
            mm_pack_a((const char *)src0->data, src0->type, src0->nb[0], src0->nb[1], jc, mb,
                      pc, kb, ap, tmp);
            for (int64_t ic = 0; ic < N; ic += MM_MC) {
                const int64_t nbk = (N - ic < MM_MC) ? N - ic : MM_MC;
                float * bq = pre + (pc / MM_KC) * npad * MM_KC + ic * MM_KC;
                if (!ready && jc == m_lo)
                    mm_pack_b((const char *)src1->data, src1->nb[0], src1->nb[1], ic, nbk, pc,
                              kb, bq);
                mm_block_tiles(0, kb, bq, ap, (float *)((char *)dst->data + ic * dst->nb[1]) + jc,
                               ldc, nbk, mb, pc > 0);
            }
        }
    }
}

/* Thread ith's part of dst on this path (mm_ndeal_takes(dst, nth)): tasks dealt from ctrs
 * (mm_deal_next's counters, zero before the job); work: mm_work_floats_for(dst, nth)
 * floats. Workers may be optional helpers (gcy_pool_run_dyn): whoever runs finishes. */
static inline void mm_compute_ndeal(const ggml_tensor * dst, int64_t * ctrs, int ith, int nth,
                                    float * work) {
    mm_ndeal_plan p;
    if (!mm_ndeal_plan_of(dst, nth, &p)) return;
    float * pre = mm_ndeal_pre(work);
    int ready = 0, step = 0;
    for (int64_t t; (t = mm_deal_next(ctrs, p.ntasks, ith, nth, &step)) >= 0; ) {
        int64_t lo, hi;
        mm_ndeal_rows(&p, nth, t, &lo, &hi);
        if (lo >= hi) continue;
#if defined(MM_AVX512)
        if (p.thin)
            mm_thin_task(dst, (const char *)dst->src[0]->data, (const char *)dst->src[1]->data,
                         (char *)dst->data, dst->src[0]->ne[0], lo, hi, 0, dst->ne[1], work,
                         pre, ready);
        else
#endif
            mm_task_pre(dst, lo, hi, work, pre, ready);
        ready = 1;
    }
}

#endif
