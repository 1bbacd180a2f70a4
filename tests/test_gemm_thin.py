"""The packed path's thin tasks (ggml_cy/cpu/csrc/mul_mat_thin.h, issue 14): F32 / F16
weights against 24..64 rows of b (the last 32-row panel at most 8 rows short) on AVX-512
builds read a where it lies and put the rows of b in the vector lanes. The promise is the
packed path's bits: each row of b gives the same bits alone (the mat-vec path), inside a
batch the thin rule does not take (N = 130 on one thread: the packed tiles) and at every
thread count. Other dispatch levels and BF16 weights never take it; the same tests hold
there (the bits are the same by construction everywhere).

Shapes cross every edge of the thin loops: rows of a not a multiple of the 8-row group, the
2048-row M block, K blocks of 256 with tails (K = 1, 15, 255, 257, 600), panels 32 rows wide
with a short last panel (N = 24, 28, 56, 63), rows of a widened first (F16, strided F32),
b transposed (its elements not adjacent), batches with a broadcast a, and special values."""
import numpy as np
import pytest

import ggml_cy
from ggml_cy import GGMLType as T
from ggml_cy._config import config
from ggml_cy.cpu import _mul_mat
from ggml_cy.graph.context import Context

from _graph_helpers import assert_bitwise
from test_gemm_paths import _as_type, _check, _mm, _ref2d

TYPES = [T.F32, T.F16]
THIN_N = [24, 28, 32, 56, 63, 64]


def test_thin_rule_at_this_level():
    """The rule (24..64 rows, the last 32-row panel at most 8 short) on AVX-512 levels; no
    thin tasks below them or for BF16 weights. So the tests here run the thin tiles wherever
    the package runs its AVX-512 kernels."""
    cfg = config()
    level = cfg["dispatch_level"] or ""
    if level.startswith("avx512"):
        expect = True
    elif level == "avx2" or (level == "baseline" and "-march=x86-64-v2" in cfg["build_march"]):
        expect = False
    else:                       # a build for this CPU (-march=native: sanitizer builds)
        expect = None
    for t in TYPES:
        for n in THIN_N:
            if expect is not None:
                assert _mul_mat._thin_takes(int(t), n) == expect, (t, n, level)
        for n in (1, 4, 16, 23, 40, 48, 65, 80, 88, 96, 128, 130):
            assert not _mul_mat._thin_takes(int(t), n), (t, n)
    assert not _mul_mat._thin_takes(int(T.BF16), 64)


def _packed_rows(a, b, t):
    """The rows of b through the packed tiles: b padded to 130 rows (above the thin rule's
    64), one thread (a single task), the first len(b) rows of the result."""
    pad = np.zeros((130 - b.shape[0], b.shape[1]), np.float32)
    full, _ = _mm(a, np.concatenate([b, pad]), t, 1)
    return full[..., : b.shape[0], :]


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("n", THIN_N, ids=lambda n: f"N{n}")
@pytest.mark.parametrize("mk", [(75, 257), (8, 16), (13, 1), (300, 600), (41, 255)],
                         ids=lambda s: "M%dK%d" % s)
def test_thin_tasks_keep_the_packed_bits(mk, n, t):
    M, K = mk
    rng = np.random.default_rng(M * 1000 + K + n + int(t))
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((n, K)).astype(np.float32)
    got, aref = _mm(a, b, t, 2)
    _check(got, _ref2d(aref, b, t), K)
    assert_bitwise(got, _packed_rows(a, b, t))
    for r in (0, n - 1, n // 2):   # a row alone: the mat-vec path
        one, _ = _mm(a, b[r:r + 1], t, 1)
        assert_bitwise(one[0, 0], got[0, 0, r:r + 1])


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_thin_tasks_cross_the_m_block_and_every_thread_count(t):
    """M = 4100: a single task crosses the 2048-row M block; the grids at 2..16 threads cut
    M (and N) into tasks of their own, thin or not; the bits stay."""
    rng = np.random.default_rng(7 + int(t))
    M, K, n = 4100, 300, 64
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((n, K)).astype(np.float32)
    base, aref = _mm(a, b, t, 1)
    _check(base, _ref2d(aref, b, t), K)
    assert_bitwise(base, _packed_rows(a, b, t))
    for nt in (2, 3, 4, 8, 9, 16):
        got, _ = _mm(a, b, t, nt)
        assert_bitwise(got, base)


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("n", [32, 56], ids=lambda n: f"N{n}")
def test_thin_tasks_strided_operands(n, t):
    """a rows padded (F32 read where it lies but nb1 > K * 4; F16 widened) and b transposed
    (its elements n * 4 bytes apart: packed element by element). (a itself cannot be
    transposed: mul_mat asks for ctx.cont first, as ggml does.)"""
    rng = np.random.default_rng(n + int(t))
    K, M = 270, 45
    a_pad = rng.standard_normal((M, K + 6)).astype(np.float32)
    aref, araw = _as_type(a_pad, t)
    es = 4 if t == T.F32 else 2
    b = rng.standard_normal((n, K)).astype(np.float32)
    want = (b.astype(np.float64) @ aref[:, :K].T)[None, None]
    ctx = Context(32 << 20)
    ta = ctx.view_2d(ctx.tensor_from(araw), K, M, (K + 6) * es, 0)
    tb = ctx.transpose(ctx.tensor_from(np.ascontiguousarray(b.T)))   # elements n*4 apart
    r = ctx.mul_mat(ta, tb)
    ctx.new_graph().build_forward_expand(r).compute(2)
    got = r.numpy(4)
    _check(got, want, K)
    assert_bitwise(got, _packed_rows(a_pad[:, :K], b, t))


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_thin_tasks_batches_with_broadcast(t):
    """a of 2 matrices broadcast over 6 batches of b (ggml's block repetition)."""
    rng = np.random.default_rng(11 + int(t))
    K, M, n = 130, 70, 32
    a = rng.standard_normal((2, M, K)).astype(np.float32)
    b = rng.standard_normal((6, n, K)).astype(np.float32)
    aref, araw = _as_type(a, t)
    ctx = Context(32 << 20)
    r = ctx.mul_mat(ctx.tensor_from(araw), ctx.tensor_from(b))
    ctx.new_graph().build_forward_expand(r).compute(4)
    got = r.numpy(3)
    for i in range(6):
        want = b[i].astype(np.float64) @ aref[i // 3].T
        _check(got[i], want, K)
        assert_bitwise(got[i], _packed_rows(a[i // 3], b[i], t)[0, 0])


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_thin_tasks_special_values(t):
    """inf, -inf, NaN and signed zeros in both operands: the same bits as the packed tiles
    (the same FMAs in the same order)."""
    rng = np.random.default_rng(5 + int(t))
    K, M, n = 300, 40, 64
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((n, K)).astype(np.float32)
    a[3, 7], a[9, 100], a[20, 299] = np.inf, -np.inf, np.nan
    a[30] = -0.0
    b[5, 7], b[40, 0], b[63, 260] = np.nan, np.inf, -np.inf
    b[10] = -0.0
    got, _ = _mm(a, b, t, 2)
    assert_bitwise(got, _packed_rows(a, b, t))
    assert np.isnan(got[0, 0, 5]).all() and got[0, 0, 10, 30] == 0.0


def test_thin_tasks_eager():
    """ggml_cy.mul_mat (eager) with 32 and 64 rows: the graph's bits."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((300, 513)).astype(np.float32)
    for n in (32, 64):
        b = rng.standard_normal((n, 513)).astype(np.float32)
        got = ggml_cy.mul_mat(a, b, n_threads=2)
        g, _ = _mm(a, b, T.F32, 2)
        assert_bitwise(got, g[0, 0])
        assert_bitwise(got, _packed_rows(a, b, T.F32)[0, 0])
