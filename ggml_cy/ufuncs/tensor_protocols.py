"""numpy ufuncs on ggml_cy.Tensor (``np.add(t, 1)``) run ggml_cy's own functions.

Installed into the core at import (``ggml_cy.core._core.set_ufunc_hook``): for a ufunc
called plainly (``method == "__call__"``) whose name ggml_cy has (``add``, ``exp``,
``less``..., see ``ggml_cy.ufuncs.__all__``), the call goes to that function with the
tensors as zero-copy numpy views (same arguments, dtype=/out=/where=..., numpy's
semantics and results); other ufuncs (``np.arctan2``) and methods (``np.add.reduce``,
``np.multiply.outer``, ``np.add.at``...) are numpy's on the same views.
"""
import sys

import numpy as np

from ggml_cy.core import _core

__all__ = ["array_ufunc"]


def _ggml_function(ufunc):
    ufuncs = sys.modules["ggml_cy.ufuncs"]    # the package (imports this module)
    name = ufunc.__name__
    if name in ufuncs.BINARY or name in ufuncs.UNARY:
        return getattr(ufuncs, name, None)
    return None


def array_ufunc(ufunc, method, inputs, kwargs):
    if method == "__call__" and isinstance(ufunc, np.ufunc):
        fn = _ggml_function(ufunc)
        if fn is not None:
            return fn(*inputs, **kwargs)
    return getattr(ufunc, method)(*inputs, **kwargs)


_core.set_ufunc_hook(array_ufunc)
