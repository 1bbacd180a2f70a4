"""evaluate's memory for intermediates (expr/evaluate.py, _keep_untouched_scratch): when the
plan keeps every intermediate in cache (one fused group), a large scratch buffer stays
with the compiled entry -- its pages are never touched, so it costs address space, not
memory -- and the plan is reused call after call; when a plan would write them, the
buffer is made per call again. Plan.nodes_kept_in_cache names those nodes."""
import sys
import types

import numpy as np

import ggml_cy
from ggml_cy.graph.context import Context

ev_mod = sys.modules["ggml_cy.expr.evaluate"]


def _entry(expr):
    hits = [v for k, v in ev_mod._PLAN_CACHE.items() if k[0] == expr]
    assert len(hits) == 1
    return hits[0]


def _rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            import os
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return None


def test_large_untouched_scratch_is_kept_and_the_plan_reused():
    n = 3_000_000
    rng = np.random.default_rng(5)
    a, b, c, d, e = (rng.standard_normal(n).astype(np.float32) for _ in range(5))
    out = np.empty(n, np.float32)
    expr = "a*b + c*d - e"
    ev_mod._PLAN_CACHE.clear()
    ggml_cy.evaluate(expr, out=out, n_threads=2, a=a, b=b, c=c, d=d, e=e)
    entry = _entry(expr)
    assert entry.scratch_bytes > ev_mod._KEEP_SCRATCH_BYTES
    assert entry.scratch_buf is not None
    plan = entry.plan
    want = a * b + c * d - e
    rss0 = _rss_bytes()
    for _ in range(3):
        ggml_cy.evaluate(expr, out=out, n_threads=2, a=a, b=b, c=c, d=d, e=e)
        assert _entry(expr).plan is plan                 # no re-planning per call
    if rss0 is not None:
        # the kept buffer (3 intermediates of 12 MB) was never written
        assert _rss_bytes() - rss0 < entry.scratch_bytes // 4
    np.testing.assert_array_equal(out, want)
    # another thread count plans again and still keeps the buffer
    ggml_cy.evaluate(expr, out=out, n_threads=3, a=a, b=b, c=c, d=d, e=e)
    assert _entry(expr).plan is not plan and _entry(expr).scratch_buf is not None
    np.testing.assert_array_equal(out, want)


def test_nodes_kept_in_cache():
    ctx = Context(64 << 20)
    x = np.arange(100_000, dtype=np.float32)
    ta = ctx.tensor_from(x)
    m = ctx.mul(ta, ta)
    r = ctx.sub(ctx.add(m, ta), ta)
    g = ctx.new_graph().build_forward_expand(r)
    assert g.plan(2).nodes_kept_in_cache == [0, 1]       # mul, add: the sub is the root
    ctx2 = Context(64 << 20)
    tb = ctx2.tensor_from(x)
    m2 = ctx2.mul(tb, tb)
    ctx2.set_output(m2)                                   # pinned: it reaches memory
    r2 = ctx2.sub(ctx2.add(m2, tb), tb)
    g2 = ctx2.new_graph().build_forward_expand(r2)
    assert 0 not in g2.plan(2).nodes_kept_in_cache
    assert g2.plan(2, fuse=False).nodes_kept_in_cache == []


def test_scratch_that_a_plan_writes_is_made_per_call():
    buf = np.empty(ev_mod._KEEP_SCRATCH_BYTES * 2, np.uint8)
    plan = types.SimpleNamespace(nodes_kept_in_cache=[0])
    c = types.SimpleNamespace(scratch_bytes=buf.nbytes, scratch_idx=[0, 1], scratch_buf=buf,
                              plan=plan)
    ev_mod._keep_untouched_scratch(c, buf)
    assert c.scratch_buf is None                          # node 1 would be written
    c.plan = types.SimpleNamespace(nodes_kept_in_cache=[1, 0])
    ev_mod._keep_untouched_scratch(c, buf)
    assert c.scratch_buf is buf
    small = np.empty(64, np.uint8)                        # small: the entry's own rule
    c2 = types.SimpleNamespace(scratch_bytes=64, scratch_idx=[0], scratch_buf=None,
                               plan=types.SimpleNamespace(nodes_kept_in_cache=[]))
    ev_mod._keep_untouched_scratch(c2, small)
    assert c2.scratch_buf is None
