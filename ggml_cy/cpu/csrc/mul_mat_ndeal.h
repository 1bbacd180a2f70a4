/* Float mul_mat on a few threads (2..MM_NDEAL_MAX_THREADS): the static split, or its tasks
 * dealt with one operand whole per thread while a thread lags (issue 14; included near the
 * end of mul_mat.h).
 *
 * Why: with ggml's static split each of 2 threads owns half of dst, and a call lasts as long
 * as its slower thread. On the 16-core host of the GPU machines one core often runs 10-25%
 * slower than another for a while (bench/results/mmpairs-xeon-w27.txt), and on any shared
 * machine a core may be busy with other work. Dealing small tasks from a counter
 * (mm_compute_dealt) evens that out, but there each task packs its own panels, so finer tasks
 * pack more, and packing once for all threads (shared panels) made every task wait for a
 * thread that was descheduled while packing (withdrawn, bench/results/mmshare-xeon-w24-w26.txt).
 *
 * Dealt here: the tasks are slices of a's rows (M) and a thread's first task packs the whole
 * of b into a copy in its scratch that its later tasks read, so no element is packed more
 * often than with the static split:
 *  - packed path (mm_task's blocking): every MM_KC x MM_MC block of b;
 *  - thin path (24..64 rows of b, mul_mat_thin.h): all of b's rows, a read where it lies.
 * The copy still costs: on a quiet host the package ran 2-18% slower dealt than split, the VM
 * 5-6% at 1024^3; with a core lagging, 3-37% faster (bench/results/mmndeal-xeon-w28-w32.txt).
 * So a call deals only while the static split has been seen to lag (mm_ndeal_decide): every
 * static call measures its lag (the time between the first thread going idle and the last
 * task's end, over the call's time), a running mean of it turns dealing on above
 * MM_NDEAL_LAG_ON and each dealt call lets it decay until a static call measures again.
 * Both ways take their tasks from the job's counters (mm_deal_next: each thread's own share
 * first), so a worker that never comes (gcy_pool_run_dyn) costs its share, not the result.
 * Every dst element is computed as on the other paths (per K block an FMA chain from zero,
 * the blocks' sums added in order): the bits do not depend on the choice.
 * Not taken (mm_ndeal_plan_of returns 0): batched products, bf16 weights, the mat-vec, a
 * whole operand over MM_NDEAL_MAX_PRE floats, and packed-path products with fewer than
 * MM_NDEAL_MIN_SHARE rows of a per thread (then the plain static split). */
#ifndef GGML_CY_MUL_MAT_NDEAL_H
#define GGML_CY_MUL_MAT_NDEAL_H

#include <time.h>

#ifndef MM_NDEAL_MAX_THREADS
#define MM_NDEAL_MAX_THREADS 4
#endif
#define MM_NDEAL_MAX_PRE ((size_t)1 << 21)   /* floats (8 MiB) of one thread's copy */
/* Packed path: at least this many of a's rows per thread. Each dealt task reads the whole
 * copy of b again, so a thread's share must be wide enough to pay for it: on the host
 * (round w32) dealt 1024^3 ran 9% slower than the split at 4 threads (256 rows a thread),
 * while 2048x512x1024 there (512 rows) ran 9% faster. */
#ifndef MM_NDEAL_MIN_SHARE
#define MM_NDEAL_MIN_SHARE 512
#endif

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
        if (M < MM_NDEAL_MIN_SHARE * (int64_t)nth) return 0;
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

/* The choice (see the top): permille thresholds of the running mean of the static split's
 * lag, which a static call moves halfway to its own measure and a dealt call decays by 1/8.
 * On the quiet 2-core VM the static split's busiest thread ran 1-2% above the average (a lag
 * of 2-4%); on the host's noisy rounds 3-29% (round w28). Per module (each extension that
 * includes this header keeps its own); relaxed atomics: two Python threads calling at once
 * only blur the mean. mm_ndeal_mode: -1 by the lag, 0 never deal, 1 always (tests, probes). */
#define MM_NDEAL_LAG_ON 120
#define MM_NDEAL_LAG_OFF 50
static int mm_ndeal_lag = 0;
static int mm_ndeal_on = 0;
static int mm_ndeal_mode = -1;

/* The job's words in ctrs' first line (mm_deal_next uses word 0 of each thread's line; the
 * whole area is zero before the job): the call's choice, its start, the first idle thread's
 * time, the static tasks done. */
#define MM_NDEAL_W_CHOICE 1
#define MM_NDEAL_W_START 2
#define MM_NDEAL_W_IDLE 3
#define MM_NDEAL_W_DONE 4

static inline int64_t mm_ndeal_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* This call's choice, made once by the first thread that asks: 2 deal, 1 split. */
static inline int mm_ndeal_decide(int64_t * ctrs) {
    const int64_t made = __atomic_load_n(ctrs + MM_NDEAL_W_CHOICE, __ATOMIC_ACQUIRE);
    if (made != 0) return (int)made;
    const int mode = __atomic_load_n(&mm_ndeal_mode, __ATOMIC_RELAXED);
    const int lag = __atomic_load_n(&mm_ndeal_lag, __ATOMIC_RELAXED);
    int on = __atomic_load_n(&mm_ndeal_on, __ATOMIC_RELAXED);
    if (on && lag < MM_NDEAL_LAG_OFF) on = 0;
    else if (!on && lag >= MM_NDEAL_LAG_ON) on = 1;
    const int64_t want = mode >= 0 ? (mode ? 2 : 1) : (on ? 2 : 1);
    int64_t expected = 0;
    /* the start is stored before the choice is published: the split's threads read it */
    if (want == 1) __atomic_store_n(ctrs + MM_NDEAL_W_START, mm_ndeal_now_ns(), __ATOMIC_RELAXED);
    if (!__atomic_compare_exchange_n(ctrs + MM_NDEAL_W_CHOICE, &expected, want, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return (int)expected;
    if (mode < 0) {
        __atomic_store_n(&mm_ndeal_on, on, __ATOMIC_RELAXED);
        if (want == 2) __atomic_store_n(&mm_ndeal_lag, lag - lag / 8, __ATOMIC_RELAXED);
    }
    return (int)want;
}

/* The static split (mm_grid's tasks, one share per thread) taken through the counters, its
 * lag measured by whoever completes the last task. */
static inline void mm_compute_split_timed(const ggml_tensor * dst, int64_t * ctrs, int ith,
                                          int nth, float * work) {
    int64_t gm, gn;
    mm_grid(dst->ne[0], dst->ne[1], dst->src[0]->ne[0], 1, nth, &gm, &gn);
    const mm_tasks g = mm_tasks_of(dst, gm, gn, MM_NR, MM_MR, 0, 1);   /* every task */
    int step = 0;
    for (int64_t t; (t = mm_deal_next(ctrs, g.t1, ith, nth, &step)) >= 0; ) {
        const mm_part p = mm_task_part(&g, t);
        mm_task(dst, p.i2, p.i3, p.m_lo, p.m_hi, p.n_lo, p.n_hi, work);
        if (__atomic_add_fetch(ctrs + MM_NDEAL_W_DONE, 1, __ATOMIC_ACQ_REL) == g.t1) {
            const int64_t end = mm_ndeal_now_ns();
            const int64_t t0 = __atomic_load_n(ctrs + MM_NDEAL_W_START, __ATOMIC_RELAXED);
            const int64_t idle = __atomic_load_n(ctrs + MM_NDEAL_W_IDLE, __ATOMIC_ACQUIRE);
            int64_t pm = 0;
            if (idle > 0 && t0 > 0 && end > t0 && end > idle)
                pm = (end - idle) * 1000 / (end - t0);
            if (pm > 1000) pm = 1000;
            const int old = __atomic_load_n(&mm_ndeal_lag, __ATOMIC_RELAXED);
            __atomic_store_n(&mm_ndeal_lag, (old + (int)pm) / 2, __ATOMIC_RELAXED);
        }
    }
    int64_t none = 0;   /* the first thread to find nothing left marks the time */
    __atomic_compare_exchange_n(ctrs + MM_NDEAL_W_IDLE, &none, mm_ndeal_now_ns(), 0,
                                __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* The dealt tasks: slices of M from ctrs (mm_deal_next), the thread's copy of b in work. */
static inline void mm_compute_ndeal_dealt(const ggml_tensor * dst, int64_t * ctrs, int ith,
                                          int nth, float * work) {
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

/* Thread ith's part of dst on this path (mm_ndeal_takes(dst, nth)): the static split or the
 * dealt tasks, as mm_ndeal_decide chooses for the call; ctrs: mm_deal_next's counters, zero
 * before the job; work: mm_work_floats_for(dst, nth) floats. Workers may be optional helpers
 * (gcy_pool_run_dyn): whoever runs finishes. */
static inline void mm_compute_ndeal(const ggml_tensor * dst, int64_t * ctrs, int ith, int nth,
                                    float * work) {
    if (mm_ndeal_decide(ctrs) == 2) mm_compute_ndeal_dealt(dst, ctrs, ith, nth, work);
    else mm_compute_split_timed(dst, ctrs, ith, nth, work);
}

/* Tests and probes: sets the choice's mode (-1 by the lag, 0 never deal, 1 always) and,
 * when lag >= 0, the running mean (permille; dealing off); returns the previous mode. */
static inline int mm_ndeal_set(int mode, int lag) {
    const int old = __atomic_exchange_n(&mm_ndeal_mode, mode, __ATOMIC_RELAXED);
    if (lag >= 0) {
        __atomic_store_n(&mm_ndeal_lag, lag, __ATOMIC_RELAXED);
        __atomic_store_n(&mm_ndeal_on, 0, __ATOMIC_RELAXED);
    }
    return old;
}

/* The running mean of the lag (permille) and whether dealing is on (tests, probes). */
static inline int mm_ndeal_lag_now(void) { return __atomic_load_n(&mm_ndeal_lag, __ATOMIC_RELAXED); }
static inline int mm_ndeal_on_now(void) { return __atomic_load_n(&mm_ndeal_on, __ATOMIC_RELAXED); }

#endif
