"""Quantized tensors on the CUDA device: raw blocks uploaded and viewed by rows, every
dequantizable type dequantized on the device bitwise equal to gguf-py (float32) and to the CPU
path, mul_mat with quantized weights (mat-vec kernel for 1-8 columns, tensor-core GEMM above)
within ggml's NMSE bound, get_rows from quantized tables; the graph path (CUDA backend) and the
eager DeviceTensor path; bad input."""
import numpy as np
import pytest

import ggml_cy
import ggml_cy.cuda as gcuda

pytestmark = pytest.mark.gpu

gguf = pytest.importorskip("gguf")
from gguf import GGMLQuantizationType as QT   # noqa: E402
from gguf.quants import dequantize as gguf_dequantize   # noqa: E402

GT = ggml_cy.GGMLType
RNG = np.random.default_rng(12)

# every type the device dequantizes (issue 12 item 2, plus ggml's activation formats)
GGUF_TYPES = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K",
              "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S", "IQ1_M", "IQ4_NL",
              "IQ4_XS", "TQ1_0", "TQ2_0", "MXFP4", "NVFP4"]
ACT_TYPES = ["Q8_1", "Q8_K"]
ALL_TYPES = GGUF_TYPES + ACT_TYPES


def _traits(name):
    t = GT[name]
    return t.blck_size, t.type_size


def _random_blocks(name, rows, ne0, rng=RNG):
    """Random bytes: random float16 scales include subnormals, zeros, infinities and NaNs
    (signalling ones too), so bitwise checks cover every special case."""
    blck, bb = _traits(name)
    return rng.integers(0, 256, (rows, ne0 // blck * bb), dtype=np.uint8)


def _reference(raw, name, ne0):
    """float32 values: gguf-py, or ggml's formula d * q for Q8_1 / Q8_K (gguf-py lacks them)."""
    if name in GGUF_TYPES:
        return gguf_dequantize(raw, QT[name]).reshape(raw.shape[0], ne0)
    blck, bb = _traits(name)
    blocks = raw.reshape(-1, bb)
    if name == "Q8_1":
        d = blocks[:, 0:2].copy().view(np.float16).astype(np.float32)
        q = blocks[:, 4:36].copy().view(np.int8).astype(np.float32)
    else:
        d = blocks[:, 0:4].copy().view(np.float32)
        q = blocks[:, 4:260].copy().view(np.int8).astype(np.float32)
    return (q * d).reshape(raw.shape[0], ne0)


def _cpu(raw, name, ne0):
    """The CPU path's dequantization (ggml_cy.dequantize), when this build has it."""
    deq = getattr(ggml_cy, "dequantize", None)
    if deq is None:
        return None
    return np.asarray(deq(raw, GT[name], (raw.shape[0], ne0)))


def _bits(a):
    return np.ascontiguousarray(a, np.float32).view(np.uint32)


def _sane_blocks(name, rows, ne0, rng=RNG):
    """Random blocks whose values are finite and moderate (for products): blocks with a
    non-finite or huge value are replaced by all-zero bytes."""
    raw = _random_blocks(name, rows, ne0, rng)
    blck, bb = _traits(name)
    vals = _reference(raw, name, ne0).reshape(-1, blck)
    bad = ~np.isfinite(vals).all(axis=1) | (np.abs(np.nan_to_num(vals)) > 512).any(axis=1)
    raw.reshape(-1, bb)[bad] = 0
    return raw


def _nmse(got, ref):
    got = np.asarray(got, np.float64)
    return float(np.sum((got - ref) ** 2) / max(np.sum(ref ** 2), 1e-300))


# ------------------------------------------------------------------ dequantize, bitwise
@pytest.mark.parametrize("name", ALL_TYPES)
def test_dequantize_bitwise(name):
    ne0 = 512
    raw = _random_blocks(name, 7, ne0)
    want = _reference(raw, name, ne0)
    x = gcuda.from_blocks(raw, name)
    assert x.shape == (7, ne0) and x.is_quantized and x.ggml_type == int(GT[name])
    np.testing.assert_array_equal(x.blocks(), raw)                 # raw round trip
    got = gcuda.dequantize(x).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(want))
    cpu = _cpu(raw, name, ne0)
    if cpu is not None:
        np.testing.assert_array_equal(_bits(got), _bits(cpu))
    np.testing.assert_array_equal(_bits(x.numpy()), _bits(want))  # numpy() dequantizes
    # float16 and bfloat16 results: the float32 values rounded once (numpy's rules)
    h = gcuda.dequantize(x, np.float16).numpy()
    np.testing.assert_array_equal(h.view(np.uint16), want.astype(np.float16).view(np.uint16))
    b = gcuda.dequantize(x, "bfloat16").numpy(raw_bfloat16=True)
    from ggml_cy.cuda.ops import _float32_to_bf16_bits
    np.testing.assert_array_equal(b, _float32_to_bf16_bits(want))


@pytest.mark.parametrize("name", ALL_TYPES)
def test_dequantize_wide_rows_bitwise(name):
    """Rows of 2048 values (256 chunks per row: whole warps of the staged path), as a
    whole tensor, a 3-d shape and a strided view of every other row."""
    ne0 = 2048
    raw = _random_blocks(name, 6, ne0)
    want = _reference(raw, name, ne0)
    x = gcuda.from_blocks(raw, name)
    np.testing.assert_array_equal(_bits(gcuda.dequantize(x).numpy()), _bits(want))
    x3 = gcuda.from_blocks(raw.reshape(2, 3, -1), name)
    np.testing.assert_array_equal(_bits(gcuda.dequantize(x3).numpy()),
                                  _bits(want.reshape(2, 3, ne0)))
    np.testing.assert_array_equal(_bits(gcuda.dequantize(x[::2]).numpy()), _bits(want[::2]))


@pytest.mark.parametrize("name", ["Q4_0", "Q8_0", "Q4_K", "IQ4_XS"])
def test_dequantize_streamed_output_bitwise(name):
    """An output over 24 MiB (evict-first stores): 8M values in 4 rows, against the CPU."""
    ne0 = 1 << 21
    raw = _random_blocks(name, 4, ne0)
    want = ggml_cy.dequantize(raw, name, (4, ne0))
    np.testing.assert_array_equal(_bits(gcuda.dequantize(gcuda.from_blocks(raw, name)).numpy()),
                                  _bits(want))


@pytest.mark.parametrize("name", ["Q4_0", "Q4_1", "Q2_K", "Q4_K", "IQ2_XXS", "IQ1_M"])
def test_dequantize_special_scales(name):
    """Scales set to subnormal, zero, +-inf, quiet and signalling NaN in every f16 slot."""
    ne0 = 256
    blck, bb = _traits(name)
    raw = _random_blocks(name, 6, ne0)
    specials = [0x0001, 0x0000, 0x7c00, 0xfc00, 0x7e01, 0x7c01, 0x8001, 0x3c00]
    blocks = raw.reshape(-1, bb)
    for i in range(blocks.shape[0]):
        v = specials[i % len(specials)]
        for off in range(0, min(bb, 4), 2):     # the leading half fields (d, m / dmin)
            blocks[i, off:off + 2] = np.array([v], np.uint16).view(np.uint8)
        blocks[i, bb - 2:bb] = np.array([v], np.uint16).view(np.uint8)   # trailing d (K-quants)
    want = _reference(raw, name, ne0)
    got = gcuda.dequantize(gcuda.from_blocks(raw, name)).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(want))


def test_row_views_and_copies():
    name, ne0 = "Q4_K", 512
    raw = _random_blocks(name, 9, ne0)
    want = _reference(raw, name, ne0)
    x = gcuda.from_blocks(raw.reshape(3, 3, -1), name)
    assert x.shape == (3, 3, ne0)
    v = x[1:, ::2]                                        # rows 3..8, strided: a view
    assert not v.is_contiguous()
    np.testing.assert_array_equal(_bits(gcuda.dequantize(v).numpy()),
                                  _bits(want.reshape(3, 3, ne0)[1:, ::2]))
    c = v.copy()                                          # raw-block copy on the device
    assert c.is_contiguous() and c.ggml_type == x.ggml_type
    np.testing.assert_array_equal(c.blocks(), raw.reshape(3, 3, -1)[1:, ::2])
    np.testing.assert_array_equal(_bits(x[2].astype(np.float32).numpy()), _bits(want[6:9]))
    r = x.reshape(9, ne0)
    np.testing.assert_array_equal(r.blocks(), raw)
    out = gcuda.empty((3, 3, ne0), np.float32)
    assert gcuda.dequantize(x, out=out) is out
    np.testing.assert_array_equal(_bits(out.numpy().reshape(9, ne0)), _bits(want))


# ------------------------------------------------------------------ mul_mat
@pytest.mark.parametrize("name", ALL_TYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 37])
def test_mul_mat_quantized(name, n):
    M, K = 67, 512
    raw = _sane_blocks(name, M, K)
    w = _reference(raw, name, K).astype(np.float64)
    b = RNG.standard_normal((n, K)).astype(np.float32)
    got = gcuda.mul_mat(gcuda.from_blocks(raw, name), b).numpy()
    assert got.shape == (n, M)
    ref = b.astype(np.float64) @ w.T
    assert _nmse(got, ref) < 5e-4


@pytest.mark.parametrize("n", [4, 40])
def test_mul_mat_quantized_batched_broadcast_and_strided_b(n):
    name, M, K = "Q6_K", 33, 256
    raw = _sane_blocks(name, 2 * M, K).reshape(2, M, -1)
    w = _reference(raw.reshape(2 * M, -1), name, K).reshape(2, M, K).astype(np.float64)
    b = RNG.standard_normal((3, 4, n, K)).astype(np.float32)     # a's batch 2 divides 4
    a = gcuda.from_blocks(raw, name)
    got = gcuda.mul_mat(a, b).numpy()
    ref = np.einsum("cbnk,bmk->cbnm", b.astype(np.float64), np.repeat(w, 2, axis=0))
    assert got.shape == (3, 4, n, M)
    assert _nmse(got, ref) < 5e-4
    # b as a non-contiguous device view (every other row)
    bb = gcuda.asarray(np.ascontiguousarray(b[0, 0]))
    big = gcuda.asarray(np.repeat(b[0, 0], 2, axis=0))
    got2 = gcuda.mul_mat(a[0], big[::2]).numpy()
    np.testing.assert_allclose(got2, gcuda.mul_mat(a[0], bb).numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("K", [64, 128, 320, 2112, 6144, 16384, 16448])
def test_mul_mat_q4_0_one_column_any_k(K):
    """Q4_0 x one column (k_mv_q4_0_q8: b as int8 in shared memory) at row lengths that leave
    warps partly past K while b is quantized, that need 1-8 block pairs per lane, and one
    past its limit (16448: the f32-b kernel); batched b too."""
    name, M = "Q4_0", 37
    raw = _sane_blocks(name, M, K)
    w = _reference(raw, name, K).astype(np.float64)
    b = RNG.standard_normal((1, K)).astype(np.float32)
    a = gcuda.from_blocks(raw, name)
    assert _nmse(gcuda.mul_mat(a, b).numpy(), b.astype(np.float64) @ w.T) < 5e-4
    bb = RNG.standard_normal((3, 1, K)).astype(np.float32)
    got = gcuda.mul_mat(a, bb).numpy()
    assert got.shape == (3, 1, M)
    assert _nmse(got, np.einsum("znk,mk->znm", bb.astype(np.float64), w)) < 5e-4


def test_mul_mat_q4_0_large_matvec():
    """The bench shape: 4096 x 4096 weights, one column."""
    name, M, K = "Q4_0", 4096, 4096
    raw = _sane_blocks(name, M, K)
    w = _reference(raw, name, K).astype(np.float64)
    b = RNG.standard_normal((1, K)).astype(np.float32)
    got = gcuda.mul_mat(gcuda.from_blocks(raw, name), b).numpy()
    assert _nmse(got, b.astype(np.float64) @ w.T) < 5e-4


@pytest.mark.parametrize("pdl", [True, False])
def test_programmatic_launch_chains_see_each_others_writes(pdl):
    """The dequantize kernel and the Q4_0 x1 mat-vec are launched with programmatic dependent
    launch: their CTAs may start while the previous kernel still runs. Queued back to back
    with no synchronization, each must read what the kernel before it wrote (the mat-vec's b,
    just dequantized into) and must not overwrite what the kernel before it reads (the next
    dequantize rewrites that b). Results are bitwise those of the same calls one at a time;
    also with the launch attribute off."""
    from ggml_cy.cuda import _cuda
    M = K = 4096
    raw = _sane_blocks("Q4_0", M, K)
    W = gcuda.from_blocks(raw, "Q4_0")
    qs = [_sane_blocks("Q8_0", 1, K) for _ in range(5)]
    bq = [gcuda.from_blocks(q, "Q8_0") for q in qs]
    want = []
    for q in qs:
        bv = gcuda.asarray(_reference(q, "Q8_0", K))
        gcuda.synchronize()
        want.append(gcuda.mul_mat(W, bv).numpy())
    prev = _cuda._set_pdl(pdl)
    try:
        b = gcuda.empty((1, K), np.float32)
        outs = [gcuda.empty((1, M), np.float32) for _ in range(3 * len(qs))]
        for r in range(3):
            for i, q in enumerate(bq):
                gcuda.dequantize(q, out=b)
                gcuda.mul_mat(W, b, out=outs[r * len(qs) + i])
        gcuda.synchronize()
    finally:
        _cuda._set_pdl(prev)
    for r in range(3):
        for i in range(len(qs)):
            np.testing.assert_array_equal(_bits(outs[r * len(qs) + i].numpy()), _bits(want[i]))


# ------------------------------------------------------------------ get_rows
@pytest.mark.parametrize("name", ["Q4_0", "Q8_0", "Q4_K", "Q6_K", "IQ4_XS", "IQ2_S", "MXFP4"])
def test_get_rows_quantized_bitwise(name):
    R, K = 11, 512
    raw = _random_blocks(name, R, K)
    want = _reference(raw, name, K)
    t = gcuda.from_blocks(raw, name)
    rows = np.array([3, 0, 10, 3, -1], np.int64)
    got = gcuda.get_rows(t, rows).numpy()
    np.testing.assert_array_equal(_bits(got), _bits(want[rows]))
    # batched table (B, R, K) with rows (B, n), device row numbers, float16 result
    raw3 = _random_blocks(name, 2 * R, K).reshape(2, R, -1)
    want3 = _reference(raw3.reshape(2 * R, -1), name, K).reshape(2, R, K)
    rows3 = np.array([[1, 2, 3], [10, 0, 0]], np.int32)
    got3 = gcuda.get_rows(gcuda.from_blocks(raw3, name), gcuda.asarray(rows3), np.float16).numpy()
    ref3 = np.stack([want3[i][rows3[i]] for i in range(2)]).astype(np.float16)
    np.testing.assert_array_equal(got3.view(np.uint16), ref3.view(np.uint16))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_get_rows_float_table(dtype):
    table = RNG.standard_normal((9, 40)).astype(dtype)
    rows = [8, 1, 1]
    got = gcuda.get_rows(gcuda.asarray(table), rows).numpy()
    np.testing.assert_array_equal(got, table[rows].astype(np.float32))


# ------------------------------------------------------------------ the graph path
def _graph_on_device(build, inputs):
    """inputs: name -> (GGMLType, ne tuple, host bytes/array). Returns the results of two
    runs on the CUDA backend (plain launches, then a captured graph)."""
    from ggml_cy import backend
    ctx = ggml_cy.Context(mem_size=1 << 22, no_alloc=True)
    ts = {k: ctx.new_tensor(t, ne) for k, (t, ne, _) in inputs.items()}
    out = build(ctx, ts)
    g = ctx.new_graph()
    g.build_forward_expand(out)
    be = gcuda.cuda_init()
    buf = backend.alloc_ctx_tensors(ctx, be)
    for k, (_, _, data) in inputs.items():
        backend.tensor_set(ts[k], data if isinstance(data, np.ndarray) and data.dtype != np.uint8
                           else np.ascontiguousarray(data).tobytes())
    results = []
    for _ in range(2):
        be.graph_compute(g)
        results.append(np.frombuffer(backend.tensor_get(out, 0, out.nbytes).tobytes(), np.float32).copy())
    assert be.last_replayed
    del buf
    return results


@pytest.mark.parametrize("name", ["Q4_0", "Q5_1", "Q3_K", "Q4_K", "IQ3_S", "TQ2_0", "NVFP4"])
def test_graph_cpy_dequantizes_bitwise(name):
    R, K = 5, 256
    raw = _random_blocks(name, R, K)
    want = _reference(raw, name, K)
    def build(ctx, t):
        try:
            return ctx.cpy(t["a"], t["o"])
        except TypeError:
            # the builder checks the CPU kernels; where they lack the dequantizing copy,
            # record ggml's CPY node directly: the device implements it
            return ctx._record("CPY", t["o"].type, t["o"].ne, (t["a"], t["o"]), view_of=1)

    got = _graph_on_device(
        build,
        {"a": (GT[name], (K, R), raw), "o": (GT.F32, (K, R), np.zeros((R, K), np.float32))})
    for g in got:
        np.testing.assert_array_equal(g.view(np.uint32), _bits(want).reshape(-1))


@pytest.mark.parametrize("name", ["Q4_0", "Q8_0", "Q4_K", "Q6_K", "IQ4_XS"])
@pytest.mark.parametrize("n", [1, 8, 20])
def test_graph_mul_mat_quantized(name, n):
    M, K = 48, 512
    raw = _sane_blocks(name, M, K)
    w = _reference(raw, name, K).astype(np.float64)
    b = RNG.standard_normal((n, K)).astype(np.float32)
    got = _graph_on_device(lambda ctx, t: ctx.mul_mat(t["a"], t["b"]),
                           {"a": (GT[name], (K, M), raw), "b": (GT.F32, (K, n), b)})
    ref = (b.astype(np.float64) @ w.T).reshape(-1)
    for g in got:
        assert _nmse(g, ref) < 5e-4
    np.testing.assert_array_equal(got[0], got[1])


@pytest.mark.parametrize("name", ["Q4_0", "Q6_K", "IQ2_XS"])
def test_graph_get_rows_quantized(name):
    R, K = 13, 256
    raw = _random_blocks(name, R, K)
    want = _reference(raw, name, K)
    rows = np.array([12, 0, 5, 5], np.int32)
    got = _graph_on_device(lambda ctx, t: ctx.get_rows(t["a"], t["r"]),
                           {"a": (GT[name], (K, R), raw), "r": (GT.I32, (4,), rows)})
    for g in got:
        np.testing.assert_array_equal(g.view(np.uint32), _bits(want[rows]).reshape(-1))


# ------------------------------------------------------------------ bad input
def test_bad_input():
    raw = _random_blocks("Q4_0", 2, 64)
    with pytest.raises(ValueError, match="bytes"):
        gcuda.from_blocks(raw[:, :-1], "q4_0")                     # cuts a block
    with pytest.raises(ValueError):
        gcuda.from_blocks(raw, "q4_0", shape=(2, 96))               # byte count differs
    with pytest.raises(ValueError, match="multiple of 32"):
        gcuda.from_blocks(raw, "q4_0", shape=(1, 72))
    with pytest.raises(TypeError, match="not a quantized"):
        gcuda.from_blocks(raw, "f32")
    with pytest.raises(TypeError, match="not a quantized"):
        gcuda.from_blocks(raw, "q9_9")
    with pytest.raises(TypeError, match="uint8"):
        gcuda.from_blocks(raw.astype(np.int16), "q4_0")
    x = gcuda.from_blocks(raw, "q4_0")
    with pytest.raises(IndexError, match="rows"):
        x[:, 3]
    with pytest.raises(IndexError, match="rows"):
        x[0, :32]
    with pytest.raises(ValueError, match="stays last"):
        x.T
    with pytest.raises(TypeError, match="item size"):
        x.itemsize
    with pytest.raises(BufferError):
        x.__dlpack__()
    with pytest.raises(TypeError, match="not a quantized"):
        gcuda.dequantize(gcuda.asarray(np.ones(4, np.float32)))
    with pytest.raises(TypeError):
        gcuda.dequantize(x, np.int32)
    with pytest.raises(ValueError, match="rows"):
        gcuda.mul_mat(x, np.ones((3, 32), np.float32))              # K differs
    with pytest.raises(TypeError, match="float32"):
        gcuda.mul_mat(x, gcuda.asarray(np.ones((3, 64), np.float16)))
    with pytest.raises(ValueError, match="divide"):
        gcuda.mul_mat(gcuda.from_blocks(np.tile(raw, (3, 1)).reshape(3, 2, -1), "q4_0"),
                      np.ones((2, 5, 64), np.float32))
    with pytest.raises(IndexError, match="out of range"):
        gcuda.get_rows(x, [2])
    with pytest.raises(TypeError, match="integers"):
        gcuda.get_rows(x, [0.5])
    with pytest.raises(ValueError, match="dims"):
        gcuda.get_rows(x, [[0]])
    # a type the device has no kernel for: a clear TypeError from the library
    q1 = gcuda.from_blocks(np.zeros((2, 18), np.uint8), "q1_0")
    with pytest.raises(TypeError, match="not supported on the CUDA device"):
        gcuda.dequantize(q1)
    with pytest.raises(TypeError, match="not supported on the CUDA device"):
        gcuda.mul_mat(q1, np.ones((1, 128), np.float32))
    # after free: a clear error, no fault
    y = gcuda.from_blocks(raw, "q4_0")
    y.free()
    with pytest.raises(gcuda.CudaError):
        gcuda.dequantize(y)
