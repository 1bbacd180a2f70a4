"""Accuracy of the transcendental ops and ggml's activations, measured in ulp.

* sqrt exp expm1 log log1p sin cos tanh: distance to numpy's own result, <= 2 ulp for
  float32/float64 and <= 1 ulp of the float16 result (float16 is checked exhaustively:
  all 65536 inputs); an element beyond that passes only if it is at least as close to the
  exact value as numpy's result is (numpy's float32 log is itself 3 ulp off at places);
* ggml's activations: distance to the exact value (long double, rounded once), same bounds.

Each test prints its maximum; the module writes the table to .notes/ulp.md and to the
terminal at the end.
"""
import pathlib

import numpy as np
import pytest

import ggml_cy
from _oracle import (
    ACT_ULP_F32, ACT_ULP_F64, LARGE_N, ULP_BOUND, activation_reference, assert_ulp,
    special_values, ulp_distance,
)

ROOT = pathlib.Path(__file__).resolve().parents[1]
TRANSCENDENTAL = ["sqrt", "exp", "expm1", "log", "log1p", "sin", "cos", "tanh"]
ACTIVATIONS = ["sigmoid", "silu", "gelu", "gelu_erf", "gelu_quick", "elu", "hardswish",
               "hardsigmoid", "softplus", "relu", "step", "leaky_relu"]
FLOATS = ["float32", "float64", "float16"]
MEASURED = {}  # (op, dtype) -> max ulp over all thread counts (the asserted figure)
MEASURED_ALT = {}  # (op, dtype) -> transcendentals: vs the exact value; activations: |x| <= 4


def _cy(name):
    fn = getattr(ggml_cy, name, None)
    if fn is None:
        import ggml_cy.ufuncs as uf
        fn = getattr(uf, name)
    return fn


@pytest.fixture(scope="module", autouse=True)
def ulp_table(request):
    yield
    if not MEASURED:
        return
    ops = sorted({op for op, _ in MEASURED}, key=lambda o: (o not in TRANSCENDENTAL, o))
    lines = ["# Measured ulp distances (tests/test_ops_ulp.py)", "",
             "Transcendentals: max distance to numpy's result; activations: max distance to "
             "the exact value (long double, rounded once). float16 inputs are exhaustive "
             "(all 65536); float32/float64 use wide random samples plus special values.", "",
             "Second group of columns: transcendentals against the exact value (numpy's own "
             "error is in the first group's figure); activations restricted to |x| <= 4 "
             "(no underflowing tails). The exact value is long double rounded once: for "
             "float64 it can itself be 1 ulp off (double rounding), so a float64 1 there "
             "may be 0.", "",
             "| op | reference | " + " | ".join(FLOATS) + " | second: | "
             + " | ".join(FLOATS) + " |",
             "|---|---|" + "---|" * (2 * len(FLOATS) + 1)]
    for op in ops:
        ref = "numpy" if op in TRANSCENDENTAL else "exact"
        alt = "vs exact" if op in TRANSCENDENTAL else "abs(x)<=4"
        cells = []
        for table in (MEASURED, MEASURED_ALT):
            for dt in FLOATS:
                v = table.get((op, dt))
                cells.append("-" if v is None else f"{v:g}")
        lines.append(f"| {op} | {ref} | " + " | ".join(cells[:3]) + f" | {alt} | "
                     + " | ".join(cells[3:]) + " |")
    text = "\n".join(lines) + "\n"
    try:
        (ROOT / ".notes").mkdir(exist_ok=True)
        (ROOT / ".notes" / "ulp.md").write_text(text)
    except OSError:
        pass
    tr = request.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        tr.write_line("")
        for line in lines[6:]:
            tr.write_line(line)


def _record(op, dtype, worst, alt=None):
    key = (op, np.dtype(dtype).name)
    MEASURED[key] = max(MEASURED.get(key, 0.0), worst)
    if alt is not None:
        MEASURED_ALT[key] = max(MEASURED_ALT.get(key, 0.0), alt)
    print(f"{op} {np.dtype(dtype).name}: max ulp {worst:g} (second measure {alt})")


def _max_ulp(got, expected, mask=None):
    g = np.asarray(got)
    if g.dtype != expected.dtype or g.shape != expected.shape:
        return np.inf
    d = ulp_distance(g, expected)
    if mask is not None:
        d = d[mask]
    return float(d.max()) if d.size else 0.0


def _float16_all():
    return np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)


def _inputs(op, dtype, rng):
    """Samples over the op's interesting domain plus every special value."""
    dt = np.dtype(dtype)
    if dt == np.float16:
        return _float16_all()
    n = LARGE_N
    fi = np.finfo(dt)
    lim = {"exp": 0.98 * np.log(float(fi.max)), "expm1": 0.98 * np.log(float(fi.max)),
           "tanh": 25.0 if dt == np.float32 else 40.0, "sin": 2e4, "cos": 2e4}.get(op)
    if lim is not None:
        x = rng.uniform(-lim, lim, n)
        x[: n // 4] = rng.uniform(-2, 2, n // 4)  # the kernel's core interval, densely
        x[n // 4: n // 3] = rng.standard_normal(n // 3 - n // 4) * 1e-4
    else:  # sqrt, log, log1p: log-uniform over the whole positive range, some negatives
        lo = np.log10(float(fi.smallest_subnormal))
        e = rng.uniform(lo, np.log10(float(fi.max)), n)
        x = 10.0 ** e
        x[: n // 4] = rng.uniform(0, 4, n // 4)
        if op == "log1p":
            x[n // 4: n // 3] = rng.uniform(-1, 0, n // 3 - n // 4)
        x[-100:] *= -1
    with np.errstate(over="ignore"):
        x = x.astype(dt)
    return np.concatenate([x, special_values(dt)])


@pytest.mark.parametrize("n_threads", [1, 2, 3], ids=["nth1", "nth2", "nth3"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", TRANSCENDENTAL)
def test_transcendental_ulp_vs_numpy(op, dtype, n_threads):
    rng = np.random.default_rng(len(op) * 7919 + len(dtype))
    x = _inputs(op, dtype, rng)
    with np.errstate(all="ignore"):
        expected = getattr(np, op)(x)
        got = _cy(op)(x, n_threads=n_threads)
    with np.errstate(all="ignore"):
        exact = getattr(np, op)(x.astype(np.longdouble)).astype(x.dtype)
    _record(op, dtype, _max_ulp(got, expected), _max_ulp(got, exact))
    # beyond the bound, an element still passes when it is at least as close to the exact
    # value as numpy's own result (see _oracle.assert_ulp); the table shows the raw figure
    assert_ulp(got, expected, ULP_BOUND[dtype], inputs=[("x", x)], what=f"{op}[{dtype}]",
               exact=exact)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "bool"])
@pytest.mark.parametrize("op", TRANSCENDENTAL)
def test_transcendental_of_integers(op, dtype):
    """Integer input computes in numpy's promoted float type (int8 -> float16, int16 ->
    float32, int32 -> float64), within that type's bound."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        x = np.array([False, True] * 50)
    else:
        ii = np.iinfo(dt)
        x = np.random.default_rng(3).integers(ii.min, ii.max, 5001, endpoint=True, dtype=dt)
        if op in ("exp", "expm1"):
            x = (x % 40).astype(dt)
    with np.errstate(all="ignore"):
        expected = getattr(np, op)(x)
        got = _cy(op)(x)
    assert_ulp(got, expected, ULP_BOUND[expected.dtype.name], inputs=[("x", x)],
               what=f"{op}[{dtype}]")


def _act_inputs(dtype, rng):
    dt = np.dtype(dtype)
    if dt == np.float16:
        x = _float16_all()
        return x[np.isfinite(x)]
    n = LARGE_N
    x = rng.uniform(-12, 12, n)
    x[: n // 4] = rng.uniform(-3, 3, n // 4)
    x[n // 4: n // 3] = rng.standard_normal(n // 3 - n // 4) * 1e-5
    x[n // 3: n // 3 + 1000] = rng.uniform(-60, 60, 1000)  # saturated tails
    x = x.astype(dt)
    s = special_values(dt)
    return np.concatenate([x, s[np.isfinite(s)]])


def _act_call(op, x, n_threads=None):
    kw = {} if n_threads is None else {"n_threads": n_threads}
    if op == "leaky_relu":
        return _cy(op)(x, 0.125, **kw)
    return _cy(op)(x, **kw)


_REF_CACHE = {}


@pytest.mark.parametrize("n_threads", [1, 2], ids=["nth1", "nth2"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ACTIVATIONS)
def test_activation_ulp_vs_exact(op, dtype, n_threads):
    key = (op, dtype)
    if key not in _REF_CACHE:
        x = _act_inputs(dtype, np.random.default_rng(len(op)))
        params = (0.125,) if op == "leaky_relu" else ()
        _REF_CACHE[key] = (x, activation_reference(op, x, *params))
    x, expected = _REF_CACHE[key]
    got = _act_call(op, x, n_threads)
    _record(op, dtype, _max_ulp(got, expected), _max_ulp(got, expected, np.abs(x) <= 4))
    bound = ULP_BOUND[dtype]
    bound = max(bound, {"float32": ACT_ULP_F32, "float64": ACT_ULP_F64}.get(
        np.dtype(dtype).name, {}).get(op, 0))            # the SIMD activations' budgets
    assert_ulp(got, expected, bound, inputs=[("x", x)], what=f"{op}[{dtype}]")
