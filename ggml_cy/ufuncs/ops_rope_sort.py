"""numpy-style counterparts of ggml's rope, argsort, top_k and argmax (issue 13).

    ggml_cy.rope(x, positions, n_dims=None, *, mode="normal", freq_base=10000.0, ...)
    ggml_cy.argsort(x, axis=-1, descending=False)
    ggml_cy.top_k(x, k, axis=-1)
    ggml_cy.argmax(x, axis=-1)

Each builds a one-node graph on ggml_cy's CPU kernels (``ctx.rope_ext``, ``ctx.argsort``,
``ctx.top_k``, ``ctx.argmax``) and runs it on ``n_threads`` threads (default: the
library's, ``ggml_cy.get_num_threads()``). Inputs are numpy arrays (any layout);
results are new arrays. The rules are ggml's, which differ from numpy's in places:

* indices are int32 (ggml's), not numpy's intp;
* sorting takes float32 (float16 and the small integer types convert exactly); other
  dtypes raise TypeError rather than lose precision silently; equal values keep index
  order (a stable sort) and NaN sorts above +inf;
* ``argmax`` follows ggml's CPU kernel: equal maxima give the LAST index (numpy: the
  first);
* ``top_k`` gives the indices of the k largest values by descending value.
"""
import numpy as np

from ggml_cy.core._core import GGMLType
from ggml_cy.graph.context import Context
from ggml_cy.cpu.threads import get_num_threads

__all__ = ["rope", "argsort", "top_k", "argmax"]

_EXACT_F32 = (np.float32, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.bool_)


def _threads(n_threads):
    if n_threads is None:
        return get_num_threads()
    if isinstance(n_threads, bool) or not isinstance(n_threads, (int, np.integer)):
        raise TypeError(f"n_threads must be an integer, not {type(n_threads).__name__}")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    return int(n_threads)


def _array(x, what):
    if isinstance(x, np.ndarray):
        return x
    try:
        return np.asarray(x)
    except Exception as exc:
        raise TypeError(f"{what}: cannot make an array of {type(x).__name__}") from exc


def _run(arrays, build, n_threads, extra=0):
    """Copies arrays (C-order, ggml's reversed shape) into a context, builds the node
    with build(ctx, *tensors), computes it; returns the result tensor's array (a copy)."""
    nbytes = sum(a.nbytes for a in arrays)
    ctx = Context(3 * nbytes + extra + (1 << 16) + Context.graph_overhead(8))
    ts = []
    for a in arrays:
        t = GGMLType.F16 if a.dtype == np.float16 else (
            GGMLType.I32 if a.dtype == np.int32 else GGMLType.F32)
        ne = tuple(reversed(a.shape)) if a.ndim else (1,)
        tensor = ctx.new_tensor(t, ne)
        tensor.numpy()[...] = a.reshape(tensor.numpy().shape)
        ts.append(tensor)
    r = build(ctx, *ts)
    g = ctx.new_graph(8)
    g.build_forward_expand(r)
    g.compute(n_threads)
    return r.numpy().copy()


def _float_rows(x, what):
    x = _array(x, what)
    if x.dtype.type not in _EXACT_F32:
        raise TypeError(f"{what}: ggml sorts float32 values; got {x.dtype} (cast it "
                        "to float32 first if losing precision is acceptable)")
    if x.ndim == 0:
        raise ValueError(f"{what}: a 0-d array has no axis to work along")
    return x.astype(np.float32, copy=False)


def _axis(axis, ndim, what):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{what}: axis must be an integer, not {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(int(axis), ndim)
    return int(axis) % ndim


def _rows_op(x, axis, what, n_threads, build, out_len=None):
    """Moves axis last, runs build on the (rows, n) float32 matrix, moves it back."""
    x = _float_rows(x, what)
    ax = _axis(axis, x.ndim, what)
    n_threads = _threads(n_threads)
    moved = np.moveaxis(x, ax, -1)
    lead = moved.shape[:-1]
    n = moved.shape[-1]
    if n > 2 ** 31 - 1:
        raise ValueError(f"{what}: rows longer than 2**31 - 1")
    m = np.ascontiguousarray(moved).reshape(-1, n)
    res = _run([m], build, n_threads, extra=m.size * 4)
    k = n if out_len is None else out_len
    return np.moveaxis(res.reshape(lead + (k,)), -1, ax)


def argsort(x, axis=-1, descending=False, *, n_threads=None):
    """Indices (int32) that sort x along axis (ggml's argsort): ascending, or descending
    with ``descending=True``. Stable: equal values keep their index order; NaN sorts
    above +inf (last ascending, first descending)."""
    if not isinstance(descending, (bool, np.bool_)):
        raise TypeError(f"argsort: descending must be a bool, not {type(descending).__name__}")
    order = 1 if descending else 0
    return _rows_op(x, axis, "argsort", n_threads, lambda ctx, t: ctx.argsort(t, order))


def top_k(x, k, axis=-1, *, n_threads=None):
    """Indices (int32) of the k largest values of x along axis (ggml's top_k), by
    descending value (equal values: lower index first; NaN counts as the largest)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"top_k: k must be an integer, not {type(k).__name__}")
    xa = _float_rows(x, "top_k")
    n = xa.shape[_axis(axis, xa.ndim, "top_k")]
    if not 0 <= k <= n:
        raise ValueError(f"top_k: k must be in [0, {n}], got {k}")
    return _rows_op(xa, axis, "top_k", n_threads, lambda ctx, t: ctx.top_k(t, int(k)),
                    out_len=int(k))


def argmax(x, axis=-1, *, n_threads=None):
    """Index (int32) of the largest value of x along axis, by ggml's CPU rule: equal
    maxima give the LAST index (numpy's argmax: the first)."""
    x = _float_rows(x, "argmax")
    ax = _axis(axis, x.ndim, "argmax")
    if x.shape[ax] == 0:
        raise ValueError("argmax: an empty axis has no maximum")
    n_threads = _threads(n_threads)
    moved = np.moveaxis(x, ax, -1)
    lead = moved.shape[:-1]
    m = np.ascontiguousarray(moved).reshape(-1, moved.shape[-1])
    res = _run([m], lambda ctx, t: ctx.argmax(t), n_threads)
    return res.reshape(lead)


_MODES = {"normal": 0, "neox": 2, 0: 0, 2: 2}


def rope(x, positions, n_dims=None, *, mode="normal", freq_base=10000.0, freq_scale=1.0,
         ext_factor=0.0, attn_factor=1.0, beta_fast=32.0, beta_slow=1.0, n_ctx_orig=0,
         freq_factors=None, n_threads=None):
    """Rotary position embedding (ggml's rope_ext) of x, shaped (tokens, heads, head_dim)
    or (batch, tokens, heads, head_dim), float32 or float16 (the result has x's dtype;
    other real dtypes compute in float32), at integer ``positions`` (one per token).

    The first n_dims (default: head_dim) values of each head are rotated in pairs:
    ``mode="normal"`` (0) pairs (2k, 2k+1), ``"neox"`` (2) pairs (k, k + n_dims/2); pair
    k turns by ``p * freq_base**(-2k/n_dims) / freq_factors[k]`` with ggml's YaRN
    scaling (freq_scale, ext_factor, attn_factor, beta_fast, beta_slow, n_ctx_orig);
    the rest are copied. Arithmetic is ggml's (float32)."""
    x = _array(x, "rope: x")
    if x.dtype.kind not in "fiu":
        raise TypeError(f"rope: x must be a real array, got {x.dtype}")
    if x.ndim not in (3, 4):
        raise ValueError(f"rope: x must be (tokens, heads, head_dim) or (batch, tokens, "
                         f"heads, head_dim), got shape {x.shape}")
    if x.dtype != np.float16:
        x = x.astype(np.float32, copy=False)
    pos = _array(positions, "rope: positions")
    if pos.dtype.kind not in "iu":
        raise TypeError(f"rope: positions must be integers, got {pos.dtype}")
    tokens = x.shape[-3]
    if pos.shape != (tokens,):
        raise ValueError(f"rope: positions must have shape ({tokens},) (one per token), got "
                         f"{pos.shape}")
    if pos.size and (pos.min() < -2 ** 31 or pos.max() > 2 ** 31 - 1):
        raise ValueError("rope: positions must fit int32")
    pos = pos.astype(np.int32)
    head = x.shape[-1]
    if n_dims is None:
        n_dims = head
    try:
        m = _MODES[mode.lower() if isinstance(mode, str) else mode]
    except (KeyError, TypeError):
        raise ValueError(f"rope: mode must be 'normal' (0) or 'neox' (2), got {mode!r}") \
            from None
    arrays = [x, pos]
    if freq_factors is not None:
        ff = _array(freq_factors, "rope: freq_factors")
        if ff.dtype.kind not in "fiu" or ff.ndim != 1:
            raise TypeError(f"rope: freq_factors must be a 1-d real array, got {ff.dtype} "
                            f"{ff.shape}")
        arrays.append(ff.astype(np.float32))
    n_threads = _threads(n_threads)

    def build(ctx, xt, pt, ft=None):
        return ctx.rope_ext(xt, pt, ft, n_dims, m, n_ctx_orig, freq_base, freq_scale,
                            ext_factor, attn_factor, beta_fast, beta_slow)
    out = _run(arrays, build, n_threads)
    return out.reshape(x.shape)
