"""evaluate behaves as numpy where the eager functions do: np.errstate, 0-d results as
scalars, a self-overlapping out, subclasses; its plan cache survives many threads; very
deep or long expressions give a clear ValueError (issue 17's regressions)."""
import sys
import threading
import warnings

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import ggml_cy
from ggml_cy import evaluate
import importlib
ev_mod = importlib.import_module("ggml_cy.expr.evaluate")


# ----------------------------------------------------------------------------- errstate
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_errstate_raise_divide(dtype):
    a = np.ones(1000, dtype)
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
            evaluate("a / 0", a=a)
        with pytest.raises(FloatingPointError):
            ggml_cy.divide(a, 0)           # the eager path, for comparison
    with np.errstate(divide="ignore"):
        assert np.isinf(evaluate("a / 0", a=a)).all()


def test_errstate_warn_by_default_like_numpy():
    a = np.ones(100)
    with np.errstate(all="warn"):
        with pytest.warns(RuntimeWarning, match="divide by zero encountered in divide"):
            evaluate("a / 0", a=a)
        with pytest.warns(RuntimeWarning, match="invalid value encountered in sqrt"):
            evaluate("sqrt(a - 2) + a", a=a)
        with pytest.warns(RuntimeWarning, match="overflow"):
            evaluate("a * 1e300 * 1e300", a=a)


def test_errstate_repeat_calls_use_the_cached_plan():
    a = np.ones(100)
    evaluate("a / b", a=a, b=np.ones(100))           # compiled once
    for _ in range(3):
        with np.errstate(divide="raise"):
            with pytest.raises(FloatingPointError):
                evaluate("a / b", a=a, b=np.zeros(100))


def test_no_report_for_what_numpy_does_not_report():
    a = np.array([np.nan, 1.0, 2.0] * 100)
    b = np.array([1.0, np.nan, 0.5] * 100)
    with np.errstate(all="raise"):
        # max/min and comparisons with NaN raise "invalid" in the hardware: numpy is quiet
        got = evaluate("maximum(a, b) + minimum(a, b)", a=a, b=b)
    np.testing.assert_array_equal(got, np.maximum(a, b) + np.minimum(a, b))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate("a + b", a=a, b=b)


def test_errstate_call_and_in_place():
    calls = []
    a = np.ones(64)
    with np.errstate(divide="call"):
        old = np.seterrcall(lambda kind, flag: calls.append(kind))
        try:
            evaluate("a / 0", a=a, out=a)               # result overwrites the input
        finally:
            np.seterrcall(old)
    assert calls == ["divide by zero"]
    assert np.isinf(a).all()


def test_mixed_precision_path_honours_errstate():
    a = np.ones(10, np.float32)
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            evaluate("a / b", a=a, b=np.zeros(10, np.float64))


# ----------------------------------------------------------------------------- scalars
def test_zero_d_inputs_give_numpy_scalars():
    a, b = np.array(2.0), np.array(3.0)
    r = evaluate("a * b + 1", a=a, b=b)
    ref = a * b + 1
    assert type(r) is type(ref) is np.float64 and r == ref
    r = evaluate("a * b", a=np.float32(2), b=np.array(3, np.float32))
    assert type(r) is np.float32
    r = evaluate("a + 1", a=2.5)
    assert type(r) is np.float64 and r == 3.5
    o = np.empty(())
    assert evaluate("a * b", a=a, b=b, out=o) is o      # out= is returned as given
    # the cached (fast) path too
    r = evaluate("a * b + 1", a=a, b=b)
    assert type(r) is np.float64


# ----------------------------------------------------------------------------- out
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_self_overlapping_out_keeps_the_last_element(dtype):
    a = np.arange(12, dtype=dtype).reshape(3, 4)
    for shape, strides, base_n in [((3, 4), (0, 1), 4), ((3, 4), (1, 0), 3), ((12,), (0,), 1)]:
        x = a.reshape(shape)
        isz = np.dtype(dtype).itemsize
        ref_base = np.zeros(base_n, dtype)
        np.add(x * 2, 1, out=as_strided(ref_base, shape, tuple(s * isz for s in strides)))
        got_base = np.zeros(base_n, dtype)
        out = as_strided(got_base, shape, tuple(s * isz for s in strides))
        r = evaluate("x * 2 + 1", x=x, out=out)
        assert r is out
        np.testing.assert_array_equal(got_base, ref_base)
        # twice: the second call must not take a cached plan that skips the rule
        got_base[:] = 0
        evaluate("x * 2 + 1", x=x, out=out)
        np.testing.assert_array_equal(got_base, ref_base)


def test_self_overlapping_out_many_threads():
    """Rows written by several threads into one shared row: the last row's values stay.
    (The unfixed code happened to pass this on a 2-core machine; the race needs more
    cores. Since the fix, such an out is never handed to the executor.)"""
    x = np.arange(16 * 40_000, dtype=np.float64).reshape(16, 40_000)
    base = np.zeros(40_000)
    out = as_strided(base, (16, 40_000), (0, 8))
    for _ in range(5):
        base[:] = 0
        evaluate("x * 2 + 1", x=x, out=out, n_threads=4)
        np.testing.assert_array_equal(base, x[-1] * 2 + 1)


# ----------------------------------------------------------------------------- subclasses
def test_masked_arrays_and_subclasses_are_refused():
    m = np.ma.masked_array(np.arange(5.0), mask=[0, 1, 0, 0, 1])
    with pytest.raises(TypeError, match="masked array.*mask would be lost"):
        evaluate("a + 1", a=m)
    with pytest.raises(TypeError, match="subclass matrix"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            mat = np.asmatrix(np.ones((2, 2)))
        evaluate("a + 1", a=mat)
    with pytest.raises(TypeError, match="masked"):
        evaluate("a + 1", a=np.ones(5), out=np.ma.masked_array(np.ones(5)))
    # after a plain call of the same expression was cached
    evaluate("a + 1", a=np.ones(5))
    with pytest.raises(TypeError, match="masked"):
        evaluate("a + 1", a=m)


def test_memmap_is_honoured(tmp_path):
    mm = np.memmap(tmp_path / "x.bin", dtype=np.float64, mode="w+", shape=(100,))
    mm[:] = np.arange(100.0)
    np.testing.assert_array_equal(evaluate("a * 2", a=mm), np.arange(100.0) * 2)


# ----------------------------------------------------------------------------- size limits
@pytest.mark.parametrize("expr", [
    "+".join(["a"] * 100_000),                   # 1e5 terms
    "+".join(["a"] * 1000),                      # deeper than MAX_DEPTH, parses fine
    "-" * 100_000 + "a",
    "*".join(["(a+1)"] * 5000),
], ids=["1e5-terms", "1e3-terms", "1e5-unary", "5e3-products"])
def test_too_deep_or_long_is_a_value_error(expr):
    with pytest.raises(ValueError, match="too (deep|long)"):
        evaluate(expr, a=np.ones(3))


def test_long_but_allowed_expression():
    n = ev_mod.MAX_DEPTH - 5
    a = np.ones(10)
    assert evaluate("+".join(["a"] * n), a=a)[0] == n


def test_deep_nesting_is_a_syntax_or_value_error():
    with pytest.raises((SyntaxError, ValueError)):
        evaluate("(" * 1000 + "a" + ")" * 1000, a=np.ones(3))


def test_deep_expression_below_the_recursion_limit():
    # what the limit protects: evaluate called from deep in a program still works
    def nest(k):
        if k == 0:
            return evaluate("+".join(["a"] * (ev_mod.MAX_DEPTH - 1)), a=np.ones(4))
        return nest(k - 1)
    depth = sys.getrecursionlimit() - ev_mod.MAX_DEPTH * 3
    assert nest(max(depth, 10))[0] == ev_mod.MAX_DEPTH - 1


# ----------------------------------------------------------------------------- threads
def test_plan_cache_under_contention():
    """16 threads x 2000 calls over 200 distinct expressions (more than the cache holds),
    with a short switch interval: no 'dictionary changed size during iteration' (the
    unlocked cache failed 4 of 32000 calls here)."""
    n_expr = 200
    exprs = [f"a * {i} + b" for i in range(n_expr)]
    a, b = np.ones(16), np.arange(16.0)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(2000):
                i = int(rng.integers(n_expr))
                r = evaluate(exprs[i], a=a, b=b, n_threads=1)
                if not np.array_equal(r, a * i + b):
                    errors.append(f"wrong result for {exprs[i]}")
        except Exception as e:       # noqa: BLE001 - any error fails the test
            errors.append(repr(e))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        ts = [threading.Thread(target=work, args=(i,)) for i in range(16)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == []
    assert len(ev_mod._PLAN_CACHE) <= ev_mod._PLAN_CACHE_SIZE
