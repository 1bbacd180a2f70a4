"""ggml's tiling broadcast through the kernel layer's internal hook
``ggml_cy.cpu._kernels._apply(op, out, src0, src1=None, params=(), n_threads=1, ...)``:
src1 dims only need to DIVIDE the output's (ggml_can_repeat), src1 indexed by modulo.

Reference: ``np.tile(src1, reps)`` then numpy's op, bitwise. The output has ggml's
ne [10,5,4,3] (numpy shape (3,4,5,10)); for every subset of dims src1 is repeated over that
subset (two choices of repeat counts), in contiguous, transposed and negative-stride
layouts, with 1, 2 and 3 threads (the parallel path forced on these small shapes through
the kernel's tuning hook). NaN payloads are not compared here: the reference runs on
another layout, where numpy itself picks the other NaN operand, plus ggml's long-row cases such as [1,1,65536,1] repeated
[256,1,1,1].
"""
import itertools
import os

import numpy as np
import pytest

from _oracle import LARGE_N, SIZE, assert_bitwise, numpy_free_choices, random_values

K = pytest.importorskip("ggml_cy.cpu._kernels")

OUT = (3, 4, 5, 10)  # ggml ne [10, 5, 4, 3]
REPEATS = {"rep_max": (3, 4, 5, 5), "rep_mixed": (3, 2, 5, 2)}  # divide OUT per dim
SUBSETS = [s for r in range(5) for s in itertools.combinations(range(4), r)]

# ggml op name -> (numpy function, dtypes the kernel takes for it)
FLOATS = [np.float32, np.float64, np.float16]
INTS = [np.int32, np.int8, np.uint8, np.int64]
OPS = {
    "ADD": (np.add, FLOATS + INTS), "SUB": (np.subtract, FLOATS + INTS),
    "MUL": (np.multiply, FLOATS + INTS), "DIV": (np.divide, FLOATS),
    "FLOOR_DIV": (np.floor_divide, FLOATS + INTS), "MOD": (np.remainder, FLOATS + INTS),
    "FMOD": (np.fmod, FLOATS + INTS), "MAX": (np.maximum, FLOATS + INTS),
    "MIN": (np.minimum, FLOATS + INTS), "FMAX": (np.fmax, FLOATS),
    "FMIN": (np.fmin, FLOATS), "EQ": (np.equal, FLOATS + INTS),
    "LT": (np.less, FLOATS + INTS), "GE": (np.greater_equal, FLOATS + INTS),
    "LOGICAL_AND": (np.logical_and, FLOATS + INTS),
}
# src1 layout x thread count (every layout on one thread count or another)
COMBOS = [("contiguous", 1), ("contiguous", 3), ("transposed", 2), ("negstride", 1)]
DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int32, np.uint8)]


@pytest.fixture
def parallel_small():
    """Lets 600-element outputs take the threaded path (the kernel's own test hook)."""
    old = K._set_tuning(par_min=8, par_min_heavy=8)
    yield
    K._set_tuning(*old)


def _layout(x, layout):
    if layout == "contiguous":
        return x
    if layout == "transposed":
        return np.asfortranarray(x)
    if layout == "negstride":
        big = np.zeros(tuple(2 * n for n in x.shape), x.dtype)
        v = big[tuple(slice(None, None, -2) for _ in x.shape)]
        v[...] = x
        return v
    raise KeyError(layout)


def _out_dtype(op, dt):
    return np.dtype(bool) if op in ("EQ", "LT", "GE", "LOGICAL_AND") else dt


def _reference(op, a, b_tiled, odt):
    with np.errstate(all="ignore"):
        r = OPS[op][0](a, b_tiled)
    return r.astype(odt, copy=False)


@pytest.mark.parametrize("reps_name", sorted(REPEATS))
@pytest.mark.parametrize("subset", SUBSETS, ids=lambda s: "tile_" + ("".join(map(str, s))
                                                                     or "none"))
@pytest.mark.parametrize("dtype", DTYPES, ids=[d.name for d in DTYPES])
def test_src1_tiled_over_subset_of_dims(dtype, subset, reps_name, parallel_small):
    """Every op the kernel takes for dtype; src1 in three layouts; 1, 2 and 3 threads."""
    reps_all = REPEATS[reps_name]
    reps = tuple(reps_all[d] if d in subset else 1 for d in range(4))
    s1 = tuple(n // r for n, r in zip(OUT, reps))
    rng = np.random.default_rng(sum(s1) * 31 + len(subset))
    a = random_values(dtype, int(np.prod(OUT)), rng).reshape(OUT)
    b = random_values(dtype, int(np.prod(s1)), rng).reshape(s1)
    bt = np.tile(b, reps)
    failures = []
    for op, (_, dts) in OPS.items():
        if dtype.type not in dts:
            continue
        odt = _out_dtype(op, dtype)
        expected = _reference(op, a, bt, odt)
        for layout, n_threads in COMBOS:
            bl = _layout(b, layout)
            out = np.full(OUT, 7, odt)
            try:
                K._apply(op, out, a, bl, n_threads=n_threads)
                # the reference runs on another layout, where numpy's pick between two
                # NaN operands may differ: NaN payloads are the eager tests' business
                assert_bitwise(out, expected, inputs=[("a", a), ("b_tiled", bt)],
                               nan_payload=False,
                               free=numpy_free_choices(OPS[op][0].__name__,
                                                       [("a", a), ("b", bt)], OUT))
            except (AssertionError, ValueError) as e:
                failures.append(f"{op} src1{s1} {layout} nth{n_threads}: {e}")
    assert not failures, "\n".join(failures[:8])


@pytest.mark.parametrize("op", ["ADD", "MUL", "MAX", "LT"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32], ids=["f32", "f16", "i32"])
def test_both_sources_tiled(op, dtype, parallel_small):
    """src0 tiled too: out (3,4,5,10) from src0 (1,4,1,10) and src1 (3,2,5,5)."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(2)
    a = random_values(dt, 40, rng).reshape(1, 4, 1, 10)
    b = random_values(dt, 150, rng).reshape(3, 2, 5, 5)
    odt = _out_dtype(op, dt)
    expected = _reference(op, np.tile(a, (3, 1, 5, 1)), np.tile(b, (1, 2, 1, 2)), odt)
    for n_threads in (1, 2, 3):
        out = np.empty(OUT, odt)
        K._apply(op, out, a, b, n_threads=n_threads)
        assert_bitwise(out, expected, what=f"{op} nth{n_threads}", nan_payload=False)


LONG_ROWS = [
    # (numpy out shape, numpy src1 shape): ggml ne reversed
    ((1, 4096, 1, 256), (1, 4096, 1, 1)),       # ne [256,1,4096,1] from [1,1,4096,1]
    ((1, 4096, 1, 256), (1, 1, 1, 256)),        # a row repeated over 4096 rows
    ((3, 4096, 1, 64), (1, 2048, 1, 32)),       # every dim halved or kept
    ((1, 1, 1, LARGE_N), (1, 1, 1, 1)),         # one long row, scalar src1
]
if SIZE == "full" and os.environ.get("GGML_CY_TEST_HUGE", "1") == "1":
    LONG_ROWS.append(((1, 65536, 1, 256), (1, 65536, 1, 1)))  # ggml's [1,1,65536,1] x [256,1,1,1]


@pytest.mark.parametrize("shapes", LONG_ROWS, ids=lambda s: f"{s[0]}_from_{s[1]}")
@pytest.mark.parametrize("op", ["ADD", "MUL", "DIV"])
def test_long_rows_threaded(shapes, op):
    """Outputs big enough that the threaded path runs without the tuning hook."""
    oshape, s1 = shapes
    rng = np.random.default_rng(5)
    a = rng.standard_normal(oshape, dtype=np.float32)
    b = (rng.standard_normal(s1, dtype=np.float32) + 3).astype(np.float32)
    reps = tuple(o // s for o, s in zip(oshape, s1))
    expected = _reference(op, a, np.tile(b, reps), np.dtype(np.float32))
    for n_threads in (1, 2, 3):
        out = np.empty(oshape, np.float32)
        K._apply(op, out, a, b, n_threads=n_threads)
        assert_bitwise(out, expected, what=f"{op}{oshape} nth{n_threads}", nan_payload=False)


@pytest.mark.parametrize("s1", [(3, 4, 5, 3), (2, 4, 5, 10), (3, 3, 5, 10), (1, 4, 5, 20),
                                (3, 4, 5, 10, 1)],
                         ids=["ne0_3_of_10", "ne3_2_of_3", "ne2_3_of_4", "ne0_20_of_10",
                              "five_dims"])
def test_non_dividing_src1_is_refused(s1):
    """A src1 dim that does not divide the output's is a ValueError, never a crash, and
    the output is left untouched."""
    out = np.full(OUT, 7, np.float32)
    with pytest.raises(ValueError):
        K._apply("ADD", out, np.ones(OUT, np.float32), np.ones(s1, np.float32))
    assert np.all(out == 7)


def test_bad_arguments_are_refused():
    a = np.ones(OUT, np.float32)
    ro = np.ones(OUT, np.float32)
    ro.setflags(write=False)
    with pytest.raises(ValueError):
        K._apply("ADD", ro, a, a)
    with pytest.raises((KeyError, ValueError)):
        K._apply("NOT_AN_OP", np.empty(OUT, np.float32), a, a)
    with pytest.raises(ValueError):
        K._apply("ADD", np.empty(OUT, np.float32), a, a, params=(1, 2, 3))
