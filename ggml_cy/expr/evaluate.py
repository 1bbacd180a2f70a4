"""``ggml_cy.evaluate("a*b + c*d - e", a=..., ...)``: elementwise expressions on numpy
arrays, run as one fused pass over the data (numexpr's idea, on ggml's graph executor).

The expression is parsed with Python's ``ast`` (never ``eval``), turned into ggml graph
nodes in a throw-away ``no_alloc`` context whose leafs point at the numpy arrays (no
copies), and computed by the graph executor: consecutive elementwise nodes run as one
fused group, block by block, with intermediates in per-thread cache-sized scratch, so
memory sees the inputs once and the output once. Results are bitwise what the unfused
graph (and numpy, for + - * /) computes.

Grammar: names, numeric constants, ``+ - * / // % **``, unary ``-``/``+``, and calls of
the functions in ``FUNCTIONS`` (numpy's names). Inputs: float32/float64 arrays (or
Python/numpy floats), broadcast as numpy broadcasts. Every operation is typed as numpy
types it (NEP 50): constant parts are folded as Python computes them, and a tree that
numpy would compute partly in float32 and partly in float64 runs operation by operation
through ggml_cy's eager functions (see _typed).
"""
import ast
import functools
import math
import operator
from typing import Any

import numpy as np

from ggml_cy.core import _core, optable
from ggml_cy.graph import _graph
from ggml_cy.cpu import threads as _threads
# aligned_empty: results on a cache-line boundary, so that the fused executor streams them
# out in whole lines (numpy aligns to 16 bytes)
from ggml_cy.core._core import GGMLType, aligned_empty
from ggml_cy import ufuncs as _ufuncs
from ggml_cy.ufuncs import fpe as _fpe
from ggml_cy.expr import language as _language
from ggml_cy.expr import _call

__all__ = ["evaluate", "FUNCTIONS"]

# The operators and functions come from the op table (ggml_cy/core/optable.py): a row's
# `operator` ("+", "**", ...) maps a Python operator to its builder, its `evaluate` names
# are the functions evaluate() accepts (numpy's names), called with the row's arity.
_AST_OF_SYMBOL = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div,
                  "//": ast.FloorDiv, "%": ast.Mod, "**": ast.Pow}
_BINOPS = {_AST_OF_SYMBOL[o.operator]: o.builder for o in optable.OPS
           if o.operator in _AST_OF_SYMBOL}

# numpy name -> (builder, number of arguments)
FUNCTIONS = {name: (o.builder, 2 if o.kind == "binary" else 1)
             for o in optable.OPS if o.builder for name in o.evaluate}

_COMMUTATIVE = {"add", "mul"}   # bitwise commutative in IEEE arithmetic
_MAX_DIMS = 4
_TYPES = {np.dtype(np.float32): GGMLType.F32, np.dtype(np.float64): GGMLType.F64}


# ----------------------------------------------------------------------------- parsing
def _parse(expr):
    if not isinstance(expr, str):
        raise TypeError(f"expr must be a str, not {type(expr).__name__}")
    return _parse_str(expr)


# Bounds on an expression: the tree is walked recursively (parse, typing, graph building),
# one Python frame per level, so its depth stays well below Python's recursion limit; and
# every operation becomes a graph node.
MAX_DEPTH = 200
MAX_NODES = 20_000


def _short(expr):
    return repr(expr) if len(expr) <= 80 else repr(expr[:60]) + f"... ({len(expr)} characters)"


def _check_size(root, expr):
    """Raises ValueError when the tree is deeper than MAX_DEPTH or has more than
    MAX_NODES nodes (walked without recursion, so any tree is measured safely)."""
    stack, n = [(root, 1)], 0
    while stack:
        node, depth = stack.pop()
        n += 1
        if depth > MAX_DEPTH:
            raise ValueError(f"evaluate: expression {_short(expr)} is too deep (more than "
                             f"{MAX_DEPTH} nested operations); split it into several "
                             "evaluate calls")
        if n > MAX_NODES:
            raise ValueError(f"evaluate: expression {_short(expr)} is too long (more than "
                             f"{MAX_NODES} syntax nodes); split it into several evaluate "
                             "calls")
        stack.extend((c, depth + 1) for c in ast.iter_child_nodes(node))


@functools.lru_cache(maxsize=256)
def _parse_str(expr):
    """The checked tree of an expression (cached: trees are immutable tuples)."""
    try:
        tree = _language.parse_eval(expr.strip())
    except SyntaxError as e:
        raise SyntaxError(f"evaluate: cannot parse {_short(expr)}: {e.msg}") from None
    except (RecursionError, MemoryError):
        # CPython's parser gives up on very deep nesting (1e5 terms, long unary chains)
        raise ValueError(f"evaluate: expression {_short(expr)} is too deep or too long for "
                         "Python's parser; split it into several evaluate calls") from None
    except ValueError as e:   # source code with NUL bytes
        raise ValueError(f"evaluate: cannot parse {_short(expr)}: {e}") from None
    _check_size(tree.body, expr)
    return _check(tree.body, expr)


# Constant subexpressions are computed as Python would before numpy sees them, so that
# evaluate() gives what evaluating the expression with numpy gives: arithmetic on Python
# numbers in double precision, its result a weak scalar (NEP 50: it takes the arrays'
# dtype); a numpy function of constants (np.abs(1.5)) is a float64 scalar, which is strong
# (it promotes float32 arrays to float64). ("sconst", v) marks those.
_PY_OF_SYMBOL = {"+": operator.add, "-": operator.sub, "*": operator.mul,
                 "/": operator.truediv, "//": operator.floordiv, "%": operator.mod,
                 "**": operator.pow}
_PY_BINOPS = {o.builder: _PY_OF_SYMBOL[o.operator] for o in optable.OPS
              if o.operator in _PY_OF_SYMBOL}
_CONSTS = ("const", "sconst")


def _fold_binary(op, left, right, expr):
    strong = left[0] == "sconst" or right[0] == "sconst"
    try:
        if strong:   # numpy float64 arithmetic (inf/nan instead of exceptions, as numpy)
            with np.errstate(all="ignore"):
                v = _PY_BINOPS[op](np.float64(left[1]), np.float64(right[1]))
        else:
            v = _PY_BINOPS[op](left[1], right[1])
    except ZeroDivisionError:
        raise ZeroDivisionError(f"evaluate: division by zero in a constant part of "
                                f"{expr!r} (Python raises it there too)") from None
    except OverflowError:
        raise OverflowError(f"evaluate: a constant part of {expr!r} overflows") from None
    if isinstance(v, complex) or not isinstance(v, (int, float, np.floating)):
        raise TypeError(f"evaluate: a constant part of {expr!r} is not a real number ({v!r})")
    return ("sconst" if strong else "const", float(v))


def _fold_call(name, args):
    with np.errstate(all="ignore"):
        return ("sconst", float(getattr(np, name)(*(np.float64(a[1]) for a in args))))


def _check(node, expr):
    """Validates the tree; returns it as nested tuples:
    ("name", n) | ("const", v) | ("sconst", v) | ("bin", op, l, r) | ("un", builder, x)."""
    if isinstance(node, ast.Name):
        return ("name", node.id)
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"evaluate: constant {v!r} in {expr!r} is not a real number")
        return ("const", float(v))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        x = _check(node.operand, expr)
        if isinstance(node.op, ast.UAdd):
            return x
        if x[0] in _CONSTS:
            return (x[0], -x[1])
        return ("un", "neg", x)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _check(node.left, expr), _check(node.right, expr)
        op = _BINOPS[type(node.op)]
        if left[0] in _CONSTS and right[0] in _CONSTS:
            return _fold_binary(op, left, right, expr)
        if op == "pow" and right[0] == "const" and right[1] == 2.0:
            return ("un", "sqr", left)    # numpy computes x**2 as x*x
        if op == "pow" and right[0] == "const" and right[1] == 0.5:
            return ("un", "sqrt", left)   # and x**0.5 as sqrt(x)
        return ("bin", op, left, right)
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            name = getattr(node.func, "id", ast.unparse(node.func))
            raise ValueError(f"evaluate: unknown function {name!r} in {expr!r} "
                             f"(known: {', '.join(sorted(FUNCTIONS))})")
        builder, nargs = FUNCTIONS[node.func.id]
        if node.keywords or len(node.args) != nargs:
            raise TypeError(f"evaluate: {node.func.id}() takes {nargs} positional "
                            f"argument{'s' if nargs > 1 else ''} in {expr!r}")
        args = [_check(a, expr) for a in node.args]
        if all(a[0] in _CONSTS for a in args) and hasattr(np, node.func.id):
            return _fold_call(node.func.id, args)
        if nargs == 1:
            return ("un", builder, args[0])
        return ("bin", builder, args[0], args[1])
    raise ValueError(f"evaluate: unsupported syntax {ast.unparse(node)!r} in {expr!r} "
                     "(allowed: names, numbers, + - * / // % **, unary -, function calls)")


# ----------------------------------------------------------------------------- typing
# numpy types every operation on its own (NEP 50): a float32 subexpression stays float32
# even when the whole expression ends up float64. The fused executor computes the whole
# tree in one dtype, which is that only when every strong operand has it ("uniform");
# other trees are computed operation by operation with ggml_cy's numpy-exact eager
# functions (still multithreaded, just not fused).
_EAGER_BINARY = {o.builder: o.eager[0] for o in optable.OPS
                 if o.kind == "binary" and o.builder and o.eager}
_EAGER_UNARY = {o.builder: o.eager[0] for o in optable.OPS
                if o.kind == "unary" and o.builder and o.eager}

def _typed(tree, inputs, weak, seen):
    """numpy's dtype of tree (None: a weak Python number); adds every strong dtype met
    to `seen`."""
    kind = tree[0]
    if kind == "name":
        t = None if weak[tree[1]] else inputs[tree[1]].dtype
    elif kind == "const":
        t = None
    elif kind == "sconst":
        t = np.dtype(np.float64)
    elif kind == "un":
        t = _typed(tree[2], inputs, weak, seen)
        if t is None:   # a numpy function of a Python number: a float64 scalar
            t = np.dtype(np.float64)
    else:
        l = _typed(tree[2], inputs, weak, seen)
        r = _typed(tree[3], inputs, weak, seen)
        if l is None and r is None and tree[1] in _PY_BINOPS:
            t = None    # Python arithmetic on two Python numbers: weak (and in double)
            seen.add("weak-pair")
        elif l is None or r is None:
            t = l if r is None else r
            if t is None:
                t = np.dtype(np.float64)
        else:
            t = np.result_type(l, r)
    if t is not None:
        seen.add(t)
    return t


def _eager_eval(tree, values):
    """The tree computed operation by operation as numpy would (values: name -> array, or
    Python float for weak inputs)."""
    ufuncs = _ufuncs
    kind = tree[0]
    if kind == "name":
        return values[tree[1]]
    if kind == "const":
        return tree[1]
    if kind == "sconst":
        return np.float64(tree[1])
    if kind == "un":
        x = _eager_eval(tree[2], values)
        return getattr(ufuncs, _EAGER_UNARY.get(tree[1], tree[1]))(x)
    l, r = _eager_eval(tree[2], values), _eager_eval(tree[3], values)
    if type(l) is float and type(r) is float and tree[1] in _PY_BINOPS:
        return float(_PY_BINOPS[tree[1]](l, r))
    return getattr(ufuncs, _EAGER_BINARY[tree[1]])(l, r)


def _names(tree, acc):
    kind = tree[0]
    if kind == "name":
        acc.append(tree[1])
    elif kind == "un":
        _names(tree[2], acc)
    elif kind == "bin":
        _names(tree[2], acc)
        _names(tree[3], acc)
    return acc


def _count(tree):
    """(nodes, leafs) the tree needs (each leaf may get two headers)."""
    kind = tree[0]
    if kind in ("name",) + _CONSTS:
        return 0, 2
    if kind == "un":
        n, l = _count(tree[2])
        return n + 1, l
    n1, l1 = _count(tree[2])
    n2, l2 = _count(tree[3])
    return n1 + n2 + 1, l1 + l2


# ----------------------------------------------------------------------------- layout
def _collapse(shape, strides_list):
    """Drops size-1 dims and merges adjacent dims that every operand walks contiguously
    (stride[i] == stride[i+1] * shape[i+1]; broadcast dims have stride 0 and merge with
    other broadcast dims). Returns (shape, [strides per operand]), outermost first."""
    dims = [i for i, n in enumerate(shape) if n != 1]
    shape2 = [shape[i] for i in dims]
    strides2 = [[s[i] for i in dims] for s in strides_list]
    i = len(shape2) - 2
    while i >= 0:
        if all(s[i] == s[i + 1] * shape2[i + 1] for s in strides2):
            shape2[i] *= shape2[i + 1]
            del shape2[i + 1]
            for s in strides2:
                s[i] = s[i + 1]
                del s[i + 1]
        i -= 1
    return shape2, strides2


class _Builder:
    def __init__(self, ctx, arrays, shape, strides, rtype):
        self.ctx = ctx
        self.arrays = arrays      # name -> array (broadcast to shape, result dtype)
        self.shape = shape        # collapsed output shape, outermost first
        self.strides = strides    # name -> collapsed strides
        self.rtype = rtype
        self.keep = []            # arrays that must outlive the compute
        self.bound = []           # (leaf tensor, input name): re-pointed on every call
        self.cache = {}

    def _ne(self, shape):
        ne = list(reversed(shape)) + [1] * (_MAX_DIMS - len(shape))
        return ne

    def leaf(self, key, arr, strides, expanded):
        """A header describing arr: natural (ne 1 on broadcast dims, so it tiles) or
        expanded (full ne, stride 0 on broadcast dims, usable as src0)."""
        ck = (key, expanded)
        if ck in self.cache:
            return self.cache[ck]
        ne = [n if (expanded or s != 0) else 1 for n, s in zip(self.shape, strides)]
        t = self.ctx.new_tensor(self.rtype, self._ne(ne))
        nb = list(reversed(strides)) + [0] * (_MAX_DIMS - len(strides))
        _graph.set_layout(t, arr.ctypes.data, nb)
        if key[0] == "n":
            self.bound.append((t, key[1]))
        self.cache[ck] = t
        return t

    def build(self, tree, expanded):
        kind = tree[0]
        if kind == "name":
            name = tree[1]
            return self.leaf(("n", name), self.arrays[name], self.strides[name], expanded)
        if kind in _CONSTS:
            arr = np.full((), tree[1], dtype=self.arrays_dtype)
            self.keep.append(arr)
            return self.leaf(("c", len(self.keep)), arr, [0] * len(self.shape), expanded)
        if kind == "un":
            x = self.build(tree[2], True)
            return getattr(self.ctx, tree[1])(x)
        op, left, right = tree[1], tree[2], tree[3]
        if op in _COMMUTATIVE and left[0] in ("name",) + _CONSTS and right[0] not in ("name",) + _CONSTS:
            left, right = right, left  # keep the full-shape operand as src0
        a = self.build(left, True)
        b = self.build(right, False)
        return getattr(self.ctx, op)(a, b)


# ndarray subclasses evaluate can honour: their data is all there is (memmap); others
# (masked arrays, matrix, ...) carry meaning the fused pass would drop silently.
_PLAIN_SUBCLASSES = (np.memmap,)


def _plain(name, value):
    if type(value) is not np.ndarray and not isinstance(value, _PLAIN_SUBCLASSES):
        what = ("a masked array (its mask would be lost)"
                if isinstance(value, np.ma.MaskedArray) else
                f"an instance of the ndarray subclass {type(value).__name__}")
        raise TypeError(f"evaluate: {name} is {what}; evaluate computes on plain numpy "
                        f"arrays: pass np.asarray({name}) to drop the subclass, or compute "
                        "with numpy, which honours it")
    return value


def _as_input(name, value):
    if isinstance(value, np.ndarray):
        arr = _plain(f"input {name!r}", value)
    elif isinstance(value, (float, int, np.floating, np.integer)) and not isinstance(value, bool):
        arr = np.asarray(value, dtype=np.float64 if not isinstance(value, np.floating)
                         else value.dtype)
        if not isinstance(value, np.generic):
            return arr, True   # a Python number: weak, takes the others' dtype
    else:
        raise TypeError(f"evaluate: input {name!r} must be a numpy array or a real "
                        f"number, not {type(value).__name__}")
    if arr.dtype not in _TYPES:
        raise TypeError(f"evaluate: input {name!r} has dtype {arr.dtype}; float32 and "
                        "float64 are supported")
    return arr, False


def _broadcast_strides(arr, shape):
    """arr's byte strides when broadcast to shape (0 along broadcast dims), without
    building the broadcast view."""
    pad = len(shape) - arr.ndim
    return [0] * pad + [0 if (n == 1 and shape[pad + i] != 1) else st
                        for i, (n, st) in enumerate(zip(arr.shape, arr.strides))]


# Compiled expressions and their per-call path live in _call.pyx (the cache, its key, the
# re-pointing and planning): names kept here for the tests and the tools.
_PLAN_CACHE = _call.CACHE
_PLAN_CACHE_SIZE = _call.CACHE_SIZE
_KEEP_SCRATCH_BYTES = _call.KEEP_SCRATCH_BYTES
_keep_untouched_scratch = _call.keep_untouched_scratch


def _compile(tree, inputs, cshape, strides, dtype, nb_out, result):
    n_nodes, n_leafs = _count(tree)
    n_nodes += 1
    gsize = max(n_nodes, n_leafs, 1)
    from ggml_cy.graph.context import Context
    mem = ((n_nodes + n_leafs + 4) * _core.tensor_overhead()
           + Context.graph_overhead(gsize) + 1024)
    ctx = Context(mem, no_alloc=True)
    b = _Builder(ctx, inputs, cshape, strides, _TYPES[dtype])
    b.arrays_dtype = dtype
    root = b.build(tree, True)
    if root.op == 0:  # a bare name or constant: copy it
        root = ctx.dup(root)
    # memory: the result for the root; the other nodes get fresh buffers on every call
    # (_call.scratch_buffer)
    graph = ctx.new_graph(gsize)
    graph.build_forward_expand(root)
    scratch, scratch_idx, offset = [], [], 0
    for i, node in enumerate(graph.nodes):
        if node == root:
            _graph.set_layout(node, result.ctypes.data, nb_out)
        elif not node.has_data:
            scratch.append((node, offset))
            scratch_idx.append(i)
            offset += (node.nbytes + 63) // 64 * 64
    tensors = [t for t, _ in b.bound] + [root]
    names = [n for _, n in b.bound]
    return _call.Compiled(ctx, graph, tensors, names, b.keep, scratch, scratch_idx,
                          (result.shape, dtype))


def _resolve_threads(n_threads):
    return (_graph.default_n_threads() if n_threads is None
            else _threads.check_num_threads(n_threads))


def _internal_overlap(a):
    """A zero stride on a dim longer than 1: several elements of `a` share one address."""
    return any(st == 0 and n > 1 for n, st in zip(a.shape, a.strides))


# builders whose floating-point exceptions numpy reports (the eager functions' FE_OPS);
# comparisons, max/min, rounding, sign and the activations report nothing
_FE_OPS = {o.builder: o.eager[0] for o in optable.OPS
           if o.fe and o.builder and o.eager and optable.elementwise(o)}


def _first_fe_op(tree):
    """numpy's name of the first operation (in evaluation order) that can raise FP
    exceptions, or None."""
    if tree[0] not in ("un", "bin"):
        return None
    for sub in tree[2:]:
        name = _first_fe_op(sub)
        if name is not None:
            return name
    return _FE_OPS.get(tree[1])


def _fpe_reaction(tree, values, result, flags):
    """numpy's reaction (np.geterr / np.errstate) to the FP exceptions a fused pass
    raised: nothing when every raised kind is ignored; else the expression is computed
    again operation by operation with the eager functions, which warn/raise/call exactly
    as numpy's ufuncs do (a fused pass cannot tell which operation raised what, and max,
    comparisons... raise flags numpy does not report). When the result overwrote an input
    (out= aliasing it) the flags are reported for the first operation that can raise."""
    err = np.geterr()
    if all(err[key] == "ignore" for fe, _n, key, _t in _fpe._TABLE if flags & fe):
        return
    name = _first_fe_op(tree)
    if name is None:
        return
    if any(isinstance(v, np.ndarray) and np.may_share_memory(result, v)
           for v in values.values()):
        _fpe.report(flags, name, stacklevel=4)
        return
    _eager_eval(tree, values)


def _finish(result, out):
    """A 0-d result is returned as a numpy scalar, as numpy's ufuncs do (unless out=)."""
    if out is None and result.ndim == 0:
        return result[()]
    return result


def _evaluate_full(expr, n_threads, out, arrays):
    """evaluate() when the fast path (_call.evaluate) found no compiled entry for these
    operands: parse, type, check, compile (or take the entry under the merged layout)."""
    try:
        tree = _parse(expr)
    except (ValueError, TypeError) as exc:
        # outside the fused grammar (comparisons, where, &|~, reductions, complex or bool
        # constants, numexpr's functions...): numexpr's language, typed as numpy types
        # it; what neither grammar accepts raises the fused parser's error
        try:
            _language.parse(expr)
        except Exception as exc2:
            if "unsupported syntax" in str(exc) or "unknown function" in str(exc):
                raise exc2 from None
            raise exc from None
        return _evaluate_language(expr, n_threads, out, arrays)
    names = _names(tree, [])
    if any(_language_input(arrays.get(n)) for n in names):
        return _evaluate_language(expr, n_threads, out, arrays)
    missing = sorted(set(names) - set(arrays))
    if missing:
        raise NameError(f"evaluate: unknown name{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(repr(m) for m in missing)} in {_short(expr)} "
                        "(pass them as keyword arguments)")
    n_threads = _resolve_threads(n_threads)
    inputs, weak = {}, {}
    for name in dict.fromkeys(names):
        inputs[name], weak[name] = _as_input(name, arrays[name])
    seen = set()
    dtype = _typed(tree, inputs, weak, seen) or np.dtype(np.float64)
    uniform = seen <= {dtype}
    try:
        shape = tuple(np.broadcast_shapes(*(a.shape for a in inputs.values())))
    except ValueError:
        shapes = ", ".join(f"{n} {a.shape}" for n, a in inputs.items())
        raise ValueError(f"evaluate: operands could not be broadcast together: {shapes}") from None
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"evaluate: out must be a numpy array, not {type(out).__name__}")
        _plain("out", out)
        if out.shape != shape or out.dtype != dtype:
            raise ValueError(f"evaluate: out has shape {out.shape} and dtype {out.dtype}; "
                             f"the result has shape {shape} and dtype {dtype}")
        if not out.flags.writeable:
            raise ValueError("evaluate: out is read-only")
        if _internal_overlap(out):
            # several elements share an address: computed apart, then written in numpy's
            # order, so the last element's value stays (as numpy's ufuncs leave it)
            result = aligned_empty(shape, dtype)
            evaluate(expr, n_threads=n_threads, out=result, **arrays)
            np.copyto(out, result, casting="no")
            return out
        result = out
    else:
        result = aligned_empty(shape, dtype)
    if result.size == 0:
        return _finish(result, out)
    if not uniform:
        values = {n: (float(a) if weak[n] else a) for n, a in inputs.items()}
        r = _eager_eval(tree, values)       # reports FP exceptions as numpy does
        np.copyto(result, r, casting="no")
        return _finish(result, out)
    converted = False       # an array operand converted (numbers are, every call: the
    for name in inputs:     # fast path converts them the same way, _call.store_number)
        if inputs[name].dtype != dtype:
            if isinstance(arrays[name], np.ndarray):
                inputs[name] = inputs[name].astype(dtype)
                converted = True
            else:
                # a number: as numpy converts it, an overflow reported ("overflow
                # encountered in cast"), an underflow to float32 not
                with np.errstate(under="ignore"):
                    inputs[name] = inputs[name].astype(dtype)
    order = list(inputs)
    cshape, cstrides = _collapse(list(shape), [list(result.strides)] +
                                 [_broadcast_strides(inputs[n], shape) for n in order])
    if len(cshape) > _MAX_DIMS:
        raise ValueError(f"evaluate: the operands' layouts need {len(cshape)} dimensions "
                         f"after merging; at most {_MAX_DIMS} are supported (make the "
                         "inputs contiguous)")
    # the entry is filed under the fast key when the array operands went in as given (no
    # conversion: the layout key then determines everything compiled), else under the
    # merged layout
    fast_key = _call.layout_key(expr, out, arrays)
    if fast_key is not None and not converted:
        key, compiled = fast_key, None
    else:
        key = (expr, dtype.char, tuple(cshape), tuple(map(tuple, cstrides)), tuple(order))
        compiled = _call.take(key)
    if compiled is None:
        strides = dict(zip(order, cstrides[1:]))
        nb_out = list(reversed(cstrides[0])) + [0] * (_MAX_DIMS - len(cshape))
        compiled = _compile(tree, inputs, cshape, strides, dtype, nb_out, result)
    flags = _call.run_compiled(compiled, inputs, result, n_threads, key, result is not out)
    if flags:
        values = {n: (float(a) if weak[n] else a) for n, a in inputs.items()}
        _fpe_reaction(tree, values, result, flags)
    return _finish(result, out)


# ----------------------------------------------------------------------------- language
def _language_input(v):
    """Inputs only the general path computes: bool, integer, complex and float16 arrays
    and bool/complex numbers (byte-swapped arrays keep the fused path's TypeError)."""
    if isinstance(v, np.ndarray):
        dt = v.dtype
        return dt.isnative and (dt.kind in "biuc" or (dt.kind == "f" and dt not in _TYPES))
    return isinstance(v, (bool, complex, np.bool_, np.complexfloating))


def _evaluate_language(expr, n_threads, out, arrays):
    """The general path (``language.py``): every operation computed as numpy computes
    the same expression (NEP 50 typing), with ggml_cy's eager functions where they exist;
    the result is numpy's, bit for bit. Reductions (sum/prod/min/max) must be the last
    operation."""
    tree = _language.parse(expr)
    names = _language.names_of(tree)
    missing = sorted(set(names) - set(arrays))
    if missing:
        raise NameError(f"evaluate: unknown name{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(repr(m) for m in missing)} in {_short(expr)} "
                        "(pass them as keyword arguments)")
    n_threads = None if n_threads is None else _threads.check_num_threads(n_threads)
    if tree[0] == "reduce" and tree[3] is None and out is None:
        r = fused_reduction(tree[1], _body_source(expr), {n: arrays[n] for n in names},
                            n_threads)
        if r is not None:
            return r
    values = {}
    for name in names:
        v = arrays[name]
        if isinstance(v, np.ndarray):
            _plain(f"input {name!r}", v)
            if v.dtype.kind not in "biufc" or not v.dtype.isnative:
                raise TypeError(f"evaluate: input {name!r} has dtype {v.dtype}; bool, "
                                "integer, float and complex arrays (native byte order) "
                                "are supported")
        elif not isinstance(v, (bool, int, float, complex, np.bool_, np.number)):
            raise TypeError(f"evaluate: input {name!r} must be a numpy array or a "
                            f"number, not {type(v).__name__}")
        values[name] = v
    if out is not None and not isinstance(out, np.ndarray):
        raise TypeError(f"evaluate: out must be a numpy array, not {type(out).__name__}")
    if n_threads is None:
        r = _language.evaluate_numpy(tree, values)
    else:
        with _threads.threads(n_threads):
            r = _language.evaluate_numpy(tree, values)
    r = np.asarray(r)
    if out is None:
        return r[()] if r.ndim == 0 else r
    _plain("out", out)
    if out.shape != r.shape or out.dtype != r.dtype:
        raise ValueError(f"evaluate: out has shape {out.shape} and dtype {out.dtype}; "
                         f"the result has shape {r.shape} and dtype {r.dtype}")
    if not out.flags.writeable:
        raise ValueError("evaluate: out is read-only")
    np.copyto(out, r, casting="no")
    return out


# ----------------------------------------------------------------------------- reductions
# A final sum/prod/min/max over all elements, fused with the elementwise pass: the
# expression is computed in leaves of at most _LEAF elements (a cache-sized buffer, never
# the whole intermediate) and each leaf is reduced at once. sum follows numpy's pairwise
# summation tree (a range of n > 128 elements splits at n/2 rounded down to a multiple of
# 8; the leaves are such ranges), prod multiplies leaf after leaf from the running product
# (numpy's sequential loop), min/max combine leaf results: all three give numpy's bits.
_LEAF = 1 << 16


def _body_source(expr):
    node = _language.parse_eval(expr.strip()).body
    return ast.unparse(node.args[0])


def fused_reduction(name, body, arrays, n_threads=None):
    """numpy's ``np.<name>(<body>)`` over all elements computed leaf by leaf with the
    fused executor, or None when this does not apply (the body outside the fused grammar,
    inputs other than same-shape C-contiguous float32/float64 arrays and numbers, fewer
    than two leaves of elements, or an output dtype other than float32/float64)."""
    if name not in ("sum", "prod", "min", "max"):
        return None
    try:
        _parse(body)
    except Exception:
        return None
    shape = None
    flat, scalars = {}, {}
    for n, v in arrays.items():
        if isinstance(v, np.ndarray) and type(v) is np.ndarray and v.ndim > 0:
            if v.dtype not in _TYPES or not v.flags.c_contiguous:
                return None
            if shape is None:
                shape = v.shape
            elif v.shape != shape:
                return None
            flat[n] = v.reshape(-1)
        elif isinstance(v, (float, int, np.floating)) and not isinstance(v, bool):
            scalars[n] = v
        else:
            return None
    if shape is None or not flat:
        return None
    size = math.prod(shape)
    if size <= _LEAF:
        return None
    probe = evaluate(body, **{n: a[:1] for n, a in flat.items()}, **scalars)
    dtype = np.asarray(probe).dtype
    if dtype not in _TYPES:
        return None
    buf = aligned_empty((_LEAF,), dtype)

    def leaf(i, n):
        out = buf[:n]
        evaluate(body, n_threads=n_threads, out=out,
                 **{k: a[i:i + n] for k, a in flat.items()}, **scalars)
        return out

    if name == "sum":
        def tree(i, n):
            if n <= _LEAF:
                return np.add.reduce(leaf(i, n))
            n2 = n // 2
            n2 -= n2 % 8
            return tree(i, n2) + tree(i + n2, n - n2)
        return tree(0, size)
    if name == "prod":
        r = None
        for i in range(0, size, _LEAF):
            v = leaf(i, min(_LEAF, size - i))
            r = np.multiply.reduce(v) if r is None else np.multiply.reduce(v, initial=r)
        return r
    reduce = np.minimum.reduce if name == "min" else np.maximum.reduce
    parts = [reduce(leaf(i, min(_LEAF, size - i))) for i in range(0, size, _LEAF)]
    return reduce(np.asarray(parts, dtype=dtype))


def _fast_fpe(expr, arrays, result, flags):
    """The fast path's FP exception reaction (it holds the expression, not its tree; a
    Python int operand re-runs as the float the full path makes of it)."""
    values = {n: (float(v) if type(v) is int else v) for n, v in arrays.items()}
    _fpe_reaction(_parse(expr), values, result, flags)


_call.set_paths(_evaluate_full, _fast_fpe)
evaluate = _call.evaluate
