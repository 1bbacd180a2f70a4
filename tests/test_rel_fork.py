"""Fork safety (issue 17, item 1): after multithreaded calls in the parent, a child made by
os.fork() or by multiprocessing ("fork", "spawn", "forkserver") runs ggml_cy right away,
multithreaded and bitwise correct. Each scenario runs in a fresh interpreter under a
timeout, so a hang (what GNU OpenMP's pool did after fork) fails instead of blocking CI."""
import os
import textwrap

import pytest

from _child import run_child

TIMEOUT = 120   # seconds per scenario; the work itself takes about a second

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

PRELUDE = textwrap.dedent("""
    import os, sys, threading, warnings
    import numpy as np
    import ggml_cy
    from ggml_cy.cpu import _kernels
    warnings.simplefilter("ignore", DeprecationWarning)   # 3.12: fork with threads

    N = 2_000_000
    A = np.arange(N, dtype=np.float32) * np.float32(0.5)
    B = np.linspace(-3, 3, N, dtype=np.float32)

    def work(n_threads=2):
        '''Eager, evaluate and graph calls, each on n_threads threads; True when all
        results are bitwise equal to numpy's.'''
        ok = True
        with ggml_cy.threads(n_threads):
            ok &= np.array_equal(ggml_cy.add(A, B), A + B)
            ok &= np.array_equal(ggml_cy.multiply(A, B, n_threads=n_threads), A * B)
            ok &= np.array_equal(ggml_cy.evaluate("a * b + a", a=A, b=B), A * B + A)
            ctx = ggml_cy.Context(64 << 20)
            ta, tb = ctx.tensor_from(A), ctx.tensor_from(B)
            r = ctx.add(ctx.mul(ta, tb), tb)
            ctx.new_graph().build_forward_expand(r).compute(n_threads)
            ok &= np.array_equal(r.numpy(), A * B + B)
            # quantize / dequantize run on the same pool
            q = ggml_cy.quantize(B[:1 << 20], "q8_0", n_threads=n_threads)
            ok &= np.array_equal(q, ggml_cy.quantize(B[:1 << 20], "q8_0", n_threads=1))
            d = ggml_cy.dequantize(q, "q8_0", (1 << 20,), n_threads=n_threads)
            ok &= np.array_equal(d, ggml_cy.dequantize(q, "q8_0", (1 << 20,), n_threads=1))
        return bool(ok)

    def parked():
        return _kernels._pool_cached_workers()
""")


def _run(body):
    return run_child(PRELUDE, body, TIMEOUT)


def test_os_fork_after_multithreaded_call():
    out = _run("""
        assert work(2) and parked() >= 1          # the parent's pool has live workers
        pid = os.fork()
        if pid == 0:
            code = 3
            try:
                # the parent's workers do not exist here: the child starts fresh ones
                assert _kernels._pool_fork_epoch() == 1
                ok = work(2)
                code = 0 if ok and parked() >= 1 else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        assert work(2)                             # the parent goes on as before
        print("ok")
    """)
    assert "ok" in out


def test_nested_fork_grandchild():
    _run("""
        assert work(2)
        pid = os.fork()
        if pid == 0:
            code = 3
            try:
                assert work(2)
                pid2 = os.fork()
                if pid2 == 0:
                    os._exit(0 if work(2) and _kernels._pool_fork_epoch() == 2 else 2)
                _, st = os.waitpid(pid2, 0)
                code = os.WEXITSTATUS(st) if os.WIFEXITED(st) else 4
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    """)


def test_multiprocessing_fork_pool():
    out = _run("""
        import multiprocessing as mp

        def task(seed):
            return work(2)

        assert work(2)                              # the parent's pool runs before the fork
        with mp.get_context("fork").Pool(2) as pool:
            results = pool.map(task, range(4))
        assert results == [True] * 4, results
        assert work(2)
        print("ok")
    """)
    assert "ok" in out


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_multiprocessing_spawn_pools(method, tmp_path):
    # spawn/forkserver children import the task by module name: write one
    (tmp_path / "rel_fork_task.py").write_text(textwrap.dedent("""
        import numpy as np, ggml_cy
        def task(seed):
            rng = np.random.default_rng(seed)
            a = rng.standard_normal(2_000_000).astype(np.float32)
            b = rng.standard_normal(2_000_000).astype(np.float32)
            with ggml_cy.threads(2):
                ok = np.array_equal(ggml_cy.add(a, b), a + b)
                ok &= np.array_equal(ggml_cy.evaluate("a * b - a", a=a, b=b), a * b - a)
            return bool(ok)
    """))
    out = _run(f"""
        import multiprocessing as mp
        sys.path.insert(0, {str(tmp_path)!r})
        os.environ["PYTHONPATH"] = {str(tmp_path)!r} + os.pathsep + os.environ.get("PYTHONPATH", "")
        import rel_fork_task
        assert work(2)
        with mp.get_context({method!r}).Pool(2) as pool:
            results = pool.map(rel_fork_task.task, range(4))
        assert results == [True] * 4, results
        assert work(2)
        print("ok")
    """)
    assert "ok" in out


def test_fork_while_another_thread_is_inside_a_call():
    _run("""
        stop = threading.Event()
        errors = []
        calls = [0]
        big = np.arange(8_000_000, dtype=np.float32)

        def busy():
            try:
                while not stop.is_set():
                    r = ggml_cy.add(big, big, n_threads=2)   # GIL released, pool busy
                    if not np.array_equal(r, big + big):
                        errors.append("wrong result in the parent thread")
                    calls[0] += 1
            except BaseException as e:
                errors.append(repr(e))

        t = threading.Thread(target=busy)
        t.start()
        import time
        children = 0
        for i in range(6):
            time.sleep(0.05)
            pid = os.fork()
            if pid == 0:
                code = 3
                try:
                    code = 0 if work(2) else 2
                finally:
                    os._exit(code)
            _, status = os.waitpid(pid, 0)
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (i, status)
            children += 1
        stop.set()
        t.join()
        assert not errors, errors
        assert calls[0] > 0 and children == 6
        assert work(2)
        print("ok")
    """)


def test_fork_child_uses_more_than_one_thread():
    # the child's pool really runs work on a second thread (not a silent serial fallback)
    _run("""
        assert work(2)
        pid = os.fork()
        if pid == 0:
            code = 3
            try:
                before = threading.active_count()
                ggml_cy.add(A, B, n_threads=2)
                # the pool's worker is an OS thread of this process (not a Python one)
                n_tasks = len(os.listdir("/proc/self/task"))
                code = 0 if n_tasks >= 2 and parked() >= 1 else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    """)
