"""ggml's graph-building API on the context: ``ctx.add(a, b)``, ``ctx.mul_mat(a, b)``, ...

Each builder validates its inputs with ggml's rules, creates the result tensor in the
context, records op, sources and op parameters, and computes nothing (ggml_add_impl and
friends). ``ctx.new_graph()`` + ``graph.build_forward_expand(t)`` + ``graph.compute(n)``
then run the recorded ops (see ``ggml_cy/_graph.pyx``).

Rules (ggml's):
  * binary ops: b tiles a (``ggml_can_repeat``): every ``a.ne[i]`` is a multiple of
    ``b.ne[i]``; the result has a's shape and type;
  * logical and relational ops give BOOL results;
  * ``*_inplace`` forms return a view of a and write into a's memory;
  * mul_mat: a is [K, M], b is [K, N], the result [M, N] f32, batched over dims 2 and 3
    with a repeated (``b.ne[2] % a.ne[2] == 0``, same for dim 3); a f32, f16, bf16 or
    quantized, b f32.
"""
from ggml_cy.core import _core, optable
from ggml_cy.graph import _graph
from ggml_cy.cpu import _quant_ops
from ggml_cy.cpu import _dequant
from ggml_cy.core._core import GGMLType, Tensor

__all__ = ["Context"]

OPS = _graph.OPS

# Builders made from the op table (ggml_cy/core/optable.py): builder name -> op name.
# "binary" and "unary" rows also get an ``_inplace`` form; "logical" rows give BOOL
# results; "custom" rows are the methods written out in Context below.
_BINARY = {o.builder: o.name for o in optable.OPS if o.bstyle == "binary"}
_LOGICAL = {o.builder: o.name for o in optable.OPS if o.bstyle == "logical"}
_UNARY = {o.builder: o.name for o in optable.OPS if o.bstyle == "unary"}
_CUSTOM = {o.builder: o.name for o in optable.OPS if o.bstyle == "custom"}

def _shape(t):
    return "[" + ", ".join(str(n) for n in t.ne) + "]"


def _tensor(x, what):
    if not isinstance(x, Tensor):
        raise TypeError(f"{what} must be a ggml_cy Tensor, not {type(x).__name__}")
    x.ne  # raises RuntimeError for a tensor whose context was reset
    return x


def _float(x, what):
    if isinstance(x, bool) or not isinstance(x, (int, float)) and not hasattr(x, "__float__"):
        raise TypeError(f"{what} must be a real number, not {type(x).__name__}")
    try:
        return float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a real number, not {type(x).__name__}") from None


def can_repeat(b, a):
    """ggml_can_repeat(b, a): b tiles a (every a.ne[i] is a multiple of b.ne[i])."""
    for nb_, na in zip(b.ne, a.ne):
        if nb_ == 0:
            if na != 0:
                return False
        elif na % nb_ != 0:
            return False
    return True


def _quant_copy(a):
    """cpy/cont/dup out of a quantized tensor (issue 12): dequantizing copies run on the
    CPU's dequantizer (ggml_cy.cpu._dequant)."""
    return GGMLType(a.type).is_quantized


def _check_quantizing_copy(a, b):
    """cpy(a, b) with b quantized: a must be f32/f16/bf16 with rows (ne0) of whole blocks
    of b's type, b contiguous (ggml's dup into a quantized tensor)."""
    from ggml_cy.cpu import _quantize
    bt, at = GGMLType(b.type), GGMLType(a.type)
    if not _quantize.can_quantize(int(bt)):
        raise TypeError(f"cpy: ggml_cy cannot quantize to {bt.name}")
    if at not in (GGMLType.F32, GGMLType.F16, GGMLType.BF16):
        raise TypeError(f"cpy: quantizing into {bt.name} takes f32, f16 or bf16, "
                        f"not {at.name}")
    if a.ne[0] % bt.blck_size:
        raise ValueError(f"cpy: a's rows ({a.ne[0]} values) are not whole {bt.name} blocks "
                         f"of {bt.blck_size}")
    if a.ne[0] > 1 and a.nb[0] != at.type_size:
        raise ValueError("cpy: quantizing needs a's elements adjacent within a row (nb0 = "
                         f"{at.type_size}, got {a.nb[0]}); cont() it first")
    if not b.is_contiguous:
        raise ValueError(f"cpy: the quantized destination {bt.name} {_shape(b)} must be "
                         "contiguous")


def _type_error(op, *tensors):
    types = ", ".join(f"{GGMLType(t.type).name} {_shape(t)}" for t in tensors)
    return TypeError(f"{op}: the CPU kernels do not support these types ({types})")


# --- issue 13: norms / softmax / GLU (ops1): argument checks of the builders
_ROW_TYPES = (GGMLType.F32, GGMLType.F64)
_GLU_TYPES = (GGMLType.F32, GGMLType.F16, GGMLType.F64)
# ggml's enum ggml_glu_op (SWIGLU_OAI, 3, takes extra parameters: not built here)
GLU_OPS = {"reglu": 0, "geglu": 1, "swiglu": 2, "geglu_erf": 4, "geglu_quick": 5}


def _eps(eps, name):
    import math
    e = _float(eps, f"{name}: eps")
    if not (e >= 0.0) or math.isinf(e):
        raise ValueError(f"{name}: eps must be a finite number >= 0, got {e}")
    return e


def _int_in(v, what, lo):
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{what} must be an integer, not {type(v).__name__}")
    v = v.__index__()
    if v < lo or v > 2**31 - 1:
        raise ValueError(f"{what} must be between {lo} and 2**31 - 1, got {v}")
    return v


def _glu_op(op, name):
    if isinstance(op, str):
        if op not in GLU_OPS:
            raise ValueError(f"{name}: unknown GLU op {op!r} (one of {sorted(GLU_OPS)})")
        return GLU_OPS[op]
    if isinstance(op, bool) or not hasattr(op, "__index__"):
        raise TypeError(f"{name}: op must be a GLU op name or number, not "
                        f"{type(op).__name__}")
    if op.__index__() not in GLU_OPS.values():
        raise ValueError(f"{name}: GLU op {op.__index__()} is not supported (ggml_glu_op "
                         f"numbers {sorted(GLU_OPS.values())})")
    return op.__index__()


class Context(_core.Context):
    """A ggml context (memory arena) with ggml's op builders and graphs.

    ``Context(mem_size, mem_buffer=None, no_alloc=False)``; see ``ggml_cy.Tensor`` for
    tensors and views. Builders record ops; ``new_graph`` / ``Graph.compute`` run them."""

    # ------------------------------------------------------------------ graphs
    def new_graph(self, size=_graph.DEFAULT_GRAPH_SIZE):
        """ggml_new_graph_custom: a graph with `size` node and leaf slots in this arena."""
        return _graph.new_graph(self, size)

    @staticmethod
    def graph_overhead(size=_graph.DEFAULT_GRAPH_SIZE):
        """Arena bytes a graph of `size` needs (object header included)."""
        return _core.object_overhead() + _graph.graph_bytes(size)

    def set_output(self, t):
        """ggml_set_output: keep t in memory (the fused executor never skips writing it)."""
        return _graph.set_output(_tensor(t, "t"))

    # ------------------------------------------------------------------ helpers
    def _record(self, op, rtype, ne, srcs, params=(), view_of=-1):
        return _graph.new_op(self, OPS[op], int(rtype), tuple(ne), tuple(srcs),
                             tuple(params), view_of)

    def _binary(self, name, op, a, b, inplace=False, result_type=None):
        a = _tensor(a, f"{name}: a")
        b = _tensor(b, f"{name}: b")
        if not can_repeat(b, a):
            raise ValueError(f"{name}: b {_shape(b)} cannot be tiled over a {_shape(a)} "
                             "(every ne of a must be a multiple of b's)")
        rtype = a.type if result_type is None else result_type
        if not _graph.supported(OPS[op], int(rtype), int(a.type), int(b.type)):
            raise _type_error(name, a, b)
        if inplace and rtype != a.type:
            raise TypeError(f"{name}: an in-place result must have a's type")
        return self._record(op, rtype, a.ne, (a, b), view_of=0 if inplace else -1)

    def _unary(self, name, op, a, params=(), inplace=False):
        a = _tensor(a, f"{name}: a")
        if not _graph.supported(OPS[op], int(a.type), int(a.type), -1):
            raise _type_error(name, a)
        return self._record(op, a.type, a.ne, (a,), params, view_of=0 if inplace else -1)

    # ------------------------------------------------------------------ binary ops
    def add1(self, a, b):
        """ggml_add1: a + the single element of b."""
        a = _tensor(a, "add1: a")
        b = _tensor(b, "add1: b")
        if b.nelements != 1:
            raise ValueError(f"add1: b must hold one element, got b {_shape(b)} "
                             f"(a {_shape(a)})")
        if not _graph.supported(OPS["ADD"], int(a.type), int(a.type), int(b.type)):
            raise _type_error("add1", a, b)
        return self._record("ADD1", a.type, a.ne, (a, b))

    # ------------------------------------------------------------------ parametrized unary
    def scale(self, a, s):
        """ggml_scale: a * s."""
        return self._unary("scale", "SCALE", a, (_float(s, "scale: s"),))

    def scale_inplace(self, a, s):
        return self._unary("scale_inplace", "SCALE", a, (_float(s, "scale: s"),), True)

    def clamp(self, a, min, max):
        """ggml_clamp: min(max(a, min), max)."""
        lo, hi = _float(min, "clamp: min"), _float(max, "clamp: max")
        if lo > hi:
            raise ValueError(f"clamp: min {lo} is greater than max {hi}")
        return self._unary("clamp", "CLAMP", a, (lo, hi))

    def leaky_relu(self, a, negative_slope=0.01, inplace=False):
        """ggml_leaky_relu: a if a > 0 else negative_slope * a."""
        return self._unary("leaky_relu", "LEAKY_RELU", a,
                           (_float(negative_slope, "leaky_relu: negative_slope"),),
                           bool(inplace))

    def elu(self, a):
        """ggml_elu: a if a > 0 else exp(a) - 1."""
        return self._unary("elu", "ELU", a, (1.0,))

    def elu_inplace(self, a):
        return self._unary("elu_inplace", "ELU", a, (1.0,), True)

    def logical_not(self, a):
        a = _tensor(a, "logical_not: a")
        if not _graph.supported(OPS["LOGICAL_NOT"], int(GGMLType.BOOL), int(a.type), -1):
            raise _type_error("logical_not", a)
        return self._record("LOGICAL_NOT", GGMLType.BOOL, a.ne, (a,))

    # ------------------------------------------------------------------ copies
    def cpy(self, a, b):
        """ggml_cpy: copies (and converts) a into b; returns a view of b. The element
        counts must match (the layouts may differ)."""
        a = _tensor(a, "cpy: a")
        b = _tensor(b, "cpy: b")
        if a.nelements != b.nelements:
            raise ValueError(f"cpy: a {_shape(a)} and b {_shape(b)} have different "
                             "element counts")
        if _quant_copy(a):      # dequantize (or copy blocks): qdeq's CPU path
            if not _dequant.copy_supported(int(b.type), int(a.type)):
                raise TypeError(f"cpy: a {GGMLType(a.type).name} tensor copies into f32, "
                                f"f16, bf16 or {GGMLType(a.type).name}, not "
                                f"{GGMLType(b.type).name}")
        elif GGMLType(b.type).is_quantized and not GGMLType(a.type).is_quantized:
            _check_quantizing_copy(a, b)        # ggml's way to quantize (cpu/csrc/quantize.h)
        elif not _graph.supported(OPS["CPY"], int(b.type), int(a.type), -1):
            raise _type_error("cpy", a, b)
        return self._record("CPY", b.type, b.ne, (a, b), view_of=1)

    def cont(self, a):
        """ggml_cont: a contiguous copy of a (same shape and type)."""
        a = _tensor(a, "cont: a")
        if not _quant_copy(a) and not _graph.supported(OPS["CONT"], int(a.type), int(a.type), -1):
            raise _type_error("cont", a)
        return self._record("CONT", a.type, a.ne, (a,))

    def dup(self, a):
        """ggml_dup: a copy of a."""
        a = _tensor(a, "dup: a")
        if not _quant_copy(a) and not _graph.supported(OPS["DUP"], int(a.type), int(a.type), -1):
            raise _type_error("dup", a)
        return self._record("DUP", a.type, a.ne, (a,))

    # ------------------------------------------------------------------ reductions
    def _reduction(self, name, op, a, ne):
        a = _tensor(a, f"{name}: a")
        if a.type not in (GGMLType.F32, GGMLType.F64):
            raise TypeError(f"{name}: a must be f32 or f64, got {GGMLType(a.type).name} "
                            f"{_shape(a)}")
        return self._record(op, a.type, ne, (a,))

    def sum(self, a):
        """ggml_sum: the sum of all elements, ne [1, 1, 1, 1]."""
        return self._reduction("sum", "SUM", a, (1, 1, 1, 1))

    def sum_rows(self, a):
        """ggml_sum_rows: each row's sum, ne [1, ne1, ne2, ne3]."""
        a = _tensor(a, "sum_rows: a")
        return self._reduction("sum_rows", "SUM_ROWS", a, (1,) + tuple(a.ne[1:]))

    def mean(self, a):
        """ggml_mean: each row's mean, ne [1, ne1, ne2, ne3]."""
        a = _tensor(a, "mean: a")
        return self._reduction("mean", "MEAN", a, (1,) + tuple(a.ne[1:]))

    # ------------------------------------------------------------------ matrix product
    def mul_mat(self, a, b):
        """ggml_mul_mat: a [K, M] (f32, f16, bf16 or quantized), b [K, N] (f32) -> [M, N]
        f32, where result[n][m] = sum_k a[m][k] * b[n][k] (numpy: ``b @ a.T``), batched over dims 2
        and 3 with each a matrix repeated over b.ne[2]/a.ne[2] consecutive batches. With a bf16
        a, b is rounded to bf16 first (ggml's rule; the products are exact, the sums f32)."""
        a = _tensor(a, "mul_mat: a")
        b = _tensor(b, "mul_mat: b")
        if a.ne[0] != b.ne[0]:
            raise ValueError(f"mul_mat: a {_shape(a)} and b {_shape(b)} differ in ne[0] "
                             "(the shared dimension K)")
        for d in (2, 3):
            if a.ne[d] == 0 or b.ne[d] % a.ne[d] != 0:
                raise ValueError(f"mul_mat: b {_shape(b)} cannot broadcast a {_shape(a)} "
                                 f"over dim {d} (b.ne[{d}] must be a multiple of a.ne[{d}])")
        if a.is_transposed:
            raise ValueError(f"mul_mat: a {_shape(a)} is transposed; use ctx.cont(a) first "
                             "(as ggml requires)")
        quantized = GGMLType(a.type).is_quantized
        if b.type != GGMLType.F32 or not (a.type in (GGMLType.F32, GGMLType.F16,
                                                     GGMLType.BF16) or (
                quantized and _quant_ops.mul_mat_supported(int(a.type)))):
            raise TypeError(f"mul_mat: a must be f32 or f16 (or bf16, or quantized with a kernel: "
                            f"{_quant_mm_types()}) and b f32, got a "
                            f"{GGMLType(a.type).name} {_shape(a)}, b "
                            f"{GGMLType(b.type).name} {_shape(b)}")
        if quantized and a.nb[0] != GGMLType(a.type).type_size:
            raise ValueError(f"mul_mat: quantized a {_shape(a)} must have contiguous rows of "
                             "blocks (nb[0] == type_size); use ctx.cont(a) first")
        return self._record("MUL_MAT", GGMLType.F32, (a.ne[1], b.ne[1], b.ne[2], b.ne[3]),
                            (a, b))


    # ------------------------------------------------------------------ row lookup
    def get_rows(self, a, b):
        """ggml_get_rows: rows of table a [ne0, R, ne2, ne3] (f32, f16, bf16 or any
        quantized type) picked by int32 ids b [n, ne2, ne3]: the result [ne0, n, ne2, ne3]
        f32 holds ``a[:, b[i, j, k], j, k]`` at ``[:, i, j, k]`` (quantized rows
        dequantized; an i32 table gives i32 rows). ggml's rule: ``a.ne[2] == b.ne[1]``,
        ``a.ne[3] == b.ne[2]``, ``b.ne[3] == 1``. An id outside [0, R) makes compute raise
        IndexError."""
        a = _tensor(a, "get_rows: a")
        b = _tensor(b, "get_rows: b")
        if b.type != GGMLType.I32:
            raise TypeError(f"get_rows: the ids b must be i32, got "
                            f"{GGMLType(b.type).name} {_shape(b)}")
        if not _quant_ops.get_rows_supported(int(a.type)) and a.type != GGMLType.I32:
            raise TypeError(f"get_rows: no kernel for tables of type "
                            f"{GGMLType(a.type).name} {_shape(a)}")
        if a.ne[2] != b.ne[1] or a.ne[3] != b.ne[2] or b.ne[3] != 1:
            raise ValueError(f"get_rows: ids b {_shape(b)} do not match table a {_shape(a)} "
                             "(ggml needs a.ne[2] == b.ne[1], a.ne[3] == b.ne[2], "
                             "b.ne[3] == 1)")
        if a.nb[0] != GGMLType(a.type).type_size and GGMLType(a.type).is_quantized:
            raise ValueError(f"get_rows: quantized table a {_shape(a)} must have contiguous "
                             "rows of blocks")
        # (issue 13, ops3) an i32 table gives i32 rows, as in ggml
        rtype = GGMLType.I32 if a.type == GGMLType.I32 else GGMLType.F32
        return self._record("GET_ROWS", rtype, (a.ne[0], b.ne[0], b.ne[1], b.ne[2]),
                            (a, b))

    # --- issue 13: rows / attention (ops3)
    def set_rows(self, a, b, c):
        """ggml_set_rows: writes the rows of b [ne0, n, ne2, ne3] (f32 or f16) into a
        (f32, f16, bf16 or a quantized type ggml_cy can quantize to) at the row ids c
        [n, ne11, ne12] (i32 or i64), converting to a's type; returns a view of a:
        ``a[:, c[i, j % ne11, k % ne12], j, k] = b[:, i, j, k]`` (ggml's rule:
        ``a.ne[0] == b.ne[0]``, ``a.ne[2:] == b.ne[2:]``, ``b.ne[1] == c.ne[0]``,
        ``b.ne[2] % c.ne[1] == 0``, ``b.ne[3] % c.ne[2] == 0``, ``c.ne[3] == 1``; rows
        of a and b with adjacent elements). An id outside [0, a.ne[1]) makes compute
        raise IndexError; with repeated ids, which row lands is unspecified (as ggml)."""
        a = _tensor(a, "set_rows: a")
        b = _tensor(b, "set_rows: b")
        c = _tensor(c, "set_rows: c")
        at = GGMLType(a.type)
        if b.type not in (GGMLType.F32, GGMLType.F16):
            raise TypeError(f"set_rows: the rows b must be f32 or f16, got "
                            f"{GGMLType(b.type).name} {_shape(b)}")
        if c.type not in (GGMLType.I32, GGMLType.I64):
            raise TypeError(f"set_rows: the row ids c must be i32 or i64, got "
                            f"{GGMLType(c.type).name} {_shape(c)}")
        if at.is_quantized:
            from ggml_cy.cpu import _quantize
            if not _quantize.can_quantize(int(at)):
                raise TypeError(f"set_rows: ggml_cy cannot quantize to {at.name}")
            if a.ne[0] % at.blck_size:
                raise ValueError(f"set_rows: a's rows ({a.ne[0]} values) are not whole "
                                 f"{at.name} blocks of {at.blck_size}")
        elif at not in (GGMLType.F32, GGMLType.F16, GGMLType.BF16):
            raise TypeError(f"set_rows: a must be f32, f16, bf16 or quantized, got "
                            f"{at.name} {_shape(a)}")
        if (a.ne[0] != b.ne[0] or a.ne[2] != b.ne[2] or a.ne[3] != b.ne[3]
                or b.ne[1] != c.ne[0] or c.ne[1] == 0 or c.ne[2] == 0
                or b.ne[2] % c.ne[1] or b.ne[3] % c.ne[2] or c.ne[3] != 1):
            raise ValueError(f"set_rows: a {_shape(a)}, b {_shape(b)} and ids c {_shape(c)} "
                             "do not match (ggml needs a.ne[0] == b.ne[0], a.ne[2:] == "
                             "b.ne[2:], b.ne[1] == c.ne[0], b.ne[2] % c.ne[1] == 0, "
                             "b.ne[3] % c.ne[2] == 0, c.ne[3] == 1)")
        for t, what in ((a, "a"), (b, "b")):
            unit = GGMLType(t.type).type_size
            if t.ne[0] > (GGMLType(t.type).blck_size) and t.nb[0] != unit:
                raise ValueError(f"set_rows: {what} {_shape(t)} must have rows of adjacent "
                                 f"elements (nb[0] == {unit}, got {t.nb[0]})")
        return self._record("SET_ROWS", a.type, a.ne, (b, c, a), view_of=2)

    def flash_attn_ext(self, q, k, v, mask=None, scale=1.0, max_bias=0.0,
                       logit_softcap=0.0):
        """ggml_flash_attn_ext: attention per head in one pass (online softmax).

        q [d_k, n_q, n_head, batch] f32; k [d_k, n_kv, n_head_kv, batch] and v [d_v, n_kv,
        n_head_kv, batch] f16 (or f32, bf16, quantized); mask None or f16 [>= n_kv, >= n_q,
        m2, m3] (contiguous; ggml_cy does not require ggml's old GGML_KQ_MASK_PAD padding
        of dim 1, but accepts it) broadcast over heads (n_head % m2 == 0) and batch
        (batch % m3 == 0). Grouped-query attention: head h reads k/v head
        ``h // (n_head / n_head_kv)``. The result is f32 [d_v, n_head, n_q, batch]
        (ggml's permuted layout): ``softmax(softcap(scale * q k^T) + slope * mask) v``
        with softcap(x) = logit_softcap * tanh(x / logit_softcap) when logit_softcap != 0
        and ALiBi slopes from max_bias (> 0 needs a mask). Rows that every key masks
        (-inf) give zeros. Computed in f32 (see ``flash_attn_ext_set_prec``)."""
        q = _tensor(q, "flash_attn_ext: q")
        k = _tensor(k, "flash_attn_ext: k")
        v = _tensor(v, "flash_attn_ext: v")
        if mask is not None:
            mask = _tensor(mask, "flash_attn_ext: mask")
        scale = _float(scale, "flash_attn_ext: scale")
        max_bias = _float(max_bias, "flash_attn_ext: max_bias")
        logit_softcap = _float(logit_softcap, "flash_attn_ext: logit_softcap")
        if q.type != GGMLType.F32:
            raise TypeError(f"flash_attn_ext: q must be f32, got {GGMLType(q.type).name}")
        for t, what in ((k, "k"), (v, "v")):
            if t.type == GGMLType.I32 or not _quant_ops.get_rows_supported(int(t.type)):
                raise TypeError(f"flash_attn_ext: {what} must be f16, f32, bf16 or a "
                                f"dequantizable type, got {GGMLType(t.type).name}")
        if mask is not None and mask.type != GGMLType.F16:
            raise TypeError(f"flash_attn_ext: the mask must be f16, got "
                            f"{GGMLType(mask.type).name}")
        if k.ne[0] != q.ne[0]:
            raise ValueError(f"flash_attn_ext: q {_shape(q)} and k {_shape(k)} differ in "
                             "ne[0] (the head size)")
        if v.ne[1] != k.ne[1]:
            raise ValueError(f"flash_attn_ext: k {_shape(k)} and v {_shape(v)} differ in "
                             "ne[1] (the number of keys)")
        if q.ne[3] != k.ne[3] or q.ne[3] != v.ne[3]:
            raise ValueError(f"flash_attn_ext: q {_shape(q)}, k {_shape(k)} and v "
                             f"{_shape(v)} differ in ne[3]")
        for t, what in ((k, "k"), (v, "v")):
            if t.ne[2] == 0 or q.ne[2] % t.ne[2]:
                raise ValueError(f"flash_attn_ext: q's {q.ne[2]} heads are not a multiple "
                                 f"of {what}'s {t.ne[2]} (grouped-query attention)")
        for t, what in ((q, "q"), (k, "k"), (v, "v")):
            tt = GGMLType(t.type)
            if tt.is_quantized and t.ne[0] % tt.blck_size:
                raise ValueError(f"flash_attn_ext: {what}'s rows ({t.ne[0]} values) are "
                                 f"not whole {tt.name} blocks of {tt.blck_size}")
            if t.ne[0] > tt.blck_size and t.nb[0] != tt.type_size:
                raise ValueError(f"flash_attn_ext: {what} {_shape(t)} must have rows of "
                                 f"adjacent elements (nb[0] == {tt.type_size}); cont() it")
        if mask is not None:
            if not mask.is_contiguous:
                raise ValueError("flash_attn_ext: the mask must be contiguous")
            if mask.ne[0] < k.ne[1] or mask.ne[1] < q.ne[1]:
                raise ValueError(f"flash_attn_ext: the mask {_shape(mask)} must cover "
                                 f"[n_kv={k.ne[1]}, n_q={q.ne[1]}]")
            if (mask.ne[2] == 0 or mask.ne[3] == 0 or q.ne[2] % mask.ne[2]
                    or q.ne[3] % mask.ne[3]):
                raise ValueError(f"flash_attn_ext: the mask {_shape(mask)} does not "
                                 f"broadcast over q {_shape(q)} (n_head % mask.ne[2] and "
                                 "batch % mask.ne[3] must be 0)")
        if max_bias > 0.0 and mask is None:
            raise ValueError("flash_attn_ext: max_bias > 0 (ALiBi) needs a mask")
        srcs = (q, k, v) if mask is None else (q, k, v, mask)
        return self._record("FLASH_ATTN_EXT", GGMLType.F32,
                            (v.ne[0], q.ne[2], q.ne[1], q.ne[3]), srcs,
                            (scale, max_bias, logit_softcap, PREC_DEFAULT))

    @staticmethod
    def flash_attn_ext_set_prec(a, prec):
        """ggml_flash_attn_ext_set_prec: records the precision (``PREC_DEFAULT`` 0 or
        ``PREC_F32`` 10) in op_params[3]. ggml_cy's CPU kernel computes in f32 either way."""
        a = _tensor(a, "flash_attn_ext_set_prec: a")
        if a.op != OPS["FLASH_ATTN_EXT"]:
            raise ValueError("flash_attn_ext_set_prec: a is not a flash_attn_ext result")
        if isinstance(prec, bool) or not isinstance(prec, int) or \
                prec not in (PREC_DEFAULT, PREC_F32):
            raise ValueError(f"flash_attn_ext_set_prec: prec must be PREC_DEFAULT (0) or "
                             f"PREC_F32 (10), got {prec!r}")
        _graph.set_op_param_i32(a, 3, int(prec))

    @staticmethod
    def flash_attn_ext_get_prec(a):
        """ggml_flash_attn_ext_get_prec: the precision recorded in op_params[3]."""
        a = _tensor(a, "flash_attn_ext_get_prec: a")
        if a.op != OPS["FLASH_ATTN_EXT"]:
            raise ValueError("flash_attn_ext_get_prec: a is not a flash_attn_ext result")
        return a.op_params[3]
    # --- end issue 13 (ops3)

    # --- issue 13: rope / concat / repeat / pad / argsort / top_k / argmax (ops2)
    # ------------------------------------------------------------------ rotary embedding
    def _rope(self, name, a, b, c, n_dims, mode, n_ctx_orig, freq_base, freq_scale,
              ext_factor, attn_factor, beta_fast, beta_slow, inplace):
        a = _tensor(a, f"{name}: a")
        b = _tensor(b, f"{name}: b")
        if a.type not in (GGMLType.F32, GGMLType.F16):
            raise TypeError(f"{name}: a must be f32 or f16, got {GGMLType(a.type).name} "
                            f"{_shape(a)}")
        if b.type != GGMLType.I32 or b.ne[1] != 1 or b.ne[2] != 1 or b.ne[3] != 1:
            raise TypeError(f"{name}: the positions b must be an i32 vector, got "
                            f"{GGMLType(b.type).name} {_shape(b)}")
        if b.ne[0] != a.ne[2]:
            raise ValueError(f"{name}: b holds {b.ne[0]} positions but a {_shape(a)} has "
                             f"{a.ne[2]} tokens (ne[2]): one position per token")
        n_dims = _int(n_dims, f"{name}: n_dims")
        mode = _int(mode, f"{name}: mode")
        if mode & 1:
            raise ValueError(f"{name}: mode & 1 == 1 is no longer supported (ggml)")
        if mode not in (0, 2):
            raise ValueError(f"{name}: mode {mode} is not supported: 0 (normal) or 2 "
                             "(NeoX); ggml_cy has no multi-section (mrope) or vision modes")
        if n_dims <= 0 or n_dims % 2 or n_dims > a.ne[0]:
            raise ValueError(f"{name}: n_dims {n_dims} must be even, positive and at most "
                             f"a's head size ne[0] = {a.ne[0]}")
        if c is not None:
            c = _tensor(c, f"{name}: c")
            if c.type != GGMLType.F32:
                raise TypeError(f"{name}: the freq factors c must be f32, got "
                                f"{GGMLType(c.type).name} {_shape(c)}")
            if c.ne[0] < n_dims // 2:
                raise ValueError(f"{name}: the freq factors c {_shape(c)} need at least "
                                 f"n_dims/2 = {n_dims // 2} values")
        n_ctx_orig = _int(n_ctx_orig, f"{name}: n_ctx_orig")
        if n_ctx_orig < 0:
            raise ValueError(f"{name}: n_ctx_orig must be >= 0, got {n_ctx_orig}")
        fl = [_float(v, f"{name}: {w}") for v, w in (
            (freq_base, "freq_base"), (freq_scale, "freq_scale"), (ext_factor, "ext_factor"),
            (attn_factor, "attn_factor"), (beta_fast, "beta_fast"), (beta_slow, "beta_slow"))]
        # ggml's op_params: n_past, n_dims, mode, n_ctx, n_ctx_orig, 6 floats, sections, n_offs
        params = (0, n_dims, mode, 0, n_ctx_orig, *fl, 0, 0, 0, 0, 0)
        srcs = (a, b) if c is None else (a, b, c)
        return self._record("ROPE", a.type, a.ne, srcs, params, view_of=0 if inplace else -1)

    def rope_ext(self, a, b, c=None, n_dims=None, mode=0, n_ctx_orig=0, freq_base=10000.0,
                 freq_scale=1.0, ext_factor=0.0, attn_factor=1.0, beta_fast=0.0,
                 beta_slow=0.0):
        """ggml_rope_ext: rotary position embedding of a [head size, heads, tokens, batch]
        (f32 or f16) at the i32 positions b [tokens], with optional f32 freq factors c
        (each pair's frequency divided by c[k]). The first n_dims values of each head
        are rotated in pairs, (2k, 2k+1) for mode 0 (normal) or (k, k + n_dims/2) for
        mode 2 (NeoX), by p * freq_base^(-2k/n_dims), with ggml's YaRN scaling
        (freq_scale, ext_factor, attn_factor, beta_fast, beta_slow over n_ctx_orig);
        the rest are copied. ggml's argument order and op_params layout."""
        if n_dims is None:
            raise TypeError("rope_ext: n_dims is required")
        return self._rope("rope_ext", a, b, c, n_dims, mode, n_ctx_orig, freq_base,
                          freq_scale, ext_factor, attn_factor, beta_fast, beta_slow, False)

    def rope_ext_inplace(self, a, b, c=None, n_dims=None, mode=0, n_ctx_orig=0,
                         freq_base=10000.0, freq_scale=1.0, ext_factor=0.0, attn_factor=1.0,
                         beta_fast=0.0, beta_slow=0.0):
        """ggml_rope_ext_inplace: rope_ext written into a's memory (a view of a)."""
        if n_dims is None:
            raise TypeError("rope_ext_inplace: n_dims is required")
        return self._rope("rope_ext_inplace", a, b, c, n_dims, mode, n_ctx_orig, freq_base,
                          freq_scale, ext_factor, attn_factor, beta_fast, beta_slow, True)

    def rope(self, a, b, n_dims, mode=0):
        """ggml_rope: rope_ext with no freq factors, freq_base 10000 and no scaling."""
        return self._rope("rope", a, b, None, n_dims, mode, 0, 10000.0, 1.0, 0.0, 1.0, 0.0,
                          0.0, False)

    def rope_inplace(self, a, b, n_dims, mode=0):
        """ggml_rope_inplace: rope written into a's memory (a view of a)."""
        return self._rope("rope_inplace", a, b, None, n_dims, mode, 0, 10000.0, 1.0, 0.0,
                          1.0, 0.0, 0.0, True)

    # ------------------------------------------------------------------ shapes
    def concat(self, a, b, dim=0):
        """ggml_concat: a and b (same type, same ne except in dim) joined along dim."""
        a = _tensor(a, "concat: a")
        b = _tensor(b, "concat: b")
        dim = _int(dim, "concat: dim")
        if not 0 <= dim < 4:
            raise ValueError(f"concat: dim must be 0..3, got {dim}")
        if a.type != b.type:
            raise TypeError(f"concat: a and b must have one type, got "
                            f"{GGMLType(a.type).name} and {GGMLType(b.type).name}")
        _plain_type("concat", a)
        for d in range(4):
            if d != dim and a.ne[d] != b.ne[d]:
                raise ValueError(f"concat: a {_shape(a)} and b {_shape(b)} differ in ne[{d}] "
                                 f"(only dim {dim} may differ)")
        ne = tuple(a.ne[d] + b.ne[d] if d == dim else a.ne[d] for d in range(4))
        return self._record("CONCAT", a.type, ne, (a, b), (dim,))

    def repeat(self, a, b):
        """ggml_repeat: a tiled to b's shape (every b.ne[i] a multiple of a.ne[i])."""
        a = _tensor(a, "repeat: a")
        b = _tensor(b, "repeat: b")
        return self._repeat("repeat", a, tuple(b.ne))

    def repeat_4d(self, a, ne0, ne1, ne2, ne3):
        """ggml_repeat_4d: a tiled to the shape [ne0, ne1, ne2, ne3]."""
        a = _tensor(a, "repeat_4d: a")
        ne = tuple(_int(n, "repeat_4d: ne") for n in (ne0, ne1, ne2, ne3))
        if min(ne) < 0:
            raise ValueError(f"repeat_4d: negative size in {list(ne)}")
        return self._repeat("repeat_4d", a, ne)

    def _repeat(self, name, a, ne):
        _plain_type(name, a)
        for na, nd in zip(a.ne, ne):
            if (nd != 0) if na == 0 else (nd % na != 0):
                raise ValueError(f"{name}: a {_shape(a)} cannot be tiled to "
                                 f"[{', '.join(map(str, ne))}] (every size must be a "
                                 "multiple of a's)")
        return self._record("REPEAT", a.type, ne, (a,))

    def pad(self, a, p0=0, p1=0, p2=0, p3=0):
        """ggml_pad: a with p0..p3 zeros appended after each dim."""
        return self.pad_ext(a, 0, p0, 0, p1, 0, p2, 0, p3)

    def pad_ext(self, a, lp0=0, rp0=0, lp1=0, rp1=0, lp2=0, rp2=0, lp3=0, rp3=0):
        """ggml_pad_ext: a with lpN zeros before and rpN zeros after each dim N."""
        return self._pad("pad_ext", a, (lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3), False)

    def pad_circular(self, a, p0=0, p1=0, p2=0, p3=0):
        """ggml_pad_circular: a with p0..p3 values appended after each dim, wrapped
        around from the start of that dim (a torus)."""
        return self._pad("pad_circular", a, (0, p0, 0, p1, 0, p2, 0, p3), True)

    def pad_ext_circular(self, a, lp0=0, rp0=0, lp1=0, rp1=0, lp2=0, rp2=0, lp3=0, rp3=0):
        """ggml_pad_ext_circular: pad_ext with the added values wrapped around from the
        other end of each dim instead of zeros."""
        return self._pad("pad_ext_circular", a, (lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3),
                         True)

    def _pad(self, name, a, pads, circular):
        a = _tensor(a, f"{name}: a")
        pads = tuple(_int(p, f"{name}: padding") for p in pads)
        if min(pads) < 0:
            raise ValueError(f"{name}: paddings must be >= 0, got {list(pads)}")
        if max(pads) >= 2 ** 31:
            raise ValueError(f"{name}: a padding does not fit int32: {list(pads)}")
        _plain_type(name, a)
        for d in range(4):
            if circular and a.ne[d] == 0 and pads[2 * d] + pads[2 * d + 1] > 0:
                raise ValueError(f"{name}: cannot wrap around the empty dim {d} of a "
                                 f"{_shape(a)}")
        ne = tuple(a.ne[d] + pads[2 * d] + pads[2 * d + 1] for d in range(4))
        return self._record("PAD", a.type, ne, (a,), pads + (1 if circular else 0,))

    # ------------------------------------------------------------------ sorting
    SORT_ORDER_ASC = 0
    SORT_ORDER_DESC = 1

    def argsort(self, a, order=0):
        """ggml_argsort: each row's indices (i32, a's shape) ordered by a's values,
        ascending (order 0, ``SORT_ORDER_ASC``, "asc") or descending (1, "desc").
        Equal values keep their index order; NaN sorts above +inf."""
        a = _tensor(a, "argsort: a")
        if isinstance(order, str) and order.lower() in ("asc", "desc"):
            order = 0 if order.lower() == "asc" else 1
        order = _int(order, "argsort: order")
        if order not in (0, 1):
            raise ValueError(f"argsort: order must be 0 (ascending) or 1 (descending), "
                             f"got {order}")
        _f32_rows("argsort", a)
        return self._record("ARGSORT", GGMLType.I32, a.ne, (a,), (order,))

    def top_k(self, a, k):
        """ggml_top_k: the indices (i32 [k, ne1, ne2, ne3]) of each row's k largest
        values. ggml leaves their order open; ggml_cy gives them by descending value
        (equal values: lower index first)."""
        a = _tensor(a, "top_k: a")
        k = _int(k, "top_k: k")
        _f32_rows("top_k", a)
        if not 0 <= k <= a.ne[0]:
            raise ValueError(f"top_k: k must be in [0, ne[0] = {a.ne[0]}], got {k}")
        return self._record("TOP_K", GGMLType.I32, (k,) + tuple(a.ne[1:]), (a,))

    def argsort_top_k(self, a, k):
        """ggml_argsort_top_k: argsort descending, viewed to its first k columns."""
        a = _tensor(a, "argsort_top_k: a")
        k = _int(k, "argsort_top_k: k")
        if not 0 <= k <= a.ne[0]:
            raise ValueError(f"argsort_top_k: k must be in [0, ne[0] = {a.ne[0]}], got {k}")
        r = self.argsort(a, 1)
        return self.view_4d(r, k, r.ne[1], r.ne[2], r.ne[3], r.nb[1], r.nb[2], r.nb[3], 0)

    def argmax(self, a):
        """ggml_argmax: each row's index of its largest value, i32 [ne1], for a f32
        matrix a. ggml's CPU rule: equal maxima give the LAST index (numpy: the first)."""
        a = _tensor(a, "argmax: a")
        _f32_rows("argmax", a)
        if a.ne[2] != 1 or a.ne[3] != 1:
            raise ValueError(f"argmax: a must be a matrix (ne[2] == ne[3] == 1), got "
                             f"{_shape(a)}")
        return self._record("ARGMAX", GGMLType.I32, (a.ne[1], 1, 1, 1), (a,))
    # --- end issue 13 (ops2)
    # --- issue 13: norms / softmax / GLU (ops1) -------------------------------------
    # ggml's builders (ggml.c: ggml_norm_impl ... ggml_glu_impl): names, argument order and
    # op_params layout; kernels in cpu/csrc/ops_norm.h. Types: f32 (ggml's) and f64 (ggml_cy's
    # float64 data); GLU also f16. Strided/permuted sources are accepted (the kernels read
    # through byte strides) where ggml asks for contiguous rows.
    def _row_op(self, name, op, a, params, inplace):
        a = _tensor(a, f"{name}: a")
        if a.type not in _ROW_TYPES:
            raise TypeError(f"{name}: a must be f32 or f64, got {GGMLType(a.type).name} "
                            f"{_shape(a)}")
        return self._record(op, a.type, a.ne, (a,), params, view_of=0 if inplace else -1)

    def norm(self, a, eps):
        """ggml_norm: each row (ne0) of a as (x - mean) / sqrt(var + eps) (eps >= 0)."""
        return self._row_op("norm", "NORM", a, (_eps(eps, "norm"),), False)

    def norm_inplace(self, a, eps):
        return self._row_op("norm_inplace", "NORM", a, (_eps(eps, "norm_inplace"),), True)

    def rms_norm(self, a, eps):
        """ggml_rms_norm: each row (ne0) of a as x / sqrt(mean(x*x) + eps) (eps >= 0)."""
        return self._row_op("rms_norm", "RMS_NORM", a, (_eps(eps, "rms_norm"),), False)

    def rms_norm_inplace(self, a, eps):
        return self._row_op("rms_norm_inplace", "RMS_NORM", a,
                            (_eps(eps, "rms_norm_inplace"),), True)

    def group_norm(self, a, n_groups, eps):
        """ggml_group_norm: the channels (dim 2) in n_groups groups of
        ceil(ne2 / n_groups) consecutive channels; each group (per i3) normalized over its
        ne0 * ne1 * channels values: (x - mean) / sqrt(var + eps). op_params
        [n_groups (int32), eps (f32)]."""
        return self._row_op("group_norm", "GROUP_NORM", a,
                            (_int_in(n_groups, "group_norm: n_groups", 1),
                             _eps(eps, "group_norm")), False)

    def group_norm_inplace(self, a, n_groups, eps):
        return self._row_op("group_norm_inplace", "GROUP_NORM", a,
                            (_int_in(n_groups, "group_norm_inplace: n_groups", 1),
                             _eps(eps, "group_norm_inplace")), True)

    def diag_mask_inf(self, a, n_past):
        """ggml_diag_mask_inf: -inf where i0 > n_past + i1 (above the diagonal of each
        [ne0, ne1] matrix shifted right by n_past >= 0), a elsewhere. op_params [n_past]."""
        return self._row_op("diag_mask_inf", "DIAG_MASK_INF", a,
                            (_int_in(n_past, "diag_mask_inf: n_past", 0),), False)

    def diag_mask_inf_inplace(self, a, n_past):
        return self._row_op("diag_mask_inf_inplace", "DIAG_MASK_INF", a,
                            (_int_in(n_past, "diag_mask_inf_inplace: n_past", 0),), True)

    def _soft_max(self, name, a, mask, scale, max_bias, inplace):
        a = _tensor(a, f"{name}: a")
        scale = _float(scale, f"{name}: scale")
        max_bias = _float(max_bias, f"{name}: max_bias")
        if a.type not in _ROW_TYPES:
            raise TypeError(f"{name}: a must be f32 or f64, got {GGMLType(a.type).name} "
                            f"{_shape(a)}")
        srcs = (a,)
        if mask is not None:
            mask = _tensor(mask, f"{name}: mask")
            if mask.type not in (GGMLType.F32, GGMLType.F16):
                raise TypeError(f"{name}: the mask must be f32 or f16, got "
                                f"{GGMLType(mask.type).name} {_shape(mask)}")
            m, x = mask.ne, a.ne
            if (m[0] != x[0] or m[1] < x[1] or 0 in (m[2], m[3])
                    or x[2] % m[2] or x[3] % m[3]):
                raise ValueError(f"{name}: mask {_shape(mask)} does not fit a {_shape(a)} "
                                 "(ggml needs mask.ne[0] == a.ne[0], mask.ne[1] >= a.ne[1], "
                                 "a.ne[2] and a.ne[3] multiples of the mask's)")
            srcs = (a, mask)
        if max_bias > 0 and mask is None:
            raise ValueError(f"{name}: max_bias > 0 (ALiBi) needs a mask")
        return self._record("SOFT_MAX", a.type, a.ne, srcs, (scale, max_bias),
                            view_of=0 if inplace else -1)

    def soft_max_ext(self, a, mask=None, scale=1.0, max_bias=0.0):
        """ggml_soft_max_ext: softmax over each row (ne0) of a * scale + slope * mask.
        mask (optional, f32 or f16) [ne0, >= ne1, ne2 / k, ne3 / l]: row i1 of mask batch
        (i2 % mask.ne2, i3 % mask.ne3) is added to row (i1, i2, i3). max_bias > 0 turns on
        ALiBi: head h = i2 of n_head = a.ne2 gets ggml's slope (m0 = 2^(-max_bias / n),
        m1 = 2^(-max_bias / 2n), n = the largest power of 2 <= n_head; slope m0^(h+1) for
        h < n, else m1^(2(h-n)+1)); it needs a mask. op_params [scale, max_bias] (f32)."""
        return self._soft_max("soft_max_ext", a, mask, scale, max_bias, False)

    def soft_max_ext_inplace(self, a, mask=None, scale=1.0, max_bias=0.0):
        return self._soft_max("soft_max_ext_inplace", a, mask, scale, max_bias, True)

    def soft_max(self, a):
        """ggml_soft_max: softmax over each row (ne0) of a."""
        return self._soft_max("soft_max", a, None, 1.0, 0.0, False)

    def soft_max_inplace(self, a):
        return self._soft_max("soft_max_inplace", a, None, 1.0, 0.0, True)

    def glu(self, a, op, swapped=False):
        """ggml_glu: fused gated linear unit. Each row of a [2n, ...] is x = a[:n],
        g = a[n:2n] (swapped: x = a[n:2n], g = a[:n]); the result [n, ...] is act(x) * g.
        op: a GLU op name ("reglu", "geglu", "swiglu", "geglu_erf", "geglu_quick") or
        ggml's enum ggml_glu_op number. An odd ne0 leaves its last value unused (ggml's
        n = ne0 / 2). op_params [op, swapped] (int32)."""
        return self._glu("glu", a, None, op, swapped)

    def glu_split(self, a, b, op):
        """ggml_glu_split: act(a) * b, a and b of the same shape and type."""
        return self._glu("glu_split", a, b, op, False, True)

    def _glu(self, name, a, b, op, swapped, split=False):
        a = _tensor(a, f"{name}: a")
        op = _glu_op(op, name)
        if not isinstance(swapped, (bool, int)) or isinstance(swapped, int) and \
                swapped not in (0, 1):
            raise TypeError(f"{name}: swapped must be a bool, not {swapped!r}")
        if a.type not in _GLU_TYPES:
            raise TypeError(f"{name}: a must be f32, f16 or f64, got "
                            f"{GGMLType(a.type).name} {_shape(a)}")
        if not split:
            ne = (a.ne[0] // 2,) + tuple(a.ne[1:])
            srcs = (a,)
        else:
            b = _tensor(b, f"{name}: b")
            if b.type != a.type:
                raise TypeError(f"{name}: a and b must have one type, got "
                                f"{GGMLType(a.type).name} and {GGMLType(b.type).name}")
            if tuple(b.ne) != tuple(a.ne):
                raise ValueError(f"{name}: a {_shape(a)} and b {_shape(b)} must have the "
                                 "same shape")
            ne = a.ne
            srcs = (a, b)
        return self._record("GLU", a.type, ne, srcs, (op, int(bool(swapped))))

    def reglu(self, a):
        """ggml_reglu: fused GLU, first half of each row through the activation, times the
        second half (result ne0 = a.ne0 / 2)."""
        return self._glu("reglu", a, None, 0, False)

    def reglu_swapped(self, a):
        """ggml_reglu_swapped: fused GLU with the halves swapped (second half activated)."""
        return self._glu("reglu_swapped", a, None, 0, True)

    def reglu_split(self, a, b):
        """ggml_reglu_split: act(a) * b (same shape and type)."""
        return self._glu("reglu_split", a, b, 0, False, True)

    def geglu(self, a):
        """ggml_geglu: fused GLU, first half of each row through the activation, times the
        second half (result ne0 = a.ne0 / 2)."""
        return self._glu("geglu", a, None, 1, False)

    def geglu_swapped(self, a):
        """ggml_geglu_swapped: fused GLU with the halves swapped (second half activated)."""
        return self._glu("geglu_swapped", a, None, 1, True)

    def geglu_split(self, a, b):
        """ggml_geglu_split: act(a) * b (same shape and type)."""
        return self._glu("geglu_split", a, b, 1, False, True)

    def swiglu(self, a):
        """ggml_swiglu: fused GLU, first half of each row through the activation, times the
        second half (result ne0 = a.ne0 / 2)."""
        return self._glu("swiglu", a, None, 2, False)

    def swiglu_swapped(self, a):
        """ggml_swiglu_swapped: fused GLU with the halves swapped (second half activated)."""
        return self._glu("swiglu_swapped", a, None, 2, True)

    def swiglu_split(self, a, b):
        """ggml_swiglu_split: act(a) * b (same shape and type)."""
        return self._glu("swiglu_split", a, b, 2, False, True)

    def geglu_erf(self, a):
        """ggml_geglu_erf: fused GLU, first half of each row through the activation, times the
        second half (result ne0 = a.ne0 / 2)."""
        return self._glu("geglu_erf", a, None, 4, False)

    def geglu_erf_swapped(self, a):
        """ggml_geglu_erf_swapped: fused GLU with the halves swapped (second half activated)."""
        return self._glu("geglu_erf_swapped", a, None, 4, True)

    def geglu_erf_split(self, a, b):
        """ggml_geglu_erf_split: act(a) * b (same shape and type)."""
        return self._glu("geglu_erf_split", a, b, 4, False, True)

    def geglu_quick(self, a):
        """ggml_geglu_quick: fused GLU, first half of each row through the activation, times the
        second half (result ne0 = a.ne0 / 2)."""
        return self._glu("geglu_quick", a, None, 5, False)

    def geglu_quick_swapped(self, a):
        """ggml_geglu_quick_swapped: fused GLU with the halves swapped (second half activated)."""
        return self._glu("geglu_quick_swapped", a, None, 5, True)

    def geglu_quick_split(self, a, b):
        """ggml_geglu_quick_split: act(a) * b (same shape and type)."""
        return self._glu("geglu_quick_split", a, b, 5, False, True)
    # --- end issue 13 (ops1)


# ggml's enum ggml_prec (flash_attn_ext_set_prec; issue 13, ops3)
PREC_DEFAULT = 0
PREC_F32 = 10


# --- issue 13 helpers (ops2)
def _int(x, what):
    if isinstance(x, bool) or not hasattr(x, "__index__"):
        raise TypeError(f"{what} must be an integer, not {type(x).__name__}")
    return int(x.__index__())


def _plain_type(name, a):
    t = GGMLType(a.type)
    if t.is_quantized:
        raise TypeError(f"{name}: quantized tensors ({t.name} {_shape(a)}) are not "
                        "supported; dequantize (cpy to f32) first")


def _f32_rows(name, a):
    if a.type != GGMLType.F32:
        raise TypeError(f"{name}: a must be f32 (as in ggml), got {GGMLType(a.type).name} "
                        f"{_shape(a)}")
    if a.ne[0] > 2 ** 31 - 1:
        raise ValueError(f"{name}: rows longer than INT32_MAX")
# --- end issue 13 helpers (ops2)


def _quant_mm_types():
    return ", ".join(t.name for t in GGMLType
                     if t.is_quantized and _quant_ops.mul_mat_supported(int(t)))


def _make_binary(name, op, inplace):
    def builder(self, a, b):
        return self._binary(name, op, a, b, inplace=inplace)
    builder.__name__ = name
    builder.__qualname__ = f"Context.{name}"
    what = "in place (a view of a, written into a's memory)" if inplace else "a new tensor"
    builder.__doc__ = f"ggml_{name}: elementwise {op} of a and b (b tiled over a), {what}."
    return builder


def _make_logical(name, op):
    def builder(self, a, b):
        return self._binary(name, op, a, b, result_type=GGMLType.BOOL)
    builder.__name__ = name
    builder.__qualname__ = f"Context.{name}"
    builder.__doc__ = f"elementwise {op} of a and b (b tiled over a), a BOOL tensor."
    return builder


def _make_unary(name, op, inplace):
    def builder(self, a):
        return self._unary(name, op, a, inplace=inplace)
    builder.__name__ = name
    builder.__qualname__ = f"Context.{name}"
    what = "in place (a view of a)" if inplace else "a new tensor"
    builder.__doc__ = f"ggml_{name}: elementwise {op} of a, {what}."
    return builder


for _name, _op in _BINARY.items():
    setattr(Context, _name, _make_binary(_name, _op, False))
    setattr(Context, _name + "_inplace", _make_binary(_name + "_inplace", _op, True))
for _name, _op in _LOGICAL.items():
    setattr(Context, _name, _make_logical(_name, _op))
for _name, _op in _UNARY.items():
    setattr(Context, _name, _make_unary(_name, _op, False))
    setattr(Context, _name + "_inplace", _make_unary(_name + "_inplace", _op, True))
del _name, _op
