"""Thread control (set/get, context manager, per-call n_threads, environment defaults) and
calls from several Python threads at once (the GIL is released around the kernels of calls
over 8192 elements; smaller calls keep it, as numpy's do below 500)."""
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import pytest

import ggml_cy as g

def test_set_returns_previous_and_get_reads_back():
    old = g.get_num_threads()
    try:
        assert g.set_num_threads(3) == old
        assert g.get_num_threads() == 3
        assert g.set_num_threads(np.int32(1)) == 3
        assert g.get_num_threads() == 1
    finally:
        g.set_num_threads(old)


@pytest.mark.parametrize("bad,err", [(0, ValueError), (-2, ValueError), (10**9, ValueError),
                                     (1.5, TypeError), ("2", TypeError), (None, TypeError),
                                     (True, TypeError), ([2], TypeError)])
def test_bad_thread_counts(bad, err):
    old = g.get_num_threads()
    with pytest.raises(err):
        g.set_num_threads(bad)
    with pytest.raises(err):
        g.threads(bad)
    if bad is not None:              # n_threads=None means the default
        with pytest.raises(err):
            g.add(np.ones(3), 1.0, n_threads=bad)
    assert g.get_num_threads() == old


def test_context_manager_nests_and_restores():
    old = g.get_num_threads()
    with g.threads(2) as t:
        assert g.get_num_threads() == 2
        with g.threads(1):
            assert g.get_num_threads() == 1
        assert g.get_num_threads() == 2
        assert "2" in repr(t)
    assert g.get_num_threads() == old
    with pytest.raises(KeyError):
        with g.threads(3):
            raise KeyError("boom")
    assert g.get_num_threads() == old


def _default_in_subprocess(env_updates):
    env = {k: v for k, v in os.environ.items()
           if k not in ("GGML_CY_NUM_THREADS", "OMP_NUM_THREADS")}
    env.update(env_updates)
    # the ggml_cy this process imported (in-place build or installed), not the sources
    # that the child's working directory could shadow
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(g.__file__)))
    env["PYTHONPATH"] = pkg_parent + os.pathsep + env.get("PYTHONPATH", "")
    code = ("import warnings, sys\nwarnings.simplefilter('always')\n"
            "import ggml_cy\nprint(ggml_cy.get_num_threads())")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, cwd=tempfile.mkdtemp(prefix="ggml_cy_child_"), timeout=120)
    assert r.returncode == 0, r.stderr
    return int(r.stdout.strip().splitlines()[-1]), r.stderr


def test_env_defaults():
    ncpu = len(os.sched_getaffinity(0))
    assert _default_in_subprocess({})[0] == ncpu
    assert _default_in_subprocess({"OMP_NUM_THREADS": "3"})[0] == 3
    assert _default_in_subprocess({"OMP_NUM_THREADS": "5,2"})[0] == 5
    assert _default_in_subprocess({"GGML_CY_NUM_THREADS": "2", "OMP_NUM_THREADS": "3"})[0] == 2


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5", "99999999"])
def test_bad_env_warns_and_falls_back(value):
    n, err = _default_in_subprocess({"GGML_CY_NUM_THREADS": value, "OMP_NUM_THREADS": "2"})
    assert n == 2
    assert "GGML_CY_NUM_THREADS" in err and "RuntimeWarning" in err


def test_many_python_threads_at_once():
    rng = np.random.default_rng(1)
    inputs = [(rng.standard_normal(50_000).astype(dt), rng.standard_normal(50_000).astype(dt))
              for dt in (np.float32, np.float64) for _ in range(4)]
    errors = []
    start = threading.Barrier(len(inputs))

    def work(a, b):
        try:
            start.wait()
            for i in range(20):
                r = g.add(a, b, n_threads=1 + i % 3)
                if not np.array_equal(r, a + b):
                    errors.append("add mismatch")
                r = g.multiply(a[::-1], b)
                if not np.array_equal(r, a[::-1] * b):
                    errors.append("multiply mismatch")
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=ab) for ab in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    assert errors == []


def _ticks_while(call, interval, limit_s, until_tick):
    """How often a ticker thread ran while `call` repeated for up to limit_s seconds (until
    it ticked once, with until_tick) under a switch interval of `interval` seconds: with a
    long interval a thread holding the GIL is not asked to drop it during the calls, so the
    ticker only runs while a kernel has released it."""
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(1)

    old = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    t = threading.Thread(target=ticker)
    try:
        t.start()
        before = len(ticks)
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < limit_s and not (until_tick and len(ticks) > before):
            call()
        return len(ticks) - before
    finally:
        done.set()
        sys.setswitchinterval(old)
        t.join()


def test_small_calls_keep_the_gil():
    """Calls of at most 8192 elements (_eager.GIL_KEEP_ELEMS) run their kernel with the GIL
    held: releasing and taking it back would cost more than a tenth of such a call."""
    x = np.ones(8192, np.float32)
    out = np.empty_like(x)

    def calls():
        g.add(x, x, out=out)
        g.exp(x[:100], out=out[:100])
        g.copyto(out, x)

    assert _ticks_while(calls, 1.0, 0.05, until_tick=False) == 0
    assert (out == 1).all()


def test_gil_released_during_kernels():
    """The calls repeat until the ticker has ticked, for at most 0.15 s (under the 0.25 s
    interval, so a forced switch cannot tick for it): on a loaded 2-core machine (CI runs a
    second pytest process beside this one) two calls of ~5 ms were seen to end before the
    scheduler gave the ticker a core."""
    a = np.ones(4_000_000, np.float32)
    assert _ticks_while(lambda: g.add(a, a, n_threads=1), 0.25, 0.15, until_tick=True) > 0
