"""GPU ops against the CPU path (ggml_cy's own CPU kernels through the eager API, which
follow numpy) on the same inputs: bitwise where the arithmetic is exact (float32
add/sub/mul/div/min/max, comparisons, copies), float16/bfloat16 equal to the float32
result rounded once; ggml's broadcast shapes, permuted operands, overlapping views,
int8 with per-tensor scales against a numpy reference."""
import itertools

import numpy as np
import pytest

import ggml_cy
import ggml_cy.cuda as gcuda

pytestmark = pytest.mark.gpu

RNG = np.random.default_rng(1234)

FLOATS = [np.float32, np.float16, np.float64]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8]

EXACT_BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax", "fmin",
                "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
                "floor_divide", "remainder", "fmod", "logical_and", "logical_or",
                "logical_xor"]


def rand(shape, dtype, nonzero=False):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = np.asarray(RNG.standard_normal(shape) * 4)
        if nonzero:
            x[np.abs(x) < 0.25] = 0.5
        return x.astype(dtype)
    if dtype.kind == "b":
        return RNG.integers(0, 2, shape).astype(bool)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -100), min(info.max, 100)
    x = np.asarray(RNG.integers(lo, hi, shape, endpoint=True)).astype(dtype)
    if nonzero:
        x[x == 0] = 1
    return x


def cpu(name, *args, **kw):
    return np.asarray(getattr(ggml_cy, name)(*args, **kw))


def assert_same(got, want):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(got.view(f"u{want.itemsize}"), want.view(f"u{want.itemsize}"))
    else:
        np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------ round trips
@pytest.mark.parametrize("dtype", FLOATS + INTS + [np.bool_])
def test_roundtrip(dtype):
    a = rand((3, 5, 7), dtype)
    d = gcuda.asarray(a)
    assert d.shape == a.shape and d.dtype == a.dtype
    assert_same(d.numpy(), a)
    assert_same(np.asarray(d), a)


def test_bfloat16_roundtrip_and_rounding():
    a = rand((1000,), np.float32)
    d = gcuda.asarray(a, dtype="bfloat16")
    assert d.dtype == "bfloat16"
    back = d.numpy()
    want = ggml_cy.bfloat16_to_float32(ggml_cy.float32_to_bfloat16(a))
    assert_same(back, np.asarray(want, np.float32))


# ------------------------------------------------------------------ binary ops, layouts
LAYOUTS = {
    "same": ((64, 33), (64, 33)),
    "inner": ((256, 128), (128,)),
    "outer": ((256, 128), (256, 1)),
    "channel": ((4, 16, 7, 8), (1, 16, 1, 1)),
    "rows3d": ((4, 32, 64), (32, 64)),
    "scalar_arr": ((100, 3), (1,)),
    "both": ((7, 1, 5), (1, 6, 5)),
    "tail": ((1001,), (1001,)),
    "big_inner": ((3, 256, 512), (256, 512)),     # b >= 256 KiB: the row-reuse kernel
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64, np.int8])
@pytest.mark.parametrize("name", EXACT_BINARY)
def test_binary_matches_cpu(name, dtype, layout):
    sa, sb = LAYOUTS[layout]
    nz = name in ("divide", "floor_divide", "remainder", "fmod")
    a, b = rand(sa, dtype), rand(sb, dtype, nonzero=nz)
    want = cpu(name, a, b)
    got = getattr(ggml_cy, name)(gcuda.asarray(a), gcuda.asarray(b))
    assert isinstance(got, gcuda.DeviceTensor)
    assert_same(got.numpy(), want)
    # swapped operands exercise the src0-broadcast paths
    want = cpu(name, b, a)
    got = getattr(ggml_cy, name)(gcuda.asarray(b), gcuda.asarray(a))
    assert_same(got.numpy(), want)


@pytest.mark.parametrize("layout", ["same", "inner", "tail", "big_inner"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_max_min_special_values_match_cpu(name, dtype, layout):
    """Signed zeros, NaN and inf in every pairing: the CPU kernels' rules, which are
    numpy's (float32/float64 maximum(+0, -0) = -0, the second operand; float16 keeps the
    first), on every kernel path (contiguous fast path, broadcasts, the general kernel)."""
    sa, sb = LAYOUTS[layout]
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0], dtype)
    a = np.resize(np.repeat(special, len(special)), sa).astype(dtype)
    b = np.resize(np.tile(special, len(special)), sb).astype(dtype)
    for x, y in ((a, b), (b, a)):
        want = cpu(name, x, y)
        if name in ("maximum", "minimum"):
            # the CPU rule is numpy's (fmax/fmin: numpy's own SIMD body and scalar tail
            # disagree on ties of signed zeros; the CPU follows the body)
            assert_same(want, getattr(np, name)(x, y))
        got = getattr(ggml_cy, name)(gcuda.asarray(x), gcuda.asarray(y))
        assert_same(got.numpy(), want)


@pytest.mark.parametrize("layout", ["same", "inner", "tail"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide"])
def test_arithmetic_nan_bits_match_cpu(name, dtype, layout):
    """NaN results carry x86's bits, as numpy's on the CPU: a NaN operand comes back
    (quieted), an invalid operation (inf - inf, 0 * inf, 0 / 0) gives the negative default
    NaN, and float16 keeps the sign and payload through its float32 computation. Also
    subnormal, overflowing and tie-rounding float16 values (the half2 fast path)."""
    sa, sb = LAYOUTS[layout]
    special = np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1.5, -2.0,
                        6.1e-5, -3e-7, 1e-7, 65504.0, -60000.0, 1 + 2.0 ** -10], dtype)
    a = np.resize(np.repeat(special, len(special)), sa).astype(dtype)
    b = np.resize(np.tile(special, len(special)), sb).astype(dtype)
    with np.errstate(all="ignore"):
        for x, y in ((a, b), (b, a)):
            want = cpu(name, x, y)
            got = getattr(ggml_cy, name)(gcuda.asarray(x), gcuda.asarray(y)).numpy()
            # two NaN operands: which payload survives depends on the operand order a
            # compiler picks (numpy's own loops disagree): any NaN will do there
            xb, yb = np.broadcast_arrays(x, y)
            both = np.isnan(xb) & np.isnan(yb)
            assert np.isnan(got[both]).all()
            assert_same(want[~both], getattr(np, name)(x, y)[~both])
            assert_same(got[~both], want[~both])


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "maximum", "minimum",
                                  "less", "equal"])
@pytest.mark.parametrize("layout", ["same", "inner", "channel", "tail", "big_inner"])
def test_bfloat16_is_float32_rounded(name, layout):
    sa, sb = LAYOUTS[layout]
    a32 = ggml_cy.bfloat16_to_float32(ggml_cy.float32_to_bfloat16(rand(sa, np.float32)))
    b32 = ggml_cy.bfloat16_to_float32(ggml_cy.float32_to_bfloat16(rand(sb, np.float32, True)))
    a32, b32 = np.asarray(a32, np.float32), np.asarray(b32, np.float32)
    got = getattr(ggml_cy, name)(gcuda.asarray(a32, "bfloat16"), gcuda.asarray(b32, "bfloat16"))
    ref = getattr(np, name)(a32, b32)
    if ref.dtype == np.bool_:
        assert_same(got.numpy(), ref)
    else:
        assert got.dtype == "bfloat16"
        want = np.asarray(ggml_cy.bfloat16_to_float32(ggml_cy.float32_to_bfloat16(ref)), np.float32)
        assert_same(got.numpy(), want)


def test_nan_payloads_survive_device_conversions():
    """Quiet NaNs of both signs and several payloads, converted on the device to the half
    types: the bits the CPU's (numpy's) conversions give, not CUDA's canonical NaN."""
    bits32 = np.array([0x7fc00000, 0xffc00000, 0x7fc01234, 0xffe00001, 0x7fffe000],
                      np.uint32)
    x32 = np.concatenate([bits32.view(np.float32), np.float32([1.5, -0.0])])
    x64 = x32.astype(np.float64)
    for src in (x32, x64):
        d = gcuda.asarray(src)
        assert_same(d.astype(np.float16).numpy(), src.astype(np.float16))
        bf = d.astype("bfloat16").numpy()      # float32 values of the bfloat16 bits
        want = ggml_cy.bfloat16_to_float32(ggml_cy.float32_to_bfloat16(src.astype(np.float32)))
        assert_same(bf, np.asarray(want, np.float32))
    h = gcuda.asarray(x32.astype(np.float16))
    assert_same(h.astype(np.float32).numpy(), x32.astype(np.float16).astype(np.float32))


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide"])
def test_float16_is_float32_rounded(name):
    a, b = rand((4096,), np.float16), rand((4096,), np.float16, True)
    got = getattr(ggml_cy, name)(gcuda.asarray(a), gcuda.asarray(b)).numpy()
    want = getattr(np, name)(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
    assert_same(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16])
@pytest.mark.parametrize("scalar", [3, 2.5, -1])
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "greater"])
def test_python_scalars_follow_numpy_promotion(name, dtype, scalar):
    a = rand((50, 3), dtype)
    want = cpu(name, a, scalar)
    got = getattr(ggml_cy, name)(gcuda.asarray(a), scalar).numpy()
    assert_same(got, want)
    want = cpu(name, scalar, a)
    got = getattr(ggml_cy, name)(scalar, gcuda.asarray(a)).numpy()
    assert_same(got, want)


def test_operators_and_int_true_divide():
    a, b = rand((10, 4), np.int32), rand((4,), np.int32, True)
    da, db = gcuda.asarray(a), gcuda.asarray(b)
    assert_same((da + db).numpy(), a + b)
    assert_same((da - 1).numpy(), a - 1)
    assert_same((2 * da).numpy(), 2 * a)
    assert_same((da / db).numpy(), a / b)          # float64 like numpy
    assert_same((da // db).numpy(), a // b)
    assert_same((da % db).numpy(), a % b)
    assert_same((da < db).numpy(), a < b)
    assert_same((-da).numpy(), -a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_power(dtype):
    a = rand((300,), dtype)
    b = (RNG.integers(0, 4, 300)).astype(dtype)
    want = np.power(a, b)
    got = ggml_cy.power(gcuda.asarray(a), gcuda.asarray(b)).numpy()
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-13)
    else:
        assert_same(got, want)


# ------------------------------------------------------------------ ggml's broadcast shapes
@pytest.mark.parametrize("nr", list(itertools.product([1, 2], repeat=4)),
                         ids=lambda r: "x".join(map(str, r)))
@pytest.mark.parametrize("op", ["ADD", "MUL", "SUB", "DIV"])
def test_ggml_tiling_10_5_4_3(op, nr):
    """ggml's test-backend-ops bin_bcast: src1 ne [10,5,4,3] tiled nr times into src0."""
    from ggml_cy.cuda import _cuda
    ne = (10, 5, 4, 3)
    shape1 = tuple(reversed(ne))                                   # numpy order
    rep = tuple(reversed(nr))
    b = rand(shape1, np.float32, nonzero=True)
    a = rand(tuple(s * r for s, r in zip(shape1, rep)), np.float32)
    da, db = gcuda.asarray(a), gcuda.asarray(b)
    dd = gcuda.empty(a.shape, np.float32)
    _cuda.op_forward(_cuda.OPS[op], dd.desc(), da.desc(), db.desc())
    ref = {"ADD": np.add, "MUL": np.multiply, "SUB": np.subtract, "DIV": np.divide}[op](a, np.tile(b, rep))
    assert_same(dd.numpy(), ref)


@pytest.mark.parametrize("sub", [s for k in range(5) for s in itertools.combinations(range(4), k)],
                         ids=lambda s: "r" + "".join(map(str, s)) if s else "none")
def test_broadcast_every_subset_of_dims(sub):
    """dst [10,5,4,3] (ggml ne) with src1 repeated over every subset of dims."""
    ne = [10, 5, 4, 3]
    ne1 = [1 if i in sub else ne[i] for i in range(4)]
    a = rand(tuple(reversed(ne)), np.float32)
    b = rand(tuple(reversed(ne1)), np.float32)
    for name in ("add", "multiply", "subtract", "less"):
        want = cpu(name, a, b)
        got = getattr(ggml_cy, name)(gcuda.asarray(a), gcuda.asarray(b)).numpy()
        assert_same(got, want)
        want = cpu(name, b, a)
        got = getattr(ggml_cy, name)(gcuda.asarray(b), gcuda.asarray(a)).numpy()
        assert_same(got, want)


def test_grid_limit_falls_back_to_unravel():
    """[1,1,65536,1] repeated [256,1,1,1]: grid z would pass 65535."""
    from ggml_cy.cuda import _cuda
    b = rand((1, 65536, 1, 1), np.float32)
    a = rand((1, 65536, 1, 256), np.float32)
    da, db = gcuda.asarray(a), gcuda.asarray(b)
    dd = gcuda.empty(a.shape, np.float32)
    _cuda.op_forward(_cuda.OPS["ADD"], dd.desc(), da.desc(), db.desc())
    assert_same(dd.numpy(), a + np.tile(b, (1, 1, 1, 256)))
    # and through the strided path (a permuted src0 defeats the fast kernels)
    at = a.transpose(0, 1, 3, 2).copy()
    dat = gcuda.asarray(at).transpose(0, 1, 3, 2)
    _cuda.op_forward(_cuda.OPS["ADD"], dd.desc(), dat.desc(), db.desc())
    assert_same(dd.numpy(), a + np.tile(b, (1, 1, 1, 256)))


# ------------------------------------------------------------------ layouts: permuted, views
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
def test_permuted_and_strided_operands(dtype):
    a = rand((6, 7, 8, 9), dtype)
    b = rand((9, 8, 7, 6), dtype)
    da, db = gcuda.asarray(a), gcuda.asarray(b)
    bt = b.transpose(3, 2, 1, 0)
    want = cpu("add", a, bt)
    got = ggml_cy.add(da, db.transpose(3, 2, 1, 0)).numpy()
    assert_same(got, want)
    want = cpu("multiply", a[:, ::2, 1:, ::-1], bt[:, ::2, 1:, ::-1])
    got = ggml_cy.multiply(da[:, ::2, 1:, ::-1], db.transpose(3, 2, 1, 0)[:, ::2, 1:, ::-1]).numpy()
    assert_same(got, want)


def test_overlapping_views_and_in_place():
    a = rand((1000,), np.float32)
    da = gcuda.asarray(a)
    assert_same(ggml_cy.add(da[1:], da[:-1]).numpy(), a[1:] + a[:-1])
    ggml_cy.multiply(da, 2.0, out=da)                      # exact alias: in place
    assert_same(da.numpy(), a * np.float32(2))
    out = gcuda.empty((999,), np.float64)                   # out of another type: cast
    ggml_cy.add(da[1:], da[:-1], out=out)
    assert_same(out.numpy(), (a[1:] * 2 + a[:-1] * 2).astype(np.float64))


# ------------------------------------------------------------------ unary ops
EXACT_UNARY = ["negative", "absolute", "sign", "square", "sqrt", "floor", "ceil", "rint",
               "trunc", "logical_not", "relu", "step"]
APPROX_UNARY = ["exp", "expm1", "log", "log1p", "sin", "cos", "tanh", "sigmoid", "silu",
                "gelu", "gelu_erf", "gelu_quick", "hardswish", "hardsigmoid", "softplus"]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("name", EXACT_UNARY + APPROX_UNARY)
@pytest.mark.parametrize("layout", ["contig", "transposed"])
def test_unary_matches_cpu(name, dtype, layout):
    a = rand((37, 64), dtype)
    if name in ("sqrt", "log", "log1p"):
        a = np.abs(a) + dtype(0.5)
    da = gcuda.asarray(a)
    if layout == "transposed":
        a, da = a.T, da.T
    want = cpu(name, a)
    got = getattr(ggml_cy, name)(da).numpy()
    if name in EXACT_UNARY:
        assert_same(got, want)
    else:
        assert got.dtype == want.dtype
        tol = {np.float32: 2e-6, np.float16: 1e-3, np.float64: 1e-14}[dtype]
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=tol * 4, atol=tol)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
@pytest.mark.parametrize("name", ["negative", "absolute", "square", "logical_not"])
def test_unary_ints(name, dtype):
    a = rand((500,), dtype)
    assert_same(getattr(ggml_cy, name)(gcuda.asarray(a)).numpy(), cpu(name, a))


def test_params_ops():
    a = rand((300,), np.float32)
    da = gcuda.asarray(a)
    assert_same(ggml_cy.leaky_relu(da, 0.1).numpy(), cpu("leaky_relu", a, 0.1))
    assert_same(ggml_cy.scale(da, 0.5).numpy(), cpu("scale", a, 0.5))
    assert_same(ggml_cy.clip(da, -1.0, 2.0).numpy(), np.clip(a, -1.0, 2.0))
    np.testing.assert_allclose(ggml_cy.elu(da).numpy(), cpu("elu", a), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ copies
PAIRS = [(s, d) for s in [np.float32, np.float16, np.float64, np.int8, np.int32, np.int64,
                          np.uint8, np.bool_]
         for d in [np.float32, np.float16, np.float64, np.int8, np.int32, np.int64, np.uint8,
                   np.bool_]]


@pytest.mark.parametrize("src,dst", PAIRS, ids=lambda t: np.dtype(t).name)
def test_astype_every_pair(src, dst):
    a = rand((13, 17), src)
    if np.dtype(src).kind == "f":
        a = np.clip(a, 0 if np.dtype(dst).kind in "ub" else -100, 100).astype(src)
    got = gcuda.asarray(a).T.astype(dst).numpy()
    assert_same(got, a.T.astype(dst))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int8])
@pytest.mark.parametrize("shape,axes", [
    ((4096, 512), (1, 0)),
    ((333, 65), (1, 0)),
    ((16, 128, 64, 64), (0, 2, 1, 3)),
    ((3, 50, 70), (2, 1, 0)),
    ((8, 9, 10, 11), (3, 1, 0, 2)),
])
def test_copy_permutations_bitwise(dtype, shape, axes):
    a = rand(shape, dtype)
    got = gcuda.asarray(a).transpose(axes).copy().numpy()
    assert_same(got, np.ascontiguousarray(a.transpose(axes)))


def test_copy_between_shapes_and_views():
    a = rand((6, 10), np.float32)
    d = gcuda.asarray(a)
    out = gcuda.empty((10, 6), np.float32)
    gcuda.copyto(out, d.T)
    assert_same(out.numpy(), a.T.copy())
    r = d[::2, 1::3].copy()
    assert_same(r.numpy(), a[::2, 1::3].copy())
    assert_same(d.reshape(3, 20).numpy(), a.reshape(3, 20))
    assert_same(d.T.reshape(60).numpy(), a.T.reshape(60))


# ------------------------------------------------------------------ int8 with scales
@pytest.mark.parametrize("name,npop", [("add", np.add), ("subtract", np.subtract),
                                       ("multiply", np.multiply), ("divide", np.divide),
                                       ("maximum", np.maximum), ("minimum", np.minimum)])
@pytest.mark.parametrize("shapes", [((200, 33), (200, 33)), ((200, 33), (33,)), ((5, 1, 7), (1, 4, 7))])
def test_int8_scaled(name, npop, shapes):
    a = RNG.integers(-128, 128, shapes[0]).astype(np.int8)
    b = RNG.integers(-128, 128, shapes[1]).astype(np.int8)
    if name == "divide":
        b[b == 0] = 3
    s0, s1, so = np.float32(0.05), np.float32(0.02), np.float32(0.1)
    got = gcuda.scaled_op(name, gcuda.asarray(a), gcuda.asarray(b), s0, s1, so).numpy()
    r = npop(a.astype(np.float32) * s0, b.astype(np.float32) * s1) / so
    want = np.clip(np.rint(r.astype(np.float32)), -128, 127).astype(np.int8)
    assert_same(got, want)


# ------------------------------------------------------------------ property-based broadcasting
from hypothesis import given, strategies as st  # noqa: E402
from hypothesis.extra.numpy import mutually_broadcastable_shapes  # noqa: E402


@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=5, max_side=5),
       name=st.sampled_from(["add", "subtract", "multiply", "divide", "maximum", "less"]),
       dtype=st.sampled_from([np.float32, np.float16, np.int32]),
       flip=st.booleans())
def test_broadcasting_property(shapes, name, dtype, flip):
    if name == "divide" and dtype == np.int32:
        name = "floor_divide"
    sa, sb = shapes.input_shapes
    a = rand(sa, dtype)
    b = rand(sb, dtype, nonzero=True)
    da, db = gcuda.asarray(a), gcuda.asarray(b)
    if flip and len(sa) >= 2:            # a non-contiguous operand with the same values
        da = gcuda.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(
            tuple(range(len(sa) - 2)) + (len(sa) - 1, len(sa) - 2))
    want = cpu(name, a, b)
    got = getattr(ggml_cy, name)(da, db)
    assert_same(got.numpy(), want)


def test_caching_allocator_reuses_blocks():
    gcuda.empty_cache()
    assert gcuda.cached_bytes() == 0
    x = gcuda.empty((1000,), np.float32)
    ptr = x.data_ptr
    x.free()
    assert gcuda.cached_bytes() >= 4000
    y = gcuda.empty((1000,), np.float32)         # same size: the cached block comes back
    assert y.data_ptr == ptr
    assert gcuda.cached_bytes() == 0
    gcuda.empty_cache()


def test_setitem_copies_into_views():
    a = rand((6, 8), np.float32)
    d = gcuda.asarray(a)
    d[1:3] = 0.5
    d[:, 0] = np.arange(6, dtype=np.float64)        # host array, converted
    d[5] = d[4]
    a[1:3] = 0.5
    a[:, 0] = np.arange(6)
    a[5] = a[4]
    assert_same(d.numpy(), a)
    with pytest.raises(ValueError):
        d[0] = np.ones(7, np.float32)


COPY_TYPES = [np.float32, np.float16, np.float64, np.int8, np.int32, np.int64, np.uint8, np.bool_]


@given(data=st.data())
def test_copy_property_any_layout_any_pair(data):
    """Random shape, permutation and slicing (negative steps too), random type pair:
    the device copy equals numpy's astype of the same view."""
    nd = data.draw(st.integers(1, 4))
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=nd, max_size=nd)))
    perm = tuple(data.draw(st.permutations(range(nd))))
    steps = tuple(data.draw(st.lists(st.sampled_from([1, 2, -1, -2]), min_size=nd, max_size=nd)))
    src_t = data.draw(st.sampled_from(COPY_TYPES))
    dst_t = data.draw(st.sampled_from(COPY_TYPES))
    a = rand(shape, src_t)
    if np.dtype(src_t).kind == "f" and np.dtype(dst_t).kind in "ub":
        a = np.abs(a)
    key = tuple(slice(None, None, s) for s in steps)
    view = a.transpose(perm)[key]
    dview = gcuda.asarray(a).transpose(perm)[key]
    got = dview.astype(dst_t).numpy()
    assert_same(got, view.astype(dst_t))


@pytest.mark.parametrize("name", ["negative", "absolute", "relu", "floor", "sqrt", "square"])
def test_bfloat16_unary_is_float32_rounded(name):
    x = np.abs(rand((513,), np.float32)) if name == "sqrt" else rand((513,), np.float32)
    x = np.asarray(ggml_cy.bfloat16_to_float32(ggml_cy.float32_to_bfloat16(x)), np.float32)
    got = getattr(ggml_cy, name)(gcuda.asarray(x, "bfloat16"))
    assert got.dtype == "bfloat16"
    ref = cpu(name, x)
    want = np.asarray(ggml_cy.bfloat16_to_float32(ggml_cy.float32_to_bfloat16(ref)), np.float32)
    assert_same(got.numpy(), want)
