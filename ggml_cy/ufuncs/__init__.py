"""ggml_cy's numpy-style functions: drop-ins for numpy's ufuncs (same names, arguments,
promotion, broadcasting, out=, errors and floating-point warnings), computed by ggml_cy's
multithreaded CPU kernels, plus ggml's activations and conversions.

Every function takes numpy arrays of any layout and Python/numpy scalars; anything the
kernels do not take (complex, object, long double, subclasses, where=, ...) is computed by
numpy itself, so every call gives numpy's answer. Extra keyword: ``n_threads=`` (this call
only); see ``set_num_threads``, ``get_num_threads`` and the ``threads`` context manager.
"""
from ggml_cy.ufuncs._eager import (
    add, subtract, multiply, divide, floor_divide, maximum, minimum, fmax, fmin, power,
    remainder, fmod, logical_and, logical_or, logical_xor, equal, not_equal, greater,
    greater_equal, less, less_equal,
    negative, absolute, sign, square, sqrt, exp, expm1, log, log1p, sin, cos, tanh, floor,
    ceil, rint, trunc, logical_not,
    relu, sigmoid, silu, gelu, gelu_erf, gelu_quick, elu, hardswish, hardsigmoid, softplus,
    step, leaky_relu, prelu, clip, clamp, scale,
    copyto, ascontiguousarray, astype, bfloat16,
)
from ggml_cy.cpu.threads import set_num_threads, get_num_threads, threads

# numpy's aliases (the same function objects, as in numpy)
true_divide = divide
mod = remainder
abs = absolute

BINARY = ("add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "maximum",
          "minimum", "fmax", "fmin", "power", "remainder", "mod", "fmod", "logical_and",
          "logical_or", "logical_xor", "equal", "not_equal", "greater", "greater_equal",
          "less", "less_equal")
UNARY = ("negative", "absolute", "abs", "sign", "square", "sqrt", "exp", "expm1", "log",
         "log1p", "sin", "cos", "tanh", "floor", "ceil", "rint", "trunc", "logical_not")
ACTIVATIONS = ("relu", "sigmoid", "silu", "gelu", "gelu_erf", "gelu_quick", "elu",
               "hardswish", "hardsigmoid", "softplus", "step", "leaky_relu", "prelu",
               "clip", "clamp", "scale")
CONVERSIONS = ("copyto", "ascontiguousarray", "astype", "bfloat16")
THREADS = ("set_num_threads", "get_num_threads", "threads")

__all__ = list(BINARY + UNARY + ACTIVATIONS + CONVERSIONS + THREADS)
