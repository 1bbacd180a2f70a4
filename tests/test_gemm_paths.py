"""The float mul_mat kernel's paths (ggml_cy/cpu/csrc/mul_mat.h, issue 14 item 3) against
float64 numpy: the mat-vec path (N <= 4 rows of b, operands adjacent along K), the packed
path across every blocking edge (K blocks of 256, M blocks of 512 / 256, N blocks of 192 /
72, register tiles of 8x32 / 6x16, the 16x16 transposing packs), f32 / f16 / bf16 weights,
strided and transposed operands (which leave the mat-vec path), GQA broadcast, and the
promise that the bits do not depend on the thread count.

BF16 weights follow ggml's rule (its vec-dot partner type for BF16 is BF16): b is rounded
to bf16 (round to nearest even, NaN made quiet), so the reference uses that b (_bv); the
products of two bf16 values are exact in f32 (VDPBF16PS where the CPU has AVX512_BF16,
f32 FMAs elsewhere).

Tolerance: every product is computed in f32 from exactly widened weights (and, for BF16,
the rounded b), so the error is f32 summation rounding only: |got - ref| <= 1e-5 * sqrt(K)
* (1 + |ref|) elementwise, and NMSE (test-backend-ops' measure) well below ggml's 5e-4 for
mul_mat."""
import numpy as np
import pytest

from ggml_cy import GGMLType as T
from ggml_cy.graph.context import Context

from _graph_helpers import assert_bitwise

TYPES = [T.F32, T.F16, T.BF16]


def _as_type(x, t):
    """(values as float64 that type t stores for x, the array to put in the tensor)."""
    if t == T.F32:
        return x.astype(np.float64), x.astype(np.float32)
    if t == T.F16:
        h = x.astype(np.float16)
        return h.astype(np.float64), h
    bits = (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64), bits


def _bf16_round(x):
    """ggml's fp32 -> bf16 (round to nearest even; NaN kept NaN, made quiet), as float32."""
    n = np.asarray(x, np.float32).view(np.uint32)
    n = np.where((n & 0x7FFFFFFF) > 0x7F800000, (n & 0xFFFF0000) | 0x00400000, n)
    n = n.astype(np.uint64)
    r = (((n + 0x7FFF + ((n >> 16) & 1)) >> 16) << 16).astype(np.uint32)
    return r.view(np.float32)


def _bv(b, t):
    """b as float64 the way mul_mat uses it against weights of type t (rounded for BF16)."""
    b = np.asarray(b, np.float32)
    return (_bf16_round(b) if t == T.BF16 else b).astype(np.float64)


def _put(ctx, arr, t):
    if t == T.BF16:
        ne = tuple(reversed(arr.shape))
        tens = ctx.new_tensor(T.BF16, ne)
        tens.numpy(arr.ndim)[...] = arr
        return tens
    return ctx.tensor_from(arr)


def _mm(a, b, t, n_threads, a_view=None, b_view=None):
    """mul_mat of a (…, M, K) as type t and b (…, N, K) f32; returns (got, want)."""
    aref, araw = _as_type(a, t)
    ctx = Context(4 * (a.nbytes + b.nbytes) + 4 * b.shape[-2] * a.shape[-2] * 8 + (16 << 20))
    ta = _put(ctx, araw, t)
    tb = ctx.tensor_from(b.astype(np.float32))
    if a_view:
        ta = a_view(ctx, ta)
    if b_view:
        tb = b_view(ctx, tb)
    r = ctx.mul_mat(ta, tb)
    ctx.new_graph().build_forward_expand(r).compute(n_threads)
    return r.numpy(4), aref


def _check(got, want, k):
    err = np.abs(got - want)
    assert np.all(err <= 1e-5 * np.sqrt(max(k, 1)) * (1.0 + np.abs(want))), float(err.max())
    d = float(np.sum(want * want)) or 1.0
    assert float(np.sum((got - want) ** 2)) / d < 1e-9


def _ref2d(aref, b, t):
    return (_bv(b, t) @ aref.T)[None, None]


# (M, N, K): mat-vec N = 1..4 with K below, at and past a vector, odd M; packed shapes
# crossing the K block (256), the M block (512 / 256), the N block (192 / 72) and
# every tile remainder, including M % 32 in (0, 16] (the half-empty a panel)
GEMV = [(1, 1, 1), (5, 1, 15), (7, 2, 16), (33, 3, 17), (64, 4, 100), (130, 1, 513),
        (9, 4, 31)]
PACKED = [(600, 5, 300), (40, 200, 260), (520, 70, 33), (17, 9, 15), (48, 17, 64),
          (300, 150, 513), (8, 193, 40), (257, 8, 255)]


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("mnk", GEMV + PACKED, ids=lambda s: "M%dN%dK%d" % s)
def test_mul_mat_paths(mnk, t):
    M, N, K = mnk
    rng = np.random.default_rng(M * 7 + N * 3 + K)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((N, K)).astype(np.float32)
    got, aref = _mm(a, b, t, 3)
    _check(got, _ref2d(aref, b, t), K)


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("mnk", [(37, 1, 70), (64, 3, 48), (300, 20, 270), (90, 200, 40)],
                         ids=lambda s: "M%dN%dK%d" % s)
def test_mul_mat_same_bits_every_thread_count(mnk, t):
    M, N, K = mnk
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((N, K)).astype(np.float32)
    got1, aref = _mm(a, b, t, 1)
    _check(got1, _ref2d(aref, b, t), K)
    for nt in (2, 3, 5, 8, 16):
        assert_bitwise(_mm(a, b, t, nt)[0], got1)


@pytest.mark.parametrize("mnk", [(600, 5, 300), (520, 70, 33), (257, 8, 255), (33, 200, 513),
                                 (48, 17, 1), (16, 9, 2), (100, 4, 777), (31, 1, 3)],
                         ids=lambda s: "M%dN%dK%d" % s)
def test_bf16_blocking_edges(mnk):
    """BF16 pair kernels: odd K (a zero-padded last pair), K across the 256 block and the
    32-element transposes, every tile remainder; a row alone has its bits in the batch."""
    M, N, K = mnk
    rng = np.random.default_rng(M * 5 + N + K)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((N, K)).astype(np.float32)
    got, aref = _mm(a, b, T.BF16, 3)
    _check(got, _ref2d(aref, b, T.BF16), K)
    assert_bitwise(_mm(a, b, T.BF16, 1)[0], got)
    for n in (0, N - 1):
        assert_bitwise(_mm(a, b[n:n + 1], T.BF16, 2)[0][0, 0], got[0, 0, n:n + 1])


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("n", [1, 3, 40], ids=lambda n: f"N{n}")
def test_mul_mat_strided_operands_leave_fast_paths(n, t):
    """a rows padded (nb1 > K * es), b transposed (nb0 != 4): the general packs."""
    rng = np.random.default_rng(n + int(t))
    K, M = 70, 45
    a_pad = rng.standard_normal((M, K + 6)).astype(np.float32)
    bt = rng.standard_normal((K, n)).astype(np.float32)
    aref, araw = _as_type(a_pad, t)
    ctx = Context(16 << 20)
    ta_pad = _put(ctx, araw, t)
    es = 4 if t == T.F32 else 2
    ta = ctx.view_2d(ta_pad, K, M, (K + 6) * es, 0)
    tb = ctx.transpose(ctx.tensor_from(bt))          # ne [K, n], elements n*4 apart
    r = ctx.mul_mat(ta, tb)
    ctx.new_graph().build_forward_expand(r).compute(2)
    _check(r.numpy(4), (_bv(bt.T, t) @ aref[:, :K].T)[None, None], K)
    # the same a as a column slice of a wider matrix, b contiguous: mat-vec / packed fast
    # paths read rows nb1 apart
    b2 = np.ascontiguousarray(bt.T)
    tb2 = ctx.tensor_from(b2)
    r2 = ctx.mul_mat(ta, tb2)
    ctx.new_graph().build_forward_expand(r2).compute(3)
    _check(r2.numpy(4), (_bv(b2, t) @ aref[:, :K].T)[None, None], K)


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("n", [1, 2, 33], ids=lambda n: f"N{n}")
def test_mul_mat_gqa_broadcast(n, t):
    """a [K, M, 2, 3] against b [K, n, 8, 6] (r2 = 4, r3 = 2), both paths."""
    rng = np.random.default_rng(n * 11 + int(t))
    K, M = 40, 19
    a = rng.standard_normal((3, 2, M, K)).astype(np.float32)
    b = rng.standard_normal((6, 8, n, K)).astype(np.float32)
    got, aref = _mm(a, b, t, 4)
    aw = np.repeat(np.repeat(aref, 4, axis=1), 2, axis=0)
    _check(got, _bv(b, t) @ np.swapaxes(aw, -1, -2), K)


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_mul_mat_special_values(t):
    """inf and NaN in a (and, for BF16, in b: rounded, a NaN stays NaN, a value past bf16's
    largest finite one becomes inf) reach exactly the outputs whose dot products see them."""
    rng = np.random.default_rng(5)
    for n in (1, 4, 20):
        a = rng.standard_normal((40, 51)).astype(np.float32)
        a[3, 7] = np.inf
        a[10, 0] = np.nan
        a[20, 50] = -np.inf                       # the last, odd element: a lone pair half
        b = np.abs(rng.standard_normal((n, 51)).astype(np.float32)) + 0.5
        if t == T.BF16:
            b[0, 9] = np.nan
            b[n - 1, 50] = -np.inf
            if n > 1:
                b[1, 30] = np.float32(3.3999e38)   # rounds past bf16's max: inf
        got, aref = _mm(a, b, t, 2)
        with np.errstate(invalid="ignore", over="ignore"):
            want = _ref2d(aref, b, t)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
        np.testing.assert_array_equal(np.signbit(got[np.isinf(got)]),
                                      np.signbit(want[np.isinf(want)]))
        fin = np.isfinite(want)
        _check(got[fin], want[fin], 51)


@pytest.mark.parametrize("n", [1, 3, 40], ids=lambda n: f"N{n}")
@pytest.mark.parametrize("k", [1, 7, 255, 256, 257, 600], ids=lambda k: f"K{k}")
def test_bf16_rounds_b_as_ggml(n, k):
    """BF16 weights: b is rounded to bf16 to nearest even before the products (ggml's rule).
    a = 1 and b = 1 + 2^-8 (a tie between 1 and 1 + 2^-7: the even 1) or 1 + 2^-10 give
    exactly K; b = 1 + 3 * 2^-8 (a tie between 1 + 2^-7 and 1 + 2^-6: the even 1 + 2^-6)
    gives K * (1 + 2^-6); an f32 sum of the unrounded b would differ in each case."""
    M = 37
    a = np.ones((M, k), np.float32)
    for bval, per in ((1 + 2.0 ** -8, 1.0), (1 + 2.0 ** -10, 1.0),
                      (1 + 3 * 2.0 ** -8, 1 + 2.0 ** -6)):
        b = np.full((n, k), bval, np.float32)
        got, _ = _mm(a, b, T.BF16, 2)
        np.testing.assert_array_equal(got, np.float32(k * per))
        eager = ggml_cy.mul_mat(_as_type(a, T.BF16)[1], b, "bf16", n_threads=2)
        np.testing.assert_array_equal(eager, np.float32(k * per))


def test_bf16_round_helper_is_ggml():
    """The test's rounding agrees with ggml_cy's own f32 -> bf16 conversion (quantize)."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(4096) * 10.0 ** rng.integers(-40, 39, 4096)).astype(np.float32)
    x[:6] = [np.nan, -np.nan, np.inf, -np.inf, 3.3999e38, 1e-45]
    want = ggml_cy.quantize(x, T.BF16).view(np.uint16)
    got = (_bf16_round(x).view(np.uint32) >> 16).astype(np.uint16)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("k", [7, 16, 300, 777], ids=lambda k: f"K{k}")
@pytest.mark.parametrize("n", [37, 221], ids=lambda n: f"N{n}")
def test_mul_mat_rows_do_not_depend_on_n(k, t, n):
    """A row of b gives the same bits alone (the mat-vec path), in a group of 3 and inside a
    batch of 37 (the thin path on AVX-512) or 221 (the packed path, past one N block): prompt
    + decode equals one pass, bitwise."""
    rng = np.random.default_rng(k + int(t))
    M = 75
    a = rng.standard_normal((M, k)).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32)
    full, aref = _mm(a, b, t, 3)
    _check(full, _ref2d(aref, b, t), k)
    for lo, hi in ((0, 1), (5, 6), (n - 1, n), (10, 13), (0, 4), (8, 12), (12, 24),
                   (n - 29, n - 26)):
        part, _ = _mm(a, b[lo:hi], t, 2)
        assert_bitwise(part[0, 0], full[0, 0, lo:hi])


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("k", [512, 1024, 2048], ids=lambda k: f"K{k}")
def test_mul_mat_aliased_row_strides(k, t):
    """(mvf32) Rows of a a multiple of 2 KiB apart (f32 K = 512, 1024, 2048; f16 K = 1024,
    2048) take the mat-vec form that reads rows 8..15 ahead through a ring (AVX-512, F32 and
    F16): the same bits as the packed path, for N = 1..4, a partial last group of 16 rows,
    and every thread count."""
    rng = np.random.default_rng(k + 3 * int(t))
    M = 45
    a = rng.standard_normal((M, k)).astype(np.float32)
    b = rng.standard_normal((37, k)).astype(np.float32)
    full, aref = _mm(a, b, t, 3)
    _check(full, _ref2d(aref, b, t), k)
    for lo, hi in ((0, 1), (3, 5), (10, 13), (20, 24)):
        for nt in (1, 2, 3):
            part, _ = _mm(a, b[lo:hi], t, nt)
            assert_bitwise(part[0, 0], full[0, 0, lo:hi])


@pytest.mark.parametrize("col0", [0, 8], ids=lambda c: f"col{c}")
@pytest.mark.parametrize("t", [T.F16, T.BF16], ids=lambda t: t.name)
@pytest.mark.parametrize("k", [1, 17, 31, 48, 777, 1040, 2048 - 8], ids=lambda k: f"K{k}")
def test_mul_mat_f16_word_transpose_rows(k, t, col0):
    """(mvf16) F16 weights, and BF16 weights where the f32 variant runs (no VDPBF16PS: pairs
    in that instruction's order, b rounded once for all groups), take the mat-vec that
    transposes 32 halves of 16 rows per step (AVX-512): the same bits as the packed path for
    every K tail (32-, 16-element and single steps, an odd last pair), N = 1..4, a partial
    last group of rows, rows 4 KiB apart in a view (K below the row stride) starting at
    column 0 or 8 (16 bytes into the line: the whole-line window) and every thread count."""
    rng = np.random.default_rng(k + 5 * int(t) + col0)
    M, stride = 37, 2048                          # rows 4 KiB apart: one L1 set
    wide = rng.standard_normal((M, stride)).astype(np.float32)
    b = rng.standard_normal((21, k)).astype(np.float32)

    def view(ctx, ta):                            # a = wide[:, col0:col0 + k]
        return ctx.view_2d(ta, k, M, ta.nb[1], col0 * 2)

    def padded(x):                                # b's columns where a's are, zeros around
        return np.pad(x, ((0, 0), (col0, stride - k - col0)))

    def bview(n):
        return lambda ctx, tb: ctx.view_2d(tb, k, n, tb.nb[1], col0 * 4)

    full, wref = _mm(wide, padded(b), t, 3, a_view=view, b_view=bview(21))
    _check(full, _ref2d(wref[:, col0:col0 + k], b, t), k)
    for lo, hi in ((0, 1), (3, 5), (10, 13), (17, 21)):
        for nt in (1, 2):
            part, _ = _mm(wide, padded(b[lo:hi]), t, nt, a_view=view, b_view=bview(hi - lo))
            assert_bitwise(part[0, 0], full[0, 0, lo:hi])


# ====================================================================== eager ggml_cy.mul_mat

import ggml_cy  # noqa: E402


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("nshape", [(), (1,), (3,), (2, 5), (40,)], ids=str)
def test_eager_float_mul_mat_matches_graph(nshape, t):
    """ggml_cy.mul_mat with float weights: b @ a.T in f32, the same bits as ctx.mul_mat."""
    rng = np.random.default_rng(len(nshape) + int(t))
    M, K = 45, 70
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal(nshape + (K,)).astype(np.float32)
    aref, araw = _as_type(a, t)
    if t == T.BF16:
        got = ggml_cy.mul_mat(araw, b, "bf16", n_threads=3)
    else:
        got = ggml_cy.mul_mat(araw, b, n_threads=3)
    assert got.shape == nshape + (M,) and got.dtype == np.float32
    want = _bv(b, t) @ aref.T
    _check(got, want, K)
    b2 = b.reshape(-1, K)
    g, _ = _mm(a, b2, t, 2)
    assert_bitwise(got.reshape(-1, M), g[0, 0])


def test_eager_float_mul_mat_tensors_views_and_out():
    rng = np.random.default_rng(2)
    ctx = Context(8 << 20)
    a = rng.standard_normal((30, 50)).astype(np.float32)
    b = rng.standard_normal((7, 50)).astype(np.float32)
    for t in TYPES:
        aref, araw = _as_type(a, t)
        ta = _put(ctx, araw, t)
        out = np.full((7, 30), np.nan, np.float32)
        r = ggml_cy.mul_mat(ta, b, out=out)
        assert r is out
        _check(out, _bv(b, t) @ aref.T, 50)
    # strided weights (every other row, reversed columns) and a transposed b
    a_big = rng.standard_normal((60, 50)).astype(np.float32)
    av = a_big[::2, ::-1]
    bt = np.asfortranarray(b)
    got = ggml_cy.mul_mat(av, bt)
    _check(got, b.astype(np.float64) @ av.T.astype(np.float64), 50)
    # float64 weights are used as float32
    got = ggml_cy.mul_mat(a.astype(np.float64), b)
    assert_bitwise(got, ggml_cy.mul_mat(a, b))
    # K == 0: zeros; M == 0: empty
    np.testing.assert_array_equal(ggml_cy.mul_mat(np.zeros((4, 0), np.float32),
                                                  np.zeros((3, 0), np.float32)), 0)
    assert ggml_cy.mul_mat(np.zeros((0, 5), np.float32), b[:, :5]).shape == (7, 0)


def test_eager_float_mul_mat_bad_input():
    a = np.ones((4, 8), np.float32)
    with pytest.raises(ValueError, match="ne0 mismatch"):
        ggml_cy.mul_mat(a, np.ones((2, 7), np.float32))
    with pytest.raises(ValueError, match="2-D"):
        ggml_cy.mul_mat(np.ones((2, 4, 8), np.float32), np.ones(8, np.float32))
    with pytest.raises(TypeError, match="real numbers"):
        ggml_cy.mul_mat(a, np.array(["x"] * 8))
    with pytest.raises(ValueError, match="at least one dim"):
        ggml_cy.mul_mat(a, np.float32(1.0))
    with pytest.raises(TypeError, match="BF16 weights must be uint16"):
        ggml_cy.mul_mat(a, np.ones(8, np.float32), "bf16")
    with pytest.raises(TypeError, match="F16 weights"):
        ggml_cy.mul_mat(np.ones((4, 8), np.int32), np.ones(8, np.float32), "f16")
    with pytest.raises(TypeError, match="type=|raw blocks"):
        ggml_cy.mul_mat(np.ones((4, 8), np.uint8), np.ones(8, np.float32))
    with pytest.raises(ValueError, match="out must be"):
        ggml_cy.mul_mat(a, np.ones((2, 8), np.float32), out=np.empty((2, 5), np.float32))
    ro = np.empty((2, 4), np.float32)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        ggml_cy.mul_mat(a, np.ones((2, 8), np.float32), out=ro)
    b = np.ones((2, 8), np.float32)
    with pytest.raises(ValueError, match="overlaps"):
        ggml_cy.mul_mat(a, b, out=b.reshape(-1)[:8].reshape(2, 4))
    with pytest.raises(ValueError):
        ggml_cy.mul_mat(a, np.ones(8, np.float32), n_threads=0)
    ctx = Context(1 << 20)
    with pytest.raises(TypeError, match="differs"):
        ggml_cy.mul_mat(ctx.tensor_from(a), np.ones(8, np.float32), "f16")


_LEVEL_CHILD = """
import hashlib
import numpy as np
import ggml_cy
from ggml_cy import GGMLType as T
from ggml_cy.graph.context import Context
rng = np.random.default_rng(7)
out = []
for M, N, K in [(70, 1, 301), (70, 3, 300), (300, 40, 777), (33, 9, 7), (40, 2, 2)]:
    a = (rng.standard_normal((M, K)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    b = rng.standard_normal((N, K)).astype(np.float32)
    out.append(hashlib.sha1(ggml_cy.mul_mat(a, b, "bf16", n_threads=2).tobytes()).hexdigest())
    ctx = Context(16 << 20)
    ta = ctx.new_tensor(T.BF16, (K, M))
    ta.numpy(2)[...] = a
    r = ctx.mul_mat(ta, ctx.tensor_from(b))
    ctx.new_graph().build_forward_expand(r).compute(3)
    out.append(hashlib.sha1(r.numpy(2).tobytes()).hexdigest())
print(" ".join(out))
"""


def test_bf16_same_bits_at_every_level():
    """The f32 variant (baseline, avx2, avx512 caps) sums each pair's products in
    VDPBF16PS's order (odd element first; products of bf16 values are exact), so on normal
    values every dispatch level gives the bits of the VDPBF16PS variant (unset cap, where
    the CPU has AVX512_BF16), eager and graph alike."""
    import subprocess
    import sys
    from _child import ENV, HOME
    got = {}
    for level in ("baseline", "avx2", "avx512", None):
        env = dict(ENV)
        env.pop("GGML_CY_CPU_FEATURES", None)
        env["GGML_CY_NO_AMX"] = "1"     # AMX tiles sum in their own order (test_gemm_amx.py)
        if level:
            env["GGML_CY_CPU_FEATURES"] = level
        p = subprocess.run([sys.executable, "-c", _LEVEL_CHILD], capture_output=True, text=True,
                           cwd=HOME, env=env, timeout=300)
        assert p.returncode == 0, p.stderr
        got[level] = p.stdout.split()
    for level, hashes in got.items():
        assert hashes == got[None], level


def test_matvec_prefetch_rule_takes_the_measured_llc():
    """The f32 mat-vec prefetches only matrices beyond the last-level cache; both modules that
    run mul_mat compare with the size _kernels measured (cacheinfo, GGML_CY_LLC_BYTES)."""
    from ggml_cy.cpu import _compute, _kernels, _mul_mat
    llc = _kernels.llc_info()[0]
    assert llc > 0
    assert _mul_mat._gv_llc() == llc
    assert _compute._gv_llc() == llc
