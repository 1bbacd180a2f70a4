"""ggml_cy.evaluate: numpy's answers (bitwise for + - * /), broadcasting, layouts, out=,
thread counts, and clear errors for bad input."""
import numpy as np
import pytest

import ggml_cy
from ggml_cy import evaluate

from _graph_helpers import assert_bitwise


def _arrays(rng, shape, dtype, names="abcde"):
    return {k: (rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1, 1], size=shape)).astype(dtype)
            for k in names}


@pytest.mark.parametrize("n_threads", [1, 2, 5])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7,), (100_003,), (3, 50_000), (4, 5, 6), (2, 3, 4, 5, 6)])
def test_abcde(shape, dtype, n_threads):
    rng = np.random.default_rng(len(shape))
    v = _arrays(rng, shape, dtype)
    got = evaluate("a*b + c*d - e", n_threads=n_threads, **v)
    assert_bitwise(got, v["a"] * v["b"] + v["c"] * v["d"] - v["e"])


EXPRS = [
    ("a / b - c", lambda a, b, c, d, e: a / b - c),
    ("-a + 2.5 * b", lambda a, b, c, d, e: -a + 2.5 * b),
    ("(a - b) ** 2 + c", lambda a, b, c, d, e: (a - b) ** 2 + c),
    ("maximum(a, b) - minimum(c, d)", lambda a, b, c, d, e: np.maximum(a, b) - np.minimum(c, d)),
    ("2 - a", lambda a, b, c, d, e: 2 - a),
    ("1 / a", lambda a, b, c, d, e: 1 / a),
    ("a", lambda a, b, c, d, e: a.copy()),
    ("abs(a) * sign(b) + floor(c) - trunc(d)", lambda a, b, c, d, e:
        np.abs(a) * np.sign(b) + np.floor(c) - np.trunc(d)),
    ("square(a) + sqrt(abs(b))", lambda a, b, c, d, e: np.square(a) + np.sqrt(np.abs(b))),
    ("a % b + a // b", lambda a, b, c, d, e: a % b + a // b),
    ("((((a*b)+c)-d)*e) + a*b*c*d*e", lambda a, b, c, d, e: ((((a*b)+c)-d)*e) + a*b*c*d*e),
]


@pytest.mark.parametrize("expr, ref", EXPRS, ids=[e for e, _ in EXPRS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exact_expressions(expr, ref, dtype):
    rng = np.random.default_rng(1)
    v = _arrays(rng, (300, 70), dtype)
    assert_bitwise(evaluate(expr, n_threads=2, **v), ref(**v))


def test_transcendentals_match_graph_and_are_close_to_numpy():
    rng = np.random.default_rng(2)
    v = _arrays(rng, (50_000,), np.float32, "ab")
    got = evaluate("exp(a) + tanh(b) * log(abs(a))", **v)
    ref = np.exp(v["a"]) + np.tanh(v["b"]) * np.log(np.abs(v["a"]))
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_broadcasting_and_layouts():
    rng = np.random.default_rng(3)
    a = rng.random((40, 1, 30), dtype=np.float32)
    b = rng.random((1, 20, 30), dtype=np.float32)[:, ::-1]       # negative strides
    c = rng.random((30, 40), dtype=np.float32).T[:, None, :30]   # transposed view
    d = np.float32(3)                                            # numpy scalar
    got = evaluate("a*b - c + d", a=a, b=b, c=c, d=d)
    assert_bitwise(got, a * b - c + d)
    got = evaluate("c - a", a=a, c=c)
    assert_bitwise(got, c - a)


def test_dtype_promotion():
    rng = np.random.default_rng(4)
    a = rng.random(10).astype(np.float32)
    b = rng.random(10)
    assert_bitwise(evaluate("a + b", a=a, b=b), a + b)
    assert evaluate("a * 2", a=a).dtype == np.float32          # Python numbers are weak
    assert evaluate("a * x", a=a, x=2.0).dtype == np.float32
    assert evaluate("x * 2", x=3.0).dtype == np.float64
    assert evaluate("x * 2", x=3.0).shape == ()


def test_out_and_threads_identical():
    rng = np.random.default_rng(5)
    v = _arrays(rng, (123_457,), np.float32)
    out = np.empty(123_457, np.float32)
    r = evaluate("a*b + c*d - e", out=out, **v)
    assert r is out
    for n in range(1, 9):
        assert_bitwise(evaluate("a*b + c*d - e", n_threads=n, **v), out)
    # out aliasing an input (elementwise, same positions) is fine
    a = v["a"].copy()
    evaluate("a*b + c", out=a, a=a, b=v["b"], c=v["c"])
    assert_bitwise(a, v["a"] * v["b"] + v["c"])


def test_empty():
    assert evaluate("a + b", a=np.zeros(0, np.float32), b=np.zeros(0, np.float32)).shape == (0,)


@pytest.mark.parametrize("expr, kwargs, err, match", [
    ("a +", {"a": 1.0}, SyntaxError, "cannot parse"),
    ("a b", {"a": 1.0, "b": 1.0}, SyntaxError, "cannot parse"),
    ("a + z", {"a": 1.0}, NameError, "'z'"),
    ("foo(a)", {"a": 1.0}, ValueError, "unknown function 'foo'"),
    ("np.exp(a)", {"a": 1.0}, ValueError, "unknown function"),
    ("exp(a, a)", {"a": 1.0}, TypeError, "1 positional"),
    ("maximum(a)", {"a": 1.0}, TypeError, "2 positional"),
    ("exp(x=a)", {"a": 1.0}, TypeError, "positional"),
    ("a.T", {"a": np.ones(3)}, ValueError, "unsupported syntax"),
    ("a[0]", {"a": np.ones(3)}, ValueError, "unsupported syntax"),
    ("a if a else a", {"a": 1.0}, ValueError, "unsupported syntax"),
    ("a < 1 < 2", {"a": 1.0}, TypeError, "chained comparisons"),
    ("lambda: 1", {}, ValueError, "unsupported syntax"),
    ("a + 'x'", {"a": 1.0}, TypeError, "not a real number"),
    ("a and a", {"a": np.ones(3)}, TypeError, "instead of 'and'"),
    ("sum(a) + 1", {"a": np.ones(3)}, ValueError, "last operation"),
    ("a + b", {"a": np.ones(3), "b": np.ones(4)}, ValueError, "broadcast"),
    ("contains(a, a)", {"a": np.ones(3)}, NotImplementedError, "contains"),
    ("a + 1", {"a": np.array(["x"])}, TypeError, "<U1"),
    ("a + 1", {"a": "abc"}, TypeError, "numpy array or a real number"),
    ("a + 1", {"a": [1.0, 2.0]}, TypeError, "numpy array or a real number"),
    ("a + 1", {"a": None}, TypeError, "numpy array or a real number"),
    ("a + 1", {"a": np.ones(3), "out": np.ones(4)}, ValueError, "shape"),
    ("a + 1", {"a": np.ones(3), "out": np.ones(3, np.float32)}, ValueError, "dtype"),
    ("a + 1", {"a": np.ones(3), "out": [0.0] * 3}, TypeError, "out"),
    ("a + 1", {"a": np.ones(3), "n_threads": 0}, ValueError, "n_threads"),
    ("a + 1", {"a": np.ones(3), "n_threads": "2"}, TypeError, "n_threads"),
])
def test_bad_input(expr, kwargs, err, match):
    with pytest.raises(err, match=match):
        evaluate(expr, **kwargs)


def test_bad_expr_types_and_readonly_out():
    with pytest.raises(TypeError, match="expr must be a str"):
        evaluate(3, a=1.0)
    out = np.ones(3)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        evaluate("a + 1", a=np.ones(3), out=out)
    assert_bitwise(out, np.ones(3))


def test_too_many_unmergeable_dims():
    a = np.ones((2, 3, 4, 5, 6))[:, ::2, :, ::2, :]
    b = np.ones((2, 2, 4, 3, 6))
    with pytest.raises(ValueError, match="at most 4"):
        evaluate("a + b", a=a, b=b)
    assert_bitwise(evaluate("a + b", a=np.ascontiguousarray(a), b=b), np.full(b.shape, 2.0))


def test_out_partially_overlapping_inputs():
    """out shifted against an input over one buffer: numpy's answer (inputs as before)."""
    rng = np.random.default_rng(6)
    for n in (1000, 200_000):
        buf = rng.standard_normal(n + 1).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        want = buf[1:] * b + buf[1:]
        out = buf[:-1]
        evaluate("a*b + a", a=buf[1:], b=b, out=out, n_threads=2)
        assert_bitwise(buf[:-1], want)
        buf2 = rng.standard_normal(n + 1).astype(np.float32)
        want2 = buf2[:-1] - b * 2
        evaluate("a - b*2", a=buf2[:-1], b=b, out=buf2[1:], n_threads=3)
        assert_bitwise(buf2[1:], want2)


# ----------------------------------------------------------------------------- plan cache
def test_repeated_calls_follow_the_new_data():
    """A second call with the same layout reuses the compiled graph: it must read the new
    arrays and write the new result, never the first call's."""
    rng = np.random.default_rng(5)
    for n in (9, 70_001):
        first = _arrays(rng, (n,), np.float32)
        r1 = evaluate("a*b + c*d - e", **first)
        second = _arrays(rng, (n,), np.float32)
        out = np.empty(n, np.float32)
        r2 = evaluate("a*b + c*d - e", out=out, **second)
        assert r2 is out
        assert_bitwise(r2, second["a"] * second["b"] + second["c"] * second["d"] - second["e"])
        assert_bitwise(r1, first["a"] * first["b"] + first["c"] * first["d"] - first["e"])


def test_cached_layout_does_not_admit_other_dtypes_or_layouts():
    a = np.arange(6, dtype=np.float32)
    evaluate("a * 2", a=a)
    with pytest.raises(TypeError, match=">f4"):
        evaluate("a * 2", a=a.astype(">f4"))
    f64 = np.arange(6, dtype=np.float64)
    assert evaluate("a * 2", a=f64).dtype == np.float64
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert_bitwise(evaluate("a - 1", a=m), m - 1)
    assert_bitwise(evaluate("a - 1", a=m.T), m.T - 1)          # same shape class, new strides
    assert_bitwise(evaluate("a - 1", a=m[:, ::2]), m[:, ::2] - 1)
    with pytest.raises(ValueError, match="read-only"):
        ro = np.empty(6, np.float32)
        ro.flags.writeable = False
        evaluate("a * 2", a=a, out=ro)
    with pytest.raises(ValueError, match="out has shape"):
        evaluate("a * 2", a=a, out=np.empty(5, np.float32))


def test_out_aliasing_an_input_after_caching():
    rng = np.random.default_rng(8)
    v = _arrays(rng, (50_000,), np.float32, "abc")
    want = v["a"] * v["b"] + v["c"]
    evaluate("a*b + c", out=np.empty(50_000, np.float32), **v)   # cached without aliasing
    a = v["a"].copy()
    v["a"] = a
    evaluate("a*b + c", out=a, **v)
    assert_bitwise(a, want)


def test_concurrent_calls_with_one_layout():
    """Threads evaluating the same expression and layout must not share one compiled
    graph (an entry is taken out of the cache while it runs)."""
    import threading
    rng = np.random.default_rng(9)
    sets = [_arrays(rng, (30_000,), np.float32, "ab") for _ in range(8)]
    errors = []

    def work(v):
        want = v["a"] * v["b"] - v["a"]
        for _ in range(50):
            got = evaluate("a*b - a", n_threads=1, **v)
            if not np.array_equal(got, want):
                errors.append("mismatch")
                return

    threads = [threading.Thread(target=work, args=(v,)) for v in sets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_same_arrays_new_contents_and_thread_counts():
    """Same arrays again (the plan is reused: nothing moved): the new contents count, for
    any thread count, including an out that later aliases an input."""
    rng = np.random.default_rng(12)
    v = _arrays(rng, (40_000,), np.float32, "abc")
    out = np.empty(40_000, np.float32)
    for step, nt in enumerate((1, 2, 2, 3, 1)):
        v["a"][:] = rng.standard_normal(40_000).astype(np.float32) + step
        evaluate("a*b - c/a", out=out, n_threads=nt, **v)
        assert_bitwise(out, v["a"] * v["b"] - v["c"] / v["a"])
    want = v["a"] * v["b"] - v["c"] / v["a"]
    evaluate("a*b - c/a", out=v["c"], **v)                 # out now aliases c
    assert_bitwise(v["c"], want)


# ----------------------------------------------------------------------------- numpy typing
def _np_eval(expr, **values):
    env = {"maximum": np.maximum, "minimum": np.minimum, "abs": np.abs,
           "negative": np.negative, "square": np.square, "sqrt": np.sqrt}
    with np.errstate(all="ignore"):
        return np.asarray(eval(expr, env, values))


@pytest.mark.parametrize("expr", [
    "2.39 / -1.37 - (a - b)",              # Python arithmetic on constants, in double
    "(3 + 4.5) ** 2 * a",
    "abs(1.74) + a",                        # np.abs(1.74) is a strong float64 scalar
    "maximum(2.0, -1.0) * a - b",
    "a * a + c",                            # float32 product, then float64 sum
    "square(a) - c * b",
    "x * y + a",                            # two Python numbers: Python arithmetic
    "abs(x) + a",                           # a numpy function of a Python number
    "sqrt(c) + a / b",
])
def test_typed_like_numpy(expr):
    rng = np.random.default_rng(21)
    v = {"a": rng.standard_normal(50_000).astype(np.float32),
         "b": rng.standard_normal(50_000).astype(np.float32),
         "c": np.abs(rng.standard_normal(50_000)),            # float64
         "x": 1.1, "y": 2.7}
    used = {k: val for k, val in v.items() if k in expr}
    want = _np_eval(expr, **used)
    for _ in range(2):                      # second call: cached paths
        got = evaluate(expr, **used)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert_bitwise(got, want)
    out = np.empty_like(want)
    assert evaluate(expr, out=out, **used) is out
    assert_bitwise(out, want)


def test_constant_errors():
    a = np.ones(3, np.float32)
    with pytest.raises(ZeroDivisionError, match="constant part"):
        evaluate("a + 1.0 / 0.0", a=a)
    # a complex constant: numpy's answer (complex), as the same expression in numpy
    assert_bitwise(evaluate("a + (-8.0) ** 0.5", a=a), a + (-8.0) ** 0.5)
    with pytest.raises(OverflowError, match="overflows"):
        evaluate("a + 10.0 ** 400", a=a)
    assert np.isinf(evaluate("a + abs(1.0) / 0.0", a=a)).all()   # numpy scalars: inf


def test_random_expressions_against_numpy():
    """Random trees of + - * / maximum minimum abs negative square over arrays of mixed
    dtypes and layouts (strided, reversed, transposed, broadcast), Python numbers and
    constants, with NaNs: numpy's dtype and bits, fresh and cached."""
    import random
    random.seed(4)
    rng = np.random.default_rng(4)

    def tree(depth):
        if depth == 0 or random.random() < 0.3:
            return random.choice("abcd") if random.random() < 0.85 else repr(
                round(random.uniform(-3, 3), 2))
        r = random.random()
        if r < 0.6:
            return f"({tree(depth - 1)} {random.choice('+-*/')} {tree(depth - 1)})"
        f = random.choice(["maximum", "minimum", "abs", "negative", "square"])
        if f in ("maximum", "minimum"):
            return f"{f}({tree(depth - 1)}, {tree(depth - 1)})"
        return f"{f}({tree(depth - 1)})"

    def array(shape, dtype):
        kind = random.random()
        if kind < 0.25 and shape:
            x = rng.standard_normal([s * 2 for s in shape]).astype(dtype)
            x = x[tuple(slice(None, None, -2) for _ in shape)]
        elif kind < 0.45 and len(shape) >= 2:
            x = rng.standard_normal(shape[::-1]).astype(dtype).T
        else:
            x = rng.standard_normal(shape).astype(dtype)
        if x.size:
            x[rng.random(x.shape) < 0.05] = np.nan
        return x

    for _ in range(250):
        nd = random.randint(0, 3)
        shape = [random.choice([1, 2, 7, 64, 9000]) for _ in range(nd)]
        while np.prod(shape) > 100_000:
            shape[random.randrange(nd)] = 2
        values = {}
        for k in "abcd":
            r = random.random()
            sub = [d if random.random() < 0.8 else 1 for d in shape][random.randint(0, nd):]
            if r < 0.15:
                values[k] = round(random.uniform(-3, 3), 3)
            else:
                values[k] = array(sub, np.float64 if r < 0.35 else np.float32)
        expr = tree(random.randint(1, 5))
        used = {k: x for k, x in values.items() if k in expr}
        if not used:
            continue
        want = _np_eval(expr, **used)
        for _ in range(2):
            got = evaluate(expr, **used)
            assert got.dtype == want.dtype, expr
            nan = np.isnan(want)
            assert np.array_equal(np.isnan(got), nan), expr
            assert_bitwise(np.atleast_1d(got)[~np.atleast_1d(nan)],
                           np.atleast_1d(want)[~np.atleast_1d(nan)])


def test_mixed_precision_with_every_function_family():
    """Mixed float32/float64 trees go op by op through the eager functions: ggml's
    activations and numpy's functions alike, with out= and broadcasting."""
    rng = np.random.default_rng(33)
    a = rng.standard_normal((300, 40)).astype(np.float32)
    c = rng.standard_normal(40)                                     # float64, broadcast
    cases = {
        "relu(a) + c": ggml_cy.relu(a) + c,
        "sigmoid(a * a) - c": ggml_cy.sigmoid(a * a) - c,
        "floor(a) // 2.5 + c": np.floor_divide(np.floor(a), 2.5) + c,
        "maximum(a, 0.5) ** 2 * c": np.square(np.maximum(a, np.float32(0.5))) * c,
        "fmod(a, 0.75) + sign(c)": np.fmod(a, np.float32(0.75)) + np.sign(c),
    }
    for expr, want in cases.items():
        out = np.empty(want.shape, np.float64)
        assert evaluate(expr, a=a, c=c, out=out) is out
        assert_bitwise(out, np.asarray(want))
    with pytest.raises(ValueError, match="dtype float32"):
        evaluate("relu(a) + c", a=a, c=c, out=np.empty((300, 40), np.float32))
