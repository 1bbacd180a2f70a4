"""Thread control for the eager numpy-style functions, evaluate and the graph.

Three levels, innermost wins:
  * a call's ``n_threads=`` argument (that call only);
  * ``with ggml_cy.threads(n):`` blocks: an override for the Python thread that runs the
    block (thread-local, so blocks in several Python threads never see or undo each
    other's settings; nested blocks unwind in order);
  * ``set_num_threads(n)``: the process-wide default every thread without a block uses.
``get_num_threads()`` answers for the calling thread (its block's value, else the default).

The threads themselves are ggml_cy's own pthread pool (ggml_cy/cpu/csrc/gcy_pool.h), not
OpenMP's: it survives fork() (a child made by os.fork or multiprocessing's "fork" method
starts fresh workers on its first call). ``GGML_CY_SPINCOUNT`` (pause iterations, default
10000, with a sched_yield() every 256) sets how long an idle worker spins, and
``GGML_CY_JOB_YIELD_US`` (default 2000) how long it then yields the CPU, before it sleeps.
A worker that finds itself on its caller's CPU moves to another (``GGML_CY_POOL_SPREAD=0``
turns that off).

The default comes from ``GGML_CY_NUM_THREADS``, then ``OMP_NUM_THREADS`` (its first entry,
as OpenMP reads a list such as "4,2"), then the CPUs this process may run on
(``os.sched_getaffinity``). A malformed environment value gives a RuntimeWarning and the
next source is used.
"""
import os
import threading
import warnings

from ggml_cy.cpu import _kernels

__all__ = ["set_num_threads", "get_num_threads", "threads"]

# Larger values are refused: each thread of a parallel region costs a stack and a wake-up,
# and no machine this runs on has more hardware threads.
MAX_THREADS = 1024

_lock = threading.Lock()


def check_num_threads(n, what="n_threads"):
    """Validated thread count: a positive int (numpy integers accepted), else an error."""
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"{what} must be a positive integer, not {type(n).__name__}")
    n = n.__index__()
    if n < 1 or n > MAX_THREADS:
        raise ValueError(f"{what} must be between 1 and {MAX_THREADS}, got {n}")
    return n


def _cpu_count():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _from_env(name):
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return None
    first = raw.split(",")[0].strip()
    try:
        return check_num_threads(int(first), name)
    except (TypeError, ValueError):
        warnings.warn(f"ggml_cy: ignoring {name}={raw!r} (expected a positive integer)",
                      RuntimeWarning, stacklevel=3)
        return None


def default_num_threads():
    """GGML_CY_NUM_THREADS, then OMP_NUM_THREADS, then the CPU count (affinity)."""
    for name in ("GGML_CY_NUM_THREADS", "OMP_NUM_THREADS"):
        n = _from_env(name)
        if n is not None:
            return n
    return min(_cpu_count(), MAX_THREADS)


def set_num_threads(n):
    """Set the process-wide default thread count; returns the previous default. A
    ``threads`` block active in the calling thread still wins there until it exits."""
    n = check_num_threads(n, "n")
    with _lock:
        return _kernels._swap_num_threads(n)


def get_num_threads():
    """The thread count calls from this Python thread use: the innermost active
    ``threads`` block's value, else the process-wide default."""
    local = _kernels._get_local_threads()
    return local if local > 0 else _kernels._get_num_threads()


class threads:
    """Context manager: ``with ggml_cy.threads(2): ...`` runs the block with 2 threads.

    The override belongs to the Python thread that enters the block (other threads keep
    their own setting), and exit restores exactly what that thread had before, so blocks
    nest and blocks in several threads interleave freely. The object may be reused and
    nested; entering it in two threads at once is fine too (each thread keeps its own
    stack of previous values).
    """

    def __init__(self, n):
        self.n = check_num_threads(n, "n")
        self._previous = threading.local()

    def __enter__(self):
        stack = getattr(self._previous, "stack", None)
        if stack is None:
            stack = self._previous.stack = []
        stack.append(_kernels._set_local_threads(self.n))
        return self

    def __exit__(self, *exc):
        _kernels._set_local_threads(self._previous.stack.pop())
        return False

    def __repr__(self):
        return f"ggml_cy.threads({self.n})"


_kernels._swap_num_threads(default_num_threads())


def _env_int(name):
    """The integer in environment variable `name`; None when unset, empty, "default" or
    malformed (the knobs below then keep the pool's own values)."""
    raw = os.environ.get(name, "").strip()
    if raw == "" or raw.lower() == "default":
        return None
    try:
        return int(raw)
    except ValueError:
        return None


def _spin_from_env():
    """GGML_CY_SPINCOUNT (the same knob ggml_cy.core._startup documents, which warns about
    malformed values): pause iterations an idle pool worker spins before it sleeps.
    Unset, empty or "default": the pool's own default (10000)."""
    spin = _env_int("GGML_CY_SPINCOUNT")
    if spin is not None and spin >= 0:
        _kernels._pool_set_spin(spin)


_spin_from_env()


def _barrier_yield_from_env():
    """GGML_CY_BARRIER_YIELD_US: microseconds a graph barrier's waiter keeps yielding the
    CPU after its pause spin before it sleeps (default 3000; 0: sleep right after the spin).
    Malformed or negative values are ignored."""
    us = _env_int("GGML_CY_BARRIER_YIELD_US")
    if us is not None and 0 <= us <= 10**9:
        _kernels._pool_set_barrier_yield(us * 1000)


_barrier_yield_from_env()


def _job_yield_from_env():
    """GGML_CY_JOB_YIELD_US: microseconds an idle worker (and a caller waiting for the
    workers of its call) keeps yielding the CPU after its pause spin before it sleeps
    (default 2000; 0: sleep right after the spin). Malformed or negative values are ignored."""
    us = _env_int("GGML_CY_JOB_YIELD_US")
    if us is not None and 0 <= us <= 10**9:
        _kernels._pool_set_job_yield(us * 1000)


_job_yield_from_env()


def _spread_from_env():
    """GGML_CY_POOL_SPREAD=0: workers stay on whatever CPU the scheduler gives them, even
    their caller's (default 1: a worker found on its caller's CPU moves; see gcy_spread in
    csrc/gcy_pool.h). Other values are ignored."""
    v = os.environ.get("GGML_CY_POOL_SPREAD", "").strip()
    if v in ("0", "1"):
        _kernels._pool_set_spread(v == "1")


_spread_from_env()
