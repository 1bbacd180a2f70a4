"""Computing with quantized weights, eagerly (issue 12 item 4; the graph forms are
``ctx.mul_mat`` and ``ctx.get_rows``).

    ggml_cy.mul_mat(a, b, type=None, *, out=None, n_threads=None)
    ggml_cy.get_rows(table, ids, type=None, *, n_threads=None)

``mul_mat`` is ggml's ``mul_mat(a, b)`` for a quantized weight matrix ``a`` of M rows of K
values and float rows ``b``: the result is ``b @ dequantize(a).T`` (a linear layer
``y = x W^T``, like torch's ``F.linear``), computed ggml's way: each row of ``b`` is
quantized once to the weight type's vec-dot partner (Q8_0, Q8_1 or Q8_K) and the dot
products run on 8-bit integers with SIMD (AVX2 / AVX-512 VNNI); the rarer i-quants and NVFP4
dequantize a tile at a time and use float dots. Within ggml's tolerance of the float64
product of the dequantized weights (normalized mean squared error below 5e-4), not bitwise.

``a`` is either raw blocks, an ``(M, row_bytes)`` uint8 array as ``ggml_cy.quantize``
returns and GGUF files hold, with ``type`` naming the ggml type; or a 2-D quantized
``ggml_cy.Tensor`` (its own type). ``b`` is ``(K,)`` or ``(..., K)`` floats (converted to
float32, as ggml does); the result is float32 of shape ``b.shape[:-1] + (M,)``.

With float weights (f32, f16, bf16 bit patterns with ``type="bf16"``, or such a Tensor)
``mul_mat`` runs the graph's float kernel instead (issue 14 item 3): ``b @ a.T`` in float32,
the same bits as ``ctx.mul_mat``.

``get_rows`` is ggml's ``get_rows``: ``table[ids]`` converted to float32, for tables of
float32, float16, bfloat16 (uint16 bit patterns with ``type="bf16"``) or any quantized type
(raw ``(R, row_bytes)`` blocks with ``type``, or a 2-D Tensor). ``ids`` are integers of any
shape, each in ``[0, R)`` (no negative indexing: ggml's ids are row numbers), and the result
has shape ``ids.shape + (ne0,)``; quantized rows are bitwise what ``ggml_cy.dequantize``
gives for them.
"""
import math
import operator

import numpy as np

from ggml_cy.core._core import GGMLType, Tensor
from ggml_cy.cpu import _quant_ops, _mul_mat
from ggml_cy.cpu.threads import check_num_threads, get_num_threads

__all__ = ["mul_mat", "get_rows", "mul_mat_types"]


def mul_mat_types():
    """The quantized ggml types mul_mat takes as weights, with the path each uses:
    ``{GGMLType.Q4_0: "integer", ..., GGMLType.IQ2_XXS: "dequant", ...}``."""
    return {t: _quant_ops.mul_mat_path(int(t)) for t in GGMLType
            if t.is_quantized and _quant_ops.mul_mat_supported(int(t))}


def _as_type(type, what):
    if type is None:
        raise TypeError(f"{what}: raw blocks need type= (a ggml type: GGMLType, name or number)")
    if isinstance(type, str):
        key = type.strip().upper()
        try:
            return GGMLType[key]
        except KeyError:
            raise ValueError(f"{what}: unknown type {type!r}") from None
    if isinstance(type, bool):
        raise TypeError(f"{what}: type must be a GGMLType, a name or a number, not bool")
    try:
        return GGMLType(operator.index(type))
    except TypeError:
        raise TypeError(f"{what}: type must be a GGMLType, a name or a number, not "
                        f"{type.__class__.__name__}") from None
    except ValueError:
        raise ValueError(f"{what}: unknown type {type!r}") from None


def _threads(n_threads):
    return get_num_threads() if n_threads is None else check_num_threads(n_threads)


def _raw_rows(a, type, what):
    """(uint8 C-contiguous (rows, row_bytes) array, GGMLType) of a raw array or a Tensor."""
    if isinstance(a, Tensor):
        t = GGMLType(a.type)
        if type is not None and _as_type(type, what) != t:
            raise TypeError(f"{what}: type={type!r} differs from the tensor's type {t.name}")
        if a.ne[2] != 1 or a.ne[3] != 1:
            raise ValueError(f"{what}: the tensor must be 2-D, got ne={list(a.ne)}")
        if t.is_quantized and a.nb[0] != t.type_size:
            raise ValueError(f"{what}: the tensor's rows must be contiguous blocks "
                             f"(nb={list(a.nb)}); copy it with ctx.cont first")
        raw = a.raw() if t.is_quantized else a.numpy()
        if raw.ndim == 1:
            raw = raw.reshape(1, -1)
        if t.is_quantized:
            return np.ascontiguousarray(raw), t, a.ne[0]
        return raw, t, a.ne[0]
    return a, _as_type(type, what), None


def mul_mat(a, b, type=None, *, out=None, n_threads=None):
    """``b @ dequantize(a).T`` with quantized weights ``a``, computed ggml's way (see the
    module docstring): a (M, row_bytes) uint8 blocks + ``type``, or a quantized 2-D Tensor;
    b (K,) or (..., K) floats; result float32 (..., M).

    Float weights (issue 14 item 3): ``a`` a float32 / float16 (M, K) array (float64 is
    converted to float32), bfloat16 bit patterns (uint16) with ``type="bf16"``, or a 2-D
    F32 / F16 / BF16 Tensor: ``b @ a.T`` computed in float32 by the graph's float kernel
    (the same bits as ``ctx.mul_mat``). b is not rounded for f32/f16 weights; with bf16
    weights it is rounded to bfloat16 first (ggml's rule: round to nearest even, the exact
    bf16 products summed in float32, by VDPBF16PS where the CPU has AVX512_BF16)."""
    fa = _float_weights(a, type)
    if fa is not None:
        return _mul_mat_float(fa[0], fa[1], b, out, n_threads)
    raw, t, ne0 = _raw_rows(a, type, "mul_mat")
    if not t.is_quantized:
        raise TypeError(f"mul_mat: a of type {t.name} must be given as a float array or "
                        "tensor (raw bytes are taken for quantized types only)")
    if not _quant_ops.mul_mat_supported(int(t)):
        raise TypeError(f"mul_mat: no kernel for weights of type {t.name} (supported: "
                        f"{', '.join(x.name for x in mul_mat_types())})")
    raw = np.asarray(raw)
    if raw.dtype != np.uint8 or raw.ndim != 2:
        raise TypeError(f"mul_mat: raw weights must be a 2-D uint8 array (rows of blocks), "
                        f"got {raw.dtype} with shape {raw.shape}")
    bx = np.asarray(b)
    if bx.dtype.kind not in "fiu" or bx.dtype.kind == "b":
        raise TypeError(f"mul_mat: b must hold real numbers, got dtype {bx.dtype}")
    if bx.ndim == 0:
        raise ValueError("mul_mat: b must have at least one dim (K)")
    K = bx.shape[-1]
    bs, ts = t.blck_size, t.type_size
    if K % bs != 0:
        raise ValueError(f"mul_mat: b's rows have K={K} values, not a multiple of "
                         f"{t.name}'s block size {bs}")
    if ne0 is not None and ne0 != K:
        raise ValueError(f"mul_mat: a's rows have {ne0} values but b's have {K} (ne0 "
                         "mismatch)")
    if raw.shape[1] != K // bs * ts:
        raise ValueError(f"mul_mat: a's rows have {raw.shape[1]} bytes, which is not K={K} "
                         f"values of {t.name} ({K // bs * ts} bytes): ne0 mismatch")
    raw = np.ascontiguousarray(raw)
    M = raw.shape[0]
    lead = bx.shape[:-1]
    b2 = np.asarray(bx, dtype=np.float32).reshape(-1, K)
    shape = lead + (M,)
    if out is None:
        res = np.empty(shape, dtype=np.float32)
    else:
        if not isinstance(out, np.ndarray) or out.dtype != np.float32 or out.shape != shape:
            raise ValueError(f"mul_mat: out must be a float32 array of shape {shape}")
        if not out.flags.writeable:
            raise ValueError("mul_mat: out is read-only")
        if not out.flags.c_contiguous:
            raise ValueError("mul_mat: out must be C-contiguous")
        res = out
    if K == 0:
        res[...] = 0.0
        return res
    if res.size == 0:
        return res
    _quant_ops.mul_mat_q(raw, int(t), K, b2, res.reshape(-1, M), _threads(n_threads))
    return res


_FLOAT_TYPES = (GGMLType.F32, GGMLType.F16, GGMLType.BF16)


def _float_weights(a, type):
    """(2-D float32 / uint16 array, GGMLType) when ``a`` holds float weights, else None."""
    if isinstance(a, Tensor):
        t = GGMLType(a.type)
        if t not in _FLOAT_TYPES:
            return None
        if type is not None and _as_type(type, "mul_mat") != t:
            raise TypeError(f"mul_mat: type={type!r} differs from the tensor's type {t.name}")
        if a.ne[2] != 1 or a.ne[3] != 1:
            raise ValueError(f"mul_mat: the tensor must be 2-D, got ne={list(a.ne)}")
        arr = a.numpy(2)
        return (arr.view(np.uint16) if arr.dtype == np.float16 else arr), t
    t = None if type is None else _as_type(type, "mul_mat")
    if t is not None and t not in _FLOAT_TYPES:
        return None
    arr = np.asarray(a)
    if t is None:
        if arr.dtype.kind != "f":
            return None                          # raw blocks without type=: the usual error
        t = GGMLType.F16 if arr.dtype == np.float16 else GGMLType.F32
    if t == GGMLType.F32:
        if arr.dtype.kind != "f" or arr.dtype == np.float16:
            raise TypeError(f"mul_mat: type F32 weights must be a float32 array, got "
                            f"{arr.dtype} (raw bytes are taken for quantized types only)")
        arr = arr.astype(np.float32, copy=False)
    elif t == GGMLType.F16:
        if arr.dtype == np.float16:
            arr = arr.view(np.uint16)
        elif arr.dtype != np.uint16:
            raise TypeError(f"mul_mat: F16 weights must be float16 (or uint16 bit patterns), "
                            f"got {arr.dtype} (raw bytes are taken for quantized types only)")
    elif arr.dtype != np.uint16:
        raise TypeError(f"mul_mat: BF16 weights must be uint16 bit patterns, got {arr.dtype} "
                        "(raw bytes are taken for quantized types only)")
    if arr.ndim != 2:
        raise ValueError(f"mul_mat: float weights must be 2-D (M, K), got shape {arr.shape}")
    return arr, t


def _mul_mat_float(arr, t, b, out, n_threads):
    bx = np.asarray(b)
    if bx.dtype.kind not in "fiu" or bx.dtype.kind == "b":
        raise TypeError(f"mul_mat: b must hold real numbers, got dtype {bx.dtype}")
    if bx.ndim == 0:
        raise ValueError("mul_mat: b must have at least one dim (K)")
    M, K = arr.shape
    if bx.shape[-1] != K:
        raise ValueError(f"mul_mat: a's rows have {K} values but b's have {bx.shape[-1]} "
                         "(ne0 mismatch)")
    shape = bx.shape[:-1] + (M,)
    rows = math.prod(bx.shape[:-1])     # (np.prod here cost 3 us a call)
    b2 = np.asarray(bx, dtype=np.float32).reshape(rows, K)
    if out is None:
        res = np.empty(shape, dtype=np.float32)
    else:
        if not isinstance(out, np.ndarray) or out.dtype != np.float32 or out.shape != shape:
            raise ValueError(f"mul_mat: out must be a float32 array of shape {shape}")
        if not out.flags.writeable:
            raise ValueError("mul_mat: out is read-only")
        if not out.flags.c_contiguous:
            raise ValueError("mul_mat: out must be C-contiguous")
        if np.shares_memory(out, arr) or np.shares_memory(out, b2):
            raise ValueError("mul_mat: out overlaps a or b")
        res = out
    if res.size == 0:
        return res
    nt = _threads(n_threads)
    if t == GGMLType.F32:
        _mul_mat.mul_mat_f32(arr, b2, res.reshape(rows, M), nt)
    else:
        _mul_mat.mul_mat_half(arr, t == GGMLType.BF16, b2, res.reshape(rows, M), nt)
    return res


def get_rows(table, ids, type=None, *, n_threads=None):
    """``table[ids]`` as float32 (ggml's get_rows; see the module docstring)."""
    if isinstance(table, Tensor):
        raw, t, ne0 = _raw_rows(table, type, "get_rows")
        if not t.is_quantized:
            raw = np.ascontiguousarray(raw)
            raw = raw.view(np.uint8).reshape(raw.shape[0], -1)
    else:
        arr = np.asarray(table)
        if type is None:
            if arr.dtype == np.float32:
                t = GGMLType.F32
            elif arr.dtype == np.float16:
                t = GGMLType.F16
            else:
                raise TypeError(f"get_rows: a {arr.dtype} table needs type= (float32 and "
                                "float16 tables need none; bfloat16 is type='bf16' on uint16 "
                                "bit patterns; quantized tables are uint8 blocks)")
        else:
            t = _as_type(type, "get_rows")
        if arr.ndim != 2:
            raise ValueError(f"get_rows: the table must be 2-D (rows, values), got shape "
                             f"{arr.shape}")
        want = {GGMLType.F32: np.float32, GGMLType.F16: np.float16,
                GGMLType.BF16: np.uint16}.get(t, np.uint8)
        if arr.dtype != want:
            raise TypeError(f"get_rows: a {t.name} table must be a {np.dtype(want)} array, "
                            f"got {arr.dtype}")
        arr = np.ascontiguousarray(arr)
        if t.is_quantized:
            ne0 = arr.shape[1] // t.type_size * t.blck_size
            if arr.shape[1] % t.type_size != 0:
                raise ValueError(f"get_rows: table rows of {arr.shape[1]} bytes are not whole "
                                 f"{t.name} blocks ({t.type_size} bytes each)")
        else:
            ne0 = arr.shape[1]
        raw = arr.view(np.uint8).reshape(arr.shape[0], -1)
    if not _quant_ops.get_rows_supported(int(t)):
        raise TypeError(f"get_rows: no kernel for tables of type {t.name}")
    idx = np.asarray(ids)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"get_rows: ids must be integers, got dtype {idx.dtype}")
    R = raw.shape[0]
    flat = idx.reshape(-1)
    if flat.size and (flat.min() < 0 or flat.max() >= R):
        bad = flat[(flat < 0) | (flat >= R)][0]
        raise IndexError(f"get_rows: row id {int(bad)} is out of range for a table of {R} "
                         "rows")
    flat = np.ascontiguousarray(flat, dtype=np.int32)
    res = np.empty((flat.size, ne0), dtype=np.float32)
    _quant_ops.get_rows(raw, int(t), ne0, flat, res, _threads(n_threads))
    return res.reshape(idx.shape + (ne0,))
