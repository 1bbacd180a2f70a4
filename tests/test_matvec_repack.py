"""Row-interleaved weight copies for the graph's mat-vec path (ggml_cy.cpu._mul_mat.
repack_for_matvec, csrc/mul_mat.h mm_gemv_rp_*; the decode speed of issue 13): the results
are bitwise those of the plain mat-vec and of the packed GEMM (same FMA chain per output),
for f32/f16/bf16 weights, every M and K remainder, 1-4 columns, batched b and any thread
count; the copy is used only while it still describes its tensor; bad arguments raise.
BF16 (ggml's rule: b rounded to bf16, pairs dotted by VDPBF16PS where the CPU has it,
csrc/mul_mat_bf16.h): the copy holds the pairs as dwords and is read only by the VDPBF16PS
variant (repack_helps), with the same bits either way."""
import gc as _gc

import numpy as np
import pytest

from ggml_cy import GGMLType as T
from ggml_cy.cpu import _mul_mat
from ggml_cy.graph.context import Context

from _graph_helpers import assert_bitwise

TYPES = [T.F32, T.F16, T.BF16]


def _raw(x, t):
    if t == T.F32:
        return x.astype(np.float32)
    if t == T.F16:
        return x.astype(np.float16)
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _weights(ctx, w, t):
    if t == T.BF16:
        tens = ctx.new_tensor(T.BF16, tuple(reversed(w.shape)))
        tens.numpy(2)[...] = w
        return tens
    return ctx.tensor_from(w)


def _setup(M, K, N, t, batch=1, seed=0):
    rng = np.random.default_rng(seed)
    w = _raw(rng.standard_normal((M, K)), t)
    ctx = Context(8 * (M * K * 4 + N * K * 4 * batch + M * N * 4 * batch) + (16 << 20))
    a = _weights(ctx, w, t)
    xb = rng.standard_normal((batch, N, K)).astype(np.float32)
    b = ctx.tensor_from(xb if batch > 1 else xb[0])
    y = ctx.mul_mat(a, b)
    g = ctx.new_graph()
    g.build_forward_expand(y)
    return ctx, a, b, y, g


def _run(g, y, nt):
    g.compute(nt)
    return y.numpy(4).copy()


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("M,K", [(1, 1), (15, 7), (16, 16), (17, 255), (33, 256), (100, 300),
                                 (64, 777), (200, 40),
                                 (40, 1024), (33, 2048)])   # (mvf32) rows 4 KiB apart
@pytest.mark.parametrize("N", [1, 2, 3, 4])
def test_repacked_matvec_is_bitwise_the_plain_one(t, M, K, N):
    ctx, a, b, y, g = _setup(M, K, N, t, seed=M * 1000 + K + N)
    plain = {nt: _run(g, y, nt) for nt in (1, 3)}
    assert_bitwise(plain[1], plain[3])
    c = _mul_mat.repack_for_matvec(a)
    assert c.attached and c.nbytes >= M * K * (4 if t == T.F32 else 2)
    for nt in (1, 2, 3):
        assert_bitwise(_run(g, y, nt), plain[1])


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_repacked_matvec_matches_the_gemm_columns(t):
    """A column alone (repacked mat-vec) has the bits it has inside a batch of 9 (GEMM)."""
    M, K = 70, 300
    rng = np.random.default_rng(3)
    w = _raw(rng.standard_normal((M, K)), t)
    x = rng.standard_normal((9, K)).astype(np.float32)
    ctx = Context(64 << 20)
    a = _weights(ctx, w, t)
    keep = _mul_mat.repack_for_matvec(a, n_threads=2)
    full = ctx.mul_mat(a, ctx.tensor_from(x))
    one = ctx.mul_mat(a, ctx.tensor_from(x[4:5]))
    g = ctx.new_graph()
    g.build_forward_expand(full)
    g.build_forward_expand(one)
    g.compute(2)
    assert keep.attached
    assert_bitwise(one.numpy(2)[0], full.numpy(2)[4])


def test_repacked_matvec_with_batched_b():
    """a 2-D, b with two batches (the copy serves every batch)."""
    ctx, a, b, y, g = _setup(40, 50, 2, T.F16, batch=2)
    want = _run(g, y, 2)
    c = _mul_mat.repack_for_matvec(a)
    assert_bitwise(_run(g, y, 2), want)
    assert c.attached


def test_copy_is_ignored_by_views_and_dropped_copies_detach():
    ctx, a, b, y, g = _setup(48, 64, 1, T.F16)
    c = _mul_mat.repack_for_matvec(a)
    # a view of the first 20 rows (its own header, same data pointer): the plain path
    v = ctx.view_2d(a, 64, 20, a.nb[1], 0)
    yv = ctx.mul_mat(v, b)
    gv = ctx.new_graph()
    gv.build_forward_expand(yv)
    gv.compute(1)
    full = _run(g, y, 1)
    assert_bitwise(yv.numpy(2)[0], full[0, 0, 0, :20])
    # detach / drop: the tensor reads its own memory again, with the same bits
    c.detach()
    assert not c.attached
    assert_bitwise(_run(g, y, 1), full)
    c2 = _mul_mat.repack_for_matvec(a)
    assert c2.attached
    del c2
    _gc.collect()
    assert_bitwise(_run(g, y, 2), full)


def test_copy_is_a_snapshot_until_repacked():
    ctx, a, b, y, g = _setup(32, 48, 1, T.F32)
    before = _run(g, y, 1)
    c = _mul_mat.repack_for_matvec(a)
    a.numpy(2)[...] *= 2          # new values: the copy still holds the old ones
    assert_bitwise(_run(g, y, 1), before)
    c = _mul_mat.repack_for_matvec(a)   # a fresh copy replaces the old one
    assert c.attached
    c.detach()
    want = _run(g, y, 1)
    c = _mul_mat.repack_for_matvec(a)
    assert_bitwise(_run(g, y, 1), want)
    np.testing.assert_allclose(want, 2 * before, rtol=1e-6)


def test_repack_bad_arguments():
    ctx = Context(16 << 20)
    with pytest.raises(TypeError):
        _mul_mat.repack_for_matvec(np.zeros((4, 4), np.float32))
    with pytest.raises(TypeError):
        _mul_mat.repack_for_matvec(None)
    with pytest.raises(TypeError, match="F32, F16, BF16, Q4_0 or Q8_0"):
        _mul_mat.repack_for_matvec(ctx.new_tensor_2d(T.I32, 4, 4))
    with pytest.raises(TypeError, match="F32, F16, BF16, Q4_0 or Q8_0"):
        _mul_mat.repack_for_matvec(ctx.new_tensor_2d(T.Q4_K, 256, 4))
    with pytest.raises(ValueError, match="2-D"):
        _mul_mat.repack_for_matvec(ctx.new_tensor_3d(T.F32, 4, 4, 2))
    t = ctx.new_tensor_2d(T.F32, 8, 4)
    with pytest.raises(ValueError, match="2-D"):
        _mul_mat.repack_for_matvec(ctx.transpose(t))     # elements not adjacent
    with pytest.raises(ValueError, match="n_threads"):
        _mul_mat.repack_for_matvec(t, n_threads=0)
    ctx.reset()
    with pytest.raises(RuntimeError):
        _mul_mat.repack_for_matvec(t)                    # its header is gone
    empty = Context(1 << 20, no_alloc=True).new_tensor_2d(T.F32, 8, 4)
    with pytest.raises(ValueError, match="no data"):
        _mul_mat.repack_for_matvec(empty)


def test_bf16_plain_matvec_is_the_gemm_column():
    """BF16 without a copy: the mat-vec of one column (and of 3) has the bits those columns
    get inside a batch of 9 (the packed path), at 1 and 3 threads, odd K included."""
    ctx = Context(16 << 20)
    rng = np.random.default_rng(5)
    for M, K in [(70, 300), (33, 257), (17, 1)]:
        w = _raw(rng.standard_normal((M, K)), T.BF16)
        x = rng.standard_normal((9, K)).astype(np.float32)
        a = _weights(ctx, w, T.BF16)
        full = ctx.mul_mat(a, ctx.tensor_from(x))
        one = ctx.mul_mat(a, ctx.tensor_from(x[4:5]))
        three = ctx.mul_mat(a, ctx.tensor_from(x[2:5]))
        g = ctx.new_graph()
        for y in (full, one, three):
            g.build_forward_expand(y)
        for nt in (1, 3):
            g.compute(nt)
            assert_bitwise(one.numpy(2)[0], full.numpy(2)[4])
            assert_bitwise(three.numpy(2), full.numpy(2)[2:5])


def test_copy_after_context_reset_is_inert():
    ctx, a, b, y, g = _setup(16, 32, 1, T.F16)
    c = _mul_mat.repack_for_matvec(a)
    ctx.reset()
    assert not c.attached          # the new tensors in that memory start with no copy
    t = ctx.new_tensor_2d(T.F16, 32, 16)
    t.numpy(2)[...] = 1
    x = ctx.tensor_from(np.ones(32, np.float32))
    r = ctx.mul_mat(t, x)
    ctx.new_graph().build_forward_expand(r).compute(1)
    assert np.all(r.numpy(1) == 32)
    del c
    _gc.collect()


# ------------------------------------------------------------------ Q4_0 / Q8_0 copies
QTYPES = [T.Q4_0, T.Q8_0]


def _q_setup(t, M, K, N, seed, batch=1):
    from _quant_data import random_blocks
    rng = np.random.default_rng(seed)
    raw = random_blocks(t, M, K, rng)
    ctx = Context(32 << 20)
    a = ctx.new_tensor(t, (K, M))
    a.raw()[...] = raw.reshape(a.raw().shape)
    xb = rng.standard_normal((batch, N, K)).astype(np.float32)
    b = ctx.tensor_from(xb if batch > 1 else xb[0])
    y = ctx.mul_mat(a, b)
    g = ctx.new_graph()
    g.build_forward_expand(y)
    return ctx, a, y, g


@pytest.mark.parametrize("t", QTYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("M", [1, 16, 17, 40, 100])
@pytest.mark.parametrize("K", [256, 768])
@pytest.mark.parametrize("N", [1, 3, 9])
def test_quant_copy_is_bitwise_the_row_dots(t, M, K, N):
    ctx, a, y, g = _q_setup(t, M, K, N, seed=M * 7 + K + N)
    want = _run(g, y, 1)
    assert_bitwise(_run(g, y, 3), want)
    c = _mul_mat.repack_for_matvec(a, n_threads=2)
    assert c.attached and c.nbytes == -(-M // 16) * 16 * (K // 32) * t.type_size
    for nt in (1, 2, 3):
        assert_bitwise(_run(g, y, nt), want)


@pytest.mark.parametrize("t", QTYPES, ids=lambda t: t.name)
def test_quant_copy_with_batched_b(t):
    ctx, a, y, g = _q_setup(t, 33, 512, 2, seed=9, batch=3)
    want = _run(g, y, 2)
    c = _mul_mat.repack_for_matvec(a)
    assert_bitwise(_run(g, y, 2), want)
    assert c.attached


def test_quant_extremes_bitwise():
    """Q8_0 quants of -128 (|x| = 128 unsigned) and all-zero / huge scales."""
    M, K = 20, 256
    for t in QTYPES:
        ctx, a, y, g = _q_setup(t, M, K, 2, seed=3)
        raw = a.raw()
        blocks = raw.reshape(-1, t.type_size)
        blocks[::3, 2:] = 0x80                       # Q8_0: -128; Q4_0: nibbles 0 and 8
        blocks[1::5, 0:2] = np.array([0x7BFF], np.uint16).view(np.uint8)   # 65504
        blocks[2::7, 0:2] = 0
        want = _run(g, y, 1)
        c = _mul_mat.repack_for_matvec(a)
        assert_bitwise(_run(g, y, 2), want)
        del c


def test_quant_copy_needs_whole_groups_of_256():
    ctx = Context(4 << 20)
    for t in QTYPES:
        with pytest.raises(ValueError, match="multiple of 256"):
            _mul_mat.repack_for_matvec(ctx.new_tensor(t, (96, 4)))
    assert _mul_mat.repack_helps(int(T.F16)) and not _mul_mat.repack_helps(int(T.Q4_K))
    assert _mul_mat.repack_helps(int(T.Q4_0)) == _mul_mat.Q4_0_RP_BUILT
    assert _mul_mat.repack_helps(int(T.Q8_0)) == _mul_mat.Q4_0_RP_BUILT
