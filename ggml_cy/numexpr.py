"""``import ggml_cy.numexpr as ne``: numexpr's API on ggml_cy.

``ne.evaluate("2*a + 3*b")`` finds ``a`` and ``b`` in the caller's frame (or in
``local_dict`` / ``global_dict``), types the expression with numexpr's casting rules
(see ``ggml_cy.expr.language``) and computes it with ggml_cy: one fused multithreaded
pass when the whole expression is float32 or float64 arithmetic the fused executor
knows, ggml_cy's eager functions (numpy's ufuncs for what ggml_cy lacks) operation by
operation otherwise. Also: ``re_evaluate``, ``validate``, ``NumExpr``, ``E``,
``set_num_threads`` / ``get_num_threads`` (ggml_cy's thread count),
``detect_number_of_cores``. Like numexpr, floating-point warnings are not raised and
results are always arrays (0-d for a full reduction).

Not provided: string operations (``contains``, comparisons of byte strings:
NotImplementedError), ``disassemble`` (there is no numexpr bytecode), VML
(``use_vml`` is False). README's numexpr section lists the parts of numexpr's own test
suite that fail and why.
"""
import functools
import os
import re
import sys
import threading
import weakref

import numpy as np

from ggml_cy.cpu import threads as _threads
from ggml_cy.expr import language as _lang
from ggml_cy.expr.evaluate import evaluate as _fused_evaluate, fused_reduction as _fused_reduction

__all__ = ["evaluate", "re_evaluate", "validate", "NumExpr", "E", "set_num_threads",
           "get_num_threads", "detect_number_of_cores", "use_vml", "ncores", "nthreads",
           "MAX_THREADS"]

use_vml = False
MAX_THREADS = _threads.MAX_THREADS
_ORDERS = ("K", "C", "F", "A")
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_OPTIMIZATIONS = ("none", "moderate", "aggressive")


def detect_number_of_cores():
    """The number of online CPUs (as numexpr reports it)."""
    try:
        n = os.sysconf("SC_NPROCESSORS_ONLN")
        if isinstance(n, int) and n > 0:
            return n
    except (AttributeError, ValueError, OSError):
        pass
    return os.cpu_count() or 1


def set_num_threads(nthreads):
    """Sets ggml_cy's thread count (the same setting as ``ggml_cy.set_num_threads``);
    returns the previous value."""
    return _threads.set_num_threads(nthreads)


def get_num_threads():
    """ggml_cy's thread count."""
    return _threads.get_num_threads()


ncores = detect_number_of_cores()
nthreads = get_num_threads()


# ----------------------------------------------------------------------------- sanitize
# numexpr's sanitizer refuses ; : [ dunders and attribute access other than .real/.imag
# (outside single-quoted strings). Nothing here ever calls eval (the parser is ast-based
# with a whitelist), so this only reproduces numexpr's ValueError for those inputs.
_FORBIDDEN = re.compile(r"[;:\[]|__")


def _forbidden_attribute(text):
    """An attribute access other than .real/.imag (a '.' inside a number is fine)."""
    for m in re.finditer(r"\.", text):
        after = text[m.end():]
        if not after[:1] or not after[0].isidentifier():
            continue                      # 2. , 2.5 , .5
        if re.match(r"(?:real|imag)(?!\w)", after):
            continue
        if text[:m.start()][-1:].isdigit() and re.match(r"[eE][+-]?\d|[jJ](?!\w)", after):
            continue                      # 2.e5 , 3.j
        return True
    return False


def _sanitize_default():
    v = os.environ.get("NUMEXPR_SANITIZE")
    if v is None or v == "":
        return True
    try:
        return bool(int(v))
    except ValueError:
        return True


@functools.lru_cache(maxsize=512)
def _forbidden(ex):
    text = re.sub(r"'[^']*'", "", re.sub(r"\s+", "", ex))
    return _FORBIDDEN.search(text) is not None or _forbidden_attribute(text)


def _check_sanitized(ex, sanitize):
    if sanitize is None:
        sanitize = _sanitize_default()
    if sanitize and isinstance(ex, str) and _forbidden(ex):
        raise ValueError(f"Expression {ex} has forbidden control characters.")


# ----------------------------------------------------------------------------- compile
_typed_cache = {}
_cache_lock = threading.Lock()


def _compile(ex, kinds, optimization):
    key = (ex, tuple(sorted(kinds.items())), optimization)
    with _cache_lock:
        hit = _typed_cache.get(key)
    if hit is not None:
        return hit
    tree = _lang.parse(ex)
    typed = _lang.type_numexpr(tree, kinds, optimization)
    fused = None
    body = typed[3] if typed[0] == "reduce" else typed
    if body[0] in ("op", "name") and body[2] in ("float", "double"):
        fused = _lang.fused_source(body, body[2])
        if fused is not None and body[0] == "name":
            fused = None
    used = ()
    if fused is not None:
        used = tuple(n for n in kinds if re.search(rf"\b{re.escape(n)}\b", fused))
    entry = (typed, fused, used)
    with _cache_lock:
        if len(_typed_cache) > 256:
            _typed_cache.clear()
        _typed_cache[key] = entry
    return entry


def _check_args(out, order, casting, optimization):
    if order not in _ORDERS:
        raise ValueError(f"order must be one of {_ORDERS}, not {order!r}")
    if casting not in _CASTINGS:
        raise ValueError(f"casting must be one of {_CASTINGS}, not {casting!r}")
    if optimization not in _OPTIMIZATIONS:
        raise ValueError(f"optimization must be one of {_OPTIMIZATIONS}, not "
                         f"{optimization!r}")
    if out is not None and not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array, not {type(out).__name__}")


# numexpr's kind of each dtype seen (kind_of_array asks the dtype four or five questions:
# ~0.4 us an operand, a fifth of a 1e3-element call); unsupported dtypes are not kept
_KIND_OF_DTYPE = {}


def _kinds(arrays):
    kinds = {}
    for n, a in arrays.items():
        k = _KIND_OF_DTYPE.get(a.dtype)
        if k is None:
            k = _lang.kind_of_array(a)          # raises for what numexpr does not compute
            if len(_KIND_OF_DTYPE) < 64:
                _KIND_OF_DTYPE[a.dtype] = k
        kinds[n] = k
    return kinds


def _compute(ex, arrays, out, order, casting, optimization):
    """The value of ex (numexpr's typing) for arrays (name -> ndarray)."""
    kinds = _kinds(arrays)
    typed, fused, used_names = _compile(ex, kinds, optimization)
    with np.errstate(all="ignore"):
        result = None
        if fused is not None:
            body = typed[3] if typed[0] == "reduce" else typed
            used = {n: arrays[n] for n in used_names}
            direct = (typed[0] != "reduce" and out is not None
                      and out.dtype == _lang.KIND_DTYPE[body[2]] and out.flags.writeable
                      and 0 not in out.strides)
            if typed[0] == "reduce" and typed[4] is None and out is None:
                r = _fused_reduction(typed[1], fused, used)     # leaf by leaf, fused
                if r is not None:
                    return np.asarray(_lang._as_kind(r, typed[2]))
            try:
                if direct and ((used and all(a.shape == out.shape for a in used.values()))
                               or out.shape == tuple(np.broadcast_shapes(
                                   *(a.shape for a in used.values())))):
                    _fused_evaluate(fused, out=out, **used)
                    return _finish(out, out, order, casting)
                result = np.asarray(_fused_evaluate(fused, **used))
            except (ValueError, TypeError):
                result = None     # not for the fused path: computed below
            if result is not None and typed[0] == "reduce":
                result = _lang._reduce(typed[1], result, typed[4])
                result = _lang._as_kind(result, typed[2])
        if result is None:
            result = _lang.evaluate_typed(typed, arrays)
            if typed[0] == "name":
                result = np.array(result, copy=True)   # never an input itself
    return _finish(np.asarray(result), out, order, casting)


def _finish(result, out, order, casting):
    if out is not None:
        if out is result:
            return out
        if out.shape != result.shape:
            try:
                np.broadcast_to(result, out.shape)
            except ValueError:
                raise ValueError(f"output has shape {out.shape}; the result has shape "
                                 f"{result.shape}") from None
        np.copyto(out, result, casting=casting)
        return out
    if order == "F":
        return np.asfortranarray(result)
    if order == "C":
        return np.ascontiguousarray(result)
    return result


def _get_arguments(names, local_dict, global_dict, depth):
    frame = sys._getframe(depth)
    try:
        if local_dict is None:
            local_dict = frame.f_locals
        if global_dict is None:
            global_dict = frame.f_globals
        arrays = {}
        for name in names:
            # (a membership test, not try/except KeyError: a raised KeyError per global
            # name cost ~0.5 us)
            v = local_dict[name] if name in local_dict else global_dict[name]  # KeyError
            arrays[name] = np.asarray(v)
        return arrays
    finally:
        del frame


# ----------------------------------------------------------------------------- public
class _Last(threading.local):
    def __init__(self):
        self.ex = None
        self.names = None
        self.kwargs = None
        self.out_ref = None


_last = _Last()


def validate(ex, local_dict=None, global_dict=None, out=None, order="K",
             casting="same_kind", sanitize=None, _frame_depth=1, **kwargs):
    """Checks ex and its names (as numexpr.validate): returns None when ``re_evaluate``
    can compute it, else the exception (KeyError for a missing name, SyntaxError...)."""
    try:
        optimization = kwargs.pop("optimization", "aggressive")
        kwargs.pop("truediv", None)
        if kwargs:
            raise TypeError(f"unexpected keyword arguments {sorted(kwargs)}")
        _check_args(out, order, casting, optimization)
        _check_sanitized(ex, sanitize)
        names = _lang.names_of(_lang.parse(ex))
        arrays = _get_arguments(names, local_dict, global_dict, _frame_depth + 1)
        _compile(ex, _kinds(arrays), optimization)
        _last.ex, _last.names = ex, names
        _last.kwargs = (order, casting, optimization)
        _last.out_ref = weakref.ref(out) if out is not None else None
        return None
    except Exception as e:
        return e


def evaluate(ex, local_dict=None, global_dict=None, out=None, order="K",
             casting="same_kind", sanitize=None, _frame_depth=3, disable_cache=False,
             **kwargs):
    """numexpr.evaluate on ggml_cy: names come from local_dict, global_dict, or the
    caller's frame; ``out`` receives the result (cast with ``casting``); keyword
    ``optimization`` ('none' | 'moderate' | 'aggressive') and ``truediv`` are accepted
    as numexpr accepts them."""
    optimization = kwargs.pop("optimization", "aggressive")
    kwargs.pop("truediv", None)
    if kwargs:
        raise TypeError(f"evaluate() got unexpected keyword arguments {sorted(kwargs)}")
    _check_args(out, order, casting, optimization)
    _check_sanitized(ex, sanitize)
    names = _lang.expr_names(ex) if isinstance(ex, str) else _lang.names_of(_lang.parse(ex))
    arrays = _get_arguments(names, local_dict, global_dict, 2)
    result = _compute(ex, arrays, out, order, casting, optimization)
    if not disable_cache:
        _last.ex, _last.names = ex, names
        _last.kwargs = (order, casting, optimization)
        _last.out_ref = weakref.ref(out) if out is not None else None
    return result


def re_evaluate(local_dict=None, global_dict=None, _frame_depth=2):
    """Evaluates the last expression of this thread again, with the names looked up
    anew (and the same ``out`` while it is alive)."""
    if _last.ex is None:
        raise RuntimeError("A previous evaluate() execution was not found, please call "
                           "`validate` or `evaluate` once before `re_evaluate`")
    arrays = _get_arguments(_last.names, local_dict, global_dict, 2)
    order, casting, optimization = _last.kwargs
    out = _last.out_ref() if _last.out_ref is not None else None
    return _compute(_last.ex, arrays, out, order, casting, optimization)


def disassemble(nex):
    """Not available: ggml_cy does not compile to numexpr's bytecode."""
    raise NotImplementedError("ggml_cy.numexpr has no numexpr bytecode to disassemble")


_TYPE_KIND = {bool: "bool", np.bool_: "bool", int: "long", np.int32: "int",
              np.int64: "long", float: "double", np.float32: "float",
              np.float64: "double", complex: "complex", np.complex128: "complex"}


class NumExpr:
    """A compiled expression: ``NumExpr("2*a+3*b", [("a", np.double), ("b", np.double)])``
    called with the inputs in signature order (sorted names when no signature is given);
    ``ex`` may be a string or an ``E`` expression."""

    def __init__(self, ex, signature=(), sanitize=True, **kwargs):
        self.optimization = kwargs.pop("optimization", "aggressive")
        kwargs.pop("truediv", None)
        if kwargs:
            raise TypeError(f"NumExpr() got unexpected keyword arguments {sorted(kwargs)}")
        if isinstance(ex, _ENode):
            ex = ex._src
        elif not isinstance(ex, str):
            raise TypeError(f"ex must be a str or an E expression, not {type(ex).__name__}")
        _check_sanitized(ex, sanitize)
        self.ex = ex
        tree = _lang.parse(ex)
        names = _lang.names_of(tree)
        if signature:
            sig = [(str(n), _TYPE_KIND.get(t) or _kind_of_type(t)) for n, t in signature]
            if set(n for n, _ in sig) != set(names):
                raise ValueError(f"input names ({[n for n, _ in sig]}) don't match those "
                                 f"found in expression ({sorted(names)})")
        else:
            sig = [(n, "double") for n in sorted(names)]
        self.signature = sig
        self.input_names = tuple(n for n, _ in sig)
        kinds = dict(sig)
        typed = _compile(ex, kinds, self.optimization)[0]
        self.constants = _constants(typed)

    def run(self, *args, out=None, order="K", casting="safe", ex_uses_vml=False):
        if len(args) != len(self.input_names):
            raise ValueError(f"expected {len(self.input_names)} inputs "
                             f"({', '.join(self.input_names)}), got {len(args)}")
        _check_args(out, order, casting, self.optimization)
        arrays = {}
        for (name, kind), a in zip(self.signature, args):
            a = np.asarray(a)
            if self.signature and _lang.kind_of_array(a) != kind:
                a = a.astype(_lang.KIND_DTYPE[kind])
            arrays[name] = a
        return _compute(self.ex, arrays, out, order, casting, self.optimization)

    __call__ = run

    def __repr__(self):
        return f"NumExpr({self.ex!r}, {self.signature!r})"


def _kind_of_type(t):
    try:
        return _lang.kind_of_array(np.empty(0, dtype=t))
    except Exception:
        raise TypeError(f"unsupported signature type {t!r}") from None


def _constants(typed):
    found = []
    stack = [typed]
    while stack:
        t = stack.pop(0)
        if t[0] == "const":
            v = t[1]
            if not any(type(v) is type(f) and (v == f or (v != v and f != f))
                       for f in found):
                found.append(v)
        elif t[0] == "op":
            stack.extend(t[4])
        elif t[0] == "reduce":
            stack.append(t[3])
    return tuple(found)


class _ENode:
    """An expression built with Python operators (``2.0 * E.a + E.b``), for NumExpr."""
    __slots__ = ("_src",)

    def __init__(self, src):
        self._src = src

    def __str__(self):
        return self._src

    def __repr__(self):
        return f"E({self._src})"

    def __bool__(self):
        raise TypeError("You can't use Python's standard boolean operators on numexpr "
                        "expressions: use & | ~ instead of and, or, not")


def _src(x):
    if isinstance(x, _ENode):
        return f"({x._src})"
    if isinstance(x, (bool, int, float, complex, np.number, np.bool_)):
        return repr(x.item() if isinstance(x, np.generic) else x)
    raise TypeError(f"unsupported object type: {type(x)}")


def _binary(sym, reflected=False):
    def op(self, other):
        a, b = (other, self) if reflected else (self, other)
        return _ENode(f"{_src(a)} {sym} {_src(b)}")
    return op


for _name, _sym in (("add", "+"), ("sub", "-"), ("mul", "*"), ("truediv", "/"),
                    ("floordiv", "//"), ("mod", "%"), ("pow", "**"), ("lshift", "<<"),
                    ("rshift", ">>"), ("and", "&"), ("or", "|"), ("xor", "^")):
    setattr(_ENode, f"__{_name}__", _binary(_sym))
    setattr(_ENode, f"__r{_name}__", _binary(_sym, True))
for _name, _sym in (("lt", "<"), ("le", "<="), ("eq", "=="), ("ne", "!="), ("gt", ">"),
                    ("ge", ">=")):
    setattr(_ENode, f"__{_name}__", _binary(_sym))
_ENode.__hash__ = None
_ENode.__neg__ = lambda self: _ENode(f"-{_src(self)}")
_ENode.__pos__ = lambda self: self
_ENode.__invert__ = lambda self: _ENode(f"~{_src(self)}")


class _Expression:
    """``E.a`` is the variable ``a`` of an expression built with operators."""

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return _ENode(name)


E = _Expression()
