"""ggml's quantized types from Python (issue 12): dequantize (this file), quantize and
quantized compute (added beside it). Layer 5.2: uses core/ and cpu/.

    ggml_cy.dequantize(raw, type, shape, out=None, dtype=np.float32, n_threads=None)
    ggml_cy.quantize(array, type, out=None, n_threads=None)   (quants/quantize.py)

``raw`` holds ggml's blocks (uint8, or bytes-like), C-contiguous, exactly
``row_size(type, shape[-1]) * prod(shape[:-1])`` bytes, in any shape (gguf-py's byte shape,
``(..., bytes_per_row)``, or flat). The result has ``shape``; float32 values are bitwise
equal to gguf-py's ``gguf.quants.dequantize``; float16 / bfloat16 are rounded from them
(nearest even, as numpy's ``astype`` and ``ggml_cy.float32_to_bfloat16`` do). bfloat16 is
returned as uint16 bit patterns (numpy has no bfloat16), or as ml_dtypes' bfloat16 when that
dtype is asked for.
"""
import numpy as np

from ggml_cy.core import _core
from ggml_cy.core._core import GGMLType, blck_size, type_size, row_size
from ggml_cy.cpu import _dequant
from ggml_cy.cpu.threads import check_num_threads, get_num_threads
# quantize: float arrays -> raw blocks (quants/quantize.py)
from ggml_cy.quants.quantize import quantize, quantizable_types

# computing with quantized weights: mul_mat, get_rows (compute.py)
from ggml_cy.quants.compute import mul_mat, get_rows, mul_mat_types  # noqa: E402

__all__ = ["dequantize", "blck_size", "type_size", "row_size", "quantize", "quantizable_types",
           "mul_mat", "get_rows", "mul_mat_types"]

_KIND_OF = {"float32": _dequant.KINDS["float32"], "float16": _dequant.KINDS["float16"],
            "bfloat16": _dequant.KINDS["bfloat16"]}


def _out_kind(dtype):
    """(kind name, numpy dtype of the result array) for a dtype argument."""
    if isinstance(dtype, str) and dtype.lower() in ("bfloat16", "bf16"):
        return "bfloat16", np.dtype(np.uint16)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dequantize: dtype must be float32, float16 or 'bfloat16', not "
                        f"{dtype!r}") from None
    if dt.name == "bfloat16":                     # ml_dtypes.bfloat16
        return "bfloat16", dt
    if dt == np.float32:
        return "float32", np.dtype(np.float32)
    if dt == np.float16:
        return "float16", np.dtype(np.float16)
    raise TypeError(f"dequantize: dtype must be float32, float16 or 'bfloat16', not {dt}")


def _as_shape(shape):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"dequantize: shape must be a tuple of ints, not {shape!r}") from None
    out = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"dequantize: shape must be a tuple of ints, not {shape!r}")
        if d < 0:
            raise ValueError(f"dequantize: negative dimension in shape {dims}")
        out.append(int(d))
    if not out:
        raise ValueError("dequantize: shape needs at least one dim (the row length)")
    return tuple(out)


def _as_raw(raw):
    if isinstance(raw, (bytes, bytearray, memoryview)):
        mv = memoryview(raw)
        if not mv.c_contiguous:
            raise ValueError("dequantize: raw must be C-contiguous")
        return np.frombuffer(mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv,
                             dtype=np.uint8)
    if not isinstance(raw, np.ndarray):
        raise TypeError(f"dequantize: raw must be a uint8 array or bytes-like, not "
                        f"{type(raw).__name__}")
    if raw.dtype not in (np.uint8, np.int8):
        raise TypeError(f"dequantize: raw must hold bytes (uint8), not {raw.dtype}")
    if not raw.flags.c_contiguous:
        raise ValueError("dequantize: raw must be C-contiguous (np.ascontiguousarray)")
    return raw.view(np.uint8)


def dequantize(raw, type, shape, out=None, dtype=np.float32, n_threads=None):
    """Values of ggml blocks `raw` of `type`, as an array of `shape` (see the module doc).
    out: a C-contiguous writeable array of `shape` and the result dtype to fill.
    n_threads: threads for this call (default: ggml_cy's thread setting)."""
    t = _core._as_type(type)
    shp = _as_shape(shape)
    kind, odt = _out_kind(dtype)
    nth = get_num_threads() if n_threads is None else check_num_threads(n_threads)
    r = _as_raw(raw)
    bs = t.blck_size
    if shp[-1] % bs:
        raise ValueError(f"dequantize: a row of {t} holds a multiple of {bs} values (its "
                         f"block size), but shape {shp} has rows of {shp[-1]}")
    nrows = 1
    for d in shp[:-1]:
        nrows *= d
    want = row_size(t, shp[-1]) * nrows
    if r.nbytes != want:
        raise ValueError(f"dequantize: {t} data of shape {shp} takes {want} bytes, but raw "
                         f"has {r.nbytes}")
    if out is None:
        res = np.empty(shp, dtype=odt)
    else:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"dequantize: out must be a numpy array, not {type(out).__name__}")
        if out.dtype != odt and not (kind == "bfloat16" and out.dtype == np.uint16):
            raise TypeError(f"dequantize: out has dtype {out.dtype}, expected {odt}")
        if out.shape != shp:
            raise ValueError(f"dequantize: out has shape {out.shape}, expected {shp}")
        if not out.flags.writeable:
            raise ValueError("dequantize: out is read-only")
        if not out.flags.c_contiguous:
            raise ValueError("dequantize: out must be C-contiguous")
        res = out
    if not t.is_quantized:
        return _plain(r, t, shp, res, kind)
    if not _dequant.can_dequantize(int(t)):
        raise TypeError(f"dequantize: no dequantizer for {t}")
    flat = res.reshape(-1).view(np.float32 if kind == "float32" else np.uint16)
    rows = r.reshape(nrows, -1) if nrows else r.reshape(0, 0)
    _dequant.dequantize_rows(rows, int(t), flat, _KIND_OF[kind], nth)
    return res


def _plain(r, t, shp, res, kind):
    """F32 / F16 / BF16 data (as gguf-py's dequantize also takes): a conversion."""
    if t == GGMLType.F32:
        vals = r.view(np.float32)
    elif t == GGMLType.F16:
        vals = r.view(np.float16).astype(np.float32)
    elif t == GGMLType.BF16:
        vals = _core.bfloat16_to_float32(r.view(np.uint16))
    else:
        raise TypeError(f"dequantize: {t} is not a quantized or float type")
    vals = vals.reshape(shp)
    if kind == "float32":
        res[...] = vals
    elif kind == "float16":
        res[...] = vals.astype(np.float16)
    else:
        res.view(np.uint16)[...] = _core.float32_to_bfloat16(vals)
    return res
