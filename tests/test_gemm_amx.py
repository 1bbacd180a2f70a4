"""BF16-weight mul_mat on Intel AMX tiles (ggml_cy/cpu/csrc/mul_mat_amx.h, issue 14 item 3).

Runs where ``ggml_cy.cpu._mul_mat.amx_ready()`` is true (Sapphire Rapids and later Xeons, at
an AVX-512 dispatch level; the GPU machine's host); skipped elsewhere, except the switch
test. ggml's rule: b is rounded to bf16 (nearest even), the products are exact in f32, the
sums are f32 — so against a float64 product of the bf16 weights and the bf16-ROUNDED b the
error is f32 summation only. Subnormal bf16 values count as zero on the tiles (the unit's
DAZ), which these data never hit."""
import subprocess
import sys

import numpy as np
import pytest

import ggml_cy
from ggml_cy import GGMLType as T
from ggml_cy.cpu import _mul_mat
from ggml_cy.graph.context import Context

from _graph_helpers import assert_bitwise

amx = pytest.mark.skipif(not _mul_mat.amx_ready(), reason="no AMX tiles on this CPU/level")


def _bf16(x):
    """float32 -> (bf16 bits, their float64 values), round to nearest even."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _graph_padded(abits, b, n_threads, pad):
    """ctx.mul_mat(a, b) in a graph on n_threads, with `pad` int8 elements allocated before a
    (0: none) so that a lands at another offset from a 64-byte line (the arena aligns to 16
    bytes); returns the result and that offset."""
    ctx = Context(4 * (abits.nbytes + b.nbytes) + 8 * b.shape[-2] * abits.shape[-2] + (16 << 20))
    if pad:
        ctx.new_tensor(T.I8, (pad,))
    ta = ctx.new_tensor(T.BF16, tuple(reversed(abits.shape)))
    ta.numpy(abits.ndim)[...] = abits
    tb = ctx.tensor_from(np.ascontiguousarray(b, np.float32))
    r = ctx.mul_mat(ta, tb)
    ctx.new_graph().build_forward_expand(r).compute(n_threads)
    return r.numpy(4), ta.numpy(abits.ndim).ctypes.data % 64


def _graph(abits, b, n_threads):
    return _graph_padded(abits, b, n_threads, 0)[0]


def _check(got, want, k):
    err = np.abs(got - want)
    assert np.all(err <= 1e-5 * np.sqrt(max(k, 1)) * (1.0 + np.abs(want))), float(err.max())


# M edges (M % 32, M < 16), N = 1..4 (mat-vec), N past a 128-column panel, K tails (K % 32),
# K past the 2048 K block
SHAPES = [(1, 1, 1), (37, 1, 33), (16, 3, 31), (64, 4, 96), (100, 5, 1000), (33, 130, 64),
          (70, 40, 2050), (257, 200, 300), (45, 7, 4097)]


@amx
@pytest.mark.parametrize("mnk", SHAPES, ids=lambda s: "M%dN%dK%d" % s)
def test_amx_matches_rounded_reference(mnk):
    M, N, K = mnk
    rng = np.random.default_rng(M * 31 + N * 7 + K)
    abits, aref = _bf16(rng.standard_normal((M, K)).astype(np.float32))
    b = rng.standard_normal((N, K)).astype(np.float32)
    got = _graph(abits, b, 3)
    _check(got, (_bf16(b)[1] @ aref.T)[None, None], K)


@amx
def test_amx_rounds_b_to_bf16():
    """b = 1 + 2^-9 (under half a bf16 ulp above 1: rounds to 1.0) against a = 1: exactly K."""
    K = 64
    abits, _ = _bf16(np.ones((32, K), np.float32))
    b = np.full((2, K), 1.0 + 2.0 ** -9, np.float32)
    got = _graph(abits, b, 1)
    np.testing.assert_array_equal(got, np.full((1, 1, 2, 32), K, np.float32))


@amx
@pytest.mark.parametrize("k", [7, 300, 2100])
def test_amx_bits_do_not_depend_on_n_or_threads(k):
    rng = np.random.default_rng(k)
    abits, _ = _bf16(rng.standard_normal((75, k)).astype(np.float32))
    b = rng.standard_normal((37, k)).astype(np.float32)
    full = _graph(abits, b, 3)
    for nt in (1, 2, 5, 16):
        assert_bitwise(_graph(abits, b, nt), full)
    for lo, hi in ((0, 1), (5, 6), (36, 37), (10, 13), (0, 4)):
        assert_bitwise(_graph(abits, b[lo:hi], 2)[0, 0], full[0, 0, lo:hi])
    got = ggml_cy.mul_mat(abits, b, "bf16", n_threads=4)
    assert_bitwise(got, full[0, 0])


@amx
def test_amx_special_values():
    """inf and NaN in a or b reach exactly the outputs whose dot products see them."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 64)).astype(np.float32)
    a[3, 7], a[10, 0] = np.inf, np.nan
    b = np.abs(rng.standard_normal((20, 64)).astype(np.float32)) + 0.5
    b[4, 9] = -np.inf
    abits, aref = _bf16(a)
    got = _graph(abits, b, 2)
    with np.errstate(invalid="ignore"):
        want = (_bf16(b)[1] @ aref.T)[None, None]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    _check(got[fin], want[fin], 64)


# (a shape, b shape) in numpy order: batches with ggml's broadcast of a; a matrix whose tasks
# at 9 and 12 threads (11 parts of 96 rows per panel of b) give shares that cross from one
# panel to the next; K past one panel (2100 > MMX_KC: mmx_grid's grid, no reuse); b of
# several panels per thread at 2 and 3 threads (N parts cut to one panel each)
DEALT_SHAPES = [((2, 1, 300, 200), (2, 3, 100, 200)), ((1, 1, 1024, 512), (1, 1, 256, 512)),
                ((1, 2, 64, 96), (3, 2, 5, 96)), ((1, 1, 520, 2100), (1, 1, 70, 2100)),
                ((1, 1, 200, 300), (1, 1, 600, 300))]


@amx
@pytest.mark.parametrize("shapes", DEALT_SHAPES, ids=lambda s: "x".join(map(str, s[1])))
def test_amx_dealt_tasks_reuse_b_only_for_their_rows(shapes):
    """From 2 threads the tile tasks are dealt panel by panel (mmx_compute_dealt): a thread
    skips converting b when its next task has the same rows of the same batch matrix, and
    only then; every split gives one thread's bits (and the static split's)."""
    from ggml_cy.cpu import _kernels
    ashape, bshape = shapes
    rng = np.random.default_rng(sum(ashape) + sum(bshape))
    abits, _ = _bf16(rng.standard_normal(ashape).astype(np.float32))
    b = rng.standard_normal(bshape).astype(np.float32)
    one = _graph(abits, b, 1)
    for nt in (2, 3, 9, 12, 16):
        assert_bitwise(_graph(abits, b, nt), one)
    old = _kernels._set_mm_dealing(False)
    try:
        assert_bitwise(_graph(abits, b, 16), one)
    finally:
        _kernels._set_mm_dealing(old)
    if len(ashape) == 4 and ashape[:2] == (1, 1):
        got = ggml_cy.mul_mat(abits[0, 0], b[0, 0], "bf16", n_threads=16)
        assert_bitwise(got, one[0, 0])


@amx
@pytest.mark.parametrize("mnk", [(96, 300, 600), (70, 260, 2100), (1024, 520, 1024)],
                         ids=lambda s: "M%dN%dK%d" % s)
def test_amx_misaligned_a_same_bits(mnk):
    """a off a 64-byte line (copied sub-block by sub-block into an aligned panel) with b over
    several panels: every offset of a gives the bits of the aligned case, on 1, 2 and 3
    threads (static and dealt splits)."""
    M, N, K = mnk
    rng = np.random.default_rng(M + N + K)
    abits, aref = _bf16(rng.standard_normal((M, K)).astype(np.float32))
    b = rng.standard_normal((N, K)).astype(np.float32)
    first, offsets = None, set()
    for pad in (16, 32, 48, 64):
        for nt in (1, 2, 3):
            got, off = _graph_padded(abits, b, nt, pad)
            offsets.add(off)
            if first is None:
                first = got
                _check(got, (_bf16(b)[1] @ aref.T)[None, None], K)
            else:
                assert_bitwise(got, first)
    assert len(offsets - {0}) >= 2, offsets        # misaligned offsets were reached


def test_no_amx_switch():
    """GGML_CY_NO_AMX=1 turns the tiles off (any CPU: then amx_ready() is False)."""
    from _child import ENV, HOME       # the child imports the ggml_cy under test
    code = "from ggml_cy.cpu import _mul_mat; print(_mul_mat.amx_ready())"
    env = dict(ENV, GGML_CY_NO_AMX="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=HOME, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
