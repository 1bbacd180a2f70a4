"""get_rows (issue 12 item 4, issue 13's op): rows of f32/f16/bf16/quantized tables picked
by int32 ids into f32, bitwise equal to dequantizing the selected rows; ggml's batch rule
in the graph; threads 1..3; ids out of range and other bad arguments."""
import numpy as np
import pytest

import ggml_cy
from ggml_cy import GGMLType as T
from ggml_cy.cpu import _quant_ops

from _quant_data import random_blocks, dequant_ref

pytest.importorskip("gguf")

QTYPES = [t for t in T if t.is_quantized and _quant_ops.get_rows_supported(int(t))]


def test_every_dequantizable_type():
    need = {T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K,
            T.IQ2_XXS, T.IQ2_XS, T.IQ2_S, T.IQ3_XXS, T.IQ3_S, T.IQ1_S, T.IQ1_M, T.IQ4_NL,
            T.IQ4_XS, T.TQ1_0, T.TQ2_0, T.MXFP4, T.NVFP4}
    assert need <= set(QTYPES)
    for t in (T.F32, T.F16, T.BF16):
        assert _quant_ops.get_rows_supported(int(t))


def _table(t, R, ne0, rng):
    """(table array as get_rows takes it, float32 rows as dequantized)."""
    if t == T.F32:
        a = rng.standard_normal((R, ne0)).astype(np.float32)
        return a, a
    if t == T.F16:
        a = rng.standard_normal((R, ne0)).astype(np.float16)
        return a, a.astype(np.float32)
    if t == T.BF16:
        a = ggml_cy.float32_to_bfloat16(rng.standard_normal((R, ne0)).astype(np.float32))
        return a, ggml_cy.bfloat16_to_float32(a)
    raw = random_blocks(t, R, ne0, rng)
    return raw, dequant_ref(raw, t, ne0)


ALL = [T.F32, T.F16, T.BF16] + QTYPES


def _bitwise(a, b):
    np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("t", ALL, ids=lambda t: t.name)
def test_eager(t, n_threads):
    rng = np.random.default_rng(int(t) + 7)
    R, ne0 = 11, 512
    table, rows = _table(t, R, ne0, rng)
    ids = rng.integers(0, R, size=(3, 5))
    ids[0, 0], ids[-1, -1] = 0, R - 1
    kw = {} if t in (T.F32, T.F16) else {"type": t}
    out = ggml_cy.get_rows(table, ids, n_threads=n_threads, **kw)
    assert out.shape == (3, 5, ne0) and out.dtype == np.float32
    _bitwise(out, np.ascontiguousarray(rows[ids]))


def _graph_get_rows(t, table_arr, ne0, R, ids, n_threads, batch=(1, 1)):
    ctx = ggml_cy.Context(64 << 20)
    a = ctx.new_tensor(t, (ne0, R) + tuple(batch))
    if t.is_quantized or t == T.BF16:
        a.raw()[...] = table_arr.view(np.uint8).reshape(a.raw().shape)
    else:
        a.numpy()[...] = table_arr.reshape(a.numpy().shape)
    b = ctx.new_tensor(T.I32, tuple(reversed(ids.shape)))
    b.numpy()[...] = ids
    r = ctx.get_rows(a, b)
    g = ctx.new_graph()
    g.build_forward_expand(r)
    g.compute(n_threads)
    return r.numpy().copy()


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("t", ALL, ids=lambda t: t.name)
def test_graph(t, n_threads):
    rng = np.random.default_rng(int(t) + 70)
    R, ne0 = 9, 256
    table, rows = _table(t, R, ne0, rng)
    ids = rng.integers(0, R, size=40).astype(np.int32)
    out = _graph_get_rows(t, table, ne0, R, ids, n_threads)
    assert out.shape == (40, ne0)
    _bitwise(out, np.ascontiguousarray(rows[ids]))


@pytest.mark.parametrize("t", [T.F32, T.Q4_K, T.Q8_0], ids=lambda t: t.name)
def test_graph_batches(t):
    # a [ne0, R, 2, 3] with ids [n, 2, 3]: dst[:, i, j, k] = a[:, ids[i, j, k], j, k]
    rng = np.random.default_rng(1)
    R, ne0, n = 5, 256, 4
    table, rows = _table(t, 6 * R, ne0, rng)
    ids = rng.integers(0, R, size=(3, 2, n)).astype(np.int32)     # numpy order: [k, j, i]
    out = _graph_get_rows(t, table, ne0, R, ids, 2, batch=(2, 3))
    rows = rows.reshape(3, 2, R, ne0)
    assert out.shape == (3, 2, n, ne0)
    for k in range(3):
        for j in range(2):
            _bitwise(out[k, j], np.ascontiguousarray(rows[k, j][ids[k, j]]))


def test_graph_bad_arguments():
    ctx = ggml_cy.Context(16 << 20)
    a = ctx.new_tensor(T.Q4_0, (64, 4))
    ids = ctx.new_tensor(T.I32, (3,))
    with pytest.raises(TypeError, match="i32"):
        ctx.get_rows(a, ctx.new_tensor(T.F32, (3,)))
    with pytest.raises(ValueError, match="ne\\[2\\]"):
        ctx.get_rows(a, ctx.new_tensor(T.I32, (3, 2)))
    with pytest.raises(TypeError, match="no kernel"):
        ctx.get_rows(ctx.new_tensor(T.I16, (4, 4)), ids)
    with pytest.raises(TypeError):
        ctx.get_rows(a, np.zeros(3, np.int32))
    # ids out of range: compute raises IndexError (no crash, no silent garbage)
    for bad in (4, -1, 2 ** 31 - 1):
        b = ctx.new_tensor(T.I32, (3,))
        b.numpy()[...] = [0, bad, 1]
        r = ctx.get_rows(a, b)
        g = ctx.new_graph()
        g.build_forward_expand(r)
        for n in (1, 2):
            with pytest.raises(IndexError, match="out of range"):
                g.compute(n)


class TestEagerBadInput:
    table = np.zeros((4, 32), np.float32)

    def test_out_of_range(self):
        for ids in ([4], [-1], [[0, 1], [2, 7]]):
            with pytest.raises(IndexError, match="out of range"):
                ggml_cy.get_rows(self.table, ids)

    def test_ids_type(self):
        with pytest.raises(TypeError, match="integers"):
            ggml_cy.get_rows(self.table, [0.5])
        with pytest.raises(TypeError, match="integers"):
            ggml_cy.get_rows(self.table, np.array(["a"]))

    def test_table_type(self):
        with pytest.raises(TypeError, match="type="):
            ggml_cy.get_rows(self.table.astype(np.float64), [0])
        with pytest.raises(TypeError, match="uint8"):
            ggml_cy.get_rows(self.table, [0], type="q4_0")
        with pytest.raises(ValueError, match="2-D"):
            ggml_cy.get_rows(self.table.reshape(-1), [0])
        with pytest.raises(ValueError, match="blocks"):
            ggml_cy.get_rows(np.zeros((2, 19), np.uint8), [0], type=T.Q4_0)
        with pytest.raises(ValueError, match="unknown"):
            ggml_cy.get_rows(np.zeros((2, 18), np.uint8), [0], type="nope")
        with pytest.raises(TypeError, match="no kernel"):
            ggml_cy.get_rows(np.zeros((2, 4), np.uint8), [0], type=T.I8)

    def test_empty_and_scalar_ids(self):
        assert ggml_cy.get_rows(self.table, np.zeros((0,), np.int64)).shape == (0, 32)
        assert ggml_cy.get_rows(self.table, 3).shape == (32,)

    def test_tensor_table(self):
        rng = np.random.default_rng(2)
        raw = random_blocks(T.Q6_K, 3, 256, rng)
        ctx = ggml_cy.Context(1 << 20)
        a = ctx.new_tensor(T.Q6_K, (256, 3))
        a.raw()[...] = raw
        _bitwise(ggml_cy.get_rows(a, [2, 0]), ggml_cy.get_rows(raw, [2, 0], type=T.Q6_K))
        f = ctx.new_tensor(T.F16, (8, 3))
        f.numpy()[...] = np.arange(24).reshape(3, 8)
        np.testing.assert_array_equal(ggml_cy.get_rows(f, [1]), [np.arange(8, 16)])
