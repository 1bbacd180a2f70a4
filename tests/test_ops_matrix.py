"""op x dtype x layout x n_threads against numpy (numpy is the oracle, the API is numpy's).

Exact ops (+ - * / // % fmod maximum minimum fmax fmin, comparisons, logical ops, sign-type
unary ops, copies and conversions) must match numpy bit for bit, NaN payloads and signed
zeros included, with the same result dtype, the same result kind (scalar for 0-d), the same
RuntimeWarnings, and numpy's exception type wherever numpy raises. Transcendentals are
held to 2 ulp of numpy's result (1 ulp for float16); see test_ops_ulp.py for the table.
"""
import functools
import warnings
import zlib

import numpy as np
import pytest

import ggml_cy
from _oracle import (
    BOOL_DTYPE, FLOAT_DTYPES, INT_DTYPES, LARGE_N, MID_N, NATIVE_DTYPES, NATIVE_IDS, ULP_BOUND,
    ACT_ULP_F32, ACT_ULP_F64,
    activation_reference, assert_bitwise, assert_same_exception, compare_outcomes,
    pair_with_specials, random_values, run, special_values, assert_ulp,
)

N_THREADS = [1, 2, 3]
NTH_IDS = [f"nth{n}" for n in N_THREADS]

BINARY_EXACT = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod",
                "maximum", "minimum", "fmax", "fmin",
                "logical_and", "logical_or", "logical_xor",
                "equal", "not_equal", "greater", "greater_equal", "less", "less_equal"]
BINARY_OPS = BINARY_EXACT + ["power"]
UNARY_EXACT = ["negative", "absolute", "sign", "square", "floor", "ceil", "rint", "trunc",
               "logical_not"]
UNARY_TRANSCENDENTAL = ["sqrt", "exp", "expm1", "log", "log1p", "sin", "cos", "tanh"]
UNARY_OPS = UNARY_EXACT + UNARY_TRANSCENDENTAL

BINARY_LAYOUTS = ["specials_grid", "contiguous", "transposed", "both_transposed", "negstride",
                  "sliced", "bcast_row", "bcast_col", "bcast_both", "bcast_view", "readonly",
                  "py_scalar", "np_scalar", "scalar_first", "zero_d", "zero_size", "out",
                  "out_strided", "out_is_input", "out_shifted", "out_reversed",
                  "out_transposed_self", "large", "large_specials", "large_bcast",
                  "large_strided", "large_transposed", "large_out_transposed_self"]
UNARY_LAYOUTS = ["specials", "contiguous", "transposed", "negstride", "sliced", "bcast_view",
                 "readonly", "zero_d", "zero_size", "out", "out_strided", "out_is_input",
                 "out_shifted", "out_reversed", "large", "large_specials", "large_strided"]

SHAPE = (7, 13)  # odd sizes leave vector tails


def layout_threads(layouts):
    """(layout, n_threads) pairs. Large layouts (where the threaded path runs) get one test
    per n_threads; small ones check every n_threads inside one test (fewer test items, same
    coverage: a 91-element input never leaves the calling thread)."""
    params = []
    for lay in layouts:
        if lay.startswith("large"):
            params += [pytest.param(lay, (n,), id=f"{lay}-nth{n}") for n in N_THREADS]
        else:
            params.append(pytest.param(lay, tuple(N_THREADS), id=f"{lay}-nth123"))
    return params


def _cy(name):
    """ggml_cy.<name>, or ggml_cy.ufuncs.<name> while the package does not re-export it
    (test_public_names checks the re-export on its own, so one missing import is one
    failure, not thousands)."""
    fn = getattr(ggml_cy, name, None)
    if fn is None:
        import ggml_cy.ufuncs as uf
        fn = getattr(uf, name, None)
    assert fn is not None, f"ggml_cy.{name} is missing"
    return fn


ALL_PUBLIC = (BINARY_OPS + UNARY_OPS + ["relu", "sigmoid", "silu", "gelu", "gelu_erf",
              "gelu_quick", "elu", "hardswish", "hardsigmoid", "softplus", "step",
              "leaky_relu", "prelu", "clip", "clamp", "scale", "copyto",
              "ascontiguousarray", "astype"])


@pytest.mark.parametrize("name", ALL_PUBLIC)
def test_public_names(name):
    assert callable(getattr(ggml_cy, name, None)), f"ggml_cy.{name} is not exported"


def _values(dtype, n, seed, op=None, role="a"):
    """Op-aware values: integer powers get small non-negative exponents (numpy raises on
    negative ones; tested separately)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if op == "power" and role == "b" and dt.kind in "iu":
        return rng.integers(0, 7, n).astype(dt)
    return random_values(dt, n, rng)


@functools.lru_cache(maxsize=None)
def _base(dtype, n, seed, op, role):
    v = _values(dtype, n, seed, op, role)
    v.setflags(write=False)
    return v


def _seed(*parts):
    """A stable seed (str hashes change from run to run)."""
    return zlib.crc32(repr(parts).encode()) & 0xFFFF


def _fresh(dtype, shape, seed, op, role):
    """Cached values (one set per dtype/size/role: the cache must stay small)."""
    n = int(np.prod(shape))
    small_exp = op == "power" and role == "b" and np.dtype(dtype).kind in "iu"
    return _base(np.dtype(dtype), n, seed, "power" if small_exp else None,
                 role).reshape(shape).copy()


@functools.lru_cache(maxsize=None)
def _large_specials_cached(dtype, k):
    s = special_values(dtype)
    v = s[np.random.default_rng(100 + k).integers(0, len(s), MID_N)]
    v.setflags(write=False)
    return v


def _large_specials(dtype, k):
    """MID_N values drawn only from the special values (so vector loops meet them all)."""
    return _large_specials_cached(np.dtype(dtype), k).copy()


def _scalar_for(dtype):
    dt = np.dtype(dtype)
    return {"f": -2.5, "b": True}.get(dt.kind, 3)


def _result_dtype(np_fn, a, b=None):
    try:
        with np.errstate(all="ignore"):
            r = np_fn(a) if b is None else np_fn(a, b)
        return np.asarray(r).dtype
    except Exception:
        return None


# --------------------------------------------------------------------------------------
# binary ops
# --------------------------------------------------------------------------------------
def binary_case(layout, dtype, op):
    """A factory returning fresh (args, kwargs, watch) for one call; `watch` is the array whose
    final content is compared too (the out buffer, or the buffer out and input share)."""
    dt = np.dtype(dtype)
    seed = _seed(dt.name, "large" if layout.startswith("large") else "small")
    np_fn = getattr(np, op)

    def make():
        a = _fresh(dt, SHAPE, seed, op, "a")
        b = _fresh(dt, SHAPE, seed + 1, op, "b")
        kw = {}
        watch = None
        if layout == "specials_grid":
            a, b = pair_with_specials(dt)
            if op == "power" and dt.kind in "iu":
                b = np.abs(b.astype(np.int64) % 7).astype(dt)
            n = int(np.sqrt(a.size))
            a, b = a.reshape(n, n), b.reshape(n, n)
        elif layout == "contiguous":
            pass
        elif layout == "transposed":
            a = np.asfortranarray(a)
        elif layout == "both_transposed":
            a, b = np.asfortranarray(a), np.asfortranarray(b)
        elif layout == "negstride":
            big = np.empty((SHAPE[0], 2 * SHAPE[1]), dt)
            va = big[::-1, ::-2]
            va[...] = a
            a = va
            bigb = np.empty((2 * SHAPE[0], SHAPE[1]), dt)
            vb = bigb[::-2]
            vb[...] = b
            b = vb
        elif layout == "sliced":
            big = np.zeros((SHAPE[0] + 3, 3 * SHAPE[1]), dt)
            big[2:2 + SHAPE[0], 1::3] = a
            a = big[2:2 + SHAPE[0], 1::3]
            bigb = np.zeros((2 * SHAPE[0], SHAPE[1] + 1), dt)
            bigb[::2, 1:] = b
            b = bigb[::2, 1:]
        elif layout == "bcast_row":
            b = b[0].copy()
        elif layout == "bcast_col":
            b = b[:, :1].copy()
        elif layout == "bcast_both":
            a, b = a[:, :1].copy(), b[:1, :].copy()
        elif layout == "bcast_view":
            a = np.broadcast_to(a[0], SHAPE)
        elif layout == "readonly":
            a.setflags(write=False)
            b.setflags(write=False)
        elif layout == "py_scalar":
            b = _scalar_for(dt) if not (op == "power" and dt.kind in "iu") else 3
        elif layout == "np_scalar":
            b = dt.type(_scalar_for(dt))
        elif layout == "scalar_first":
            a = _scalar_for(dt)
        elif layout == "zero_d":
            a, b = np.array(a.flat[3]), np.array(b.flat[5])
        elif layout == "zero_size":
            a, b = a[:0], b[0].copy()
        elif layout in ("out", "out_strided"):
            rdt = _result_dtype(np_fn, a, b)
            if rdt is None:
                rdt = dt
            if layout == "out":
                out = np.full(SHAPE, 7, rdt)
            else:
                big = np.full((SHAPE[0], 2 * SHAPE[1]), 7, rdt)
                out = big[:, ::-2]
            kw["out"] = out
            watch = out
        elif layout == "out_is_input":
            kw["out"] = a
            watch = a
        elif layout == "out_shifted":
            buf = np.empty(SHAPE[0] * SHAPE[1] + 1, dt)
            buf[1:] = a.ravel()
            buf[0] = a.flat[0]
            a = buf[1:]
            b = b.ravel()
            kw["out"] = buf[:-1]
            watch = buf
        elif layout == "out_reversed":
            a = a.ravel()
            b = b.ravel()
            kw["out"] = a[::-1]
            watch = a
        elif layout == "out_transposed_self":  # out = a.T on a square a: full overlap
            a = _fresh(dt, (13, 13), seed, op, "a")
            b = _fresh(dt, (13, 13), seed + 1, op, "b")
            kw["out"] = a.T
            watch = a
        elif layout == "large_transposed":  # a.T + b: the cache-blocked path
            a = _fresh(dt, (317, 319), seed, op, "a").T
            b = _fresh(dt, (319, 317), seed + 1, op, "b")
        elif layout == "large_out_transposed_self":
            a = _fresh(dt, (317, 317), seed, op, "a")
            b = _fresh(dt, (317, 317), seed + 1, op, "b")
            kw["out"] = a.T
            watch = a
        elif layout == "large":
            a = _fresh(dt, (LARGE_N,), seed, op, "a")
            b = _fresh(dt, (LARGE_N,), seed + 1, op, "b")
        elif layout == "large_specials":  # every pair of special values, in the SIMD path
            a, b = _large_specials(dt, 0), _large_specials(dt, 1)
            if op == "power" and dt.kind in "iu":
                b = np.abs(b.astype(np.int64) % 7).astype(dt)
        elif layout == "large_bcast":
            a = _fresh(dt, (317, 319), seed, op, "a")
            b = _fresh(dt, (319,), seed + 1, op, "b")
        elif layout == "large_strided":
            a = _fresh(dt, (2 * MID_N,), seed, op, "a")[::-2]
            b = _fresh(dt, (3 * MID_N,), seed + 1, op, "b")[1::3]
        else:
            raise KeyError(layout)
        return (a, b), kw, watch

    return make


@pytest.mark.parametrize("layout,threads", layout_threads(BINARY_LAYOUTS))
@pytest.mark.parametrize("dtype", NATIVE_DTYPES, ids=NATIVE_IDS)
@pytest.mark.parametrize("op", BINARY_OPS)
def test_binary(op, dtype, layout, threads):
    for n_threads in threads:
        _check_binary(op, dtype, layout, n_threads)


def _check_binary(op, dtype, layout, n_threads):
    make = binary_case(layout, dtype, op)
    np_fn, cy_fn = getattr(np, op), _cy(op)
    args, kw, watch = make()
    inputs = [(n, np.array(v, copy=True)) for n, v in zip("ab", args)]
    expected = run(lambda: np_fn(*args, **kw))
    exp_watch = None if watch is None else watch.copy()
    args2, kw2, watch2 = make()
    got = run(lambda: cy_fn(*args2, **kw2, n_threads=n_threads))
    exact = op != "power" or np.dtype(dtype).kind in "iub"
    rdt = None if expected.exc else np.asarray(expected.value).dtype
    tol = ULP_BOUND.get(getattr(rdt, "name", ""), 0)
    compare_outcomes(got, expected, exact=exact, max_ulp=tol,
                     inputs=inputs,
                     what=f"{op}[{np.dtype(dtype).name},{layout},nth{n_threads}]",
                     out=kw2.get("out"), op=op)
    if watch is not None and expected.exc is None:
        if exact:
            # the result elements were compared strictly above (the result is a view of
            # this buffer); here the rest of the buffer must be untouched
            assert_bitwise(watch2, exp_watch, what="buffer shared with out:",
                           nan_payload=False)
        else:
            assert_ulp(watch2, exp_watch, tol, what="buffer shared with out:")


@pytest.mark.parametrize("n_threads", [1, 2], ids=["nth1", "nth2"])
@pytest.mark.parametrize("dtype", NATIVE_DTYPES, ids=NATIVE_IDS)
@pytest.mark.parametrize("op", BINARY_EXACT)
def test_binary_mixed_dtypes(op, dtype, n_threads):
    """Every dtype against every other: numpy's promotion (NEP 50), bitwise."""
    dt = np.dtype(dtype)
    for other in NATIVE_DTYPES:
        a = _fresh(dt, (5, 9), 11, op, "a")
        b = _fresh(other, (9,), 12, op, "b")
        expected = run(lambda: getattr(np, op)(a, b))
        got = run(lambda: _cy(op)(a, b, n_threads=n_threads))
        compare_outcomes(got, expected, inputs=[("a", a), ("b", b)],
                         what=f"{op}({dt.name}, {other.name})", op=op)


@pytest.mark.parametrize("op", ["add", "multiply", "divide", "maximum", "equal", "power"])
@pytest.mark.parametrize("dtype", NATIVE_DTYPES, ids=NATIVE_IDS)
def test_binary_dtype_argument(op, dtype):
    """dtype= selects the loop the way numpy does (or raises the same error)."""
    a = _fresh(np.float32, (4, 6), 3, op, "a")
    b = _fresh(np.int16, (6,), 4, op, "b")
    if op == "power":
        b = np.abs(b) % 5
    expected = run(lambda: getattr(np, op)(a, b, dtype=dtype))
    got = run(lambda: _cy(op)(a, b, dtype=dtype))
    compare_outcomes(got, expected, exact=op != "power", max_ulp=2,
                     what=f"{op}(float32, int16, dtype={np.dtype(dtype).name})")


# --------------------------------------------------------------------------------------
# unary ops
# --------------------------------------------------------------------------------------
def unary_case(layout, dtype, op, value_fn=None):
    dt = np.dtype(dtype)
    seed = _seed(dt.name, "unary", value_fn is None)

    def fresh(shape):
        if value_fn is not None:
            n = int(np.prod(shape))
            return value_fn(dt, n, seed).reshape(shape)
        return _fresh(dt, shape, seed, op, "a")

    def make():
        x = fresh(SHAPE)
        kw = {}
        watch = None
        if layout == "specials":
            x = special_values(dt)
            if value_fn is not None:
                x = value_fn(dt, 0, seed, specials_only=True)
        elif layout == "contiguous":
            pass
        elif layout == "transposed":
            x = np.asfortranarray(x)
        elif layout == "negstride":
            big = np.empty((SHAPE[0], 2 * SHAPE[1]), dt)
            v = big[::-1, ::-2]
            v[...] = x
            x = v
        elif layout == "sliced":
            big = np.zeros((SHAPE[0] + 3, 3 * SHAPE[1]), dt)
            big[2:2 + SHAPE[0], 1::3] = x
            x = big[2:2 + SHAPE[0], 1::3]
        elif layout == "bcast_view":
            x = np.broadcast_to(x[0], SHAPE)
        elif layout == "readonly":
            x.setflags(write=False)
        elif layout == "zero_d":
            x = np.array(x.flat[4])
        elif layout == "zero_size":
            x = x[:, :0]
        elif layout in ("out", "out_strided"):
            kw["out"] = "same-dtype"  # resolved by the caller (needs the result dtype)
        elif layout == "out_is_input":
            kw["out"] = x
            watch = x
        elif layout == "out_shifted":
            buf = np.empty(x.size + 1, dt)
            buf[1:] = x.ravel()
            buf[0] = x.flat[0]
            x = buf[1:]
            kw["out"] = buf[:-1]
            watch = buf
        elif layout == "out_reversed":
            x = x.ravel()
            kw["out"] = x[::-1]
            watch = x
        elif layout == "large":
            x = fresh((LARGE_N,))
        elif layout == "large_specials":
            if value_fn is not None:
                s = value_fn(dt, 0, seed, specials_only=True)
                x = s[np.random.default_rng(seed).integers(0, len(s), MID_N)]
            else:
                x = _large_specials(dt, 2)
        elif layout == "large_strided":
            x = fresh((2 * MID_N,))[::-2]
        else:
            raise KeyError(layout)
        return x, kw, watch

    return make


def _resolve_out(kw, layout, rdt, shape):
    if isinstance(kw.get("out"), str):
        rdt = rdt or np.dtype(np.float64)
        if layout == "out":
            kw["out"] = np.full(shape, 7, rdt)
        else:
            big = np.full(shape[:-1] + (2 * shape[-1],), 7, rdt)
            kw["out"] = big[..., ::-2]
        return kw["out"]
    return None


@pytest.mark.parametrize("layout,threads", layout_threads(UNARY_LAYOUTS))
@pytest.mark.parametrize("dtype", NATIVE_DTYPES, ids=NATIVE_IDS)
@pytest.mark.parametrize("op", UNARY_OPS)
def test_unary(op, dtype, layout, threads):
    for n_threads in threads:
        _check_unary(op, dtype, layout, n_threads)


def _check_unary(op, dtype, layout, n_threads):
    make = unary_case(layout, dtype, op)
    np_fn, cy_fn = getattr(np, op), _cy(op)
    x, kw, watch = make()
    xin = np.array(x, copy=True)
    rdt = _result_dtype(np_fn, x)
    out1 = _resolve_out(kw, layout, rdt, x.shape)
    watch = out1 if out1 is not None else watch
    expected = run(lambda: np_fn(x, **kw))
    exp_watch = None if watch is None else watch.copy()
    x2, kw2, watch2 = make()
    out2 = _resolve_out(kw2, layout, rdt, x2.shape)
    watch2 = out2 if out2 is not None else watch2
    got = run(lambda: cy_fn(x2, **kw2, n_threads=n_threads))
    exact = op in UNARY_EXACT
    tol = ULP_BOUND.get(getattr(rdt, "name", ""), 0)
    exact_values = None
    if not exact and rdt is not None and rdt.kind == "f" and expected.exc is None:
        with np.errstate(all="ignore"):
            exact_values = np_fn(xin.astype(np.longdouble)).astype(rdt)
    # transcendental warnings depend on the libm/SIMD path; the exact ops must match
    compare_outcomes(got, expected, exact=exact, max_ulp=tol, inputs=[("x", xin)],
                     what=f"{op}[{np.dtype(dtype).name},{layout},nth{n_threads}]",
                     out=kw2.get("out"), check_warnings=exact, exact_values=exact_values)
    if watch is not None and expected.exc is None:
        if exact:
            assert_bitwise(watch2, exp_watch, what="buffer shared with out:")
        else:
            assert_ulp(watch2, exp_watch, tol, what="buffer shared with out:")


@pytest.mark.parametrize("op", UNARY_TRANSCENDENTAL)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=[d.name for d in FLOAT_DTYPES])
def test_unary_transcendental_warnings(op, dtype):
    """Domain errors and overflow warn the way numpy's do (log(-1), log(0), sqrt(-1), exp(1e4))."""
    dt = np.dtype(dtype)
    cases = {"sqrt": [-1.0], "log": [-1.0, 0.0], "log1p": [-2.0, -1.0], "exp": [1e4],
             "expm1": [1e4], "sin": [np.inf], "cos": [np.inf], "tanh": [np.inf]}
    for v in cases[op]:
        x = np.array([1.0, v, 2.0], dt)
        expected = run(lambda: getattr(np, op)(x))
        got = run(lambda: _cy(op)(x))
        compare_outcomes(got, expected, exact=False, max_ulp=ULP_BOUND[dt.name],
                         what=f"{op}({v!r}) [{dt.name}]")


# --------------------------------------------------------------------------------------
# ggml's activations (float dtypes; long-double references rounded once)
# --------------------------------------------------------------------------------------
ACT_TOL0 = {"relu", "step", "leaky_relu", "clip", "clamp", "scale", "prelu"}
ACT_OPS = ["relu", "sigmoid", "silu", "gelu", "gelu_erf", "gelu_quick", "elu", "hardswish",
           "hardsigmoid", "softplus", "step", "leaky_relu", "clip", "clamp", "scale", "prelu"]
ACT_LAYOUTS = ["specials", "contiguous", "transposed", "negstride", "bcast_view", "readonly",
               "zero_d", "zero_size", "out", "out_is_input", "out_reversed", "large",
               "large_strided"]


def _act_values(dt, n, seed, specials_only=False):
    """Finite values over the interesting range (ggml's activations have no agreed value at
    +-inf for every op; those are tested in test_activation_infinities)."""
    rng = np.random.default_rng(seed)
    s = special_values(dt)
    s = s[np.isfinite(s)]
    if specials_only:
        return np.concatenate([s, np.linspace(-12, 12, 97).astype(dt)])
    x = random_values(dt, n, rng, specials=False, low=-6, high=1.5)
    k = min(n, len(s))
    if k:
        idx = rng.choice(n, size=k, replace=False)
        x[idx] = s[:k]
    return x


def _act_call(op, x, kw, lib, n_threads=None):
    """Calls an activation in ggml_cy (lib='cy') or computes its reference (lib='ref')."""
    extra = {} if n_threads is None else {"n_threads": n_threads}
    xf = np.asarray(x)
    if op == "leaky_relu":
        return (_cy(op)(x, 0.125, **kw, **extra) if lib == "cy"
                else _ref_into(activation_reference(op, xf, 0.125), kw))
    if op in ("clip", "clamp"):
        return (_cy(op)(x, -1.5, 2.25, **kw, **extra) if lib == "cy"
                else np.clip(x, -1.5, 2.25, **kw))
    if op == "scale":
        return (_cy(op)(x, 0.75, **kw, **extra) if lib == "cy"
                else np.multiply(x, 0.75, **kw))
    if op == "prelu":
        slope = np.linspace(-0.5, 0.5, xf.shape[-1] if xf.ndim else 1).astype(xf.dtype)
        if xf.ndim == 0:
            slope = slope.reshape(())
        if lib == "cy":
            return _cy(op)(x, slope, **kw, **extra)
        with np.errstate(all="ignore"):
            r = np.where(xf > 0, xf, np.multiply(slope, xf))
        return _ref_into(r, kw)
    if lib == "cy":
        return _cy(op)(x, **kw, **extra)
    return _ref_into(activation_reference(op, xf), kw)


def _ref_into(r, kw):
    out = kw.get("out")
    if out is None:
        r = np.asarray(r)
        return r[()] if r.ndim == 0 else r
    out[...] = r
    return out


@pytest.mark.parametrize("layout,threads", layout_threads(ACT_LAYOUTS))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=[d.name for d in FLOAT_DTYPES])
@pytest.mark.parametrize("op", ACT_OPS)
def test_activation(op, dtype, layout, threads):
    for n_threads in threads:
        _check_activation(op, dtype, layout, n_threads)


def _baseline_level():
    from ggml_cy.core import _startup
    return _startup.dispatch_state.get("level") == "baseline"


def _check_activation(op, dtype, layout, n_threads):
    make = unary_case(layout, dtype, op, value_fn=_act_values)
    x, kw, watch = make()
    out1 = _resolve_out(kw, layout, np.dtype(dtype), x.shape)
    watch = out1 if out1 is not None else watch
    xin = np.array(x, copy=True)
    expected = run(lambda: _act_call(op, x, kw, "ref"))
    exp_watch = None if watch is None else watch.copy()
    x2, kw2, watch2 = make()
    out2 = _resolve_out(kw2, layout, np.dtype(dtype), x2.shape)
    watch2 = out2 if out2 is not None else watch2
    got = run(lambda: _act_call(op, x2, kw2, "cy", n_threads))
    tol = 0 if op in ACT_TOL0 else ULP_BOUND[np.dtype(dtype).name]
    tol = max(tol, {"float32": ACT_ULP_F32, "float64": ACT_ULP_F64}.get(
        np.dtype(dtype).name, {}).get(op, 0))
    if _baseline_level() and np.dtype(dtype) == np.float64 and op in ("silu", "sigmoid", "tanh"):
        tol = max(tol, 3)   # no FMA at the x86-64-v2 baseline: the float64 quotient rounds twice more
    worst = compare_outcomes(got, expected, exact=False, max_ulp=tol, inputs=[("x", xin)],
                             what=f"{op}[{np.dtype(dtype).name},{layout},nth{n_threads}]",
                             out=kw2.get("out"), check_warnings=False)
    if watch is not None and expected.exc is None:
        assert_ulp(watch2, exp_watch, tol, what="buffer shared with out:")
    print(f"{op} {np.dtype(dtype).name} {layout}: max ulp {worst}")


LIMITS = {  # value at -inf, +inf (mathematical limits, unambiguous in ggml's formulas too)
    "relu": (0.0, np.inf), "sigmoid": (0.0, 1.0), "elu": (-1.0, np.inf),
    "softplus": (0.0, np.inf), "hardsigmoid": (0.0, 1.0), "step": (0.0, 1.0),
    "gelu": (None, np.inf), "gelu_erf": (None, np.inf), "gelu_quick": (None, np.inf),
    "silu": (None, np.inf), "hardswish": (None, np.inf),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=[d.name for d in FLOAT_DTYPES])
@pytest.mark.parametrize("op", sorted(LIMITS))
def test_activation_infinities_and_nan(op, dtype):
    dt = np.dtype(dtype)
    x = np.array([-np.inf, np.inf, np.nan], dt)
    got = np.asarray(_cy(op)(x))
    assert got.dtype == dt
    lo, hi = LIMITS[op]
    if lo is not None:
        assert got[0] == lo, f"{op}(-inf) = {got[0]!r}, expected {lo}"
    assert got[1] == hi, f"{op}(+inf) = {got[1]!r}, expected {hi}"
    assert np.isnan(got[2]), f"{op}(nan) = {got[2]!r}, expected nan (numpy propagates NaN)"


@pytest.mark.parametrize("op,args", [("leaky_relu", (0.1,)), ("scale", (0.1,)),
                                     ("clip", (-0.1, 0.3))])
def test_activation_float64_parameters_keep_double_precision(op, args):
    """A float64 input with a parameter that float32 cannot hold: numpy's answer is computed
    with the double parameter (ggml's float op_params would lose it)."""
    x = np.linspace(-3, 3, 101)
    got = _cy(op)(x, *args)
    if op == "leaky_relu":
        exp = np.where(x > 0, x, x * args[0])
    elif op == "scale":
        exp = x * args[0]
    else:
        exp = np.clip(x, *args)
    assert_ulp(got, exp, 0, inputs=[("x", x)], what=f"{op}{args}")


# --------------------------------------------------------------------------------------
# copies and conversions
# --------------------------------------------------------------------------------------
CAST_LAYOUTS = ["contiguous", "transposed", "negstride", "sliced", "bcast_view", "readonly",
                "zero_d", "zero_size", "large", "large_strided"]


def _in_range_values(src, dst, n, seed):
    """Values of `src` that `dst` represents after truncation (C leaves the rest undefined;
    numpy's choice for those is tested in test_astype_out_of_range)."""
    rng = np.random.default_rng(seed)
    x = random_values(src, n, rng)
    if dst.kind in "iu" and src.kind == "f":
        ii = np.iinfo(dst)
        xf = x.astype(np.float64)
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(xf) & (xf > float(ii.min) - 1) & (xf < float(ii.max) + 1)
        x = np.where(ok, x, np.asarray(rng.integers(-3, 4, n), dtype=src) * 0.75)
        x = x.astype(src)
    return x


def _cast_input(layout, src, dst, seed):
    n = SHAPE[0] * SHAPE[1]
    if layout.startswith("large"):
        n = LARGE_N if layout == "large" else MID_N
    base = _in_range_values(src, dst, 2 * n, seed)
    if layout == "large":
        return base[:n].copy()
    if layout == "large_strided":
        return base[::-2]
    x = base[:n].reshape(SHAPE).copy()
    if layout == "contiguous":
        return x
    if layout == "transposed":
        return np.asfortranarray(x)
    if layout == "negstride":
        return base.reshape(SHAPE[0], 2 * SHAPE[1])[::-1, ::-2]
    if layout == "sliced":
        return base.reshape(2 * SHAPE[0], SHAPE[1])[1::2, 2:]
    if layout == "bcast_view":
        return np.broadcast_to(x[0], SHAPE)
    if layout == "readonly":
        x.setflags(write=False)
        return x
    if layout == "zero_d":
        return np.array(x.flat[2])
    if layout == "zero_size":
        return x[:0]
    raise KeyError(layout)


@pytest.mark.parametrize("layout,threads", layout_threads(CAST_LAYOUTS))
@pytest.mark.parametrize("dst", NATIVE_DTYPES, ids=[f"to_{d}" for d in NATIVE_IDS])
@pytest.mark.parametrize("src", NATIVE_DTYPES, ids=[f"from_{d}" for d in NATIVE_IDS])
def test_astype(src, dst, layout, threads):
    x = _cast_input(layout, src, dst, 5)
    expected = run(lambda: x.astype(dst))
    for n_threads in threads:
        got = run(lambda: _cy("astype")(x, dst, n_threads=n_threads))
        compare_outcomes(got, expected, inputs=[("x", x)],
                         what=f"astype {src.name}->{dst.name} [{layout},nth{n_threads}]")


@pytest.mark.parametrize("dst", NATIVE_DTYPES, ids=[f"to_{d}" for d in NATIVE_IDS])
@pytest.mark.parametrize("src", NATIVE_DTYPES, ids=[f"from_{d}" for d in NATIVE_IDS])
def test_astype_special_values(src, dst):
    """Every special value of src (NaN payloads, infinities, subnormals, extreme integers)
    converted like numpy: float<->float rounding to nearest even, int->float rounding, ints
    wrap, nonzero -> True. Float values outside an integer range are in the next test."""
    x = special_values(src)
    if src.kind == "f" and dst.kind in "iu":
        ii = np.iinfo(dst)
        xf = x.astype(np.float64)
        x = x[np.isfinite(xf) & (xf > float(ii.min) - 1) & (xf < float(ii.max) + 1)]
    expected = run(lambda: x.astype(dst))
    got = run(lambda: _cy("astype")(x, dst))
    compare_outcomes(got, expected, inputs=[("x", x)], what=f"astype {src.name}->{dst.name}")


@pytest.mark.parametrize("dst", INT_DTYPES, ids=[d.name for d in INT_DTYPES])
@pytest.mark.parametrize("src", FLOAT_DTYPES, ids=[d.name for d in FLOAT_DTYPES])
def test_astype_out_of_range(src, dst):
    """NaN, inf and out-of-range floats to integers: undefined in C, so numpy's platform
    answer (and its 'invalid value encountered in cast' warning) is the one to give."""
    s = special_values(src)
    with np.errstate(over="ignore"):  # 70000 and 3e9 are inf in float16
        x = np.concatenate([s, np.array([300.0, -300.0, 70000.0, 3e9, -3e9], src)])
    expected = run(lambda: x.astype(dst))
    got = run(lambda: _cy("astype")(x, dst))
    compare_outcomes(got, expected, inputs=[("x", x)], what=f"astype {src.name}->{dst.name}")


@pytest.mark.parametrize("n_threads", [1, 2], ids=["nth1", "nth2"])
@pytest.mark.parametrize("case", ["same_shape", "broadcast_src", "to_transposed", "overlap_fwd",
                                  "overlap_back", "reverse_self", "zero_size", "cast_float_int",
                                  "cast_int_float", "large"])
def test_copyto(case, n_threads):
    def make():
        rng = np.random.default_rng(1)
        a = random_values(np.float32, 91, rng).reshape(SHAPE)
        kw = {}
        if case == "same_shape":
            return np.zeros(SHAPE, np.float32), a, kw
        if case == "broadcast_src":
            return np.zeros(SHAPE, np.float32), a[0], kw
        if case == "to_transposed":
            return np.zeros(SHAPE[::-1], np.float32).T, a, kw
        if case == "overlap_fwd":
            buf = a.ravel()
            return buf[1:], buf[:-1], kw
        if case == "overlap_back":
            buf = a.ravel()
            return buf[:-1], buf[1:], kw
        if case == "reverse_self":
            buf = a.ravel()
            return buf, buf[::-1], kw
        if case == "zero_size":
            return np.zeros((0, 3), np.float32), np.ones(3, np.float32), kw
        if case == "cast_float_int":
            return np.zeros(SHAPE, np.int32), a, {"casting": "unsafe"}
        if case == "cast_int_float":
            return (np.zeros(SHAPE, np.float64),
                    rng.integers(-2**31, 2**31 - 1, SHAPE, dtype=np.int64), kw)
        if case == "large":
            return (np.zeros(LARGE_N, np.float16),
                    random_values(np.float16, LARGE_N, rng), kw)
        raise KeyError(case)

    d1, s1, kw1 = make()
    if case == "cast_float_int":
        s1 = np.where(np.isfinite(s1) & (np.abs(s1) < 2e9), s1, 1.0).astype(np.float32)
    base1 = d1.base if d1.base is not None else d1
    expected = run(lambda: np.copyto(d1, s1, **kw1))
    exp_buf = base1.copy()
    d2, s2, kw2 = make()
    if case == "cast_float_int":
        s2 = np.where(np.isfinite(s2) & (np.abs(s2) < 2e9), s2, 1.0).astype(np.float32)
    base2 = d2.base if d2.base is not None else d2
    got = run(lambda: _cy("copyto")(d2, s2, **kw2, n_threads=n_threads))
    compare_outcomes(got, expected, what=f"copyto[{case}]")
    assert_bitwise(base2, exp_buf, what=f"copyto[{case}] destination buffer:")


@pytest.mark.parametrize("case", ["same_kind_refused", "readonly_dst", "bad_shape",
                                  "not_an_array"])
def test_copyto_errors(case):
    a = np.arange(6.0).reshape(2, 3)
    if case == "same_kind_refused":
        args = (np.zeros((2, 3), np.int32), a)
    elif case == "readonly_dst":
        d = np.zeros((2, 3))
        d.setflags(write=False)
        args = (d, a)
    elif case == "bad_shape":
        args = (np.zeros((3, 2)), a)
    else:
        args = ([0, 0], a)
    expected = run(lambda: np.copyto(*args))
    got = run(lambda: _cy("copyto")(*args))
    compare_outcomes(got, expected, what=f"copyto[{case}]", check_message=True)


@pytest.mark.parametrize("dtype", [None, np.float32, np.float16, np.int64],
                         ids=["same", "float32", "float16", "int64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "negstride", "sliced",
                                    "bcast_view", "zero_d", "zero_size"])
def test_ascontiguousarray(layout, dtype):
    x = _cast_input(layout, np.dtype(np.float64), np.dtype(np.int64), 9)
    expected = run(lambda: np.ascontiguousarray(x, dtype=dtype))
    got = run(lambda: _cy("ascontiguousarray")(x, dtype=dtype))
    compare_outcomes(got, expected, inputs=[("x", x)], what=f"ascontiguousarray[{layout}]")
    assert got.value.flags.c_contiguous


# --------------------------------------------------------------------------------------
# warnings (exact ops on the special-value grid: division by zero, overflow, invalid)
# --------------------------------------------------------------------------------------
WARN_OPS = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod",
            "power"]


@pytest.mark.parametrize("n_threads", [1, 2], ids=["nth1", "nth2"])
@pytest.mark.parametrize("dtype", NATIVE_DTYPES, ids=NATIVE_IDS)
@pytest.mark.parametrize("op", WARN_OPS)
@pytest.mark.parametrize("pick", ["div_by_zero", "zero_by_zero", "overflow", "clean"])
def test_warnings(pick, op, dtype, n_threads):
    """One element triggers the condition (or none does): the same warnings as numpy."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        a, b = np.array([True, False, True]), np.array([False, False, True])
    elif dt.kind == "f":
        fi = np.finfo(dt)
        a = np.array({"div_by_zero": [1.0, 5.0, -3.0], "zero_by_zero": [0.0, 1.0, 2.0],
                      "overflow": [fi.max, 1.0, 2.0], "clean": [1.0, 2.0, 3.0]}[pick], dt)
        b = np.array({"div_by_zero": [2.0, 0.0, 1.0], "zero_by_zero": [0.0, 1.0, 2.0],
                      "overflow": [fi.max, 1.0, 2.0], "clean": [1.0, 4.0, -2.0]}[pick], dt)
    else:
        ii = np.iinfo(dt)
        if op == "power":
            a = np.array([2, ii.max, 3], dt)
            b = np.array([1, 2, 0], dt)
        else:
            a = np.array({"div_by_zero": [1, 5, -3], "zero_by_zero": [0, 1, 2],
                          "overflow": [ii.min, ii.max, 2], "clean": [7, 8, 9]}[pick]
                         if ii.min < 0 else {"div_by_zero": [1, 5, 3], "zero_by_zero": [0, 1, 2],
                                             "overflow": [255, 0, 2], "clean": [7, 8, 9]}[pick],
                         dt)
            b = np.array({"div_by_zero": [2, 0, 1], "zero_by_zero": [0, 1, 2],
                          "overflow": [-1 if ii.min < 0 else 1, ii.max, 2],
                          "clean": [1, 4, 2]}[pick], dt)
    for shape in [(3,), (LARGE_N,)]:
        aa = np.resize(a, shape)
        bb = np.resize(b, shape)
        if shape != (3,):  # the trigger once, far into a threaded run
            aa = np.resize(np.array([a[-1]], dt), shape)
            bb = np.resize(np.array([b[-1]], dt), shape)
            aa[shape[0] * 2 // 3] = a[0]
            bb[shape[0] * 2 // 3] = b[0]
            aa[shape[0] * 2 // 3 + 1] = a[1]
            bb[shape[0] * 2 // 3 + 1] = b[1]
        expected = run(lambda: getattr(np, op)(aa, bb))
        got = run(lambda: _cy(op)(aa, bb, n_threads=n_threads))
        compare_outcomes(got, expected, exact=(op != "power" or dt.kind != "f"), max_ulp=2,
                         inputs=[("a", aa), ("b", bb)],
                         what=f"{op}[{dt.name},{pick},n={shape[0]}]")


# --------------------------------------------------------------------------------------
# errors: numpy's exception types (and messages for shapes, casts, read-only outputs)
# --------------------------------------------------------------------------------------
def _err_cases():
    f = np.arange(6.0).reshape(2, 3)
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    ro = np.zeros((2, 3))
    ro.setflags(write=False)
    return {
        "shapes_dont_broadcast": ("add", (f, np.ones(4)), {}),
        "shapes_dont_broadcast_3d": ("multiply", (np.ones((2, 3, 4)), np.ones((3, 1, 5))), {}),
        "out_wrong_shape": ("add", (f, f), {"out": np.zeros(3)}),
        "out_needs_broadcast_back": ("add", (f, f), {"out": np.zeros((1, 3))}),
        "out_cast_same_kind": ("divide", (i, i), {"out": np.zeros((2, 3), np.int32)}),
        "out_cast_float_to_int": ("add", (f, f), {"out": np.zeros((2, 3), np.int64)}),
        # found by hypothesis: the cast check must run for zero-size outputs too
        "out_cast_zero_size": ("divide", (np.zeros(0, np.int8), np.array(3, np.int8)),
                               {"out": np.zeros(0, np.int8)}),
        "out_readonly": ("add", (f, f), {"out": ro}),
        "out_not_array": ("add", (f, f), {"out": [0] * 6}),
        "out_tuple_wrong_len": ("add", (f, f), {"out": (np.zeros((2, 3)), np.zeros((2, 3)))}),
        "int_negative_power": ("power", (i, np.array([1, -1, 2], np.int32)), {}),
        "bool_subtract": ("subtract", (f > 2, f > 3), {}),
        "bool_negative": ("negative", (f > 2,), {}),
        "nep50_python_int_overflow": ("add", (i.astype(np.int8), 300), {}),
        "nep50_uint8_negative": ("add", (i.astype(np.uint8), -1), {}),
        "float_floor_bool_out": ("floor_divide", (f, f), {"out": np.zeros((2, 3), bool)}),
        "string_plus_float": ("add", (np.array(["a", "b"]), np.ones(2)), {}),
        "dtype_bad": ("add", (f, f), {"dtype": "not-a-dtype"}),
        "dtype_cast_refused": ("add", (f, f), {"dtype": np.int32}),
        "too_many_args": ("add", (f, f, np.zeros((2, 3)), np.zeros((2, 3))), {}),
        "unknown_kwarg": ("add", (f, f), {"bogus": 1}),
        "unary_two_args_wrong_out": ("sqrt", (f, np.zeros(5)), {}),
        "sqrt_out_int": ("sqrt", (f,), {"out": np.zeros((2, 3), np.int64)}),
    }


@pytest.mark.parametrize("case", sorted(_err_cases()))
def test_errors_match_numpy(case):
    op, args, kw = _err_cases()[case]
    expected = run(lambda: getattr(np, op)(*args, **kw))
    got = run(lambda: _cy(op)(*args, **kw))
    messages = case.startswith(("shapes", "out_wrong", "out_needs", "out_cast", "out_readonly",
                                "float_floor"))
    compare_outcomes(got, expected, what=case, check_message=messages, check_warnings=False)


@pytest.mark.parametrize("bad", [0, -1, "two", 2.5, None],
                         ids=["zero", "negative", "str", "float", "none"])
def test_bad_n_threads(bad):
    """n_threads must be a positive int (None = the default): anything else is refused with a
    clear exception, never a crash."""
    a = np.ones(10)
    if bad is None:
        assert np.array_equal(_cy("add")(a, a, n_threads=None), a + a)
        return
    with pytest.raises((TypeError, ValueError)):
        _cy("add")(a, a, n_threads=bad)


@pytest.mark.parametrize("op", ["add", "equal", "maximum", "negative", "absolute", "sqrt"])
@pytest.mark.parametrize("kind", ["complex", "object", "datetime", "unicode", "list",
                                  "python_scalars", "longdouble", "uint16", "uint64"])
def test_non_native_inputs_give_numpy_answer(op, kind):
    """Outside the native types every call is handed to numpy: same result or same error."""
    vals = {
        "complex": (np.array([1 + 2j, -3j, np.nan]), np.array([2j, 1, 0])),
        "object": (np.array([1, 2.5, None], dtype=object), np.array([1, 2, 3], dtype=object)),
        "datetime": (np.array(["2024-01-01", "2025-06-30"], "datetime64[D]"),
                     np.array([1, 2], "timedelta64[D]")),
        "unicode": (np.array(["ab", "c"]), np.array(["x", "yz"])),
        "list": ([1.5, -2.0, 3.0], [[1], [2]]),
        "python_scalars": (3, 4.5),
        "longdouble": (np.array([1.5, -2.0], np.longdouble), np.array([2.0, 3.0])),
        "uint16": (np.array([1, 65535, 7], np.uint16), np.array([2, 3, 0], np.uint16)),
        "uint64": (np.array([1, 2**64 - 1, 7], np.uint64), np.array([2, 3, 0], np.uint64)),
    }[kind]
    args = vals if op in BINARY_OPS else vals[:1]
    expected = run(lambda: getattr(np, op)(*args))
    got = run(lambda: _cy(op)(*args))
    if expected.exc is None and np.asarray(expected.value).dtype.kind in "OMmUSc":
        assert got.exc is None, f"numpy returns a result; ggml_cy raises {got.exc!r}"
        assert type(got.value) is type(expected.value)
        g, e = np.asarray(got.value), np.asarray(expected.value)
        assert g.dtype == e.dtype and g.shape == e.shape
        assert g.tolist() == e.tolist() or (g.dtype.kind == "c" and np.allclose(
            g, e, equal_nan=True, rtol=0, atol=0))
        return
    compare_outcomes(got, expected, what=f"{op}[{kind}]", check_warnings=False,
                     exact=op != "sqrt", max_ulp=2)


def test_bool_dtype_constant_is_numpy_bool():
    assert BOOL_DTYPE == np.dtype(bool)


# --------------------------------------------------------------------------------------
# bfloat16 (uint16 storage): astype(x, "bfloat16") and astype(bits, dtype, from_bfloat16=True)
# against _oracle's float64-exact round-to-nearest-even
# --------------------------------------------------------------------------------------
def _bf16_tie_values(dtype):
    """Values on and next to bfloat16 rounding ties, including float64 values just above a
    tie that round onto the tie in float32 (double rounding would go the wrong way)."""
    dt = np.dtype(dtype)
    bf = np.arange(0, 0x7F80, 97, dtype=np.uint32)  # positive finite bfloat16 patterns
    lo = (bf << 16).view(np.float32).astype(np.float64)
    ulp = ((bf + 1) << 16).view(np.float32).astype(np.float64) - lo
    vals = [lo + ulp / 2, lo + ulp / 4, lo + 3 * ulp / 4]
    if dt == np.float64:
        vals += [lo + ulp / 2 + ulp * 2.0 ** -20, lo + ulp / 2 - ulp * 2.0 ** -20]
    x = np.concatenate(vals)
    x = np.concatenate([x, -x])
    with np.errstate(over="ignore"):
        x = x.astype(dt)
    return np.concatenate([x, special_values(dt)])


BF16_SOURCES = [np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int8, np.int16,
                                      np.int32, np.int64, np.uint8, np.bool_)]


@pytest.mark.parametrize("n_threads", [1, 2], ids=["nth1", "nth2"])
@pytest.mark.parametrize("layout", ["contiguous", "negstride", "transposed", "large"])
@pytest.mark.parametrize("src", BF16_SOURCES, ids=[d.name for d in BF16_SOURCES])
def test_astype_to_bfloat16(src, layout, n_threads):
    from _oracle import assert_bf16_equal, float_to_bf16_bits
    if src.kind == "f":
        x = _bf16_tie_values(src)
    elif src.kind == "b":
        x = np.array([True, False] * 20)
    else:
        ii = np.iinfo(src)
        lim = min(ii.max, 2**53)  # exact in float64, so the oracle's input is exact
        x = np.random.default_rng(1).integers(max(ii.min, -lim), lim, 4001, endpoint=True,
                                              dtype=src)
        x[:len(special_values(src))] = special_values(src)
    if layout == "large":
        x = np.resize(x, LARGE_N)
    elif layout == "negstride":
        x = np.repeat(x, 2)[::-2]
    elif layout == "transposed":
        x = np.asfortranarray(np.resize(x, (61, 67)))
    expected = float_to_bf16_bits(x)
    with np.errstate(over="ignore"):  # huge float64 values overflow to inf (and say so)
        got = _cy("astype")(x, "bfloat16", n_threads=n_threads)
        got2 = _cy("astype")(x, getattr(ggml_cy, "bfloat16", "bfloat16"))
    assert np.asarray(got).dtype == np.uint16, f"bfloat16 storage is uint16, got {got.dtype}"
    assert_bf16_equal(got, expected, inputs=[("x", x)], what=f"{src.name}->bfloat16")
    assert_bf16_equal(got2, expected, inputs=[("x", x)], what="dtype=ggml_cy.bfloat16")


@pytest.mark.parametrize("n_threads", [1, 2], ids=["nth1", "nth2"])
@pytest.mark.parametrize("dst", NATIVE_DTYPES, ids=NATIVE_IDS)
def test_astype_from_bfloat16_every_pattern(dst, n_threads):
    """All 65536 bfloat16 patterns to every native type. bfloat16 -> float32 is exact, so
    the reference is numpy's float32 -> dst conversion of the widened values: the same
    values (rounded once to float16, truncated to integers: in-range values only) and the
    same warnings (float16 overflow and underflow). NaN payloads are not compared (numpy
    has no bfloat16 to follow)."""
    bits16 = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    f32 = (bits16.astype(np.uint32) << 16).view(np.float32)
    if dst.kind in "iu":
        ii = np.iinfo(dst)
        with np.errstate(invalid="ignore"):
            v = f32.astype(np.float64)
        keep = np.isfinite(v) & (v > float(ii.min) - 1) & (v < float(ii.max) + 1)
        bits16, f32 = bits16[keep], f32[keep]
    expected = run(lambda: f32.astype(dst))
    got = run(lambda: _cy("astype")(bits16, dst, from_bfloat16=True, n_threads=n_threads))
    assert got.exc is None, f"ggml_cy raises {got.exc!r}"
    assert_bitwise(got.value, expected.value, inputs=[("bits", bits16)],
                   what=f"bfloat16->{dst.name}", nan_payload=False)
    # 'invalid' comes only from signaling-NaN patterns here, and whether quieting one
    # reports it depends on the conversion instruction numpy happens to use: not compared
    inv = ("RuntimeWarning", "invalid value encountered in cast")
    assert got.warns - {inv} == expected.warns - {inv}, (
        f"warnings: numpy (via float32) {sorted(expected.warns)}, ggml_cy {sorted(got.warns)}")


def test_bfloat16_round_trip_and_core_helpers():
    """bfloat16 -> float32 -> bfloat16 is the identity (NaNs stay NaN); the core helpers
    ggml_cy.float32_to_bfloat16 / bfloat16_to_float32 agree with the oracle on float32."""
    from _oracle import assert_bf16_equal, float_to_bf16_bits
    bits16 = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    f = _cy("astype")(bits16, np.float32, from_bfloat16=True)
    back = _cy("astype")(f, "bfloat16")
    assert_bf16_equal(back, bits16, what="round trip")
    x = _bf16_tie_values(np.float32)
    assert_bf16_equal(ggml_cy.float32_to_bfloat16(x), float_to_bf16_bits(x), inputs=[("x", x)],
                      what="float32_to_bfloat16")
    f2 = ggml_cy.bfloat16_to_float32(bits16)
    assert_bitwise(f2, (bits16.astype(np.uint32) << 16).view(np.float32),
                   what="bfloat16_to_float32", nan_payload=False)


@pytest.mark.parametrize("bad", ["not_uint16", "list", "bad_flag"])
def test_bfloat16_bad_input(bad):
    with pytest.raises((TypeError, ValueError)):
        if bad == "not_uint16":
            _cy("astype")(np.zeros(3, np.int16), np.float32, from_bfloat16=True)
        elif bad == "list":
            _cy("astype")([1.0, 2.0], "bfloat16")
        else:
            _cy("astype")(np.zeros(3, np.uint16), np.float32, from_bfloat16="yes")


@pytest.mark.parametrize("dtype", NATIVE_DTYPES, ids=NATIVE_IDS)
@pytest.mark.parametrize("op", WARN_OPS + ["maximum", "fmax", "equal", "less"])
def test_warnings_for_each_special_pair(op, dtype):
    """Every pair of special values on its own (17 copies: vector body and tail): the same
    RuntimeWarnings as numpy. Lists every pair that differs."""
    dt = np.dtype(dtype)
    s = special_values(dt)
    if dt.kind == "f":  # one NaN of each sign is enough here
        s = np.concatenate([s[~np.isnan(s)], s[np.isnan(s)][:1]])
    diffs = []
    for x in s:
        for y in s:
            if op == "power" and dt.kind in "iu" and y < 0:
                continue
            a, b = np.full(17, x, dt), np.full(17, y, dt)
            e = run(lambda: getattr(np, op)(a, b))
            g = run(lambda: _cy(op)(a, b))
            if (e.exc is None) != (g.exc is None) or e.warns != g.warns:
                diffs.append(f"{op}({x!r}, {y!r}): numpy {sorted(m for _, m in e.warns)} "
                             f"{type(e.exc).__name__ if e.exc else ''}, ggml_cy "
                             f"{sorted(m for _, m in g.warns)} "
                             f"{type(g.exc).__name__ if g.exc else ''}")
    assert not diffs, f"{len(diffs)} pairs differ:\n" + "\n".join(diffs[:12])


def _matrix(x):
    with warnings.catch_warnings():  # np.matrix is pending deprecation; still a subclass
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return np.asmatrix(x)


def _kw_cases():
    f = np.linspace(-3, 3, 6).reshape(2, 3)
    g = np.arange(6.0).reshape(2, 3) - 2
    return {
        "out_tuple": ("add", (f, g), {"out": (np.zeros((2, 3)),)}),
        "where_with_out": ("multiply", (f, g), {"where": f > 0, "out": np.full((2, 3), 9.0)}),
        "casting_unsafe_out_int": ("add", (f, g), {"out": np.zeros((2, 3), np.int32),
                                                  "casting": "unsafe"}),
        "order_F": ("subtract", (f, g), {"order": "F"}),
        "dtype_float32": ("divide", (f, g), {"dtype": np.float32}),
        "dtype_with_unsafe_casting": ("add", (f, g), {"dtype": np.int16, "casting": "unsafe"}),
        "subok_false": ("maximum", (f, g), {"subok": False}),
        "matrix_subclass": ("add", (_matrix(f), g), {}),
        "masked_array": ("add", (np.ma.masked_less(f, 0), g), {}),
        "unary_where": ("negative", (f,), {"where": f > 0, "out": np.full((2, 3), 5.0)}),
        "unary_dtype": ("sqrt", (np.abs(f),), {"dtype": np.float32}),
        "unary_out_tuple": ("absolute", (f,), {"out": (np.zeros((2, 3)),)}),
        "bool_out_for_compare_float_out": ("less", (f, g), {"out": np.zeros((2, 3))}),
    }


@pytest.mark.parametrize("case", sorted(_kw_cases()))
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_numpy_keywords(case):
    """numpy's other ufunc keywords give numpy's answer (natively or handed to numpy),
    including the result type (subclasses survive as they do in numpy)."""
    op, args, kw = _kw_cases()[case]
    kw2 = {k: (tuple(np.array(o, copy=True) for o in v) if k == "out" and isinstance(v, tuple)
               else np.array(v, copy=True) if k == "out" else v) for k, v in kw.items()}
    expected = run(lambda: getattr(np, op)(*args, **kw))
    got = run(lambda: _cy(op)(*args, **kw2))
    if expected.exc is None and got.exc is None:
        assert type(got.value) is type(expected.value), (type(got.value), type(expected.value))
        assert_bitwise(np.asarray(got.value), np.asarray(expected.value), what=case)
        if isinstance(expected.value, np.ma.MaskedArray):
            assert np.array_equal(np.ma.getmaskarray(got.value),
                                  np.ma.getmaskarray(expected.value))
        if "out" in kw:
            o = kw2["out"][0] if isinstance(kw2["out"], tuple) else kw2["out"]
            assert got.value is o, "the result must be the out array"
        if case == "order_F":
            assert got.value.flags.f_contiguous == expected.value.flags.f_contiguous
    else:
        compare_outcomes(got, expected, what=case, check_warnings=False)


UNARY_SCALARS = [3, -2.5, True, np.float32(2.5), np.int8(-3), np.float16(0.5), np.uint8(200),
                 np.float64(-0.0), np.int64(-2**63)]


@pytest.mark.parametrize("op", UNARY_OPS)
def test_unary_scalar_inputs(op):
    """Python and numpy scalars: numpy's result type (a numpy scalar) and value."""
    for x in UNARY_SCALARS:
        expected = run(lambda: getattr(np, op)(x))
        got = run(lambda: _cy(op)(x))
        rdt = None if expected.exc else np.asarray(expected.value).dtype
        compare_outcomes(got, expected, exact=op in UNARY_EXACT,
                         max_ulp=ULP_BOUND.get(getattr(rdt, "name", ""), 0),
                         what=f"{op}({x!r})", check_warnings=op in UNARY_EXACT)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, bool],
                         ids=["float32", "float64", "float16", "int32", "bool"])
@pytest.mark.parametrize("op", ["negative", "absolute", "square", "sqrt", "exp", "sign"])
def test_unary_dtype_argument(op, dtype):
    x = np.linspace(0.5, 3, 12).reshape(3, 4)
    expected = run(lambda: getattr(np, op)(x, dtype=dtype))
    got = run(lambda: _cy(op)(x, dtype=dtype))
    rdt = None if expected.exc else np.asarray(expected.value).dtype
    compare_outcomes(got, expected, exact=op not in UNARY_TRANSCENDENTAL,
                     max_ulp=ULP_BOUND.get(getattr(rdt, "name", ""), 0),
                     what=f"{op}(dtype={np.dtype(dtype).name})", check_warnings=False)


BAD_INPUTS = {
    "none": None,
    "string": "abc",
    "str_array": np.array(["a", "b"]),
    "object_array": np.array([object(), object()], dtype=object),
    "dict": {"a": 1},
    "ragged_list": [[1, 2], [3]],
}
ACT_BAD_CALLS = {
    "relu": lambda f, x: f(x), "sigmoid": lambda f, x: f(x), "gelu": lambda f, x: f(x),
    "elu": lambda f, x: f(x), "softplus": lambda f, x: f(x), "step": lambda f, x: f(x),
    "leaky_relu": lambda f, x: f(x, 0.1), "prelu": lambda f, x: f(x, 0.25),
    "clip": lambda f, x: f(x, -1.0, 1.0), "scale": lambda f, x: f(x, 2.0),
    "astype": lambda f, x: f(x, np.float32), "ascontiguousarray": lambda f, x: f(x),
}


@pytest.mark.parametrize("bad", sorted(BAD_INPUTS))
@pytest.mark.parametrize("op", ["add", "equal", "negative", "sqrt", "logical_not"])
def test_bad_data_ufuncs_raise_numpys_error(op, bad):
    x = BAD_INPUTS[bad]
    args = (x, np.ones(2)) if op in BINARY_OPS else (x,)
    expected = run(lambda: getattr(np, op)(*args))
    got = run(lambda: _cy(op)(*args))
    if expected.exc is None:  # numpy handles it (objects, strings): so must ggml_cy
        assert got.exc is None, f"numpy gives a result, ggml_cy raises {got.exc!r}"
        assert type(got.value) is type(expected.value)
        e, g = np.asarray(expected.value), np.asarray(got.value)
        assert e.dtype == g.dtype and e.shape == g.shape
        return
    assert_same_exception(got, expected, what=f"{op}({bad})")


@pytest.mark.parametrize("bad", sorted(BAD_INPUTS))
@pytest.mark.parametrize("op", sorted(ACT_BAD_CALLS))
def test_bad_data_activations_and_conversions_raise(op, bad):
    """ggml's activations and the conversions refuse what they cannot compute with a
    TypeError or ValueError (or compute numpy's answer), never crash."""
    try:
        r = ACT_BAD_CALLS[op](_cy(op), BAD_INPUTS[bad])
    except (TypeError, ValueError):
        return
    # accepted: then it must be an array or numpy scalar
    assert isinstance(r, (np.ndarray, np.generic)), f"{op}({bad}) returned {type(r)}"


@pytest.mark.parametrize("op,args", [("leaky_relu", ("x",)), ("clip", ("lo", 1.0)),
                                     ("scale", ("two",)), ("prelu", (np.ones(5),)),
                                     ("clip", (np.ones(7), 2.0)), ("scale", ([1.0, 2.0],))])
def test_bad_parameters_are_refused(op, args):
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    with pytest.raises((TypeError, ValueError)):
        _cy(op)(x, *args)
