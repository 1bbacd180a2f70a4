"""A graph whose only working step is one fused group (what evaluate makes of an
expression) runs on an optional-helper job (issue 14: _compute.run_fused_dyn): its blocks
are dealt in chunks, one counter per thread's range, and the calling thread finishes
whatever the workers do not take. Same bits as numpy and as the static split, for every
thread count, for machine groups and block-path groups, flat and row layouts, streamed
outputs with a short first block; workers that come late (GGML_CY_SPINCOUNT=0) or not at
all change nothing; FP flags raised on a helper reach evaluate's errstate."""
import numpy as np
import pytest

import ggml_cy
from ggml_cy.cpu import _compute, _kernels
from ggml_cy.graph.context import Context

from _graph_helpers import assert_bitwise
from test_pool_dyn import run_with_late_workers


def _cases(seed):
    """(expression, arrays, numpy's answer or None, out) tuples over the layouts the dyn
    path deals with; None: compare with the one-thread unfused graph instead."""
    rng = np.random.default_rng(seed)
    out = []
    for n in (1, 8191, 8192 * 3 + 5, 200_003, 1_000_001):
        a, b, c, d, e = (rng.standard_normal(n).astype(np.float32) for _ in range(5))
        a[::97] = np.nan
        b[::101] = np.inf
        out.append(("a*b + c*d - e", dict(a=a, b=b, c=c, d=d, e=e), a * b + c * d - e, None))
        x, y = a.astype(np.float64), b.astype(np.float64)
        out.append(("maximum(x, y) / (y - x)", dict(x=x, y=y), None, None))
        out.append(("exp(a) * b - c", dict(a=a, b=b, c=c), None, None))   # block path
    # rows: a transposed operand (not flat), a row broadcast, an offset output
    m = rng.standard_normal((300, 1001)).astype(np.float32)
    r = rng.standard_normal(1001).astype(np.float32)
    out.append(("m*m + r", dict(m=m, r=r), m * m + r, None))
    t = rng.standard_normal((1001, 300)).astype(np.float32).T
    out.append(("t*2 - m", dict(t=t, m=m), t * np.float32(2) - m, None))
    base = np.empty(600_000 + 16, np.float32)
    o = base[3:3 + 600_000]
    a, b = (rng.standard_normal(600_000).astype(np.float32) for _ in range(2))
    out.append(("a*b - a", dict(a=a, b=b), a * b - a, o))
    return out


def _check(nts, seed=0):
    bad = []
    with np.errstate(all="ignore"):
        for expr, arrays, want, out in _cases(seed):
            ref = want if want is not None else ggml_cy.evaluate(expr, n_threads=1, **arrays)
            ref = np.ascontiguousarray(ref)
            for nt in nts:
                kw = {} if out is None else {"out": out}
                got = np.ascontiguousarray(ggml_cy.evaluate(expr, n_threads=nt, **kw, **arrays))
                if got.dtype != ref.dtype or not np.array_equal(got.view(np.uint8),
                                                                ref.view(np.uint8)):
                    bad.append((expr, got.shape, nt))
    return bad


def test_single_group_graphs_take_the_dyn_job():
    a = np.arange(100_000, dtype=np.float32)
    before = _compute._fused_dyn_runs()
    ggml_cy.evaluate("a*a - a", a=a, n_threads=4)
    assert _compute._fused_dyn_runs() == before + 1
    ggml_cy.evaluate("a*a - a", a=a, n_threads=1)       # one thread: the plain walk
    assert _compute._fused_dyn_runs() == before + 1
    # two working steps (a group, then a reduction): the static walk with barriers
    ctx = Context(8 << 20)
    ta = ctx.tensor_from(a)
    s = ctx.sum(ctx.sub(ctx.mul(ta, ta), ta))
    g = ctx.new_graph().build_forward_expand(s)
    g.compute(4)
    assert _compute._fused_dyn_runs() == before + 1
    assert s.numpy()[0] == pytest.approx(float(np.sum(a.astype(np.float64) ** 2 - a)), rel=1e-5)


def test_bits_for_every_thread_count():
    assert _check((2, 3, 4, 7, 8, 16)) == []


@pytest.mark.parametrize("vectors", [4, 8])
def test_streamed_outputs_dealt_in_chunks(vectors):
    """The streaming rule planned with a 0-byte LLC (large outputs stream): chunks start
    anywhere in the row, the short aligned first block stays the first; streamed machine
    blocks of 4 and of 8 vectors."""
    from ggml_cy.cpu import _fused
    tuning = _kernels._set_tuning(llc_bytes=0)
    old = _fused.set_stream_vectors(vectors)
    try:
        assert _check((2, 5, 8), seed=1) == []
    finally:
        _fused.set_stream_vectors(old)
        _kernels._set_tuning(*tuning)


def test_late_and_absent_workers():
    """Spin count 0: every worker sleeps after each job, so most wake after the caller has
    taken every chunk; results stay exact, later static jobs still get every thread."""
    run_with_late_workers("test_fused_dyn._check((2, 4, 8)) + test_pool_dyn._mixed_calls(3, 6)")


@pytest.mark.parametrize("where", ["head", "tail", "everywhere"])
def test_fp_flags_from_any_thread(where):
    """An overflow in the first, the last or every chunk (taken by the caller or by a
    helper) is reported like numpy's under np.errstate."""
    n = 2_000_000
    a = np.ones(n, np.float32)
    sl = {"head": slice(0, 10), "tail": slice(n - 10, n), "everywhere": slice(None, None, 9973)}
    a[sl[where]] = np.float32(3e38)
    with np.errstate(over="raise"):
        for nt in (2, 8):
            with pytest.raises(FloatingPointError, match="overflow"):
                ggml_cy.evaluate("a*a - a", a=a, n_threads=nt)
    with np.errstate(over="ignore"):
        got = ggml_cy.evaluate("a*a - a", a=a, n_threads=8)
        assert_bitwise(got, a * a - a)
