"""Pickling (issue 16 item 5): a Tensor pickles by value into a fresh Context; a Context
refuses with a TypeError that says what to do."""
import copy
import multiprocessing
import pickle

import numpy as np
import pytest

import ggml_cy
from ggml_cy import GGMLType
from ggml_cy.core import _core

TYPES = [t for t in GGMLType if t in _core._NUMPY_DTYPE]


def _data(t, shape, seed=0):
    rng = np.random.default_rng(seed)
    dt = _core.numpy_dtype(t)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dt).kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)


def _roundtrip(t, proto=pickle.HIGHEST_PROTOCOL):
    return pickle.loads(pickle.dumps(t, protocol=proto))


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_tensor_roundtrip_every_type(t):
    ctx = ggml_cy.Context(1 << 20)
    src = ctx.tensor_from(_data(t, (2, 3, 5)), type=t, name="w.0")
    out = _roundtrip(src)
    assert out.context is not ctx and type(out.context) is ggml_cy.Context
    assert out.type == t and out.ne == src.ne and out.nb == src.nb and out.name == "w.0"
    assert out.numpy().tobytes() == src.numpy().tobytes()         # bitwise, NaN included
    out.numpy()[...] = 0                                            # a copy, not shared
    assert src.numpy().tobytes() == ctx.get_tensor("w.0").numpy().tobytes()


@pytest.mark.parametrize("proto", range(2, pickle.HIGHEST_PROTOCOL + 1))
def test_every_protocol_and_copy(proto):
    ctx = ggml_cy.Context(1 << 16)
    a = ctx.tensor_from(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(_roundtrip(a, proto).numpy(), a.numpy())
    np.testing.assert_array_equal(copy.deepcopy(a).numpy(), a.numpy())
    np.testing.assert_array_equal(copy.copy(a).numpy(), a.numpy())


def test_views_become_contiguous_copies():
    ctx = ggml_cy.Context(1 << 20)
    base = ctx.tensor_from(np.arange(48, dtype=np.float32).reshape(4, 12), name="base")
    views = {
        "transpose": base.transpose(),
        "row slice": ctx.view_2d(base, 5, 3, base.nb[1], 8),
        "backwards rows": ctx.view_2d(base, 12, 4, -base.nb[1], 3 * base.nb[1]),
        "offset 1d": ctx.view_1d(base, 7, 20),
        "permute": base.reshape(4, 3, 4).permute(2, 0, 1),
    }
    for what, v in views.items():
        out = _roundtrip(v)
        assert out.is_contiguous, what
        assert out.op_name == "NONE" and out.view_src is None, what
        np.testing.assert_array_equal(out.numpy(), v.numpy(), err_msg=what)
        assert out.name == v.name


def test_empty_and_one_element():
    ctx = ggml_cy.Context(1 << 16)
    z = ctx.new_tensor(GGMLType.F32, (0, 3))
    out = _roundtrip(z)
    assert out.ne == (0, 3, 1, 1) and out.nbytes == 0
    one = ctx.tensor_from(np.float64(2.5))
    assert _roundtrip(one).numpy().tolist() == one.numpy().tolist()


def test_context_refuses_with_advice():
    ctx = ggml_cy.Context(1 << 16)
    ctx.tensor_from(np.zeros(3, np.float32), name="x")
    for obj in (ctx, _core.Context(1024)):
        with pytest.raises(TypeError, match="Pickle its tensors instead"):
            pickle.dumps(obj)
        with pytest.raises(TypeError, match="cannot pickle"):
            copy.deepcopy(obj)
    # the advice works: a dict of the context's tensors pickles
    d = _roundtrip({t.name: t for t in ctx})
    assert d["x"].numpy().tolist() == [0.0, 0.0, 0.0]


def test_no_data_header_refused():
    ctx = ggml_cy.Context(1 << 16, no_alloc=True)
    t = ctx.new_tensor(GGMLType.F32, (4,))
    with pytest.raises(TypeError, match="without data"):
        pickle.dumps(t)


def test_stale_tensor_refused():
    ctx = ggml_cy.Context(1 << 16)
    t = ctx.tensor_from(np.zeros(3, np.float32))
    ctx.reset()
    with pytest.raises(RuntimeError, match="reset"):
        pickle.dumps(t)


def test_bad_pickles_raise_clearly():
    f = _core._unpickle_tensor
    with pytest.raises(ValueError, match="bytes"):
        f(ggml_cy.Context, int(GGMLType.F32), (4, 1, 1, 1), "x", b"\0" * 15)
    with pytest.raises(TypeError, match="Context class"):
        f(dict, int(GGMLType.F32), (1, 1, 1, 1), "x", b"\0" * 4)
    with pytest.raises(TypeError):
        f(ggml_cy.Context, int(GGMLType.F32), (1, 1, 1, 1), "x", "text")
    with pytest.raises((ValueError, TypeError)):
        f(ggml_cy.Context, 9999, (1, 1, 1, 1), "x", b"\0" * 4)
    with pytest.raises((ValueError, MemoryError)):
        f(ggml_cy.Context, int(GGMLType.F32), (1 << 40, 1, 1, 1), "x", b"\0" * 4)
    with pytest.raises(ValueError):
        f(ggml_cy.Context, int(GGMLType.F32), (-1, 1, 1, 1), "x", b"")


def test_quantized_tensor_pickles_raw_bytes():
    qtypes = [t for t in GGMLType if t not in _core._NUMPY_DTYPE]
    if not qtypes:
        pytest.skip("no block (quantized) types in this build yet")
    t = qtypes[0]
    ctx = ggml_cy.Context(1 << 20)
    try:
        q = ctx.new_tensor(t, (256, 2))
    except (TypeError, ValueError) as e:
        pytest.skip(f"{t.name} tensors cannot be created here: {e}")
    raw = np.frombuffer(np.random.default_rng(1).bytes(q.nbytes), np.uint8)
    ctypes_buf = (np.ctypeslib.as_array(
        (np.ctypeslib.ctypes.c_uint8 * q.nbytes).from_address(q.data_ptr)))
    ctypes_buf[:] = raw
    out = _roundtrip(q)
    assert out.type == t and out.ne == q.ne and out.nbytes == q.nbytes
    back = np.ctypeslib.as_array(
        (np.ctypeslib.ctypes.c_uint8 * out.nbytes).from_address(out.data_ptr))
    assert back.tobytes() == raw.tobytes()


def _worker_sum(t):
    return t.name, float(t.numpy().astype(np.float64).sum()), t.shape


def _worker_make(n):
    ctx = ggml_cy.Context(1 << 16)
    return ctx.tensor_from(np.full((n, 2), n, np.float32), name=f"made{n}")


def test_through_multiprocessing_spawn():
    ctx = ggml_cy.Context(1 << 20)
    ts = [ctx.tensor_from(np.arange(k * 4, dtype=np.float32).reshape(k, 4), name=f"t{k}")
          for k in (1, 2, 3)]
    ts.append(ts[2].transpose())
    mp = multiprocessing.get_context("spawn")
    with mp.Pool(2) as pool:
        sums = pool.map(_worker_sum, ts)
        made = pool.map(_worker_make, [1, 3])
    assert sums == [(t.name, float(t.numpy().sum()), t.shape) for t in ts]
    assert [m.name for m in made] == ["made1", "made3"]
    np.testing.assert_array_equal(made[1].numpy(), np.full((3, 2), 3, np.float32))
