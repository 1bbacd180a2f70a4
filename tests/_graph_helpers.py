"""Helpers shared by the graph tests: ggml ne order <-> numpy shapes, random inputs."""
import numpy as np

from ggml_cy.graph.context import Context


def shape_of(ne):
    """numpy shape of a 4-D ggml ne (reversed, all four dims kept)."""
    return tuple(reversed(ne))


def rand(rng, ne, dtype, low=0.5, high=1.5):
    """Values in +-[low, high): safe divisors, no overflow in short chains."""
    x = rng.uniform(low, high, size=shape_of(ne)) * rng.choice([-1.0, 1.0], size=shape_of(ne))
    return x.astype(dtype)


def ctx_for(*arrays, extra=1 << 20):
    """A context big enough for copies of arrays, a few results and a graph."""
    nbytes = sum(a.nbytes for a in arrays)
    return Context(4 * nbytes + extra + Context.graph_overhead())


def compute(ctx, t, n_threads=1, fuse=True):
    g = ctx.new_graph()
    g.build_forward_expand(t)
    g.compute(n_threads, fuse=fuse)
    return g


def tensor_of(ctx, arr, t):
    """A new tensor of ggml type t in ctx holding arr (numpy order: ne reversed)."""
    ten = ctx.new_tensor(t, tuple(reversed(arr.shape)))
    ten.numpy()[...] = arr.reshape(ten.numpy().shape)
    return ten


def result_of(ctx, r, n_threads=1, fuse=True):
    """Computes r's graph and returns a copy of r's data."""
    compute(ctx, r, n_threads, fuse)
    return r.numpy().copy()


def assert_bitwise(got, want):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    gu = got.view(f"u{got.dtype.itemsize}")
    wu = want.view(f"u{want.dtype.itemsize}")
    bad = np.flatnonzero(gu.ravel() != wu.ravel())
    assert bad.size == 0, (f"{bad.size} of {got.size} elements differ; first at flat index "
                           f"{bad[0]}: got {got.ravel()[bad[0]]!r}, want {want.ravel()[bad[0]]!r}")
