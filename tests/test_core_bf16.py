"""bfloat16 helpers: round to nearest even, NaN stays (quiet) NaN, exact round trips."""
import numpy as np
import pytest

from ggml_cy import bfloat16_to_float32, float32_to_bfloat16


def reference_bf16(bits32):
    """Round-to-nearest-even from the definition, one value at a time (Python ints)."""
    out = []
    for u in bits32.tolist():
        if (u & 0x7FFFFFFF) > 0x7F800000:           # NaN: truncate, set the quiet bit
            out.append((u >> 16) | 0x40)
            continue
        low, rest = u >> 16, u & 0xFFFF
        if rest > 0x8000 or (rest == 0x8000 and low & 1):
            low += 1                                # carries into the exponent correctly
        out.append(low)
    return np.array(out, dtype=np.uint16)


def test_random_bit_patterns_against_definition():
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2 ** 32, size=20000, dtype=np.uint64).astype(np.uint32)
    ties = (bits & np.uint32(0xFFFF0000)) | np.uint32(0x8000)          # exact halfway cases
    near = (bits & np.uint32(0xFFFF0000)) | np.uint32(0x7FFF)
    for b in (bits, ties, near):
        got = float32_to_bfloat16(b.view(np.float32))
        np.testing.assert_array_equal(got, reference_bf16(b))


@pytest.mark.parametrize("x,bits", [
    (0.0, 0x0000), (-0.0, 0x8000), (1.0, 0x3F80), (-2.0, 0xC000),
    (np.inf, 0x7F80), (-np.inf, 0xFF80),
    (1 + 2 ** -8, 0x3F80),            # halfway, even below: rounds down
    (1 + 3 * 2 ** -8, 0x3F82),        # halfway, odd below: rounds up to even
    (1 + 2 ** -8 + 2 ** -20, 0x3F81),  # just above halfway: up
    (np.float32(3.4028235e38), 0x7F80),  # max float rounds to inf
    (np.float32(1e-45), 0x0000),      # smallest subnormal rounds to zero
    (np.float32(2 ** -133), 0x0001),   # a bf16 subnormal: kept, not flushed
    (np.float32(2 ** -126), 0x0080),  # smallest normal
])
def test_known_values(x, bits):
    assert int(float32_to_bfloat16(np.float32(x))) == bits


def test_nan_stays_nan_and_quiet():
    pats = np.array([0x7F800001, 0x7FC00000, 0xFFFFFFFF, 0x7F80FFFF, 0xFF800001],
                    dtype=np.uint32)
    out = float32_to_bfloat16(pats.view(np.float32))
    assert ((out & 0x7F80) == 0x7F80).all() and ((out & 0x7F) != 0).all()
    assert (out & 0x40).all()                       # quiet
    assert (out >> 15).tolist() == [0, 0, 1, 0, 1]  # sign kept
    assert np.isnan(bfloat16_to_float32(out)).all()


def test_every_bf16_value_round_trips():
    allbits = np.arange(2 ** 16, dtype=np.uint32).astype(np.uint16)
    f = bfloat16_to_float32(allbits)
    assert f.dtype == np.float32
    assert (f.view(np.uint32) == allbits.astype(np.uint32) << 16).all()
    back = float32_to_bfloat16(f)
    nan = np.isnan(f)
    np.testing.assert_array_equal(back[~nan], allbits[~nan])
    assert (back[nan] == (allbits[nan] | 0x40)).all()


def test_shapes_layouts_and_inputs():
    x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 4)
    for src in (x, x[:, ::-1, ::2], x.T, 0.5, [1.0, 2.0], np.float64(1.5), np.array(2.0)):
        out = float32_to_bfloat16(src)
        expect = reference_bf16(np.asarray(src, np.float32).reshape(-1).view(np.uint32))
        assert out.shape == np.shape(src) and out.dtype == np.uint16
        np.testing.assert_array_equal(out.reshape(-1), expect)
    assert float32_to_bfloat16(np.zeros((0, 3))).shape == (0, 3)
    assert bfloat16_to_float32(np.zeros((2, 0), np.uint16)).shape == (2, 0)
    assert bfloat16_to_float32([0x3F80, 0x4000]).tolist() == [1.0, 2.0]
    assert bfloat16_to_float32(np.uint16(0x3F80)).shape == ()
    assert float32_to_bfloat16(np.array([1, 2, 3], np.int64)).tolist() == [0x3F80, 0x4000,
                                                                          0x4040]
