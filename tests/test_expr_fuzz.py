"""Fuzzing evaluate's parser: random token strings, random valid-looking expressions and
depth/length extremes give a result or a clear error (ValueError, SyntaxError, TypeError,
NameError, ZeroDivisionError, OverflowError) - never a crash, a hang or a RecursionError.

Each test runs for a fixed time budget: GGML_CY_FUZZ_SECONDS (default 6 s per test, so
about 15 s for the file in CI); set it higher for a longer run, e.g.
``GGML_CY_FUZZ_SECONDS=600 pytest tests/test_expr_fuzz.py``. The seed is printed on
failure and can be fixed with GGML_CY_FUZZ_SEED."""
import os
import random
import time

import numpy as np
import pytest

from ggml_cy import evaluate

BUDGET = float(os.environ.get("GGML_CY_FUZZ_SECONDS", "6"))
SEED = int(os.environ.get("GGML_CY_FUZZ_SEED", "0"))
CLEAR = (ValueError, SyntaxError, TypeError, NameError, ZeroDivisionError, OverflowError)
MAX_CALL_SECONDS = 5.0

NAMES = ["a", "b", "c", "x"]
FUNCS = ["exp", "log", "sqrt", "sin", "maximum", "where", "arctan2", "sum", "abs", "tanh",
         "fmod", "nope", "__import__", "eval", "a"]
TOKENS = (NAMES * 3 + FUNCS + ["+", "-", "*", "/", "//", "%", "**", "<", "<=", "==", "!=",
          ">", ">=", "&", "|", "^", "~", "<<", ">>", "(", ")", "(", ")", ",", ".", "[", "]",
          ":", ";", "=", "lambda", "and", "or", "not", "if", "else", "1", "2.5", "0", "1e308",
          "-1", "1j", "True", "None", "'s'", "b'x'", "\x00", "\\", "#", "axis=", "axis=None",
          " ", "  ", "\n", "\t", "@", "$", "...", "é", "1_000", "0x1f", "9" * 400])


def _arrays():
    rng = np.random.default_rng(0)
    return {"a": rng.standard_normal(33), "b": rng.standard_normal(33),
            "c": rng.standard_normal(33).astype(np.float32), "x": 2.5}


def _call(expr, arrays):
    t0 = time.perf_counter()
    try:
        with np.errstate(all="ignore"):
            evaluate(expr, **arrays)
    except CLEAR:
        pass
    except BaseException as e:  # noqa: BLE001 - anything else is a finding
        raise AssertionError(f"evaluate({expr[:200]!r}) raised {type(e).__name__}: {e}") from e
    dt = time.perf_counter() - t0
    assert dt < MAX_CALL_SECONDS, f"evaluate({expr[:200]!r}) took {dt:.1f} s"


def _run(gen, seconds):
    rng = random.Random(SEED)
    arrays = _arrays()
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        expr = gen(rng)
        try:
            _call(expr, arrays)
        except AssertionError as e:
            raise AssertionError(f"{e} (GGML_CY_FUZZ_SEED={SEED}, case {n})") from None
        n += 1
    return n


def _random_tokens(rng):
    k = rng.choice([1, 2, 3, 5, 8, 13, 40, 200])
    return "".join(rng.choice(TOKENS) + rng.choice(["", " "]) for _ in range(k))


def _random_expr(rng, depth=0):
    """Mostly well-formed expressions (so the typing and compiling stages get fuzzed too)."""
    r = rng.random()
    if depth > 6 or r < 0.25:
        return rng.choice(NAMES + ["1", "2.5", "0", "-3", "1e308", "0.0"])
    if r < 0.55:
        op = rng.choice(["+", "-", "*", "/", "//", "%", "**", "<", ">=", "==", "&", "|"])
        return f"({_random_expr(rng, depth + 1)} {op} {_random_expr(rng, depth + 1)})"
    if r < 0.65:
        return f"{rng.choice(['-', '~', '+'])}{_random_expr(rng, depth + 1)}"
    f = rng.choice(FUNCS)
    nargs = rng.choice([1, 1, 2, 3])
    args = ", ".join(_random_expr(rng, depth + 1) for _ in range(nargs))
    return f"{f}({args})"


def _extreme(rng):
    n = rng.choice([10, 150, 199, 200, 201, 250, 1000, 10_000, 100_000])
    kind = rng.randrange(7)
    if kind == 0:
        return rng.choice(["+", "*", "-", "/"]).join(["a"] * n)
    if kind == 1:
        return "(" * n + "a" + ")" * n
    if kind == 2:
        return "-" * n + "a"
    if kind == 3:
        return "sqrt(" * n + "a" + ")" * n
    if kind == 4:
        return "a" + "**a" * n
    if kind == 5:
        return " " * n + "a"
    return "+".join(f"(a*{i})" for i in range(n // 10 + 1))


@pytest.mark.parametrize("gen", [_random_tokens, _random_expr, _extreme],
                         ids=["tokens", "expressions", "extremes"])
def test_fuzz_parser(gen):
    seconds = BUDGET if gen is not _extreme else min(BUDGET, 3.0) if BUDGET <= 6 else BUDGET
    n = _run(gen, seconds)
    assert n > 0


def test_known_extremes():
    arrays = _arrays()
    for expr in ["", " ", "a" * 100_000, "+".join(["a"] * 100_000), "-" * 100_000 + "a",
                 "(" * 100 + "a" + ")" * 100, "(" * 300 + "a" + ")" * 300, "a\x00", "a;b",
                 "lambda: 1", "__import__('os')", "a.real", "a[0]", "a if b else c",
                 "1" * 5000, "1e999 * a", "a ** 1e308", "f" * 10 + "(a)"]:
        _call(expr, arrays)
