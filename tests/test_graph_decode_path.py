"""The executor's decode-sized paths (issue 13 item 4): float mul_mat with a few columns
(mul_mat.h's mat-vec path), quantized mul_mat with a small b in its own region (no inner
barrier), and barriers only where a later step depends on an earlier one (Plan.barriers).
numpy in float64 is the oracle; thread counts must give the same bits."""
import numpy as np
import pytest

from ggml_cy.core._core import GGMLType, float32_to_bfloat16
from ggml_cy.graph.context import Context

from _graph_helpers import assert_bitwise


def _ctx(*arrays):
    return Context(4 * sum(a.nbytes for a in arrays) + (8 << 20))


def _bf16_values(x):
    return (float32_to_bfloat16(x).astype(np.uint32) << 16).view(np.float32)


def _mm(a, b, n_threads, wtype):
    """ggml mul_mat of a (numpy (..., M, K) float32 values) as wtype with b (..., N, K)."""
    ctx = _ctx(a, b)
    if wtype == "bf16":
        ta = ctx.new_tensor(GGMLType.BF16, tuple(reversed(a.shape)))
        ta.numpy()[...] = float32_to_bfloat16(a).reshape(ta.numpy().shape)
    else:
        ta = ctx.tensor_from(a.astype(np.float16 if wtype == "f16" else np.float32))
    tb = ctx.tensor_from(b)
    r = ctx.mul_mat(ta, tb)
    g = ctx.new_graph()
    g.build_forward_expand(r)
    g.compute(n_threads)
    return r.numpy(ndim=4).copy()


def _ref(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    r2, r3 = b.shape[1] // a.shape[1], b.shape[0] // a.shape[0]
    a = np.repeat(np.repeat(a, r2, axis=1), r3, axis=0)
    return b @ np.swapaxes(a, -1, -2)


@pytest.mark.parametrize("wtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("k", [1, 7, 31, 32, 33, 100, 1000])
def test_few_columns_match_float64(wtype, n, k):
    rng = np.random.default_rng(k * 10 + n)
    m = 37
    a = rng.standard_normal((1, 1, m, k)).astype(np.float32)
    if wtype == "f16":
        a = a.astype(np.float16).astype(np.float32)
    elif wtype == "bf16":
        a = _bf16_values(a)
    b = rng.standard_normal((1, 1, n, k)).astype(np.float32)
    # BF16 weights: ggml's rule, b rounded to bf16 (test_gemm_paths.py)
    want = _ref(a, _bf16_values(b) if wtype == "bf16" else b)
    got1 = _mm(a, b, 1, wtype)
    tol = 1e-5 * max(1.0, np.sqrt(k))
    np.testing.assert_allclose(got1, want, rtol=tol, atol=tol)
    for nt in (2, 3, 8):
        assert_bitwise(_mm(a, b, nt, wtype), got1)


@pytest.mark.parametrize("wtype", ["f32", "f16"])
def test_one_column_broadcast_batches(wtype):
    """grouped-query shapes: a [K, M, 2, 1] against b [K, 1, 6, 2]"""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((1, 2, 24, 64)).astype(np.float32)
    if wtype == "f16":
        a = a.astype(np.float16).astype(np.float32)
    b = rng.standard_normal((2, 6, 1, 64)).astype(np.float32)
    got = _mm(a, b, 3, wtype)
    np.testing.assert_allclose(got, _ref(a, b), rtol=1e-4, atol=1e-4)


def test_one_column_strided_b_takes_the_gemm_path():
    """b's elements not adjacent (a transposed view): the packed GEMM reads it correctly."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((40, 33)).astype(np.float32)        # M 40, K 33
    bt = rng.standard_normal((33, 1)).astype(np.float32)        # b^T: [1, 33] stored as ne
    ctx = _ctx(a, bt)
    ta, tbt = ctx.tensor_from(a), ctx.tensor_from(bt)
    r = ctx.mul_mat(ta, ctx.transpose(tbt))                     # b: K along a stride of 4
    ctx.new_graph().build_forward_expand(r).compute(2)
    np.testing.assert_allclose(r.numpy(ndim=2), (a.astype(np.float64) @ bt).T, rtol=1e-5,
                               atol=1e-5)


# ---------------------------------------------------------------- quantized, small b
@pytest.mark.parametrize("qtype", ["q8_0", "q4_0", "q4_k", "q6_k"])
def test_small_quantized_products_equal_the_eager_call(qtype):
    """one column through the graph (own region, rows claimed, no inner barrier) gives
    the bits of ggml_cy.quants.mul_mat; three products of one b side by side too."""
    import ggml_cy
    from ggml_cy.backend import tensor_set
    rng = np.random.default_rng(5)
    k, m = 512, 96
    ws = [rng.standard_normal((m, k)).astype(np.float32) for _ in range(3)]
    x = rng.standard_normal((1, k)).astype(np.float32)
    blocks = [np.asarray(ggml_cy.quantize(w, qtype)) for w in ws]
    want = [np.asarray(ggml_cy.quants.mul_mat(bl, x, qtype)) for bl in blocks]
    for nt in (1, 2, 4):
        ctx = Context(8 << 20)
        tx = ctx.tensor_from(x)
        outs = []
        g = ctx.new_graph()
        for bl in blocks:
            tw = ctx.new_tensor(GGMLType[qtype.upper()], (k, m))
            tensor_set(tw, bl)
            outs.append(ctx.mul_mat(tw, tx))
            g.build_forward_expand(outs[-1])
        plan = g.plan(nt)
        assert [s[0] for s in plan.steps].count("mul_mat_q") == 3
        if nt > 1:     # three independent products of one input: no barrier between them
            assert plan.barriers == []
        g.compute(nt, plan=plan)
        for o, w in zip(outs, want):
            assert_bitwise(o.numpy(ndim=2).reshape(w.shape), w)


# ---------------------------------------------------------------- barriers
def test_barriers_only_where_a_step_depends():
    rng = np.random.default_rng(6)
    k, m = 256, 512
    a1, a2 = (rng.standard_normal((m, k)).astype(np.float32) for _ in range(2))
    x = rng.standard_normal((4, k)).astype(np.float32)
    ctx = _ctx(a1, a2, x)
    t1, t2, tx = ctx.tensor_from(a1), ctx.tensor_from(a2), ctx.tensor_from(x)
    p1, p2 = ctx.mul_mat(t1, tx), ctx.mul_mat(t2, tx)    # independent, multi-threaded
    s = ctx.add(p1, p2)                                  # reads both
    g = ctx.new_graph()
    for t in (p1, p2, s):
        g.build_forward_expand(t)
    plan = g.plan(2)
    steps = [i for i, st in enumerate(plan.steps) if st[0] != "noop"]
    assert plan.n_tasks[plan.steps[steps[0]][1]] == 2
    assert plan.barriers == [steps[1]]                   # after p2 only (before the add)
    g.compute(2, plan=plan)
    want = x.astype(np.float64) @ (a1 + a2).astype(np.float64).T
    np.testing.assert_allclose(s.numpy(ndim=2), want, rtol=1e-4, atol=1e-3)
    assert g.plan(1).barriers == []                      # one thread: program order only


def test_barrier_before_overwriting_what_an_earlier_step_reads():
    """write-after-read: a copy into b after a product that reads b must wait for it."""
    rng = np.random.default_rng(7)
    k, m = 256, 1024
    a = rng.standard_normal((m, k)).astype(np.float32)
    x = rng.standard_normal((2, k)).astype(np.float32)
    y = rng.standard_normal((2, k)).astype(np.float32)
    for nt in (2, 4):
        ctx = _ctx(a, x, y)
        ta, tx, ty = ctx.tensor_from(a), ctx.tensor_from(x), ctx.tensor_from(y)
        p = ctx.mul_mat(ta, tx)                          # reads x on every thread
        c = ctx.cpy(ty, tx)                              # then x is overwritten
        g = ctx.new_graph()
        g.build_forward_expand(p)
        g.build_forward_expand(c)
        plan = g.plan(nt)
        steps = [i for i, st in enumerate(plan.steps) if st[0] != "noop"]
        assert steps[0] in plan.barriers
        for _ in range(5):
            tx.numpy()[...] = x
            g.compute(nt, plan=plan)
            np.testing.assert_allclose(p.numpy(ndim=2), x.astype(np.float64) @ a.T,
                                       rtol=1e-4, atol=1e-3)
            np.testing.assert_array_equal(tx.numpy(), y)


# ---------------------------------------------------------------- work buffers
def test_one_plan_from_many_threads_and_repeated_calls():
    """A plan keeps its work buffer between computes (a decode step reruns one plan); a
    compute that finds it in use by another thread gets a buffer of its own, and graphs
    computed without a plan share the module's spare the same way. Every result exact."""
    import threading
    rng = np.random.default_rng(8)
    k, m = 512, 256
    a = rng.standard_normal((m, k)).astype(np.float32)
    x = rng.standard_normal((3, k)).astype(np.float32)
    ctx = _ctx(a, x)
    ta, tx = ctx.tensor_from(a.astype(np.float16)), ctx.tensor_from(x)
    r = ctx.mul_mat(ta, tx)
    g = ctx.new_graph()
    g.build_forward_expand(r)
    plan = g.plan(2)
    assert plan.work_size > 0
    g.compute(plan=plan)
    want = r.numpy(ndim=2).copy()
    want_plain = _mm(a, x, 2, "f16")
    errors = []

    def plan_less():               # graphs without a plan: the module's spare buffer
        for _ in range(30):
            if not np.array_equal(_mm(a, x, 2, "f16"), want_plain):
                errors.append("plain")

    ts = [threading.Thread(target=plan_less) for _ in range(4)]
    for t in ts:
        t.start()
    for _ in range(30):                # the shared plan, while the others run
        g.compute(plan=plan)
        if not np.array_equal(r.numpy(ndim=2), want):
            errors.append("plan")
    for t in ts:
        t.join()
    assert not errors, errors[:3]
    np.testing.assert_array_equal(want, want_plain.reshape(want.shape))


def test_shared_plan_in_two_threads_at_once():
    # two threads compute graphs of the same shape through one plan object each, and one
    # plan from two threads (the second gets its own work buffer): same bits
    import threading
    rng = np.random.default_rng(9)
    a = rng.standard_normal((128, 256)).astype(np.float32)
    x = rng.standard_normal((2, 256)).astype(np.float32)
    ctx = _ctx(a, x)
    ta, tx = ctx.tensor_from(a.astype(np.float16)), ctx.tensor_from(x)
    r = ctx.mul_mat(ta, tx)
    g = ctx.new_graph()
    g.build_forward_expand(r)
    plan = g.plan(1)
    g.compute(plan=plan)
    want = r.numpy(ndim=2).copy()
    barrier = threading.Barrier(2)
    errors = []

    def run():
        barrier.wait()
        for _ in range(50):
            g.compute(plan=plan)       # both write r: the same values
        if not np.array_equal(r.numpy(ndim=2), want):
            errors.append("mismatch")

    ts = [threading.Thread(target=run) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
