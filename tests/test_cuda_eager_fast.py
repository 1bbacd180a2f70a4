"""The eager GPU call's fast path (issue 14 item 5) and the caching device allocator.

A repeated eager call over device tensors of one layout runs from a prepared launch
(_cuda.EagerPlan, cached per layout by ggml_cy.cuda.ops): results must be bitwise those of
the general path (and of the CPU), every check must still raise (freed buffers, views
outside their buffer, bad shapes), a failed launch must not leak its result's block, and
the allocator must hand freed blocks back to later calls and release them on
empty_cache()."""
import threading

import numpy as np
import pytest

import ggml_cy
import ggml_cy.cuda as gcuda
from ggml_cy.cuda import ops as gops
from ggml_cy.cuda.tensor import DeviceTensor

pytestmark = pytest.mark.gpu

RNG = np.random.default_rng(77)


def rand(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return RNG.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return RNG.integers(-50 if dtype.kind == "i" else 0, 50, shape).astype(dtype)
    return (RNG.standard_normal(shape) * 3).astype(dtype)


def bits(x):
    x = np.asarray(x)
    return x.view(f"u{x.itemsize}") if x.dtype.kind == "f" else x


def general(name, args, out=None):
    """The general (unplanned) path's result for the same call."""
    saved = gops._fast_call
    gops._fast_call = lambda *a: None
    try:
        return gops.eager_call(name, args, {} if out is None else {"out": out})
    finally:
        gops._fast_call = saved


def plan_of(name, a, b=None, out=None):
    from ggml_cy.cuda import _cuda
    return gops._plans.get(_cuda.plan_key(name, a, b, out))


LAYOUTS = [((1000,), (1000,)), ((64, 33), (33,)), ((64, 33), (64, 1)), ((5, 6, 7), (6, 1)),
           ((), ()), ((3, 1, 4), (1, 5, 1)), ((2, 3, 4, 5, 6), (2, 1, 4, 1, 6))]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.float64])
@pytest.mark.parametrize("sa,sb", LAYOUTS)
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "less"])
def test_fast_path_matches_general_path_and_cpu(name, sa, sb, dtype):
    a, b = rand(sa, dtype), rand(sb, dtype)
    da, db = gcuda.asarray(a), gcuda.asarray(b)
    gops._plans.clear()
    first = getattr(ggml_cy, name)(da, db)           # builds the plan
    plan = plan_of(name, da, db)
    if len(sa) <= 4:
        assert plan is not None and plan is not False, "the common call has a plan"
    else:                                            # 5 dims left after merging: general path
        assert plan is False
    again = getattr(ggml_cy, name)(da, db)           # runs from the plan
    want = np.asarray(getattr(ggml_cy, name)(a, b))  # the CPU path
    gref = general(name, (da, db))
    assert (again.shape, again.strides, again.ggml_type) == (gref.shape, gref.strides,
                                                             gref.ggml_type)
    ref = gref.numpy()
    for got in (first.numpy(), again.numpy()):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(bits(got), bits(want))
        np.testing.assert_array_equal(bits(got), bits(ref))
    # into out= of the result's type, and through the operators
    out = gcuda.empty(want.shape, want.dtype)
    for _ in range(2):
        r = getattr(ggml_cy, name)(da, db, out=out)
        assert r is out
        np.testing.assert_array_equal(bits(out.numpy()), bits(want))


def test_fast_path_views_and_transposes():
    a = rand((40, 30), np.float32)
    da = gcuda.asarray(a)
    v, t = da[::2, 1:], da.T
    for _ in range(2):
        np.testing.assert_array_equal((v * v).numpy(), a[::2, 1:] * a[::2, 1:])
        np.testing.assert_array_equal((t + t).numpy(), a.T + a.T)
        np.testing.assert_array_equal((-v).numpy(), -a[::2, 1:])
    assert plan_of("multiply", v, v)


@pytest.mark.parametrize("name", ["negative", "absolute", "exp", "sqrt", "relu", "silu"])
def test_fast_path_unary(name):
    a = np.abs(rand((300, 7), np.float32)) + 0.5
    da = gcuda.asarray(a)
    gops._plans.clear()
    r1 = getattr(ggml_cy, name)(da).numpy()
    r2 = getattr(ggml_cy, name)(da).numpy()
    assert plan_of(name, da)
    ref = general(name, (da,)).numpy()
    np.testing.assert_array_equal(bits(r1), bits(ref))
    np.testing.assert_array_equal(bits(r2), bits(ref))


def test_conversions_take_the_general_path():
    a32 = gcuda.asarray(rand((10,), np.float32))
    a16 = gcuda.asarray(rand((10,), np.float16))
    r = ggml_cy.add(a32, a16)
    assert r.dtype == np.float32
    assert plan_of("add", a32, a16) is False
    o64 = gcuda.empty((10,), np.float64)
    ggml_cy.add(a32, a32, out=o64)                  # out of another type: a cast after
    assert plan_of("add", a32, a32, o64) is False
    np.testing.assert_array_equal(o64.numpy(), (a32.numpy() + a32.numpy()).astype(np.float64))


def test_freed_operands_raise_after_the_plan_exists():
    a = gcuda.asarray(np.ones(100, np.float32))
    b = gcuda.asarray(np.ones(100, np.float32))
    o = gcuda.empty((100,), np.float32)
    ggml_cy.add(a, b)
    ggml_cy.add(a, b, out=o)
    a.free()
    with pytest.raises(gcuda.CudaError, match="freed"):
        ggml_cy.add(a, b)
    with pytest.raises(gcuda.CudaError, match="freed"):
        a + b
    a2 = gcuda.asarray(np.ones(100, np.float32))
    o.free()
    with pytest.raises(gcuda.CudaError, match="freed"):
        ggml_cy.add(a2, b, out=o)
    np.testing.assert_array_equal((a2 + b).numpy(), np.full(100, 2, np.float32))


def test_view_outside_its_buffer_raises_and_does_not_leak_the_result():
    gcuda.synchronize()
    a = gcuda.asarray(np.ones(64, np.float32))
    good = DeviceTensor(a.buffer, 0, a.ggml_type, (64,), (4,))
    bad = DeviceTensor(a.buffer, 4 * 32, a.ggml_type, (64,), (4,))   # runs 128 B past the end
    np.testing.assert_array_equal((good + good).numpy(), np.full(64, 2, np.float32))
    gcuda.empty_cache()
    before = gcuda.cached_bytes()
    for _ in range(3):             # first call builds the plan, later ones run from it
        with pytest.raises(gcuda.CudaError, match="not inside a live"):
            bad + good
    # the result allocated for each failed call went back to the cache (one block, reused)
    assert gcuda.cached_bytes() >= before + 256
    assert gcuda.cached_bytes() - before < 3 * 1024
    np.testing.assert_array_equal((good + good).numpy(), np.full(64, 2, np.float32))


def test_bad_inputs_still_raise():
    a = gcuda.asarray(np.ones(3, np.float32))
    b = gcuda.asarray(np.ones(4, np.float32))
    for _ in range(2):
        with pytest.raises(ValueError, match="broadcast"):
            a + b
        with pytest.raises(ValueError, match="shape"):
            ggml_cy.add(a, a, out=gcuda.empty((4,), np.float32))
        with pytest.raises(TypeError):
            ggml_cy.add(a, a, out=np.empty(3, np.float32))


def test_results_reuse_freed_blocks():
    a = gcuda.asarray(np.ones(4096, np.float32))
    r = a + a
    p = r.data_ptr
    del r                                           # its block goes back to the cache
    r2 = a + a
    assert r2.data_ptr == p
    np.testing.assert_array_equal(r2.numpy(), np.full(4096, 2, np.float32))


def test_empty_cache_releases_blocks():
    xs = [gcuda.empty((1 << 18,), np.float32) for _ in range(4)]
    del xs
    assert gcuda.cached_bytes() >= 4 << 20
    free_before, _ = gcuda._require().mem_info()
    gcuda.empty_cache()
    assert gcuda.cached_bytes() == 0
    free_after, _ = gcuda._require().mem_info()
    assert free_after >= free_before                # the blocks went back to the driver
    a = gcuda.asarray(np.arange(10, dtype=np.float32))
    np.testing.assert_array_equal((a + a).numpy(), np.arange(10, dtype=np.float32) * 2)


def test_plan_cache_is_bounded():
    a = gcuda.asarray(np.ones(8, np.float32))
    saved = gops._PLAN_MAX
    gops._PLAN_MAX = 16
    try:
        for n in range(1, 40):
            v = a[:n % 8 + 1]
            ggml_cy.add(v, v)
            ggml_cy.multiply(v, v)
            assert len(gops._plans) <= 16
    finally:
        gops._PLAN_MAX = saved


def test_threads_share_plans():
    host = [rand((513,), np.float32) for _ in range(8)]
    devs = [gcuda.asarray(h) for h in host]
    errors = []

    def work(k):
        try:
            for i in range(200):
                j = (k + i) % 8
                r = devs[j] + devs[(j + 1) % 8]
                if i % 50 == 0:
                    np.testing.assert_array_equal(r.numpy(), host[j] + host[(j + 1) % 8])
        except Exception as exc:       # reported below
            errors.append(exc)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("src_dtype,dst_dtype", [(np.float32, np.float32), (np.float16, np.float32),
                                                 (np.float32, np.float16), (np.int32, np.float64)])
def test_copyto_fast_path(src_dtype, dst_dtype):
    h = rand((24, 40), src_dtype)
    src = gcuda.asarray(h)
    for view, hv in ((src, h), (src.T, h.T), (src[::2, 3:], h[::2, 3:])):
        dst = gcuda.empty(hv.shape, dst_dtype)
        for _ in range(2):                           # plan made, then used
            gcuda.copyto(dst, view)
            want = hv.astype(dst_dtype)
            np.testing.assert_array_equal(bits(dst.numpy()), bits(want))
        assert gops._plans.get(__import__("ggml_cy.cuda._cuda", fromlist=["_"]).plan_key(
            "copyto", view, None, dst)) not in (None, False)
    # broadcasting copies take the general path
    row = gcuda.asarray(rand((40,), src_dtype))
    dst = gcuda.empty((24, 40), dst_dtype)
    gcuda.copyto(dst, row)
    np.testing.assert_array_equal(bits(dst.numpy()),
                                  bits(np.broadcast_to(row.numpy().astype(dst_dtype), (24, 40))))
    # a freed source raises once the plan exists
    s2 = gcuda.asarray(h)
    d2 = gcuda.empty(h.shape, dst_dtype)
    gcuda.copyto(d2, s2)
    s2.free()
    with pytest.raises(gcuda.CudaError, match="freed"):
        gcuda.copyto(d2, s2)
