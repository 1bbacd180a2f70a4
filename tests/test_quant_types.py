"""Quantized types (issue 12 item 1): ggml's numbers, block sizes and bytes per block,
blck_size/type_size/row_size, the C block structs, and quantized tensors in a Context
(creation, views by rows, reshape/permute rules, raw bytes)."""
import numpy as np
import pytest

import ggml_cy
from ggml_cy import Context, GGMLType
from ggml_cy.core import _core

gguf = pytest.importorskip("gguf")
GQT = gguf.GGMLQuantizationType

QUANTIZED = [t for t in GGMLType if t.is_quantized]
# ggml's numbers (ggml.h enum ggml_type); Q2_0 is in ggml, not (yet) in gguf-py 0.19
GGML_QUANT_NUMBERS = {
    "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q8_1": 9, "Q2_K": 10, "Q3_K": 11,
    "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "Q8_K": 15, "IQ2_XXS": 16, "IQ2_XS": 17,
    "IQ3_XXS": 18, "IQ1_S": 19, "IQ4_NL": 20, "IQ3_S": 21, "IQ2_S": 22, "IQ4_XS": 23,
    "IQ1_M": 29, "TQ1_0": 34, "TQ2_0": 35, "MXFP4": 39, "NVFP4": 40, "Q1_0": 41, "Q2_0": 42}


def test_numbers_follow_ggml():
    assert {t.name: int(t) for t in QUANTIZED} == GGML_QUANT_NUMBERS


@pytest.mark.parametrize("t", QUANTIZED, ids=str)
def test_sizes_match_gguf_py(t):
    if t.name not in GQT.__members__:
        pytest.skip(f"gguf-py {gguf.__name__} has no {t.name}")
    g = GQT[t.name]
    assert int(g) == int(t)
    bs, ts = gguf.GGML_QUANT_SIZES[g]
    if t == GGMLType.Q8_1:
        # gguf-py still lists the old block_q8_1 (float d, float s: 40 bytes); ggml's
        # ggml-common.h has two halves (36 bytes), which is what ggml writes and reads
        assert (bs, ts) == (32, 40)
        bs, ts = 32, 36
    assert (t.blck_size, t.type_size, t.size) == (bs, ts, ts)
    assert ggml_cy.blck_size(t) == bs and ggml_cy.type_size(t) == ts
    assert ggml_cy.row_size(t, 4 * bs) == 4 * ts
    assert ggml_cy.row_size(t, 0) == 0


@pytest.mark.parametrize("t", QUANTIZED, ids=str)
def test_c_block_struct_sizes(t):
    # quant_blocks.h's structs are compiled into the core: their sizeof must be the bytes
    # per block (the header also asserts this at compile time)
    assert _core._block_struct_size(t) == t.type_size


def test_q2_0_and_plain_sizes():
    assert (GGMLType.Q2_0.blck_size, GGMLType.Q2_0.type_size) == (64, 18)
    assert (GGMLType.Q1_0.blck_size, GGMLType.Q1_0.type_size) == (128, 18)
    assert ggml_cy.blck_size("f32") == 1 and ggml_cy.type_size(np.float16) == 2
    assert ggml_cy.row_size(GGMLType.F32, 10) == 40
    assert ggml_cy.row_size("q4_K", 512) == 288 and ggml_cy.row_size(8, 64) == 68
    assert str(GGMLType.Q4_K) == "q4_K" and GGMLType.Q4_K.is_quantized
    assert not GGMLType.F32.is_quantized


def test_bad_input():
    with pytest.raises(ValueError, match="multiple of 32"):
        ggml_cy.row_size(GGMLType.Q4_0, 33)
    with pytest.raises(ValueError, match=">= 0"):
        ggml_cy.row_size(GGMLType.Q4_0, -32)
    with pytest.raises(TypeError):
        ggml_cy.row_size(GGMLType.Q4_0, 32.0)
    with pytest.raises(TypeError):
        ggml_cy.row_size(GGMLType.Q4_0, True)
    with pytest.raises(ValueError, match="unknown ggml type"):
        ggml_cy.blck_size(4)            # retired Q4_2
    with pytest.raises(ValueError, match="unknown ggml type"):
        ggml_cy.type_size(31)
    with pytest.raises(TypeError):
        ggml_cy.type_size(None)
    with pytest.raises(TypeError):
        ggml_cy.blck_size(object())
    with pytest.raises(OverflowError):
        ggml_cy.row_size(GGMLType.F64, 2 ** 62)
    with pytest.raises(TypeError, match="quantized"):
        GGMLType.Q4_0.numpy_dtype


@pytest.mark.parametrize("t", QUANTIZED, ids=str)
def test_new_tensor_strides(t):
    ctx = Context(1 << 20)
    bs, ts = t.blck_size, t.type_size
    a = ctx.new_tensor(t, (2 * bs, 3, 2))
    assert a.type is t
    assert a.nb == (ts, 2 * ts, 6 * ts, 12 * ts)
    assert a.nbytes == 12 * ts and a.is_contiguous
    assert a.nelements == 12 * bs and a.nrows == 6
    with pytest.raises(ValueError, match="multiple of its block size"):
        ctx.new_tensor(t, (bs + 1, 2))
    with pytest.raises(ValueError, match="multiple of its block size"):
        ctx.new_tensor_1d(t, bs // 2)
    e = ctx.new_tensor(t, (0, 3))
    assert e.nbytes == 0


# ---------------------------------------------------------------- graph copies
def _dq(raw, t, shape):
    import warnings
    from gguf import quants as gq
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return gq.dequantize(raw, GQT[t.name]).reshape(shape)


def _compute(ctx, *outs, n_threads=2):
    g = ctx.new_graph()
    for o in outs:
        g.build_forward_expand(o)
    g.compute(n_threads)


def _bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(
        a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("t", [GGMLType.Q4_0, GGMLType.Q8_0, GGMLType.Q4_K, GGMLType.Q6_K,
                               GGMLType.IQ4_XS, GGMLType.IQ2_XXS, GGMLType.MXFP4], ids=str)
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_graph_cpy_dequantizes(t, n_threads):
    rng = np.random.default_rng(int(t) + 50 * n_threads)
    rows, nblk = 40, 3
    raw = rng.integers(0, 256, (rows, nblk * t.type_size), dtype=np.uint8)
    want = _dq(raw, t, (rows, nblk * t.blck_size))
    ctx = Context(1 << 22)
    q = ctx.tensor_from(raw, type=t)
    f32 = ctx.new_tensor("f32", (nblk * t.blck_size, rows))
    f16 = ctx.new_tensor("f16", (nblk * t.blck_size * rows,))          # another shape
    bf = ctx.new_tensor("bf16", (nblk * t.blck_size, rows))
    outs = [ctx.cpy(q, f32), ctx.cpy(q, f16), ctx.cpy(q, bf)]
    d, c = ctx.dup(q), ctx.cont(q)
    _compute(ctx, *outs, d, c, n_threads=n_threads)
    assert _bits(f32.numpy(), want)
    with np.errstate(all="ignore"):
        assert _bits(f16.numpy(), want.reshape(-1).astype(np.float16))
    assert _bits(bf.numpy(), ggml_cy.float32_to_bfloat16(want))
    assert d.type is t and c.type is t
    assert _bits(d.raw(), raw) and _bits(c.raw(), raw)
    assert _bits(outs[0].numpy(), want)             # cpy returns a view of b


def test_graph_copies_of_views():
    t = GGMLType.Q4_K
    rng = np.random.default_rng(5)
    raw = rng.integers(0, 256, (6, 4 * t.type_size), dtype=np.uint8)
    want = _dq(raw, t, (6, 1024))
    ctx = Context(1 << 22)
    q = ctx.tensor_from(raw, type=t)
    # every other row, blocks 1..2 of each: padded rows, offset into the row
    v = ctx.view_2d(q, 512, 3, 2 * q.nb[1], offset=t.type_size)
    c = ctx.cont(v)
    f = ctx.new_tensor("f32", (512, 3))
    o = ctx.cpy(v, f)
    # a destination with padded rows: a view of a wider f32 tensor
    wide = ctx.new_tensor("f32", (600, 3))
    wv = ctx.view_2d(wide, 512, 3, wide.nb[1], offset=0)
    o2 = ctx.cpy(v, wv)
    # rows permuted (dims 1 and 2 swapped): still whole rows
    q3 = ctx.reshape(q, (1024, 2, 3))
    p = ctx.permute(q3, 0, 2, 1, 3)
    pc = ctx.cont(p)
    pf = ctx.new_tensor("f32", (1024, 3, 2))
    po = ctx.cpy(p, pf)
    _compute(ctx, c, o, o2, pc, po, n_threads=3)
    assert c.is_contiguous and _bits(c.raw(), raw[::2, t.type_size:3 * t.type_size])
    assert _bits(f.numpy(), want[::2, 256:768])
    assert _bits(wide.numpy()[:, :512], want[::2, 256:768])
    w3 = want.reshape(3, 2, 1024).transpose(1, 0, 2)
    assert _bits(pf.numpy(), np.ascontiguousarray(w3))
    assert _bits(pc.numpy(), np.ascontiguousarray(w3))


def test_graph_copies_refused():
    ctx = Context(1 << 22)
    q = ctx.tensor_from(np.zeros((4, 34), np.uint8), type="q8_0")
    with pytest.raises(TypeError, match="copies into"):
        ctx.cpy(q, ctx.new_tensor("i32", (32, 4)))
    with pytest.raises(TypeError, match="copies into"):
        ctx.cpy(q, ctx.new_tensor("q4_0", (32, 4)))
    with pytest.raises(ValueError, match="element counts"):
        ctx.cpy(q, ctx.new_tensor("f32", (32, 3)))
    # a transposed f32 destination: not row-wise, refused when the graph is planned
    f = ctx.new_tensor("f32", (4, 32))
    o = ctx.cpy(q, ctx.transpose(f))
    g = ctx.new_graph()
    g.build_forward_expand(o)
    with pytest.raises(TypeError, match="copies a q8_0 tensor"):
        g.compute(1)
    # other ops with quantized operands: a clear TypeError at build time
    for build in (lambda: ctx.add(q, q), lambda: ctx.scale(q, 2.0), lambda: ctx.sum(q),
                  lambda: ctx.add(ctx.new_tensor("f32", (32, 4)), q)):
        with pytest.raises(TypeError):
            build()


# ---------------------------------------------------------------- the rest of the API
def test_protocols_and_backends():
    from ggml_cy import backend as B
    rng = np.random.default_rng(9)
    raw = rng.integers(0, 256, (3, 2 * 34), dtype=np.uint8)
    want = _dq(raw, GGMLType.Q8_0, (3, 64))
    ctx = Context(1 << 20)
    q = ctx.tensor_from(raw, type="q8_0")
    # no buffer protocol (numpy() is a dequantized copy); raw() is the memory
    with pytest.raises(BufferError, match="raw"):
        memoryview(q)
    mv = memoryview(q.raw())
    assert mv.tobytes() == raw.tobytes() and not mv.readonly
    assert _bits(np.asarray(q), want)
    with pytest.raises(BufferError, match="DLPack"):
        np.from_dlpack(q)
    with pytest.raises(TypeError, match="no numpy storage dtype"):
        q.dtype
    with pytest.raises(TypeError, match="out="):
        np.add(want, 1.0, out=q)
    # numpy ufuncs and eager functions see the values
    with np.errstate(all="ignore"):
        assert _bits(np.negative(q), -want)
        assert _bits(ggml_cy.add(q, q), want + want)
    # backend buffers: tensor_set / tensor_get move the blocks
    bctx = Context(1 << 16, no_alloc=True)
    t = bctx.new_tensor("q8_0", (64, 3), name="w")
    buf = B.alloc_ctx_tensors(bctx, B.cpu_init(1))
    assert buf is not None
    B.tensor_set(t, raw)
    got = B.tensor_get(t)
    assert got.dtype == np.uint8 and _bits(got, raw)
    assert _bits(t.numpy(), want)
    B.tensor_set(t, raw[1].tobytes(), offset=68)
    assert _bits(B.tensor_get(t, 68, 68), raw[1])
    with pytest.raises(TypeError, match="uint8"):
        B.tensor_set(t, want)
    # a strided view (rows 0 and 2) moves whole, as blocks in logical order
    v = q.view_2d(64, 2, 2 * q.nb[1], 0)
    assert _bits(B.tensor_get(v), raw[::2])
    B.tensor_set(v, raw[::-2].copy())
    assert _bits(q.raw()[::2], raw[::-2]) and _bits(q.raw()[1], raw[1])
    with pytest.raises(ValueError):
        B.tensor_set(t, np.zeros(300, np.uint8))


# ---------------------------------------------------------------- the committed tables
def test_quant_tables_header_matches_gguf_py():
    """ggml_cy/core/csrc/quant_tables.h (generated from ggml's ggml-common.h) holds the
    grids, sign table and value tables that gguf-py publishes."""
    import pathlib
    import re
    from gguf import quants as gq
    path = pathlib.Path(ggml_cy.__file__).resolve().parent / "core/csrc/quant_tables.h"
    if not path.exists():
        pytest.skip("no installed headers")
    text = path.read_text()
    tables = {}
    for ctype, name, body in re.findall(
            r"GGML_CY_QTABLE_QUAL (\w+) (\w+)\[\w+\] = \{(.*?)\};", text, re.S):
        vals = [int(v.rstrip("ULL"), 0) for v in re.findall(r"-?(?:0x[0-9a-fA-F]+(?:ULL)?|\d+)", body)]
        tables[name] = (ctype, vals)
    for cls, name, width, signed in [(gq.IQ2_XXS, "iq2xxs_grid", 8, False),
                                     (gq.IQ2_XS, "iq2xs_grid", 8, False),
                                     (gq.IQ2_S, "iq2s_grid", 8, False),
                                     (gq.IQ3_XXS, "iq3xxs_grid", 4, False),
                                     (gq.IQ3_S, "iq3s_grid", 4, False),
                                     (gq.IQ1_S, "iq1s_grid", 8, True)]:
        cls.init_grid()
        ref = np.asarray(cls.grid).reshape(cls.grid_shape)
        vals = tables[name][1]
        mine = np.array([[(v >> (8 * i)) & 0xFF for i in range(width)] for v in vals], np.uint8)
        if signed:
            mine = mine.view(np.int8)
        assert np.array_equal(mine.astype(np.float32), ref), name
    assert bytes(tables["ksigns_iq2xs"][1]) == gq.IQ2_XXS.ksigns
    assert tuple(tables["kvalues_iq4nl"][1]) == tuple(gq.IQ4_NL.kvalues)
    assert tuple(tables["kvalues_fp4"][1]) == tuple(gq.MXFP4.kvalues)
    assert tables["kmask_iq2xs"][1] == [1 << i for i in range(8)]
    # ksigns64: each byte 0xff where ksigns_iq2xs has the bit set
    for k, s in zip(tables["ksigns64"][1], tables["ksigns_iq2xs"][1]):
        assert all(((k >> (8 * j)) & 0xFF) == (0xFF if (s >> j) & 1 else 0) for j in range(8))
