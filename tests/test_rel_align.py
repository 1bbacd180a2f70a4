"""Inputs that are not aligned to their element size (issue 17: UBSan reported misaligned
`const float` loads in the fused kernels, e.g. row_mul_f32 / row_add_f32 under evaluate,
for np.zeros(4001, np.uint8)[1:].view(np.float32)). The kernels load through
alignment-free types; results are bitwise numpy's. tools/sanitize.sh runs this file under
UndefinedBehaviorSanitizer, where a misaligned load is a report and fails the run."""
import numpy as np
import pytest

import ggml_cy


def _misaligned(values, dtype, shift=1):
    """A view of `values` (1-D) as `dtype` starting `shift` bytes after an aligned address."""
    dtype = np.dtype(dtype)
    if shift % dtype.itemsize == 0:
        shift += 1
    raw = np.zeros(values.size * dtype.itemsize + 64, np.uint8)
    start = (-raw.ctypes.data) % 64 + shift
    out = raw[start:start + values.size * dtype.itemsize].view(dtype)
    out[...] = values
    assert out.ctypes.data % dtype.itemsize != 0
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.int16])
@pytest.mark.parametrize("n", [1, 7, 1000, 70_000])
def test_eager_misaligned(dtype, n):
    rng = np.random.default_rng(n)
    base_a = (rng.standard_normal(n) * 100).astype(dtype)
    base_b = (rng.standard_normal(n) * 100 + 1).astype(dtype)
    a = _misaligned(base_a, dtype, 1)
    b = _misaligned(base_b, dtype, 3)
    for f, ref in ((ggml_cy.add, np.add), (ggml_cy.multiply, np.multiply),
                   (ggml_cy.subtract, np.subtract), (ggml_cy.maximum, np.maximum)):
        np.testing.assert_array_equal(f(a, b, n_threads=2), ref(base_a, base_b))
    out = _misaligned(np.zeros(n, dtype), dtype, 2)
    ggml_cy.add(a, b, out=out)
    np.testing.assert_array_equal(out, base_a + base_b)
    np.testing.assert_array_equal(ggml_cy.negative(a), -base_a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_evaluate_misaligned_issue_example(dtype):
    n = 4000 // np.dtype(dtype).itemsize
    x = np.zeros(4001, np.uint8)[1:].view(dtype)           # the issue's input
    x[...] = np.linspace(-2, 2, n, dtype=dtype)
    y = _misaligned(np.linspace(1, 3, n, dtype=dtype), dtype, 2)
    xc, yc = x.copy(), y.copy()
    got = ggml_cy.evaluate("x * y + x", x=x, y=y)
    np.testing.assert_array_equal(got, xc * yc + xc)
    got = ggml_cy.evaluate("x * y + x * x - y", x=x, y=y, n_threads=2)
    np.testing.assert_array_equal(got, xc * yc + xc * xc - yc)
    out = _misaligned(np.zeros(n, dtype), dtype, 1)
    ggml_cy.evaluate("x + y", x=x, y=y, out=out)
    np.testing.assert_array_equal(out, xc + yc)


def test_mixed_types_misaligned():
    base = np.linspace(-3, 3, 5000, dtype=np.float32)
    a = _misaligned(base, np.float32, 1)
    w = _misaligned(base.astype(np.float64), np.float64, 5)
    np.testing.assert_array_equal(ggml_cy.add(a, w), base + base.astype(np.float64))
    h = _misaligned(base.astype(np.float16), np.float16, 1)
    np.testing.assert_array_equal(ggml_cy.multiply(h, h), base.astype(np.float16) ** 2)
