"""Issue 13 ops on the CUDA backend (cuops2): ROPE, GET_ROWS, SET_ROWS, CPY/CONT, GQA
MUL_MAT and FLASH_ATTN_EXT. Every case builds the same graph twice, on the CPU backend and
on the CUDA backend, and compares the results; the CUDA graph is computed twice (plain
launches, then a captured CUDA graph replayed) and both runs must agree bitwise.

Tolerances, per op:
  * GET_ROWS, SET_ROWS, CPY/CONT: bitwise (they move and convert values: both sides round to
    nearest even).
  * ROPE: NMSE <= 1e-12 for f32 (the arithmetic is the CPU's order with no FMA contraction;
    cos/sin are evaluated in double and rounded once on the device, glibc's cosf/sinf on the
    CPU: they agree except in rare last-bit cases), <= 1e-6 for f16 (such a flip moves one
    half ulp).
  * MUL_MAT: NMSE <= 1e-9 for f32 weights (f32 sums in another order); <= 5e-4 (ggml's
    test-backend-ops bound) for f16/bf16 weights (the CPU rounds b to the weights' type on some
    paths, as ggml's vec_dot_type does; the device does for more than 8 columns: tensor
    cores) and for quantized weights (the CPU quantizes b to Q8 for its dot products).
  * FLASH_ATTN_EXT: NMSE <= 5e-4 (ggml's bound for f16 K/V); both sides compute in f32, so the
    values seen are far below it (printed by tools/device/jobs/cuops2_nmse.py).
"""
import numpy as np
import pytest

import ggml_cy
from ggml_cy import GGMLType as T

pytestmark = pytest.mark.gpu

gcuda = pytest.importorskip("ggml_cy.cuda")
from ggml_cy import backend  # noqa: E402
from ggml_cy.graph.context import OPS  # noqa: E402

RNG = np.random.default_rng(1313)


def nmse(got, want):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    d = float(np.sum(want * want))
    return float(np.sum((got - want) ** 2)) / (d if d > 0 else 1.0)


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}")


def host(arr, t):
    """The host array tensor_set takes for a tensor of ggml type t."""
    if t == T.BF16:
        return ggml_cy.float32_to_bfloat16(np.asarray(arr, np.float32))
    if T(t).is_quantized:
        return ggml_cy.quantize(np.asarray(arr, np.float32), t)
    return np.ascontiguousarray(arr, dtype={T.F32: np.float32, T.F16: np.float16,
                                            T.I32: np.int32, T.I64: np.int64}[t])


def run_both(inputs, build, read=None):
    """inputs: name -> (ggml type, ne, numpy values in numpy order); build(ctx, tensors) -> the
    result tensor; read(out, tensors) -> the tensor to read back (default the result).
    Returns (cpu result, cuda result)."""
    res = []
    for which in ("cpu", "cuda"):
        be = backend.cpu_init(2) if which == "cpu" else gcuda.cuda_init()
        ctx = ggml_cy.Context(mem_size=1 << 22, no_alloc=True)
        ts = {k: ctx.new_tensor(t, ne) for k, (t, ne, _) in inputs.items()}
        out = build(ctx, ts)
        g = ctx.new_graph()
        g.build_forward_expand(out)
        if which == "cuda":
            for node in g.nodes:
                assert be.supports_op(node), ("CUDA backend refuses", node.op, node.type)
        buf = backend.alloc_ctx_tensors(ctx, be)
        for k, (t, ne, vals) in inputs.items():
            backend.tensor_set(ts[k], host(vals, t))
        tgt = read(out, ts) if read else out
        be.graph_compute(g)
        r = backend.tensor_get(tgt).copy()
        if which == "cuda":
            for k, (t, ne, vals) in inputs.items():   # inputs again (set_rows writes one)
                backend.tensor_set(ts[k], host(vals, t))
            be.graph_compute(g)                       # captured now, and replayed
            assert be.last_replayed
            r2 = backend.tensor_get(tgt)
            assert np.array_equal(bits(r), bits(r2)), "replayed graph differs from plain launches"
        res.append(r)
        del buf
    return res


def shape(ne):
    return tuple(reversed(ne))


def randf(ne, scale=1.0):
    return (RNG.standard_normal(shape(ne)) * scale).astype(np.float32)


# ------------------------------------------------------------------ ROPE
ROPE_CASES = [
    # (head, heads, tokens, batch, n_dims, mode, freq factors, yarn)
    (64, 4, 7, 1, 64, 0, False, False),
    (64, 4, 7, 1, 64, 2, False, False),
    (128, 3, 5, 2, 96, 0, False, False),      # partial rotation, 4-D
    (10, 3, 5, 1, 6, 2, True, False),         # odd sizes, freq factors
    (80, 2, 9, 1, 80, 0, False, True),        # YaRN
    (80, 2, 9, 1, 64, 2, True, True),
]


@pytest.mark.parametrize("dt", [T.F32, T.F16])
@pytest.mark.parametrize("case", ROPE_CASES)
def test_rope(case, dt):
    hd, nh, nt, nb, n_dims, mode, use_ff, yarn = case
    inputs = {"a": (dt, (hd, nh, nt, nb), randf((hd, nh, nt, nb))),
              "p": (T.I32, (nt,), RNG.integers(0, 5000, nt).astype(np.int32))}
    if use_ff:
        inputs["c"] = (T.F32, (n_dims // 2,), RNG.uniform(0.5, 4.0, n_dims // 2).astype(np.float32))
    kw = dict(freq_base=10000.0 if not yarn else 500000.0)
    if yarn:
        kw.update(n_ctx_orig=4096, freq_scale=0.25, ext_factor=1.0, attn_factor=1.1,
                  beta_fast=32.0, beta_slow=1.0)

    def build(ctx, ts):
        return ctx.rope_ext(ts["a"], ts["p"], ts.get("c"), n_dims, mode, **kw)

    cpu, gpu = run_both(inputs, build)
    tol = 1e-12 if dt == T.F32 else 1e-6
    assert nmse(gpu, cpu) <= tol
    # the unrotated tail is copied bit for bit
    assert np.array_equal(bits(gpu[..., n_dims:]), bits(cpu[..., n_dims:]))


@pytest.mark.parametrize("dt", [T.F32, T.F16])
def test_rope_noncontiguous_and_inplace(dt):
    hd, nh, nt = 64, 4, 6
    # a is stored [hd, tokens, heads] and permuted to [hd, heads, tokens] (a strided view)
    inputs = {"x": (dt, (hd, nt, nh), randf((hd, nt, nh))),
              "p": (T.I32, (nt,), np.arange(3, 3 + nt, dtype=np.int32))}

    def build(ctx, ts):
        v = ctx.permute(ts["x"], 0, 2, 1, 3)
        r = ctx.rope_ext(v, ts["p"], None, hd, 2)
        return ctx.cont(r)

    cpu, gpu = run_both(inputs, build)
    assert nmse(gpu, cpu) <= (1e-12 if dt == T.F32 else 1e-6)

    inputs2 = {"x": (dt, (hd, nh, nt), randf((hd, nh, nt))),
               "p": (T.I32, (nt,), np.arange(nt, dtype=np.int32))}

    def build2(ctx, ts):
        return ctx.rope_ext_inplace(ts["x"], ts["p"], None, 32, 0)

    cpu, gpu = run_both(inputs2, build2, read=lambda out, ts: ts["x"])
    assert nmse(gpu, cpu) <= (1e-12 if dt == T.F32 else 1e-6)


# ------------------------------------------------------------------ GET_ROWS
@pytest.mark.parametrize("dt", [T.F32, T.F16, T.BF16, T.I32, T.Q8_0, T.Q4_0, T.Q4_K, T.Q6_K])
def test_get_rows(dt):
    ne0 = 256 if T(dt).is_quantized else 33
    R, n, b2, b3 = 11, 5, 3, 2
    table = randf((ne0, R, b2, b3))
    if dt == T.I32:
        table = RNG.integers(-2**31, 2**31, shape((ne0, R, b2, b3)), dtype=np.int64).astype(np.int32)
    ids = RNG.integers(0, R, shape((n, b2, b3))).astype(np.int32)
    inputs = {"a": (dt, (ne0, R, b2, b3), table), "i": (T.I32, (n, b2, b3), ids)}
    cpu, gpu = run_both(inputs, lambda ctx, ts: ctx.get_rows(ts["a"], ts["i"]))
    assert gpu.dtype == cpu.dtype
    assert np.array_equal(bits(gpu), bits(cpu))


def test_get_rows_strided_table():
    # a table view with padded rows and its dims 1/2 swapped (rows stay contiguous)
    inputs = {"a": (T.F16, (20, 3, 7), randf((20, 3, 7))),
              "i": (T.I32, (4, 3), RNG.integers(0, 7, (3, 4)).astype(np.int32))}

    def build(ctx, ts):
        v = ctx.view_3d(ts["a"], 16, 3, 7, ts["a"].nb[1], ts["a"].nb[2], 2 * 2)
        return ctx.get_rows(ctx.permute(v, 0, 2, 1, 3), ts["i"])

    cpu, gpu = run_both(inputs, build)
    assert np.array_equal(bits(gpu), bits(cpu))


# ------------------------------------------------------------------ SET_ROWS
@pytest.mark.parametrize("src", [T.F32, T.F16])
@pytest.mark.parametrize("dst", [T.F32, T.F16, T.BF16])
@pytest.mark.parametrize("idt", [T.I32, T.I64])
def test_set_rows(src, dst, idt):
    ne0, R, n, b2, b3 = 40, 13, 5, 4, 2
    ids = np.stack([RNG.permutation(R)[:n] for _ in range(2 * 1)]).reshape(1, 2, n)
    inputs = {"a": (dst, (ne0, R, b2, b3), randf((ne0, R, b2, b3))),
              "b": (src, (ne0, n, b2, b3), randf((ne0, n, b2, b3), 100.0)),
              "c": (idt, (n, 2, 1), ids)}          # ids broadcast over dims 2 (4 % 2) and 3
    cpu, gpu = run_both(inputs, lambda ctx, ts: ctx.set_rows(ts["a"], ts["b"], ts["c"]),
                        read=lambda out, ts: ts["a"])
    assert np.array_equal(bits(gpu), bits(cpu))


def test_set_rows_noncontiguous_rows_kv_cache_layout():
    # llama's cache write: rows [hd * n_kv_heads, n] (here a view with padded rows) into an
    # f16 cache at i64 row ids
    hd, nkv, n, n_ctx = 16, 2, 6, 20
    inputs = {"cache": (T.F16, (hd * nkv, n_ctx), np.zeros((n_ctx, hd * nkv), np.float32)),
              "x": (T.F32, (hd * nkv + 8, n), randf((hd * nkv + 8, n))),
              "rows": (T.I64, (n,), np.arange(7, 7 + n, dtype=np.int64))}

    def build(ctx, ts):
        b = ctx.view_2d(ts["x"], hd * nkv, n, ts["x"].nb[1], 4 * 4)
        return ctx.set_rows(ts["cache"], b, ts["rows"])

    cpu, gpu = run_both(inputs, build, read=lambda out, ts: ts["cache"])
    assert np.array_equal(bits(gpu), bits(cpu))


def test_set_rows_quantized_destination_is_refused():
    ctx = ggml_cy.Context(mem_size=1 << 20, no_alloc=True)
    a = ctx.new_tensor(T.Q8_0, (64, 4))
    b = ctx.new_tensor(T.F32, (64, 2))
    c = ctx.new_tensor(T.I32, (2,))
    r = ctx.set_rows(a, b, c)
    be = gcuda.cuda_init()
    assert not be.supports_op(r)
    g = ctx.new_graph()
    g.build_forward_expand(r)
    buf = backend.alloc_ctx_tensors(ctx, be)
    with pytest.raises(TypeError, match="set_rows"):
        be.graph_compute(g)
    del buf


# ------------------------------------------------------------------ CPY / CONT
PAIRS = [(T.F32, T.F16), (T.F16, T.F32), (T.F32, T.BF16), (T.BF16, T.F32), (T.F16, T.BF16),
         (T.F32, T.F32), (T.F16, T.F16), (T.I32, T.I32), (T.F32, T.I32)]


@pytest.mark.parametrize("src,dst", PAIRS)
def test_cpy_layouts(src, dst):
    vals = randf((7, 5, 3, 2), 50.0)
    inputs = {"a": (src, (7, 5, 3, 2), vals if src != T.I32 else vals.astype(np.int32)),
              "b": (dst, (5, 7, 2, 3), np.zeros(shape((5, 7, 2, 3)), np.float32))}

    def build(ctx, ts):
        p = ctx.permute(ts["a"], 1, 0, 3, 2)        # [5, 7, 2, 3], strided
        return ctx.cpy(p, ts["b"])

    cpu, gpu = run_both(inputs, build, read=lambda out, ts: ts["b"])
    assert np.array_equal(bits(gpu), bits(cpu))


@pytest.mark.parametrize("dt", [T.F32, T.F16, T.BF16])
@pytest.mark.parametrize("perm", [(0, 2, 1, 3), (1, 0, 2, 3), (2, 1, 0, 3), (0, 1, 3, 2)])
def test_cont_permutes(dt, perm):
    ne = (33, 6, 5, 2)
    inputs = {"a": (dt, ne, randf(ne))}
    cpu, gpu = run_both(inputs, lambda ctx, ts: ctx.cont(ctx.permute(ts["a"], *perm)))
    assert np.array_equal(bits(gpu), bits(cpu))


def test_cpy_dequantizes_and_refuses_quantizing():
    inputs = {"a": (T.Q8_0, (64, 3), randf((64, 3))), "b": (T.F32, (64, 3), randf((64, 3)))}
    cpu, gpu = run_both(inputs, lambda ctx, ts: ctx.cpy(ts["a"], ts["b"]),
                        read=lambda out, ts: ts["b"])
    assert np.array_equal(bits(gpu), bits(cpu))
    ctx = ggml_cy.Context(mem_size=1 << 20, no_alloc=True)
    a = ctx.new_tensor(T.F32, (64, 3))
    b = ctx.new_tensor(T.Q8_0, (64, 3))
    r = ctx.cpy(a, b)
    be = gcuda.cuda_init()
    assert not be.supports_op(r)
    g = ctx.new_graph()
    g.build_forward_expand(r)
    buf = backend.alloc_ctx_tensors(ctx, be)
    with pytest.raises(TypeError, match="q8_0"):
        be.graph_compute(g)
    del buf


# ------------------------------------------------------------------ MUL_MAT (GQA broadcast)
# K 128 with n <= 8: the dense mat-vec kernel (16-byte loads of a); K 67: the tiled kernel
MM_WEIGHTS = [(wt, K) for wt in (T.F32, T.F16, T.BF16) for K in (67, 128)] + \
    [(wt, 256) for wt in (T.Q8_0, T.Q4_0, T.Q4_K, T.Q6_K)]


@pytest.mark.parametrize("wt,K", MM_WEIGHTS)
@pytest.mark.parametrize("ratio", [1, 2, 4])
@pytest.mark.parametrize("n", [1, 7, 40])
def test_mul_mat_gqa(wt, K, ratio, n):
    M, h_a, b3 = 19, 2, 2
    inputs = {"a": (wt, (K, M, h_a, 1), randf((K, M, h_a, 1))),
              # b stored [K, heads, n, b3] and permuted to [K, n, heads, b3] as llama's q
              "b": (T.F32, (K, h_a * ratio, n, b3), randf((K, h_a * ratio, n, b3)))}

    def build(ctx, ts):
        return ctx.mul_mat(ts["a"], ctx.permute(ts["b"], 0, 2, 1, 3))

    cpu, gpu = run_both(inputs, build)
    # f32: both sides sum f32 products; f16/bf16: ggml's bound (the CPU may round b to the
    # weights' type, as ggml's vec_dot_type does; the device does for more than 8 columns)
    assert nmse(gpu, cpu) <= (1e-9 if wt == T.F32 else 5e-4)


# ------------------------------------------------------------------ FLASH_ATTN_EXT
def fa_inputs(D, n_q, n_kv, nh, nkv, kvt, causal, batch=1, mask_heads=1):
    inputs = {"q": (T.F32, (D, n_q, nh, batch), randf((D, n_q, nh, batch))),
              "k": (kvt, (D, n_kv, nkv, batch), randf((D, n_kv, nkv, batch))),
              "v": (kvt, (D, n_kv, nkv, batch), randf((D, n_kv, nkv, batch)))}
    if causal is not None:
        m = np.zeros((batch, mask_heads, n_q, n_kv), np.float32)
        if causal:
            past = n_kv - n_q
            m[..., np.arange(n_kv)[None, :] > (past + np.arange(n_q))[:, None]] = -np.inf
        else:
            m[...] = RNG.uniform(-2, 0, m.shape)
            m[..., ::5] = -np.inf
        inputs["m"] = (T.F16, (n_kv, n_q, mask_heads, batch), m)
    return inputs


def fa_build(scale, max_bias=0.0, softcap=0.0):
    def build(ctx, ts):
        return ctx.flash_attn_ext(ts["q"], ts["k"], ts["v"], ts.get("m"), scale, max_bias, softcap)
    return build


@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("ratio", [1, 2, 4])
@pytest.mark.parametrize("n_kv", [1, 77, 3000])
def test_flash_attn_decode(D, ratio, n_kv):
    inputs = fa_inputs(D, 1, n_kv, 8, 8 // ratio, T.F16, causal=False)
    cpu, gpu = run_both(inputs, fa_build(1.0 / np.sqrt(D)))
    assert gpu.shape == cpu.shape
    assert nmse(gpu, cpu) <= 5e-4


@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("ratio", [1, 4])
@pytest.mark.parametrize("n_q,n_kv", [(37, 37), (64, 100), (9, 300)])
def test_flash_attn_prompt_causal(D, ratio, n_q, n_kv):
    inputs = fa_inputs(D, n_q, n_kv, 8, 8 // ratio, T.F16, causal=True)
    cpu, gpu = run_both(inputs, fa_build(1.0 / np.sqrt(D)))
    assert nmse(gpu, cpu) <= 5e-4


@pytest.mark.parametrize("kvt", [T.F32, T.F16, T.BF16])
def test_flash_attn_kv_types_softcap_alibi_batch(kvt):
    inputs = fa_inputs(80, 5, 70, 6, 3, kvt, causal=False, batch=2, mask_heads=3)
    cpu, gpu = run_both(inputs, fa_build(0.1, max_bias=8.0, softcap=20.0))
    assert nmse(gpu, cpu) <= 5e-4
    inputs = fa_inputs(37, 3, 33, 4, 4, kvt, causal=None)   # no mask, odd head size (scalar loads)
    cpu, gpu = run_both(inputs, fa_build(0.3))
    assert nmse(gpu, cpu) <= 5e-4


def test_flash_attn_llama_layout():
    # q from a permuted [hd, n_head, n] tensor, k/v as views of f16 caches [hd * nkv, n_ctx]
    hd, nh, nkv, n, n_ctx, n_kv = 64, 8, 2, 5, 64, 21
    inputs = {"q": (T.F32, (hd, nh, n), randf((hd, nh, n))),
              "kc": (T.F16, (hd * nkv, n_ctx), randf((hd * nkv, n_ctx))),
              "vc": (T.F16, (hd * nkv, n_ctx), randf((hd * nkv, n_ctx)))}
    m = np.zeros((n, n_kv), np.float32)
    m[np.arange(n_kv)[None, :] > (n_kv - n + np.arange(n))[:, None]] = -np.inf
    inputs["m"] = (T.F16, (n_kv, n), m)

    def build(ctx, ts):
        kc, vc = ts["kc"], ts["vc"]
        k = ctx.view_4d(kc, hd, n_kv, nkv, 1, kc.nb[1], hd * 2, kc.nb[1] * n_ctx, 0)
        v = ctx.view_4d(vc, hd, n_kv, nkv, 1, vc.nb[1], hd * 2, vc.nb[1] * n_ctx, 0)
        qp = ctx.permute(ts["q"], 0, 2, 1, 3)
        return ctx.flash_attn_ext(qp, k, v, ts["m"], 0.125)

    cpu, gpu = run_both(inputs, build)
    assert nmse(gpu, cpu) <= 5e-4


def test_flash_attn_fully_masked_rows_give_zeros():
    inputs = fa_inputs(64, 2, 40, 2, 2, T.F16, causal=False)
    m = np.full((1, 1, 2, 40), -np.inf, np.float32)
    m[0, 0, 1, 3] = 0.0
    inputs["m"] = (T.F16, (40, 2, 1, 1), m)
    cpu, gpu = run_both(inputs, fa_build(0.125))
    assert np.all(gpu[0, 0] == 0.0)   # [batch, n_q, n_head, D]: query 0 sees no key
    assert nmse(gpu, cpu) <= 5e-4


def test_flash_attn_quantized_kv_is_refused():
    ctx = ggml_cy.Context(mem_size=1 << 20, no_alloc=True)
    q = ctx.new_tensor(T.F32, (64, 1, 2, 1))
    k = ctx.new_tensor(T.Q8_0, (64, 32, 2, 1))
    v = ctx.new_tensor(T.Q8_0, (64, 32, 2, 1))
    r = ctx.flash_attn_ext(q, k, v, None, 0.125)
    be = gcuda.cuda_init()
    assert not be.supports_op(r)
    g = ctx.new_graph()
    g.build_forward_expand(r)
    buf = backend.alloc_ctx_tensors(ctx, be)
    with pytest.raises(TypeError, match="flash_attn_ext"):
        be.graph_compute(g)
    del buf


# ------------------------------------------------------------------ the llama runner's graph
@pytest.mark.parametrize("wtype", ["f16", "bf16", "q8_0", "q4_k"])
def test_llama_graph_nodes_all_have_cuda_kernels(tmp_path, wtype):
    # every node of ggml_cy.models.llama's forward graph (prompt and decode shapes) is one the
    # CUDA backend runs: rms_norm/mul/swiglu (cuops1), get_rows, mul_mat, rope_ext, set_rows,
    # flash_attn_ext, views (cuops2)
    from ggml_cy.models import llama
    path = tmp_path / f"m-{wtype}.gguf"
    llama.write_random_model(path, wtype, n_vocab=300, n_embd=256, n_layer=1, n_head=4,
                             n_head_kv=2, n_ff=512, n_ctx=64)
    be = gcuda.cuda_init()
    with llama.LlamaModel(path, n_ctx=64) as m:
        for n, n_kv in ((7, 7), (1, 8)):
            ctx, graph, _, _ = m._build(n, n_kv)
            names = {v: k for k, v in OPS.items()}
            missing = sorted({(names.get(int(t.op), int(t.op)), T(t.type).name)
                              for t in graph.nodes if not be.supports_op(t)})
            assert not missing, missing
