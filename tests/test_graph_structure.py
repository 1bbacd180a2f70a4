"""Graph structure: ggml's depth-first post-order walk, naming, overflow, dump, plans,
compute_with_ctx, views as nodes, lifetime after reset."""
import numpy as np
import pytest

import ggml_cy
from ggml_cy.graph.context import Context
from ggml_cy.graph._graph import op_name_of

from _graph_helpers import assert_bitwise


def _abcde(ctx, n=6):
    rng = np.random.default_rng(0)
    arrs = [rng.random(n, dtype=np.float32) for _ in range(5)]
    return arrs, [ctx.tensor_from(x) for x in arrs]


def test_leaf_and_node_order():
    ctx = Context(1 << 20)
    (a, b, c, d, e), (ta, tb, tc, td, te) = _abcde(ctx)
    m1 = ctx.mul(ta, tb)
    m2 = ctx.mul(tc, td)
    s = ctx.add(m1, m2)
    r = ctx.sub(s, te)
    g = ctx.new_graph()
    g.build_forward_expand(r)
    assert g.n_nodes == 4 and g.n_leafs == 5
    assert g.nodes == [m1, m2, s, r]
    assert g.leafs == [ta, tb, tc, td, te]
    assert [t.name for t in g.leafs] == [f"leaf_{i}" for i in range(5)]
    assert [t.name for t in g.nodes] == [f"node_{i}" for i in range(4)]
    assert [op_name_of(t.op) for t in g.nodes] == ["MUL", "MUL", "ADD", "SUB"]
    g.compute(2)
    assert_bitwise(r.numpy(), a * b + c * d - e)


def test_user_names_are_kept():
    ctx = Context(1 << 20)
    _, (ta, tb, *_rest) = _abcde(ctx)
    ta.name = "x"
    r = ctx.add(ta, tb)
    r.name = "result"
    g = ctx.new_graph().build_forward_expand(r)
    assert [t.name for t in g.leafs] == ["x", "leaf_1"]
    assert g.nodes[0].name == "result"
    assert g.get_tensor("result") == r and g.get_tensor("x") == ta
    assert g.get_tensor("nope") is None


def test_shared_subexpressions_visited_once():
    ctx = Context(1 << 20)
    (a, b, *_), (ta, tb, *_r) = _abcde(ctx)
    x = ctx.mul(ta, tb)
    y = ctx.add(x, x)
    z = ctx.mul(y, x)
    g = ctx.new_graph().build_forward_expand(z)
    assert g.nodes == [x, y, z]
    assert g.leafs == [ta, tb]
    # expanding again (or with a tensor already in the graph) adds nothing
    g.build_forward_expand(z)
    g.build_forward_expand(x)
    assert g.n_nodes == 3 and g.n_leafs == 2
    # a second root shares the nodes already there
    w = ctx.sub(z, y)
    g.build_forward_expand(w)
    assert g.nodes == [x, y, z, w]
    g.compute(3)
    xx = a * b
    assert_bitwise(z.numpy(), (xx + xx) * xx)
    assert_bitwise(w.numpy(), (xx + xx) * xx - (xx + xx))


def test_graph_size_overflow_leaves_graph_unchanged():
    ctx = Context(1 << 20)
    (a, b, *_), (ta, tb, *_r) = _abcde(ctx)
    x = ctx.add(ta, tb)
    y = ctx.mul(x, tb)
    z = ctx.sub(y, ta)
    g = ctx.new_graph(2)
    g.build_forward_expand(y)
    with pytest.raises(ValueError, match="graph is full: size 2"):
        g.build_forward_expand(z)
    assert g.n_nodes == 2 and g.n_leafs == 2 and g.nodes == [x, y]
    assert z.name == ""  # nothing of the failed walk stays
    g.build_forward_expand(x)  # still usable, hash set intact
    assert g.n_nodes == 2
    g.compute(1)
    assert_bitwise(y.numpy(), (a + b) * b)
    g3 = ctx.new_graph(3)
    g3.build_forward_expand(z)
    assert g3.n_nodes == 3


def test_graph_size_leaf_overflow():
    ctx = Context(1 << 20)
    _, ts = _abcde(ctx)
    r = ts[0]
    for t in ts[1:]:
        r = ctx.add(r, t)
    g = ctx.new_graph(4)
    with pytest.raises(ValueError, match="graph is full"):
        g.build_forward_expand(r)
    assert g.n_nodes == 0 and g.n_leafs == 0


def test_long_chain_no_recursion_limit():
    ctx = Context(64 << 20)
    t = ctx.tensor_from(np.ones(4, np.float32))
    one = ctx.tensor_from(np.ones(1, np.float32))
    r = t
    for _ in range(5000):
        r = ctx.add(r, one)
    g = ctx.new_graph(6000).build_forward_expand(r)
    assert g.n_nodes == 5000
    g.compute(2)
    assert_bitwise(r.numpy(), np.full(4, 5001, np.float32))


def test_arena_too_small_for_graph():
    ctx = Context(4096)
    with pytest.raises(ggml_cy.ContextMemoryError):
        ctx.new_graph(2048)
    g = ctx.new_graph(4)  # the context stays usable
    assert g.size == 4
    assert Context.graph_overhead(4) <= ctx.used_mem()


def test_bad_graph_sizes():
    ctx = Context(1 << 20)
    for bad in (0, -1, 1 << 40):
        with pytest.raises(ValueError):
            ctx.new_graph(bad)
    for bad in ("8", 2.0, None, True):
        with pytest.raises(TypeError):
            ctx.new_graph(bad)
    with pytest.raises(TypeError):
        ggml_cy.Graph()


def test_dump():
    ctx = Context(1 << 20)
    _, (ta, tb, *_r) = _abcde(ctx)
    r = ctx.mul_mat(ctx.reshape_2d(ta, 3, 2), ctx.reshape_2d(tb, 3, 2))
    g = ctx.new_graph().build_forward_expand(r)
    text = g.dump()
    lines = text.splitlines()
    assert lines[0] == "graph: 3 nodes, 2 leafs (size 2048)"
    assert "RESHAPE" in lines[2] and "[3, 2, 1, 1]" in lines[2] and "<- leaf_0" in lines[2]
    assert "MUL_MAT" in lines[4] and "[2, 2, 1, 1]" in lines[4]
    # views are named after their base when made (ggml: "%s (reshaped)")
    assert "node_2 <-  (reshaped),  (reshaped)" in lines[4]
    assert lines[5] == "leafs:" and "leaf_1" in lines[7]
    assert repr(g) == "<Graph size=2048 n_nodes=3 n_leafs=2>"


def test_views_are_nodes_with_noop_compute():
    ctx = Context(1 << 20)
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    b = np.arange(24, dtype=np.float32).reshape(4, 3, 2) * 2
    ta, tb = ctx.tensor_from(a), ctx.tensor_from(b)
    p = ctx.permute(tb, 2, 1, 0)      # ne [2,3,4] -> [4,3,2]: numpy b.T
    r = ctx.add(ta, p)
    g = ctx.new_graph().build_forward_expand(r)
    assert [op_name_of(t.op) for t in g.nodes] == ["PERMUTE", "ADD"]
    plan = g.plan(2)
    assert plan.n_tasks[0] == 0 and plan.steps[0][0] == "noop"
    g.compute(2)
    assert_bitwise(r.numpy(), a + b.T)


def test_plan_reports_work_and_tasks():
    ctx = Context(32 << 20)
    a = ctx.tensor_from(np.ones((256, 256), np.float32))
    b = ctx.tensor_from(np.ones((256, 256), np.float32))
    m = ctx.mul_mat(a, b)
    s = ctx.sum(m)
    g = ctx.new_graph().build_forward_expand(s)
    p1, p4 = g.plan(1), g.plan(4)
    assert p1.n_threads == 1 and p4.n_threads == 4
    assert p4.work_size > p1.work_size > 0
    assert p4.n_tasks == [4, 1]           # mul_mat on all threads, sum on one (as ggml)
    assert p1.n_tasks == [1, 1]
    assert "Plan(n_threads=4" in repr(p4)
    g.compute(plan=p4)
    assert s.numpy().item() == 256.0 ** 3
    with pytest.raises(ValueError):
        g.plan(0)
    with pytest.raises(TypeError):
        g.plan("2")
    other = ctx.new_graph().build_forward_expand(m)
    with pytest.raises(ValueError, match="another graph"):
        other.compute(plan=p4)


def test_compute_with_ctx_puts_work_in_arena():
    ctx = Context(16 << 20)
    a = ctx.tensor_from(np.full((64, 64), 2, np.float32))
    m = ctx.mul_mat(a, a)
    g = ctx.new_graph().build_forward_expand(m)
    work = Context(8 << 20)
    before = work.n_objects
    g.compute_with_ctx(work, 2)
    assert work.n_objects == before + 1
    assert work.used_mem() >= g.plan(2).work_size
    assert_bitwise(m.numpy(), np.full((64, 64), 256, np.float32))
    tiny = Context(1024)
    with pytest.raises(ggml_cy.ContextMemoryError):
        g.compute_with_ctx(tiny, 2)


def test_graph_gone_after_reset():
    ctx = Context(1 << 20)
    _, (ta, tb, *_r) = _abcde(ctx)
    g = ctx.new_graph().build_forward_expand(ctx.add(ta, tb))
    ctx.reset()
    for fn in (lambda: g.n_nodes, lambda: g.nodes, lambda: g.compute(1), g.dump):
        with pytest.raises(RuntimeError):
            fn()
    assert "reset" in repr(g)


def test_tensors_from_other_context():
    c1, c2 = Context(1 << 20), Context(1 << 20)
    a = c1.tensor_from(np.arange(4, dtype=np.float32))
    b = c2.tensor_from(np.ones(4, np.float32))
    r = c2.add(b, a)
    del c1
    g = c2.new_graph().build_forward_expand(r)
    assert g.leafs[1] == a and g.leafs[1].context is a.context
    g.compute(2)
    assert_bitwise(r.numpy(), np.arange(4, dtype=np.float32) + 1)


def test_cpy_cont_dup_and_reductions():
    ctx = Context(1 << 20)
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    tx = ctx.tensor_from(x)
    t = ctx.transpose(tx)
    c = ctx.cont(t)
    dst = ctx.new_tensor_2d("f16", 4, 6)
    cp = ctx.cpy(c, dst)
    d = ctx.dup(tx)
    sr = ctx.sum_rows(tx)
    mn = ctx.mean(tx)
    s = ctx.sum(tx)
    a1 = ctx.add1(tx, ctx.tensor_from(np.array([0.5], np.float32)))
    g = ctx.new_graph()
    for root in (cp, d, sr, mn, s, a1):
        g.build_forward_expand(root)
    g.compute(3)
    assert_bitwise(c.numpy(), np.ascontiguousarray(x.T))
    assert_bitwise(dst.numpy(), x.T.astype(np.float16))
    assert cp.data_ptr == dst.data_ptr
    assert_bitwise(d.numpy(), x)
    assert sr.ne == (1, 4, 1, 1) and mn.ne == (1, 4, 1, 1) and s.ne == (1, 1, 1, 1)
    np.testing.assert_allclose(sr.numpy(ndim=2), x.sum(axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(mn.numpy(ndim=2), x.mean(axis=1, keepdims=True), rtol=1e-6)
    assert s.numpy().item() == x.sum()
    assert_bitwise(a1.numpy(), x + np.float32(0.5))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reductions_large_threaded(dtype):
    rng = np.random.default_rng(3)
    x = rng.random((37, 5000)).astype(dtype)
    ctx = Context(8 << 20)
    tx = ctx.tensor_from(x)
    sr, mn, s = ctx.sum_rows(tx), ctx.mean(tx), ctx.sum(tx)
    g = ctx.new_graph()
    for t in (sr, mn, s):
        g.build_forward_expand(t)
    ref = [None]
    for n in range(1, 6):
        g.compute(n)
        got = (sr.numpy().copy(), mn.numpy().copy(), s.numpy().copy())
        if ref[0] is None:
            ref[0] = got
        for u, v in zip(got, ref[0]):
            assert_bitwise(u, v)
    rtol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(sr.numpy(ndim=2)[:, 0], x.sum(axis=1), rtol=rtol)
    np.testing.assert_allclose(mn.numpy(ndim=2)[:, 0], x.mean(axis=1), rtol=rtol)
    np.testing.assert_allclose(s.numpy().item(), x.sum(), rtol=rtol)


def test_scale_clamp_leaky_params():
    ctx = Context(1 << 20)
    x = np.linspace(-3, 3, 13, dtype=np.float32)
    tx = ctx.tensor_from(x)
    sc = ctx.scale(tx, 0.25)
    cl = ctx.clamp(tx, -1.5, 2.0)
    lr = ctx.leaky_relu(tx, 0.125)
    g = ctx.new_graph()
    for t in (sc, cl, lr):
        g.build_forward_expand(t)
    assert sc.op_params[0] == np.float32(0.25).view(np.int32)
    g.compute(1)
    assert_bitwise(sc.numpy(), x * np.float32(0.25))
    assert_bitwise(cl.numpy(), np.clip(x, np.float32(-1.5), np.float32(2.0)))
    assert_bitwise(lr.numpy(), np.where(x > 0, x, x * np.float32(0.125)))


def test_unplaced_no_alloc_tensors_refuse_to_compute():
    ctx = Context(1 << 20, no_alloc=True)
    a = ctx.new_tensor_1d("f32", 8)
    r = ctx.relu(a)
    g = ctx.new_graph().build_forward_expand(r)
    with pytest.raises(ValueError, match="no data"):
        g.compute(1)


def test_compute_releases_gil_and_threads_run_together():
    import threading
    ctx = Context(64 << 20)
    a = ctx.tensor_from(np.ones((512, 512), np.float32))
    graphs = []
    for _ in range(3):
        m = ctx.mul_mat(a, a)
        graphs.append((ctx.new_graph().build_forward_expand(m), m))
    errors = []

    def work(g):
        try:
            g.compute(1)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(g,)) for g, _ in graphs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for _, m in graphs:
        assert_bitwise(m.numpy(), np.full((512, 512), 512, np.float32))


def test_compute_refuses_roots_of_a_reset_context():
    c1 = Context(1 << 20)
    a = c1.tensor_from(np.ones(4, np.float32))
    r = c1.relu(a)
    c2 = Context(1 << 20)
    g = c2.new_graph().build_forward_expand(r)
    c1.reset()
    with pytest.raises(RuntimeError):
        g.compute(1)


def test_mixed_small_and_large_nodes_all_thread_counts():
    """Steps on one thread skip barriers between them; large ones in between still see
    every input written (any thread count gives the same bits)."""
    rng = np.random.default_rng(9)
    small = rng.standard_normal(8).astype(np.float32)
    big = rng.standard_normal((300, 1000)).astype(np.float32)
    ctx = Context(64 << 20)
    ts, tb = ctx.tensor_from(small), ctx.tensor_from(big)
    x = ts
    for _ in range(5):
        x = ctx.sqr(ctx.add(x, ts))
    s1 = ctx.sum(x)                                  # one thread
    y = ctx.mul(tb, ctx.reshape_2d(ctx.tensor_from(np.ones(1000, np.float32)), 1000, 1))
    y = ctx.add1(y, s1)                              # big, all threads, reads s1
    z = ctx.sum_rows(y)
    w = ctx.scale(ctx.sum(z), 0.5)                   # one thread again
    g = ctx.new_graph().build_forward_expand(w)
    want = None
    for fuse in (False, True):
        for n in range(1, 9):
            g.compute(n, fuse=fuse)
            got = (w.numpy().copy(), z.numpy().copy())
            if want is None:
                want = got
            assert_bitwise(got[0], want[0])
            assert_bitwise(got[1], want[1])
    xs = small
    for _ in range(5):
        xs = (xs + small) ** 2
    np.testing.assert_allclose(w.numpy().item(), 0.5 * (big + xs.sum(dtype=np.float64)).sum(), rtol=1e-4)
