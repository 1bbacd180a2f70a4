"""Shared checks for the eager-API tests: same value (bitwise), same type, same error."""
import numpy as np
import pytest


def bits(x):
    """Raw bytes of x in C order (compares NaN payloads and signed zeros exactly)."""
    a = np.asarray(x)
    return np.ascontiguousarray(a).tobytes()


TRANSCENDENTAL = {"exp", "expm1", "log", "log1p", "sin", "cos", "tanh"}


def assert_same(got, want, max_ulp=0):
    """got equals numpy's want: same Python type (scalar vs array), dtype, shape, bits
    (or within max_ulp units in the last place, for transcendental functions)."""
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert np.shape(got) == np.shape(want), (np.shape(got), np.shape(want))
        if want.dtype.hasobject:
            assert np.asarray(got).tolist() == np.asarray(want).tolist()
        elif want.dtype in (np.longdouble, np.clongdouble):   # padding bytes vary
            assert np.array_equal(got, want, equal_nan=True)
        elif max_ulp and want.dtype.kind == "f":
            np.testing.assert_array_max_ulp(got, want, max_ulp)
        else:
            assert bits(got) == bits(want), (got, want)
    else:
        assert got == want


def outcome(fn):
    """('ok', result) or ('err', exception type, message) of calling fn."""
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the point is to compare any exception
        return ("err", type(e), str(e))


def assert_same_outcome(got_fn, want_fn, max_ulp=0):
    """Both calls give the same result, or raise the same exception type and message."""
    got, want = outcome(got_fn), outcome(want_fn)
    if want[0] == "err":
        assert got[0] == "err", f"expected {want[1].__name__}: {want[2]}, got {got}"
        assert got[1] is want[1], (got[1], want[1])
        assert got[2] == want[2], (got[2], want[2])
    else:
        assert got[0] == "ok", f"unexpected {got[1].__name__}: {got[2]}"
        assert_same(got[1], want[1], max_ulp)
    return got


def native(op_name, *dtypes):
    """True when ggml_cy computes op_name on these dtypes itself (not numpy's fallback)."""
    from ggml_cy.ufuncs import _eager
    from ggml_cy.ufuncs._eager import _loop_info
    return _loop_info(_eager._op_number(op_name), *dtypes)[0]


