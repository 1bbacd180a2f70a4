"""tensor_set / tensor_get on strided tensors (issue 17, memory safety): views with
negative or gapped strides move their own elements, through their strides, and never
touch bytes outside the view; byte ranges of a strided tensor are refused clearly.

Before the fix, tensor_set on view_2d(base, 4, 4, -16, 48) copied 64 contiguous bytes from
the view's data pointer (the base's last row): 48 bytes past the base, over the next
arena object's header and tensor struct; ctx.objects() then crashed."""
import numpy as np
import pytest

from ggml_cy import backend as B
from ggml_cy.graph.context import Context


def _backwards_view(ctx):
    base = ctx.new_tensor_1d("f32", 16)
    guard = ctx.new_tensor_1d("f32", 16)        # the next arena object
    v = ctx.view_2d(base, 4, 4, -16, 48)        # rows 3, 2, 1, 0 of base
    return base, guard, v


def _expected_rows(flat):
    return flat.reshape(4, 4)[::-1]


@pytest.mark.parametrize("placed", ["context", "cpu_buffer"])
def test_issue_example_negative_stride(placed):
    ctx = Context(1 << 16, no_alloc=(placed == "cpu_buffer"))
    base, guard, v = _backwards_view(ctx)
    if placed == "cpu_buffer":
        B.alloc_ctx_tensors(ctx, B.cpu_init(1))
    B.tensor_set(base, np.zeros(16, np.float32))
    B.tensor_set(guard, np.full(16, 7, np.float32))
    objects_before = ctx.objects()
    # the issue's call: 16 fives into the backwards view
    B.tensor_set(v, np.full(16, 5, np.float32).tobytes())
    np.testing.assert_array_equal(B.tensor_get(base), np.full(16, 5, np.float32))
    np.testing.assert_array_equal(B.tensor_get(guard), np.full(16, 7, np.float32))
    assert ctx.objects() == objects_before          # headers intact (used to crash)
    # distinct values: element order follows the strides
    vals = np.arange(16, dtype=np.float32).reshape(4, 4)
    B.tensor_set(v, vals)
    np.testing.assert_array_equal(B.tensor_get(base), vals[::-1].reshape(-1))
    np.testing.assert_array_equal(B.tensor_get(v), vals)
    np.testing.assert_array_equal(B.tensor_get(guard), np.full(16, 7, np.float32))
    assert ctx.objects() == objects_before


def test_gapped_view_leaves_gaps_alone():
    ctx = Context(1 << 16)
    base = ctx.new_tensor_1d("f32", 16)
    B.tensor_set(base, np.full(16, -1, np.float32))
    v = ctx.view_2d(base, 2, 4, 16, 4)            # elements 1,2 | 5,6 | 9,10 | 13,14
    B.tensor_set(v, np.arange(8, dtype=np.float32).reshape(4, 2))
    want = np.full(16, -1, np.float32)
    want[[1, 2, 5, 6, 9, 10, 13, 14]] = np.arange(8)
    np.testing.assert_array_equal(B.tensor_get(base), want)
    np.testing.assert_array_equal(B.tensor_get(v), np.arange(8, dtype=np.float32).reshape(4, 2))


def test_permuted_and_negative_inner_stride():
    ctx = Context(1 << 16)
    base = ctx.new_tensor_2d("f32", 4, 3)        # numpy shape (3, 4)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    B.tensor_set(base, x)
    t = ctx.transpose(base)
    np.testing.assert_array_equal(B.tensor_get(t), x.T)
    B.tensor_set(t, (x.T * 10).copy())
    np.testing.assert_array_equal(B.tensor_get(base), x * 10)


def test_strided_matches_numpy_random():
    rng = np.random.default_rng(17)
    for _ in range(200):
        ctx = Context(1 << 16)
        n = int(rng.integers(8, 64))
        base = ctx.new_tensor_1d("f32", n)
        guard = ctx.new_tensor_1d("f32", 4)
        init = rng.standard_normal(n).astype(np.float32)
        B.tensor_set(base, init)
        B.tensor_set(guard, np.full(4, 9, np.float32))
        ne0 = int(rng.integers(1, 4))
        ne1 = int(rng.integers(1, 4))
        nb1 = int(rng.integers(-4, 5)) * 4
        lo = min(0, (ne1 - 1) * nb1)
        hi = max(0, (ne1 - 1) * nb1) + ne0 * 4
        if hi - lo > n * 4:
            continue
        offset = -lo + int(rng.integers(0, n * 4 - (hi - lo) + 1)) // 4 * 4
        v = ctx.view_2d(base, ne0, ne1, nb1, offset)
        ref = np.lib.stride_tricks.as_strided(init[offset // 4:], (ne1, ne0), (nb1, 4)) \
            if nb1 >= 0 else None
        got = B.tensor_get(v)
        want = np.array([[init[(offset + i1 * nb1) // 4 + i0] for i0 in range(ne0)]
                         for i1 in range(ne1)], np.float32)
        np.testing.assert_array_equal(got.reshape(ne1, ne0), want)
        if ref is not None:
            np.testing.assert_array_equal(ref, want)
        new = rng.standard_normal(ne0 * ne1).astype(np.float32)
        overlap = ne1 > 1 and abs(nb1) < ne0 * 4
        if overlap:
            with pytest.raises(ValueError, match="overlap"):
                B.tensor_set(v, new)
            np.testing.assert_array_equal(B.tensor_get(base), init)
            continue
        B.tensor_set(v, new.reshape(want.shape) if got.ndim == 2 else new)
        after = init.copy()
        for i1 in range(ne1):
            for i0 in range(ne0):
                after[(offset + i1 * nb1) // 4 + i0] = new[i1 * ne0 + i0]
        np.testing.assert_array_equal(B.tensor_get(base), after)
        np.testing.assert_array_equal(B.tensor_get(guard), np.full(4, 9, np.float32))


def test_strided_byte_ranges_refused():
    ctx = Context(1 << 16)
    base, guard, v = _backwards_view(ctx)
    B.tensor_set(base, np.zeros(16, np.float32))
    with pytest.raises(ValueError, match="strided"):
        B.tensor_set(v, np.full(4, 5, np.float32).tobytes())          # too few bytes
    with pytest.raises(ValueError, match="strided"):
        B.tensor_set(v, np.full(16, 5, np.float32).tobytes(), offset=4)
    with pytest.raises(ValueError, match="strided"):
        B.tensor_set(v, np.full(17, 5, np.float32).tobytes())
    with pytest.raises(ValueError, match="strided"):
        B.tensor_get(v, 0, 16)
    with pytest.raises(ValueError, match="strided"):
        B.tensor_get(v, 16)
    with pytest.raises(ValueError):
        B.tensor_get(v, -4, 4)
    np.testing.assert_array_equal(B.tensor_get(base), np.zeros(16, np.float32))
    # whole-tensor get with explicit offset 0 / size = all bytes is fine
    assert B.tensor_get(v, 0, 64).shape == (4, 4)


def test_broadcast_view_reads_but_refuses_writes():
    ctx = Context(1 << 16)
    base = ctx.new_tensor_1d("f32", 4)
    B.tensor_set(base, np.arange(4, dtype=np.float32))
    v = ctx.view_2d(base, 4, 3, 0, 0)            # the same row three times
    np.testing.assert_array_equal(B.tensor_get(v), np.tile(np.arange(4, dtype=np.float32), (3, 1)))
    with pytest.raises(ValueError, match="overlap"):
        B.tensor_set(v, np.zeros((3, 4), np.float32))
    np.testing.assert_array_equal(B.tensor_get(base), np.arange(4, dtype=np.float32))


def test_empty_strided_view():
    ctx = Context(1 << 16)
    base = ctx.new_tensor_1d("f32", 16)
    v = ctx.view_2d(base, 0, 4, -16, 48)
    assert B.tensor_get(v).size == 0
    B.tensor_set(v, b"")


class _FakeDeviceBuffer(B.Buffer):
    """Device-like buffer (not host readable) over host memory: exercises the
    read-modify-write path that the CUDA buffer takes, with exact bounds checks."""
    host_readable = False

    def _alloc(self, size):
        self._mem = np.zeros(size, np.uint8)
        self.calls = []
        return self._mem.ctypes.data

    def _span(self, tensor, offset, size):
        start = tensor.data_ptr - self.base + offset
        assert 0 <= start and start + size <= self.size, "out of the buffer"
        return start

    def set_tensor(self, tensor, data, offset):
        start = self._span(tensor, offset, data.size)
        self.calls.append(("set", start, data.size))
        self._mem[start:start + data.size] = data

    def get_tensor(self, tensor, offset, size):
        start = self._span(tensor, offset, size)
        self.calls.append(("get", start, size))
        return self._mem[start:start + size].copy()


class _FakeBufferType(B.BufferType):
    name = "FAKE"
    buffer_class = _FakeDeviceBuffer


class _FakeBackend(B.Backend):
    name = "FAKE"

    def get_default_buffer_type(self):
        return _FakeBufferType()


def test_device_path_negative_stride():
    ctx = Context(1 << 16, no_alloc=True)
    base, guard, v = _backwards_view(ctx)
    buf = B.alloc_ctx_tensors(ctx, _FakeBackend())
    B.tensor_set(base, np.zeros(16, np.float32))
    B.tensor_set(guard, np.full(16, 7, np.float32))
    vals = np.arange(16, dtype=np.float32).reshape(4, 4)
    buf.calls.clear()
    B.tensor_set(v, vals)
    got_v = B.tensor_get(v)
    # every device transfer of the view stayed inside the base's 64 bytes
    base_start = base.data_ptr - buf.base
    assert buf.calls and all(base_start <= start and start + size <= base_start + 64
                             for _, start, size in buf.calls)
    np.testing.assert_array_equal(got_v, vals)
    np.testing.assert_array_equal(B.tensor_get(base), vals[::-1].reshape(-1))
    np.testing.assert_array_equal(B.tensor_get(guard), np.full(16, 7, np.float32))
