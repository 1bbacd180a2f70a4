/* ggml_cy's own worker pool (pthreads), used by every parallel region of the CPU kernels
 * and the graph executor instead of OpenMP.
 *
 * Why not OpenMP: GNU libgomp's thread pool does not survive fork(). After the parent has
 * run one parallel region, a child made by fork() (multiprocessing's "fork" start method,
 * Dask's process scheduler, DataLoader workers, pre-forking servers) hangs forever in its
 * first parallel region, and libgomp cannot be re-initialised. This pool registers
 * pthread_atfork handlers: in the child the parent's workers (which do not exist there) are
 * forgotten and the next call starts fresh ones, so the child runs multithreaded and
 * correct right away, whichever thread forked (even while another thread of the parent was
 * inside a call: its team is simply abandoned in the child).
 *
 * Model: a caller asks for nth threads; it takes a *team* (nth-1 sleeping workers) from a
 * free list, or makes one, runs fn(arg, 0, nth) itself while workers 1..nth-1 run
 * fn(arg, i, nth), waits for them and puts the team back.
 *
 * Two kinds of job. gcy_pool_run: every thread ith < nth runs (static splits, barriers).
 * gcy_pool_run_dyn (issue 14, many cores): workers are optional helpers -- fn must finish
 * all the work when only ith 0 runs it (a shared chunk counter). When the caller is done it
 * closes the job and waits only for the workers that joined; a worker that wakes late (a
 * vCPU the hypervisor descheduled, a core busy with another process) finds the job closed
 * and skips it, instead of holding every call up by a scheduler time slice.
 * Joining is one compare-and-swap on the job word `st` = seq (32 bits, the job's gen) |
 * CLOSED | OPTIONAL | nth (14 bits) | active (16 bits): a worker joins only the job it
 * was woken for, still open, with its index < nth; the caller rewrites fn/arg only after
 * every joined worker has left. Several Python threads calling
 * at once take different teams (as OpenMP gives each master thread its own team). A call
 * from inside a team thread (nested) runs on the calling thread alone (nth = 1).
 * Workers spin briefly after a job (back-to-back calls stay cheap), then sleep on a
 * condition variable; they block every signal (Python's handlers run on the caller).
 *
 * gcy_pool_barrier(): all nth threads of the current job meet (the graph executor's
 * barrier between nodes). Spin, then sleep.
 */
#ifndef GGML_CY_POOL_H
#define GGML_CY_POOL_H

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GCY_PAUSE() _mm_pause()
#elif defined(__aarch64__)
#define GCY_PAUSE() __asm__ __volatile__("yield")
#else
#define GCY_PAUSE() ((void)0)
#endif

/* Sleeping and waking on Linux: a futex on the generation word itself. With a condition
 * variable, a broadcast wakes the sleepers but each must then take the mutex back in turn
 * (pthread_cond_wait returns holding it): at 16 threads the last worker of an eager call
 * started tens of microseconds after the first (issue 14: eager 1e6-element calls at 0.1-0.3x
 * torch on the 16-core host). FUTEX_WAKE of every waiter lets them all run at once. Elsewhere
 * the condition variable stays. */
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <limits.h>
#define GCY_USE_FUTEX 1
static void gcy_futex_wait(unsigned * addr, unsigned seen) {
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);   /* EAGAIN/EINTR: caller loops */
}
static void gcy_futex_wake_all(unsigned * addr) {
    syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
#else
#define GCY_USE_FUTEX 0
#endif

typedef void (*gcy_task_fn)(void * arg, int ith, int nth);

#define GCY_SEQ __ATOMIC_SEQ_CST
#define GCY_MAX_CACHED_TEAMS 8

typedef struct gcy_team {
    struct gcy_team * next_free;
    int n_workers;                 /* worker threads running (team size n_workers + 1) */
    int cap_workers;
    pthread_t * tids;
    /* cpus[i * GCY_CPU_STRIDE]: the CPU thread i of the team last ran a job on (-1: not
     * known), one cache line each; read when a worker checks whether it shares a CPU with
     * another member of its team (gcy_spread) */
    int * cpus;
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done, cv_bar;
    /* The words threads write while others spin, one cache line each (the struct is
     * 64-byte aligned, gcy_team_new). Sharing one line, every join CAS and every leave
     * decrement took the line away from all the workers spinning on gen, one after another:
     * on the 16-core host a 16-thread region touching one line per thread cost 6.3-7.3 us
     * that way and 3.5-3.7 us with them apart (bench/csrc/pool_probe.c, 3 alternations). */
    /* the current job (written by the caller before gen is bumped), and its generation:
     * workers spin on gen and then only read this line */
    unsigned gen __attribute__((aligned(64)));
    int sleepers;                  /* workers asleep on cv_work */
    int quit;
    gcy_task_fn fn;
    void * arg;
    int nth;
    int caller_cpu;                /* the CPU the caller posted the job from (-1: not known) */
    uint64_t st __attribute__((aligned(64)));   /* the job word (see above) */
    int pending __attribute__((aligned(64)));   /* required jobs: participants still running */
    /* barrier */
    int bar_count __attribute__((aligned(64)));
    unsigned bar_gen __attribute__((aligned(64)));
    int bar_sleepers;
} gcy_team;

typedef struct {
    gcy_team * team;
    int index;
    unsigned gen;                  /* the team's generation when the worker started */
} gcy_worker_arg;

static pthread_mutex_t gcy_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static gcy_team * gcy_free_teams = NULL;
static int gcy_n_cached = 0;
static unsigned gcy_fork_epoch = 0;     /* bumped in every fork child */
static int gcy_atfork_done = 0;
static int gcy_spin = 10000;            /* pause iterations before sleeping */
/* Barrier waits (the graph executor's, between nodes): after the pause spin, up to this long
 * of sched_yield() before sleeping. Why: in a VM whose vCPUs the host deschedules now and
 * then, a barrier wait outlasts the pause spin; the waiters then slept, every later barrier
 * paid futex wake-ups on the way back, and a 16-thread decode step went from 1.3-5 ms to
 * 35-44 ms (bimodal samples, GPU machine's host, device round R5). Yielding keeps the waiter
 * responsive while leaving the core to any runnable thread (on an oversubscribed 2-core
 * machine: the thread the barrier waits for), as OpenMP runtimes do before they block. */
static long long gcy_bar_yield_ns = 3000000;
/* Issue 14, waits after an idle spell. A worker waiting for its next job, and a caller
 * waiting for the workers that joined its job, yield the CPU once every gcy_yield_every
 * pauses of their spin, and after the spin keep yielding for gcy_job_yield_ns before they
 * sleep. Why: when two threads of a team share one CPU (see gcy_spread), a pausing waiter
 * holds the CPU the other needs until the scheduler preempts it, while a yield costs next
 * to nothing when the CPU has nothing else to run and hands it over at once when it has.
 * And a short spin then sleep made every call whose halves ended apart put the worker to
 * sleep again, with a new wake-up placement each time. bench/csrc/wake_probe.c, 2-core VM,
 * 2-thread 1e6 float32 add, 25 calls after each 50 ms idle, 12 rounds: pause spin then
 * sleep (before) 36-158 of 240 calls over 300 us, mean 200-549 us; with these yields 2-14,
 * mean 136-168; with gcy_spread too 1-7, mean 88-134 (one thread alone: ~150; OpenMP, which
 * spins ~8 ms there, 87-99). A yield every 64 pauses measured the same as every 256 there,
 * and every 1024 let co-located stretches back in. */
static long long gcy_job_yield_ns = 2000000;
static int gcy_yield_every = 256;       /* 0: the pause spin never yields */
static int gcy_this_cpu(void);
/* Pause step i of a spin yields: every gcy_yield_every-th step, but in the first four
 * periods (where a back-to-back call's new job usually arrives) only when the waiter sits
 * on near_cpu, the CPU its caller last posted from (-1: none). Why: a worker inside the
 * syscall sees a new job late. (On the 16-core host a bare 16-thread region measured
 * 0.3-0.6 us dearer than before these waits, with yields from the first period and with
 * the quiet periods alike, so that cost lies elsewhere.) On the 2-core VM a worker sharing
 * its caller's CPU wants to yield at once: quiet periods for it too made the 2-thread calls
 * of bench/csrc/wake_probe.c ~20-40% slower on average. */
static inline int gcy_spin_yields(int i, int near_cpu) {
    if (gcy_yield_every <= 0 || (i + 1) % gcy_yield_every != 0) return 0;
    return i >= 4 * gcy_yield_every || (near_cpu >= 0 && gcy_this_cpu() == near_cpu);
}
static __thread gcy_team * gcy_cur_team = NULL;
static __thread int gcy_cur_nth = 1;

static long long gcy_mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Waits until *gen moves from `seen` (or *quit is set). Returns 1 when it went to sleep on
 * the way (the scheduler then chose the CPU it woke on), 0 when spinning or yielding saw it. */
static int gcy_wait_gen(unsigned * gen, unsigned seen, int * sleepers,
                        pthread_mutex_t * mu, pthread_cond_t * cv, const int * quit,
                        long long yield_ns, const int * near_cpu) {
    int i;
    for (i = 0; i < gcy_spin; i++) {
        if (__atomic_load_n(gen, __ATOMIC_ACQUIRE) != seen) return 0;
        if (quit && __atomic_load_n(quit, __ATOMIC_ACQUIRE)) return 0;
        if (gcy_spin_yields(i, near_cpu ? __atomic_load_n(near_cpu, __ATOMIC_RELAXED) : -1))
            sched_yield();
        else
            GCY_PAUSE();
    }
    if (yield_ns > 0 && gcy_spin > 0) {
        const long long end = gcy_mono_ns() + yield_ns;
        do {
            if (__atomic_load_n(gen, __ATOMIC_ACQUIRE) != seen) return 0;
            if (quit && __atomic_load_n(quit, __ATOMIC_ACQUIRE)) return 0;
            sched_yield();
        } while (gcy_mono_ns() < end);
    }
#if GCY_USE_FUTEX
    /* sleepers goes up before gen is read again (both sequentially consistent) and the waker
     * bumps gen before it reads sleepers: either it sees this sleeper and wakes the futex, or
     * this thread sees the new gen (the kernel compares gen with seen before sleeping) */
    (void)mu; (void)cv;
    __atomic_add_fetch(sleepers, 1, GCY_SEQ);
    while (__atomic_load_n(gen, GCY_SEQ) == seen && !(quit && __atomic_load_n(quit, GCY_SEQ)))
        gcy_futex_wait(gen, seen);
    __atomic_sub_fetch(sleepers, 1, GCY_SEQ);
    return 1;
#else
    pthread_mutex_lock(mu);
    __atomic_add_fetch(sleepers, 1, GCY_SEQ);
    while (__atomic_load_n(gen, GCY_SEQ) == seen && !(quit && __atomic_load_n(quit, GCY_SEQ)))
        pthread_cond_wait(cv, mu);
    __atomic_sub_fetch(sleepers, 1, GCY_SEQ);
    pthread_mutex_unlock(mu);
    return 1;
#endif
}

static void gcy_wake(unsigned * gen, int * sleepers, pthread_mutex_t * mu,
                     pthread_cond_t * cv) {
    __atomic_add_fetch(gen, 1, GCY_SEQ);
    if (__atomic_load_n(sleepers, GCY_SEQ) > 0) {
#if GCY_USE_FUTEX
        (void)mu; (void)cv;
        gcy_futex_wake_all(gen);
#else
        pthread_mutex_lock(mu);
        pthread_cond_broadcast(cv);
        pthread_mutex_unlock(mu);
#endif
    }
}

#define GCY_ST_ACTIVE 0xffffull
#define GCY_ST_NTH_SHIFT 16
#define GCY_ST_NTH_MASK 0x3fffull
#define GCY_ST_OPTIONAL (1ull << 30)
#define GCY_ST_CLOSED (1ull << 31)

/* Joins job `g` of team t when it is still open and wants thread `index`; returns nth
 * (0: not joined). */
static int gcy_join(gcy_team * t, unsigned g, int index, int * optional) {
    uint64_t s = __atomic_load_n(&t->st, __ATOMIC_ACQUIRE);
    for (;;) {
        if ((unsigned)(s >> 32) != g || (s & GCY_ST_CLOSED)) return 0;
        int nth = (int)((s >> GCY_ST_NTH_SHIFT) & GCY_ST_NTH_MASK);
        if (index >= nth) return 0;
        if (__atomic_compare_exchange_n(&t->st, &s, s + 1, 0, GCY_SEQ, __ATOMIC_ACQUIRE)) {
            *optional = (s & GCY_ST_OPTIONAL) != 0;
            return nth;
        }
    }
}

/* --- two threads of one team on one CPU (issue 14).
 * A worker that slept is woken by the scheduler onto a CPU of its choosing, and Linux often
 * picks the waker's own: on the 2-core VM, after 50 ms idle, the worker of a 2-thread call
 * woke on the caller's CPU in about a third of the rounds and stayed there for 10-40 calls
 * (tens of ms, until the load balancer moved one of them). Each call then took ~900 us
 * instead of ~80 (one thread alone: ~150): the two time-slice one CPU, each spinning while
 * the other one needs it (seen with sched_getcpu() per thread per call; the figures with
 * and without this are at gcy_job_yield_ns).
 * So a worker looks at the CPU it runs on when it joins a job; when the caller posted the
 * job from the same CPU, or (after a sleep) another worker of the team last ran there, it
 * moves itself: its affinity mask briefly loses every CPU the team is on, which makes the
 * kernel migrate it at once, and is then put back as it was (the thread stays where it
 * landed). Never the caller: that is the user's thread. Rate-limited for a worker that did
 * not sleep (GCY_SPREAD_GAP_NS), so that more threads than CPUs (nothing to move to, or
 * two Python threads' teams sharing the cores) cost at most one look at the mask per gap. */
#if defined(__linux__) && defined(__USE_GNU) && defined(CPU_SET)
#define GCY_CPU_AWARE 1
#define GCY_CPU_STRIDE 16             /* ints: one 64-byte line per team member */
#define GCY_SPREAD_GAP_NS 10000000LL
static int gcy_spread_enabled = 1;    /* tests turn it off to compare; GGML_CY_POOL_SPREAD=0 */
static int gcy_spread_moves = 0;      /* migrations done (tests, probes) */

static int gcy_this_cpu(void) { return sched_getcpu(); }

static void gcy_spread(gcy_team * t, int me, int nth, int slept, long long * last_look) {
    if (!gcy_spread_enabled || t->cpus == NULL) return;
    int cpu = sched_getcpu(), j, clash;
    if (cpu < 0) return;
    clash = cpu == __atomic_load_n(&t->caller_cpu, __ATOMIC_RELAXED);
    for (j = 1; slept && !clash && j < nth; j++)
        clash = j != me && __atomic_load_n(&t->cpus[j * GCY_CPU_STRIDE], __ATOMIC_RELAXED) == cpu;
    if (clash && (slept || gcy_mono_ns() - *last_look >= GCY_SPREAD_GAP_NS)) {
        cpu_set_t mask, away;
        *last_look = gcy_mono_ns();
        if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
            memcpy(&away, &mask, sizeof mask);
            int c = __atomic_load_n(&t->caller_cpu, __ATOMIC_RELAXED);
            if (c >= 0 && c < CPU_SETSIZE) CPU_CLR(c, &away);
            for (j = 1; j < nth; j++) {
                c = __atomic_load_n(&t->cpus[j * GCY_CPU_STRIDE], __ATOMIC_RELAXED);
                if (j != me && c >= 0 && c < CPU_SETSIZE) CPU_CLR(c, &away);
            }
            if (CPU_ISSET(cpu, &away)) CPU_CLR(cpu, &away);   /* our own CPU, stale entry */
            if (CPU_COUNT(&away) > 0 && sched_setaffinity(0, sizeof away, &away) == 0) {
                sched_setaffinity(0, sizeof mask, &mask);
                __atomic_add_fetch(&gcy_spread_moves, 1, __ATOMIC_RELAXED);
                cpu = sched_getcpu();
            }
        }
    }
    if (__atomic_load_n(&t->cpus[me * GCY_CPU_STRIDE], __ATOMIC_RELAXED) != cpu)
        __atomic_store_n(&t->cpus[me * GCY_CPU_STRIDE], cpu, __ATOMIC_RELAXED);
}
#else
#define GCY_CPU_AWARE 0
#define GCY_CPU_STRIDE 16
static int gcy_spread_enabled = 0;
static int gcy_spread_moves = 0;
static int gcy_this_cpu(void) { return -1; }
static void gcy_spread(gcy_team * t, int me, int nth, int slept, long long * last_look) {
    (void)t; (void)me; (void)nth; (void)slept; (void)last_look;
}
#endif
static void gcy_pool_set_spread(int on) { gcy_spread_enabled = GCY_CPU_AWARE && on; }
static int gcy_pool_spread_enabled(void) { return gcy_spread_enabled; }
static int gcy_pool_spread_moves(void) { return __atomic_load_n(&gcy_spread_moves, __ATOMIC_RELAXED); }

static __thread int gcy_cur_index = 0;   /* this thread's index in its current job */
static __thread long long gcy_last_look = 0;

static void * gcy_worker_main(void * p) {
    gcy_worker_arg wa = *(gcy_worker_arg *)p;
    free(p);
    gcy_team * t = wa.team;
    unsigned seen = wa.gen;
    for (;;) {
        int slept = gcy_wait_gen(&t->gen, seen, &t->sleepers, &t->mu, &t->cv_work, &t->quit,
                                 gcy_job_yield_ns, &t->caller_cpu);
        if (__atomic_load_n(&t->quit, __ATOMIC_ACQUIRE)) break;
        seen = __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE);
        /* before joining: a worker stuck on the caller's CPU would otherwise never join an
         * optional job (the caller, holding the CPU, finishes it first) and never move */
        int posted_nth = __atomic_load_n(&t->nth, __ATOMIC_RELAXED);
        if (wa.index < posted_nth)
            gcy_spread(t, wa.index, posted_nth, slept, &gcy_last_look);
        int optional = 0;
        int nth = gcy_join(t, seen, wa.index, &optional);
        if (nth == 0) continue;       /* not wanted, or too late: the job never saw us */
        /* joined: fn/arg stay put until this worker leaves */
        gcy_cur_team = t;
        gcy_cur_nth = nth;
        gcy_cur_index = wa.index;
        t->fn(t->arg, wa.index, nth);
        gcy_cur_team = NULL;
        gcy_cur_nth = 1;
        gcy_cur_index = 0;
        int last;
        if (optional) {
            uint64_t after = __atomic_sub_fetch(&t->st, 1, GCY_SEQ);
            last = (after & GCY_ST_CLOSED) && (after & GCY_ST_ACTIVE) == 0;
        } else {
            __atomic_sub_fetch(&t->st, 1, GCY_SEQ);
            last = __atomic_sub_fetch(&t->pending, 1, GCY_SEQ) == 0;
        }
        if (last) {
            pthread_mutex_lock(&t->mu);
            pthread_cond_broadcast(&t->cv_done);
            pthread_mutex_unlock(&t->mu);
        }
    }
    return NULL;
}

/* Starts workers until the team has `want`; returns how many it has (fewer when the
 * system refuses threads). */
static int gcy_team_grow(gcy_team * t, int want) {
    if (want > t->cap_workers) {
        pthread_t * nt = (pthread_t *)realloc(t->tids, sizeof(pthread_t) * (size_t)want);
        if (!nt) return t->n_workers;
        t->tids = nt;
        /* no job runs while growing: nobody reads cpus now */
        void * nc = NULL;
        size_t line = sizeof(int) * GCY_CPU_STRIDE;
        if (posix_memalign(&nc, 64, line * (size_t)(want + 1)) == 0) {
            int i;
            for (i = 0; i <= want; i++) ((int *)nc)[i * GCY_CPU_STRIDE] = -1;
            if (t->cpus)
                for (i = 0; i <= t->cap_workers; i++)
                    ((int *)nc)[i * GCY_CPU_STRIDE] = t->cpus[i * GCY_CPU_STRIDE];
            free(t->cpus);
            t->cpus = (int *)nc;
        } else {          /* no memory for the hints: the team just does not spread */
            free(t->cpus);
            t->cpus = NULL;
        }
        t->cap_workers = want;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);   /* workers inherit "all blocked" */
    while (t->n_workers < want) {
        gcy_worker_arg * wa = (gcy_worker_arg *)malloc(sizeof(gcy_worker_arg));
        if (!wa) break;
        wa->team = t;
        wa->index = t->n_workers + 1;
        wa->gen = __atomic_load_n(&t->gen, GCY_SEQ);   /* no job runs while growing */
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 4u << 20);
        int rc = pthread_create(&t->tids[t->n_workers], &attr, gcy_worker_main, wa);
        pthread_attr_destroy(&attr);
        if (rc != 0) { free(wa); break; }
        t->n_workers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return t->n_workers;
}

static gcy_team * gcy_team_new(void) {
    void * p = NULL;
    if (posix_memalign(&p, 64, sizeof(gcy_team)) != 0) return NULL;   /* the hot lines */
    gcy_team * t = (gcy_team *)memset(p, 0, sizeof(gcy_team));
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv_work, NULL);
    pthread_cond_init(&t->cv_done, NULL);
    pthread_cond_init(&t->cv_bar, NULL);
    return t;
}

static void gcy_team_destroy(gcy_team * t) {
    int i;
    __atomic_store_n(&t->quit, 1, GCY_SEQ);
#if GCY_USE_FUTEX
    /* gen moves too: a worker that read quit = 0 just before and is about to sleep on
     * gen == seen then finds gen changed instead of sleeping forever */
    __atomic_add_fetch(&t->gen, 1, GCY_SEQ);
    gcy_futex_wake_all(&t->gen);
#endif
    pthread_mutex_lock(&t->mu);
    pthread_cond_broadcast(&t->cv_work);
    pthread_mutex_unlock(&t->mu);
    for (i = 0; i < t->n_workers; i++) pthread_join(t->tids[i], NULL);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv_work);
    pthread_cond_destroy(&t->cv_done);
    pthread_cond_destroy(&t->cv_bar);
    free(t->tids);
    free(t->cpus);
    free(t);
}

/* --- fork handling. prepare: hold the pool lock so the child never inherits it taken in
 * the middle of a free-list update; child: forget every team (their threads are not in
 * the child; the memory is leaked on purpose: a team that another parent thread was
 * using may be half-way through a job and must not be touched) and start over. */
static pthread_t gcy_main_thread;
static int gcy_main_known = 0;
static void gcy_set_main_thread(void) { gcy_main_thread = pthread_self(); gcy_main_known = 1; }
static int gcy_is_main_thread(void) {
    return gcy_main_known && pthread_equal(gcy_main_thread, pthread_self());
}

static void gcy_atfork_prepare(void) { pthread_mutex_lock(&gcy_pool_mu); }
static void gcy_atfork_parent(void) { pthread_mutex_unlock(&gcy_pool_mu); }
static void gcy_atfork_child(void) {
    pthread_mutex_init(&gcy_pool_mu, NULL);
    gcy_free_teams = NULL;
    gcy_n_cached = 0;
    gcy_fork_epoch++;
    gcy_cur_team = NULL;
    gcy_cur_nth = 1;
    gcy_set_main_thread();          /* Python makes the forking thread the child's main */
}

static void gcy_pool_init(int spin) {
    if (spin >= 0) gcy_spin = spin;
    if (!gcy_atfork_done) {
        gcy_atfork_done = 1;
        pthread_atfork(gcy_atfork_prepare, gcy_atfork_parent, gcy_atfork_child);
    }
}

static unsigned gcy_pool_fork_epoch(void) { return gcy_fork_epoch; }

/* Barrier waits' yield phase (gcy_bar_yield_ns); negative: leave it. */
static void gcy_pool_set_barrier_yield(long long ns) {
    if (ns >= 0) gcy_bar_yield_ns = ns;
}

/* The wait settings in force (tests): out = spin, job yield ns, yield period, barrier yield ns. */
static void gcy_pool_wait_settings(long long * out) {
    out[0] = gcy_spin;
    out[1] = gcy_job_yield_ns;
    out[2] = gcy_yield_every;
    out[3] = gcy_bar_yield_ns;
}

/* Job waits' yield phase (gcy_job_yield_ns) and the pause spin's yield period
 * (gcy_yield_every, 0: none); negative: leave it. */
static void gcy_pool_set_job_yield(long long ns, int every) {
    if (ns >= 0) gcy_job_yield_ns = ns;
    if (every >= 0) gcy_yield_every = every;
}

static int gcy_job_done(gcy_team * t, int optional) {
    if (optional)
        return (__atomic_load_n(&t->st, __ATOMIC_ACQUIRE) & GCY_ST_ACTIVE) == 0;
    return __atomic_load_n(&t->pending, __ATOMIC_ACQUIRE) == 0;
}

/* Runs fn(arg, ith, nth) on nth threads (the caller is ith 0). Returns the number of
 * threads used: nth, or fewer (down to 1) when threads could not be started or the call
 * is nested inside a job. fn must then cope with the smaller nth it is given.
 * optional: workers are helpers that may not come (gcy_pool_run_dyn). */
static int gcy_pool_run_impl(gcy_task_fn fn, void * arg, int nth, int optional) {
    if (nth <= 1 || gcy_cur_team != NULL) {
        gcy_team * saved = gcy_cur_team;
        int saved_nth = gcy_cur_nth;
        gcy_cur_team = NULL;
        gcy_cur_nth = 1;
        fn(arg, 0, 1);
        gcy_cur_team = saved;
        gcy_cur_nth = saved_nth;
        return 1;
    }
    gcy_team * t = NULL, ** pp;
    pthread_mutex_lock(&gcy_pool_mu);
    /* the smallest cached team that is big enough, else the biggest one (grown) */
    gcy_team ** best = NULL;
    for (pp = &gcy_free_teams; *pp; pp = &(*pp)->next_free) {
        if (!best) { best = pp; continue; }
        int have = (*pp)->n_workers, bh = (*best)->n_workers;
        if ((have >= nth - 1 && (bh < nth - 1 || have < bh)) || (bh < nth - 1 && have > bh))
            best = pp;
    }
    if (best) {
        t = *best;
        *best = t->next_free;
        t->next_free = NULL;
        gcy_n_cached--;
    }
    pthread_mutex_unlock(&gcy_pool_mu);
    if (!t) t = gcy_team_new();
    if (!t) { fn(arg, 0, 1); return 1; }
    int got = gcy_team_grow(t, nth - 1);
    if (got < nth - 1) nth = got + 1;
    if (nth > (int)GCY_ST_NTH_MASK) nth = (int)GCY_ST_NTH_MASK;
    if (nth > 1) {
        t->fn = fn;
        t->arg = arg;
        t->nth = nth;
        t->caller_cpu = gcy_this_cpu();
        t->bar_count = 0;
        __atomic_store_n(&t->pending, nth - 1, GCY_SEQ);
        /* no worker is inside a job here (the last one left before the previous call
         * returned), so the job word can be set outright; then gen goes to seq */
        unsigned seq = __atomic_load_n(&t->gen, GCY_SEQ) + 1;
        __atomic_store_n(&t->st, ((uint64_t)seq << 32) | (optional ? GCY_ST_OPTIONAL : 0)
                         | ((uint64_t)nth << GCY_ST_NTH_SHIFT), GCY_SEQ);
        gcy_wake(&t->gen, &t->sleepers, &t->mu, &t->cv_work);
        gcy_cur_team = t;
        gcy_cur_nth = nth;
        fn(arg, 0, nth);
        gcy_cur_team = NULL;
        gcy_cur_nth = 1;
        if (optional)      /* no worker joins from now on; wait for those inside */
            __atomic_fetch_or(&t->st, GCY_ST_CLOSED, GCY_SEQ);
        int i;
        for (i = 0; i < gcy_spin && !gcy_job_done(t, optional); i++) {
            if (gcy_spin_yields(i, -1)) sched_yield(); else GCY_PAUSE();
        }
        if (!gcy_job_done(t, optional) && gcy_job_yield_ns > 0 && gcy_spin > 0) {
            const long long end = gcy_mono_ns() + gcy_job_yield_ns;
            do sched_yield(); while (!gcy_job_done(t, optional) && gcy_mono_ns() < end);
        }
        if (!gcy_job_done(t, optional)) {
            pthread_mutex_lock(&t->mu);
            while (!gcy_job_done(t, optional))
                pthread_cond_wait(&t->cv_done, &t->mu);
            pthread_mutex_unlock(&t->mu);
        }
    } else {
        fn(arg, 0, 1);
    }
    /* back to the free list (unless a fork happened meanwhile: then this is the child,
     * and the team's workers do not exist here) */
    int keep = 0;
    pthread_mutex_lock(&gcy_pool_mu);
    if (gcy_n_cached < GCY_MAX_CACHED_TEAMS) {
        t->next_free = gcy_free_teams;
        gcy_free_teams = t;
        gcy_n_cached++;
        keep = 1;
    }
    pthread_mutex_unlock(&gcy_pool_mu);
    if (!keep) gcy_team_destroy(t);
    return nth;
}

static int gcy_pool_run(gcy_task_fn fn, void * arg, int nth) {
    return gcy_pool_run_impl(fn, arg, nth, 0);
}

/* Like gcy_pool_run, but workers 1..nth-1 are optional helpers: fn(arg, 0, nth) alone
 * must complete the job (work handed out from a shared counter), and fn must not call
 * gcy_pool_barrier. The caller waits only for the workers that joined before it finished. */
static int gcy_pool_run_dyn(gcy_task_fn fn, void * arg, int nth) {
    return gcy_pool_run_impl(fn, arg, nth, 1);
}

/* Test support for gcy_spread: the worker of a 2-thread team is put on the caller's CPU
 * (its own mask briefly narrowed to that CPU, then restored, so it may move again), and a
 * second job shows where it runs then. Fills out[0..3]: the caller's CPU, the worker's CPU
 * after the first job, the worker's CPU in the second job, migrations gcy_spread made in
 * between. Returns 0 (out untouched) where it cannot run: not Linux, fewer than 2 CPUs
 * allowed, or no worker started. */
typedef struct { int pin_to; int cpu[2]; } gcy_spread_probe;
static void gcy_spread_probe_fn(void * arg, int ith, int nth) {
    gcy_spread_probe * p = (gcy_spread_probe *)arg;
    (void)nth;
#if GCY_CPU_AWARE
    if (ith == 1 && p->pin_to >= 0) {
        cpu_set_t mask, one;
        if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
            CPU_ZERO(&one);
            CPU_SET(p->pin_to, &one);
            if (sched_setaffinity(0, sizeof one, &one) == 0) sched_setaffinity(0, sizeof mask, &mask);
        }
    }
#endif
    if (ith < 2) p->cpu[ith] = gcy_this_cpu();
}
static void gcy_noop_fn(void * arg, int ith, int nth) { (void)arg; (void)ith; (void)nth; }
static int gcy_pool_spread_selftest(int * out) {
#if GCY_CPU_AWARE
    cpu_set_t mask, one;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0 || CPU_COUNT(&mask) < 2) return 0;
    /* the team first, with the caller's full mask (workers inherit their creator's) */
    if (gcy_pool_run(gcy_noop_fn, NULL, 2) < 2) return 0;
    int c = sched_getcpu();
    if (c < 0) return 0;
    CPU_ZERO(&one);
    CPU_SET(c, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) return 0;   /* the caller stays on c */
    gcy_spread_probe p = {c, {-1, -1}};
    int moves0 = gcy_pool_spread_moves();
    int used = gcy_pool_run(gcy_spread_probe_fn, &p, 2);
    int staged = p.cpu[1];
    /* past the look-again gap of a worker that did not sleep (one that slept looks anyway) */
    struct timespec gap = {0, GCY_SPREAD_GAP_NS + 2000000};
    nanosleep(&gap, NULL);
    p.pin_to = -1;
    p.cpu[1] = -1;
    if (used == 2) used = gcy_pool_run(gcy_spread_probe_fn, &p, 2);
    sched_setaffinity(0, sizeof mask, &mask);
    if (used < 2) return 0;
    out[0] = c;
    out[1] = staged;
    out[2] = p.cpu[1];
    out[3] = gcy_pool_spread_moves() - moves0;
    return 1;
#else
    (void)out;
    return 0;
#endif
}

/* Barrier of the current job's threads (no-op outside a job or with one thread). */
static void gcy_pool_barrier(void) {
    gcy_team * t = gcy_cur_team;
    int nth = gcy_cur_nth;
    if (t == NULL || nth <= 1) return;
    unsigned g = __atomic_load_n(&t->bar_gen, GCY_SEQ);
    if (__atomic_add_fetch(&t->bar_count, 1, GCY_SEQ) == nth) {
        __atomic_store_n(&t->bar_count, 0, GCY_SEQ);
        gcy_wake(&t->bar_gen, &t->bar_sleepers, &t->mu, &t->cv_bar);
        return;
    }
    if (gcy_wait_gen(&t->bar_gen, g, &t->bar_sleepers, &t->mu, &t->cv_bar, NULL, gcy_bar_yield_ns,
                     NULL)
            && gcy_cur_index > 0)   /* a worker woken from sleep: see gcy_spread */
        gcy_spread(t, gcy_cur_index, nth, 1, &gcy_last_look);
}

/* Workers currently started over all cached teams (tests). */
static int gcy_pool_cached_workers(void) {
    int n = 0;
    gcy_team * t;
    pthread_mutex_lock(&gcy_pool_mu);
    for (t = gcy_free_teams; t; t = t->next_free) n += t->n_workers;
    pthread_mutex_unlock(&gcy_pool_mu);
    return n;
}

/* ggml_cy.threads(n) blocks: the calling thread's override of the default (0: none). */
static __thread int gcy_tl_threads = 0;
static int gcy_tl_threads_get(void) { return gcy_tl_threads; }
static void gcy_tl_threads_set(int n) { gcy_tl_threads = n; }

static int64_t gcy_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void gcy_store_i64(int64_t * p, int64_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }

#include "llc.h"   /* gcy_sysconf_llc */

#endif
