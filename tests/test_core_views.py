"""Views: shared memory, base resolution, permute/transpose/reshape against numpy."""
import gc

import numpy as np
import pytest
from hypothesis import given, strategies as st

from ggml_cy import Context, GGMLType
from ggml_cy.core import _core

def _op_numbers_from_header():
    """Reads the view ops' numbers from csrc/ops_defs.h (the one op enum)."""
    import pathlib
    import re
    text = (pathlib.Path(_core.__file__).parent / "csrc" / "ops_defs.h").read_text()
    body = text[text.index("typedef enum {"):text.index("} ggml_op;")]
    names = re.findall(r"^\s*(GGML_OP_\w+)", body, re.M)
    return {n: i for i, n in enumerate(names)}


OPS = _op_numbers_from_header()


def test_view_op_numbers_match_header():
    ctx = Context(1 << 14)
    a = ctx.new_tensor("f32", (4, 3))
    assert a.view_1d(2, 0).op == OPS["GGML_OP_VIEW"]
    assert a.reshape(12).op == OPS["GGML_OP_RESHAPE"]
    assert a.permute(1, 0).op == OPS["GGML_OP_PERMUTE"]
    assert a.transpose().op == OPS["GGML_OP_TRANSPOSE"]
    assert ctx.view_tensor(a).op == 0
    assert a.view_1d(2, 0).op_name == "VIEW"


def numpy4(ctx, shape_np, dtype=np.float32, seed=0):
    """A context tensor with random data of numpy shape `shape_np` (4-D), and a copy."""
    rng = np.random.default_rng(seed)
    src = rng.standard_normal(shape_np).astype(dtype)
    return ctx.tensor_from(src), src


def permute_numpy(arr4, axes):
    """numpy equivalent of ggml_permute on a 4-D array in numpy order."""
    inv = [0] * 4
    for i, a in enumerate(axes):
        inv[a] = i
    return arr4.transpose([3 - inv[3 - k] for k in range(4)])


def test_views_share_memory_and_resolve_to_base():
    ctx = Context(1 << 16)
    a, src = numpy4(ctx, (2, 3, 4, 5))
    a.name = "a"
    v1 = a.view_2d(5, 6, a.nb[1], 2 * a.nb[1])          # rows 2..7 of the 24 rows
    v2 = v1.view_1d(3, 4)                              # a view of a view
    p = v2.reshape(3).permute(0, 1, 2, 3)
    for v in (v1, v2, p):
        assert v.view_src == a                         # never a view
        assert np.shares_memory(v.numpy(), a.numpy())
    assert v1.view_offs == 2 * a.nb[1]
    assert v2.view_offs == 2 * a.nb[1] + 4             # absolute offsets
    assert v2.src == (v1,) and v1.src == (a,)
    assert v2.data_ptr == a.data_ptr + v2.view_offs
    flat = src.reshape(-1)
    np.testing.assert_array_equal(v2.numpy(), flat[11:14])
    v2.numpy()[:] = 100
    assert (a.numpy(ndim=4).reshape(-1)[11:14] == 100).all()
    assert v1.name == "a (view)" and v2.name == "a (view) (view)"
    assert int.from_bytes(np.array(v2.op_params[:2], np.int32).tobytes(), "little") == 4


@pytest.mark.parametrize("type_", [t for t in GGMLType if not t.is_quantized], ids=str)
def test_view_nd_against_as_strided(type_):
    rng = np.random.default_rng(int(type_))
    ctx = Context(1 << 16)
    dt = type_.numpy_dtype
    a = ctx.tensor_from((rng.standard_normal((3, 4, 5, 6)) * 10).astype(dt), type=type_)
    base = a.numpy(ndim=4)
    es = type_.size
    raw = base.reshape(-1).view(np.uint8)
    for _ in range(25):
        n = int(rng.integers(1, 5))
        ne = [int(x) for x in rng.integers(1, 4, size=n)]
        nb = [es]
        for i in range(1, n):
            nb.append(nb[-1] * ne[i - 1] + es * int(rng.integers(0, 3)))  # padded rows
        extent = es + sum((ne[i] - 1) * nb[i] for i in range(n))
        offset = int(rng.integers(0, a.nbytes - extent + 1))
        args = ne + nb[1:] + [offset]
        v = getattr(a, f"view_{n}d")(*args)
        v2 = getattr(ctx, f"view_{n}d")(a, *args)
        assert v.ne[:n] == tuple(ne) and v.nb[:n] == tuple(nb) and v2.ne == v.ne
        window = raw[offset:]
        window = window[:len(window) // es * es].view(dt)   # elements from byte `offset`
        expected = np.lib.stride_tricks.as_strided(
            window, shape=tuple(reversed(ne)), strides=tuple(reversed(nb)))
        np.testing.assert_array_equal(v.numpy(ndim=n), expected)


def test_view_extent_errors():
    ctx = Context(1 << 14)
    a = ctx.new_tensor("f32", (4, 3), name="a")          # 48 bytes
    a.view_1d(12, 0)
    a.view_1d(1, 44)
    a.view_1d(0, 48)                                   # empty view at the end
    with pytest.raises(ValueError, match=r"outside its parent ne=\[4, 3, 1, 1\]"):
        a.view_1d(13, 0)
    with pytest.raises(ValueError, match="outside"):
        a.view_1d(1, 45)
    with pytest.raises(ValueError, match="outside"):
        a.view_1d(1, -4)
    with pytest.raises(ValueError, match="outside"):
        a.view_2d(4, 3, 20, 0)                         # padded rows run past the end
    with pytest.raises(ValueError, match="outside"):
        a.view_1d(0, 52)
    t = a.transpose()                                  # a view's extent is its parent's
    t.view_2d(3, 4, 4, 0)
    with pytest.raises(ValueError, match="outside"):
        t.view_1d(2, 46)
    sub = a.view_1d(4, 16)                             # checked against the direct parent
    with pytest.raises(ValueError, match="outside"):
        sub.view_1d(5, 0)
    with pytest.raises(ValueError, match="outside"):
        sub.view_1d(1, -4)


@given(st.lists(st.integers(1, 5), min_size=4, max_size=4), st.permutations(range(4)),
       st.sampled_from([np.float32, np.float16, np.int8, np.float64]))
def test_permute_random_against_numpy(shape, axes, dt):
    ctx = Context(1 << 16)
    a, src = numpy4(ctx, tuple(shape), dt)
    p = a.permute(*axes)
    assert p.op_params[:4] == tuple(axes)
    for i in range(4):
        assert p.ne[axes[i]] == a.ne[i] and p.nb[axes[i]] == a.nb[i]
    np.testing.assert_array_equal(p.numpy(ndim=4), permute_numpy(src, axes))
    pp = ctx.permute(a, list(axes))                    # the ggml-style spelling
    assert pp.ne == p.ne and pp.nb == p.nb
    # permuting back gives the original layout
    inv = [0] * 4
    for i, x in enumerate(axes):
        inv[x] = i
    back = p.permute(*inv)
    assert back.ne == a.ne and back.nb == a.nb and back.view_src == a


@given(st.lists(st.integers(1, 6), min_size=2, max_size=4))
def test_transpose_random_against_numpy(shape):
    ctx = Context(1 << 16)
    a, src = numpy4(ctx, tuple([1] * (4 - len(shape)) + shape))
    t = a.transpose()
    T = ctx.transpose(a)
    assert T.ne == t.ne and t.ne[0] == a.ne[1] and t.ne[1] == a.ne[0]
    np.testing.assert_array_equal(t.numpy(ndim=4), src.swapaxes(2, 3))
    np.testing.assert_array_equal(a.transpose().transpose().numpy(ndim=4), src)


def _factor(n, parts, rng):
    dims = [1] * parts
    for p in range(2, n + 1):
        while n % p == 0:
            dims[int(rng.integers(0, parts))] *= p
            n //= p
    return dims


@given(st.lists(st.integers(1, 6), min_size=1, max_size=4), st.integers(1, 4),
       st.integers(0, 2 ** 31))
def test_reshape_random_against_numpy(shape, parts, seed):
    rng = np.random.default_rng(seed)
    ctx = Context(1 << 16)
    a, src = numpy4(ctx, tuple([1] * (4 - len(shape)) + shape), seed=seed % 100)
    ne = _factor(int(np.prod(shape)), parts, rng)
    r = a.reshape(ne)
    assert r.ne[:parts] == tuple(ne) and r.is_contiguous and r.view_src == a
    np.testing.assert_array_equal(r.numpy(ndim=4), src.reshape(tuple(reversed(ne + [1] * (4 - parts)))))
    r2 = getattr(a, f"reshape_{parts}d")(*ne)
    r3 = getattr(ctx, f"reshape_{parts}d")(a, *ne)
    r4 = ctx.reshape(a, r)                             # ggml_reshape(ctx, a, b): b's ne
    assert r2.ne == r3.ne == r4.ne == r.ne
    assert np.shares_memory(r.numpy(), a.numpy())


def test_reshape_errors_name_shapes():
    ctx = Context(1 << 14)
    a = ctx.new_tensor("f32", (4, 3))
    with pytest.raises(ValueError, match=r"contiguous.*ne=\[3, 4, 1, 1\]"):
        a.transpose().reshape(12)
    with pytest.raises(ValueError, match=r"ne=\[4, 3, 1, 1\] \(12 elements\) into "
                                         r"ne=\[5, 2, 1, 1\] \(10 elements\)"):
        a.reshape(5, 2)
    v = a.view_2d(2, 3, 16, 0)                         # strided rows: not contiguous
    with pytest.raises(ValueError, match="contiguous"):
        v.reshape(6)
    a.view_2d(4, 2, 16, 16).reshape(8)                 # contiguous sub-block: fine


def test_permute_errors():
    ctx = Context(1 << 14)
    a = ctx.new_tensor("f32", (4, 3))
    with pytest.raises(ValueError, match="repeat"):
        a.permute(0, 0, 2, 3)
    with pytest.raises(ValueError, match="repeat"):
        a.permute(1, 1)
    with pytest.raises(ValueError, match="out of range"):
        a.permute(0, 1, 2, 4)
    with pytest.raises(ValueError, match="out of range"):
        a.permute(-1, 1, 2, 3)
    with pytest.raises(ValueError, match="1 to 4"):
        a.permute(0, 1, 2, 3, 4)
    with pytest.raises(ValueError, match="1 to 4"):
        a.permute()
    with pytest.raises(TypeError):
        a.permute(0.0, 1, 2, 3)
    with pytest.raises(TypeError):
        a.permute(None)
    with pytest.raises(ValueError, match="out of range"):
        a.permute(2 ** 40, 1, 2, 3)


def test_views_of_no_alloc_tensors():
    ctx = Context(1 << 14, no_alloc=True)
    a = ctx.new_tensor("f32", (4, 3, 2))
    for v in (a.view_2d(4, 3, 16, 16), a.transpose(), a.permute(2, 0, 1, 3),
              a.reshape(24), ctx.view_tensor(a)):
        assert v.data_ptr == 0 and v.view_src == a
        with pytest.raises(RuntimeError, match="has no data"):
            v.numpy()
    assert a.view_1d(3, 8).view_offs == 8
    with pytest.raises(ValueError, match="outside"):
        a.view_1d(25, 0)


def test_cross_context_view_keeps_source_alive():
    c1 = Context(1 << 12)
    a = c1.tensor_from(np.arange(8, dtype=np.float32))
    c2 = Context(1 << 12)
    v = c2.view_1d(a, 4, 8)
    assert v.context is c2 and v.view_src == a
    c3 = Context(1 << 12)
    w = c3.view_1d(v, 2, 4)                            # two contexts away from its base
    assert w.view_src == a and w.src == (v,) and w.view_offs == 12
    del a, c1, v, c2
    gc.collect()
    np.testing.assert_array_equal(w.numpy(), [3, 4])
    assert w.view_src.numpy().tolist() == list(range(8))


def test_view_tensor():
    ctx = Context(1 << 14)
    a, src = numpy4(ctx, (1, 2, 3, 4))
    t = a.transpose()
    v = ctx.view_tensor(t)
    assert v.ne == t.ne and v.nb == t.nb and v.view_src == a and v.src == (t,)
    np.testing.assert_array_equal(v.numpy(), t.numpy())


def test_cross_context_source_reset_makes_navigation_stale():
    src_ctx = Context(1 << 12)
    a = src_ctx.tensor_from(np.arange(8, dtype=np.float32), name="a")
    other = Context(1 << 12)
    v = other.view_1d(a, 4, 0)
    arr = v.numpy()
    src_ctx.reset()
    src_ctx.tensor_from(np.full(200, 7.0, np.float32))   # overwrites a's old header
    with pytest.raises(RuntimeError, match="reset"):
        v.view_src.ne
    with pytest.raises(RuntimeError, match="reset"):
        v.src[0].numpy()
    # the view's header lives in `other`, but its data was a's: like a same-context view
    # after reset, every use raises (issue 17: it used to read/write the reused memory)
    with pytest.raises(RuntimeError, match="reset"):
        v.ne
    with pytest.raises(RuntimeError, match="reset"):
        other.view_1d(v, 2, 0)
    assert arr.tolist() == [7.0] * 4                   # an earlier array's memory stays valid
    other.reset()                                      # dropping the views forgets that
    b = src_ctx.new_tensor_1d("f32", 4)
    assert other.view_1d(b, 2, 0).view_src == b


def test_array_of_cross_context_view_holds_the_source_pool():
    src_ctx = Context(1 << 12)
    ref = __import__("weakref").ref(src_ctx)
    a = src_ctx.tensor_from(np.arange(8, dtype=np.float32))
    other = Context(1 << 12)
    arr = other.view_1d(a, 4, 16).numpy()
    other.reset()                                      # forgets src_ctx
    del a, src_ctx
    gc.collect()
    assert ref() is not None                           # the array still holds it
    assert arr.tolist() == [4, 5, 6, 7]
    del arr
    gc.collect()
    assert ref() is None
