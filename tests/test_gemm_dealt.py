"""Float mul_mat with its tasks dealt to the threads (csrc/mul_mat.h, mm_compute_dealt;
issue 14 item 3; from 9 threads on, _kernels.mm_deals): each thread takes its own static
share of the tasks first, then what is left of the others', so a slow or late thread holds
a call up by about one task. The bits
must not depend on who takes which task, on the grid, on the thread count or on dealing
being on (_kernels._set_mm_dealing): eager calls, one-step graphs (an optional-helper
job), graphs of several steps (counters per step, zeroed each compute), workers that come
late or never, and the same graph computed from two Python threads at once."""
import threading

import numpy as np
import pytest

import ggml_cy
from ggml_cy import GGMLType as T
from ggml_cy.cpu import _kernels, _mul_mat
from ggml_cy.graph.context import Context

from _graph_helpers import assert_bitwise
from test_pool_dyn import run_with_late_workers


@pytest.fixture
def static_split():
    """Runs the test's body with dealing off; puts the setting back."""
    old = _kernels._set_mm_dealing(False)
    yield
    _kernels._set_mm_dealing(old)


def _weights(rng, m, k, t):
    a = rng.standard_normal((m, k)).astype(np.float32)
    if t == T.F16:
        return a.astype(np.float16)
    if t == T.BF16:
        return (a.view(np.uint32) >> 16).astype(np.uint16)
    return a


def _graph(stored, t, b, threads, extra=False):
    """(compute call, result view): ctx.mul_mat(a, b) alone, or with extra=True between an
    add before it and a second mul_mat after it (a plan of several steps)."""
    m, k = stored.shape
    ctx = Context(8 * (stored.nbytes + b.nbytes) + 16 * m * b.shape[0] + (16 << 20))
    if t == T.BF16:
        ta = ctx.new_tensor(T.BF16, (k, m))
        ta.numpy(2)[...] = stored
    else:
        ta = ctx.tensor_from(stored)
    tb = ctx.tensor_from(b)
    if extra:
        tb = ctx.add(tb, tb)
    r = ctx.mul_mat(ta, tb)
    if extra:
        r2 = ctx.mul_mat(ta, ctx.scale(tb, 0.5))
        r = ctx.add(r, r2)
    g = ctx.new_graph()
    g.build_forward_expand(r)
    plan = g.plan(threads)
    return (lambda: g.compute(threads, plan=plan)), r.numpy(2), ctx


SHAPES = [(600, 5, 300), (1024, 64, 130), (96, 200, 260), (520, 70, 33), (257, 8, 255),
          (33, 1, 513), (64, 3, 48), (2048, 16, 64)]


@pytest.mark.parametrize("t", [T.F32, T.F16, T.BF16], ids=lambda t: t.name)
@pytest.mark.parametrize("mnk", SHAPES, ids=lambda s: "M%dN%dK%d" % s)
def test_dealt_bits_equal_static_and_one_thread(mnk, t):
    M, N, K = mnk
    rng = np.random.default_rng(M + 3 * N + 7 * K + int(t))
    a = _weights(rng, M, K, t)
    b = rng.standard_normal((N, K)).astype(np.float32)
    how = {"type": "bf16"} if t == T.BF16 else {}     # f16 weights: a float16 array
    one = ggml_cy.mul_mat(a, b, n_threads=1, **how)
    for nt in (2, 9, 16):
        assert_bitwise(ggml_cy.mul_mat(a, b, n_threads=nt, **how), one)
        check_graph_bits(a, t, b, nt, one)


def check_graph_bits(a, t, b, nt, one):
    """mul_mat(a, b) in a one-step graph and in one of several steps on nt threads: the
    one-step result equals `one`; each graph's bits stay the same with dealing off and
    when computed again (counters zeroed again for each compute)."""
    for extra in (False, True):
        call, view, ctx = _graph(a, t, b, nt, extra)
        call()
        first = view.copy()
        if not extra:
            assert_bitwise(first, one)
        old = _kernels._set_mm_dealing(False)
        try:
            view[...] = np.nan
            call()
            assert_bitwise(view, first)          # the static split: the same bits
        finally:
            _kernels._set_mm_dealing(old)
        view[...] = np.nan
        call()
        assert_bitwise(view, first)


def test_dealt_batched_and_broadcast():
    """Batches (tasks over matrices) and ggml's broadcast of a over b's batch dims."""
    rng = np.random.default_rng(5)
    ctx = Context(64 << 20)
    a = rng.standard_normal((2, 1, 96, 130)).astype(np.float32)
    b = rng.standard_normal((2, 3, 40, 130)).astype(np.float32)
    ta, tb = ctx.tensor_from(a), ctx.tensor_from(b)
    r = ctx.mul_mat(ta, tb)
    g = ctx.new_graph()
    g.build_forward_expand(r)
    g.compute(1)
    one = r.numpy(4).copy()
    want = b.astype(np.float64) @ np.swapaxes(a, -1, -2).astype(np.float64)
    assert np.allclose(one, want, rtol=1e-4, atol=1e-4)
    for nt in (2, 10, 16):
        r.numpy(4)[...] = np.nan
        g.compute(nt)
        assert_bitwise(r.numpy(4), one)


def test_dealt_zero_k_gives_zeros():
    a = np.zeros((70, 0), np.float32)
    b = np.zeros((40, 0), np.float32)
    for nt in (1, 2, 12):
        out = np.full((40, 70), np.nan, np.float32)
        ggml_cy.mul_mat(a, b, out=out, n_threads=nt)
        assert not out.any()


def test_grids_as_documented():
    """The dealt grid: the static one at 2 threads (no lag assumed, finer tasks only cost
    packing), finer tasks where a lagging thread is likely (16 threads: 8x8 for 1024^3)."""
    assert _mul_mat._grids(1024, 1024, 1024, 1, 2) == ((2, 1), (2, 1))
    static, dealt = _mul_mat._grids(1024, 1024, 1024, 1, 16)
    assert static == (4, 4) and dealt == (8, 8)
    for m, n, k, nth in [(4096, 64, 4096, 16), (4096, 512, 4096, 8), (300, 7, 9, 3),
                         (1, 1, 1, 64), (50000, 1, 10, 16), (8, 100000, 3, 16)]:
        (gm, gn), (dm, dn) = _mul_mat._grids(m, n, k, 1, nth)
        assert dm * dn <= 4 * nth and dm >= 1 and dn >= 1
        assert dm <= -(-m // 32) and dn <= -(-n // 8)      # no empty parts
    assert _mul_mat._grids(100, 100, 100, 1000, 4)[1] == (1, 1)   # the batch is the tasks
    for bad in [(0, 1, 1, 1, 1), (1, 0, 1, 1, 1), (1, 1, 0, 1, 1), (1, 1, 1, 0, 1),
                (1, 1, 1, 1, 0), (-5, 1, 1, 1, 1)]:
        with pytest.raises(ValueError):
            _mul_mat._grids(*bad)


def test_set_mm_dealing_returns_previous():
    old = _kernels._set_mm_dealing(False)
    try:
        assert _kernels._set_mm_dealing(True) is False
        assert _kernels._set_mm_dealing(True) is True
    finally:
        _kernels._set_mm_dealing(old)


def test_same_graph_from_two_threads():
    """Two Python threads computing one graph: each call has its own work buffer, so the
    task counters of one call never deal the other's tasks."""
    rng = np.random.default_rng(9)
    a = rng.standard_normal((512, 256)).astype(np.float32)
    b = rng.standard_normal((96, 256)).astype(np.float32)
    want = ggml_cy.mul_mat(a, b, n_threads=1)
    call, view, ctx = _graph(a, T.F32, b, 12)
    outs, errs = [], []

    def worker():
        try:
            for _ in range(20):
                call()
                outs.append(view.copy())
        except Exception as exc:   # pragma: no cover - reported below
            errs.append(exc)
    ths = [threading.Thread(target=worker) for _ in range(2)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    assert not errs
    for o in outs:
        assert_bitwise(o, want)


def _late_check():
    """Mismatches of dealt products against one thread (run with late workers)."""
    rng = np.random.default_rng(3)
    bad = []
    for m, n, k in [(700, 50, 300), (128, 200, 64), (64, 2, 500)]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((n, k)).astype(np.float32)
        one = ggml_cy.mul_mat(a, b, n_threads=1)
        for nt in (2, 9, 16):
            for _ in range(3):
                if not np.array_equal(ggml_cy.mul_mat(a, b, n_threads=nt), one):
                    bad.append(("eager", m, n, k, nt))
                call, view, ctx = _graph(a, T.F32, b, nt)
                call()
                if not np.array_equal(view, one):
                    bad.append(("graph", m, n, k, nt))
                call, view, ctx = _graph(a, T.F32, b, nt, extra=True)
                call()
                call()
    return bad


def test_dealt_with_late_and_absent_workers():
    """Workers that sleep right after every job (GGML_CY_SPINCOUNT=0) mostly come after
    the caller took every task: the products stay exact, later jobs still work."""
    run_with_late_workers("__import__('test_gemm_dealt')._late_check() + "
                          "test_pool_dyn._mixed_calls(4, 6)")
