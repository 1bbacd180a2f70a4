"""Issue 13 ops (ops1): norm, rms_norm, group_norm, soft_max_ext / soft_max, diag_mask_inf
and the GLU family (reglu, geglu, swiglu, geglu_erf, geglu_quick; fused, swapped, split) on
the CPU: graph builders (ggml's names, op_params layout and checks), the kernels of
cpu/csrc/ops_norm.h, and the numpy-style functions of ggml_cy.ufuncs.nn.

Oracle: float64 numpy written here. Tolerance: ggml's test-backend-ops measure, the
normalized mean squared error sum((got - ref)^2) / sum(ref^2), at its default bound 1e-7 for
f32 results; f64 results 1e-20; f16 results (GLU) 1e-6 (one f16 rounding of the result is
already ~1e-7). Thread counts 1, 2, 3 give bitwise the same result (each row is computed by
one thread), checked on shapes big enough to be split."""
import math

import numpy as np
import pytest

import ggml_cy
from ggml_cy import Context, GGMLType as T
from ggml_cy.core import optable
from ggml_cy.graph import _graph
from _graph_helpers import compute

NMSE = {T.F32: 1e-7, T.F64: 1e-20, T.F16: 1e-6}
NP = {T.F32: np.float32, T.F64: np.float64, T.F16: np.float16}


def nmse(got, ref):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    fin = np.isfinite(ref)
    np.testing.assert_array_equal(got[~fin], ref[~fin])       # the -inf / NaN positions
    num = np.sum((got[fin] - ref[fin]) ** 2)
    den = np.sum(ref[fin] ** 2)
    return num / den if den > 0 else num


def check(got, ref, t):
    err = nmse(got, ref)
    assert err <= NMSE[t], f"NMSE {err:.3g} > {NMSE[t]:g}"


def rand(rng, ne, t, scale=1.0):
    return (rng.standard_normal(tuple(reversed(ne))) * scale).astype(NP[t])


run = compute


# ------------------------------------------------------------------ float64 references
# arrays in numpy order: shape (ne3, ne2, ne1, ne0), rows along the last axis
def ref_norm(x, eps):
    x = x.astype(np.float64)
    m = x.mean(-1, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + eps)


def ref_rms_norm(x, eps):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)


def ref_group_norm(x, n_groups, eps):
    """x (ne3, ne2, ne1, ne0): channels = axis 1, groups of ceil(ne2 / n_groups)."""
    x = x.astype(np.float64)
    out = np.empty_like(x)
    c = x.shape[1]
    cpg = -(-c // n_groups)
    for g in range(n_groups):
        s, e = g * cpg, min(g * cpg + cpg, c)
        if s >= e:
            continue
        blk = x[:, s:e]
        m = blk.mean(axis=(1, 2, 3), keepdims=True)
        v = ((blk - m) ** 2).mean(axis=(1, 2, 3), keepdims=True)
        out[:, s:e] = (blk - m) / np.sqrt(v + eps)
    return out


def alibi_slopes(n_head, max_bias):
    if max_bias <= 0:
        return np.ones(n_head)
    n = 1 << int(math.floor(math.log2(n_head)))
    m0 = 2.0 ** (-max_bias / n)
    m1 = 2.0 ** (-(max_bias / 2) / n)
    return np.array([m0 ** (h + 1) if h < n else m1 ** (2 * (h - n) + 1)
                     for h in range(n_head)])


def ref_soft_max(x, mask=None, scale=1.0, max_bias=0.0):
    x = x.astype(np.float64) * scale
    if mask is not None:
        n3, n2, n1, _ = x.shape
        m = mask.astype(np.float64)[:, :, :n1, :]           # rows past ne1 unused
        m = np.tile(m, (n3 // m.shape[0], n2 // m.shape[1], 1, 1))   # i2 % m.ne2, ...
        slope = alibi_slopes(n2, max_bias)[None, :, None, None]
        x = x + slope * m
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def ref_diag_mask_inf(x, n_past):
    x = x.astype(np.float64).copy()
    n1, n0 = x.shape[-2], x.shape[-1]
    i1 = np.arange(n1)[:, None]
    i0 = np.arange(n0)[None, :]
    x[..., i0 > n_past + i1] = -np.inf
    return x


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def _gelu_erf(x):
    from math import erf
    return 0.5 * x * (1 + np.vectorize(erf)(x / math.sqrt(2)))


ACT = {"reglu": lambda x: np.where(x > 0, x, 0.0),
       "geglu": _gelu,
       "swiglu": lambda x: x / (1 + np.exp(-x)),
       "geglu_erf": _gelu_erf,
       "geglu_quick": lambda x: x / (1 + np.exp(-1.702 * x))}
GLU_NUM = {"reglu": 0, "geglu": 1, "swiglu": 2, "geglu_erf": 4, "geglu_quick": 5}


def ref_glu(name, x, g):
    return ACT[name](x.astype(np.float64)) * g.astype(np.float64)


# ------------------------------------------------------------------ the op table
def test_table_rows():
    for name, builder in [("NORM", "norm"), ("RMS_NORM", "rms_norm"),
                          ("GROUP_NORM", "group_norm"), ("DIAG_MASK_INF", "diag_mask_inf"),
                          ("SOFT_MAX", "soft_max_ext"), ("GLU", "glu")]:
        o = optable.BY_NAME[name]
        assert o.kind == "other" and o.builder == builder and o.bstyle == "custom"
        assert o.cuda == ("f32", "f64")          # CUDA kernels: cuda/nn.cu


def test_cuda_library_types():
    # the CUDA kernels (cuda/nn.cu) take the CPU's types: f32/f64 (GLU also f16), the
    # softmax mask f32/f16; anything else is refused (tests/test_cuda_ops_nn.py runs them)
    _cuda = pytest.importorskip("ggml_cy.cuda._cuda",
                                reason="built without the CUDA library (no nvcc)")
    for name in ("NORM", "RMS_NORM", "GROUP_NORM", "DIAG_MASK_INF", "SOFT_MAX", "GLU"):
        op = optable.number(name)
        assert _cuda.supports_op(op, int(T.F32), int(T.F32), -1)
        assert _cuda.supports_op(op, int(T.F64), int(T.F64), -1)
        assert not _cuda.supports_op(op, int(T.BF16), int(T.BF16), -1)
        assert not _cuda.supports_op(op, int(T.I32), int(T.I32), -1)
        assert _cuda.supports_op(op, int(T.F16), int(T.F16), -1) == (name == "GLU")
    sm = optable.number("SOFT_MAX")
    assert _cuda.supports_op(sm, int(T.F32), int(T.F32), int(T.F16))
    assert not _cuda.supports_op(sm, int(T.F32), int(T.F32), int(T.I32))


# ------------------------------------------------------------------ norm / rms_norm
SHAPES = [(1, 1, 1, 1), (7, 3, 1, 1), (33, 5, 4, 3), (4096, 2, 1, 1), (257, 40, 1, 1)]


@pytest.mark.parametrize("t", [T.F32, T.F64], ids=str)
@pytest.mark.parametrize("ne", SHAPES, ids=str)
@pytest.mark.parametrize("op", ["norm", "rms_norm"])
def test_norms(op, ne, t):
    rng = np.random.default_rng(sum(ne))
    x = rand(rng, ne, t, 3.0) + (0.5 if op == "norm" else 0.0)
    ref_fn = ref_norm if op == "norm" else ref_rms_norm
    for eps in (1e-5, 1e-6 if op == "rms_norm" else 0.0, 0.25):
        if ne[0] == 1 and op == "norm" and eps == 0.0:
            continue                                     # 0 / 0
        ctx = Context(1 << 22)
        a = ctx.tensor_from(x)
        r = getattr(ctx, op)(a, eps)
        assert r.op_name == optable.BY_NAME[op.upper()].name and r.type == t
        assert _graph.op_params_float(r, 0) == np.float32(eps)
        outs = []
        for nt in (1, 2, 3):
            run(ctx, r, nt)
            outs.append(r.numpy(4).copy())
        check(outs[0], ref_fn(x, eps), t)
        for o in outs[1:]:
            np.testing.assert_array_equal(o, outs[0])


def test_rms_norm_follows_ggml_float_steps():
    # ggml: mean = (float)(sum of float x*x in double / n); scale = 1.0f / sqrtf(mean + eps);
    # y = x * scale in float. One row, computed the same way here (sum order does not
    # matter at double precision for this size: the float mean is the same).
    x = np.random.default_rng(3).standard_normal(100).astype(np.float32)
    s = math.fsum(float(np.float32(v * v)) for v in x)
    mean = np.float32(s / 100)
    scale = np.float32(1.0) / np.sqrt(np.float32(mean + np.float32(1e-6)))
    want = x * scale
    ctx = Context(1 << 20)
    r = ctx.rms_norm(ctx.tensor_from(x), 1e-6)
    run(ctx, r)
    np.testing.assert_array_equal(r.numpy(), want)


def _views(ctx, x):
    """Non-contiguous tensors over x (numpy order (n3, n2, n1, n0)): a permuted view
    (rows strided), a view taking every other element of each row, and a transposed one."""
    a = ctx.tensor_from(x)
    yield "permuted", ctx.permute(a, 1, 0, 2, 3)           # dims 0 and 1 swapped
    yield "every_other", _strided(ctx, a, x.shape[-1], a.nb[0])
    yield "transposed", ctx.transpose(a)


def _strided(ctx, a, n0, es):
    # a [n0, n1, n2, n3] seen as [n0 // 2, n1, n2, n3] with nb0 = 2 elements
    v = ctx.view_4d(a, n0 // 2, a.ne[1], a.ne[2], a.ne[3], a.nb[1], a.nb[2], a.nb[3], es)
    _graph.set_layout(v, v.data_ptr, (2 * es, a.nb[1], a.nb[2], a.nb[3]))
    return v


@pytest.mark.parametrize("t", [T.F32, T.F64], ids=str)
@pytest.mark.parametrize("op", ["norm", "rms_norm", "soft_max", "diag_mask_inf",
                                "group_norm"])
def test_non_contiguous_sources(op, t):
    rng = np.random.default_rng(5)
    x = rand(rng, (18, 10, 4, 2), t)
    ctx = Context(1 << 22)
    for kind, v in _views(ctx, x):
        xv = v.numpy(4).copy()
        assert not v.is_contiguous or kind == "every_other"
        if op == "norm":
            r, want = ctx.norm(v, 1e-5), ref_norm(xv, 1e-5)
        elif op == "rms_norm":
            r, want = ctx.rms_norm(v, 1e-6), ref_rms_norm(xv, 1e-6)
        elif op == "soft_max":
            r, want = ctx.soft_max(v), ref_soft_max(xv)
        elif op == "diag_mask_inf":
            r, want = ctx.diag_mask_inf(v, 1), ref_diag_mask_inf(xv, 1)
        else:
            r, want = ctx.group_norm(v, 2, 1e-5), ref_group_norm(xv, 2, 1e-5)
        for nt in (1, 3):
            run(ctx, r, nt)
            check(r.numpy(4), want, t)


@pytest.mark.parametrize("op", ["norm", "rms_norm", "soft_max", "diag_mask_inf",
                                "group_norm"])
def test_inplace_forms(op):
    rng = np.random.default_rng(9)
    x = rand(rng, (65, 9, 6, 1), T.F32)
    ctx = Context(1 << 22)
    a = ctx.tensor_from(x)
    args = {"norm": (1e-5,), "rms_norm": (1e-6,), "soft_max": (), "diag_mask_inf": (2,),
            "group_norm": (4, 1e-5)}[op]
    r = getattr(ctx, op + "_inplace")(a, *args)
    assert r.view_src is not None and r.data_ptr == a.data_ptr
    want = {"norm": lambda: ref_norm(x, 1e-5), "rms_norm": lambda: ref_rms_norm(x, 1e-6),
            "soft_max": lambda: ref_soft_max(x), "group_norm": lambda: ref_group_norm(x, 4, 1e-5),
            "diag_mask_inf": lambda: ref_diag_mask_inf(x, 2)}[op]()
    plan_steps = ctx.new_graph()
    plan_steps.build_forward_expand(r)
    # an exact alias of src0 runs in place, without a temporary
    assert [k for k, _, _ in plan_steps.plan(2).steps if k != "noop"] == ["node"]
    plan_steps.compute(2)
    check(a.numpy(4), want, T.F32)


def test_threads_split_rows():
    ctx = Context(1 << 24)
    x = rand(np.random.default_rng(1), (512, 96, 1, 1), T.F32)
    a = ctx.tensor_from(x)
    g = ctx.new_graph()
    for r in (ctx.norm(a, 1e-5), ctx.rms_norm(a, 1e-5), ctx.soft_max(a),
              ctx.diag_mask_inf(a, 0), ctx.swiglu(a), ctx.group_norm(a, 1, 1e-5)):
        g.build_forward_expand(r)
    tasks = g.plan(3).n_tasks
    assert tasks[:5] == [3] * 5
    assert tasks[5] == 1                    # one group, one i3: one unit of work


# ------------------------------------------------------------------ group_norm
@pytest.mark.parametrize("ne,n_groups", [((5, 3, 6, 1), 3), ((7, 2, 5, 2), 2),
                                          ((4, 4, 3, 1), 4), ((3, 2, 5, 3), 4),
                                          ((64, 32, 8, 2), 4), ((6, 1, 1, 1), 1)],
                         ids=str)
@pytest.mark.parametrize("t", [T.F32, T.F64], ids=str)
def test_group_norm(ne, n_groups, t):
    rng = np.random.default_rng(ne[0] * 7 + n_groups)
    x = rand(rng, ne, t, 2.0) + 1.0
    ctx = Context(1 << 22)
    r = ctx.group_norm(ctx.tensor_from(x), n_groups, 1e-6)
    assert r.op_params[0] == n_groups and _graph.op_params_float(r, 1) == np.float32(1e-6)
    outs = []
    for nt in (1, 2, 3):
        run(ctx, r, nt)
        outs.append(r.numpy(4).copy())
    # channels past the last full group (ne2 = 5, 4 groups of 2: [0,2) [2,4) [4,5)) and
    # groups past ne2 (ne2 = 3, 4 groups of 1) are handled as ggml does
    check(outs[0], ref_group_norm(x, n_groups, 1e-6), t)
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])


# ------------------------------------------------------------------ soft_max
@pytest.mark.parametrize("t", [T.F32, T.F64], ids=str)
@pytest.mark.parametrize("ne", [(1, 1, 1, 1), (13, 5, 1, 1), (32, 7, 6, 2), (200, 64, 1, 1)],
                         ids=str)
def test_soft_max_plain(ne, t):
    rng = np.random.default_rng(ne[0])
    x = rand(rng, ne, t, 4.0)
    x.flat[0] = 80.0                                  # exp overflows without the max shift
    ctx = Context(1 << 22)
    a = ctx.tensor_from(x)
    r = ctx.soft_max(a)
    assert _graph.op_params_float(r, 0) == 1.0 and _graph.op_params_float(r, 1) == 0.0
    assert len(r.src) == 1
    outs = []
    for nt in (1, 2, 3):
        run(ctx, r, nt)
        outs.append(r.numpy(4).copy())
    check(outs[0], ref_soft_max(x), t)
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])


MASKS = [  # (a ne, mask ne): rows padded past ne1, broadcast over dims 2 and 3
    ((16, 5, 6, 2), (16, 5, 6, 2)),
    ((16, 5, 6, 2), (16, 8, 1, 1)),
    ((17, 3, 4, 3), (17, 3, 2, 1)),
    ((9, 4, 8, 2), (9, 4, 4, 2)),
    ((96, 70, 3, 1), (96, 72, 1, 1)),
]


@pytest.mark.parametrize("mtype", [T.F32, T.F16], ids=str)
@pytest.mark.parametrize("ane,mne", MASKS, ids=str)
@pytest.mark.parametrize("scale,max_bias", [(1.0, 0.0), (0.125, 0.0), (0.5, 8.0),
                                            (1.0, 3.0)])
def test_soft_max_ext_mask_alibi(ane, mne, mtype, scale, max_bias):
    rng = np.random.default_rng(ane[0] + mne[2])
    x = rand(rng, ane, T.F32, 2.0)
    mask = rand(rng, mne, T.F32, 1.0)
    # a causal part: -inf above the diagonal (every row keeps at least element 0)
    mask[..., np.arange(mne[1])[:, None] < np.arange(mne[0])[None, :] - 3] = -np.inf
    mask = mask.astype(NP[mtype])
    ctx = Context(1 << 22)
    a = ctx.tensor_from(x)
    m = ctx.tensor_from(mask)
    r = ctx.soft_max_ext(a, m, scale, max_bias)
    assert r.src[1] == m
    assert _graph.op_params_float(r, 0) == np.float32(scale)
    assert _graph.op_params_float(r, 1) == np.float32(max_bias)
    want = ref_soft_max(x, mask, scale, max_bias)
    for nt in (1, 3):
        for fuse in (True, False):
            run(ctx, r, nt, fuse)
            check(r.numpy(4), want, T.F32)


def test_alibi_uses_both_slope_sequences():
    # n_head = 6: heads 0-3 from m0, heads 4-5 from m1 (ggml's formula)
    s = alibi_slopes(6, 8.0)
    assert s[3] == 2.0 ** (-8) and s[4] == 2.0 ** (-1) and s[5] == 2.0 ** (-3)


def test_mask_then_softmax_chain():
    """diag_mask_inf -> soft_max_ext (the old llama attention path) and scale, fused
    executor on and off, with an elementwise op after it."""
    rng = np.random.default_rng(2)
    x = rand(rng, (24, 24, 4, 1), T.F32)
    ctx = Context(1 << 22)
    a = ctx.tensor_from(x)
    r = ctx.mul(ctx.soft_max_ext(ctx.diag_mask_inf(a, 0), None, 0.3, 0.0), a)
    want = ref_soft_max(ref_diag_mask_inf(x, 0), None, 0.3) * x
    for fuse in (True, False):
        for nt in (1, 2):
            run(ctx, r, nt, fuse)
            check(r.numpy(4), want, T.F32)


# ------------------------------------------------------------------ diag_mask_inf
@pytest.mark.parametrize("t", [T.F32, T.F64], ids=str)
@pytest.mark.parametrize("n_past", [0, 1, 3, 50])
def test_diag_mask_inf(n_past, t):
    x = rand(np.random.default_rng(n_past), (9, 7, 3, 2), t)
    ctx = Context(1 << 22)
    r = ctx.diag_mask_inf(ctx.tensor_from(x), n_past)
    assert r.op_params[0] == n_past
    for nt in (1, 3):
        run(ctx, r, nt)
        np.testing.assert_array_equal(r.numpy(4), ref_diag_mask_inf(x, n_past).astype(NP[t]))


# ------------------------------------------------------------------ GLU
@pytest.mark.parametrize("t", [T.F32, T.F16, T.F64], ids=str)
@pytest.mark.parametrize("name", list(GLU_NUM))
def test_glu_fused_swapped_split(name, t):
    rng = np.random.default_rng(GLU_NUM[name])
    ctx = Context(1 << 23)
    for ne in [(2, 1, 1, 1), (18, 5, 1, 1), (9, 4, 3, 2), (300, 70, 1, 1)]:
        x = rand(rng, ne, t, 2.0)
        a = ctx.tensor_from(x)
        n = ne[0] // 2                       # odd ne0: the last value is unused (ggml)
        lo, hi = x[..., :n], x[..., n:2 * n]
        for swapped in (False, True):
            r = getattr(ctx, name + ("_swapped" if swapped else ""))(a)
            assert r.ne == (n,) + ne[1:] and r.type == t and r.op_name == "GLU"
            assert r.op_params[:2] == (GLU_NUM[name], int(swapped))
            want = ref_glu(name, hi, lo) if swapped else ref_glu(name, lo, hi)
            outs = []
            for nt in (1, 2, 3):
                run(ctx, r, nt)
                outs.append(r.numpy(4).copy())
            check(outs[0], want, t)
            for o in outs[1:]:
                np.testing.assert_array_equal(o, outs[0])
        b = ctx.tensor_from(rand(rng, ne, t))
        r = getattr(ctx, name + "_split")(a, b)
        assert r.ne == ne and r.op_params[:2] == (GLU_NUM[name], 0) and r.src[1] == b
        run(ctx, r, 2)
        check(r.numpy(4), ref_glu(name, x, b.numpy(4)), t)
        # the generic builders speak the same op_params
        assert ctx.glu(a, name, True).op_params[:2] == (GLU_NUM[name], 1)
        assert ctx.glu_split(a, b, GLU_NUM[name]).op_params[:2] == (GLU_NUM[name], 0)


def test_glu_strided_operands():
    rng = np.random.default_rng(4)
    x = rand(rng, (12, 10, 3, 1), T.F32)
    ctx = Context(1 << 22)
    a = ctx.tensor_from(x)
    pa = ctx.permute(a, 1, 0, 2, 3)                      # [10, 12, 3] with strided rows
    pb = ctx.transpose(ctx.tensor_from(rand(rng, (12, 10, 3, 1), T.F32)))
    r = ctx.swiglu_split(pa, pb)
    r2 = ctx.geglu_swapped(pa)
    run(ctx, r, 3)
    check(r.numpy(4), ref_glu("swiglu", pa.numpy(4), pb.numpy(4)), T.F32)
    run(ctx, r2, 3)
    xa = pa.numpy(4)
    check(r2.numpy(4), ref_glu("geglu", xa[..., 5:10], xa[..., :5]), T.F32)


@pytest.mark.parametrize("t", [T.F32, T.F16], ids=str)
@pytest.mark.parametrize("name,act", [("swiglu", "silu"), ("geglu", "gelu")])
def test_glu_rows_are_the_eager_activation(name, act, t):
    # the float32/float16 GLU rows run the activation's vector row function in chunks of
    # 256: rows longer than a chunk and strided halves give act(x) * g with the eager
    # ufunc's float32 activation, bit for bit (float16: computed in float32, rounded once)
    rng = np.random.default_rng(12)
    x = rand(rng, (2 * 700, 3, 1, 1), t, 4.0)
    g = rand(rng, (700, 3, 1, 1), t, 2.0)
    ctx = Context(1 << 23)
    a, tg = ctx.tensor_from(x), ctx.tensor_from(g)
    fused = getattr(ctx, name)(a)
    hi = ctx.view_4d(a, 700, 3, 1, 1, a.nb[1], a.nb[2], a.nb[3], 700 * a.nb[0])  # strided rows
    split = getattr(ctx, name + "_split")(hi, tg)
    f32 = lambda v: v.astype(np.float32)
    act_f = getattr(ggml_cy, act)
    for r, want in ((fused, act_f(f32(x[..., :700])) * f32(x[..., 700:])),
                    (split, act_f(f32(x[..., 700:])) * f32(g))):
        run(ctx, r, 2)
        np.testing.assert_array_equal(r.numpy(4), want.astype(NP[t]))


# ------------------------------------------------------------------ bad arguments
def test_bad_arguments():
    ctx = Context(1 << 20)
    f = ctx.new_tensor(T.F32, (8, 4, 2, 1))
    i = ctx.new_tensor(T.I32, (8, 4))
    h = ctx.new_tensor(T.F16, (8, 4))
    for op, args in [("norm", (1e-5,)), ("rms_norm", (1e-5,)), ("group_norm", (2, 1e-5)),
                     ("diag_mask_inf", (0,))]:
        fn = getattr(ctx, op)
        with pytest.raises(TypeError, match="f32 or f64"):
            fn(i, *args)
        with pytest.raises(TypeError, match="f32 or f64"):
            fn(h, *args)                    # ggml's CPU takes f32 rows only (and f64 here)
        with pytest.raises(TypeError):
            fn(np.zeros(4, np.float32), *args)
    for bad in (-1.0, float("nan"), float("inf")):
        for op in ("norm", "rms_norm"):
            with pytest.raises(ValueError, match="eps"):
                getattr(ctx, op)(f, bad)
        with pytest.raises(ValueError, match="eps"):
            ctx.group_norm(f, 2, bad)
    with pytest.raises(TypeError, match="eps"):
        ctx.rms_norm(f, "1e-5")
    with pytest.raises(TypeError, match="eps"):
        ctx.rms_norm(f, None)
    with pytest.raises(ValueError, match="n_groups"):
        ctx.group_norm(f, 0, 1e-5)
    with pytest.raises(TypeError, match="n_groups"):
        ctx.group_norm(f, 2.0, 1e-5)
    with pytest.raises(ValueError, match="n_past"):
        ctx.diag_mask_inf(f, -1)
    with pytest.raises(ValueError, match="n_past"):
        ctx.diag_mask_inf(f, 2 ** 31)
    with pytest.raises(TypeError, match="n_past"):
        ctx.diag_mask_inf(f, True)
    # soft_max
    with pytest.raises(TypeError, match="f32 or f64"):
        ctx.soft_max(i)
    with pytest.raises(TypeError, match="mask"):
        ctx.soft_max_ext(f, i)
    for mne in [(7, 4, 2, 1), (8, 3, 2, 1), (8, 4, 3, 1), (8, 4, 2, 2)]:
        with pytest.raises(ValueError, match="mask"):
            ctx.soft_max_ext(f, ctx.new_tensor(T.F32, mne))
    with pytest.raises(ValueError, match="max_bias"):
        ctx.soft_max_ext(f, None, 1.0, 8.0)
    with pytest.raises(TypeError, match="scale"):
        ctx.soft_max_ext(f, None, "x")
    with pytest.raises(TypeError, match="mask"):
        ctx.soft_max_ext(f, np.zeros((4, 8), np.float32))
    # GLU
    with pytest.raises(TypeError, match="f32, f16 or f64"):
        ctx.swiglu(i)
    with pytest.raises(ValueError, match="unknown GLU op"):
        ctx.glu(f, "gelu")
    with pytest.raises(ValueError, match="not supported"):
        ctx.glu(f, 3)                        # SWIGLU_OAI takes parameters: not built
    with pytest.raises(ValueError, match="not supported"):
        ctx.glu(f, 99)
    with pytest.raises(TypeError, match="op"):
        ctx.glu(f, 1.0)
    with pytest.raises(TypeError, match="swapped"):
        ctx.glu(f, "swiglu", 2)
    with pytest.raises(ValueError, match="same shape"):
        ctx.swiglu_split(f, ctx.new_tensor(T.F32, (8, 4, 1, 1)))
    with pytest.raises(TypeError, match="one type"):
        ctx.geglu_split(f, ctx.new_tensor(T.F64, (8, 4, 2, 1)))
    with pytest.raises(TypeError):
        ctx.reglu_split(f, None)
    assert ctx.used_mem() > 0                # nothing half-built crashes later
    g = ctx.new_graph()
    g.build_forward_expand(ctx.rms_norm(f, 1e-5))
    g.compute(1)


def test_cpu_backend_supports_them():
    ctx = Context(1 << 20)
    f = ctx.new_tensor(T.F32, (8, 4))
    for r in (ctx.norm(f, 1e-5), ctx.soft_max_ext(f, ctx.new_tensor(T.F16, (8, 4))),
              ctx.swiglu(ctx.new_tensor(T.F16, (8, 4))), ctx.group_norm(f, 1, 0.0)):
        assert _graph.cpu_supports(r)


# ------------------------------------------------------------------ numpy-style functions
def test_eager_functions():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((3, 5, 40)).astype(np.float32)
    xd = x.astype(np.float64)
    check(ggml_cy.rms_norm(x), ref_rms_norm(xd, 1e-6), T.F32)
    check(ggml_cy.rms_norm(x, eps=0.1), ref_rms_norm(xd, 0.1), T.F32)
    check(ggml_cy.layer_norm(x), ref_norm(xd, 1e-5), T.F32)
    check(ggml_cy.softmax(x), ref_soft_max(xd), T.F32)
    for axis in (0, 1, -2, 2):
        m = np.moveaxis(xd, axis, -1)
        want = np.moveaxis(ref_soft_max(m), -1, axis)
        got = ggml_cy.softmax(x, axis=axis)
        assert got.dtype == np.float32 and got.shape == x.shape
        check(got, want, T.F32)
    e = np.exp(xd - xd.max())
    check(ggml_cy.softmax(x, axis=None), e / e.sum(), T.F32)
    y = xd.reshape(3, 4, 5, 10)
    check(ggml_cy.group_norm(y, 2), ref_group_norm(y, 2, 1e-5), T.F64)
    assert ggml_cy.group_norm(y, 2).dtype == np.float64
    for name in GLU_NUM:
        fn = getattr(ggml_cy, name)
        check(fn(x), ref_glu(name, xd[..., :20], xd[..., 20:]), T.F32)
        check(fn(x, swapped=True), ref_glu(name, xd[..., 20:], xd[..., :20]), T.F32)
        got = fn(xd, xd[0, 0])                               # g broadcasts
        assert got.dtype == np.float64 and got.shape == x.shape
        check(got, ref_glu(name, xd, np.broadcast_to(xd[0, 0], xd.shape)), T.F64)


def test_eager_dtypes_layouts_and_sizes():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 3, 2, 3, 16))                 # 5-D
    check(ggml_cy.rms_norm(x), ref_rms_norm(x, 1e-6), T.F64)
    check(ggml_cy.softmax(x[..., ::-2]), ref_soft_max(x[..., ::-2]), T.F64)   # strided
    check(ggml_cy.layer_norm(x.T), ref_norm(x.T, 1e-5), T.F64)               # transposed
    h = x.astype(np.float16)
    got = ggml_cy.softmax(h)
    assert got.dtype == np.float16
    check(got, ref_soft_max(h), T.F16)
    got = ggml_cy.swiglu(h)
    assert got.dtype == np.float16 and got.shape == h.shape[:-1] + (8,)
    check(got, ref_glu("swiglu", h[..., :8], h[..., 8:]), T.F16)
    assert ggml_cy.softmax(np.arange(4)).dtype == np.float64              # int -> float64
    assert ggml_cy.rms_norm(np.arange(4, dtype=np.int16)).dtype == np.float32
    assert ggml_cy.softmax(np.float32(3.0)) == 1.0                         # 0-d
    assert ggml_cy.rms_norm(np.zeros((3, 0))).shape == (3, 0)
    assert ggml_cy.softmax(np.zeros((0, 4), np.float32)).shape == (0, 4)
    assert ggml_cy.swiglu(np.zeros((0, 4))).shape == (0, 2)
    out1 = ggml_cy.softmax(x, n_threads=1)
    np.testing.assert_array_equal(ggml_cy.softmax(x, n_threads=3), out1)
    t = Context(1 << 20).tensor_from(x[0, 0].astype(np.float32))        # a Tensor works
    check(ggml_cy.rms_norm(t), ref_rms_norm(x[0, 0], 1e-6), T.F32)


def test_eager_bad_arguments():
    x = np.ones((2, 4), np.float32)
    for fn in (ggml_cy.rms_norm, ggml_cy.layer_norm, ggml_cy.softmax, ggml_cy.swiglu):
        with pytest.raises(TypeError):
            fn(np.ones(4, np.complex64))
        with pytest.raises(TypeError):
            fn(np.array(["a", "b"]))
        with pytest.raises(TypeError):
            fn(x, n_threads="2")
        with pytest.raises(ValueError):
            fn(x, n_threads=0)
    with pytest.raises(ValueError, match="eps"):
        ggml_cy.rms_norm(x, eps=-1)
    with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else ValueError):
        ggml_cy.softmax(x, axis=2)
    with pytest.raises(TypeError, match="axis"):
        ggml_cy.softmax(x, axis=1.0)
    with pytest.raises(ValueError, match="even"):
        ggml_cy.geglu(np.ones((2, 5)))
    with pytest.raises(ValueError, match="broadcast"):
        ggml_cy.reglu(x, np.ones(3))
    with pytest.raises(ValueError, match="fused"):
        ggml_cy.swiglu(x, x, swapped=True)
    with pytest.raises(TypeError, match="swapped"):
        ggml_cy.swiglu(x, swapped="yes")
    with pytest.raises(ValueError, match="3 dimensions"):
        ggml_cy.group_norm(x, 1)
    with pytest.raises(ValueError, match="n_groups"):
        ggml_cy.group_norm(np.ones((2, 2, 2)), 0)


def test_empty_tensors_compute_without_error():
    ctx = Context(1 << 20)
    for ne in [(0, 3, 1, 1), (5, 0, 2, 1), (4, 2, 0, 1), (4, 2, 3, 0)]:
        a = ctx.new_tensor(T.F32, ne)
        rs = [ctx.norm(a, 1e-5), ctx.rms_norm(a, 1e-5), ctx.group_norm(a, 2, 1e-5),
              ctx.soft_max(a), ctx.diag_mask_inf(a, 0), ctx.swiglu(a), ctx.reglu_split(a, a)]
        g = ctx.new_graph()
        for r in rs:
            g.build_forward_expand(r)
        g.compute(3)
        assert rs[5].ne == (ne[0] // 2,) + ne[1:]
