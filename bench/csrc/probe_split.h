/* Developer probes (not shipped): ggml_cy's dynamic split (dyn_worker in
 * ggml_cy/cpu/_kernels.pyx.tp) in plain C, shared by add_probe.c, wake_probe.c and add_lib.c.
 * nch chunks are cut into one contiguous range per thread, each with its own counter
 * (ctr[r * 8]: one cache line each); thread ith takes the chunks of its own range first,
 * then what is left of the others' (a drained range is skipped after a load, without a
 * read-for-ownership of its line). run(ctx, c) does chunk c. The caller zeroes the nth
 * counters before each job. */
#ifndef GCY_PROBE_SPLIT_H
#define GCY_PROBE_SPLIT_H

static void probe_dyn_split(long * ctr, int ith, int nth, long nch,
                            void (*run)(void * ctx, long c), void * ctx) {
    for (int step = 0; step < nth; step++) {
        int r = (ith + step) % nth;
        long lo = r * nch / nth, hi = (r + 1) * nch / nth;
        if (step > 0 && __atomic_load_n(&ctr[r * 8], __ATOMIC_RELAXED) >= hi - lo) continue;
        for (;;) {
            long c = lo + __atomic_fetch_add(&ctr[r * 8], 1, __ATOMIC_RELAXED);
            if (c >= hi) break;
            run(ctx, c);
        }
    }
}

#endif
