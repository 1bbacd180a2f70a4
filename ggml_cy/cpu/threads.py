"""Thread control for the eager numpy-style functions.

The thread count is one process-wide setting (not thread-local): ``set_num_threads`` and
the ``threads`` context manager change it for every Python thread, under a lock. A call's
``n_threads=`` argument overrides it for that call only.

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
    """Set the default thread count of the eager functions; returns the previous value."""
    n = check_num_threads(n, "n")
    with _lock:
        return _kernels._swap_num_threads(n)


def get_num_threads():
    """The default thread count of the eager functions."""
    return _kernels._get_num_threads()


class threads:
    """Context manager: ``with ggml_cy.threads(2): ...`` runs the block with 2 threads.

    The setting is process-wide (every Python thread sees it while the block runs) and is
    restored on exit, so nested blocks unwind in order. For a per-call setting that does
    not affect other threads, pass ``n_threads=`` to the function instead.
    """

    def __init__(self, n):
        self.n = check_num_threads(n, "n")
        self._previous = []

    def __enter__(self):
        self._previous.append(set_num_threads(self.n))
        return self

    def __exit__(self, *exc):
        set_num_threads(self._previous.pop())
        return False

    def __repr__(self):
        return f"ggml_cy.threads({self.n})"


_kernels._swap_num_threads(default_num_threads())
