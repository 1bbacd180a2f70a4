"""mul_mat against numpy: ggml's convention (a [K, M], b [K, N] -> [M, N]), random shapes
that cross every blocking edge, batched broadcast of a, f32 and f16 a, strided b."""
import numpy as np
import pytest

from ggml_cy.graph.context import Context

from _graph_helpers import assert_bitwise


def _ref(a, b):
    """a numpy (ne03, ne02, M, K), b (ne13, ne12, N, K) -> (ne13, ne12, N, M), a repeated
    over consecutive batches (ggml: i02 = i12 / (ne12 / ne02))."""
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    r2, r3 = b.shape[1] // a.shape[1], b.shape[0] // a.shape[0]
    a = np.repeat(np.repeat(a, r2, axis=1), r3, axis=0)
    return b @ np.swapaxes(a, -1, -2)


def _run(a, b, n_threads, ctx=None):
    ctx = ctx or Context(4 * (a.nbytes + b.nbytes) + (8 << 20))
    ta, tb = ctx.tensor_from(a), ctx.tensor_from(b)
    r = ctx.mul_mat(ta, tb)
    ctx.new_graph().build_forward_expand(r).compute(n_threads)
    return r.numpy(ndim=4)


def _check(got, want, k):
    tol = 1e-5 * max(1.0, np.sqrt(k))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


SHAPES = [(1, 1, 1), (3, 5, 7), (16, 6, 1), (17, 7, 13), (64, 48, 30), (255, 33, 71),
          (257, 300, 5), (513, 17, 90), (32, 1, 200), (5, 270, 3)]


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("kmn", SHAPES, ids=["K%dM%dN%d" % s for s in SHAPES])
def test_mul_mat_2d(kmn, dtype, n_threads):
    k, m, n = kmn
    rng = np.random.default_rng(k * 1000 + m * 10 + n)
    a = rng.standard_normal((1, 1, m, k)).astype(dtype)
    b = rng.standard_normal((1, 1, n, k)).astype(np.float32)
    _check(_run(a, b, n_threads), _ref(a, b), k)


BATCHES = [((1, 1), (1, 1)), ((1, 2), (1, 2)), ((1, 1), (1, 4)), ((1, 2), (1, 6)),
           ((2, 3), (4, 3)), ((1, 1), (3, 5)), ((3, 1), (3, 2))]


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("batch", BATCHES, ids=[f"a{a}-b{b}" for a, b in BATCHES])
def test_mul_mat_batched_broadcast(batch, dtype):
    (a3, a2), (b3, b2) = batch
    rng = np.random.default_rng(a2 * 7 + b2 * 13 + a3 + b3)
    k, m, n = 37, 21, 19
    a = rng.standard_normal((a3, a2, m, k)).astype(dtype)
    b = rng.standard_normal((b3, b2, n, k)).astype(np.float32)
    want = _ref(a, b)
    got1 = _run(a, b, 1)
    _check(got1, want, k)
    for nt in (2, 4, 7):
        assert_bitwise(_run(a, b, nt), got1)  # every thread count: the same bits


def test_mul_mat_strided_operands():
    """b as a permuted view, a as a view with padded rows: packing follows nb."""
    rng = np.random.default_rng(1)
    k, m, n = 40, 24, 18
    ctx = Context(16 << 20)
    a_pad = rng.standard_normal((m, k + 8)).astype(np.float32)
    b_t = rng.standard_normal((k, n)).astype(np.float32)
    ta_pad, tb_t = ctx.tensor_from(a_pad), ctx.tensor_from(b_t)
    ta = ctx.view_2d(ta_pad, k, m, (k + 8) * 4, 0)
    tb = ctx.transpose(tb_t)            # ne [k, n] with nb0 = n*4: not contiguous in K
    r = ctx.mul_mat(ta, tb)
    ctx.new_graph().build_forward_expand(r).compute(2)
    _check(r.numpy(), b_t.T.astype(np.float64) @ a_pad[:, :k].T.astype(np.float64), k)


def test_mul_mat_large_matches_numpy():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((1, 1, 300, 600)).astype(np.float32)
    b = rng.standard_normal((1, 1, 260, 600)).astype(np.float32)
    _check(_run(a, b, 2), _ref(a, b), 600)


def test_mul_mat_empty_k():
    ctx = Context(1 << 20)
    a = ctx.new_tensor_2d("f32", 0, 3)
    b = ctx.new_tensor_2d("f32", 0, 2)
    r = ctx.mul_mat(a, b)
    ctx.new_graph().build_forward_expand(r).compute(2)
    assert_bitwise(r.numpy(), np.zeros((2, 3), np.float32))


@pytest.mark.parametrize("make, err, match", [
    (lambda c: (c.new_tensor_2d("f32", 4, 3), c.new_tensor_2d("f32", 5, 3)), ValueError, "ne\\[0\\]"),
    (lambda c: (c.new_tensor_3d("f32", 4, 3, 2), c.new_tensor_3d("f32", 4, 3, 3)), ValueError, "dim 2"),
    (lambda c: (c.new_tensor_4d("f32", 4, 3, 1, 2), c.new_tensor_4d("f32", 4, 3, 1, 3)), ValueError, "dim 3"),
    (lambda c: (c.transpose(c.new_tensor_2d("f32", 4, 4)), c.new_tensor_2d("f32", 4, 3)), ValueError, "transposed"),
    (lambda c: (c.new_tensor_2d("f64", 4, 3), c.new_tensor_2d("f32", 4, 3)), TypeError, "f32 or f16"),
    (lambda c: (c.new_tensor_2d("f32", 4, 3), c.new_tensor_2d("f16", 4, 3)), TypeError, "b f32"),
    (lambda c: (c.new_tensor_2d("i32", 4, 3), c.new_tensor_2d("f32", 4, 3)), TypeError, "f32 or f16"),
    (lambda c: (np.zeros((3, 4), np.float32), c.new_tensor_2d("f32", 4, 3)), TypeError, "Tensor"),
])
def test_mul_mat_bad_input(make, err, match):
    ctx = Context(1 << 20)
    a, b = make(ctx)
    n = ctx.n_objects
    with pytest.raises(err, match=match):
        ctx.mul_mat(a, b)
    assert ctx.n_objects == n  # nothing was created
