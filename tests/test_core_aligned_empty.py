"""ggml_cy.core._core.aligned_empty: np.empty whose data starts on a chosen power-of-two
boundary (evaluate()'s results, so that the fused executor streams whole cache lines)."""
import numpy as np
import pytest

import ggml_cy
from ggml_cy.core._core import aligned_empty


@pytest.mark.parametrize("shape", [(), 1, 7, (3, 5), (2, 3, 4), (1000, 7), (4096,)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.uint16])
@pytest.mark.parametrize("align", [1, 2, 16, 64, 4096])
def test_shape_dtype_and_alignment(shape, dtype, align):
    x = aligned_empty(shape, dtype, align)
    want = (shape,) if isinstance(shape, int) else shape
    assert x.shape == want and x.dtype == np.dtype(dtype)
    assert x.flags.c_contiguous and x.flags.writeable
    assert x.ctypes.data % align == 0
    x[...] = 1                                  # every byte is the array's own
    assert int(x.sum()) == x.size


def test_default_alignment_is_a_cache_line():
    for n in range(1, 40):
        assert aligned_empty((n,), np.float32).ctypes.data % 64 == 0


def test_zero_sized_and_numpy_integer_dims():
    assert aligned_empty((3, 0, 2), np.float32).shape == (3, 0, 2)
    assert aligned_empty((np.int64(4), np.uint8(2)), np.float32).shape == (4, 2)
    assert aligned_empty(np.int64(5), np.float32).shape == (5,)


@pytest.mark.parametrize("kwargs, exc, text", [
    (dict(shape=(2,), dtype=np.float32, align=3), ValueError, "power of two"),
    (dict(shape=(2,), dtype=np.float32, align=0), ValueError, "power of two"),
    (dict(shape=(2,), dtype=np.float32, align=8192), ValueError, "power of two"),
    (dict(shape=(-1,), dtype=np.float32), ValueError, "negative dimension"),
    (dict(shape=(2.5,), dtype=np.float32), TypeError, ""),
    (dict(shape=("a",), dtype=np.float32), TypeError, ""),
    (dict(shape=None, dtype=np.float32), TypeError, ""),
    (dict(shape=(2,), dtype="no such type"), TypeError, ""),
    (dict(shape=(2 ** 62, 2 ** 62), dtype=np.float32), ValueError, ""),
])
def test_bad_input_raises(kwargs, exc, text):
    with pytest.raises(exc, match=text or None):
        aligned_empty(**kwargs)


def test_evaluate_results_start_on_a_cache_line():
    for n in (1, 3, 17, 1000, 100003):
        a = np.arange(n, dtype=np.float32)
        r = ggml_cy.evaluate("a * 2 + 1", a=a)
        assert r.ctypes.data % 64 == 0
        np.testing.assert_array_equal(r, a * 2 + 1)
