"""Every builder: what it records (op, src, op_params, shape, type), that it computes
nothing, and clear errors for bad input (naming both shapes), leaving the context as it
was."""
import numpy as np
import pytest

import ggml_cy
from ggml_cy.graph.context import Context, _BINARY, _LOGICAL, _UNARY, OPS

from _graph_helpers import assert_bitwise

BINARY = sorted(_BINARY)
LOGICAL = sorted(_LOGICAL)
UNARY = sorted(_UNARY)


@pytest.fixture
def ctx():
    return Context(1 << 20)


@pytest.mark.parametrize("name", BINARY + [n + "_inplace" for n in BINARY])
def test_binary_records_and_computes_nothing(ctx, name):
    a = ctx.tensor_from(np.full((3, 4), 2, np.float32))
    b = ctx.tensor_from(np.full(4, 3, np.float32))
    before = a.numpy().copy()
    r = getattr(ctx, name)(a, b)
    base = name.replace("_inplace", "")
    assert r.op == OPS[_BINARY[base]]
    assert r.src == (a, b) and r.ne == a.ne and r.type == a.type
    assert (r.view_src == a) == name.endswith("_inplace")
    assert_bitwise(a.numpy(), before)


@pytest.mark.parametrize("name", LOGICAL)
def test_logical_gives_bool(ctx, name):
    a = ctx.tensor_from(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = ctx.tensor_from(np.full(3, 2, np.float32))
    r = getattr(ctx, name)(a, b)
    assert r.type == ggml_cy.GGMLType.BOOL and r.ne == a.ne
    ctx.new_graph().build_forward_expand(r).compute(1)
    ref = {"eq": np.equal, "ne": np.not_equal, "gt": np.greater, "ge": np.greater_equal,
           "lt": np.less, "le": np.less_equal, "logical_and": np.logical_and,
           "logical_or": np.logical_or, "logical_xor": np.logical_xor}[name]
    assert_bitwise(r.numpy(), ref(a.numpy(), b.numpy()))


@pytest.mark.parametrize("name", UNARY + [n + "_inplace" for n in UNARY])
def test_unary_records(ctx, name):
    a = ctx.tensor_from(np.linspace(0.5, 2, 8, dtype=np.float32))
    r = getattr(ctx, name)(a)
    assert r.op == OPS[_UNARY[name.replace("_inplace", "")]]
    assert r.src == (a,) and r.ne == a.ne
    ctx.new_graph().build_forward_expand(r).compute(2)


@pytest.mark.parametrize("name", BINARY + LOGICAL)
def test_binary_shape_errors_name_both_shapes(ctx, name):
    a = ctx.new_tensor_2d("f32", 4, 3)
    b = ctx.new_tensor_2d("f32", 3, 3)
    n = ctx.n_objects
    with pytest.raises(ValueError, match=r"b \[3, 3, 1, 1\].*a \[4, 3, 1, 1\]"):
        getattr(ctx, name)(a, b)
    with pytest.raises(ValueError):      # a must be the larger operand (ggml's rule)
        getattr(ctx, name)(ctx.new_tensor_1d("f32", 4), a)
    assert ctx.n_objects == n + 1


@pytest.mark.parametrize("name", BINARY + LOGICAL + ["add1", "cpy"])
def test_binary_bad_args(ctx, name):
    a = ctx.new_tensor_2d("f32", 4, 3)
    for bad in (None, 1.0, np.zeros((3, 4), np.float32), "a"):
        with pytest.raises(TypeError, match="Tensor"):
            getattr(ctx, name)(a, bad)
        with pytest.raises(TypeError, match="Tensor"):
            getattr(ctx, name)(bad, a)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_binary_type_mismatch(ctx, name):
    a = ctx.new_tensor_1d("f32", 4)
    b = ctx.new_tensor_1d("i8", 4)
    with pytest.raises(TypeError, match="F32 .*I8"):
        getattr(ctx, name)(a, b)


@pytest.mark.parametrize("name", UNARY + ["cont", "dup", "sum", "sum_rows", "mean",
                                          "logical_not"])
def test_unary_bad_args(ctx, name):
    for bad in (None, 2.0, np.zeros(3, np.float32)):
        with pytest.raises(TypeError, match="Tensor"):
            getattr(ctx, name)(bad)


def test_stale_tensor_after_reset(ctx):
    a = ctx.new_tensor_1d("f32", 4)
    ctx.reset()
    with pytest.raises(RuntimeError):
        ctx.add(a, a)
    with pytest.raises(RuntimeError):
        ctx.relu(a)


def test_add1(ctx):
    a = ctx.tensor_from(np.arange(6, dtype=np.float32))
    with pytest.raises(ValueError, match="one element"):
        ctx.add1(a, ctx.new_tensor_1d("f32", 2))
    r = ctx.add1(a, ctx.tensor_from(np.array([1.5], np.float32)))
    assert r.op == OPS["ADD1"]
    ctx.new_graph().build_forward_expand(r).compute(1)
    assert_bitwise(r.numpy(), np.arange(6, dtype=np.float32) + np.float32(1.5))


def test_param_builders_bad_input(ctx):
    a = ctx.new_tensor_1d("f32", 4)
    for bad in ("1", None, [1.0], True):
        with pytest.raises(TypeError):
            ctx.scale(a, bad)
        with pytest.raises(TypeError):
            ctx.clamp(a, bad, 1.0)
        with pytest.raises(TypeError):
            ctx.leaky_relu(a, bad)
    with pytest.raises(ValueError, match="greater"):
        ctx.clamp(a, 2.0, 1.0)
    r = ctx.clamp(a, -1, 1)
    assert np.array(r.op_params[:2], np.int32).view(np.float32).tolist() == [-1.0, 1.0]
    r = ctx.elu(a)
    assert r.op == OPS["ELU"]


def test_cpy_errors(ctx):
    a = ctx.new_tensor_1d("f32", 4)
    with pytest.raises(ValueError, match=r"a \[4, 1, 1, 1\] and b \[5, 1, 1, 1\]"):
        ctx.cpy(a, ctx.new_tensor_1d("f32", 5))
    r = ctx.cpy(a, ctx.new_tensor_2d("f16", 2, 2))
    assert r.ne == (2, 2, 1, 1) and r.type == ggml_cy.GGMLType.F16


def test_reduction_type_errors(ctx):
    a = ctx.new_tensor_2d("i32", 4, 3)
    for name in ("sum", "sum_rows", "mean"):
        with pytest.raises(TypeError, match="f32 or f64"):
            getattr(ctx, name)(a)


def test_set_output_and_graph_api_bad_input(ctx):
    with pytest.raises(TypeError):
        ctx.set_output("x")
    g = ctx.new_graph()
    for bad in (None, 1, np.zeros(3)):
        with pytest.raises(TypeError):
            g.build_forward_expand(bad)
    for bad in (0, -2, 10**6):
        with pytest.raises(ValueError):
            g.compute(bad)
    for bad in ("2", 1.5):
        with pytest.raises(TypeError):
            g.compute(bad)
    with pytest.raises(TypeError):
        g.compute_with_ctx(None, 1)
    with pytest.raises(IndexError):
        g.node(0)
    with pytest.raises(TypeError):
        g.get_tensor(3)


def test_builders_on_core_tensors_from_plain_core_context():
    """Tensors made by the core Context class work with the builders of another context."""
    core = ggml_cy.core._core.Context(1 << 16)
    a = core.tensor_from(np.ones(4, np.float32))
    ctx = Context(1 << 20)
    r = ctx.add(a, a)
    del core
    ctx.new_graph().build_forward_expand(r).compute(1)
    assert_bitwise(r.numpy(), np.full(4, 2, np.float32))
