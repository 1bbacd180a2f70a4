/* The graph executor's barrier (issue 13 item 4, model helper): spin a while, then sleep on
 * a futex, with the spin budget adapted to how long waits really last.
 *
 * Why not the pool's barrier (gcy_pool.h): it spins a fixed 10000 pauses before sleeping.
 * On a machine whose cores are shared with other processes a waiting thread then burns a
 * core the late thread may be waiting for: decoding one token of a 100M-parameter model on
 * 2 threads took 37 ms with that spin and 10.8 ms with none (1 thread: 9.5 ms) on the
 * loaded 2-core development VM, while a quiet many-core host wants the spin (a futex wake
 * costs microseconds per barrier, a decode step has ~100 barriers).
 *
 * Adaptation (one budget per process, shared by every graph): a wait that ends while
 * spinning leaves the budget as it is; a wait that had to sleep doubles the budget (+64)
 * when the sleep was short (under GCY_GBAR_SHORT_NS: spinning a little longer would have
 * caught it) and halves it when the sleep was long (the other thread was not running:
 * spinning only took a core from it). Budget in pause iterations, 0..GCY_GBAR_MAX.
 *
 * No lost wake-up: a sleeper announces itself (sleepers, seq_cst) before it re-reads the
 * phase and futex-waits on it (the kernel checks the value again); the last thread to
 * arrive publishes the new phase (seq_cst) before it reads sleepers. */
#ifndef GGML_CY_GRAPH_BARRIER_H
#define GGML_CY_GRAPH_BARRIER_H
#include <limits.h>
#include <stdint.h>
#include <time.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#include <sched.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GCY_GBAR_PAUSE() _mm_pause()
#elif defined(__aarch64__)
#define GCY_GBAR_PAUSE() __asm__ __volatile__("yield")
#else
#define GCY_GBAR_PAUSE() ((void)0)
#endif

#define GCY_GBAR_MAX 16384
#define GCY_GBAR_START 4096
#define GCY_GBAR_SHORT_NS 50000

typedef struct {
    int count;          /* threads arrived in the current phase */
    unsigned phase;     /* bumped by the last arrival */
    int sleepers;       /* threads asleep (or about to be) on phase */
} gcy_gbar;

static int gcy_gbar_budget = GCY_GBAR_START;

static inline long long gcy_gbar_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void gcy_gbar_sleep(unsigned * addr, unsigned seen) {
#if defined(__linux__)
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
#else
    (void)addr; (void)seen;
    sched_yield();
#endif
}

static inline void gcy_gbar_wake(unsigned * addr) {
#if defined(__linux__)
    syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#else
    (void)addr;
#endif
}

static inline void gcy_gbar_init(gcy_gbar * b) {
    b->count = 0;
    b->phase = 0;
    b->sleepers = 0;
}

/* Every one of nth threads calls this; none returns before all have arrived. */
static inline void gcy_gbar_wait(gcy_gbar * b, int nth) {
    if (nth <= 1) return;
    const unsigned seen = __atomic_load_n(&b->phase, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == nth) {
        __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&b->phase, seen + 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&b->sleepers, __ATOMIC_SEQ_CST) > 0) gcy_gbar_wake(&b->phase);
        return;
    }
    const int budget = __atomic_load_n(&gcy_gbar_budget, __ATOMIC_RELAXED);
    for (int i = 0; i < budget; i++) {
        if (__atomic_load_n(&b->phase, __ATOMIC_ACQUIRE) != seen) return;
        GCY_GBAR_PAUSE();
    }
    const long long t0 = gcy_gbar_now();
    __atomic_add_fetch(&b->sleepers, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&b->phase, __ATOMIC_SEQ_CST) == seen) gcy_gbar_sleep(&b->phase, seen);
    __atomic_sub_fetch(&b->sleepers, 1, __ATOMIC_SEQ_CST);
    const long long waited = gcy_gbar_now() - t0;
    int nb = waited < GCY_GBAR_SHORT_NS ? budget * 2 + 64 : budget / 2;
    if (nb > GCY_GBAR_MAX) nb = GCY_GBAR_MAX;
    __atomic_store_n(&gcy_gbar_budget, nb, __ATOMIC_RELAXED);
}

static inline int gcy_gbar_get_budget(void) {
    return __atomic_load_n(&gcy_gbar_budget, __ATOMIC_RELAXED);
}
#endif
