"""The worker pool's optional-helper jobs (issue 14 item 1, csrc/gcy_pool.h): the eager
kernels hand work out from a shared counter and do not wait for workers that wake late;
graph jobs (static splits, barriers) still run on every thread. Mixed back to back, with
workers that sleep at once (GGML_CY_SPINCOUNT=0: every worker wakes late), results stay
exact and nothing hangs."""
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np

import ggml_cy
from ggml_cy.cpu import _kernels
from ggml_cy.graph.context import Context

# the child imports the ggml_cy under test (in-place build or install), never an unbuilt
# source tree in the current folder (CI runs pytest from the clone after `pip install .`)
from _child import ENV, HOME  # noqa: E402
TESTS = os.path.dirname(os.path.abspath(__file__))


def _mixed_calls(seed, rounds, n_threads_choices=(1, 2, 3, 4, 8)):
    """Eager calls and evaluate's one-group graphs (optional helpers), a graph of two steps
    (every thread, a barrier) and small calls (one thread), back to back with changing
    thread counts; returns the mismatches."""
    rng = np.random.default_rng(seed)
    bad = []
    for _ in range(rounds):
        n = int(rng.choice([70_000, 300_001, 1_000_000]))
        nt = int(rng.choice(n_threads_choices))
        a = rng.standard_normal(n).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        if not np.array_equal(ggml_cy.add(a, b, n_threads=nt), a + b):
            bad.append(("add", n, nt))
        m = n - n % 2
        if not np.array_equal(ggml_cy.maximum(a[:m:2], b[1:m:2], n_threads=nt),
                              np.maximum(a[:m:2], b[1:m:2])):
            bad.append(("maximum", n, nt))
        if not np.array_equal(ggml_cy.evaluate("a*b - a", a=a, b=b, n_threads=nt), a * b - a):
            bad.append(("evaluate", n, nt))
        m10 = n - n % 10
        a2, b2 = a[:m10].reshape(10, -1), b[:m10].reshape(10, -1)
        ctx = Context(5 * a.nbytes + (1 << 20))
        ta, tb = ctx.tensor_from(a2), ctx.tensor_from(b2)
        rows = ctx.sum_rows(ctx.sub(ctx.mul(ta, tb), ta))
        ctx.new_graph().build_forward_expand(rows).compute(nt)
        want = (a2 * b2 - a2).sum(axis=1, dtype=np.float64)
        if not np.allclose(rows.numpy().ravel(), want, rtol=1e-4, atol=1e-2):
            bad.append(("graph", n, nt))
        small = a[:100]
        if not np.array_equal(ggml_cy.multiply(small, small, n_threads=nt), small * small):
            bad.append(("small", n, nt))
    return bad


def test_mixed_jobs_exact():
    assert _mixed_calls(1, 30) == []


def test_mixed_jobs_from_several_python_threads():
    errors = []

    def run(seed):
        errors.extend(_mixed_calls(seed, 10, (2, 3, 4)))

    ts = [threading.Thread(target=run, args=(s,)) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in ts), "a pool call hung"
    assert errors == []


def run_with_late_workers(expr):
    """Evaluates `expr` (a list of mismatches, from this folder's test modules) in a child
    interpreter whose workers sleep right after every job (GGML_CY_SPINCOUNT=0); fails the
    test on mismatches or a non-zero exit."""
    code = textwrap.dedent("""
        import sys
        sys.path.insert(0, %r)
        sys.path.insert(0, %r)
        import test_pool_dyn, test_fused_dyn
        bad = %s
        print("BAD", bad)
        sys.exit(1 if bad else 0)
    """ % (HOME, TESTS, expr))
    env = dict(ENV, GGML_CY_SPINCOUNT="0")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=600, cwd=HOME)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])


def test_late_workers_are_not_waited_for_and_do_not_break_later_jobs():
    """Spin count 0: a worker sleeps right after every job, so most wake-ups come after
    the calling thread has already taken every chunk (the job is closed); a later job of
    either kind must still see every worker it needs."""
    run_with_late_workers("test_pool_dyn._mixed_calls(7, 25)")


def test_pool_keeps_its_workers():
    """Jobs that left workers out do not leak or lose threads: the cached teams stay
    bounded and usable."""
    a = np.ones(2_000_000, np.float32)
    for nt in (2, 4, 2, 8, 3):
        assert np.array_equal(ggml_cy.add(a, a, n_threads=nt), a + a)
    assert 0 < _kernels._pool_cached_workers() <= 8 * 8
