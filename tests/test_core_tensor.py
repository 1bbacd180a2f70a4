"""Tensors: types, ne/nb <-> shape/strides, tensor_from, numpy(), names, repr, flags."""
import numpy as np
import pytest

from ggml_cy import Context, GGMLType, Tensor, bfloat16_to_float32
from ggml_cy.core import _core

ALL_TYPES = [t for t in GGMLType if not t.is_quantized]   # quantized: test_quant_types.py
GGML_NUMBERS = {"F32": 0, "F16": 1, "I8": 24, "I16": 25, "I32": 26, "I64": 27, "F64": 28,
                "BF16": 30, "U8": 128, "BOOL": 129}
DTYPES = {GGMLType.F32: np.float32, GGMLType.F16: np.float16, GGMLType.F64: np.float64,
          GGMLType.BF16: np.uint16, GGMLType.I8: np.int8, GGMLType.I16: np.int16,
          GGMLType.I32: np.int32, GGMLType.I64: np.int64, GGMLType.U8: np.uint8,
          GGMLType.BOOL: np.bool_}


@pytest.fixture
def ctx():
    return Context(1 << 20)


def test_type_numbers_follow_ggml():
    assert {t.name: int(t) for t in ALL_TYPES} == GGML_NUMBERS
    for t in ALL_TYPES:
        assert t.numpy_dtype == np.dtype(DTYPES[t])
        assert t.size == np.dtype(DTYPES[t]).itemsize
        assert _core.type_size(t) == t.size
    assert str(GGMLType.BF16) == "bf16"


@pytest.mark.parametrize("spec,expected", [
    (GGMLType.F16, GGMLType.F16), (0, GGMLType.F32), (np.int64(129), GGMLType.BOOL),
    ("f32", GGMLType.F32), ("BF16", GGMLType.BF16), ("bool", GGMLType.BOOL),
    (np.float64, GGMLType.F64), ("float16", GGMLType.F16), (np.dtype("u1"), GGMLType.U8),
    (np.dtype(">i4"), GGMLType.I32), (bool, GGMLType.BOOL),
])
def test_type_specs(ctx, spec, expected):
    assert ctx.new_tensor(spec, (2,)).type is expected


@pytest.mark.parametrize("type_", ALL_TYPES, ids=str)
@pytest.mark.parametrize("ne", [(7,), (3, 5), (2, 3, 4), (2, 1, 3, 2), (1,), (4, 1, 1, 1),
                                (1, 1, 1, 5), (0, 3), (3, 0, 2)], ids=str)
def test_ne_nb_shape_strides(ctx, type_, ne):
    t = ctx.new_tensor(type_, ne)
    full = tuple(ne) + (1,) * (4 - len(ne))
    assert t.ne == full and t.type is type_
    es = type_.size
    nb = [es]
    for i in range(1, 4):
        nb.append(nb[-1] * max(full[i - 1], 1))   # an empty dim strides like a dim of 1
    assert t.nb == tuple(nb)
    nd = max([i + 1 for i in range(4) if full[i] != 1] + [1])
    assert t.ndim == nd
    assert t.shape == tuple(reversed(full[:nd]))
    assert t.strides == tuple(reversed(nb[:nd]))
    assert t.nelements == int(np.prod(full))
    assert t.nrows == full[1] * full[2] * full[3]
    assert t.nbytes == es * t.nelements
    assert t.is_contiguous and not t.is_permuted and not t.is_transposed
    arr = t.numpy()
    assert arr.dtype == DTYPES[type_]
    assert arr.shape == t.shape and arr.strides == t.strides
    assert arr.ctypes.data == t.data_ptr and arr.flags.writeable and arr.flags.aligned
    a4 = t.numpy(ndim=4)
    assert a4.shape == tuple(reversed(full)) and a4.strides == tuple(reversed(nb))


@pytest.mark.parametrize("type_", ALL_TYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (2, 1, 3, 2), (0,), (2, 0, 3)],
                         ids=str)
def test_tensor_from_roundtrip(ctx, type_, shape):
    rng = np.random.default_rng(1)
    src = (rng.standard_normal(shape) * 50).astype(DTYPES[type_])
    t = ctx.tensor_from(src, type=type_ if type_ == GGMLType.BF16 else None)
    assert t.type is type_
    assert t.ne == tuple(reversed(shape)) + (1,) * (4 - len(shape))
    out = t.numpy(ndim=len(shape))
    assert out.shape == shape and out.dtype == DTYPES[type_]
    np.testing.assert_array_equal(out, src)
    assert not np.shares_memory(out, src)


def test_tensor_from_layouts_and_conversions(ctx):
    base = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    for src in [base[:, ::-1, ::2], base.transpose(2, 0, 1), np.asfortranarray(base),
                base.astype(">f8")]:
        t = ctx.tensor_from(src)
        assert t.type is GGMLType.F64
        np.testing.assert_array_equal(t.numpy(ndim=src.ndim), src)
    t = ctx.tensor_from(base, type="i16")
    assert t.type is GGMLType.I16 and (t.numpy() == base).all()
    t = ctx.tensor_from([[1, 2], [3, 4]])
    assert t.type is GGMLType.I64 and t.shape == (2, 2)
    t = ctx.tensor_from([True, False])
    assert t.type is GGMLType.BOOL
    b = ctx.tensor_from(np.array([1.0, 0.5, -2.0, np.inf], np.float32), type="bf16")
    assert b.numpy().tolist() == [0x3F80, 0x3F00, 0xC000, 0x7F80]
    assert bfloat16_to_float32(b.numpy()).tolist() == [1.0, 0.5, -2.0, np.inf]
    raw = ctx.tensor_from(np.array([0x3F80], np.uint16), type=GGMLType.BF16)
    assert raw.numpy().tolist() == [0x3F80]  # uint16 input is taken as bit patterns


def test_scalar_tensor_numpy_ndim_zero(ctx):
    t = ctx.tensor_from(np.float32(2.5))
    assert t.ne == (1, 1, 1, 1) and t.shape == (1,)
    assert t.numpy(ndim=0).shape == () and float(t.numpy(ndim=0)) == 2.5


def test_numpy_is_zero_copy_and_array_protocol(ctx):
    t = ctx.new_tensor_2d("i32", 3, 2)
    a = t.numpy()
    a[...] = [[1, 2, 3], [4, 5, 6]]
    assert t.numpy()[1, 2] == 6
    assert np.shares_memory(np.asarray(t), a)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    c = np.array(t, copy=True)
    assert not np.shares_memory(c, a)
    assert a.base is t or a.base.base is t


def test_names(ctx):
    t = ctx.new_tensor_1d("f32", 2)
    assert t.name == ""
    t.name = "x" * 63
    assert t.name == "x" * 63
    t.name = "größe"
    assert t.name == "größe"
    with pytest.raises(ValueError, match="63"):
        t.name = "x" * 64
    with pytest.raises(ValueError, match="63"):
        t.name = "é" * 32            # 64 bytes in UTF-8
    with pytest.raises(ValueError, match="NUL"):
        t.name = "a\0b"
    with pytest.raises(TypeError):
        t.name = 5
    with pytest.raises(TypeError):
        t.name = b"bytes"
    assert t.name == "größe"         # failed sets change nothing
    # view names are cut at a character boundary when the suffix does not fit
    t.name = "é" * 31
    v = t.transpose()
    assert v.name.startswith("é" * 25) and "\ufffd" not in v.name
    assert len(v.name.encode()) <= 63


def test_repr(ctx):
    t = ctx.new_tensor("f16", (4, 3), name="w")
    r = repr(t)
    for part in ["'w'", "f16", "ne=[4, 3, 1, 1]", "nb=[2, 8, 24, 24]", "op=NONE"]:
        assert part in r
    v = t.transpose()
    assert "op=TRANSPOSE" in repr(v) and "view_of='w'+0" in repr(v)
    assert "Context(mem_size=1048576" in repr(ctx)
    nd = Context(4096, no_alloc=True).new_tensor_1d("f32", 3)
    assert "no data" in repr(nd)


def test_op_name_hook():
    assert _core.op_name(0) == "NONE"
    assert _core.op_name(9999) == "OP9999"
    previous = _core._op_namer          # the kernel layer's, when it is loaded
    try:
        _core.set_op_namer(lambda op: "ADD" if op == 4 else "?")
        assert _core.op_name(4) == "ADD" and _core.op_name(0) == "NONE"
    finally:
        _core.set_op_namer(previous)
    assert _core._op_namer is previous
    with pytest.raises(TypeError):
        _core.set_op_namer(3)
    assert _core._op_namer is previous


def test_flags_of_permuted_and_transposed(ctx):
    a = ctx.new_tensor("f32", (4, 3, 2))
    t = a.transpose()
    assert t.is_transposed and t.is_permuted and not t.is_contiguous
    p = a.permute(0, 2, 1, 3)
    assert p.is_permuted and not p.is_transposed and not p.is_contiguous
    s = ctx.new_tensor("f32", (4, 1, 3))
    assert s.permute(0, 2, 1, 3).is_contiguous   # moving a size-1 dim keeps contiguity


def test_equality_and_hash(ctx):
    a = ctx.new_tensor_1d("f32", 3)
    b = ctx.new_tensor_1d("f32", 3)
    a2 = list(ctx)[0]
    assert a == a2 and hash(a) == hash(a2) and a != b
    assert len({a, a2, b}) == 2
    assert (a == 3) is False


def test_tensor_cannot_be_made_directly():
    with pytest.raises(TypeError, match="Context"):
        Tensor()
    t = Tensor.__new__(Tensor)
    with pytest.raises(RuntimeError, match="not attached"):
        t.ne
    assert repr(t) == "<Tensor (detached)>"


def test_src_and_op_fields_of_leaves(ctx):
    a = ctx.new_tensor_1d("f32", 3)
    assert a.op == 0 and a.op_name == "NONE" and a.src == () and a.view_src is None
    assert a.view_offs == 0 and a.flags == 0 and a.op_params == (0,) * 16
    assert a.context is ctx
