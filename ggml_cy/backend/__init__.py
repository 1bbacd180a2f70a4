"""Backends as in ggml (ggml-backend.h): a backend runs graphs on one device, a buffer type
allocates the memory it uses, a buffer holds tensors. ``base`` has the shared model and
the placement and copy functions, ``cpu`` the CPU backend; the CUDA backend lives in
``ggml_cy.cuda.backend`` (``ggml_cy.cuda.cuda_init()``)."""
from ggml_cy.backend.base import (Backend, BufferType, Buffer, alloc_ctx_tensors, tensor_set,
                                  tensor_get)
from ggml_cy.backend.cpu import CpuBackend, CpuBufferType, CpuBuffer, cpu_init

__all__ = ["Backend", "BufferType", "Buffer", "CpuBackend", "CpuBufferType", "CpuBuffer",
           "alloc_ctx_tensors", "tensor_set", "tensor_get", "cpu_init"]
