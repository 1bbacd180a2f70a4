"""Fused elementwise execution: random chains give the same bits fused and unfused, and
for every thread count 1..8; intermediates that others read, or that carry a name or the
output flag, still reach memory."""
import numpy as np
import pytest

from ggml_cy.graph.context import Context

from _graph_helpers import assert_bitwise, rand

BINARY = ["add", "sub", "mul", "div", "max", "min"]
UNARY = ["neg", "abs", "sqr", "relu", "tanh", "exp", "sigmoid", "silu", "floor"]

# output ne, and the ne of the extra (broadcast) inputs
LAYOUTS = {
    "flat-large": ((50_000, 3, 1, 1), [(50_000, 3, 1, 1)]),
    "flat-small": ((37, 5, 1, 1), [(37, 5, 1, 1)]),
    "rows-bcast": ((33, 40, 3, 2), [(33, 1, 3, 1), (1, 40, 1, 2), (1, 1, 1, 1)]),
    "long-rows-bcast": ((9000, 3, 2, 1), [(9000, 1, 2, 1), (1, 3, 1, 1)]),
    "tiled-dim0": ((12, 50, 2, 1), [(4, 50, 2, 1), (6, 1, 1, 1)]),
}


def _random_chain(ctx, rng, layout, dtype, n_ops, share=True):
    out_ne, extra = LAYOUTS[layout]
    full = [ctx.tensor_from(rand(rng, out_ne, dtype)) for _ in range(2)]
    small = [ctx.tensor_from(rand(rng, ne, dtype)) for ne in extra]
    values = list(full)           # full-shape values (inputs and nodes)
    nodes = []
    for i in range(n_ops):
        if rng.random() < 0.6:
            op = BINARY[rng.integers(len(BINARY))]
            a = values[-1] if rng.random() < 0.7 else values[rng.integers(len(values))]
            pool = values + small
            b = pool[rng.integers(len(pool))]
            t = getattr(ctx, op)(a, b)
        else:
            op = UNARY[rng.integers(len(UNARY))]
            t = getattr(ctx, op)(values[-1])
        values.append(t)
        nodes.append(t)
        if not share:
            values = [t] + full
    return nodes


def _assert_bitwise_nan_payload_aside(got, want):
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert_bitwise(got[~nan], want[~nan])


def _outputs_after(graph, roots, n_threads, fuse):
    graph.compute(n_threads, fuse=fuse)
    return [r.numpy().copy() for r in roots]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16],
                         ids=["f32", "f64", "f16"])
def test_fused_equals_unfused(dtype, layout, seed):
    rng = np.random.default_rng(seed)
    ctx = Context(64 << 20)
    nodes = _random_chain(ctx, rng, layout, dtype, n_ops=int(rng.integers(2, 14)))
    root = nodes[-1]
    g = ctx.new_graph().build_forward_expand(root)
    plan = g.plan(2)
    if len(g.nodes) >= 2:
        assert plan.fused_groups, plan.steps
    want = _outputs_after(g, [root], 1, fuse=False)
    for n in (1, 2, 3):
        got = _outputs_after(g, [root], n, fuse=True)
        assert_bitwise(got[0], want[0])


@pytest.mark.parametrize("layout", ["flat-large", "rows-bcast", "long-rows-bcast"])
def test_threads_1_to_8_identical(layout):
    rng = np.random.default_rng(7)
    ctx = Context(64 << 20)
    nodes = _random_chain(ctx, rng, layout, np.float32, n_ops=10)
    g = ctx.new_graph().build_forward_expand(nodes[-1])
    want = _outputs_after(g, [nodes[-1]], 1, fuse=False)[0]
    for fuse in (False, True):
        for n in range(1, 9):
            assert_bitwise(_outputs_after(g, [nodes[-1]], n, fuse)[0], want)


def test_intermediates_read_elsewhere_reach_memory():
    rng = np.random.default_rng(3)
    ctx = Context(16 << 20)
    a, b, c = (rand(rng, (5000, 4, 1, 1), np.float32)[0, 0] for _ in range(3))
    ta, tb, tc = ctx.tensor_from(a), ctx.tensor_from(b), ctx.tensor_from(c)
    x = ctx.mul(ta, tb)             # read by y and by w (outside the first run)
    y = ctx.add(x, tc)
    n = ctx.sub(y, ta)
    n.name = "kept"                 # a user name keeps it
    o = ctx.mul(n, tc)
    ctx.set_output(o)               # as does the output flag
    p = ctx.relu(o)
    w = ctx.sum_rows(x)             # not elementwise: ends the run, reads x from memory
    q = ctx.add(p, tb)
    g = ctx.new_graph()
    g.build_forward_expand(q)
    g.build_forward_expand(w)
    plan = g.plan(2)
    assert plan.fused_groups == [(0, 6)], plan.steps
    g.compute(2)
    x_ = a * b
    assert_bitwise(x.numpy(), x_)
    assert_bitwise(n.numpy(), x_ + c - a)
    assert_bitwise(o.numpy(), (x_ + c - a) * c)
    assert_bitwise(q.numpy(), np.maximum((x_ + c - a) * c, 0) + b)
    np.testing.assert_allclose(w.numpy(ndim=2)[:, 0], x_.sum(axis=1), rtol=1e-5)


def test_scratch_intermediates_are_not_written():
    """An unnamed intermediate read only inside the group never reaches its memory."""
    ctx = Context(1 << 20)
    a = ctx.tensor_from(np.full(100, 2, np.float32))
    x = ctx.mul(a, a)
    y = ctx.add(x, a)
    ctx.new_graph().build_forward_expand(y).compute(1)
    assert_bitwise(y.numpy(), np.full(100, 6, np.float32))
    assert not np.any(x.numpy() == 4)   # fused away (contents are whatever was there)
    ctx.new_graph().build_forward_expand(y).compute(1, fuse=False)
    assert_bitwise(x.numpy(), np.full(100, 4, np.float32))


def test_inplace_and_views_are_not_fused_across():
    rng = np.random.default_rng(4)
    ctx = Context(8 << 20)
    a, b = rand(rng, (300, 7, 1, 1), np.float32)[0, 0], rand(rng, (300, 7, 1, 1), np.float32)[0, 0]
    ta, tb = ctx.tensor_from(a), ctx.tensor_from(b)
    x = ctx.mul(ta, tb)
    y = ctx.add_inplace(x, tb)      # writes into x's memory
    z = ctx.mul(y, ta)
    g = ctx.new_graph().build_forward_expand(z)
    g.compute(2)
    assert_bitwise(z.numpy(), (a * b + b) * a)
    assert_bitwise(x.numpy(), a * b + b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 127, 129, 8191, 8193, 70_001])
def test_chunk_loops_bitwise_with_special_values(dtype, n):
    """Plain arithmetic groups run on the accumulator machine; with NaN, inf, signed zeros and
    subnormals the bits equal the unfused kernels' (maximum/minimum NaN and tie rules
    included). Only the payload of a NaN made from two NaNs may differ: which operand's
    payload x86 keeps depends on the operand order the compiler picks (numpy's too)."""
    from ggml_cy.cpu import _fused
    rng = np.random.default_rng(n)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-310, -1e-40, 3.0, -2.5],
                       dtype=dtype)
    arrs = [np.where(rng.random(n) < 0.3, rng.choice(special, n), rng.standard_normal(n)).astype(dtype)
            for _ in range(4)]
    ctx = Context(64 << 20)
    ta, tb, tc, td = (ctx.tensor_from(x) for x in arrs)
    two = ctx.tensor_from(np.array([2.0], dtype))
    r = ctx.max(ctx.mul(ta, tb), tc)
    r = ctx.sub(ctx.min(r, td), ctx.div(ta, tc))
    r = ctx.add1(ctx.neg(ctx.abs(ctx.sqr(r))), two)
    r = ctx.mul(ctx.add(r, tb), two)
    g = ctx.new_graph().build_forward_expand(r)
    want = _outputs_after(g, [r], 1, fuse=False)[0]
    old = _fused.set_chunk_loops(True)
    try:
        for nt in (1, 2, 3):
            _assert_bitwise_nan_payload_aside(_outputs_after(g, [r], nt, fuse=True)[0], want)
        _fused.set_chunk_loops(False)
        _assert_bitwise_nan_payload_aside(_outputs_after(g, [r], 2, fuse=True)[0], want)
    finally:
        _fused.set_chunk_loops(old)


@pytest.mark.parametrize("vectors", [4, 8])
def test_large_outputs_streamed_equal(vectors):
    """Large outputs go out with non-temporal stores (whatever this machine's last-level
    cache: the LLC the rule plans with is set to 0 here), the machine's blocks 4 or 8
    vectors long: same bits."""
    from ggml_cy.cpu import _fused, _kernels
    tuning = _kernels._set_tuning(llc_bytes=0)
    old_vectors = _fused.set_stream_vectors(vectors)
    rng = np.random.default_rng(11)
    n = 5_000_000
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    ctx = Context(256 << 20)
    ta, tb, tc = ctx.tensor_from(a), ctx.tensor_from(b), ctx.tensor_from(c)
    r = ctx.sub(ctx.mul(ta, tb), tc)
    r2 = ctx.tanh(ctx.add(ta, tc))          # not machine arithmetic: block path
    g = ctx.new_graph()
    g.build_forward_expand(r)
    g.build_forward_expand(r2)
    try:
        for stream in (True, False):
            old = _fused.set_streaming(stream)
            try:
                g.compute(2)
            finally:
                _fused.set_streaming(old)
            assert_bitwise(r.numpy(), a * b - c)
            got2 = r2.numpy().copy()
            g.compute(1, fuse=False)
            assert_bitwise(got2, r2.numpy())
    finally:
        _fused.set_stream_vectors(old_vectors)
        _kernels._set_tuning(*tuning)


def test_stream_vectors_knob():
    from ggml_cy.cpu import _fused
    default = _fused.set_stream_vectors(None)
    assert default in (4, 8)
    for bad in (0, 3, 5, 16, -4, 4.5, 4.0, "4", True, None.__class__, [4]):
        with pytest.raises(ValueError, match="4 or 8"):
            _fused.set_stream_vectors(bad)
    assert _fused.set_stream_vectors(8) == default
    assert _fused.set_stream_vectors(np.int64(4)) == 8
    assert _fused.set_stream_vectors(None) == 4
    assert _fused.set_stream_vectors(None) == default


@pytest.mark.parametrize("shape, offset", [((4, 1_250_003), 0), ((4, 1_250_000), 1),
                                           ((2, 2_500_000), 3), ((5_000_011,), 5),
                                           ((4, 1_250_008), 2)])   # rows 32 mod 64 B
def test_streamed_rows_with_a_short_first_block(shape, offset, stream_beyond_zero_llc):
    """Large outputs whose rows start off a 32-byte boundary: the machine cuts each row
    at the boundary (or, when rows differ in alignment, stages both loose ends): same
    bits as numpy in every case."""
    from ggml_cy import evaluate
    rng = np.random.default_rng(sum(shape) + offset)
    a, b, c = (rng.standard_normal(shape).astype(np.float32) for _ in range(3))
    base = np.empty(int(np.prod(shape)) + 16, np.float32)
    out = base[offset:offset + a.size].reshape(shape)
    for nt in (1, 2, 3):
        out[...] = np.nan
        evaluate("a*b - c*a + b", out=out, n_threads=nt, a=a, b=b, c=c)
        assert_bitwise(out, a * b - c * a + b)


MACHINE_BINARY = ["add", "sub", "mul", "div", "max", "min"]
MACHINE_UNARY = ["neg", "abs", "sqr"]


def _machine_graph(ctx, rng, out_ne, extra_ne, dtype, n_ops):
    """A random group of machine operations: operands in both orders (the running value
    as first or second operand), earlier nodes read again (parked in temp tiles), x op x,
    broadcast inputs, and some nodes pinned as outputs (written to memory mid-group)."""
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-310, 3.0, -2.5], dtype=dtype)

    def data(ne):
        shape = tuple(reversed(ne))
        x = rng.standard_normal(shape)
        x = np.where(rng.random(shape) < 0.2, rng.choice(special, shape), x)
        return x.astype(dtype)

    full = [ctx.tensor_from(data(out_ne)) for _ in range(3)]
    small = [ctx.tensor_from(data(ne)) for ne in extra_ne]
    values, pinned = list(full), []
    for i in range(n_ops):
        r = rng.random()
        if r < 0.15:
            t = getattr(ctx, MACHINE_UNARY[rng.integers(3)])(values[-1])
        else:
            op = MACHINE_BINARY[rng.integers(len(MACHINE_BINARY))]
            other = (values + small)[rng.integers(len(values) + len(small))]
            if r < 0.25:
                other = values[-1]                      # x op x
            if other in small or rng.random() < 0.5:
                t = getattr(ctx, op)(values[-1], other)
            else:
                t = getattr(ctx, op)(other, values[-1])  # running value second
        values.append(t)
        if rng.random() < 0.1:
            ctx.set_output(t)
            pinned.append(t)
    return values[-1], pinned


@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("out_ne, extra_ne", [
    ((70_001, 1, 1, 1), [(1, 1, 1, 1)]),
    ((9000, 3, 2, 1), [(9000, 1, 2, 1), (1, 3, 1, 1), (1, 1, 1, 1)]),
])
def test_machine_groups_bitwise(out_ne, extra_ne, dtype, seed):
    rng = np.random.default_rng(seed)
    ctx = Context(256 << 20)
    root, pinned = _machine_graph(ctx, rng, out_ne, extra_ne, dtype, 4 + seed)
    g = ctx.new_graph().build_forward_expand(root)
    roots = [root] + pinned
    want = _outputs_after(g, roots, 1, fuse=False)
    assert g.plan(2).machine_groups, "the group should run on the accumulator machine"
    for nt in (1, 2, 3):
        for got, w in zip(_outputs_after(g, roots, nt, fuse=True), want):
            _assert_bitwise_nan_payload_aside(got, w)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("out_ne, extra_ne", [
    ((70_001, 1, 1, 1), [(1, 1, 1, 1)]),
    ((9003, 3, 2, 1), [(9003, 1, 2, 1), (1, 3, 1, 1)]),
])
def test_machine_groups_streamed_bitwise(out_ne, extra_ne, dtype, seed,
                                         stream_beyond_zero_llc):
    """The random machine groups with their outputs streamed (any size streams here), in
    4- and 8-vector blocks: heads, whole blocks and tails (rows of odd lengths), broadcast
    inputs, temp tiles and pinned outputs give the unfused bits."""
    from ggml_cy.cpu import _kernels
    old = _kernels._set_tuning(nt_min_bytes=64)
    try:
        rng = np.random.default_rng(100 + seed)
        ctx = Context(256 << 20)
        root, pinned = _machine_graph(ctx, rng, out_ne, extra_ne, dtype, 4 + seed)
        g = ctx.new_graph().build_forward_expand(root)
        roots = [root] + pinned
        want = _outputs_after(g, roots, 1, fuse=False)
        plan = g.plan(2)
        assert plan.machine_groups and plan.streamed_nodes, "a streamed machine group"
        for nt in (1, 2, 3):
            for got, w in zip(_outputs_after(g, roots, nt, fuse=True), want):
                _assert_bitwise_nan_payload_aside(got, w)
    finally:
        _kernels._set_tuning(*old)


def _block_elements():
    from ggml_cy.cpu import _fused
    block = _fused.set_block_elements(4096)
    _fused.set_block_elements(block)
    return block


@pytest.mark.parametrize("n0, rep", [(12, 3), (1000, 8), (8192, 2), (9000, 5)])
def test_single_row_groups(n0, rep):
    """A group over one row: with every input full-length or a scalar it runs on the
    accumulator machine (one block when at most a block long); with an input repeating
    along dim 0 the ggml way (b of n0/rep elements, tiled) a row of up to a block stays a
    group of the rows mode, which tiles it (longer rows: not fused). Same bits as numpy."""
    rng = np.random.default_rng(n0)
    a, c = (rng.standard_normal(n0).astype(np.float32) for _ in range(2))
    b = rng.standard_normal(n0 // rep).astype(np.float32)
    ctx = Context(16 << 20)
    ta, tb, tc = ctx.tensor_from(a), ctx.tensor_from(b), ctx.tensor_from(c)
    full = ctx.sub(ctx.mul(ctx.add(ta, tc), ta), tc)
    tiled = ctx.mul(ctx.add(ta, tb), tc)
    short = n0 <= _block_elements()
    for r, want, fused, machine in [(full, (a + c) * a - c, True, True),
                                    (tiled, (a + np.tile(b, rep)) * c, short, False)]:
        g = ctx.new_graph()
        g.build_forward_expand(r)
        plan = g.plan(2)
        assert bool(plan.fused_groups) == fused, plan.steps
        assert bool(plan.machine_groups) == machine, plan.steps
        g.compute(2)
        assert_bitwise(r.numpy(), want)
