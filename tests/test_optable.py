"""The op table (ggml_cy/core/optable.py) is the one list of ops: the enum, the CPU kernels,
the eager functions, the builders, evaluate(), the fused machine and the CUDA library are
made from it. These tests fail when an op is in one place but not in another."""
import numpy as np
import pytest

import ggml_cy
from ggml_cy import Context, GGMLType
from ggml_cy.core import optable
from ggml_cy.cpu import _fused, _kernels
from ggml_cy.graph import context as builders
from ggml_cy.ufuncs import _eager

ev = __import__("ggml_cy.expr.evaluate", fromlist=["_"])   # the module (the package
# re-exports its function `evaluate` under the same name)

STORAGE = {"f32": GGMLType.F32, "f64": GGMLType.F64, "i8": GGMLType.I8, "i16": GGMLType.I16,
           "i32": GGMLType.I32, "i64": GGMLType.I64, "u8": GGMLType.U8, "b": GGMLType.BOOL}
ELEMENTWISE = [o for o in optable.OPS if o.kind in ("binary", "unary")]
ids = lambda o: o.name  # noqa: E731


def _types(o):
    return [t for t in o.types if t in STORAGE]


def test_enum_is_the_table():
    assert _kernels.op_names() == {o.name: i for i, o in enumerate(optable.OPS)}
    assert [optable.number(o.name) for o in optable.OPS] == list(range(len(optable.OPS)))


@pytest.mark.parametrize("o", ELEMENTWISE, ids=ids)
def test_cpu_kernels_have_exactly_the_table_types(o):
    for t, gt in STORAGE.items():
        dst = GGMLType.BOOL if o.result == "bool" else gt
        src1 = gt if o.kind == "binary" else None
        assert _kernels.op_supported_py(o.name, int(dst), int(gt),
                                        None if src1 is None else int(src1)) == (t in o.types), t


def test_every_eager_name_is_public_and_registered():
    for o in optable.OPS:
        for name in o.eager:
            fn = getattr(ggml_cy, name)
            assert fn is getattr(ggml_cy, o.eager[0]), name        # aliases: one object
            assert name in ggml_cy.__all__
        if o.style in ("ufunc", "activation") or (o.style == "custom" and o.name != "CLAMP"):
            assert _eager._op_number(o.eager[0]) == optable.number(o.name), o.name
    listed = set(ggml_cy.ufuncs.BINARY + ggml_cy.ufuncs.UNARY + ggml_cy.ufuncs.ACTIVATIONS)
    assert listed == {n for o in optable.OPS for n in o.eager}


@pytest.mark.parametrize("o", [o for o in optable.OPS if o.style in ("ufunc", "activation")],
                         ids=ids)
def test_generated_eager_function_computes_its_op(o):
    x = np.linspace(0.25, 2.0, 7, dtype=np.float32)
    fn = getattr(ggml_cy, o.eager[0])
    if o.kind == "binary":
        got, want = fn(x, x[::-1]), getattr(np, o.numpy)(x, x[::-1])
    elif o.numpy:
        got, want = fn(x), getattr(np, o.numpy)(x)
    else:
        from ggml_cy.ufuncs import numpy_ref
        got, want = fn(x), getattr(numpy_ref, o.eager[0])(x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("o", [o for o in optable.OPS if o.builder], ids=ids)
def test_builders_exist_with_their_forms(o):
    assert hasattr(Context, o.builder), o.builder
    if o.bstyle in ("binary", "unary"):
        assert hasattr(Context, o.builder + "_inplace")
    table_builders = {**builders._BINARY, **builders._LOGICAL, **builders._UNARY,
                      **builders._CUSTOM}
    assert table_builders[o.builder] == o.name


@pytest.mark.parametrize("o", [o for o in optable.OPS if o.bstyle in ("binary", "unary",
                                                                      "logical")], ids=ids)
def test_generated_builders_record_their_op(o):
    ctx = Context(1 << 16)
    t = GGMLType.F32 if "f32" in o.types else STORAGE[_types(o)[0]]
    a = ctx.new_tensor_1d(t, 4)
    args = (a, a) if o.kind == "binary" else (a,)
    r = getattr(ctx, o.builder)(*args)
    assert r.op_name == o.name
    assert r.type == (GGMLType.BOOL if o.result == "bool" else t)


def test_evaluate_speaks_the_table():
    for o in optable.OPS:
        for name in o.evaluate:
            assert ev.FUNCTIONS[name] == (o.builder, 2 if o.kind == "binary" else 1)
    assert set(ev.FUNCTIONS) == {n for o in optable.OPS for n in o.evaluate}
    assert sorted(ev._BINOPS.values()) == sorted(o.builder for o in optable.OPS if o.operator)


@pytest.mark.parametrize("name", sorted({n for o in optable.OPS for n in o.evaluate}))
def test_evaluate_functions_compute(name):
    builder, nargs = ev.FUNCTIONS[name]
    a = np.linspace(0.5, 1.5, 9)
    expr = f"{name}(a)" if nargs == 1 else f"{name}(a, b)"
    want = getattr(ggml_cy, name)(a) if nargs == 1 else getattr(ggml_cy, name)(a, a[::-1])
    got = ggml_cy.evaluate(expr, a=a, b=a[::-1])
    np.testing.assert_array_equal(got, want)


def test_fused_machine_matches_the_vm_column():
    for o in optable.OPS:
        assert _fused._vm_instruction(optable.number(o.name)) == o.vm, o.name


def test_cuda_eager_tables_are_the_cuda_rows():
    from ggml_cy.cuda import ops
    cuda_names = {n for o in optable.OPS if o.cuda for n in o.eager if o.name != "CLAMP"}
    assert set(ops._BINARY) | set(ops._UNARY) | set(ops._ACTIVATIONS) == cuda_names


@pytest.mark.parametrize("o", [o for o in optable.OPS if optable.elementwise(o)
                               and o.kind != "other"], ids=ids)
def test_cuda_library_implements_the_cuda_rows(o):
    _cuda = pytest.importorskip("ggml_cy.cuda._cuda",
                                reason="built without the CUDA library (no nvcc)")
    op = optable.number(o.name)
    for t in _types(o):
        gt = int(STORAGE[t])
        dst = int(GGMLType.BOOL) if o.result == "bool" else gt
        src1 = gt if o.kind == "binary" else -1
        assert _cuda.supports_op(op, dst, gt, src1) == (t in o.cuda), (o.name, t)
