"""ggml_cy on dask arrays: work larger than memory, or spread over a cluster.

``pip install 'ggml_cy[dask]'``. Every function takes dask arrays (numpy arrays and
numbers are accepted too) and returns a lazy dask array computed block by block with
ggml_cy on whatever scheduler runs it (threads, processes, ``dask.distributed``):

* ``evaluate(expr, **arrays)``: ``ggml_cy.evaluate`` per block (one fused pass per block;
  numpy's typing). Inputs are broadcast as numpy broadcasts and their chunks aligned
  (``dask.array.blockwise``); a final ``sum/prod/min/max(expr, axis=...)`` is the
  elementwise part per block followed by dask's tree reduction.
* the eager functions, ``ggml_cy.dask.add(x, y)``, ``exp(x)``, ... (every name of
  ``ggml_cy.ufuncs.BINARY`` / ``UNARY`` / ``ACTIVATIONS``), block by block;
* ``quantize(x, type)`` / ``dequantize(raw, type)``: ggml's blocks, per block of rows;
* ``from_gguf(path)``: the tensors of a GGUF file as lazy dask arrays whose blocks are read
  from the file's memory map where they are computed (plain types zero-copy; quantized
  types dequantized block by block through ``ggml_cy.quants``).

Threads: a block runs ggml_cy with ``cores // concurrent blocks`` threads so the machine is
never oversubscribed: on the threaded scheduler the concurrent blocks are dask's pool size,
on a ``dask.distributed`` worker they are its ``nthreads`` times the number of worker
processes on the same host (read from the scheduler when the graph is built), so
workers x threads never exceeds the cores of a host. ``n_threads=`` overrides it.
"""
import functools
import os
from typing import Any, Callable

import numpy as np

try:
    import dask
    import dask.array as da
except ImportError as _exc:       # the optional dependency
    raise ImportError("ggml_cy.dask needs dask: pip install 'ggml_cy[dask]' "
                      "(or pip install 'dask[array]')") from _exc

from ggml_cy import ufuncs as _ufuncs
from ggml_cy.cpu import threads as _threads
from ggml_cy.expr import language as _language
from ggml_cy.expr.evaluate import evaluate as _evaluate

__all__ = ["evaluate", "from_gguf", "threads_per_block", "quantize", "dequantize"] + list(
    _ufuncs.BINARY + _ufuncs.UNARY + _ufuncs.ACTIVATIONS)


# ----------------------------------------------------------------------------- threads
def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _host_of(address: str) -> str:
    host = address.split("://", 1)[-1]
    return host.rsplit(":", 1)[0]


def _cluster_layout() -> dict[str, int] | None:
    """host -> worker threads on that host (all worker processes), from the default
    dask.distributed client when there is one."""
    try:
        from distributed import get_client
        client = get_client()
    except (ImportError, ValueError):
        return None
    layout: dict[str, int] = {}
    for addr, w in client.scheduler_info(n_workers=-1)["workers"].items():
        h = _host_of(addr)
        layout[h] = layout.get(h, 0) + int(w.get("nthreads", 1))
    return layout


def threads_per_block(layout: dict[str, int] | None = None) -> int:
    """The ggml_cy threads one block may use here (in the process running the block):
    cores // blocks that run at once in this process, or on this host for
    dask.distributed workers (layout: host -> total worker threads on it)."""
    cores = _cores()
    try:
        from distributed import get_worker
        worker = get_worker()
    except (ImportError, ValueError):
        worker = None
    if worker is not None:
        total = None
        if layout:
            total = layout.get(_host_of(worker.address))
        if not total:
            total = int(worker.state.nthreads)
        return max(1, cores // max(1, total))
    pool = dask.config.get("num_workers", None) or cores
    return max(1, cores // max(1, int(pool)))


def _block_threads(n_threads: int | None, layout: dict[str, int] | None) -> int:
    if n_threads is not None:
        return n_threads
    return threads_per_block(layout)


# ----------------------------------------------------------------------------- evaluate
def _as_dask(name: str, v: Any) -> Any:
    if isinstance(v, da.Array):
        return v
    if isinstance(v, np.ndarray):
        return da.from_array(v, chunks=v.shape if v.ndim else ())
    return v      # a number: passed to every block as is


def _align(arrays: list[Any], shape: tuple[int, ...]) -> list[Any]:
    """Rechunks every input to the chunks of the largest one along the dims they share
    (size-1, broadcast dims stay one chunk), so blockwise never splits blocks further."""
    ndim = len(shape)
    ref = max(arrays, key=lambda a: (a.ndim == ndim and a.shape == tuple(shape), a.size))
    ref_chunks: list[Any] = [None] * ndim
    off = ndim - ref.ndim
    for i, c in enumerate(ref.chunks):
        if ref.shape[i] == shape[off + i]:
            ref_chunks[off + i] = c
    out = []
    for a in arrays:
        off = ndim - a.ndim
        want = tuple(ref_chunks[off + i] if (a.shape[i] == shape[off + i]
                                             and ref_chunks[off + i] is not None)
                     else a.chunks[i] for i in range(a.ndim))
        out.append(a if want == a.chunks else a.rechunk(want))
    return out


def _probe_dtype(expr: str, arrays: dict[str, Any]) -> np.dtype:
    """The result dtype: the expression evaluated on one element of each input."""
    sample = {}
    for n, v in arrays.items():
        if isinstance(v, da.Array):
            sample[n] = np.ones((1,) * v.ndim, dtype=v.dtype)
        else:
            sample[n] = v
    with np.errstate(all="ignore"):
        return np.asarray(_evaluate(expr, **sample)).dtype


def _eval_block(expr: str, names: tuple[str, ...], scalars: dict[str, Any],
                n_threads: int | None, layout: dict[str, int] | None, *blocks: Any) -> Any:
    arrays = dict(zip(names, blocks))
    arrays.update(scalars)
    r = _evaluate(expr, n_threads=_block_threads(n_threads, layout), **arrays)
    return np.asarray(r)


def evaluate(expr: str, /, n_threads: int | None = None, **arrays: Any) -> Any:
    """``ggml_cy.evaluate`` over dask arrays, block by block: a lazy dask array (call
    ``.compute()``, or ``.store()``/``to_zarr`` for results larger than memory)."""
    if not isinstance(expr, str):
        raise TypeError(f"expr must be a str, not {type(expr).__name__}")
    if n_threads is not None:
        n_threads = _threads.check_num_threads(n_threads)
    tree = _language.parse(expr)
    reduction = None
    if tree[0] == "reduce":
        reduction = (tree[1], tree[3])
        body = _unparse_body(expr)
    else:
        body = expr
    names = _language.names_of(tree)
    missing = sorted(set(names) - set(arrays))
    if missing:
        raise NameError(f"evaluate: unknown name{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(repr(m) for m in missing)} in {expr!r}")
    vals = {n: _as_dask(n, arrays[n]) for n in names}
    darrs = {n: v for n, v in vals.items() if isinstance(v, da.Array)}
    scalars = {n: v for n, v in vals.items() if not isinstance(v, da.Array)}
    for n, v in scalars.items():
        if not isinstance(v, (bool, int, float, complex, np.generic)):
            raise TypeError(f"evaluate: input {n!r} must be a dask or numpy array or a "
                            f"number, not {type(v).__name__}")
    try:
        shape = np.broadcast_shapes(*(a.shape for a in darrs.values()))
    except ValueError:
        shapes = ", ".join(f"{n} {a.shape}" for n, a in darrs.items())
        raise ValueError(f"evaluate: operands could not be broadcast together: "
                         f"{shapes}") from None
    dtype = _probe_dtype(body, vals)
    layout = _cluster_layout() if n_threads is None else None
    order = tuple(darrs)
    if darrs:
        darrs = dict(zip(order, _align(list(darrs.values()), tuple(shape))))
    ndim = len(shape)
    out_ind = tuple(range(ndim))
    args = []
    for n in order:
        a = darrs[n]
        args += [a, tuple(range(ndim - a.ndim, ndim))]
    if not darrs:
        result = da.from_array(np.asarray(_evaluate(body, **scalars)))
    else:
        result = da.blockwise(functools.partial(_eval_block, body, order, scalars,
                                                n_threads, layout),
                              out_ind, *args, dtype=dtype,
                              meta=np.empty((0,) * ndim, dtype=dtype), align_arrays=True,
                              concatenate=True)
        # blockwise broadcasts size-1 dims of an input against the others' chunks
    if reduction is not None:
        name, axis = reduction
        if axis is not None and axis >= max(result.ndim, 1):
            raise ValueError(f"{name}(): axis {axis} is out of bounds for an expression "
                             f"of {result.ndim} dimensions")
        result = getattr(da, name)(result, axis=axis)
    return result


def _unparse_body(expr: str) -> str:
    import ast
    node = ast.parse(expr.strip(), mode="eval").body
    assert isinstance(node, ast.Call)
    return ast.unparse(node.args[0])


# ----------------------------------------------------------------------------- eager
def _eager_block(name: str, n_threads: int | None, layout: dict[str, int] | None,
                 kwargs: dict[str, Any], *xs: Any) -> Any:
    fn = getattr(_ufuncs, name)
    return fn(*xs, n_threads=_block_threads(n_threads, layout), **kwargs)


def _make(name: str) -> Callable[..., Any]:
    fn = getattr(_ufuncs, name)

    def wrapper(*args: Any, n_threads: int | None = None, **kwargs: Any) -> Any:
        if "out" in kwargs:
            raise TypeError(f"ggml_cy.dask.{name}: out= is not supported on dask arrays "
                            "(results are new lazy arrays)")
        if n_threads is not None:
            n_threads = _threads.check_num_threads(n_threads)
        xs = [_as_dask("x", a) for a in args]
        dask_args = [a for a in xs if isinstance(a, da.Array)]
        if not dask_args:
            return fn(*args, n_threads=n_threads, **kwargs)
        samples = [np.ones((1,) * a.ndim, a.dtype) if isinstance(a, da.Array) else a
                   for a in xs]
        with np.errstate(all="ignore"):
            dtype = np.asarray(fn(*samples, **kwargs)).dtype
        try:
            shape = np.broadcast_shapes(*(a.shape for a in dask_args))
        except ValueError:
            raise ValueError(f"ggml_cy.dask.{name}: operands could not be broadcast "
                             f"together: {[a.shape for a in dask_args]}") from None
        ndim = len(shape)
        aligned = iter(_align(dask_args, tuple(shape)))
        xs = [next(aligned) if isinstance(a, da.Array) else a for a in xs]
        bargs: list[Any] = []
        for a in xs:
            if isinstance(a, da.Array):
                bargs += [a, tuple(range(ndim - a.ndim, ndim))]
            else:
                bargs += [a, None]
        layout = _cluster_layout() if n_threads is None else None
        return da.blockwise(functools.partial(_eager_block, name, n_threads, layout, kwargs),
                            tuple(range(ndim)), *bargs, dtype=dtype,
                            meta=np.empty((0,) * ndim, dtype=dtype), align_arrays=True,
                            concatenate=True)

    wrapper.__name__ = name
    wrapper.__qualname__ = name
    wrapper.__doc__ = (f"ggml_cy.{name} on dask arrays, block by block (a lazy dask "
                       "array); arguments as ggml_cy's, except out=.")
    return wrapper


for _name in __all__[5:]:
    globals()[_name] = _make(_name)
del _name


# ----------------------------------------------------------------------------- quants
def _quant_traits(type: Any) -> tuple[int, int, int]:
    from ggml_cy.core._core import GGMLType, blck_size, type_size
    from ggml_cy.quants.quantize import resolve_type
    num = int(resolve_type(type))
    return num, int(blck_size(num)), int(type_size(num))


def _row_chunks(chunks: tuple[int, ...], unit: int, total: int) -> tuple[int, ...]:
    """The last axis' chunks when every one is a multiple of unit, else one chunk."""
    if all(c % unit == 0 for c in chunks):
        return chunks
    return (total,)


def _quantize_block(num: int, n_threads: int | None, layout: dict[str, int] | None,
                    block: Any) -> Any:
    from ggml_cy.quants import quantize as q
    return q(block, num, n_threads=_block_threads(n_threads, layout))


def _dequantize_block(num: int, blck: int, tsize: int, dtype: Any, n_threads: int | None,
                      layout: dict[str, int] | None, block: Any) -> Any:
    from ggml_cy.quants import dequantize as dq
    shape = block.shape[:-1] + (block.shape[-1] // tsize * blck,)
    return dq(np.ascontiguousarray(block), num, shape, dtype=dtype,
              n_threads=_block_threads(n_threads, layout))


def quantize(x: Any, type: Any, *, n_threads: int | None = None) -> Any:
    """``ggml_cy.quantize`` on a dask array of floats, block by block: the rows (last
    axis) become ggml's blocks, a lazy uint8 dask array of shape
    ``x.shape[:-1] + (row_bytes,)``. Chunks of the last axis are kept when each is a whole
    number of ggml blocks (their bytes are then ``chunk / blck_size * type_size``), else
    that axis is rechunked to whole rows; other axes keep their chunks."""
    if n_threads is not None:
        n_threads = _threads.check_num_threads(n_threads)
    x = _as_dask("x", x)
    if not isinstance(x, da.Array):
        raise TypeError(f"quantize: x must be a dask or numpy array, not {type(x).__name__}")
    if x.dtype.kind != "f":
        raise TypeError(f"quantize takes float16/float32/float64 data, not {x.dtype}")
    if x.ndim == 0:
        raise ValueError("quantize needs at least one axis (rows of values)")
    num, blck, tsize = _quant_traits(type)
    ne0 = x.shape[-1]
    if ne0 % blck:
        raise ValueError(f"row length {ne0} is not a multiple of the block size {blck}")
    last = _row_chunks(x.chunks[-1], blck, ne0)
    if last != x.chunks[-1]:
        x = x.rechunk(x.chunks[:-1] + (last,))
    out_chunks = x.chunks[:-1] + (tuple(c // blck * tsize for c in last),)
    layout = _cluster_layout() if n_threads is None else None
    return x.map_blocks(functools.partial(_quantize_block, num, n_threads, layout),
                        dtype=np.uint8, chunks=out_chunks,
                        meta=np.empty((0,) * x.ndim, dtype=np.uint8))


def dequantize(raw: Any, type: Any, *, dtype: Any = np.float32,
               n_threads: int | None = None) -> Any:
    """``ggml_cy.dequantize`` on a dask array of ggml blocks (uint8, shape
    ``rows... + (row_bytes,)``, as ``quantize`` makes them and GGUF stores them), block by
    block: a lazy float array of shape ``rows... + (row_bytes / type_size * blck_size,)``.
    Chunks of the last axis are kept when each holds whole ggml blocks, else that axis is
    rechunked to whole rows."""
    if n_threads is not None:
        n_threads = _threads.check_num_threads(n_threads)
    raw = _as_dask("raw", raw)
    if not isinstance(raw, da.Array) or raw.dtype != np.uint8 or raw.ndim == 0:
        raise TypeError("dequantize: raw must be a uint8 dask or numpy array with the "
                        "bytes of each row on its last axis")
    num, blck, tsize = _quant_traits(type)
    nb = raw.shape[-1]
    if nb % tsize:
        raise ValueError(f"dequantize: rows of {nb} bytes are not whole blocks of "
                         f"{tsize} bytes")
    from ggml_cy.quants import _out_kind
    out_dtype = _out_kind(dtype)[1]
    last = _row_chunks(raw.chunks[-1], tsize, nb)
    if last != raw.chunks[-1]:
        raw = raw.rechunk(raw.chunks[:-1] + (last,))
    out_chunks = raw.chunks[:-1] + (tuple(c // tsize * blck for c in last),)
    layout = _cluster_layout() if n_threads is None else None
    return raw.map_blocks(functools.partial(_dequantize_block, num, blck, tsize, dtype,
                                            n_threads, layout),
                          dtype=out_dtype, chunks=out_chunks,
                          meta=np.empty((0,) * raw.ndim, dtype=out_dtype))


# ----------------------------------------------------------------------------- GGUF
_OPEN: dict[str, Any] = {}


def _gguf_file(path: str) -> Any:
    from ggml_cy.gguf import load
    f = _OPEN.get(path)
    if f is None or f.closed:
        f = _OPEN[path] = load(path)
    return f


def _gguf_block(path: str, name: str, block_info: Any = None) -> Any:
    loc = block_info[None]["array-location"]
    slices = tuple(slice(a, b) for a, b in loc)
    f = _gguf_file(path)
    ti = f.tensors[name]
    if _NATIVE(ti):
        return f.numpy(name)[slices]          # a view of the memory map: pages read here
    rows = slices[:-1]
    raw = f.raw(name)
    row_bytes = ti.nbytes // max(1, int(np.prod(ti.shape[:-1], dtype=np.int64)))
    rr = raw.reshape(*ti.shape[:-1], row_bytes)[rows]
    from importlib import import_module
    dequantize = import_module("ggml_cy.quants").dequantize
    out = dequantize(np.ascontiguousarray(rr).reshape(-1), int(ti.type),
                     tuple(rr.shape[:-1]) + (ti.shape[-1],))
    return np.asarray(out)[..., slices[-1]]


def _NATIVE(ti: Any) -> bool:
    return ti.type_name.lower() in ("f32", "f16", "f64", "i8", "i16", "i32", "i64", "bf16")


def from_gguf(path: str, names: "list[str] | None" = None,
              chunks: Any = "auto") -> dict[str, Any]:
    """``chunks``: dask's chunks for every tensor ("auto", a tuple: its last entries are
    used for tensors of fewer dimensions, or a dict name -> chunks). The tensors of a GGUF file as lazy dask arrays (name -> dask array, numpy order),
    read from the file's memory map in the process that computes each block (the path
    must be readable there). Plain types keep their dtype (BF16 as uint16 bits);
    quantized types are dequantized to float32 block by block (whole rows per block)
    through ggml_cy.quants, and raise NotImplementedError when it is not built."""
    path = os.fspath(path)
    f = _gguf_file(path)
    out = {}
    for name in (list(f.tensors) if names is None else names):
        if name not in f.tensors:
            raise KeyError(f"{path}: no tensor {name!r}")
        ti = f.tensors[name]
        shape = tuple(int(s) for s in ti.shape)
        ch: Any = chunks
        if isinstance(chunks, dict):
            ch = chunks.get(name, "auto")
        if isinstance(ch, (tuple, list)) and len(ch) != len(shape):
            ch = tuple(ch[len(ch) - len(shape):]) if len(ch) > len(shape) else "auto"
        if _NATIVE(ti):
            dtype = f.numpy(name).dtype
        else:
            try:
                from importlib import import_module
                import_module("ggml_cy.quants").dequantize  # noqa: B018
            except (ImportError, AttributeError):
                raise NotImplementedError(
                    f"{path}: tensor {name!r} is {ti.type_name}; dequantizing it needs "
                    "ggml_cy.quants, which this build lacks") from None
            dtype = np.dtype(np.float32)
            lead = list(ch[:-1]) if isinstance(ch, (tuple, list)) else ["auto"] * (len(shape) - 1)
            ch = tuple(lead + [shape[-1]])      # whole rows: ggml blocks never split
        arr = da.map_blocks(_gguf_block, path, name, dtype=dtype,
                            chunks=da.core.normalize_chunks(ch, shape, dtype=dtype),
                            meta=np.empty((0,) * len(shape), dtype=dtype),
                            name=f"gguf-{os.path.basename(path)}-{name}-"
                                 f"{dask.base.tokenize(path, name, os.path.getmtime(path))}")
        out[name] = arr
    return out
