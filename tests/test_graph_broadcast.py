"""ggml's broadcast table for add/sub/mul/div (test-backend-ops' test_bin_bcast), through the
graph: src1 of ne is tiled nr times over src0 of ne*nr; plain, permuted src1, and source
and destination as overlapping views of one buffer; f32 and f16; numpy is the oracle."""
import itertools
import zlib

import numpy as np
import pytest

from _graph_helpers import assert_bitwise, compute, ctx_for, rand, shape_of

OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
DTYPES = [np.float32, np.float16]

# (ne of src1, repeats nr): src0 and the output have ne * nr
CASES = [((1, 1, 8, 1), (1, 1, 1, 1)),
         ((1, 1, 1, 1), (32, 1, 1, 1)),
         ((1, 1, 320, 320), (1, 1, 1, 1)),
         ((10, 5, 1, 1), (1, 1, 1, 1)),
         ((10, 5, 4, 1), (1, 1, 1, 1))]
# [10, 5, 4, 3] with src1 repeated over every subset of dims
CASES += [((10, 5, 4, 3), nr) for nr in itertools.product((1, 2), repeat=4)]
# stable-diffusion shapes
CASES += [((1280, 1, 1, 1), (1, 1, 1, 1)),
          ((1280, 1, 1, 1), (1, 16, 16, 1)),
          ((1280, 16, 16, 1), (1, 1, 1, 1)),
          ((1280, 1, 1, 1), (1, 256, 1, 1)),
          ((1, 1, 1280, 1), (16, 16, 1, 1)),
          ((16, 16, 1280, 1), (1, 1, 1, 1)),
          ((1, 1, 1920, 1), (16, 16, 1, 1)),
          ((1, 1, 640, 1), (32, 32, 1, 1)),
          ((5120, 1, 1, 1), (1, 256, 1, 1)),
          ((640, 1, 1, 1), (1, 1, 1, 1)),
          ((1, 1, 65536, 1), (256, 1, 1, 1))]


def _id(case):
    ne, nr = case
    return "ne" + "x".join(map(str, ne)) + "-nr" + "x".join(map(str, nr))


def _seed(*key):
    return zlib.crc32(repr(key).encode())


def _ref(op, a, b, nr):
    with np.errstate(all="ignore"):
        return OPS[op](a, np.tile(b, shape_of(nr)))


def _big(ne, nr):
    return np.prod(ne) * np.prod(nr) > 1_000_000


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f16"])
@pytest.mark.parametrize("op", list(OPS))
def test_bcast_plain(op, dtype, case, n_threads):
    ne, nr = case
    if _big(ne, nr) and n_threads != 3:
        pytest.skip("large case: one thread count is enough")
    rng = np.random.default_rng(_seed(op, ne, nr))
    ne0 = tuple(n * r for n, r in zip(ne, nr))
    a, b = rand(rng, ne0, dtype), rand(rng, ne, dtype)
    ctx = ctx_for(a, b)
    ta, tb = ctx.tensor_from(a), ctx.tensor_from(b)
    r = getattr(ctx, op)(ta, tb)
    assert r.ne == ne0
    compute(ctx, r, n_threads)
    assert_bitwise(r.numpy(ndim=4), _ref(op, a, b, nr))


@pytest.mark.parametrize("case", [c for c in CASES if not _big(*c)],
                         ids=[_id(c) for c in CASES if not _big(*c)])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f16"])
@pytest.mark.parametrize("op", list(OPS))
def test_bcast_permuted_src1(op, dtype, case):
    """src1 is a permuted view (dims 0 and 1 swapped, and 2 and 3) of a contiguous tensor."""
    ne, nr = case
    rng = np.random.default_rng(_seed(op, ne, nr, "p"))
    ne0 = tuple(n * r for n, r in zip(ne, nr))
    a = rand(rng, ne0, dtype)
    base_ne = (ne[1], ne[0], ne[3], ne[2])
    b_base = rand(rng, base_ne, dtype)
    ctx = ctx_for(a, b_base)
    ta, tbase = ctx.tensor_from(a), ctx.tensor_from(b_base)
    tb = ctx.permute(tbase, 1, 0, 3, 2)
    assert tb.ne == ne
    b = tb.numpy(ndim=4).copy()
    r = getattr(ctx, op)(ta, tb)
    compute(ctx, r, 2)
    assert_bitwise(r.numpy(ndim=4), _ref(op, a, b, nr))


@pytest.mark.parametrize("n_threads", [1, 2, 4])
@pytest.mark.parametrize("case", [c for c in CASES if not _big(*c)],
                         ids=[_id(c) for c in CASES if not _big(*c)])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f16"])
@pytest.mark.parametrize("op", list(OPS))
def test_bcast_overlapping_views(op, dtype, case, n_threads):
    """In place into src0, with src1 a view of the SAME buffer overlapping src0 (shifted by
    a few elements): the result is numpy's, as if the sources were read before any write."""
    ne, nr = case
    rng = np.random.default_rng(_seed(op, ne, nr, "o"))
    ne0 = tuple(n * r for n, r in zip(ne, nr))
    n0, n1 = int(np.prod(ne0)), int(np.prod(ne))
    shift = 3
    buf = rand(rng, (n0 + n1 + shift, 1, 1, 1), dtype).reshape(-1)
    ctx = ctx_for(buf)
    tbuf = ctx.tensor_from(buf)
    es = buf.itemsize
    ta = ctx.view_4d(tbuf, *ne0, ne0[0] * es, ne0[0] * ne0[1] * es,
                     ne0[0] * ne0[1] * ne0[2] * es, 0)
    tb = ctx.view_4d(tbuf, *ne, ne[0] * es, ne[0] * ne[1] * es, ne[0] * ne[1] * ne[2] * es,
                     shift * es)
    a = ta.numpy(ndim=4).copy()
    b = tb.numpy(ndim=4).copy()
    r = getattr(ctx, op + "_inplace")(ta, tb)
    compute(ctx, r, n_threads)
    want = _ref(op, a, b, nr)
    assert_bitwise(ta.numpy(ndim=4), want)
    assert_bitwise(r.numpy(ndim=4), want)
    # the bytes past src0's extent are untouched
    assert_bitwise(tbuf.numpy()[n0:], buf[n0:])


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f16"])
@pytest.mark.parametrize("op", list(OPS))
def test_inplace_writes_into_src0(op, dtype):
    rng = np.random.default_rng(5)
    a, b = rand(rng, (7, 6, 5, 2), dtype), rand(rng, (7, 1, 5, 1), dtype)
    ctx = ctx_for(a, b)
    ta, tb = ctx.tensor_from(a), ctx.tensor_from(b)
    r = getattr(ctx, op + "_inplace")(ta, tb)
    assert r.view_src == ta and r.data_ptr == ta.data_ptr
    compute(ctx, r, 2)
    assert_bitwise(ta.numpy(ndim=4), _ref(op, a, b, (1, 6, 1, 2)))
