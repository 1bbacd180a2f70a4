"""Lifetime: arrays and wrappers keep the pool alive; create/free cycles do not leak."""
import gc
import os
import weakref

import numpy as np
import pytest

from ggml_cy import Context


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _churn(ctx_size):
    """Puts other data where a freed pool would have been."""
    junk = [np.full(ctx_size // 8, 12345.0) for _ in range(8)]
    more = [Context(ctx_size) for _ in range(8)]
    for c in more:
        c.tensor_from(np.full(100, -1.0, np.float32))
    return junk, more


def test_array_outlives_context():
    ctx = Context(1 << 16)
    ref = weakref.ref(ctx)
    t = ctx.tensor_from(np.arange(1000, dtype=np.float32))
    arr = t.numpy()
    view_arr = t.view_1d(10, 40).numpy()
    sliced = arr[::7]
    del t, ctx
    gc.collect()
    assert ref() is not None                # the arrays hold the context
    keep = _churn(1 << 16)
    np.testing.assert_array_equal(arr, np.arange(1000, dtype=np.float32))
    np.testing.assert_array_equal(view_arr, np.arange(10, 20, dtype=np.float32))
    np.testing.assert_array_equal(sliced, np.arange(0, 1000, 7, dtype=np.float32))
    del arr, view_arr
    gc.collect()
    assert ref() is not None                # the slice still holds it
    del sliced, keep
    gc.collect()
    assert ref() is None                    # and then it goes


def test_tensor_wrappers_hold_the_context():
    ctx = Context(1 << 12)
    ref = weakref.ref(ctx)
    v = ctx.new_tensor("f32", (4, 4)).transpose()
    del ctx
    gc.collect()
    assert ref() is not None and v.context is ref()
    v.numpy()[:] = 3
    assert (v.view_src.numpy() == 3).all()
    del v
    gc.collect()
    assert ref() is None


def test_arrays_stay_valid_after_reset():
    ctx = Context(1 << 12)
    arr = ctx.tensor_from(np.arange(16, dtype=np.int32)).numpy()
    ctx.reset()
    ctx.tensor_from(np.zeros(16, np.int32))   # reuses the memory: same bytes, new owner
    assert arr.tolist() == [0] * 16           # shared memory, still valid to read
    del ctx
    gc.collect()
    assert arr.sum() == 0


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_create_free_cycles_do_not_grow_rss():
    def cycle(i):
        ctx = Context(1 << 14)
        a = ctx.tensor_from(np.full((8, 8), i, dtype=np.float32), name="a")
        b = ctx.new_tensor_2d("i32", 8, 8)
        v = a.transpose()
        arr = v.numpy()
        s = a.view_1d(4, 16).numpy()
        r = a.reshape(64).permute(0, 1, 2, 3)
        assert arr[0, 0] == i and s[0] == i and b.ne[0] == 8 and r.nelements == 64
        list(ctx)
        ctx.get_tensor("a")
        if i % 2:
            ctx.reset()

    for i in range(2000):                     # warm up allocator pools and caches
        cycle(i)
    gc.collect()
    before = _rss_bytes()
    for i in range(10_000):
        cycle(i)
    gc.collect()
    grown = _rss_bytes() - before
    assert grown < 2 * 1024 * 1024, f"RSS grew by {grown} bytes over 10,000 cycles"


def test_external_buffer_cycles_release_the_buffer():
    buf = bytearray(1 << 12)
    for _ in range(1000):
        ctx = Context(None, buf)
        ctx.tensor_from(np.ones(4, np.float32)).numpy()
        del ctx
    gc.collect()
    buf.extend(b"ok")                         # no export left behind


def test_buffer_hook_guards_placed_tensors():
    graph = pytest.importorskip("ggml_cy.graph._graph")
    from ggml_cy.core import _core
    host = np.arange(8, dtype=np.float32)
    ctx = Context(1 << 12, no_alloc=True)
    t = ctx.new_tensor_1d("f32", 8)
    graph.place_tensor(t, host.ctypes.data, 1234)       # a fake backend buffer handle
    v = t.view_1d(4, 8)
    assert v.data_ptr == host.ctypes.data + 8           # views follow their base's data

    class Keeper:
        pass

    keeper = Keeper()
    seen = []
    try:
        _core.set_buffer_hook(lambda h: (seen.append(h), None)[1])
        with pytest.raises(RuntimeError, match="device memory"):
            t.numpy()
        with pytest.raises(RuntimeError, match="device memory"):
            v.numpy()
        assert seen == [1234, 1234]
        _core.set_buffer_hook(lambda h: keeper)
        arr = v.numpy()
        assert arr.tolist() == [2, 3, 4, 5]
        ref = weakref.ref(keeper)
        del keeper
        gc.collect()
        assert ref() is not None                        # the array holds the buffer keeper
        del arr
        gc.collect()
        assert ref() is None
    finally:
        _core.set_buffer_hook(None)
    with pytest.raises(TypeError):
        _core.set_buffer_hook(5)
