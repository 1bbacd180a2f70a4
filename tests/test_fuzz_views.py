"""Fuzzing the Context API's view / reshape / permute / transpose parameters (issue 17,
item 4): random (often hostile) ne, nb, offsets and axes. Every call either raises a clear
error (ValueError, TypeError, OverflowError, ContextMemoryError) or gives a tensor whose
elements are exactly the parent's bytes at the computed addresses; reads and writes
through it never touch memory outside the parent (a guard tensor after it stays intact,
the arena's object list stays readable).

Time budget: GGML_CY_FUZZ_SECONDS per test (default 10; longer on demand,
``GGML_CY_FUZZ_SECONDS=600 pytest tests/test_fuzz_views.py``). GGML_CY_FUZZ_SEED picks the
seed (printed on failure)."""
import os
import time

import numpy as np
import pytest

import ggml_cy
from ggml_cy import backend as B
from ggml_cy.core._core import ContextMemoryError

BUDGET = float(os.environ.get("GGML_CY_FUZZ_SECONDS", "10"))
SEED = int(os.environ.get("GGML_CY_FUZZ_SEED", "0"))
OK_ERRORS = (ValueError, TypeError, OverflowError, ContextMemoryError)
TYPES = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "f64": np.float64,
         "i8": np.int8}


def _hostile_int(rng, scale):
    r = rng.random()
    if r < 0.55:
        return int(rng.integers(0, scale + 1))
    if r < 0.7:
        return -int(rng.integers(0, scale + 1))
    if r < 0.8:
        return int(rng.choice([0, 1, -1, 2**31, -2**31, 2**62, -2**62, 2**63 - 1, -2**63]))
    if r < 0.9:
        return int(rng.integers(0, 4)) * scale
    return int(rng.integers(-3 * scale, 3 * scale + 1))


def _reference(base_bytes, itemsize, dtype, ne, nb, offset):
    """The view's elements (numpy shape ne reversed) read from the parent's bytes."""
    shape = tuple(reversed(ne))
    out = np.empty(shape, dtype)
    flat = out.reshape(-1)
    k = 0
    for i3 in range(ne[3]):
        for i2 in range(ne[2]):
            for i1 in range(ne[1]):
                for i0 in range(ne[0]):
                    a = offset + i0 * nb[0] + i1 * nb[1] + i2 * nb[2] + i3 * nb[3]
                    assert 0 <= a and a + itemsize <= len(base_bytes), "outside the parent"
                    flat[k] = np.frombuffer(base_bytes[a:a + itemsize], dtype)[0]
                    k += 1
    return out


def _check_view(ctx, base, guard, v, rng):
    """v is a valid view of base: compare with the reference, write through it."""
    dtype = TYPES[str(base.type).lower()] if str(base.type).lower() in TYPES else base.dtype
    itemsize = np.dtype(base.dtype).itemsize
    raw = base.numpy().tobytes()
    offset = v.data_ptr - base.data_ptr
    if v.nelements > 4096:
        return
    if v.nelements == 0:
        # an empty view may still have a huge extent in another dim: numpy may refuse to
        # make such a shape (ValueError), which is fine; nothing is read or written
        try:
            assert B.tensor_get(v).size == 0
        except ValueError:
            pass
        return
    want = _reference(raw, itemsize, base.dtype, v.ne, v.nb, offset)
    got = B.tensor_get(v)
    assert got.tobytes() == want.reshape(got.shape).tobytes()
    assert np.asarray(v.numpy()).tobytes() == want.reshape(got.shape).tobytes()
    # a write through the view (refused when its elements overlap), then the guard
    new = (rng.integers(0, 100, v.nelements)).astype(base.dtype)
    try:
        B.tensor_set(v, new)
    except ValueError as e:
        assert "overlap" in str(e)
    else:
        assert B.tensor_get(v).tobytes() == new.reshape(got.shape).tobytes()
    assert np.all(guard.numpy() == 7)
    ctx.objects()


def _one_case(rng):
    ctx = ggml_cy.Context(1 << 16)
    tname = str(rng.choice(list(TYPES)))
    nd = int(rng.integers(1, 5))
    ne = [int(rng.integers(1, 6)) for _ in range(nd)]
    base = ctx.new_tensor(tname, ne)
    guard = ctx.new_tensor_1d("f32", 8)
    base.numpy()[...] = np.arange(base.nelements).reshape(base.shape).astype(base.dtype)
    guard.numpy()[...] = 7
    nbytes = base.nbytes
    itemsize = np.dtype(base.dtype).itemsize
    parent = base
    for step in range(int(rng.integers(1, 4))):
        kind = str(rng.choice(["view", "reshape", "permute", "transpose", "bad_args"]))
        try:
            if kind == "view":
                k = int(rng.integers(1, 5))
                vne = [_hostile_int(rng, 5) for _ in range(k)]
                vnb = [_hostile_int(rng, nbytes) // max(1, itemsize) * itemsize
                       if rng.random() < 0.8 else _hostile_int(rng, nbytes)
                       for _ in range(k - 1)]
                off = _hostile_int(rng, nbytes)
                if rng.random() < 0.7:
                    off = off // itemsize * itemsize
                f = [None, parent.view_1d, parent.view_2d, parent.view_3d, parent.view_4d][k]
                v = f(*vne, *vnb, off)
            elif kind == "reshape":
                k = int(rng.integers(1, 5))
                rne = [_hostile_int(rng, 6) for _ in range(k)]
                v = ctx.reshape(parent, rne)
            elif kind == "permute":
                axes = [int(a) for a in rng.permutation(4)]
                if rng.random() < 0.3:
                    axes[int(rng.integers(0, 4))] = _hostile_int(rng, 4)
                v = ctx.permute(parent, *axes)
            elif kind == "transpose":
                v = ctx.transpose(parent)
            else:
                bad = rng.choice(["x", 1.5, None, -1, 2**70, np.float64(2.0), [1, 2]])
                v = parent.view_1d(bad, 0)
        except OK_ERRORS:
            continue
        _check_view(ctx, base, guard, v, rng)
        parent = v
    assert np.all(guard.numpy() == 7)


def test_fuzz_view_parameters():
    rng = np.random.default_rng(SEED)
    deadline = time.monotonic() + BUDGET
    n = 0
    while time.monotonic() < deadline or n < 50:
        seed = int(rng.integers(0, 2**63))
        try:
            _one_case(np.random.default_rng(seed))
        except AssertionError as e:
            raise AssertionError(f"case seed {seed}: {e}") from e
        except Exception as e:   # anything but the documented errors is a finding
            pytest.fail(f"case seed {seed}: {type(e).__name__}: {e}")
        n += 1
    assert n >= 50


def test_view_element_count_overflow_refused():
    # found by the fuzzer: a zero stride keeps the extent inside the parent while
    # ne0*ne1*ne2*ne3 overflowed int64 (nelements came out negative)
    ctx = ggml_cy.Context(1 << 16)
    base = ctx.new_tensor_1d("f32", 16)
    with pytest.raises(OverflowError, match="elements"):
        base.view_4d(2, 2**63 - 1, 4, 1, 0, 4, 16, 0)
    v = base.view_4d(0, 2**63 - 1, 4, 1, 0, 4, 16, 0)     # empty: fine
    assert v.nelements == 0
