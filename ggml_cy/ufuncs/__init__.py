"""ggml_cy's numpy-style functions: drop-ins for numpy's ufuncs (same names, arguments,
promotion, broadcasting, out=, errors and floating-point warnings), computed by ggml_cy's
multithreaded CPU kernels, plus ggml's activations and conversions.

Every function takes numpy arrays of any layout and Python/numpy scalars; anything the
kernels do not take (complex, object, long double, subclasses, where=, ...) is computed by
numpy itself, so every call gives numpy's answer. Extra keyword: ``n_threads=`` (this call
only); see ``set_num_threads``, ``get_num_threads`` and the ``threads`` context manager.

The functions and their groups come from the op table (ggml_cy/core/optable.py): each
row's ``eager`` names (the first defines the function, the others are numpy's aliases,
the same function object as in numpy).
"""
from ggml_cy.core import optable as _optable
from ggml_cy.ufuncs import _eager
from ggml_cy.ufuncs._eager import copyto, ascontiguousarray, astype, bfloat16
from ggml_cy.cpu.threads import set_num_threads, get_num_threads, threads


def _group(rows):
    return tuple(name for o in rows for name in o.eager)


_EAGER_ROWS = [o for o in _optable.OPS if o.eager]
BINARY = _group(o for o in _EAGER_ROWS if o.style == "ufunc" and o.kind == "binary")
UNARY = _group(o for o in _EAGER_ROWS if o.style == "ufunc" and o.kind == "unary")
ACTIVATIONS = _group(o for o in _EAGER_ROWS if o.style in ("activation", "custom"))
CONVERSIONS = ("copyto", "ascontiguousarray", "astype", "bfloat16")
THREADS = ("set_num_threads", "get_num_threads", "threads")

for _o in _EAGER_ROWS:
    for _name in _o.eager:
        globals()[_name] = getattr(_eager, _o.eager[0])
del _o, _name

__all__ = list(BINARY + UNARY + ACTIVATIONS + CONVERSIONS + THREADS)

# np.add(tensor, x) and the other numpy ufuncs on ggml_cy.Tensor use these functions (eco)
from ggml_cy.ufuncs import tensor_protocols as _tensor_protocols  # noqa: E402,F401

# --- issue 13: attention on numpy arrays (ops3)
from ggml_cy.ufuncs.attention import flash_attn  # noqa: E402
__all__.append("flash_attn")
# --- end issue 13 (ops3)
