"""float16 add / subtract / multiply / divide on contiguous operands run a fused one-pass row
(csrc/kernels_convert.h kern_h16_binary, issue 14): bitwise numpy's results (NaN positions
compared, not payloads), a broadcast scalar operand, every vector-tail length, 1 and 2
threads, out=, and numpy's floating-point warnings (overflow, underflow, divide, invalid)."""
import warnings

import numpy as np
import pytest

import ggml_cy as g

OPS = ["add", "subtract", "multiply", "divide"]
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, -65504.0, 6.1e-5, 5.96e-8,
                     -5.96e-8, 1.0, -1.0, 2.0, 0.5, 3e-5, 1000.0], np.float16)


def _data(n, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * rng.choice([1e-6, 1e-2, 1.0, 100.0, 3e4], n)).astype(np.float16)
    k = min(n, 3 * len(SPECIALS))
    x[rng.choice(n, k, replace=False)] = np.resize(SPECIALS, k)
    return x


def _same(got, want):
    assert got.dtype == want.dtype == np.float16 and got.shape == want.shape
    gn, wn = np.isnan(got), np.isnan(want)
    assert np.array_equal(gn, wn)
    assert np.array_equal(got[~gn].view(np.uint16), want[~wn].view(np.uint16))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n", [1, 7, 15, 16, 17, 40, 1000, 70001])
def test_fused_f16_rows_match_numpy(op, n):
    a, b = _data(n, n), _data(n, n + 1)
    with np.errstate(all="ignore"):
        want = getattr(np, op)(a, b)
        for nt in (1, 2):
            _same(getattr(g, op)(a, b, n_threads=nt), want)
        out = np.empty_like(a)
        r = getattr(g, op)(a, b, out=out)
        assert r is out
        _same(out, want)
        s = np.float16(-2.5)
        _same(getattr(g, op)(a, s), getattr(np, op)(a, s))
        _same(getattr(g, op)(a, b[:1]), getattr(np, op)(a, b[:1]))
        _same(getattr(g, op)(a[::2], b[::2]), getattr(np, op)(a[::2], b[::2]))   # strided


CASES = [
    ("multiply", np.array([60000.0] * 20, np.float16), np.array([2.0] * 20, np.float16)),
    ("multiply", np.array([1e-4] * 20, np.float16), np.array([1e-4] * 20, np.float16)),
    ("divide", np.array([1.0] * 20, np.float16), np.array([0.0] * 20, np.float16)),
    ("subtract", np.array([np.inf] * 20, np.float16), np.array([np.inf] * 20, np.float16)),
    ("add", np.array([1.0] * 20, np.float16), np.array([2.0] * 20, np.float16)),
]


def _messages(fn):
    with warnings.catch_warnings(record=True) as rec, np.errstate(all="warn"):
        warnings.simplefilter("always")
        result = fn()
    return result, sorted(str(w.message) for w in rec)


@pytest.mark.parametrize("op,a,b", CASES, ids=lambda v: str(v)[:12])
def test_fused_f16_warnings_match_numpy(op, a, b):
    got, got_msgs = _messages(lambda: getattr(g, op)(a, b))
    want, want_msgs = _messages(lambda: getattr(np, op)(a, b))
    _same(got, want)
    assert got_msgs == want_msgs
