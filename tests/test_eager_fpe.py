"""Floating-point errors reported as numpy reports them, under np.errstate / np.seterr:
ignore, warn (RuntimeWarning with numpy's wording), raise (FloatingPointError), call,
print and log."""
import contextlib
import io
import warnings

import numpy as np
import pytest

import ggml_cy as g

# (function name, args): each raises exactly the named flags in numpy
CASES = [
    ("divide", (np.array([1.0, -1.0]), np.array([0.0, 0.0])), {"divide"}),
    ("divide", (np.array([0.0]), np.array([0.0])), {"invalid"}),
    ("divide", (np.array([1.0, 0.0], np.float32), np.array([0.0, 0.0], np.float32)),
     {"divide", "invalid"}),
    ("multiply", (np.array([1e300]), np.array([1e300])), {"over"}),
    ("multiply", (np.array([1e-300]), np.array([1e-300])), {"under"}),
    ("add", (np.array([np.inf]), np.array([-np.inf])), {"invalid"}),
    ("sqrt", (np.array([-1.0, 4.0]),), {"invalid"}),
    ("log", (np.array([0.0]),), {"divide"}),
    ("exp", (np.array([1000.0], np.float32),), {"over"}),
    ("floor_divide", (np.array([1, 2], np.int32), np.array([0, 1], np.int32)), {"divide"}),
    ("remainder", (np.array([5, 7], np.int64), np.array([0, 2], np.int64)), {"divide"}),
]
TEXT = {"divide": "divide by zero", "over": "overflow", "under": "underflow",
        "invalid": "invalid value"}


def messages(fn, **errstate):
    with warnings.catch_warnings(record=True) as rec, np.errstate(**errstate):
        warnings.simplefilter("always")
        result = fn()
    return result, [(w.category, str(w.message)) for w in rec]


@pytest.mark.parametrize("name,args,flags", CASES, ids=lambda v: str(v)[:20])
def test_warn_messages_match_numpy(name, args, flags):
    got, got_msgs = messages(lambda: getattr(g, name)(*args), all="warn")
    want, want_msgs = messages(lambda: getattr(np, name)(*args), all="warn")
    assert got_msgs == want_msgs
    np.testing.assert_array_equal(got, want)
    assert {m for _, m in got_msgs} == {f"{TEXT[f]} encountered in {np.__dict__[name].__name__}"
                                        for f in flags}


@pytest.mark.parametrize("name,args,flags", CASES, ids=lambda v: str(v)[:20])
def test_raise_mode(name, args, flags):
    for mode in ("raise",):
        with np.errstate(all=mode):
            with pytest.raises(FloatingPointError) as got:
                getattr(g, name)(*args)
            with pytest.raises(FloatingPointError) as want:
                getattr(np, name)(*args)
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name,args,flags", CASES, ids=lambda v: str(v)[:20])
def test_ignore_mode_is_silent(name, args, flags):
    _, msgs = messages(lambda: getattr(g, name)(*args), all="ignore")
    assert msgs == []


def test_default_ignores_underflow_and_warns_divide():
    _, msgs = messages(lambda: g.multiply(np.array([1e-300]), np.array([1e-300])))
    assert msgs == []
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        g.divide(np.ones(2), np.zeros(2))
    assert [str(w.message) for w in rec] == ["divide by zero encountered in divide"]


def test_individual_categories():
    a, b = np.array([1.0, 0.0]), np.array([0.0, 0.0])
    with np.errstate(divide="ignore", invalid="raise"):
        with pytest.raises(FloatingPointError, match="invalid value encountered in divide"):
            g.divide(a, b)
    with np.errstate(divide="raise", invalid="ignore"):
        with pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
            g.divide(a, b)


def test_call_and_log_modes():
    a, b = np.array([1.0, 0.0, 1e308]), np.array([0.0, 0.0, 1e-308])
    got_calls, want_calls = [], []
    with np.errstate(all="call", call=lambda *args: got_calls.append(args)):
        g.divide(a, b)
    with np.errstate(all="call", call=lambda *args: want_calls.append(args)):
        np.divide(a, b)
    assert got_calls == want_calls

    class Log:
        def __init__(self):
            self.lines = []

        def write(self, text):
            self.lines.append(text)

    got_log, want_log = Log(), Log()
    with np.errstate(all="log", call=got_log):
        g.divide(a, b)
    with np.errstate(all="log", call=want_log):
        np.divide(a, b)
    assert got_log.lines == want_log.lines


def test_print_mode_writes_numpys_line():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), np.errstate(all="print"):
        g.divide(np.ones(1), np.zeros(1))
    assert buf.getvalue() == "Warning: divide by zero encountered in divide\n"


def test_raise_with_out_and_threads():
    a = np.linspace(-1, 1, 20001)
    out = np.empty_like(a)
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
            g.divide(1.0, a - a, out=out, n_threads=2)
        assert g.add(a, 1.0, out=out, n_threads=3) is out


def test_warning_points_at_the_caller():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        g.divide(np.ones(1), np.zeros(1))
    assert rec and rec[0].filename == __file__


@pytest.mark.parametrize("mode", ["call", "log"])
def test_call_and_log_without_handler(mode):
    old_call = np.geterrcall()
    np.seterrcall(None)
    try:
        with np.errstate(all=mode):
            with pytest.raises(Exception) as want:
                np.divide(np.ones(1), np.zeros(1))
            with pytest.raises(Exception) as got:
                g.divide(np.ones(1), np.zeros(1))
    finally:
        np.seterrcall(old_call)
    assert type(got.value) is type(want.value)
    assert str(got.value) == str(want.value)
