"""numpy's protocols on CPU tensors: the buffer protocol, DLPack (numpy, torch) and
__array_ufunc__ (np.add(t, x) runs ggml_cy's add)."""
import gc

import numpy as np
import pytest

import ggml_cy
from ggml_cy import ufuncs


def _tensor(shape=(3, 4), dtype=np.float32):
    ctx = ggml_cy.Context(1 << 20)
    t = ctx.tensor_from(np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape))
    return ctx, t


@pytest.mark.parametrize("dtype,fmt", [(np.float32, "f"), (np.float64, "d"),
                                       (np.float16, "e"), (np.int8, "b"), (np.int16, "h"),
                                       (np.int32, "i"), (np.int64, "q")])
def test_buffer_protocol_zero_copy(dtype, fmt):
    ctx, t = _tensor(dtype=dtype)
    m = memoryview(t)
    assert m.format.lstrip("=<@") in (fmt, {"q": "l", "i": "i"}.get(fmt, fmt))
    assert m.shape == (3, 4) and m.strides == t.strides and not m.readonly
    assert m.itemsize == np.dtype(dtype).itemsize
    a = np.asarray(m)
    a[1, 2] = 42
    assert t.numpy()[1, 2] == 42                         # same memory
    flat = np.frombuffer(t, dtype=dtype)
    assert flat.ctypes.data == t.data_ptr and flat.size == 12
    m.release()


def test_buffer_protocol_strided_views():
    ctx, t = _tensor((3, 4))
    v = t.transpose()                                    # non-contiguous view
    m = memoryview(v)
    assert m.shape == (4, 3) and m.strides == v.strides
    np.testing.assert_array_equal(np.asarray(m), t.numpy().T)
    assert not m.c_contiguous
    with pytest.raises((BufferError, ValueError)):
        np.frombuffer(v, dtype=np.float32)               # asks for contiguous memory
    col = ctx.view_2d(t, 2, 3, t.nb[1], 4)
    np.testing.assert_array_equal(np.asarray(memoryview(col)), t.numpy()[:, 1:3])


def test_buffer_keeps_memory_alive_and_refuses_stale():
    ctx, t = _tensor()
    m = memoryview(t)
    del t, ctx
    gc.collect()
    assert np.asarray(m).sum() == 66
    ctx2 = ggml_cy.Context(1 << 16)
    t2 = ctx2.new_tensor_1d(ggml_cy.GGMLType.F32, 4)
    ctx2.reset()
    with pytest.raises(RuntimeError):
        memoryview(t2)
    ctx3 = ggml_cy.Context(1 << 16, no_alloc=True)
    h = ctx3.new_tensor_1d(ggml_cy.GGMLType.F32, 4)
    with pytest.raises(RuntimeError, match="no data"):
        memoryview(h)
    with pytest.raises(RuntimeError):
        h.__dlpack__()


def test_dlpack_numpy_round_trip():
    ctx, t = _tensor()
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    assert a.ctypes.data == t.data_ptr
    a[0, 0] = -1
    assert t.numpy()[0, 0] == -1
    b = ggml_cy.from_dlpack(t)                           # CPU memory -> a numpy view
    assert isinstance(b, np.ndarray) and b.ctypes.data == t.data_ptr
    with pytest.raises(BufferError):
        t.__dlpack__(stream=1)
    with pytest.raises(BufferError):
        t.__dlpack__(copy=True)
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))


def test_dlpack_torch_shares_memory_both_ways():
    torch = pytest.importorskip("torch")
    ctx, t = _tensor()
    x = torch.from_dlpack(t)
    assert x.data_ptr() == t.data_ptr and tuple(x.shape) == t.shape
    x[1, 1] = 100.0
    assert t.numpy()[1, 1] == 100.0
    t.numpy()[2, 3] = -7.0
    assert float(x[2, 3]) == -7.0
    v = t.transpose()
    xv = torch.from_dlpack(v)
    assert xv.data_ptr() == t.data_ptr and not xv.is_contiguous()
    np.testing.assert_array_equal(xv.numpy(), t.numpy().T)
    del t, v, ctx
    gc.collect()
    assert float(x.sum()) == float(x.sum())              # still valid memory
    # and the other way: torch's CPU memory into ggml_cy without a copy
    y = torch.arange(6, dtype=torch.float32)
    g = ggml_cy.from_dlpack(y)
    assert g.ctypes.data == y.data_ptr()
    ggml_cy.multiply(g, 2, out=g)                        # computed in place by ggml_cy
    assert y.tolist() == [0, 2, 4, 6, 8, 10]


def test_array_ufunc_uses_ggml_cy(monkeypatch):
    ctx, t = _tensor()
    calls = []
    real_add = ufuncs.add

    def spy(*a, **k):
        calls.append(a)
        return real_add(*a, **k)
    monkeypatch.setattr(ufuncs, "add", spy)
    r = np.add(t, 1)
    assert calls and type(r) is np.ndarray
    np.testing.assert_array_equal(r, t.numpy() + 1)
    r2 = np.add(2.5, t)
    np.testing.assert_array_equal(r2, 2.5 + t.numpy())
    assert len(calls) == 2


def test_array_ufunc_results_and_out():
    ctx, t = _tensor()
    base = t.numpy().copy()
    np.testing.assert_array_equal(np.exp(t), ggml_cy.exp(base))
    assert np.less(t, 5).dtype == np.bool_
    out_t = ctx.new_tensor_2d(ggml_cy.GGMLType.F32, 4, 3)
    assert np.multiply(t, 2, out=out_t) is out_t
    np.testing.assert_array_equal(out_t.numpy(), base * 2)
    assert np.add(t, t, out=(out_t,)) is out_t
    np.testing.assert_array_equal(np.add.reduce(t, axis=0), base.sum(axis=0))
    np.testing.assert_array_equal(np.arctan2(t, base + 1), np.arctan2(base, base + 1))
    np.testing.assert_array_equal(np.add(t, np.ones(4, np.float64)),
                                  base + np.ones(4))            # numpy's promotion
    with pytest.raises(ValueError):
        np.add(t, np.ones(5))                                   # numpy's error
    assert not hasattr(t, "__array_namespace__")               # README: not array API


def test_array_ufunc_stale_tensor():
    ctx, t = _tensor()
    ctx.reset()
    with pytest.raises(RuntimeError):
        np.add(t, 1)
