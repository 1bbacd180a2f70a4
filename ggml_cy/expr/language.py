"""numexpr's expression language for ``ggml_cy.evaluate`` and ``ggml_cy.numexpr``.

Beyond the fused float arithmetic of ``evaluate.py`` this module understands the rest of
what numexpr users write: comparisons ``< <= == != >= >``, ``& | ^ ~`` (logical on
booleans, bitwise on integers), shifts ``<< >>``, ``where(cond, x, y)``, every numexpr
function (``sin ... arctanh``, ``log10``, ``log2``, ``arctan2``, ``fmod``, ``hypot``,
``nextafter``, ``copysign``, ``isnan``/``isfinite``/``isinf``/``signbit``, ``conj``,
``real``, ``imag``, ``complex``, ``.real``/``.imag``, ``round``, ``copy``,
``ones_like``), boolean / int32 / int64 / complex inputs, and the final reductions
``sum prod min max (expr, axis=None)``. ``contains`` (string search) is refused with
NotImplementedError.

Two typing rules, one grammar:

* ``mode="numpy"`` (``ggml_cy.evaluate``): every operation is typed and computed as the
  same expression written with numpy would be (NEP 50: Python numbers are weak).
* ``mode="numexpr"`` (``ggml_cy.numexpr``): numexpr's rules. Every value has a *kind*
  (bool < int32 < int64 < float32 < float64 < complex128); an operation takes the highest
  kind of its operands (so int64 + float32 is float32, and a Python float constant is a
  float64, so ``a32 * 2.0`` is float64), integer kinds of float functions and of ``/``
  become float64, comparisons and ``isnan``... are bool, ``real``/``imag`` float64,
  ``conj``/``complex`` complex128, int8/int16/uint8/uint16 inputs count as int32 and
  uint32 as int64, complex64 as complex128; constant subexpressions are folded as
  Python folds them.

Values are computed with ggml_cy's multithreaded numpy-exact eager functions where they
exist (arithmetic, comparisons, logical ops, exp/log/sqrt/sin/cos/tanh, rounding...) and
numpy's ufuncs elsewhere (tan, arc*, sinh/cosh, log10, arctan2, hypot, complex
math); a whole expression of one float kind made of the fused executor's operations runs
as one fused pass (``evaluate``'s path). Parsing uses ``ast`` (never ``eval``).
"""
import ast
import functools
import operator
import threading

import numpy as np

from ggml_cy import ufuncs as _u

__all__ = ["parse", "names_of", "expr_names", "evaluate_numpy", "type_numexpr", "evaluate_typed",
           "KIND_DTYPE", "kind_of_array", "FUNCTIONS", "REDUCTIONS", "NotSupportedError"]


class NotSupportedError(NotImplementedError, TypeError):
    """String values and ``contains()``: numexpr has them, ggml_cy does not (both a
    NotImplementedError and a TypeError)."""


MAX_DEPTH = 200
MAX_NODES = 20_000

# ----------------------------------------------------------------------------- grammar
_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv",
           ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow",
           ast.LShift: "lshift", ast.RShift: "rshift", ast.BitAnd: "and",
           ast.BitOr: "or", ast.BitXor: "xor"}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne", ast.Gt: "gt",
           ast.GtE: "ge"}
_PYOP = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
         "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
         "pow": operator.pow, "lshift": operator.lshift, "rshift": operator.rshift,
         "and": operator.and_, "or": operator.or_, "xor": operator.xor,
         "lt": operator.lt, "le": operator.le, "eq": operator.eq, "ne": operator.ne,
         "gt": operator.gt, "ge": operator.ge}

# name -> (number of arguments, numexpr's minimum kind, maximum kind)
FUNCTIONS = {
    "copy": (1, None, None), "ones_like": (1, None, None), "sqrt": (1, "float", None),
    "sin": (1, "float", None), "cos": (1, "float", None), "tan": (1, "float", None),
    "arcsin": (1, "float", None), "arccos": (1, "float", None),
    "arctan": (1, "float", None), "sinh": (1, "float", None), "cosh": (1, "float", None),
    "tanh": (1, "float", None), "arcsinh": (1, "float", None),
    "arccosh": (1, "float", None), "arctanh": (1, "float", None),
    "fmod": (2, "float", None), "arctan2": (2, "float", None),
    "hypot": (2, "double", None), "nextafter": (2, "double", None),
    "copysign": (2, "double", None), "maximum": (2, "double", None),
    "minimum": (2, "double", None),
    "log": (1, "float", None), "log1p": (1, "float", None), "log10": (1, "float", None),
    "log2": (1, "float", None), "exp": (1, "float", None), "expm1": (1, "float", None),
    "abs": (1, "float", None), "ceil": (1, "float", "double"),
    "floor": (1, "float", "double"), "round": (1, "double", None),
    "trunc": (1, "double", None), "sign": (1, "double", None),
    "real": (1, "double", "double"), "imag": (1, "double", "double"),
    # x.real / x.imag (numexpr folds a constant's attribute as Python's complex does)
    "real_attr": (1, "double", "double"), "imag_attr": (1, "double", "double"),
    "complex": (2, "complex", None), "conj": (1, "complex", None),
    "isnan": (1, "double", None), "isfinite": (1, "double", None),
    "isinf": (1, "double", None), "signbit": (1, "double", None),
    "where": (3, None, None),
}
# numexpr keeps integer kinds for these (its list also names "abs", but its abs is
# numpy.absolute, whose __name__ is not "abs": abs of integers is float64 there)
_INT_KEEPING = {"copy", "ones_like", "round", "sign"}
_BOOL_RESULT = {"isnan", "isfinite", "isinf", "signbit"}
REDUCTIONS = ("sum", "prod", "min", "max")


def _short(expr):
    return repr(expr) if len(expr) <= 80 else repr(expr[:60]) + f"... ({len(expr)} chars)"


def _check_size(root, expr):
    stack, n = [(root, 1)], 0
    while stack:
        node, depth = stack.pop()
        n += 1
        if depth > MAX_DEPTH or n > MAX_NODES:
            raise ValueError(f"expression {_short(expr)} is too deep or too long (more "
                             f"than {MAX_DEPTH} nested operations or {MAX_NODES} syntax "
                             "nodes); split it into several calls")
        stack.extend((c, depth + 1) for c in ast.iter_child_nodes(node))


# CPython 3.11's ast module keeps a recursion-depth counter that is not safe across
# threads: ast.parse from several threads at once failed, now and then, with "SystemError:
# AST constructor recursion depth mismatch" (tests/test_expr_reliability.py, 16 threads with
# a 1 us switch interval; CPython gh-106905). Every parse of an expression goes through here.
_PARSE_LOCK = threading.Lock()


def parse_eval(text):
    """ast.parse(text, mode="eval"), one thread at a time."""
    with _PARSE_LOCK:
        return ast.parse(text, mode="eval")


@functools.lru_cache(maxsize=512)
def parse(expr):
    """The checked syntax tree of expr as nested tuples:
    ("name", n) | ("const", v) | ("bin", op, l, r) | ("cmp", op, l, r) | ("un", op, x) |
    ("call", f, (args...)) | ("reduce", f, x, axis). Raises SyntaxError, TypeError,
    ValueError or NotImplementedError (``contains``, strings) with the reason."""
    if not isinstance(expr, str):
        raise TypeError(f"expression must be a str, not {type(expr).__name__}")
    try:
        tree = parse_eval(expr.strip())
    except SyntaxError as e:
        raise SyntaxError(f"cannot parse {_short(expr)}: {e.msg}") from None
    except (RecursionError, MemoryError):
        raise ValueError(f"expression {_short(expr)} is too deep or too long for "
                         "Python's parser") from None
    except ValueError as e:
        raise ValueError(f"cannot parse {_short(expr)}: {e}") from None
    _check_size(tree.body, expr)
    root = _conv(tree.body, expr, True)
    return root


def _conv(node, expr, top=False):
    if isinstance(node, ast.Name):
        return ("name", node.id)
    if isinstance(node, ast.Constant):
        v = node.value
        if v is None:
            raise TypeError(f"None is not a value in {_short(expr)}")
        if isinstance(v, (str, bytes)):
            raise NotSupportedError(
                f"string values ({v!r} in {_short(expr)}) are not supported by ggml_cy "
                "(numexpr's string comparisons and contains() are not implemented)")
        if not isinstance(v, (bool, int, float, complex)):
            raise TypeError(f"constant {v!r} in {_short(expr)} is not a number")
        return ("const", v)
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            raise TypeError(_BOOL_OP_MSG)
        x = _conv(node.operand, expr)
        if isinstance(node.op, ast.UAdd):
            return x
        op = "neg" if isinstance(node.op, ast.USub) else "invert"
        if x[0] == "const":
            return ("const", -x[1] if op == "neg" else _py_invert(x[1], expr))
        return ("un", op, x)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        op = _BINOPS[type(node.op)]
        left, right = _conv(node.left, expr), _conv(node.right, expr)
        if left[0] == "const" and right[0] == "const":
            # literal arithmetic is folded as Python's compiler folds it (what numexpr
            # and numpy then see); what raises is left to the evaluation
            try:
                v = _PYOP[op](left[1], right[1])
            except Exception:
                v = None
            if isinstance(v, (bool, int, float, complex)) and not (
                    isinstance(v, int) and abs(v) >= 2**64):
                return ("const", v)
        return ("bin", op, left, right)
    if isinstance(node, ast.BoolOp):
        raise TypeError(_BOOL_OP_MSG)
    if isinstance(node, ast.Compare):
        if len(node.ops) != 1:
            raise TypeError(f"chained comparisons ({_short(expr)}) need Python's 'and'; "
                            "write (a < b) & (b < c)")
        if type(node.ops[0]) not in _CMPOPS:
            raise ValueError(f"unsupported comparison {ast.unparse(node)!r} in "
                             f"{_short(expr)} (allowed: < <= == != >= >)")
        return ("cmp", _CMPOPS[type(node.ops[0])], _conv(node.left, expr),
                _conv(node.comparators[0], expr))
    if isinstance(node, ast.Attribute) and node.attr in ("real", "imag"):
        return ("call", node.attr + "_attr", (_conv(node.value, expr),))
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name):
            raise ValueError(f"unknown function {ast.unparse(node.func)!r} in "
                             f"{_short(expr)} (call functions by their plain name)")
        name = node.func.id
        if name == "contains":
            raise NotSupportedError(
                "contains() (string search) is not supported by ggml_cy; use numexpr or "
                "numpy.char.find for string arrays")
        if name in REDUCTIONS:
            if not top:
                raise ValueError(f"{name}() must be the last operation of an expression "
                                 f"(as in numexpr): {_short(expr)}")
            return _reduction(node, name, expr)
        if name not in FUNCTIONS or name.endswith("_attr"):
            raise ValueError(f"unknown function {name!r} in {_short(expr)} (known: "
                             f"{', '.join(sorted(FUNCTIONS) + list(REDUCTIONS))})")
        nargs = FUNCTIONS[name][0]
        if node.keywords or len(node.args) != nargs:
            raise TypeError(f"{name}() takes {nargs} positional argument"
                            f"{'s' if nargs > 1 else ''} in {_short(expr)}")
        return ("call", name, tuple(_conv(a, expr) for a in node.args))
    raise ValueError(f"unsupported syntax {ast.unparse(node)!r} in {_short(expr)} (allowed: "
                     "names, numbers, arithmetic, comparisons, & | ^ ~ << >>, function "
                     "calls, .real/.imag)")


_BOOL_OP_MSG = ("Python's boolean operators 'and', 'or', 'not' cannot be used on arrays; "
                "use '&' instead of 'and', '|' instead of 'or' and '~' instead of 'not'")


def _py_invert(v, expr):
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return ~v
    raise TypeError(f"~ needs a boolean or integer operand in {_short(expr)}")


def _reduction(node, name, expr):
    args = list(node.args)
    axis_node = None
    for kw in node.keywords:
        if kw.arg != "axis":
            raise TypeError(f"{name}() takes only 'axis' as keyword in {_short(expr)}")
        axis_node = kw.value
    if len(args) == 2 and axis_node is None:
        axis_node = args.pop()
    if len(args) != 1:
        raise TypeError(f"{name}() takes one expression and an optional axis in "
                        f"{_short(expr)}")
    axis = None
    if axis_node is not None:
        a = _conv(axis_node, expr)
        if a[0] != "const" or not (a[1] is None or (isinstance(a[1], int)
                                                   and not isinstance(a[1], bool))):
            raise ValueError(f"{name}(): axis must be an integer constant or None in "
                             f"{_short(expr)}")
        axis = a[1]
        if axis < 0:
            raise ValueError(f"{name}(): negative axis are not supported (as in numexpr)")
    return ("reduce", name, _conv(args[0], expr), axis)


@functools.lru_cache(maxsize=512)
def expr_names(expr):
    """The input names of an expression (parsed and cached)."""
    return tuple(names_of(parse(expr)))


def names_of(tree, acc=None):
    """The input names of a tree, in first-use order."""
    acc = {} if acc is None else acc
    stack = [tree]
    while stack:
        t = stack.pop()
        k = t[0]
        if k == "name":
            acc.setdefault(t[1], None)
        elif k in ("bin", "cmp"):
            stack.extend((t[3], t[2]))
        elif k == "un":
            stack.append(t[2])
        elif k == "call":
            stack.extend(reversed(t[2]))
        elif k == "reduce":
            stack.append(t[2])
    return list(acc)


# ----------------------------------------------------------------------------- compute
# ggml_cy's numpy-exact eager functions where there is one; numpy otherwise
_BINFN = {"add": _u.add, "sub": _u.subtract, "mul": _u.multiply, "truediv": _u.divide,
          "floordiv": _u.floor_divide, "mod": _u.remainder, "pow": _u.power,
          "lshift": np.left_shift, "rshift": np.right_shift, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor, "lt": _u.less,
          "le": _u.less_equal, "eq": _u.equal, "ne": _u.not_equal, "gt": _u.greater,
          "ge": _u.greater_equal}
_BOOLFN = {"and": _u.logical_and, "or": _u.logical_or, "xor": _u.logical_xor}


def _complex(re, im):
    re, im = np.asarray(re), np.asarray(im)
    dt = np.result_type(re, im, np.complex64)
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), dt)
    out.real, out.imag = re, im
    return out


def _round(x):
    x = np.asarray(x)
    return _u.rint(x) if x.dtype.kind == "f" else np.round(x)


_CALLFN = {
    "copy": np.copy, "ones_like": np.ones_like, "sqrt": _u.sqrt, "sin": _u.sin,
    "cos": _u.cos, "tan": np.tan, "arcsin": np.arcsin, "arccos": np.arccos,
    "arctan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": _u.tanh,
    "arcsinh": np.arcsinh, "arccosh": np.arccosh, "arctanh": np.arctanh,
    "fmod": _u.fmod, "arctan2": np.arctan2, "hypot": np.hypot,
    "nextafter": np.nextafter, "copysign": np.copysign, "maximum": _u.maximum,
    "minimum": _u.minimum, "log": _u.log, "log1p": _u.log1p, "log10": np.log10,
    "log2": _u.log2, "exp": _u.exp, "expm1": _u.expm1, "abs": _u.absolute,
    "ceil": _u.ceil, "floor": _u.floor, "round": _round, "trunc": _u.trunc,
    "sign": _u.sign, "real": np.real, "imag": np.imag, "complex": _complex,
    "conj": np.conj, "real_attr": np.real, "imag_attr": np.imag, "isnan": np.isnan, "isfinite": np.isfinite, "isinf": np.isinf,
    "signbit": np.signbit, "where": np.where,
}
_REDFN = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max}


def _is_py(v):
    return isinstance(v, (bool, int, float, complex)) and not isinstance(v, np.generic)


def evaluate_numpy(tree, values):
    """The tree computed as the same expression written with numpy (values: name ->
    array or number). Python numbers stay Python numbers (weak, NEP 50)."""
    k = tree[0]
    if k == "name":
        return values[tree[1]]
    if k == "const":
        return tree[1]
    if k == "bin" or k == "cmp":
        a, b = evaluate_numpy(tree[2], values), evaluate_numpy(tree[3], values)
        if _is_py(a) and _is_py(b):
            return _PYOP[tree[1]](a, b)
        op = tree[1]
        if op in _BOOLFN and _all_bool(a, b):
            return _BOOLFN[op](a, b)
        return _BINFN[op](a, b)
    if k == "un":
        x = evaluate_numpy(tree[2], values)
        if tree[1] == "neg":
            return -x if _is_py(x) else _u.negative(x)
        if isinstance(x, (bool, np.bool_)) or (isinstance(x, np.ndarray)
                                               and x.dtype == np.bool_):
            return _u.logical_not(x) if isinstance(x, np.ndarray) else np.invert(x)
        return np.invert(x)
    if k == "call":
        args = [evaluate_numpy(a, values) for a in tree[2]]
        name = tree[1]
        if name in ("real_attr", "imag_attr") and all(_is_py(a) for a in args):
            return getattr(args[0], name[:4])          # Python's own attribute
        r = _CALLFN[name](*args)
        return r
    # reduce
    x = evaluate_numpy(tree[2], values)
    return _reduce(tree[1], x, tree[3])


def _all_bool(a, b):
    def isb(v):
        return isinstance(v, (bool, np.bool_)) or (isinstance(v, np.ndarray)
                                                   and v.dtype == np.bool_)
    return isb(a) and isb(b)


def _reduce(name, x, axis):
    x = np.asarray(x)
    if axis is not None and axis >= max(x.ndim, 1):
        raise ValueError(f"{name}(): axis {axis} is out of bounds for an expression of "
                         f"{x.ndim} dimensions")
    return _REDFN[name](x, axis=axis)


# ----------------------------------------------------------------------------- numexpr
KINDS = ("bool", "int", "long", "float", "double", "complex")
_RANK = {k: i for i, k in enumerate(KINDS)}
KIND_DTYPE = {"bool": np.dtype(np.bool_), "int": np.dtype(np.int32),
              "long": np.dtype(np.int64), "float": np.dtype(np.float32),
              "double": np.dtype(np.float64), "complex": np.dtype(np.complex128)}


def kind_of_array(a):
    """numexpr's kind of an input array (raises TypeError/NotImplementedError for types
    numexpr does not compute)."""
    dt = a.dtype
    if dt.kind == "b":
        return "bool"
    if dt.kind in "iu":
        if dt.itemsize > 4 or (dt.kind == "u" and dt.itemsize == 4):
            if dt.kind == "u" and dt.itemsize == 8:
                return "long"   # numexpr too: uint64 computes as int64
            return "long"
        return "int"
    if dt.kind == "f":
        if dt.itemsize > 8:
            raise TypeError(f"dtype {dt} (long double) is not supported")
        return "double" if dt.itemsize > 4 else "float"
    if dt.kind == "c":
        if dt.itemsize > 16:
            raise TypeError(f"dtype {dt} is not supported")
        return "complex"
    if dt.kind in "SU":
        raise NotSupportedError(f"string arrays (dtype {dt}) are not supported by "
                                  "ggml_cy (numexpr's string operations are not implemented)")
    raise TypeError(f"dtype {dt} is not supported")


def _kind_of_const(v):
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, np.int64):
        return "long"
    if isinstance(v, np.float64):
        return "double"
    if isinstance(v, (np.float32, np.float16)):
        return "float"      # numexpr: numpy floats other than float64 are 'float
    if isinstance(v, (int, np.integer)):
        return "int" if -2**31 <= int(v) < 2**31 else "long"
    if isinstance(v, (float, np.floating)):
        return "double"
    if isinstance(v, (complex, np.complexfloating)):
        return "complex"
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return _kind_of_const(v[()])
    raise TypeError(f"constant {v!r} is not a number")


def _common(kinds):
    return max(kinds, key=_RANK.__getitem__)


# typed tree: ("name", n, kind) | ("const", value, kind) |
#             ("op", name, kind, operand_kind, args) | ("reduce", name, kind, x, axis)
def _const(v):
    return ("const", v, _kind_of_const(v))


def type_numexpr(tree, kinds, optimization="aggressive"):
    """Types tree with numexpr's rules (kinds: name -> kind); folds constants."""
    k = tree[0]
    if k == "name":
        return ("name", tree[1], kinds[tree[1]])
    if k == "const":
        return _const(tree[1])
    if k == "reduce":
        x = type_numexpr(tree[2], kinds, optimization)
        if x[0] == "const":
            return x
        return ("reduce", tree[1], x[2], x, tree[3])
    if k == "un":
        x = type_numexpr(tree[2], kinds, optimization)
        if x[0] == "const":
            with np.errstate(all="ignore"):
                return _const(-x[1] if tree[1] == "neg" else _py_invert_any(x[1]))
        if tree[1] == "invert" and x[2] not in ("bool", "int", "long"):
            raise TypeError(f"~ needs booleans or integers, not {x[2]} values")
        return ("op", tree[1], x[2], x[2], (x,))
    if k in ("bin", "cmp"):
        op = tree[1]
        a = type_numexpr(tree[2], kinds, optimization)
        b = type_numexpr(tree[3], kinds, optimization)
        if a[0] == "const" and b[0] == "const" and op not in ("truediv", "pow"):
            # (numexpr computes / and ** of constants at run time, in their kind)
            with np.errstate(all="ignore"):
                return _const(_PYOP[op](a[1], b[1]))
        common = _common((a[2], b[2]))
        if k == "cmp":
            return ("op", op, "bool", common, (a, b))
        if op == "truediv":
            kind = "double" if common in ("bool", "int", "long") else common
            return ("op", op, kind, kind, (a, b))
        if op == "pow":
            return _type_pow(a, b, common, optimization)
        if op in ("and", "or", "xor", "lshift", "rshift") and common in (
                "float", "double", "complex"):
            raise TypeError(f"'{ {'and': '&', 'or': '|', 'xor': '^', 'lshift': '<<', 'rshift': '>>'}[op]}' "
                            f"needs booleans or integers, not {common} values")
        if common == "bool" and op in ("mul", "add"):   # numexpr: bool*bool is and, + or
            op = "and" if op == "mul" else "or"
        return ("op", op, common, common, (a, b))
    # call
    name = tree[1]
    args = [type_numexpr(a, kinds, optimization) for a in tree[2]]
    if name == "where":
        c, x, y = args
        if c[0] == "const":
            return x if c[1] else y
        if all(a[0] == "const" for a in args):
            return _const(np.where(c[1], x[1], y[1])[()])
        kind = _common((x[2], y[2]))
        return ("op", "where", kind, kind, (c, x, y))
    if all(a[0] == "const" for a in args):
        with np.errstate(all="ignore"):
            if name in ("real_attr", "imag_attr"):
                return _const(getattr(complex(args[0][1]), name[:4]))
            if name == "complex":
                return _const(complex(args[0][1], args[1][1]))
            v = _CALLFN[name](*(a[1] for a in args))
            if isinstance(v, np.ndarray):
                v = v[()]
            return _const(v)
    _n, lo, hi = FUNCTIONS[name]
    kind = _common([a[2] for a in args])
    if kind in ("int", "long"):
        if name not in _INT_KEEPING:
            kind = "double"
    else:
        if lo and _RANK[lo] > _RANK[kind]:
            kind = lo
        if hi and _RANK[hi] < _RANK[kind]:
            kind = hi
    operand = kind
    if name in ("real", "imag", "real_attr", "imag_attr"):
        operand = "complex"
    elif name == "complex":
        operand = "double"
    if name in _BOOL_RESULT:
        return ("op", name, "bool", operand, tuple(args))
    return ("op", name, kind, operand, tuple(args))


def _py_invert_any(v):
    if isinstance(v, (bool, np.bool_)):
        return not v
    return ~v


def _type_pow(a, b, common, optimization):
    if b[0] == "const":
        x = b[1]
        if a[2] in ("int", "long") and b[2] in ("int", "long") and x < 0:
            raise ValueError("Integers to negative integer powers are not allowed.")
        if optimization == "aggressive" and not isinstance(x, complex) and np.isfinite(x) \
                and int(2 * x) == 2 * x and abs(x) <= 50:
            n2 = int(abs(2 * x))
            half = n2 % 2 == 1
            kind = a[2]
            if half:
                kind = _common((kind, "double" if kind in ("bool", "int", "long")
                                else kind))
            if x < 0:
                kind = "double" if kind in ("bool", "int", "long") else kind
            # numexpr expands the power into multiplications (square and multiply), a
            # sqrt for a half power and a reciprocal for a negative one: done alike here
            return ("op", "pow_expand", kind, kind, (a, ("const", x, b[2])))
        if optimization in ("moderate", "aggressive"):
            if x == -1:
                kind = "double" if a[2] in ("bool", "int", "long") else a[2]
                kind = _common((kind, b[2])) if kind != "double" else kind
                return ("op", "pow", kind, kind, (a, ("const", x, b[2])))
            if x == 0.5:
                kind = "double" if a[2] in ("int", "long") else a[2]
                return ("op", "pow", kind, kind, (a, ("const", x, b[2])))
    return ("op", "pow", common, common, (a, b))


def evaluate_typed(tree, values):
    """Computes a typed tree (numexpr's kinds) on values (name -> array)."""
    k = tree[0]
    if k == "name":
        return _as_kind(values[tree[1]], tree[2])
    if k == "const":
        return _as_kind(tree[1], tree[2])
    if k == "reduce":
        x = evaluate_typed(tree[3], values)
        return _as_kind(_reduce(tree[1], x, tree[4]), tree[2])
    _, name, kind, operand, args = tree
    if name == "where":
        c = _as_kind(evaluate_typed(args[0], values), "bool")
        x, y = (_as_kind(evaluate_typed(a, values), kind) for a in args[1:])
        return np.where(c, x, y)
    if name == "pow_expand":
        return _as_kind(_pow_expand(evaluate_typed(args[0], values), args[0][2],
                                    args[1][1], kind), kind)
    if name == "pow" and args[1][0] == "const":
        base = _as_kind(evaluate_typed(args[0], values), operand)
        e = args[1][1]
        if operand in ("int", "long", "bool"):
            e = int(e) if float(e).is_integer() else e
        else:
            e = _as_kind(e, operand)
        if operand == "bool":
            r = np.ones_like(base) if e == 0 else base
        else:
            r = _u.power(base, e) if isinstance(base, np.ndarray) else np.power(base, e)
        return _as_kind(r, kind)
    if name in ("real", "imag", "real_attr", "imag_attr"):
        x = _as_kind(evaluate_typed(args[0], values), "complex")
        return _as_kind(getattr(np, name[:4])(x), kind)
    vals = [_as_kind(evaluate_typed(a, values), operand) for a in args]
    if name in ("mod", "floordiv") and operand in ("float", "double"):
        # numexpr's float definitions: floor(a/b) and a - floor(a/b)*b (numpy's differ
        # at infinities and in the last bit)
        q = _u.floor(_u.divide(vals[0], vals[1]))
        r = q if name == "floordiv" else _u.subtract(vals[0], _u.multiply(q, vals[1]))
        return _as_kind(r, kind)
    if name in _BINFN:
        if name in _BOOLFN and operand == "bool":
            r = _BOOLFN[name](*vals)
        elif name in ("lshift", "rshift"):
            r = _shift(name, *vals)
        else:
            r = _BINFN[name](*vals)
    elif name == "neg":
        r = _u.negative(vals[0]) if operand != "bool" else np.logical_not(vals[0])
    elif name == "invert":
        r = np.invert(vals[0])
    else:
        r = _CALLFN[name](*vals)
    return _as_kind(r, kind)


def _pow_expand(a, akind, x, kind):
    """numexpr's 'aggressive' power by a constant integral or half-integral x: binary
    exponentiation by multiplications in a's kind, times sqrt(a) for a half power, and
    1/r for a negative x (in the result kind)."""
    n = int(abs(x))
    half = int(abs(2 * x)) % 2 == 1
    base = _as_kind(a, akind)
    r = None
    p = base
    mask = 1
    while True:
        if n & mask:
            r = p if r is None else _u.multiply(r, p)
        mask <<= 1
        if mask > n:
            break
        p = _u.multiply(p, p)
    if half:
        skind = "double" if akind in ("bool", "int", "long") else akind
        s = _u.sqrt(_as_kind(base, skind))
        r = s if r is None else _u.multiply(r, s)
    if r is None:
        r = np.ones_like(base)
    if x < 0:
        r = _u.divide(_as_kind(1, kind), _as_kind(r, kind))
    return r


def _shift(name, a, b):
    """numpy's shift (a count outside [0, width) gives a full shift)."""
    return (np.left_shift if name == "lshift" else np.right_shift)(a, b)


def _as_kind(v, kind):
    dt = KIND_DTYPE[kind]
    if isinstance(v, np.ndarray):
        if v.dtype == dt:
            return v
        if v.dtype.kind == "c" and dt.kind != "c":
            v = v.real
        return v.astype(dt)
    if isinstance(v, (complex, np.complexfloating)) and dt.kind != "c":
        v = v.real
    return np.asarray(v, dtype=dt)


# ----------------------------------------------------------------------------- fusion
# numexpr operations the fused executor computes (in one float dtype), with the
# spelling evaluate.py parses
_FUSED_BIN = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
              "mod": "%"}
_FUSED_CALL = {"sqrt", "sin", "cos", "tanh", "exp", "expm1", "log", "log1p", "log2", "abs",
               "ceil", "floor", "trunc", "sign", "maximum", "minimum", "fmod"}


def fused_source(tree, dtype_kind):
    """evaluate.py's source text for a typed tree whose every node has the float kind
    dtype_kind and whose operations the fused executor computes with numpy's bits; None
    otherwise. (A float32 pow stays unfused: numexpr's expansion and numpy's powf differ.)"""
    k = tree[0]
    if k == "name":
        return tree[1] if tree[2] == dtype_kind else None
    if k == "const":
        v = tree[1]
        if isinstance(v, (bool, np.bool_, complex, np.complexfloating)):
            return None
        if tree[2] not in ("int", "long", dtype_kind) and not (
                dtype_kind == "double" and tree[2] == "float"):
            return None
        f = float(v)
        if not np.isfinite(f):
            return None
        if dtype_kind == "float" and float(np.float32(f)) != f:
            return None
        return repr(int(v)) if isinstance(v, (int, np.integer)) else repr(f)
    if k != "op" or tree[2] != dtype_kind or tree[3] != dtype_kind:
        return None
    name, args = tree[1], tree[4]
    if all(a[0] == "const" for a in args):
        return None      # numexpr computes these at run time (1/0 is inf there)
    parts = [fused_source(a, dtype_kind) for a in args]
    if any(p is None for p in parts):
        return None
    if name == "floordiv":                       # numexpr's float floor division
        return f"floor({parts[0]} / {parts[1]})"
    if name == "mod":                            # numexpr's float modulo
        return f"({parts[0]} - floor({parts[0]} / {parts[1]}) * {parts[1]})"
    if name in _FUSED_BIN:
        return f"({parts[0]} {_FUSED_BIN[name]} {parts[1]})"
    if name == "neg":
        return f"(-{parts[0]})"
    if name in ("pow", "pow_expand") and args[1][0] == "const" and \
            float(args[1][1]) in (2.0, 0.5):
        return f"({parts[0]} ** {float(args[1][1])!r})"
    if name in _FUSED_CALL:
        return f"{name}({', '.join(parts)})"
    return None
