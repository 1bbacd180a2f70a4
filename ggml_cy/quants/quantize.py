"""``ggml_cy.quantize``: float arrays -> ggml's quantized blocks (raw bytes).

Which bits come out (see README "Quantized types"):

* Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, BF16, TQ1_0, TQ2_0, MXFP4 are bitwise equal to gguf-py's
  ``gguf.quants.quantize`` (its numpy code is the specification, including what NaN, +-inf,
  huge values and subnormal block scales turn into);
* Q2_K, Q3_K, Q4_K, Q5_K, Q6_K follow ggml's reference quantizer (``quantize_row_*_ref``),
  evaluated in strict float32 order; Q8_1 and Q8_K (mul_mat's activation formats) too;
* F32 and F16 are the values' bytes (numpy's conversion).

The kernels are in ``ggml_cy/cpu/csrc/quantize.h`` / ``quantize_k.h``; this module checks
arguments and picks the thread count.
"""
import numpy as np

from ggml_cy.cpu import _quantize
from ggml_cy.cpu import threads as _threads

__all__ = ["quantize", "quantizable_types", "resolve_type"]

# ggml type numbers (ggml.h) of the types this module writes
_F32, _F16 = 0, 1


def _traits(num):
    t = _quantize.type_traits(num)
    if t is None:
        raise ValueError(f"unknown ggml type {num}")
    return t


def resolve_type(type):
    """A ggml type number from a ``GGMLType`` member, an int or a name ("q4_K", "Q8_0")."""
    if isinstance(type, bool):
        raise TypeError("type must be a GGMLType, a ggml type number or a type name, not bool")
    if isinstance(type, str):
        key = type.strip().lower()
        for num in range(0, 256):
            t = _quantize.type_traits(num)
            if t is not None and t[0].lower() == key:
                return num
        raise ValueError(f"unknown ggml type name {type!r}")
    if hasattr(type, "__index__"):
        num = type.__index__()
        if num < 0 or num > 255 or _quantize.type_traits(num) is None:
            raise ValueError(f"unknown ggml type {num}")
        return num
    raise TypeError("type must be a GGMLType, a ggml type number or a type name, "
                    f"not {type.__class__.__name__}")


def quantizable_types():
    """Names of the types ``quantize`` writes, in ggml's numbering order."""
    out = []
    for num in range(0, 256):
        t = _quantize.type_traits(num)
        if t is not None and (num in (_F32, _F16) or _quantize.can_quantize(num)):
            out.append(t[0])
    return out


def quantize(array, type, out=None, *, n_threads=None):
    """Quantize the rows of ``array`` (its last axis) to ggml type ``type``.

    Returns uint8 raw blocks of shape ``array.shape[:-1] + (row_bytes,)``, where
    ``row_bytes = ne0 / blck_size * type_size`` (ggml's ``ggml_row_size``): one row of
    blocks per row, exactly the bytes a GGUF file or a ggml tensor holds.

    ``array``: float16, float32 or float64 values (converted to float32 first, as gguf-py
    does), at least 1-D, the last axis a multiple of the type's block size. ``out``: a
    writable, C-contiguous uint8 array of the result's shape. ``n_threads``: threads to
    split the blocks over (default: ``ggml_cy.get_num_threads()``).
    """
    num = resolve_type(type)
    name, blck, tsize = _traits(num)
    if num not in (_F32, _F16) and not _quantize.can_quantize(num):
        raise ValueError(f"ggml_cy cannot quantize to {name}; it quantizes to "
                         + ", ".join(quantizable_types()))
    a = array if isinstance(array, np.ndarray) else np.asarray(array)
    if a.dtype.kind != "f":
        raise TypeError(f"quantize takes float16/float32/float64 data, not {a.dtype}")
    if a.ndim == 0:
        raise ValueError("quantize needs at least one axis (rows of values)")
    ne0 = a.shape[-1]
    if ne0 % blck:
        raise ValueError(f"row length {ne0} is not a multiple of {name}'s block size {blck}")
    oshape = a.shape[:-1] + (ne0 // blck * tsize,)
    if out is None:
        out = np.empty(oshape, dtype=np.uint8)
    else:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"out must be a numpy array, not {out.__class__.__name__}")
        if out.dtype != np.uint8:
            raise TypeError(f"out must have dtype uint8, not {out.dtype}")
        if out.shape != oshape:
            raise ValueError(f"out has shape {out.shape}, the result has shape {oshape}")
        if not out.flags.writeable:
            raise ValueError("out is read-only")
        if not out.flags.c_contiguous:
            raise ValueError("out must be C-contiguous")
    nth = _threads.get_num_threads() if n_threads is None else \
        _threads.check_num_threads(n_threads)
    flat = out.reshape(-1)
    if num == _F32:
        flat[...] = np.ascontiguousarray(a, dtype=np.float32).reshape(-1).view(np.uint8)
        return out
    if num == _F16:
        flat[...] = np.ascontiguousarray(a, dtype=np.float16).reshape(-1).view(np.uint8)
        return out
    src = np.ascontiguousarray(a, dtype=np.float32).reshape(-1)
    _quantize.quantize_flat(src, flat, num, nth)
    return out
