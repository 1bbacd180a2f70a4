"""Contiguous rows run element by element up to the destination's next 64-byte boundary,
then vectorized (issue 14, kern_line_peel in ggml_cy/cpu/csrc/kernels_stream.h): results stay
numpy's, bit for bit, at every start offset within a cache line, around the row length
where peeling starts (LINE_PEEL_MIN = 256), with operands at the destination's offset
and at others, and with a scalar operand."""
import numpy as np
import pytest

import ggml_cy


def carve(n, off, dt):
    """n elements of dt starting `off` bytes past a 64-byte boundary."""
    isz = np.dtype(dt).itemsize
    buf = np.empty(n * isz + 256, np.uint8)
    start = (-buf.ctypes.data) % 64 + off
    return buf[start:start + n * isz].view(dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int16, np.uint8])
@pytest.mark.parametrize("n", [255, 256, 257, 1000, 4099])
def test_binary_rows_at_every_line_offset(dt, n):
    rng = np.random.default_rng(n)
    isz = np.dtype(dt).itemsize
    for off in range(0, 64, isz):
        for aoff in (off, (off + 2 * isz) % 64):       # same offset as out, and another
            a = carve(n, aoff, dt)
            b = carve(n, off, dt)
            o = carve(n, off, dt)
            a[:] = (rng.standard_normal(n) * 50).astype(dt)
            b[:] = (rng.standard_normal(n) * 50 + 1).astype(dt)
            for name in ("add", "multiply", "maximum", "subtract"):
                ggml_cy_fn, np_fn = getattr(ggml_cy, name), getattr(np, name)
                with np.errstate(all="ignore"):
                    want = np_fn(a, b)
                    got = ggml_cy_fn(a, b, out=o)
                assert got is o
                assert np.array_equal(o.view(np.uint8), want.view(np.uint8)), (name, off, aoff)
            with np.errstate(all="ignore"):
                want = np.add(a, dt(3))
                ggml_cy.add(a, dt(3), out=o)
            assert np.array_equal(o, want)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [255, 256, 300, 2048])
def test_unary_rows_at_every_line_offset(dt, n):
    rng = np.random.default_rng(7)
    isz = np.dtype(dt).itemsize
    for off in range(0, 64, isz):
        a = carve(n, off, dt)
        o = carve(n, off, dt)
        a[:] = rng.standard_normal(n).astype(dt)
        a[::17] = -0.0
        for name in ("negative", "absolute", "square", "sqrt"):
            with np.errstate(all="ignore"):
                want = getattr(np, name)(a)
                getattr(ggml_cy, name)(a, out=o)
            assert np.array_equal(o.view(np.uint8), want.view(np.uint8), equal_nan=False) or \
                np.array_equal(o, want, equal_nan=True), (name, off)


def test_element_misaligned_destination_still_exact():
    """A float32 row 1 byte past a line boundary: no peel (not element-aligned), same bits."""
    buf = np.zeros(4 * 1000 + 64, np.uint8)
    start = (-buf.ctypes.data) % 64 + 1
    o = buf[start:start + 4000].view(np.float32)
    a = np.arange(1000, dtype=np.float32)
    ggml_cy.add(a, a, out=o)
    assert np.array_equal(o, a + a)
