"""The context arena: object layout, accounting, out-of-space, external buffers, reset."""
import gc
import mmap
import weakref

import numpy as np
import pytest

from ggml_cy import Context, ContextMemoryError, GGMLType, object_overhead, tensor_overhead
from ggml_cy.core import _core

OBJ = 32            # sizeof(ggml_object)
TENSOR = 336        # sizeof(ggml_tensor)
ALL_TYPES = [t for t in GGMLType if not t.is_quantized]   # quantized: test_quant_types.py


def pad16(n):
    return (n + 15) // 16 * 16


def test_documented_overheads():
    assert object_overhead() == OBJ
    assert tensor_overhead() == OBJ + TENSOR == 368
    assert Context.tensor_overhead() == tensor_overhead()
    assert Context(0).tensor_overhead() == tensor_overhead()


def _random_tensors(ctx, rng, n):
    made = []
    for _ in range(n):
        t = GGMLType(rng.choice(ALL_TYPES))
        nd = int(rng.integers(1, 5))
        ne = [int(x) for x in rng.integers(0, 7, size=nd)]
        made.append(ctx.new_tensor(t, ne))
    return made


def test_every_object_and_data_is_aligned_and_list_is_ordered():
    rng = np.random.default_rng(0)
    ctx = Context(1 << 20)
    tensors = _random_tensors(ctx, rng, 60)
    ctx._new_raw_object(_core.GGML_OBJECT_TYPE_WORK_BUFFER if hasattr(
        _core, "GGML_OBJECT_TYPE_WORK_BUFFER") else 2, 7)
    tensors += _random_tensors(ctx, rng, 20)
    assert ctx.mem_buffer_ptr % 16 == 0
    objs = ctx.objects()
    assert len(objs) == ctx.n_objects == 81
    expected_offs = OBJ  # the first payload follows the first header
    for o in objs:
        assert o.offs == expected_offs           # linked begin -> end, back to back
        assert o.offs % 16 == 0 and o.size % 16 == 0
        assert (ctx.mem_buffer_ptr + o.offs) % 16 == 0
        expected_offs = o.offs + o.size + OBJ
    assert ctx.used_mem() == objs[-1].offs + objs[-1].size
    for t in tensors:
        assert t.data_ptr % 16 == 0
    # tensor payload: struct then data
    tensor_objs = [o for o in objs if o.type == 0]
    for o, t in zip(tensor_objs, tensors):
        assert t.data_ptr == ctx.mem_buffer_ptr + o.offs + TENSOR
        assert o.size == TENSOR + pad16(t.nbytes)


@pytest.mark.parametrize("type_", ALL_TYPES, ids=str)
def test_used_mem_accounting_is_exact(type_):
    ctx = Context(1 << 16)
    used = 0
    for ne in [(1,), (3,), (5, 3), (2, 3, 4), (1, 2, 3, 5), (0, 4), (17,)]:
        t = ctx.new_tensor(type_, ne)
        used += tensor_overhead() + pad16(t.nbytes)
        assert t.nbytes == type_.size * int(np.prod(ne))
        assert ctx.used_mem() == used
    v = t.view_1d(4, 0)                  # a view: header only
    used += tensor_overhead()
    assert ctx.used_mem() == used
    assert v.nbytes == 4 * type_.size


def test_no_alloc_tensors_take_headers_only():
    ctx = Context(10 * tensor_overhead(), no_alloc=True)
    assert ctx.no_alloc
    for i in range(10):
        t = ctx.new_tensor_2d("f32", 1000, 1000)
        assert t.data_ptr == 0 and not t.has_data
        assert ctx.used_mem() == (i + 1) * tensor_overhead()
    with pytest.raises(ContextMemoryError):
        ctx.new_tensor_1d("f32", 1)
    with pytest.raises(RuntimeError, match="has no data"):
        t.numpy()


def test_no_alloc_is_settable():
    ctx = Context(1 << 12)
    ctx.no_alloc = True
    assert ctx.new_tensor_1d("f32", 8).data_ptr == 0
    ctx.no_alloc = False
    assert ctx.new_tensor_1d("f32", 8).data_ptr != 0


def test_out_of_space_then_continued_use():
    ctx = Context(tensor_overhead() + 64 + tensor_overhead() + 16)
    a = ctx.new_tensor_1d("f32", 16)           # 368 + 64
    used = ctx.used_mem()
    with pytest.raises(ContextMemoryError) as ei:
        ctx.new_tensor_1d("f32", 5)             # needs 368 + 32, only 384 left
    err = ei.value
    assert isinstance(err, MemoryError)
    assert err.needed == tensor_overhead() + 32 and err.available == 384
    assert "needed 400 bytes" in str(err) and "available 384 bytes" in str(err)
    assert ctx.used_mem() == used and ctx.n_objects == 1
    b = ctx.new_tensor_1d("f32", 4)             # exactly fills the pool
    assert ctx.used_mem() == ctx.mem_size
    b.numpy()[:] = 7
    a.numpy()[:] = 1
    assert (b.numpy() == 7).all() and (a.numpy() == 1).all()
    with pytest.raises(ContextMemoryError):
        ctx.new_tensor_1d("i8", 0)               # even an empty tensor needs a header
    with pytest.raises(ContextMemoryError):
        a.transpose()                            # views need a header too


def test_huge_sizes_raise_before_allocating():
    ctx = Context(1 << 12)
    with pytest.raises(OverflowError):
        ctx.new_tensor("f32", (2 ** 62, 4))
    with pytest.raises(OverflowError):
        ctx.new_tensor("f64", (2 ** 31, 2 ** 31, 2 ** 31))
    with pytest.raises(OverflowError):
        ctx.new_tensor("i8", (2 ** 63,))
    with pytest.raises(ContextMemoryError):     # fits int64, not this pool
        ctx.new_tensor("f32", (2 ** 40,))
    assert ctx.n_objects == 0 and ctx.used_mem() == 0
    with pytest.raises(OverflowError):
        Context(2 ** 64)
    with pytest.raises(MemoryError):
        Context(2 ** 62)


def test_zero_size_pool():
    ctx = Context(0)
    with pytest.raises(ContextMemoryError):
        ctx.new_tensor_1d("f32", 1)
    assert ctx.used_mem() == 0


@pytest.mark.parametrize("kind", ["numpy", "bytearray", "mmap", "numpy-unaligned"])
def test_external_buffer(kind):
    if kind == "numpy":
        buf = np.zeros(8192, dtype=np.uint8)
    elif kind == "numpy-unaligned":
        buf = np.zeros(8192 + 32, dtype=np.uint8)[3:3 + 8192]
    elif kind == "bytearray":
        buf = bytearray(8192)
    else:
        buf = mmap.mmap(-1, 8192)
    view = memoryview(buf).cast("B")
    base = np.frombuffer(view, dtype=np.uint8)
    start = base.ctypes.data
    ctx = Context(8192, buf)
    skip = ctx.mem_buffer_ptr - start
    assert ctx.mem_buffer_ptr % 16 == 0 and 0 <= skip < 16
    assert skip == (-start) % 16
    assert ctx.mem_size == 8192 - skip and not ctx.mem_buffer_owned
    t = ctx.tensor_from(np.arange(10, dtype=np.int32))
    offs = t.data_ptr - start
    assert 0 <= offs and offs + t.nbytes <= 8192
    assert base[offs:offs + 40].view(np.int32).tolist() == list(range(10))
    t.numpy()[:] = -5
    assert (base[offs:offs + 40].view(np.int32) == -5).all()
    del t, ctx, view, base
    gc.collect()


def test_external_buffer_default_size_is_whole_buffer():
    buf = np.zeros(1000, dtype=np.float64)     # 8000 bytes, aligned
    ctx = Context(None, buf)
    assert ctx.mem_size == 8000
    ctx = Context(mem_buffer=buf, mem_size=100)
    assert ctx.mem_size == 100


def test_external_buffer_is_kept_alive_and_exported():
    arr = np.zeros(4096, dtype=np.uint8)
    ref = weakref.ref(arr)
    ctx = Context(4096, arr)
    del arr
    gc.collect()
    assert ref() is not None                 # the context holds it
    t = ctx.tensor_from(np.ones(8, np.float32))
    assert (t.numpy() == 1).all()
    ba = bytearray(1024)
    ctx2 = Context(1024, ba)
    with pytest.raises(BufferError):         # exported while the context lives
        ba.extend(b"x")
    del ctx2
    gc.collect()
    ba.extend(b"x")                          # released with the context
    del t, ctx
    gc.collect()
    assert ref() is None


def test_reset_drops_objects_and_invalidates_wrappers():
    ctx = Context(1 << 14)
    a = ctx.tensor_from(np.arange(6, dtype=np.float32), name="a")
    arr = a.numpy()
    v = a.view_1d(2, 4)
    first_offsets = [o.offs for o in ctx.objects()]
    gen = ctx.generation
    ctx.reset()
    assert ctx.generation == gen + 1
    assert ctx.used_mem() == 0 and ctx.n_objects == 0 and ctx.tensors() == []
    for t in (a, v):
        with pytest.raises(RuntimeError, match="reset"):
            t.numpy()
        with pytest.raises(RuntimeError):
            t.ne
        with pytest.raises(RuntimeError):
            t.name = "x"
        with pytest.raises(RuntimeError):
            t.transpose()
        assert "stale" in repr(t)
    with pytest.raises(RuntimeError):
        ctx.view_1d(a, 1, 0)
    with pytest.raises(KeyError):
        ctx.get_tensor("a")
    assert arr.tolist() == [0, 1, 2, 3, 4, 5]  # memory itself stays valid
    b = ctx.new_tensor_1d("f32", 6)
    assert [o.offs for o in ctx.objects()] == first_offsets[:1]  # space is reused
    assert b.data_ptr == arr.ctypes.data
    assert a != b


def test_iteration_skips_non_tensor_objects():
    ctx = Context(1 << 14)
    a = ctx.new_tensor_1d("f32", 4)
    ctx._new_raw_object(1, 100)    # a graph
    b = ctx.new_tensor_1d("i8", 4)
    ctx._new_raw_object(2, 0)      # a work buffer
    assert ctx.n_objects == 4 and ctx.n_tensors == 2
    assert list(ctx) == [a, b] == ctx.tensors()
    assert [o.type for o in ctx.objects()] == [0, 1, 0, 2]


def test_reset_during_iteration_raises():
    ctx = Context(1 << 14)
    for _ in range(3):
        ctx.new_tensor_1d("f32", 4)
    it = iter(ctx)
    next(it)
    ctx.reset()
    with pytest.raises(RuntimeError, match="reset during iteration"):
        next(it)


def test_get_tensor_by_name():
    ctx = Context(1 << 14)
    a = ctx.new_tensor_1d("f32", 4, )
    a.name = "weights"
    b = ctx.new_tensor_1d("f32", 4, )
    b.name = "weights"                       # duplicates: the first one wins, as in ggml
    c = ctx.new_tensor("i32", (2,), name="ünïcødé")
    assert ctx.get_tensor("weights") == a
    assert ctx.get_tensor("ünïcødé") == c
    with pytest.raises(KeyError):
        ctx.get_tensor("missing")
    with pytest.raises(TypeError):
        ctx.get_tensor(3)


def test_subclass_with_its_own_constructor():
    class Sub(Context):
        def __init__(self, label, size):
            super().__init__(size)
            self.label = label

    s = Sub("x", 4096)
    t = s.new_tensor_1d("f32", 3)
    assert s.label == "x" and list(s) == [t] and t.context is s
    assert repr(s).startswith("Sub(")

    class Forgot(Context):
        def __init__(self):
            pass

    f = Forgot()
    with pytest.raises(RuntimeError, match="super"):
        f.new_tensor_1d("f32", 3)
    assert f.used_mem() == 0


def test_init_twice_refused():
    ctx = Context(64)
    with pytest.raises(RuntimeError):
        ctx.__init__(64)
    assert ctx.mem_size == 64
