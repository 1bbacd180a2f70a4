"""The backend model: CPU backend, alloc_ctx_tensors on a no_alloc context, tensor_set /
tensor_get, supports_op, graph_compute, and bad input."""
import gc

import numpy as np
import pytest

import ggml_cy
from ggml_cy import backend as B
from ggml_cy.graph.context import Context

from _graph_helpers import assert_bitwise


def _model():
    ctx = Context(1 << 20, no_alloc=True)
    a = ctx.new_tensor_2d("f32", 2, 4)
    b = ctx.new_tensor_2d("f32", 2, 3)
    a.name, b.name = "a", "b"
    return ctx, a, b


def test_simple_backend_flow():
    ctx, a, b = _model()
    backend = B.cpu_init(2)
    assert backend.name == "CPU" and isinstance(backend, B.Backend)
    r = ctx.mul_mat(a, b)
    v = ctx.view_1d(a, 4, 8)
    buf = B.alloc_ctx_tensors(ctx, backend)
    assert isinstance(buf, B.CpuBuffer) and buf.size >= 3 * 64
    assert a.has_data and r.has_data and v.data_ptr == a.data_ptr + 8
    A = np.array([[2, 8], [5, 1], [4, 2], [8, 6]], np.float32)
    Bm = np.array([[10, 5], [9, 9], [5, 4]], np.float32)
    B.tensor_set(a, A)
    B.tensor_set(b, Bm)
    g = Context(1 << 20).new_graph().build_forward_expand(r)
    assert backend.supports_op(r)
    backend.graph_compute(g)
    assert_bitwise(B.tensor_get(r), Bm @ A.T)
    assert_bitwise(B.tensor_get(v), A.reshape(-1)[2:6])
    assert_bitwise(r.numpy(), Bm @ A.T)          # host buffer: numpy() is zero-copy
    # byte ranges
    assert B.tensor_get(a, 4, 4).view(np.float32)[0] == 8
    B.tensor_set(a, np.float32(7).tobytes(), offset=4)
    assert B.tensor_get(a)[0, 1] == 7
    # everything placed: a second call has nothing to do
    assert B.alloc_ctx_tensors(ctx, backend) is None


def test_buffer_outlives_its_user_references():
    ctx, a, b = _model()
    B.alloc_ctx_tensors(ctx, B.CpuBackend())
    B.tensor_set(a, np.arange(8, dtype=np.float32).reshape(4, 2))
    arr = a.numpy()
    del ctx, b
    gc.collect()
    assert_bitwise(arr, np.arange(8, dtype=np.float32).reshape(4, 2))
    assert_bitwise(B.tensor_get(a), np.arange(8, dtype=np.float32).reshape(4, 2))


def test_tensor_get_non_contiguous():
    ctx, a, b = _model()
    t = ctx.transpose(a)
    B.alloc_ctx_tensors(ctx, B.CpuBackend())
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    B.tensor_set(a, x)
    assert_bitwise(B.tensor_get(t), x.T)


def test_bad_input():
    ctx, a, b = _model()
    backend = B.CpuBackend()
    with pytest.raises(TypeError):
        B.alloc_ctx_tensors("ctx", backend)
    with pytest.raises(TypeError):
        B.alloc_ctx_tensors(ctx, "cpu")
    with pytest.raises(ValueError, match="no_alloc"):
        B.alloc_ctx_tensors(Context(1 << 16), backend)
    with pytest.raises(ValueError, match="no data"):
        B.tensor_set(a, np.zeros((4, 2), np.float32))
    with pytest.raises(ValueError, match="no data"):
        B.tensor_get(a)
    B.alloc_ctx_tensors(ctx, backend)
    with pytest.raises(TypeError):
        B.tensor_set("a", b"")
    with pytest.raises(TypeError, match="dtype"):
        B.tensor_set(a, np.zeros((4, 2), np.float64))
    with pytest.raises(TypeError):
        B.tensor_set(a, 3.0)
    with pytest.raises(ValueError, match="outside"):
        B.tensor_set(a, np.zeros(9, np.float32))
    with pytest.raises(ValueError, match="outside"):
        B.tensor_set(a, b"1234", offset=30)
    with pytest.raises(ValueError):
        B.tensor_set(a, b"1234", offset=-4)
    with pytest.raises(ValueError, match="outside"):
        B.tensor_get(a, 0, 33)
    with pytest.raises(ValueError):
        B.tensor_get(a, -1, 4)
    with pytest.raises(ValueError):
        backend.set_n_threads(0)
    with pytest.raises(ValueError):
        B.CpuBufferType().alloc_buffer(-1)
    assert_bitwise(B.tensor_get(a), np.zeros((4, 2), np.float32))


def test_supports_op():
    ctx = Context(1 << 16)
    backend = B.CpuBackend()
    a = ctx.new_tensor_1d("f32", 4)
    assert backend.supports_op(ctx.exp(a))
    assert backend.supports_op(ctx.mul_mat(ctx.new_tensor_2d("f16", 4, 2), ctx.new_tensor_2d("f32", 4, 3)))
    assert ggml_cy.backend.cpu_init().get_default_buffer_type().name == "CPU"
