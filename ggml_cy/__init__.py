"""ggml_cy: the core of ggml as a Cython-compiled Python package.

Three faces:
  * numpy-style elementwise functions (``ggml_cy.add(a, b)``), multithreaded and exact;
  * ggml's programming model: ``Context`` (a memory arena), ``Tensor`` (ne/nb strides,
    views), a compute graph run on N threads;
  * a GPU path through an nvcc-built CUDA library (``ggml_cy.cuda``).
"""
import os as _os

# libgomp spins up to 300k iterations (milliseconds) waiting for the next parallel region
# when threads == cores. On a shared machine a spinning worker then steals the core the
# Python thread needs, and a 2-thread call at 1e5-1e6 elements was seen taking 5-7 ms
# instead of ~20 us. A short spin keeps back-to-back calls fast and bounds the damage.
# Must be set before the OpenMP runtime loads (with the first extension module below);
# the user's own OMP_WAIT_POLICY / GOMP_SPINCOUNT always win.
if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ["GOMP_SPINCOUNT"] = "10000"

from ggml_cy._version import __version__

try:
    import ggml_cy._core  # noqa: F401  (compiled; absent in an unbuilt source tree)
except ModuleNotFoundError as _exc:
    if _exc.name != "ggml_cy._core":
        raise
    raise ImportError(
        "ggml_cy's compiled modules are missing: this is the source tree "
        f"({_os.path.dirname(__file__)}). Run from another directory after `pip install .`, "
        "or build in place with `tools/build.sh`.") from None

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

# numpy-style functions (ggml_cy.ufuncs): add, multiply, ..., threads
from ggml_cy.ufuncs import *  # noqa: E402,F401,F403
from ggml_cy.ufuncs import __all__ as _ufuncs_all  # noqa: E402
__all__ += _ufuncs_all

# ggml's graph API: Context with op builders, graphs, backends, fused expressions
from ggml_cy.context import Context  # noqa: E402,F811  (the core Context plus builders)
from ggml_cy._graph import Graph  # noqa: E402
from ggml_cy._compute import Plan  # noqa: E402
from ggml_cy.expr import evaluate  # noqa: E402
from ggml_cy import backend  # noqa: E402
__all__ += ["Graph", "Plan", "evaluate", "backend"]
