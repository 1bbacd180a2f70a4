"""README's float64 accuracy claim, tested as stated (issue 17; issue 14 moved exp, expm1,
log, log1p, sin, cos to ggml_cy's own SIMD code, held to 2 ulp of libm here): ggml_cy's
float64 sqrt is bitwise the C library's (glibc libm, what Python's
math module calls) on every platform. numpy equals libm where its float64 loop calls libm
(CPUs without AVX-512F, like the CI machine): 0 ulp there. On AVX-512 CPUs numpy uses its
own SIMD / SVML loops, which differ from libm by up to 1 ulp on a few percent of inputs;
there the bound is 1 ulp."""
import math

import numpy as np
import pytest

import ggml_cy

FUNCS = ["exp", "expm1", "log", "log1p", "sin", "cos", "sqrt"]
# issue 14 (math2): these float64 functions run ggml_cy's own SIMD code
# (csrc/simd_math_f64.h, README "Math functions"): within their ulp budget of the exact
# value, so within 2 ulp of libm; sqrt is still the correctly rounded C sqrt
LIBM_BITWISE = ["sqrt"]
SIMD_BOUND = {"exp": 2, "expm1": 2, "log": 2, "log1p": 2, "sin": 2, "cos": 2}


def _numpy_avx512():
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:      # numpy 1.x
        from numpy.core._multiarray_umath import __cpu_features__ as feats
    return bool(feats.get("AVX512F")) or bool(feats.get("AVX512_SKX"))


def _inputs(name, n=200_000):
    rng = np.random.default_rng(17)
    if name in ("exp", "expm1"):
        x = rng.uniform(-745, 709, n)
    elif name in ("log", "sqrt"):
        x = np.exp(rng.uniform(-700, 700, n))
    elif name == "log1p":
        x = np.concatenate([rng.uniform(-0.999, 1, n // 2), np.exp(rng.uniform(-40, 700, n - n // 2))])
    else:
        x = np.concatenate([rng.uniform(-10, 10, n // 2), rng.uniform(-1e6, 1e6, n - n // 2)])
    return np.concatenate([x, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, 5e-324]])


def _ulp_diff(a, b):
    ia = a.view(np.int64)
    ib = b.view(np.int64)
    ia = np.where(ia < 0, np.int64(-2**63) - ia, ia)
    ib = np.where(ib < 0, np.int64(-2**63) - ib, ib)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    return np.where(same, 0, np.abs(ia - ib))


@pytest.mark.parametrize("name", FUNCS)
def test_float64_is_libm_or_within_the_simd_bound(name):
    x = _inputs(name)
    with np.errstate(all="ignore"):
        got = getattr(ggml_cy, name)(x)
    f = getattr(math, name)

    def libm(v):
        try:
            return f(v)
        except (ValueError, OverflowError):
            return None
    sample = x[::7]
    ref = np.array([libm(v) for v in sample], dtype=object)
    ok = np.array([r is not None for r in ref])
    want = np.array([r for r in ref[ok]], np.float64)
    if name in LIBM_BITWISE:
        np.testing.assert_array_equal(got[::7][ok].view(np.int64), want.view(np.int64))
    else:
        ulps = _ulp_diff(got[::7][ok], want)
        assert ulps.max() <= SIMD_BOUND[name], (name, int(ulps.max()))


@pytest.mark.parametrize("name", FUNCS)
def test_float64_against_numpy_per_platform(name):
    x = _inputs(name)
    with np.errstate(all="ignore"):
        got = getattr(ggml_cy, name)(x)
        ref = getattr(np, name)(x)
        via_evaluate = ggml_cy.evaluate(f"{name}(x)", x=x)
    ulps = _ulp_diff(got, ref)
    bound = 1 if _numpy_avx512() else 0
    if name in SIMD_BOUND:                     # ours within ~1 ulp, numpy's within ~1
        bound = SIMD_BOUND[name]
    assert ulps.max() <= bound, (name, int(ulps.max()), int((ulps > 0).sum()))
    np.testing.assert_array_equal(via_evaluate.view(np.int64), got.view(np.int64))
