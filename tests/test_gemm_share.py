"""Float mul_mat with its packed panels shared by the threads (ggml_cy/cpu/csrc/
mul_mat_share.h, issue 14): where the tasks are dealt (from 9 threads on), every 32-row panel
of a and every pair of 8-row panels of b is packed once per call, by the first task that
needs it, into one area; the others wait for it (flags, no barrier). The promise is the bits
of the tasks that pack for themselves (_kernels._set_mm_sharing(False)) and of one thread,
for the eager call and for a graph whose only step is the product (other graphs do not
share); BF16 weights, batches, mat-vecs, at most 64 rows of b on AVX-512 builds (the thin
tasks' range) and products whose panels pass 32 MiB do not share.

Shapes cross every edge of the panels: M with a last panel shorter and longer than 16 rows,
N with an odd number of 8-row panels (a task starting inside a 16-row unit), K blocks of 256
with tails (K = 1, 255, 257, 777), F16 weights, padded a rows, transposed b (packed element
by element), workers that come late or never, and one graph computed from two Python threads
at once (each call has its own flags). (The eager call takes at most one thread per 65536
multiply-adds: every shape here reaches 9.)"""
import threading

import numpy as np
import pytest

import ggml_cy
from ggml_cy import GGMLType as T
from ggml_cy.cpu import _kernels, _mul_mat
from ggml_cy.graph.context import Context

from _graph_helpers import assert_bitwise
from test_gemm_dealt import _graph, _weights
from test_pool_dyn import run_with_late_workers

TYPES = [T.F32, T.F16]
SHAPES = [(1000, 300, 777), (33, 70, 257), (640, 129, 513), (100, 72, 255), (1000, 600, 1),
          (520, 88, 300)]


def _how(t):
    return {"type": "bf16"} if t == T.BF16 else {}


def _private(fn):
    """fn() with every task packing its own panels."""
    old = _kernels._set_mm_sharing(False)
    try:
        return fn()
    finally:
        _kernels._set_mm_sharing(old)


def _shares(fn):
    """(fn(), how many calls shared their panels while it ran)."""
    before = _kernels._mm_share_runs()
    out = fn()
    return out, _kernels._mm_share_runs() - before


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("mnk", SHAPES, ids=lambda s: "M%dN%dK%d" % s)
def test_shared_panels_keep_the_bits(mnk, t):
    M, N, K = mnk
    rng = np.random.default_rng(M + 3 * N + 7 * K + int(t))
    a = _weights(rng, M, K, t)
    b = rng.standard_normal((N, K)).astype(np.float32)
    one = ggml_cy.mul_mat(a, b, n_threads=1)
    want = b.astype(np.float64) @ a.astype(np.float64).T
    assert np.allclose(one, want, rtol=1e-4, atol=1e-4 * np.sqrt(K))
    for nt in (9, 12, 16):
        got, n = _shares(lambda: ggml_cy.mul_mat(a, b, n_threads=nt))
        assert n == 1
        assert_bitwise(got, one)
        assert_bitwise(_private(lambda: ggml_cy.mul_mat(a, b, n_threads=nt)), one)


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_one_step_graph_shares_and_clears_its_flags(t):
    """The one-step graph keeps its flags in the plan's work buffer and clears them per
    compute: a second and a third compute (one with sharing off between) give the same
    bits, and new data in a or b gives the new product. A graph of several steps does not
    share."""
    rng = np.random.default_rng(11 + int(t))
    a = _weights(rng, 300, 400, t)
    b = rng.standard_normal((150, 400)).astype(np.float32)
    one = ggml_cy.mul_mat(a, b, n_threads=1)
    call, view, ctx = _graph(a, t, b, 16)
    for _ in range(2):
        view[...] = np.nan
        _, n = _shares(call)
        assert n == 1
        assert_bitwise(view, one)
    view[...] = np.nan
    _, n = _shares(lambda: _private(call))
    assert n == 0
    assert_bitwise(view, one)
    _, n = _shares(call)
    assert n == 1 and np.array_equal(view, one)
    # new data in b and in a between computes: the panels are packed again (a flag left
    # set would hand out the last compute's panels)
    ctx3 = Context(16 << 20)
    ta, tb = ctx3.tensor_from(a), ctx3.tensor_from(b)
    r = ctx3.mul_mat(ta, tb)
    g = ctx3.new_graph().build_forward_expand(r)
    plan = g.plan(16)
    g.compute(16, plan=plan)
    assert_bitwise(r.numpy(2), one)
    b2 = rng.standard_normal(b.shape).astype(np.float32)
    tb.numpy(2)[...] = b2
    _, n = _shares(lambda: g.compute(16, plan=plan))
    assert n == 1
    assert_bitwise(r.numpy(2), ggml_cy.mul_mat(a, b2, n_threads=1))
    a2 = _weights(rng, *a.shape, t)
    ta.numpy(2)[...] = a2
    g.compute(16, plan=plan)
    assert_bitwise(r.numpy(2), ggml_cy.mul_mat(a2, b2, n_threads=1))
    call2, view2, ctx2 = _graph(a, t, b, 16, extra=True)
    _, n = _shares(call2)
    assert n == 0
    first = view2.copy()
    _private(call2)
    assert_bitwise(view2, first)


def test_what_does_not_share():
    """BF16 weights (their own pack orders), fewer than 9 threads (static split), batches,
    the mat-vec, N within the thin tasks' rows (AVX-512; elsewhere they share), panels past
    32 MiB, and sharing switched off."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((256, 300)).astype(np.float32)
    b = rng.standard_normal((100, 300)).astype(np.float32)
    abf = _weights(rng, 256, 300, T.BF16)
    cases = [lambda: ggml_cy.mul_mat(abf, b, n_threads=16, type="bf16"),
             lambda: ggml_cy.mul_mat(a, b, n_threads=8),
             lambda: ggml_cy.mul_mat(a, b[:2], n_threads=16),
             lambda: _private(lambda: ggml_cy.mul_mat(a, b, n_threads=16))]
    for fn in cases:
        assert _shares(fn)[1] == 0
    # 40 rows of b: within the thin tasks' range (up to 64) on AVX-512 builds, which are
    # the builds whose thin rule takes 32 rows; shared elsewhere
    avx512 = _mul_mat._thin_takes(int(T.F32), 32)
    got, n = _shares(lambda: ggml_cy.mul_mat(a, b[:40], n_threads=16))
    assert n == (0 if avx512 else 1)
    assert_bitwise(got, ggml_cy.mul_mat(a, b[:40], n_threads=1))
    big = rng.standard_normal((4096, 2048)).astype(np.float32)     # 34 MiB of panels
    bb = rng.standard_normal((80, 2048)).astype(np.float32)
    got, n = _shares(lambda: ggml_cy.mul_mat(big, bb, n_threads=16))
    assert n == 0
    assert_bitwise(got, ggml_cy.mul_mat(big, bb, n_threads=1))
    ctx = Context(64 << 20)      # a batch of two matrices: the tasks span both
    a3 = rng.standard_normal((2, 96, 130)).astype(np.float32)
    b3 = rng.standard_normal((2, 100, 130)).astype(np.float32)
    r = ctx.mul_mat(ctx.tensor_from(a3), ctx.tensor_from(b3))
    g = ctx.new_graph().build_forward_expand(r)
    g.compute(1)
    one = r.numpy(3).copy()
    _, n = _shares(lambda: g.compute(16))
    assert n == 0
    assert_bitwise(r.numpy(3), one)


def test_set_mm_sharing_returns_previous():
    old = _kernels._set_mm_sharing(False)
    try:
        assert _kernels._set_mm_sharing(True) is False
        assert _kernels._set_mm_sharing(True) is True
    finally:
        _kernels._set_mm_sharing(old)


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_shared_panels_strided_operands(t):
    """a's rows padded (nb1 > K * size) and b transposed (its elements N * 4 bytes apart:
    packed element by element) in a one-step graph at 16 threads."""
    rng = np.random.default_rng(40 + int(t))
    K, M, N = 270, 100, 90
    a_pad = _weights(rng, M, K + 6, t)
    es = a_pad.dtype.itemsize
    b = rng.standard_normal((N, K)).astype(np.float32)
    one = ggml_cy.mul_mat(np.ascontiguousarray(a_pad[:, :K]), b, n_threads=1)
    ctx = Context(32 << 20)
    ta = ctx.view_2d(ctx.tensor_from(a_pad), K, M, (K + 6) * es, 0)
    tb = ctx.transpose(ctx.tensor_from(np.ascontiguousarray(b.T)))
    r = ctx.mul_mat(ta, tb)
    g = ctx.new_graph().build_forward_expand(r)
    _, n = _shares(lambda: g.compute(16))
    assert n == 1
    assert_bitwise(r.numpy(2), one)


def test_shared_special_values():
    """inf, NaN and -0 travel through the shared panels as through private ones."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((200, 300)).astype(np.float32)
    b = rng.standard_normal((120, 300)).astype(np.float32)
    a[3, 7] = np.inf
    a[50, :] = -0.0
    b[9, 100] = np.nan
    b[17, :] = -0.0
    one = ggml_cy.mul_mat(a, b, n_threads=1)
    got, n = _shares(lambda: ggml_cy.mul_mat(a, b, n_threads=16))
    assert n == 1
    assert_bitwise(got, one)


def test_same_graph_from_two_threads():
    """Two Python threads computing one shared-panel graph, and two calling the eager
    product: each call has its own work buffer (flags and panels)."""
    rng = np.random.default_rng(9)
    a = rng.standard_normal((512, 256)).astype(np.float32)
    b = rng.standard_normal((96, 256)).astype(np.float32)
    want = ggml_cy.mul_mat(a, b, n_threads=1)
    call, view, ctx = _graph(a, T.F32, b, 12)
    outs, errs = [], []

    def worker(eager):
        try:
            for _ in range(15):
                if eager:
                    outs.append(ggml_cy.mul_mat(a, b, n_threads=12))
                else:
                    call()
                    outs.append(view.copy())
        except Exception as exc:   # pragma: no cover - reported below
            errs.append(exc)
    ths = [threading.Thread(target=worker, args=(e,)) for e in (False, False, True, True)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    assert not errs
    for o in outs:
        assert_bitwise(o, want)


def _late_check():
    """Mismatches of shared-panel products against one thread (run with late workers)."""
    rng = np.random.default_rng(3)
    bad = []
    for m, n, k in [(700, 150, 300), (128, 200, 64), (96, 72, 500)]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((n, k)).astype(np.float32)
        one = ggml_cy.mul_mat(a, b, n_threads=1)
        for nt in (9, 16):
            for _ in range(3):
                if not np.array_equal(ggml_cy.mul_mat(a, b, n_threads=nt), one):
                    bad.append(("eager", m, n, k, nt))
                call, view, ctx = _graph(a, T.F32, b, nt)
                call()
                if not np.array_equal(view, one):
                    bad.append(("graph", m, n, k, nt))
    if _kernels._mm_share_runs() == 0:
        bad.append("no call shared its panels")
    return bad


def test_shared_with_late_and_absent_workers():
    """Workers that sleep right after every job (GGML_CY_SPINCOUNT=0) mostly come after
    the caller took most tasks: a panel claimed by a worker is waited for, a worker that
    never comes claims nothing, the products stay exact."""
    run_with_late_workers("__import__('test_gemm_share')._late_check() + "
                          "test_pool_dyn._mixed_calls(4, 6)")
