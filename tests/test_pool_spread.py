"""The worker pool after an idle spell (issue 14, csrc/gcy_pool.h): a worker woken onto its
caller's CPU moves to another one (gcy_spread), the pause spin yields the CPU now and then,
and idle workers and waiting callers yield for a while before they sleep. These change
only where and how threads wait: results stay exact under every setting, the settings
come from the environment, and a worker put on the caller's CPU does not stay there."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ggml_cy
from ggml_cy.cpu import _kernels

from _child import ENV, HOME  # noqa: E402

LINUX = sys.platform.startswith("linux")


def _defaults():
    _kernels._pool_set_spread(True)
    _kernels._pool_set_job_yield(2_000_000, 256)
    _kernels._pool_set_spin(10000)


@pytest.mark.skipif(not LINUX, reason="sched_getcpu / sched_setaffinity are Linux calls")
def test_spreading_is_available_on_linux():
    supported, on, moves = _kernels._pool_spread_info()
    assert supported is True and on is True
    assert isinstance(moves, int) and moves >= 0


@pytest.mark.skipif(not LINUX or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two CPUs to move between")
def test_worker_put_on_the_callers_cpu_moves_off_it():
    _defaults()
    try:
        for _ in range(3):
            got = _kernels._pool_spread_selftest()
            assert got is not None
            caller, staged, after, moves = got
            assert staged == caller      # the setup worked: the worker sat on the caller's CPU
            assert after != caller, got  # and in the next job it ran elsewhere
            assert after >= 0 and moves >= 0
    finally:
        _defaults()


@pytest.mark.parametrize("spread,yield_ns,every,spin", [
    (True, 2_000_000, 256, 10000),    # the defaults
    (False, 0, 0, 10000),             # the pool before: pause spin, then sleep
    (True, 0, 1, 0),                  # sleep at once; every spin step a yield
    (True, 50_000, 3, 200),           # short phases: workers fall asleep between calls
])
def test_results_exact_under_every_wait_setting(spread, yield_ns, every, spin):
    rng = np.random.default_rng(5)
    a = rng.standard_normal(300_001).astype(np.float32)
    b = rng.standard_normal(300_001).astype(np.float32)
    try:
        _kernels._pool_set_spread(spread)
        _kernels._pool_set_job_yield(yield_ns, every)
        _kernels._pool_set_spin(spin)
        for nt in (2, 3, 4):
            for _ in range(20):
                assert np.array_equal(ggml_cy.add(a, b, n_threads=nt), a + b)
            # static splits with barriers (the graph executor's jobs)
            assert np.array_equal(ggml_cy.evaluate("a*b - a", a=a, b=b, n_threads=nt), a * b - a)
    finally:
        _defaults()


def _child_settings(env):
    code = textwrap.dedent("""
        import ggml_cy, numpy as np
        from ggml_cy.cpu import _kernels
        a = np.arange(200_000, dtype=np.float32)
        assert np.array_equal(ggml_cy.add(a, a, n_threads=2), a + a)
        s = _kernels._pool_wait_settings()
        print(s["job_yield_ns"], s["spin"], int(_kernels._pool_spread_info()[1]))
    """)
    e = {k: v for k, v in ENV.items()
         if k not in ("GGML_CY_JOB_YIELD_US", "GGML_CY_POOL_SPREAD", "GGML_CY_SPINCOUNT")}
    e.update(env)
    r = subprocess.run([sys.executable, "-c", code], env=e, cwd=HOME, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return [int(x) for x in r.stdout.split()]


@pytest.mark.skipif(not LINUX, reason="spreading is Linux only")
def test_wait_settings_from_the_environment():
    assert _child_settings({}) == [2_000_000, 10000, 1]
    assert _child_settings({"GGML_CY_JOB_YIELD_US": "0", "GGML_CY_POOL_SPREAD": "0"}) == [0, 10000, 0]
    assert _child_settings({"GGML_CY_JOB_YIELD_US": "150", "GGML_CY_SPINCOUNT": "7"}) == [150_000, 7, 1]
    # malformed or out-of-range values leave the defaults
    for bad in ({"GGML_CY_JOB_YIELD_US": "junk", "GGML_CY_POOL_SPREAD": "maybe"},
                {"GGML_CY_JOB_YIELD_US": "-5", "GGML_CY_POOL_SPREAD": ""},
                {"GGML_CY_JOB_YIELD_US": "1e3", "GGML_CY_POOL_SPREAD": "2"}):
        assert _child_settings(bad) == [2_000_000, 10000, 1]


def test_setters_leave_a_value_when_given_a_negative():
    try:
        _kernels._pool_set_job_yield(123_000, 5)
        _kernels._pool_set_job_yield(-1, -1)
        s = _kernels._pool_wait_settings()
        assert (s["job_yield_ns"], s["yield_every"]) == (123_000, 5)
        _kernels._pool_set_job_yield(every=0)
        assert _kernels._pool_wait_settings()["yield_every"] == 0
        assert _kernels._pool_wait_settings()["job_yield_ns"] == 123_000
        a = np.ones(100_000, np.float64)
        assert np.array_equal(ggml_cy.multiply(a, a, n_threads=2), a)
    finally:
        _defaults()
    s = _kernels._pool_wait_settings()
    assert (s["job_yield_ns"], s["yield_every"], s["spin"]) == (2_000_000, 256, 10000)
