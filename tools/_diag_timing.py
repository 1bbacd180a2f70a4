"""The block timer the diag tools share (diag_threads, diag_rows16, diag_fused16): two
warm calls, then `samples` batches of calls sized to about `batch_s` seconds each (at most
`max_reps` calls); returns the median time per call in microseconds."""
import statistics
import time


def block(fn, batch_s=2e-3, max_reps=200, samples=11):
    fn(); fn()
    t0 = time.perf_counter(); fn(); one = time.perf_counter() - t0
    reps = max(1, min(max_reps, int(batch_s / max(one, 1e-7))))
    xs = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        xs.append((time.perf_counter() - t0) / reps)
    return statistics.median(xs) * 1e6
