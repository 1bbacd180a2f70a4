"""ggml_cy: the core of ggml as a Cython-compiled Python package.

Three faces:
  * numpy-style elementwise functions (``ggml_cy.add(a, b)``), multithreaded and exact;
  * ggml's programming model: ``Context`` (a memory arena), ``Tensor`` (ne/nb strides,
    views), a compute graph run on N threads;
  * a GPU path through an nvcc-built CUDA library (``ggml_cy.cuda``).

The package is layered (docs/architecture.md); this file only re-exports:
  core/     arena, tensors, types, the op table      cpu/      kernels, executor, threads
  graph/    builders, compute graph                  backend/  ggml-backend's model, CPU
  cuda/     the GPU backend and device tensors       ufuncs/   numpy-style functions
  expr/     evaluate()                               gguf/     GGUF files
  cli/      ggml-cy, the demo
"""
import os as _os

from ggml_cy._version import __version__
from ggml_cy.core import _startup


def _load_core():
    try:
        import ggml_cy.core._core  # noqa: F401  (compiled; absent in an unbuilt source tree)
    except ModuleNotFoundError as exc:
        if exc.name != "ggml_cy.core._core":
            raise
        raise ImportError(
            "ggml_cy's compiled modules are missing: this is the source tree "
            f"({_os.path.dirname(__file__)}). Run from another directory after `pip install .`, "
            "or build in place with `tools/build.sh`.") from None


try:
    from ggml_cy import _build_config
except ImportError:
    _build_config = None
# Code built for instruction sets this CPU lacks would die of SIGILL: refuse it here.
_startup.check_build(getattr(_build_config, "SIMD", []))
# The first compiled module loads the OpenMP runtime: its spin-wait setting is passed for
# that moment only, os.environ is left as it was (ggml_cy/core/_startup.py says why).
_startup.import_with_openmp_settings(_load_core, getattr(_build_config, "OPENMP", True))
# The hot kernel modules come in per-CPU-level builds: load the best this CPU runs
# (GGML_CY_CPU_FEATURES caps it) before any other module imports them.
_startup.install_dispatch(_os.path.dirname(__file__), _build_config)

# core: the arena and tensors
from ggml_cy.core._core import (  # noqa: E402
    Tensor,
    ContextMemoryError,
    GGMLType,
    tensor_overhead,
    object_overhead,
    float32_to_bfloat16,
    bfloat16_to_float32,
    blck_size,
    type_size,
    row_size,
)
# numpy-style functions: add, multiply, ..., threads
from ggml_cy.ufuncs import *  # noqa: E402,F401,F403
from ggml_cy.ufuncs import __all__ as _ufuncs_all  # noqa: E402
# graph API: the Context with op builders, graphs, plans, backends
from ggml_cy.graph.context import Context  # noqa: E402
from ggml_cy.graph._graph import Graph  # noqa: E402
from ggml_cy.cpu._compute import Plan  # noqa: E402
from ggml_cy import backend  # noqa: E402
# fused expressions
from ggml_cy.expr import evaluate  # noqa: E402
# quantized types: quantize (float arrays -> ggml's blocks) and dequantize
from ggml_cy.quants import quantize, dequantize  # noqa: E402
# quantized weights: mul_mat (b @ dequantize(a).T, ggml's integer dots) and get_rows
from ggml_cy.quants import mul_mat, get_rows  # noqa: E402
# --- issue 13: rope / argsort / top_k / argmax, numpy-style (ops2)
from ggml_cy.ufuncs.ops_rope_sort import rope, argsort, top_k, argmax  # noqa: E402
# --- end issue 13 (ops2)
# build and CPU report
from ggml_cy._config import show_config  # noqa: E402
# --- issue 13: norms / softmax / GLU as numpy-style functions (ops1)
from ggml_cy.ufuncs.nn import (  # noqa: E402
    rms_norm, layer_norm, group_norm, softmax, swiglu, geglu, reglu, geglu_erf, geglu_quick)

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
    "blck_size", "type_size", "row_size", "dequantize", "mul_mat", "get_rows",
    "from_dlpack",
    *_ufuncs_all,
    "Graph", "Plan", "evaluate", "backend",
    "quantize", "show_config",
    "rope", "argsort", "top_k", "argmax",  # issue 13 (ops2)
    # --- issue 13 (ops1)
    "rms_norm", "layer_norm", "group_norm", "softmax",
    "swiglu", "geglu", "reglu", "geglu_erf", "geglu_quick",
]


def __getattr__(name):
    """Lazy re-exports, so that ``import ggml_cy`` does not load the CUDA runtime:
    ``from_dlpack`` (CUDA memory -> ggml_cy.cuda.DeviceTensor, host memory -> numpy)."""
    if name == "from_dlpack":
        from ggml_cy.cuda.ops import from_dlpack
        return from_dlpack
    raise AttributeError(f"module 'ggml_cy' has no attribute {name!r}")
