"""ggml_cy's op table: one row per op, and every layer's op list is made from it.

This is pure data (no imports from the package, importable without a build): setup.py
reads it to render the code generated at build time, and the layers read it at run time.
What it drives:

* ``core/csrc/ops_defs.h`` and ``core/_ops.pxd`` (rendered from their ``.tp``): the op enum
  (``GGML_OP_<NAME>``, numbered in table order) and predicates per op (elementwise,
  binary, unary, bool result, CUDA support) shared by the CPU kernels and the CUDA library;
* ``cpu/_kernels.pyx`` (from ``_kernels.pyx.tp``): one row function per (elementwise op,
  compute type) calling the formula ``kern_<formula>_<type>`` of ``cpu/csrc/kernels_elem.h``,
  the op name table, the FP-flag and heavy-op tables;
* ``ufuncs/_eager_ops.pxi`` (from its ``.tp``): the numpy-style functions (``ggml_cy.add``...)
  and their registration (numpy ufunc to follow, numpy fallback);
* ``graph/context.py``: the builders (``ctx.add``, ``ctx.add_inplace``, ``ctx.eq``, ...);
* ``expr/evaluate.py``: evaluate()'s operators and functions;
* ``cuda/ops.py``: the eager functions that run on device tensors (``cuda=True`` rows; the
  device formula is in ``cuda/ops.cuh`` / ``cuda/unary.cu``);
* ``cpu/_fused.pyx``: which ops fuse (every elementwise op) and which run on the fused
  accumulator machine (``vm``; its instructions are C code in ``cpu/csrc/fused_vm*.h``).

``tests/test_optable.py`` checks that every place agrees with the table. How to add an op:
CONTRIBUTING.md.

Columns (``Op`` fields):
  name      ggml's op name, upper case: enum ``GGML_OP_<name>``, printed by ``op_name``
  kind      "copy" | "binary" | "unary" (elementwise kernels of the kernels template),
            "view" | "reduce" | "matmul" | "other" (kernels of their own in cpu/)
  formula   elementwise ops: the C formula's stem, ``kern_<formula>_<type>(x[, y])`` in
            cpu/csrc/kernels_elem.h (float16/bfloat16 compute through f32)
  types     compute types that have a kernel: f32 f64 i8 i16 i32 i64 u8 b (bool), and
            h16 (a float16-specific f32 row: numpy's float16 tie rules)
  result    "same" (the input type) or "bool"
  params    number of float parameters in op_params (ggml's layout: float32 slots, plus
            the full doubles ggml_cy keeps for float64 data)
  fe        the op reports numpy's floating-point flags (divide, overflow, ...)
  heavy     costly per element: worth several threads at a smaller size
  numpy     the numpy ufunc whose promotion, semantics and error cases the eager function
            follows (and which computes what the kernels do not take); None: not numpy's
  eager     the public function name(s) in ggml_cy (first: the defining name, others:
            aliases, as numpy's true_divide for divide)
  style     how the eager function is made: "ufunc" (numpy's signature, generated),
            "activation" (float results, promoted as np.exp, generated), "custom"
            (hand-written in ufuncs/_eager.pyx), None (no eager function)
  builder   the graph builder name on Context (ggml's: ``ctx.add``), or None
  bstyle    "binary" / "unary" (generated, with an ``_inplace`` form), "logical"
            (generated, BOOL result), "custom" (hand-written in graph/context.py), None
  evaluate  names under which evaluate() accepts the op as a function (``exp(a)``)
  operator  the Python operator evaluate() maps to the op ("+", "<", ...), or None
  vm        the fused accumulator machine's instruction for the op, or None
  cuda      the compute types the CUDA library implements the op for (a tuple; True in a
            row means "the same as ``types``", () means not on the GPU)
  doc       what the op computes (docstrings of the generated functions)
"""
from collections import namedtuple

__all__ = ["Op", "OPS", "BY_NAME", "number", "elementwise", "F", "SI", "I", "ALL"]

Op = namedtuple("Op", "name kind formula types result params fe heavy numpy eager style "
                      "builder bstyle evaluate operator vm cuda doc")

# compute type groups of the CPU kernels
F = ("f32", "f64")
SI = ("i8", "i16", "i32", "i64")
I = SI + ("u8",)
ALL = F + I + ("b",)

_KINDS = ("copy", "binary", "unary", "view", "reduce", "matmul", "other")


def op(name, kind, formula=None, types=(), result="same", params=0, fe=False, heavy=False,
       numpy=None, eager=(), style=None, builder=None, bstyle=None, evaluate=(),
       operator=None, vm=None, cuda=False, doc=""):
    if kind not in _KINDS:
        raise ValueError(f"{name}: unknown kind {kind!r}")
    if isinstance(eager, str):
        eager = (eager,)
    if isinstance(evaluate, str):
        evaluate = (evaluate,)
    if cuda is True:
        cuda = tuple(types) if types else ("any",)
    elif not cuda:
        cuda = ()
    return Op(name, kind, formula, tuple(types), result, params, fe, heavy, numpy,
              tuple(eager), style, builder, bstyle, tuple(evaluate), operator, vm, cuda, doc)


def _binary(name, formula, types, *, numpy, builder, doc, operator=None, vm=None, fe=True,
            heavy=False, evaluate=(), eager=None, bstyle="binary", style="ufunc", cuda=True):
    return op(name, "binary", formula, types, "same", 0, fe, heavy, numpy,
              eager if eager is not None else numpy, style, builder, bstyle, evaluate,
              operator, vm, cuda, doc)


def _logical(name, formula, *, numpy, builder, doc, operator=None):
    return op(name, "binary", formula, ALL, "bool", numpy=numpy, eager=numpy, style="ufunc",
              builder=builder, bstyle="logical", operator=operator, cuda=True, doc=doc)


def _math(name, formula, types, *, numpy, builder, doc, fe=True, heavy=True, evaluate=None,
          vm=None, eager=None, result="same", cuda=True):
    return op(name, "unary", formula, types, result, 0, fe, heavy, numpy,
              eager if eager is not None else numpy, "ufunc", builder,
              "unary" if builder else None,
              evaluate if evaluate is not None else (numpy,), None, vm, cuda, doc)


def _activation(name, formula, *, doc, heavy=False, params=0, style="activation",
                builder=None, bstyle="unary", evaluate=(), types=F, cuda=True):
    return op(name, "unary", formula, types, "same", params, False, heavy, None, formula,
              style, builder or formula, bstyle, evaluate, None, None, cuda, doc)


OPS = (
    op("NONE", "other", doc="no op: a leaf (input) tensor"),
    # ------------------------------------------------------------------ copies
    op("DUP", "copy", fe=True, builder="dup", bstyle="custom", cuda=True,
       doc="a copy of src0 (ggml_dup)"),
    op("CPY", "copy", fe=True, builder="cpy", bstyle="custom", cuda=True,
       doc="src0 copied and converted into src1's memory (ggml_cpy)"),
    op("CONT", "copy", fe=True, builder="cont", bstyle="custom", cuda=True,
       doc="a contiguous copy of src0 (ggml_cont)"),
    # ------------------------------------------------------------------ binary arithmetic
    _binary("ADD", "add", ALL, numpy="add", builder="add", operator="+", vm="ADD",
            doc="x1 + x2"),
    _binary("SUB", "sub", F + I, numpy="subtract", builder="sub", operator="-", vm="SUB",
            doc="x1 - x2"),
    _binary("MUL", "mul", ALL, numpy="multiply", builder="mul", operator="*", vm="MUL",
            doc="x1 * x2"),
    _binary("DIV", "div", F, numpy="divide", builder="div", operator="/", vm="DIV",
            eager=("divide", "true_divide"), doc="x1 / x2 (true division)"),
    _binary("FLOOR_DIV", "floordiv", F + I, numpy="floor_divide", builder="floor_div",
            operator="//", heavy=True, evaluate="floor_divide", doc="x1 // x2"),
    _binary("MOD", "mod", F + I, numpy="remainder", builder="mod", operator="%", heavy=True,
            eager=("remainder", "mod"), evaluate=("remainder", "mod"),
            doc="x1 % x2 (sign of the divisor)"),
    _binary("FMOD", "fmod", F + I, numpy="fmod", builder="fmod", heavy=True, evaluate="fmod",
            doc="C fmod(x1, x2) (sign of the dividend)"),
    _binary("MAX", "max", ALL + ("h16",), numpy="maximum", builder="max", vm="MAX", fe=False,
            evaluate="maximum", doc="the larger of x1 and x2, NaN propagating"),
    _binary("MIN", "min", ALL + ("h16",), numpy="minimum", builder="min", vm="MIN", fe=False,
            evaluate="minimum", doc="the smaller of x1 and x2, NaN propagating"),
    _binary("FMAX", "fmax", ALL + ("h16",), numpy="fmax", builder="fmax", fe=False,
            evaluate="fmax", cuda=F + I, doc="the larger of x1 and x2, NaN ignored"),
    _binary("FMIN", "fmin", ALL + ("h16",), numpy="fmin", builder="fmin", fe=False,
            evaluate="fmin", cuda=F + I, doc="the smaller of x1 and x2, NaN ignored"),
    _binary("POW", "pow", F + I, numpy="power", builder="pow", operator="**", heavy=True,
            evaluate="power", doc="x1 ** x2"),
    _binary("PRELU", "prelu", F + SI, numpy=None, builder="prelu", fe=False,
            eager="prelu", style="custom", cuda=F + I, doc="x if x > 0 else slope * x"),
    # ------------------------------------------------------------------ logical, relational
    _logical("LOGICAL_AND", "land", numpy="logical_and", builder="logical_and",
             doc="x1 and x2, as bool"),
    _logical("LOGICAL_OR", "lor", numpy="logical_or", builder="logical_or",
             doc="x1 or x2, as bool"),
    _logical("LOGICAL_XOR", "lxor", numpy="logical_xor", builder="logical_xor",
             doc="x1 xor x2, as bool"),
    _logical("EQ", "eq", numpy="equal", builder="eq", doc="x1 == x2"),
    _logical("NE", "ne", numpy="not_equal", builder="ne", doc="x1 != x2"),
    _logical("GT", "gt", numpy="greater", builder="gt", doc="x1 > x2"),
    _logical("GE", "ge", numpy="greater_equal", builder="ge", doc="x1 >= x2"),
    _logical("LT", "lt", numpy="less", builder="lt", doc="x1 < x2"),
    _logical("LE", "le", numpy="less_equal", builder="le", doc="x1 <= x2"),
    # ------------------------------------------------------------------ unary
    op("LOGICAL_NOT", "unary", "lnot", ALL, "bool", numpy="logical_not", eager="logical_not",
       style="ufunc", builder="logical_not", bstyle="custom", cuda=True, doc="not x, as bool"),
    _math("NEG", "neg", F + I, numpy="negative", builder="neg", fe=False, heavy=False,
          vm="NEG", doc="-x"),
    _math("ABS", "abs", ALL, numpy="absolute", builder="abs", fe=False, heavy=False, vm="ABS",
          eager=("absolute", "abs"), evaluate=("abs", "absolute"), cuda=F + I, doc="|x|"),
    _math("SGN", "sgn", F + I, numpy="sign", builder="sgn", fe=False, heavy=False,
          doc="the sign of x (-1, 0, 1; NaN stays NaN)"),
    _math("SQR", "sqr", F + I, numpy="square", builder="sqr", heavy=False, vm="SQR",
          doc="x * x"),
    _math("SQRT", "sqrt", F, numpy="sqrt", builder="sqrt", heavy=False,
          doc="the square root"),
    _math("EXP", "exp", F, numpy="exp", builder="exp", doc="e ** x"),
    _math("EXPM1", "expm1", F, numpy="expm1", builder="expm1", doc="e ** x - 1"),
    _math("LOG", "log", F, numpy="log", builder="log", doc="the natural logarithm"),
    _math("LOG1P", "log1p", F, numpy="log1p", builder="log1p", doc="log(1 + x)"),
    # issue 14 (math2): log2 and erf
    _math("LOG2", "log2", F, numpy="log2", builder="log2", cuda=False,
          doc="the base-2 logarithm"),
    _math("SIN", "sin", F, numpy="sin", builder="sin", doc="the sine"),
    _math("COS", "cos", F, numpy="cos", builder="cos", doc="the cosine"),
    _math("TANH", "tanh", F, numpy="tanh", builder="tanh", doc="the hyperbolic tangent"),
    _math("FLOOR", "floor", ALL, numpy="floor", builder="floor", fe=False, heavy=False,
          cuda=F, doc="rounded down"),
    _math("CEIL", "ceil", ALL, numpy="ceil", builder="ceil", fe=False, heavy=False,
          cuda=F, doc="rounded up"),
    _math("ROUND", "round", F + I, numpy="rint", builder="round", fe=False, heavy=False,
          cuda=F, doc="rounded to the nearest integer, ties to even"),
    _math("TRUNC", "trunc", ALL, numpy="trunc", builder="trunc", fe=False, heavy=False,
          cuda=F, doc="rounded toward zero"),
    # ------------------------------------------------------------------ ggml's activations
    _activation("RELU", "relu", types=F + SI + ("u8",), evaluate="relu",
                doc="x if x > 0 else 0"),
    _activation("LEAKY_RELU", "leaky_relu", params=1, style="custom", bstyle="custom",
                doc="max(x, 0) + negative_slope * min(x, 0)"),
    _activation("ELU", "elu", params=1, heavy=True, style="custom", bstyle="custom",
                doc="x if x > 0 else alpha * (exp(x) - 1)"),
    _activation("SIGMOID", "sigmoid", heavy=True, evaluate="sigmoid",
                doc="1 / (1 + exp(-x))"),
    _activation("SILU", "silu", heavy=True, evaluate="silu", doc="x * sigmoid(x)"),
    _activation("GELU", "gelu", heavy=True, evaluate="gelu",
                doc="GELU, tanh approximation (ggml_gelu)"),
    _activation("GELU_ERF", "gelu_erf", heavy=True, evaluate="gelu_erf",
                doc="GELU, exact erf form: 0.5 x (1 + erf(x / sqrt 2))"),
    _activation("GELU_QUICK", "gelu_quick", heavy=True, evaluate="gelu_quick", doc="x * sigmoid(1.702 x)"),
    _activation("HARDSWISH", "hardswish", doc="x * min(1, max(0, (x + 3) / 6))"),
    _activation("HARDSIGMOID", "hardsigmoid", doc="min(1, max(0, (x + 3) / 6))"),
    _activation("SOFTPLUS", "softplus", heavy=True, evaluate="softplus",
                doc="log(1 + exp(x))"),
    _activation("ERF", "erf", heavy=True, evaluate="erf", cuda=False,
                doc="the error function 2/sqrt(pi) * integral of exp(-t^2) from 0 to x"),
    _activation("STEP", "step", cuda=F + I, doc="1 if x > 0 else 0"),
    op("CLAMP", "unary", "clamp", F + I, params=2, numpy="clip", eager=("clip", "clamp"),
       style="custom", builder="clamp", bstyle="custom", cuda=F,
       doc="min(max(x, min), max)"),
    op("SCALE", "unary", "scale", F, params=1, fe=True, eager="scale", style="custom",
       builder="scale", bstyle="custom", cuda=True, doc="x * s"),
    # ------------------------------------------------------------------ graph-only ops
    op("ADD1", "other", builder="add1", bstyle="custom", vm="ADD", cuda=True,
       doc="a + the single element of b"),
    op("VIEW", "view", doc="a view (no computation)"),
    op("RESHAPE", "view", doc="a reshaped view (no computation)"),
    op("PERMUTE", "view", doc="a permuted view (no computation)"),
    op("TRANSPOSE", "view", doc="a transposed view (no computation)"),
    op("SUM", "reduce", builder="sum", bstyle="custom", cuda=True,
       doc="the sum of all elements"),
    op("SUM_ROWS", "reduce", builder="sum_rows", bstyle="custom", cuda=True,
       doc="each row's sum"),
    op("MEAN", "reduce", builder="mean", bstyle="custom", cuda=True, doc="each row's mean"),
    op("MUL_MAT", "matmul", builder="mul_mat", bstyle="custom", cuda=True,
       doc="the matrix product a [K, M] x b [K, N] -> [M, N]"),
    op("GET_ROWS", "other", builder="get_rows", bstyle="custom", cuda=True,
       doc="rows of a table (f32/f16/bf16/quantized) picked by int32 ids, as f32"),
    # --- issue 13: rows / attention (ops3)
    op("SET_ROWS", "other", builder="set_rows", bstyle="custom", cuda=True,
       doc="rows of b written into a (a view of a) at the row ids c, converted to a's type"),
    op("FLASH_ATTN_EXT", "other", builder="flash_attn_ext", bstyle="custom", cuda=True,
       doc="softmax(softcap(scale * q k^T) + mask) v per head, result [d_v, n_head, n_q, b]"),
    # --- end issue 13 (ops3)
    # --- issue 13: rope / concat / repeat / pad / argsort / top_k / argmax (ops2)
    op("ROPE", "other", builder="rope_ext", bstyle="custom", cuda=True,
       doc="rotary position embedding, normal or NeoX, YaRN scaling (ggml_rope_ext)"),
    op("CONCAT", "other", builder="concat", bstyle="custom", cuda=True,
       doc="a and b joined along one dim (ggml_concat)"),
    op("REPEAT", "other", builder="repeat", bstyle="custom", cuda=True,
       doc="a tiled to b's shape (ggml_repeat)"),
    op("PAD", "other", builder="pad", bstyle="custom", cuda=True,
       doc="a with zeros (or wrapped values) added before/after each dim (ggml_pad_ext)"),
    op("ARGSORT", "other", builder="argsort", bstyle="custom", cuda=("f32",),
       doc="each row's indices sorted by value, i32 (ggml_argsort)"),
    op("TOP_K", "other", builder="top_k", bstyle="custom", cuda=("f32",),
       doc="the indices of each row's k largest values, i32 (ggml_top_k)"),
    op("ARGMAX", "other", builder="argmax", bstyle="custom", cuda=("f32",),
       doc="each row's index of its largest value, i32 (ggml_argmax)"),
    # --- end issue 13 (ops2)
    # --- issue 13: norms / softmax / GLU (ops1); kernels in cpu/csrc/ops_norm.h, builders
    # in graph/context.py, eager functions in ufuncs/nn.py; CUDA kernels in cuda/nn.cu
    # (GLU's f16 computes as f32), the shape/sort ops' in cuda/shape.cu
    op("NORM", "other", builder="norm", bstyle="custom", cuda=F,
       doc="each row (ne0) normalized: (x - mean) / sqrt(var + eps)"),
    op("RMS_NORM", "other", builder="rms_norm", bstyle="custom", cuda=F,
       doc="each row (ne0) divided by its root mean square: x / sqrt(mean(x^2) + eps)"),
    op("GROUP_NORM", "other", builder="group_norm", bstyle="custom", cuda=F,
       doc="norm over groups of channels (dim 2), each group over ne0 * ne1 * channels"),
    op("DIAG_MASK_INF", "other", builder="diag_mask_inf", bstyle="custom", cuda=F,
       doc="-inf above the diagonal shifted by n_past (i0 > n_past + i1), x elsewhere"),
    op("SOFT_MAX", "other", builder="soft_max_ext", bstyle="custom", cuda=F,
       doc="softmax of each row of x * scale + slope * mask (ALiBi slope from max_bias)"),
    op("GLU", "other", builder="glu", bstyle="custom", cuda=F,
       doc="gated linear unit act(x) * g: reglu, geglu, swiglu, geglu_erf, geglu_quick"),
)

# --- issue 14: SIMD math rows (math). (formula, compute type) pairs whose contiguous rows
# run the vectorized functions of cpu/csrc/simd_math.h (sm_row_<formula>_<type>); their
# scalar kern_<formula>_<type> is the same code on one element, so every layout agrees.
SIMD_ROWS = frozenset([("exp", "f32"), ("log", "f32"), ("sin", "f32"), ("cos", "f32"),
                       ("tanh", "f32"), ("sigmoid", "f32"), ("silu", "f32"),
                       # math2: the rest of issue 14's list
                       ("expm1", "f32"), ("log1p", "f32"), ("log2", "f32"), ("erf", "f32"),
                       ("gelu", "f32"), ("gelu_erf", "f32"), ("gelu_quick", "f32"),
                       ("softplus", "f32"),
                       # float64 (csrc/simd_math_f64.h)
                       ("exp", "f64"), ("expm1", "f64"), ("log", "f64"), ("log1p", "f64"),
                       ("log2", "f64"), ("sin", "f64"), ("cos", "f64"), ("tanh", "f64"),
                       ("sigmoid", "f64"), ("silu", "f64"),
                       # float64 activations (csrc/simd_math_f64_act.h)
                       ("erf", "f64"), ("gelu", "f64"), ("gelu_erf", "f64"),
                       ("gelu_quick", "f64"), ("softplus", "f64")])
# --- end issue 14 (math)

BY_NAME = {o.name: o for o in OPS}
_NUMBER = {o.name: i for i, o in enumerate(OPS)}


def number(name):
    """The op's enum value (its row in the table)."""
    return _NUMBER[name]


def elementwise(o):
    """True for ops the elementwise kernels (and the fused executor) run."""
    return o.kind in ("binary", "unary") or o.name == "ADD1"


def _check():
    """The table's own consistency (run at import: a bad row fails loudly at build time)."""
    seen = set()
    for o in OPS:
        if o.name in seen:
            raise ValueError(f"op {o.name} appears twice")
        seen.add(o.name)
        if o.kind in ("binary", "unary"):
            if not o.formula or not o.types:
                raise ValueError(f"{o.name}: elementwise ops need a formula and types")
            if o.result not in ("same", "bool"):
                raise ValueError(f"{o.name}: result must be 'same' or 'bool'")
        if o.style in ("ufunc", "activation", "custom") and not o.eager:
            raise ValueError(f"{o.name}: an eager function needs a name")
        if o.style == "ufunc" and not o.numpy:
            raise ValueError(f"{o.name}: a ufunc-style function follows a numpy ufunc")
        if o.bstyle and not o.builder:
            raise ValueError(f"{o.name}: builder style without a builder name")
    names = [n for o in OPS for n in o.eager]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"eager names used twice: {sorted(dup)}")


_check()
