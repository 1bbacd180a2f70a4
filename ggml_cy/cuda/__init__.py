"""ggml_cy.cuda: the GPU path.

    import ggml_cy, ggml_cy.cuda as gcuda
    if gcuda.is_available():
        a = gcuda.asarray(np.ones((4096, 4096), np.float32))   # host -> device
        b = gcuda.asarray(np.arange(4096, dtype=np.float32))
        c = ggml_cy.add(a, b)          # runs on the device, returns a DeviceTensor
        c.numpy()                      # device -> host
        w = gcuda.from_blocks(ggml_cy.quantize(weights, "q4_0"), "q4_0")  # quantized weights
        y = gcuda.mul_mat(w, x)        # mat-vec / tensor-core GEMM on the device

This package always imports. Without the compiled CUDA library (no nvcc at build time, or
GGML_CY_CUDA=0) or without a device, ``is_available()`` is False and every call that needs
the GPU raises RuntimeError saying why. Device errors are Python exceptions: out of memory
is MemoryError, bad shapes ValueError, an op or type the kernels lack TypeError, anything
else ``CudaError`` (a RuntimeError) carrying CUDA's own message.

Modules (imports point down this list): ``runtime`` (the library handle, device
queries), ``tensor`` (DeviceTensor: layout and views), ``ops`` (device arrays, copies,
eager operations, DLPack), ``backend`` (the CUDA backend of ggml_cy.backend's model).
"""
from ggml_cy.cuda.runtime import (is_available, device_count, device_name, device_info,
                                  synchronize, CudaError, Event, runtime_version,
                                  driver_version, current_device, set_device, empty_cache,
                                  cached_bytes, stream_handle)
from ggml_cy.cuda.runtime import require as _require  # noqa: F401  (used by the bench)
from ggml_cy.cuda.tensor import DeviceTensor
from ggml_cy.cuda.ops import (asarray, empty, zeros, from_dlpack, eager_call, scaled_op, copy,
                              astype, copyto, to_numpy, dlpack_capsule, from_blocks, dequantize,
                              mul_mat, get_rows)
from ggml_cy.cuda.backend import CudaBackend, CudaBufferType, cuda_init

__all__ = ["is_available", "device_count", "device_name", "device_info", "asarray", "empty",
           "zeros", "from_dlpack", "synchronize", "DeviceTensor", "CudaError", "Event",
           "eager_call", "scaled_op", "copy", "astype", "to_numpy", "runtime_version",
           "driver_version", "CudaBackend", "cuda_init", "empty_cache", "cached_bytes",
           "from_blocks", "dequantize", "mul_mat", "get_rows"]
