"""evaluate()'s per-call path (ggml_cy/expr/_call.pyx): the layout key, the cache of
compiled expressions, re-pointing a compiled plan at a call's arrays instead of planning
again (fresh results only), the thread-count check, and the FP-exception reaction -- each
against numpy's results, bit for bit."""
import sys
import warnings

import numpy as np
import pytest

import ggml_cy
from ggml_cy.expr import _call

ev_mod = sys.modules["ggml_cy.expr.evaluate"]
EXPR = "a*b + c*d - e"


def assert_bitwise(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), \
        f"{np.count_nonzero(got != want)} elements differ"


def _entry(expr):
    hits = [v for k, v in _call.CACHE.items() if k[0] == expr]
    assert len(hits) == 1
    return hits[0]


def _operands(rng, n, dtype, offset=0):
    """Five operands of n elements starting `offset` elements into fresh buffers (so each
    call's data pointers differ and sit at varied alignments)."""
    out = {}
    for k in "abcde":
        buf = rng.standard_normal(n + 64).astype(dtype)
        out[k] = buf[offset:offset + n]
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 17, 1000, 4096, 4099, 100_003])
def test_fresh_results_repoint_the_plan(n, dtype):
    """Results kept by the caller: every call has new result (and here input) addresses;
    the plan made for the first fresh result is re-pointed, not made again, and every
    result is numpy's."""
    rng = np.random.default_rng(n)
    _call.CACHE.clear()
    ops = _operands(rng, n, dtype)
    kept = [ggml_cy.evaluate(EXPR, n_threads=2, **ops)]
    plan = _entry(EXPR).plan
    assert _entry(EXPR).plan_fresh
    for offset in (3, 0, 1, 16, 7):
        ops = _operands(rng, n, dtype, offset)
        r = ggml_cy.evaluate(EXPR, n_threads=2, **ops)
        kept.append(r)
        assert _entry(EXPR).plan is plan
        assert r.ctypes.data % 64 == 0
        assert_bitwise(r, ops["a"] * ops["b"] + ops["c"] * ops["d"] - ops["e"])
    assert len({r.ctypes.data for r in kept}) == len(kept)


def test_fresh_results_streamed_repointed(stream_beyond_zero_llc):
    """Large (streamed) fresh results with inputs moved between calls, at 1-3 threads."""
    n = 3_000_017                   # (streaming pays from a few MB on, whatever the LLC)
    rng = np.random.default_rng(11)
    _call.CACHE.clear()
    for nt in (1, 2, 3):
        for offset in (0, 5, 8):
            ops = _operands(rng, n, np.float32, offset)
            r = ggml_cy.evaluate(EXPR, n_threads=nt, **ops)
            assert_bitwise(r, ops["a"] * ops["b"] + ops["c"] * ops["d"] - ops["e"])
        assert _entry(EXPR).plan.streamed_nodes


def test_single_short_rows_run_on_the_machine():
    """A flat group of up to a block's elements is one block of one row: the accumulator
    machine runs it (it went node by node through the kernels before)."""
    for n in (1, 100, 4096):
        _call.CACHE.clear()
        ops = _operands(np.random.default_rng(n), n, np.float32)
        r = ggml_cy.evaluate(EXPR, **ops)
        assert _entry(EXPR).plan.machine_groups, n
        assert_bitwise(r, ops["a"] * ops["b"] + ops["c"] * ops["d"] - ops["e"])


def test_out_calls_plan_again_when_pointers_move():
    """With out= the result may overlap an input: a moved pointer means planning again
    (the overlap checks see the new addresses), and aliasing results stay numpy's."""
    rng = np.random.default_rng(2)
    a, b, c = (rng.standard_normal(5000).astype(np.float32) for _ in range(3))
    _call.CACHE.clear()
    out = np.empty_like(a)
    ggml_cy.evaluate("a*b - c", out=out, a=a, b=b, c=c)
    plan = _entry("a*b - c").plan
    assert not _entry("a*b - c").plan_fresh
    ggml_cy.evaluate("a*b - c", out=out, a=a, b=b, c=c)
    assert _entry("a*b - c").plan is plan                  # nothing moved
    for alias in ("a", "b", "c"):
        ops = {k: v.copy() for k, v in dict(a=a, b=b, c=c).items()}
        want = ops["a"] * ops["b"] - ops["c"]
        r = ggml_cy.evaluate("a*b - c", out=ops[alias], **ops)
        assert r is ops[alias]
        assert_bitwise(r, want)
        assert _entry("a*b - c").plan is not plan


def test_merged_layout_entry_shared_by_fresh_and_out_calls(tmp_path):
    """A memmap operand (not exactly an ndarray: no fast key) files the entry under the
    merged layout, which fresh-result and out= calls share: a plan made for a fresh result
    is not re-pointed for an out= that aliases an input."""
    rng = np.random.default_rng(3)
    a = np.memmap(tmp_path / "a.bin", np.float32, mode="w+", shape=(3000,))
    a[:] = rng.standard_normal(3000)
    c = rng.standard_normal(3000).astype(np.float32)
    want = a * np.float32(1.5) - c
    _call.CACHE.clear()
    assert_bitwise(ggml_cy.evaluate("a*x - c", a=a, x=1.5, c=c), np.asarray(want))
    assert len(_call.CACHE) == 1 and _call.layout_key("a*x - c", None, dict(a=a, x=1.5, c=c)) \
        is None
    for _ in range(2):
        c2 = c.copy()
        r = ggml_cy.evaluate("a*x - c", out=c2, a=a, x=1.5, c=c2)
        assert r is c2
        assert_bitwise(r, np.asarray(want))
        assert not _entry("a*x - c").plan_fresh
        assert_bitwise(ggml_cy.evaluate("a*x - c", a=a, x=1.5, c=c), np.asarray(want))
        assert _entry("a*x - c").plan_fresh
    assert len(_call.CACHE) == 1


def test_layout_key():
    a = np.ones(4, np.float32)
    b = np.ones((2, 2), np.float32)
    k = _call.layout_key("a+b", None, {"a": a, "b": b})
    assert k[0] == "a+b" and k[2:] == ("a", "b")
    # same layouts, other data: the same key; names, order, dtype, byte order, strides
    # and out make others
    assert _call.layout_key("a+b", None, {"a": a + 1, "b": b * 2}) == k
    others = [
        _call.layout_key("a+b", None, {"b": b, "a": a}),
        _call.layout_key("a+b", None, {"a": a, "c": b}),
        _call.layout_key("a+b", None, {"a": a.astype(np.float64), "b": b}),
        _call.layout_key("a+b", None, {"a": a.astype(">f4"), "b": b}),
        _call.layout_key("a+b", None, {"a": a, "b": b.T}),
        _call.layout_key("a+b", None, {"a": a.reshape(1, 4), "b": b}),
        _call.layout_key("a+b", np.empty(4, np.float32), {"a": a, "b": b}),
        _call.layout_key("a-b", None, {"a": a, "b": b}),
    ]
    assert all(o is not None and o != k for o in others)
    assert len(set(others)) == len(others)
    # the full path decides: non-arrays, subclasses, read-only or zero-stride out
    ro = np.empty(4, np.float32)
    ro.flags.writeable = False
    for expr, out, arrays in [
            ("a+b", None, {"a": [1.0], "b": b}),
            ("a+b", None, {"a": True, "b": b}),
            ("a+b", None, {"a": np.ma.masked_array(a), "b": b}),
            ("a+b", ro, {"a": a, "b": a}),
            ("a+b", np.broadcast_to(np.empty(1, np.float32), (4,)), {"a": a, "b": a}),
            ("a+b", [0.0] * 4, {"a": a, "b": a}),
            (b"a+b", None, {"a": a, "b": a})]:
        assert _call.layout_key(expr, out, arrays) is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("number", [float, int, np.float32, np.float64])
def test_number_operands_take_the_fast_path(dtype, number):
    """Numbers among the operands (Python floats and ints, numpy float scalars) are part
    of the key by kind, not value: each call converts its value as the full path does, and
    a fresh result re-points the plan. numpy's dtype and bits at every value (a numpy
    scalar of the other float type makes numpy compute in mixed types: the eager path,
    nothing cached)."""
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal(1000).astype(dtype) for _ in range(2))
    _call.CACHE.clear()
    plan = None
    for value in (2.5, -3, 0.1, 7, 1e-30, -0.0, 3.0e38):
        x = number(value)
        with np.errstate(over="ignore"):        # (3e38 * a overflows in float32)
            want = a * x + b
            r = ggml_cy.evaluate("a*x + b", a=a, x=x, b=b)
        assert_bitwise(r, want)
        if number in (float, int) or number is dtype:
            entry = _entry("a*x + b")
            plan = entry.plan if plan is None else plan
            assert entry.plan is plan
    assert len(_call.CACHE) == (1 if number in (float, int) or number is dtype else 0)


def test_numbers_the_fast_path_leaves_to_the_full_path():
    """A float too large for float32, an int too large for a float, bools and numpy
    integers: numpy's results, warnings and errors, through the full path."""
    a = np.arange(4, dtype=np.float32)
    ggml_cy.evaluate("a*x", a=a, x=2.0)
    with np.errstate(over="ignore", invalid="ignore"):
        want = a * 1e300
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        r = ggml_cy.evaluate("a*x", a=a, x=1e300)
    assert_bitwise(r, want)
    assert any("overflow" in str(w.message) for w in rec)
    with pytest.raises(OverflowError):
        ggml_cy.evaluate("a*x", a=a, x=10**400)
    for tiny in (1e-40, 1e-50, -1e-45):          # float32 subnormal or zero: underflow
        with np.errstate(under="raise"):
            try:
                want = a * tiny
            except FloatingPointError as e:
                with pytest.raises(FloatingPointError, match=str(e)):
                    ggml_cy.evaluate("a*x", a=a, x=tiny)
            else:
                assert_bitwise(ggml_cy.evaluate("a*x", a=a, x=tiny), want)
        assert_bitwise(ggml_cy.evaluate("a*x", a=a, x=tiny), a * tiny)
    assert_bitwise(ggml_cy.evaluate("a*x", a=a, x=True), a * True)
    assert_bitwise(ggml_cy.evaluate("a*x", a=a, x=np.int64(3)), a * np.int64(3))
    for v in (True, np.int64(3), 1j, np.float16(2), "2"):
        assert _call.layout_key("a*x", None, {"a": a, "x": v}) is None
    kinds = {_call.layout_key("a*x", None, {"a": a, "x": v})
             for v in (2.0, 2, np.float32(2), np.float64(2))}
    assert len(kinds) == 4
    assert _call.layout_key("a*x", None, {"a": a, "x": 2.0}) == \
        _call.layout_key("a*x", None, {"a": a, "x": -7.5})


def test_bad_thread_counts_keep_the_cached_entry():
    a = np.arange(10, dtype=np.float32)
    _call.CACHE.clear()
    ggml_cy.evaluate("a*2", a=a)
    entry = _entry("a*2")
    for bad, exc in [(0, ValueError), (-1, ValueError), (10**6, ValueError),
                     (2**70, ValueError), (True, TypeError), (1.5, TypeError),
                     ("2", TypeError), ([2], TypeError)]:
        with pytest.raises(exc, match="n_threads"):
            ggml_cy.evaluate("a*2", n_threads=bad, a=a)
        assert _entry("a*2") is entry
    assert_bitwise(ggml_cy.evaluate("a*2", n_threads=np.int32(3), a=a), a * 2)
    assert _entry("a*2").plan_threads == 3


def test_operands_of_another_kind_take_the_full_path():
    """A cached layout, then the same names given as a scalar, a list, a masked array or
    with a name missing: the full path answers (numpy's result or its errors)."""
    a = np.arange(6, dtype=np.float64)
    ggml_cy.evaluate("a*b", a=a, b=a)
    assert_bitwise(ggml_cy.evaluate("a*b", a=a, b=2.0), a * 2.0)
    with pytest.raises(TypeError, match="must be a numpy array or a real number"):
        ggml_cy.evaluate("a*b", a=a, b=list(a))
    with pytest.raises(NameError, match="'b'"):
        ggml_cy.evaluate("a*b", a=a)
    with pytest.raises(TypeError):
        ggml_cy.evaluate("a*b", a=np.ma.masked_array(a), b=a)
    with pytest.raises(TypeError, match="positional"):
        ggml_cy.evaluate(expr="a*b", a=a, b=a)
    assert_bitwise(ggml_cy.evaluate("expr*2", expr=a), a * 2)


@pytest.mark.parametrize("aliasing", [False, True])
def test_fp_warnings_the_same_on_both_paths(aliasing):
    """The first call takes the full path, the second the fast one: numpy's warnings both
    times, naming the caller's line as numpy's do -- whether the flags are reported at
    once (out= aliases an input) or the expression is re-run operation by operation (the
    eager functions called from evaluate.py: fpe.report names the first line outside
    ggml_cy's files)."""
    a0 = np.array([1.0, -1.0, 0.0])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        want = a0 / np.zeros(3)
    want_msgs = [str(w.message) for w in rec]
    assert want_msgs == ["divide by zero encountered in divide",
                         "invalid value encountered in divide"]
    _call.CACHE.clear()
    places = []
    for _ in range(2):
        a, b = a0.copy(), np.zeros(3)
        kw = dict(out=b) if aliasing else {}
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            r = ggml_cy.evaluate("a / b", a=a, b=b, **kw)
        assert [str(w.message) for w in rec] == want_msgs
        places.append({(w.filename, w.lineno) for w in rec})
        assert_bitwise(r, want)
    assert places[0] == places[1] and len(places[0]) == 1
    assert next(iter(places[0]))[0] == __file__
    with np.errstate(divide="raise"):
        for _ in range(2):
            with pytest.raises(FloatingPointError, match="divide by zero"):
                ggml_cy.evaluate("a / b", a=np.ones(2), b=np.zeros(2))


def test_zero_d_results_are_numpy_scalars_on_the_fast_path():
    x = np.array(2.0, np.float32)
    for _ in range(3):
        r = ggml_cy.evaluate("x*x + 1", x=x)
        assert type(r) is np.float32 and r == np.float32(5.0)
    out = np.empty((), np.float32)
    for _ in range(2):
        assert ggml_cy.evaluate("x*x + 1", x=x, out=out) is out


def test_signature_and_doc():
    import inspect
    sig = inspect.signature(ggml_cy.evaluate)
    assert list(sig.parameters) == ["expr", "n_threads", "out", "arrays"]
    assert sig.parameters["expr"].kind is inspect.Parameter.POSITIONAL_ONLY
    assert "one fused pass" in ggml_cy.evaluate.__doc__


def test_many_operands():
    """More operands than a fused group holds (64 slots): computed, cached, computed again
    through the fast path, numpy's sum in the same order."""
    names = [f"x{i}" for i in range(80)]
    rng = np.random.default_rng(8)
    arrays = {n: rng.standard_normal(33) for n in names}
    want = arrays[names[0]]
    for n in names[1:]:
        want = want + arrays[n]
    _call.CACHE.clear()
    for _ in range(3):
        assert_bitwise(ggml_cy.evaluate(" + ".join(names), **arrays), want)
    assert len(_call.CACHE) == 1


# ----------------------------------------------------------------------------- sequences
from hypothesis import given, strategies as st  # noqa: E402

_EXPRS = ["a*b + c", "a - b*c", "(a + b) * (c - a)", "maximum(a, b) - c*c"]
_SHAPES = [(7,), (64,), (3, 5), (2, 3, 4), (1000,), (4099,)]


def _numpy_value(expr, ops):
    a, b, c = ops["a"], ops["b"], ops["c"]
    return {"a*b + c": lambda: a * b + c, "a - b*c": lambda: a - b * c,
            "(a + b) * (c - a)": lambda: (a + b) * (c - a),
            "maximum(a, b) - c*c": lambda: np.maximum(a, b) - c * c}[expr]()


def _layout(rng, shape, dtype, kind):
    """An operand of `shape` laid out as `kind`: contiguous, offset into a larger buffer,
    reversed along the last axis, a transposed copy's view, broadcast along axis 0 -- or a
    number: a Python float or int, a numpy scalar of the dtype."""
    n = int(np.prod(shape))
    if kind == "pyfloat":
        return float(rng.standard_normal())
    if kind == "pyint":
        return int(rng.integers(-5, 6))
    if kind == "npscalar":
        return dtype(rng.standard_normal())
    if kind == "offset":
        k = int(rng.integers(1, 16))
        return rng.standard_normal(n + k).astype(dtype)[k:].reshape(shape)
    if kind == "reversed":
        return rng.standard_normal(shape).astype(dtype)[..., ::-1]
    if kind == "transposed" and len(shape) >= 2:
        return np.ascontiguousarray(rng.standard_normal(shape[::-1]).astype(dtype)).T
    if kind == "broadcast" and len(shape) >= 2:
        return np.broadcast_to(rng.standard_normal((1,) + shape[1:]).astype(dtype), shape)
    return rng.standard_normal(shape).astype(dtype)


_BASE = st.tuples(st.sampled_from(_EXPRS), st.sampled_from(_SHAPES),
                  st.sampled_from([np.float32, np.float64]),
                  st.lists(st.sampled_from(["plain", "offset", "reversed", "transposed",
                                            "broadcast", "pyfloat", "pyint", "npscalar"]),
                           min_size=3, max_size=3))
_CALL = st.tuples(st.integers(0, 1), st.sampled_from(["fresh", "out", "alias"]),
                  st.sampled_from([None, 1, 2, 3]))


@given(bases=st.lists(_BASE, min_size=1, max_size=2), calls=st.lists(_CALL, min_size=2,
                                                                     max_size=10),
       seed=st.integers(0, 2**32 - 1))
def test_call_sequences_match_numpy(bases, calls, seed):
    """Sequences of calls over one or two (expression, shape, dtype, layouts) with new
    data each time -- so the cache hits, plans are re-pointed, made again for out= and
    other thread counts, and results alias inputs -- each result numpy's, bit for bit,
    and the inputs as they were unless one is the out."""
    rng = np.random.default_rng(seed)
    _call.CACHE.clear()
    for which, out_kind, nt in calls:
        expr, shape, dtype, kinds = bases[which % len(bases)]
        if all(k in ("pyfloat", "pyint", "npscalar") for k in kinds):
            kinds = ["plain"] + kinds[1:]   # (numbers alone: Python's arithmetic, and
                                            # evaluate computes Python ints as floats)
        ops = {k: _layout(rng, shape, dtype, kind) for k, kind in zip("abc", kinds)}
        want = _numpy_value(expr, ops)
        before = {k: np.copy(v) for k, v in ops.items()}
        kw = {}
        shape_r = np.shape(want)
        if out_kind == "out":
            kw["out"] = np.empty(shape_r, np.result_type(want))
        elif out_kind == "alias":
            writable = [k for k, v in ops.items() if isinstance(v, np.ndarray)
                        and v.flags.writeable and 0 not in v.strides
                        and v.shape == shape_r and v.dtype == np.result_type(want)]
            if writable:
                kw["out"] = ops[writable[0]]
        r = ggml_cy.evaluate(expr, n_threads=nt, **ops, **kw)
        if "out" in kw:
            assert r is kw["out"]
        assert_bitwise(np.ascontiguousarray(r), np.ascontiguousarray(want))
        for k, v in ops.items():
            if "out" not in kw or v is not kw["out"]:
                assert_bitwise(np.ascontiguousarray(v), np.ascontiguousarray(before[k]))
