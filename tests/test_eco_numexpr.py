"""numexpr's language in ggml_cy.evaluate (numpy's typing) and ggml_cy.numexpr (numexpr's
typing): results against numpy (bitwise where numpy's typing applies) and against numexpr
itself (dtype and values), the drop-in API, bad input, and numexpr's own test suite."""
import os
import subprocess
import sys

import numpy as np
import pytest

import ggml_cy
import ggml_cy.numexpr as ne
from ggml_cy.expr import language

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _bitwise(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind in "fc":
        g = got.view(f"u{got.dtype.itemsize // (2 if got.dtype.kind == 'c' else 1)}")
        w = want.view(g.dtype)
        same = (g == w) | (np.isnan(got.view(got.dtype.kind == "c" and
                                             f"f{got.dtype.itemsize // 2}" or got.dtype))
                           & np.isnan(want.view(got.dtype.kind == "c" and
                                                f"f{got.dtype.itemsize // 2}" or want.dtype)))
        assert same.all(), (got, want)
    else:
        assert np.array_equal(got, want)


def _inputs(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "a": rng.standard_normal(n),
        "b": rng.standard_normal(n).astype(np.float32),
        "i": rng.integers(-50, 50, n).astype(np.int32),
        "l": rng.integers(-10**6, 10**6, n),
        "m": rng.random(n) > 0.5,
        "z": rng.standard_normal(n) + 1j * rng.standard_normal(n),
        "u": rng.standard_normal((3, n // 10)),
    }


# ---------------------------------------------------------------- evaluate: numpy's typing
NUMPY_CASES = [
    ("a > b", "a > b"),
    ("(a > 0) & (b < 0)", "(a > 0) & (b < 0)"),
    ("(a > 0) | ~m", "(a > 0) | ~m"),
    ("m ^ (i > 3)", "m ^ (i > 3)"),
    ("where(a > 0, a, b)", "np.where(a > 0, a, b)"),
    ("where(m, i, 2)", "np.where(m, i, 2)"),
    ("i * 3 + l // 7 - i % 5", "i * 3 + l // 7 - i % 5"),
    ("i << 2", "i << 2"),
    ("l >> 3", "l >> 3"),
    ("i & 12 | 3", "i & 12 | 3"),
    ("arctan2(a, b) + fmod(a, 0.7)", "np.arctan2(a, b) + np.fmod(a, 0.7)"),
    ("arcsin(b / 4) + arccos(b / 4) + arctan(b)", "np.arcsin(b / 4) + np.arccos(b / 4) + np.arctan(b)"),
    ("sinh(b) + cosh(b) + tanh(b)", "np.sinh(b) + np.cosh(b) + np.tanh(b)"),
    ("log10(abs(a) + 1) + log2(abs(a) + 1)", "np.log10(np.abs(a) + 1) + np.log2(np.abs(a) + 1)"),
    ("hypot(a, b) + copysign(1.5, a) + nextafter(a, b)", "np.hypot(a, b) + np.copysign(1.5, a) + np.nextafter(a, b)"),
    ("z * 2 + conj(z)", "z * 2 + np.conj(z)"),
    ("real(z) + imag(z) + z.real", "np.real(z) + np.imag(z) + z.real"),
    ("sqrt(z) * exp(z)", "np.sqrt(z) * np.exp(z)"),
    ("abs(z) > 1", "np.abs(z) > 1"),
    ("i + b", "i + b"),
    ("l + b", "l + b"),
    ("m + m", "m + m"),
    ("i / 2", "i / 2"),
    ("sum(a * b)", "np.sum(a * b)"),
    ("sum(u ** 2, axis=1)", "np.sum(u ** 2, axis=1)"),
    ("prod(u / 2 + 1, axis=0)", "np.prod(u / 2 + 1, axis=0)"),
    ("min(a - 1)", "np.min(a - 1)"),
    ("max(i, axis=0)", "np.max(i, axis=0)"),
    ("isnan(a / a) | isinf(a) | signbit(a) | isfinite(a)", "np.isnan(a / a) | np.isinf(a) | np.signbit(a) | np.isfinite(a)"),
    ("round(a * 10) + trunc(a) + sign(i)", "np.round(a * 10) + np.trunc(a) + np.sign(i)"),
]


@pytest.mark.parametrize("expr,npexpr", NUMPY_CASES)
def test_evaluate_numpy_typing(expr, npexpr):
    env = _inputs()
    with np.errstate(all="ignore"):
        want = eval(npexpr, {"np": np}, dict(env))
        got = ggml_cy.evaluate(expr, **env)
    if any(f in expr for f in _ULP_FUNCS):
        # ggml_cy's float32 exp/log/sin/cos/tanh are within a few ulp of numpy's (README)
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape
        f32 = got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=4e-7 if f32 else 1e-15,
                                   atol=(2e-7 if f32 else 0) * np.nanmax(np.abs(want)),
                                   equal_nan=True)
    else:
        _bitwise(got, want)


_ULP_FUNCS = ("tanh", "exp(", "log(", "sin(", "cos(", "expm1", "log1p", "log2")


def test_evaluate_language_out_and_threads():
    env = _inputs()
    out = np.empty(1000, bool)
    assert ggml_cy.evaluate("(a > 0) & m", out=out, n_threads=2, **env) is out
    _bitwise(out, (env["a"] > 0) & env["m"])
    with pytest.raises(ValueError, match="out has shape"):
        ggml_cy.evaluate("(a > 0) & m", out=np.empty(1000), **env)
    assert ggml_cy.get_num_threads() >= 1


def test_evaluate_scalars_and_weak_numbers():
    f32 = np.arange(5, dtype=np.float32)
    assert ggml_cy.evaluate("where(a > 2, a, 0.5)", a=f32).dtype == np.float32   # NEP 50
    assert ggml_cy.evaluate("a > 2", a=3.0) is np.True_ or ggml_cy.evaluate("a > 2", a=3.0)
    _bitwise(ggml_cy.evaluate("sum(a)", a=f32), np.sum(f32))


@pytest.mark.parametrize("expr,env,err,match", [
    ("contains(a, a)", {"a": np.ones(3)}, NotImplementedError, "contains"),
    ("a == 'x'", {"a": np.ones(3)}, NotImplementedError, "string"),
    ("a and b", {"a": np.ones(3), "b": np.ones(3)}, TypeError, "'&' instead of 'and'"),
    ("not a", {"a": np.ones(3)}, TypeError, "'~'"),
    ("sum(a) * 2", {"a": np.ones(3)}, ValueError, "last operation"),
    ("sum(a, axis=-1)", {"a": np.ones(3)}, ValueError, "negative axis"),
    ("sum(a, axis=2)", {"a": np.ones((3, 3))}, ValueError, "out of bounds"),
    ("sum(a, axis=b)", {"a": np.ones(3), "b": 1}, ValueError, "integer constant"),
    ("where(a, b)", {"a": np.ones(3), "b": 1}, TypeError, "3 positional"),
    ("a < 1 < 2", {"a": np.ones(3)}, TypeError, "chained"),
    ("a is b", {"a": np.ones(3), "b": 1}, ValueError, "unsupported comparison"),
    ("a > b", {"a": np.ones(3), "b": np.ones(4)}, ValueError, "broadcast"),
    ("a > 1", {"a": np.array(["s"])}, TypeError, "dtype"),
    ("a > 1", {"a": [1, 2]}, TypeError, "numpy array"),
    ("a > z", {"a": np.ones(3)}, NameError, "'z'"),
])
def test_evaluate_language_bad_input(expr, env, err, match):
    with pytest.raises(err, match=match):
        ggml_cy.evaluate(expr, **env)


# ---------------------------------------------------------------- ggml_cy.numexpr
NE_CASES = [
    "2*a + 3*b", "a*b + 2", "b * 2", "b * 2.0", "i + b", "l + b", "i * l", "i / 2",
    "i // 3 + i % 7", "a > b", "(a > 0) & (b < 0)", "~m | (i > 0)", "m * m", "m + m",
    "where(a > 0, a, b)", "where(m, i, 2)", "arctan2(a, b)", "fmod(b, 0.3)", "sin(i)",
    "sqrt(abs(b))", "arcsinh(b) + arccosh(abs(b) + 1)", "log10(abs(a) + 1)", "conj(a)",
    "real(z) + imag(z)", "z * conj(z)", "abs(z)", "sign(i)", "round(b * 3)", "copy(i)",
    "ones_like(b)", "maximum(i, 3)", "minimum(a, b)", "hypot(b, b)", "i ** 2",
    "b ** 0.5", "a ** -1.5", "(a + 1) ** 3", "complex(a, b)", "i << 2", "l >> 2",
    "i & 7", "isnan(b / b)", "sum(b * 2)", "sum(u, axis=1)", "prod(u / 4 + 1, axis=0)",
    "min(a)", "max(a * b, axis=0)", "1 + 1", "cos(3) + a",
]


@pytest.mark.parametrize("expr", NE_CASES)
def test_numexpr_shim_matches_numexpr(expr):
    numexpr = pytest.importorskip("numexpr")
    env = _inputs()
    with np.errstate(all="ignore"):
        want = numexpr.evaluate(expr, local_dict=dict(env))
        got = ne.evaluate(expr, local_dict=dict(env))
    assert isinstance(got, np.ndarray)
    assert got.dtype == want.dtype, (expr, got.dtype, want.dtype)
    assert got.shape == want.shape
    if got.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=2e-6 if got.dtype == np.float32 else
                                   1e-12, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def test_numexpr_typing_rules_documented():
    """numexpr's casting rules differ from numpy's in these places (README lists them)."""
    b = np.ones(3, np.float32)
    l64 = np.ones(3, np.int64)
    assert ne.evaluate("b * 2.0").dtype == np.float64          # numpy: float32
    assert ne.evaluate("l64 + b").dtype == np.float32          # numpy: float64
    assert ne.evaluate("sin(l64)").dtype == np.float64
    assert ne.evaluate("conj(b)").dtype == np.complex128       # numpy: float32
    assert ne.evaluate("m8 + m8", local_dict={"m8": np.ones(3, np.int8)}).dtype == np.int32
    assert ggml_cy.evaluate("b * 2.0", b=b).dtype == np.float32
    assert ggml_cy.evaluate("l64 + b", l64=l64, b=b).dtype == np.float64


def test_numexpr_fused_path_is_numpys_bits():
    """One-float-kind arithmetic runs as evaluate's fused pass: numpy's bits."""
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(100_003).astype(np.float32) for _ in range(3))
    _bitwise(ne.evaluate("a*b + c*2 - sqrt(abs(a))"), a * b + c * 2 - np.sqrt(np.abs(a)))
    x = rng.standard_normal(1000)
    _bitwise(ne.evaluate("sum(x * 2 + 1)"), np.asarray(np.sum(x * 2 + 1)))


def test_numexpr_api():
    a = np.arange(6.0)
    b = np.arange(6.0) * 2

    def inner():
        return ne.evaluate("a + b")          # names from the caller's frame (here: closure)
    np.testing.assert_array_equal(ne.evaluate("a + b"), a + b)
    np.testing.assert_array_equal(ne.evaluate("a + b", local_dict={"a": b, "b": b}), 2 * b)
    np.testing.assert_array_equal(ne.evaluate("a + qq", global_dict={"qq": 1.0}), a + 1)
    out = np.empty(6)
    assert ne.evaluate("a * b", out=out) is out
    np.testing.assert_array_equal(out, a * b)
    out32 = np.empty(6, np.float32)
    ne.evaluate("a * b", out=out32, casting="same_kind")
    with pytest.raises(TypeError):
        ne.evaluate("a * b", out=np.empty(6, np.int32), casting="safe")
    a = a + 1
    np.testing.assert_array_equal(ne.re_evaluate(), a * b)
    assert ne.validate("a + nope") is not None and isinstance(ne.validate("a + nope"), KeyError)
    assert isinstance(ne.validate("a +"), SyntaxError)
    f = ne.NumExpr("2*a + b", [("a", np.double), ("b", np.double)])
    np.testing.assert_array_equal(f(a, b), 2 * a + b)
    g = ne.NumExpr(2.0 * ne.E.a + ne.E.b * 3)
    np.testing.assert_array_equal(g.run(a, b), 2 * a + b * 3)
    prev = ne.set_num_threads(2)
    assert ne.get_num_threads() == 2 == ggml_cy.get_num_threads()
    ne.set_num_threads(prev)
    assert ne.detect_number_of_cores() >= 1
    with pytest.raises(NotImplementedError):
        ne.disassemble(f)


@pytest.mark.parametrize("expr,env,err", [
    ("contains(a, a)", {"a": np.ones(3)}, NotImplementedError),
    ("a + nope", {"a": np.ones(3)}, KeyError),
    ("a +", {"a": np.ones(3)}, SyntaxError),
    ("a and a", {"a": np.ones(3)}, TypeError),
    ("a < [0, 0]", {"a": np.ones(3)}, ValueError),
    ("i ** -1", {"i": np.ones(3, np.int32)}, ValueError),
    ("__import__('os')", {}, ValueError),
    ("a.T", {"a": np.ones(3)}, ValueError),
    ("a + b", {"a": np.ones(3), "b": np.ones(4)}, ValueError),
    ("a", {"a": np.array(["x"])}, NotImplementedError),
    ("a", {"a": np.array([object()])}, TypeError),
    ("sum(a, axis=3)", {"a": np.ones((2, 2))}, ValueError),
    ("a & a", {"a": np.ones(3)}, TypeError),
])
def test_numexpr_bad_input(expr, env, err):
    with pytest.raises(err):
        ne.evaluate(expr, local_dict=env)


def test_numexpr_bad_arguments():
    a = np.ones(3)
    with pytest.raises(ValueError, match="order"):
        ne.evaluate("a", order="X")
    with pytest.raises(ValueError, match="casting"):
        ne.evaluate("a", casting="bogus")
    with pytest.raises(TypeError, match="out"):
        ne.evaluate("a", out=[1, 2, 3])
    with pytest.raises(ValueError, match="shape"):
        ne.evaluate("a + 1", out=np.empty(4))
    with pytest.raises(TypeError):
        ne.evaluate(3)
    assert a.sum() == 3


def test_language_kinds():
    assert language.kind_of_array(np.ones(1, np.uint8)) == "int"
    assert language.kind_of_array(np.ones(1, np.uint32)) == "long"
    assert language.kind_of_array(np.ones(1, np.complex64)) == "complex"


def test_numexpr_own_suite():
    """numexpr's tests/test_numexpr.py through tools/run_numexpr_suite.py: every failure
    must be one README lists (the script exits 1 otherwise)."""
    pytest.importorskip("numexpr")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "run_numexpr_suite.py"),
                        "--", "-q", "--tb=no", "-p", "no:randomly"],
                       capture_output=True, text=True, timeout=900)
    tail = r.stdout[-3000:] + r.stderr[-2000:]
    assert r.returncode == 0, tail
    assert "passed" in r.stdout, tail


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("red", ["sum", "prod", "min", "max"])
def test_fused_final_reductions_are_numpys_bits(red, dtype):
    """sum/prod/min/max(expr) over more than one leaf of elements runs fused, leaf by
    leaf, and gives numpy's bits (sum follows numpy's pairwise tree)."""
    import importlib
    ev_mod = importlib.import_module("ggml_cy.expr.evaluate")
    rng = np.random.default_rng(11)
    n = 3 * (1 << 16) + 12345
    a = rng.standard_normal((n // 5, 5)).astype(dtype)
    b = rng.standard_normal((n // 5, 5)).astype(dtype)
    body = "1.0 + a*b*0.001" if red == "prod" else "a*b + 2.0"
    want = getattr(np, red)(eval(body, {}, {"a": a, "b": b}))
    assert ev_mod.fused_reduction(red, body, {"a": a, "b": b}) is not None
    got = ggml_cy.evaluate(f"{red}({body})", a=a, b=b)
    _bitwise(got, want)
    assert type(got) is type(want)
    # numexpr's typing (a float constant is float64, so float64 inputs keep one kind):
    # a 0-d array with numpy's bits too
    if dtype == np.float64:
        g2 = ne.evaluate(f"{red}({body})", local_dict={"a": a, "b": b})
        assert g2.shape == () and g2.dtype == dtype
        _bitwise(g2, want)
    # not applicable: broadcast or strided inputs take the unfused path, same bits
    assert ev_mod.fused_reduction(red, body, {"a": a[::2], "b": b[::2]}) is None
    _bitwise(ggml_cy.evaluate(f"{red}({body})", a=a[::2], b=b[::2]),
             getattr(np, red)(eval(body, {}, {"a": a[::2], "b": b[::2]})))


def test_random_expressions_match_numexpr():
    """Random trees over bool/uint8/int32/int64/float32/float64 inputs and Python
    constants: where numexpr computes an expression, ggml_cy.numexpr gives its dtype and
    its values (and refuses nothing numexpr accepts)."""
    numexpr = pytest.importorskip("numexpr")
    import random
    import warnings
    rng = random.Random(1)
    nr = np.random.default_rng(1)
    env = {"f": nr.standard_normal(40).astype(np.float32), "d": nr.standard_normal(40),
           "i": nr.integers(1, 9, 40).astype(np.int32), "l": nr.integers(1, 9, 40),
           "b": nr.random(40) > 0.5, "u": nr.integers(1, 9, 40).astype(np.uint8)}
    # (no bool literals: numpy functions of them fold to float16 constants, for which
    # numexpr's x / c -> x * (1/c) rewrite rounds 1/c to float16)
    leaves = ["f", "d", "i", "l", "b", "u", "2", "3.5"]
    funcs1 = ["sin", "sqrt", "abs", "exp", "log", "arctan", "tanh", "real", "round",
              "sign", "floor", "ceil", "isnan", "copy", "ones_like", "log10", "expm1"]
    funcs2 = ["arctan2", "fmod", "hypot", "maximum", "minimum"]   # (copysign: NaN signs)

    def gen(depth=0):
        r = rng.random()
        if depth > 3 or r < 0.3:
            return rng.choice(leaves)
        if r < 0.55:
            op = rng.choice(["+", "-", "*", "/", "%", "//"])
            return f"({gen(depth + 1)} {op} {gen(depth + 1)})"
        if r < 0.6:
            # float exponents: numexpr raises integer powers through a float pow and a
            # cast, so an overflowing integer power differs from numpy's wraparound
            return f"({gen(depth + 1)} ** {rng.choice(['2.0', '0.5', '3.0', '-1.5', 'd'])})"
        if r < 0.7:
            return f"({gen(depth + 1)} {rng.choice(['<', '>=', '==', '!='])} {gen(depth + 1)})"
        if r < 0.8:
            return f"where({gen(depth + 1)} > 0, {gen(depth + 1)}, {gen(depth + 1)})"
        if r < 0.85:
            return f"{rng.choice(funcs2)}({gen(depth + 1)}, {gen(depth + 1)})"
        return f"{rng.choice(funcs1)}({gen(depth + 1)})"

    compared = nonfinite_mismatch = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(600):
            e = gen()
            try:
                want = np.asarray(numexpr.evaluate(e, local_dict=env))
            except Exception:
                continue            # numexpr has no opcode for it (ggml_cy computes numpy's)
            got = np.asarray(ne.evaluate(e, local_dict=env))
            assert got.dtype == want.dtype and got.shape == want.shape, (e, got.dtype,
                                                                         want.dtype)
            if want.dtype.kind == "f":
                # values where both are finite agree to float32 precision (numexpr's own
                # float32 functions differ from numpy's by an ulp, which a later division
                # by a small number can magnify); NaN/inf patterns agree almost always
                # (not where NaN signs or inf from 0-division differ)
                fin = np.isfinite(got) & np.isfinite(want)
                np.testing.assert_allclose(got[fin], want[fin], rtol=1e-3, atol=1e-4,
                                           err_msg=e)
                if not np.array_equal(np.isfinite(got), np.isfinite(want)):
                    nonfinite_mismatch += 1
            else:
                np.testing.assert_array_equal(got, want, err_msg=e)
            compared += 1
    assert compared > 250
    assert nonfinite_mismatch <= compared // 50
