"""Fuzzing dequantization of random bytes (issue 17, item 4): for a fixed time budget,
random types (valid and not), random byte strings of random lengths, random shapes,
strides, thread counts and `out` arrays. Each call either raises a clear error
(ValueError / TypeError) or returns values bitwise equal to gguf-py's dequantize of the
same bytes (where gguf-py knows the type) and to ggml_cy's own one-thread result.

Time budget: GGML_CY_FUZZ_SECONDS (default 10); GGML_CY_FUZZ_SEED picks the seed."""
import os
import time
import warnings

import numpy as np
import pytest

import ggml_cy
from ggml_cy import GGMLType

BUDGET = float(os.environ.get("GGML_CY_FUZZ_SECONDS", "10"))
SEED = int(os.environ.get("GGML_CY_FUZZ_SEED", "0"))
QUANTIZED = [t for t in GGMLType if t.is_quantized]

try:
    import gguf
    from gguf import quants as gq
    GQT = gguf.GGMLQuantizationType
except ImportError:          # gguf-py is in the test extra; without it: self-consistency
    gq = None


def _oracle(raw, t):
    if gq is None or t.name not in GQT.__members__ or GQT[t.name] not in gq._type_traits:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return gq.dequantize(raw, GQT[t.name])


def _same_bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(
        np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


def _one(rng):
    r = rng.random()
    if r < 0.08:
        # not a quantized type / not a type at all
        t = [0, 24, 25, 26, 999, -1, "nope", None, 3.5][int(rng.integers(9))]
        with pytest.raises((ValueError, TypeError, KeyError)):
            ggml_cy.dequantize(np.zeros(64, np.uint8), t, (32,))
        return
    t = QUANTIZED[int(rng.integers(len(QUANTIZED)))]
    bs, ts = t.blck_size, t.type_size
    rows = int(rng.integers(1, 5))
    blocks = int(rng.integers(1, 6))
    nbytes = rows * blocks * ts
    if rng.random() < 0.15:
        nbytes += int(rng.integers(-ts, ts + 1)) or 1      # a wrong byte count
    raw = rng.integers(0, 256, max(nbytes, 0), dtype=np.uint8)
    shape = (rows, blocks * bs)
    if rng.random() < 0.1:
        shape = (rows, blocks * bs + int(rng.integers(1, bs)))   # not whole blocks
    if rng.random() < 0.1:
        shape = (rows, -blocks * bs)
    n_threads = int(rng.integers(1, 4))
    dtype = rng.choice([np.float32, np.float32, np.float16, "bfloat16"])
    wrong = nbytes != rows * blocks * ts or shape != (rows, blocks * bs)
    src = raw
    if not wrong and rng.random() < 0.2:
        # the same bytes as a non-contiguous 2-D view (every other row of a bigger array)
        big = np.zeros((rows * 2, blocks * ts), np.uint8)
        big[::2] = raw.reshape(rows, blocks * ts)
        src = big[::2]
    try:
        got = ggml_cy.dequantize(src, t, shape, dtype=dtype, n_threads=n_threads)
    except (ValueError, TypeError) as e:
        if src is not raw and "contiguous" in str(e):
            return      # a strided raw is refused clearly (documented)
        assert wrong, f"{t} {shape} {nbytes} bytes refused: {e}"
        return
    assert not wrong, f"{t}: {nbytes} bytes for shape {shape} accepted"
    one = ggml_cy.dequantize(raw, t, shape, dtype=dtype, n_threads=1)
    assert _same_bits(got, one)
    if dtype is np.float32 or dtype == np.float32:
        ref = _oracle(raw.reshape(rows, blocks * ts), t)
        if ref is not None:
            assert _same_bits(got, ref.reshape(shape)), t
    # into a preallocated out (right and wrong)
    odt = np.uint16 if dtype == "bfloat16" else np.dtype(dtype)
    out = np.empty(shape, odt)
    ggml_cy.dequantize(raw, t, shape, out=out, dtype=dtype, n_threads=n_threads)
    assert _same_bits(out, one)
    with pytest.raises((ValueError, TypeError)):
        ggml_cy.dequantize(raw, t, shape, out=np.empty((rows + 1, shape[1]), odt), dtype=dtype)


def test_fuzz_dequantize_random_bytes():
    rng = np.random.default_rng(SEED)
    deadline = time.monotonic() + BUDGET
    n = 0
    while time.monotonic() < deadline or n < 100:
        seed = int(rng.integers(0, 2**63))
        try:
            _one(np.random.default_rng(seed))
        except AssertionError as e:
            raise AssertionError(f"case seed {seed}: {e}") from e
        except Exception as e:
            pytest.fail(f"case seed {seed}: {type(e).__name__}: {e}")
        n += 1
    assert n >= 100
