"""ggml_cy: the core of ggml as a Cython-compiled Python package.

Three faces:
  * numpy-style elementwise functions (``ggml_cy.add(a, b)``), multithreaded and exact;
  * ggml's programming model: ``Context`` (a memory arena), ``Tensor`` (ne/nb strides,
    views), a compute graph run on N threads;
  * a GPU path through an nvcc-built CUDA library (``ggml_cy.cuda``).
"""
from ggml_cy._version import __version__
from ggml_cy._core import (
    Context,
    Tensor,
    ContextMemoryError,
    GGMLType,
    tensor_overhead,
    object_overhead,
    float32_to_bfloat16,
    bfloat16_to_float32,
)

__all__ = [
    "__version__",
    "Context",
    "Tensor",
    "ContextMemoryError",
    "GGMLType",
    "tensor_overhead",
    "object_overhead",
    "float32_to_bfloat16",
    "bfloat16_to_float32",
]


# --- GPU (CUDA) section: DLPack import lives in ggml_cy.cuda (always importable) ---
def from_dlpack(x):
    """Wraps a DLPack producer without copying: CUDA memory (torch, cupy, ...) becomes a
    ggml_cy.cuda.DeviceTensor, host memory a numpy array."""
    from ggml_cy import cuda
    return cuda.from_dlpack(x)


__all__.append("from_dlpack")
