"""The CUDA path without a GPU: the module imports, says it is unavailable, refuses GPU work
with a clear RuntimeError, and (where nvcc was found at build time) the library compiled.
Also the pure-Python layout logic (dim merging, views) on a stand-in buffer."""
import glob
import os

import numpy as np
import pytest

import ggml_cy
import ggml_cy.cuda as gcuda
from ggml_cy.cuda.tensor import (BF16, F32, I8, DeviceTensor, contiguous_strides,
                                  merge_layouts, type_of)

NO_GPU = not gcuda.is_available()


def test_module_always_imports():
    assert callable(gcuda.is_available)
    assert isinstance(gcuda.is_available(), bool)
    assert hasattr(ggml_cy, "from_dlpack")


@pytest.mark.skipif(not NO_GPU, reason="a CUDA device is present")
@pytest.mark.parametrize("call", [
    lambda: gcuda.asarray(np.ones(3, np.float32)),
    lambda: gcuda.empty((2, 2)),
    lambda: gcuda.zeros(4),
    lambda: gcuda.synchronize(),
    lambda: gcuda.device_info(),
    lambda: gcuda.eager_call("add", (1, 2), {}),
], ids=["asarray", "empty", "zeros", "synchronize", "device_info", "eager_call"])
def test_gpu_requests_raise_clear_runtime_error(call):
    with pytest.raises(RuntimeError, match="ggml_cy.cuda is not available"):
        call()
    assert gcuda.device_count() == 0


def test_library_compiled_when_nvcc_was_found():
    from ggml_cy import _build_config
    if not _build_config.CUDA_BUILT:
        pytest.skip("built without nvcc (GGML_CY_CUDA=0 or no nvcc)")
    pkg = os.path.dirname(ggml_cy.__file__)
    assert glob.glob(os.path.join(pkg, "cuda", "libggml_cy_cuda.so"))
    from ggml_cy.cuda import _cuda
    n = _cuda.device_count()          # no device: 0, not an exception
    assert n >= 0
    assert "ADD" in _cuda.OPS and "CPY" in _cuda.OPS


def test_library_refuses_without_device():
    from ggml_cy import _build_config
    if not _build_config.CUDA_BUILT or not NO_GPU:
        pytest.skip("needs the built library and no device")
    from ggml_cy.cuda import _cuda
    with pytest.raises(_cuda.CudaError):
        _cuda.Buffer.alloc(16)
    # a graph of no nodes is fine, a bad node list is a ValueError, never a crash
    with pytest.raises((_cuda.CudaError, ValueError)):
        _cuda.graph_compute([0])


# ------------------------------------------------------------------ layout logic
class FakeBuffer:
    alive = True
    ptr = 1 << 20


def fake(shape, dtype=np.float32):
    t = type_of(dtype)
    isz = 2 if t == BF16 else np.dtype(dtype).itemsize
    return DeviceTensor(FakeBuffer(), 0, t, shape, contiguous_strides(shape, isz))


def test_type_of():
    assert type_of(np.float32) == F32
    assert type_of("bfloat16") == BF16
    assert type_of(np.int8) == I8
    with pytest.raises(TypeError, match="unsupported dtype"):
        type_of(np.complex64)
    with pytest.raises(TypeError):
        type_of(np.uint32)


def test_ne_nb_and_views():
    x = fake((2, 3, 4))
    assert x.ne == (4, 3, 2, 1)
    assert x.nb == (4, 16, 48, 96)
    t = x.transpose(2, 0, 1)
    assert t.shape == (4, 2, 3) and t.strides == (4, 48, 16)
    assert not t.is_contiguous()
    s = x[1, ::2, 1:]
    assert s.shape == (2, 3) and s.strides == (32, 4) and s.offset == 48 + 4
    r = x[..., None, ::-1]
    assert r.shape == (2, 3, 1, 4) and r.strides[-1] == -4 and r.offset == 12
    assert x.reshape(6, -1).shape == (6, 4)
    with pytest.raises(ValueError):
        x.reshape(5, 5)
    with pytest.raises(IndexError):
        x[2]
    with pytest.raises(IndexError):
        x[0, 0, 0, 0]
    with pytest.raises(ValueError):
        x.transpose(0, 0, 1)


def test_merge_layouts_collapses_and_keeps_broadcast_pattern():
    shape = (32, 64, 56, 56)
    out = (shape, contiguous_strides(shape, 4))
    b = ((1, 64, 1, 1), (256, 4, 4, 4))
    merged, descs = merge_layouts(shape, [out, b])
    assert merged == [32, 64, 3136]
    assert descs[0] == ((3136, 64, 32, 1), (4, 12544, 802816, 25690112))
    assert descs[1][0] == (1, 64, 1, 1)
    # a fully contiguous binary op becomes 1-D
    merged, descs = merge_layouts((8, 512, 4096), [((8, 512, 4096), (8388608, 16384, 4))] * 3)
    assert merged == [8 * 512 * 4096]
    # 7 dims that cannot merge are refused with a ValueError
    shp = (2,) * 7
    perm = tuple(contiguous_strides(shp, 4)[i] for i in (1, 0, 3, 2, 5, 4, 6))
    with pytest.raises(ValueError, match="at most 4"):
        merge_layouts(shp, [(shp, contiguous_strides(shp, 4)), (shp, perm)])
