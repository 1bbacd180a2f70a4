"""Float mul_mat on 2..4 threads through the job's counters (ggml_cy/cpu/csrc/mul_mat_ndeal.h,
issue 14): each call either runs the static split, timed (its lag feeds a running mean), or
-- while that mean says a thread lags -- deals its tasks: slices of a's rows that shrink
towards the end of each thread's share, a thread's first task packing all of b (or, on the
thin path, all of b's 24..64 rows) into a copy in its scratch that its later tasks read.
The promise is the other paths' bits whichever way a call goes: the same as one thread, as
the plain static split (_kernels._set_mm_dealing(False)) and at every thread count, for
eager calls, one-step graphs (an optional-helper job) and graphs of several steps (the plan
sizes each thread's scratch for the copy; the counters are zeroed per compute). Each module
that runs mul_mat (_mul_mat: eager, _compute: graphs) keeps its own running lag; the tests
force each way there (_set_ndeal) and check the rule that moves between them.

Shapes cross the edges: rows of a not a multiple of the 32-column tile or the 8-row thin
group, shares that end mid-tile, K blocks of 256 with tails, b's rows not a multiple of the
8-row tile and past one 192-row block (the copy holds several blocks per K block), strided
a and b (the packing's slow paths), F16 weights (widened while packing), and the copy's
size limit."""
import numpy as np
import pytest

import ggml_cy
from ggml_cy import GGMLType as T
from ggml_cy.cpu import _compute, _kernels, _mul_mat
from ggml_cy.graph.context import Context

from _graph_helpers import assert_bitwise
from test_gemm_dealt import _graph, check_graph_bits
from test_gemm_paths import _as_type, _check

TYPES = [T.F32, T.F16]
# (M, N, K): packed path (N past the thin rule), thin path where this level has it
PACKED = [(1100, 200, 130), (1600, 100, 257), (1543, 193, 64), (1057, 72, 513),
          (1024, 200, 1)]
THIN = [(1100, 64, 300), (1300, 56, 513), (2100, 24, 64), (1040, 63, 255)]


MODES = {"by_lag": -1, "split": 0, "dealt": 1}


def _set_mode(name):
    """Sets both modules' choice to MODES[name] (the mean cleared); returns the old modes."""
    return [m._set_ndeal(MODES[name], 0) for m in (_mul_mat, _compute)]


@pytest.fixture(params=["split", "dealt"], autouse=True)
def mode(request):
    """Every test once with each way forced, in both modules (the rule's own tests set mode
    -1 themselves); the default (-1, the mean cleared) put back after."""
    olds = _set_mode(request.param)
    yield request.param
    for m, old in zip((_mul_mat, _compute), olds):
        m._set_ndeal(old, 0)


def _plan(M, N, K, t, nth):
    return _mul_mat._ndeal_plan(M, N, K, int(t), nth)


def test_plan_rule():
    """Which products take the path: 2..4 threads, F32 / F16 weights, one matrix, not the
    mat-vec, at least 4 tiles of a's rows per thread (packed path: 512 rows), a copy of at
    most 2^21 floats."""
    # b's rows padded to the tile's (8 on AVX-512, 6 below) times K padded to 256
    assert _plan(1024, 1024, 1024, T.F32, 2)["pre_floats"] in (1024 * 1024, 1026 * 1024)
    for nth in (2, 3, 4):
        assert _plan(2048, 1024, 1024, T.F16, nth)["ntasks"] == 5 * nth
    assert _plan(1024, 1024, 1024, T.F32, 1) is None
    assert _plan(4096, 1024, 1024, T.F32, 5) is None          # many threads: other grids
    assert _plan(1024, 1024, 1024, T.BF16, 2) is None
    assert _plan(1024, 4, 1024, T.F32, 2) is None             # the mat-vec
    assert _plan(1023, 300, 100, T.F32, 2) is None            # 511 rows of a a thread
    assert _plan(1024, 300, 100, T.F32, 2) is not None
    assert _plan(1535, 300, 100, T.F32, 3) is None
    assert _plan(1536, 300, 100, T.F32, 3) is not None
    assert _plan(1024, 1024, 1024, T.F32, 4) is None
    if _mul_mat._thin_takes(int(T.F32), 64):                   # thin: 4 groups of 8 a thread
        assert _plan(56, 64, 100, T.F32, 2) is None
        assert _plan(57, 64, 100, T.F32, 2)["thin"]
    assert _plan(1024, 2040, 1024, T.F32, 2) is not None      # 2^21 floats: the limit
    assert _plan(1024, 2049, 1024, T.F32, 2) is None
    thin = _plan(4096, 64, 4096, T.F32, 2)
    if _mul_mat._thin_takes(int(T.F32), 64):
        assert thin["thin"] and thin["pre_floats"] == 64 * 4096
    else:
        assert not thin["thin"] and thin["pre_floats"] == 66 * 4096   # 6-row tiles
    for bad in [(0, 1, 1, int(T.F32), 2), (1, 1, 1, int(T.F32), 0), (1, 1, 1, int(T.Q4_0), 2)]:
        with pytest.raises(ValueError):
            _mul_mat._ndeal_plan(*bad)


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("mnk", PACKED + THIN, ids=lambda s: "M%dN%dK%d" % s)
def test_bits_equal_one_thread_and_static(mnk, t):
    M, N, K = mnk
    assert _plan(M, N, K, t, 2) is not None, "shape must take the path at 2 threads"
    rng = np.random.default_rng(M + 5 * N + 11 * K + int(t))
    a = rng.standard_normal((M, K)).astype(np.float32)
    if t == T.F16:
        a = a.astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float32)
    one = ggml_cy.mul_mat(a, b, n_threads=1)
    aref = a.astype(np.float64)
    _check(one, b.astype(np.float64) @ aref.T, K)
    for nt in (2, 3, 4):
        for _ in range(2):                                   # each thread's copy reused
            assert_bitwise(ggml_cy.mul_mat(a, b, n_threads=nt), one)
        old = _kernels._set_mm_dealing(False)
        try:
            assert_bitwise(ggml_cy.mul_mat(a, b, n_threads=nt), one)
        finally:
            _kernels._set_mm_dealing(old)
        check_graph_bits(a, t, b, nt, one)


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_strided_operands(t):
    """a and b as strided numpy views (elements 2 apart along K, rows apart): the packing's
    element-by-element paths fill the copy."""
    rng = np.random.default_rng(17)
    M, N, K = 1100, 130, 301
    assert _plan(M, N, K, t, 2) is not None
    aref, wa = _as_type(rng.standard_normal((M, 2 * K)).astype(np.float32), t)
    b = rng.standard_normal((N + 3, 2 * K)).astype(np.float32)
    av, bv = wa[:, ::2], b[3:, 1::2]
    one = ggml_cy.mul_mat(av, bv, n_threads=1)
    _check(one, bv.astype(np.float64) @ aref[:, ::2].T, K)
    for nt in (2, 3, 4):
        assert_bitwise(ggml_cy.mul_mat(av, bv, n_threads=nt), one)
    assert_bitwise(ggml_cy.mul_mat(np.ascontiguousarray(av), np.ascontiguousarray(bv),
                                   n_threads=2), one)


def test_specials():
    """Inf / NaN in a and b go through the copy as they are."""
    rng = np.random.default_rng(23)
    a = rng.standard_normal((1100, 40)).astype(np.float32)
    b = rng.standard_normal((200, 40)).astype(np.float32)
    a[3, 5] = np.inf
    a[600, 0] = np.nan
    b[150, 7] = -np.inf
    one = ggml_cy.mul_mat(a, b, n_threads=1)
    for nt in (2, 3, 4):
        assert_bitwise(ggml_cy.mul_mat(a, b, n_threads=nt), one)
    assert not np.isfinite(one[:, 3]).any()
    assert np.isnan(one[:, 600]).all()


def test_graph_scratch_covers_every_thread_count():
    """A plan made for 4 threads computed with each thread count it allows: the per-thread
    scratch holds the copy for whichever count the step gets (sanitizer builds check the
    bounds)."""
    rng = np.random.default_rng(29)
    a = rng.standard_normal((1600, 333)).astype(np.float32)
    b = rng.standard_normal((210, 333)).astype(np.float32)
    one = ggml_cy.mul_mat(a, b, n_threads=1)
    ctx = Context(32 << 20)
    r = ctx.mul_mat(ctx.tensor_from(a), ctx.tensor_from(b))
    g = ctx.new_graph()
    g.build_forward_expand(r)
    for nt in (2, 3, 4):
        r.numpy(2)[...] = np.nan
        g.compute(nt)
        assert_bitwise(r.numpy(2), one)


@pytest.fixture
def rule_case(mode):
    """(a, b, one-thread result) of a product that takes the path at 2 threads, both modules
    in mode -1 (the rule); run once (with the autouse fixture's first way)."""
    if mode != "split":
        pytest.skip("once is enough")
    _set_mode("by_lag")
    rng = np.random.default_rng(31)
    a = rng.standard_normal((1100, 200)).astype(np.float32)
    b = rng.standard_normal((300, 200)).astype(np.float32)
    return a, b, ggml_cy.mul_mat(a, b, n_threads=1)


def test_choice_follows_the_lag(rule_case):
    """The rule, on eager calls: a mean at or above 12% turns dealing on and each dealt call
    lets it decay by 1/8; below 5% it goes off and a split call moves the mean halfway to
    the lag it measures (0..100%)."""
    a, b, one = rule_case
    _mul_mat._set_ndeal(-1, 800)
    for want in (700, 613, 537, 470):                       # dealt: 7/8 each call
        assert_bitwise(ggml_cy.mul_mat(a, b, n_threads=2), one)
        assert _mul_mat._ndeal_state() == (want, True)
    _mul_mat._set_ndeal(-1, 119)                             # below the threshold: split
    assert_bitwise(ggml_cy.mul_mat(a, b, n_threads=2), one)
    lag, on = _mul_mat._ndeal_state()
    assert not on and 59 <= lag <= 559
    _mul_mat._set_ndeal(-1, 120)
    assert_bitwise(ggml_cy.mul_mat(a, b, n_threads=2), one)
    assert _mul_mat._ndeal_state() == (105, True)
    _mul_mat._set_ndeal(-1, 56)
    _mul_mat._set_ndeal(-1, -1)                              # mode only: the mean kept
    assert _mul_mat._ndeal_state() == (56, False)
    # once on, dealing stays on down to the lower threshold, then a split call measures
    _mul_mat._set_ndeal(-1, 200)
    seen = []
    for _ in range(12):
        assert_bitwise(ggml_cy.mul_mat(a, b, n_threads=2), one)
        seen.append(_mul_mat._ndeal_state())
    assert seen[:11] == [(x, True) for x in (175, 154, 135, 119, 105, 92, 81, 71, 63, 56, 49)]
    assert seen[11][1] is False and 24 <= seen[11][0] <= 524
    for bad in [(2, -1), (-2, -1), (0, 1001), (0, -2)]:
        with pytest.raises(ValueError):
            _mul_mat._set_ndeal(*bad)
        with pytest.raises(ValueError):
            _compute._set_ndeal(*bad)


def test_graph_module_keeps_its_own_mean(rule_case):
    """The graph executor's calls move _compute's mean, not _mul_mat's."""
    a, b, one = rule_case
    _mul_mat._set_ndeal(-1, 333)
    _compute._set_ndeal(-1, 800)
    call, view, ctx = _graph(a, T.F32, b, 2)
    call()
    assert_bitwise(view, one)
    assert _compute._ndeal_state() == (700, True)
    assert _mul_mat._ndeal_state() == (333, False)
