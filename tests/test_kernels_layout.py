"""Kernel layer, layouts: ggml's tiling broadcast, strides (negative, zero, transposed),
the thread split, copies between shapes and types, FP exception flags, merge_dims, and
refusal of bad descriptors."""
import itertools
import warnings

import numpy as np
import pytest

from ggml_cy.cpu import _kernels as K


def bits_equal(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        return np.array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}"))
    return np.array_equal(a, b)


@pytest.fixture
def small_parallel(kernel_tuning):
    """Make tiny arrays take the parallel-region and non-temporal paths."""
    kernel_tuning(par_min=8, par_min_heavy=8, nt_min_bytes=64, nt_min_row_bytes=64, llc_bytes=0)


# --------------------------------------------------------------------------- tiling
# dst ne [10,5,4,3] (numpy shape (3,4,5,10)); per dim, src1 sizes dividing it
DST_SHAPE = (3, 4, 5, 10)
TILE_SIZES = [(1, 3), (1, 2, 4), (1, 5), (1, 2, 5, 10)]


def tiled_cases():
    for sizes in itertools.product(*TILE_SIZES):
        yield pytest.param(sizes, id="x".join(map(str, sizes)))


@pytest.mark.parametrize("src_shape", list(tiled_cases()))
def test_ggml_tiling_matches_np_tile(src_shape):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(DST_SHAPE).astype(np.float32)
    b = rng.standard_normal(src_shape).astype(np.float32)
    reps = tuple(d // s for d, s in zip(DST_SHAPE, src_shape))
    ref = a + np.tile(b, reps)
    out = np.empty(DST_SHAPE, np.float32)
    K._apply("ADD", out, a, b)
    assert bits_equal(out, ref)
    # src0 tiled too (the contract allows any source to tile)
    out2 = np.empty(DST_SHAPE, np.float32)
    K._apply("SUB", out2, b, a)
    assert bits_equal(out2, np.tile(b, reps) - a)


def test_tiling_two_sources_not_nesting_uses_general_path():
    # dim of 12 tiled by 4 (src0) and 6 (src1): no common refinement
    a = np.arange(4, dtype=np.float64)
    b = np.arange(6, dtype=np.float64) * 10
    out = np.empty(12)
    K._apply("ADD", out, a, b)
    assert np.array_equal(out, np.tile(a, 3) + np.tile(b, 2))


def test_tiling_bad_divisor_refused():
    out = np.empty((3, 10), np.float32)
    with pytest.raises(ValueError):
        K._apply("ADD", out, np.ones((3, 10), np.float32), np.ones((3, 3), np.float32))


# --------------------------------------------------------------------------- strides
def layouts(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    base = (rng.standard_normal(shape) * 5).astype(dtype)
    yield "contig", base
    yield "fortran", np.asfortranarray(base)
    yield "negative", np.ascontiguousarray(base[::-1, ::-1])[::-1, ::-1]
    yield "transposed", np.ascontiguousarray(base.T).T
    big = np.zeros((shape[0] * 2, shape[1] * 3), dtype)
    big[::2, ::3] = base
    yield "strided", big[::2, ::3]
    yield "zero_stride", np.broadcast_to(base[:1], shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.uint8])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_strided_operands(dtype, n_threads, small_parallel):
    shape = (37, 29)
    for (na, a), (nb_, b) in itertools.product(layouts(shape, dtype, 1), layouts(shape, dtype, 2)):
        with np.errstate(all="ignore"):
            ref = np.multiply(a, b)
        for out_layout in ("c", "f", "neg"):
            if out_layout == "c":
                out = np.empty(shape, dtype)
            elif out_layout == "f":
                out = np.empty(shape, dtype, order="F")
            else:
                out = np.empty(shape, dtype)[::-1]
            K._apply("MUL", out, a, b, n_threads=n_threads)
            assert bits_equal(np.ascontiguousarray(out), ref), (na, nb_, out_layout)


@pytest.mark.parametrize("split", [1, 2, 3, 7, 64])
@pytest.mark.parametrize("shape", [(1, 100000), (3, 50001), (1000, 3), (7, 7), (1, 1), (2, 4097)])
def test_work_split_covers_every_element_once(split, shape):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    out = np.full(shape, np.nan, np.float32)
    K._apply("ADD", out, a, np.float32(1.0) * np.ones(shape[-1:], np.float32), split=split)
    assert bits_equal(out, a + 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int64])
def test_transposed_operand_blocked_path(dtype):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((300, 270)) * 20).astype(dtype)
    b = (rng.standard_normal((270, 300)) * 20).astype(dtype)
    out = np.empty((270, 300), dtype)
    assert K._plan_info("ADD", out, a.T, b)["transposed"]
    for split in (1, 2, 3):
        K._apply("ADD", out, a.T, b, split=split)
        assert bits_equal(out, a.T + b)
    out2 = np.empty((270, 300), dtype)
    K._apply("MUL", out2, a.T, b.T.copy().T, n_threads=2)      # both operands transposed
    assert bits_equal(out2, a.T * b)


def test_non_temporal_path(small_parallel):
    rng = np.random.default_rng(4)
    for n in (1, 15, 64, 1000, 4099):
        for off in (0, 1, 3):
            a = rng.standard_normal(n + 8).astype(np.float32)[off:off + n]
            b = rng.standard_normal(n + 8).astype(np.float32)[off:off + n]
            buf = np.empty(n + 8, np.float32)
            out = buf[off:off + n]
            K._apply("ADD", out, a, b, n_threads=2)
            assert bits_equal(out, a + b)
            h = np.empty(n + 8, np.float16)[off:off + n]
            K._apply("CPY", h, a, n_threads=2)
            assert bits_equal(h, a.astype(np.float16))


def _special_values(dtype, n, rng, payloads=True):
    """Random values salted with NaNs (two payloads and both signs, unless payloads=False),
    +-0, +-inf, tiny and huge."""
    x = rng.standard_normal(n).astype(dtype)
    f = np.finfo(dtype)
    specials = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, f.tiny, -f.max, f.max,
                         1.0, 1.0], dtype)
    u = specials.view(f"u{np.dtype(dtype).itemsize}").copy()
    if payloads:
        u[1] |= 1      # another NaN payload
    else:
        u[1] = u[0]    # one NaN, one sign
    specials = u.view(dtype)
    idx = rng.integers(0, n, size=max(1, n // 4))
    x[idx] = specials[rng.integers(0, len(specials), size=len(idx))]
    return x


NT_OPS = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "DIV": np.divide,
          "MAX": np.maximum, "MIN": np.minimum}


@pytest.mark.parametrize("op", sorted(NT_OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_non_temporal_one_pass_rows(op, dtype, small_parallel):
    """Streamed outputs (small_parallel: every output streams) take the one-pass rows of
    kernels_stream.h / kern_h16_binary: bitwise numpy (float32/float64: NaN payloads of two
    NaN operands included) at every length and offset (scalar
    head to the 64-byte boundary, vector body, tail), for a full b, a scalar b (stride 0)
    and a row broadcast down a matrix, with NaN payloads, signed zeros and infinities."""
    rng = np.random.default_rng(7)
    ref_fn = NT_OPS[op]
    es = np.dtype(dtype).itemsize
    # float16: numpy's half loops give the SECOND NaN of two (its compiler swapped the
    # float operands), ggml_cy's the first; the baseline build streams through the staged
    # generic rows (see below): one NaN payload there
    pl = dtype != np.float16 and K._one_pass_nt()
    for n in (1, 7, 16, 33, 100, 1029):
        for off in (0, 1, 5):
            buf = np.zeros(n + 16, dtype)
            out = buf[off:off + n]
            a = _special_values(dtype, n + 16, rng, pl)[off:off + n]
            b = _special_values(dtype, n + 16, rng, pl)[16 - off:16 - off + n]
            with np.errstate(all="ignore"):
                ref = ref_fn(a, b)
                K._apply(op, out, a, b, n_threads=2)
                assert bits_equal(out, ref), (op, n, off)
                s = _special_values(dtype, 3, rng, pl)[2:3]
                K._apply(op, out, a, s, n_threads=2)
                assert bits_equal(out, ref_fn(a, s)), (op, n, off, "scalar")
    info = K._plan_info(op, np.empty(4096, dtype), np.ones(4096, dtype), np.ones(4096, dtype),
                        n_threads=2)
    assert info["nt"]
    # a row broadcast down a matrix, and an output not even element-aligned (staged route).
    # One NaN payload here: with two NaN operands of different payloads the generic rows
    # (compiler-vectorized + and *) may return either one's, numpy the first's.
    a = _special_values(dtype, 64 * 200, rng, payloads=False).reshape(64, 200)
    row = _special_values(dtype, 200, rng, payloads=False)
    out = np.empty((64, 200), dtype)
    raw = np.zeros(64 * 200 * es + 1, np.uint8)[1:].view(dtype).reshape(64, 200)
    with np.errstate(all="ignore"):
        ref = ref_fn(a, row)
        K._apply(op, out, a, row, n_threads=2)
        assert bits_equal(out, ref)
        K._apply(op, raw, a, row, n_threads=2)
        assert bits_equal(raw, ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int64])
def test_non_temporal_same_type_copy(dtype, small_parallel):
    """A streamed copy between tensors of one type goes straight from the source rows
    (kern_stream_copy): permuted copies with rows of any length and byte offset."""
    rng = np.random.default_rng(3)
    for shape in ((2, 3, 5, 7), (3, 4, 6, 64), (2, 8, 3, 33)):
        x = (rng.standard_normal(shape) * 50).astype(dtype)
        for off in (0, 1, 3):
            buf = np.zeros(x.size + 8, dtype)
            out = buf[off:off + x.size].reshape(shape[0], shape[2], shape[1], shape[3])
            src = x.transpose(0, 2, 1, 3)
            K._apply("CPY", out, src, n_threads=2)
            assert bits_equal(out, np.ascontiguousarray(src)), (shape, off)
            assert not buf[:off].any() and not buf[off + x.size:].any()
    out = np.empty((8, 64, 128, 64), np.float32)
    info = K._plan_info("CPY", out, np.ones((8, 128, 64, 64), np.float32).transpose(0, 2, 1, 3),
                        n_threads=2)
    assert info["nt"]


@pytest.mark.parametrize("op", ["ADD", "MUL"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_operand_order_plain_rows(op, dtype):
    """Contiguous float32/float64 + and * (plain stores) give the first operand's NaN of two,
    as numpy's loops do (kernels_stream.h's ordered rows; the compiler swapped them)."""
    if not K._one_pass_nt():
        pytest.skip("the baseline build runs the generic rows")
    rng = np.random.default_rng(11)
    for n in (1, 5, 16, 40, 1000, 70001):
        a = _special_values(dtype, n, rng)
        b = _special_values(dtype, n, rng)
        out = np.empty(n, dtype)
        with np.errstate(all="ignore"):
            K._apply(op, out, a, b, n_threads=2)
            assert bits_equal(out, NT_OPS[op](a, b)), n
            K._apply(op, out, a, b[:1], n_threads=2)
            assert bits_equal(out, NT_OPS[op](a, b[:1])), n


@pytest.mark.parametrize("n_threads", [1, 2])
def test_non_temporal_one_pass_flags(n_threads, small_parallel):
    """The one-pass streamed rows raise numpy's flags (and none for maximum of a NaN)."""
    for dt in (np.float32, np.float64):
        z = np.zeros(300, dt)
        out = np.empty(300, dt)
        assert K._apply("DIV", out, np.ones(300, dt), z, n_threads=n_threads) & DBZ
        assert K._apply("DIV", out, z, z, n_threads=n_threads) & INV
        big = np.full(300, np.finfo(dt).max, dt)
        assert K._apply("MUL", out, big, big, n_threads=n_threads) & OVF
        assert K._apply("ADD", out, big, -big, n_threads=n_threads) == 0
        nan = np.full(300, np.nan, dt)
        assert K._apply("MAX", out, nan, np.ones(300, dt), n_threads=n_threads) == 0
        assert K._apply("MIN", out, np.ones(300, dt), nan, n_threads=n_threads) == 0


def test_inplace_operands():
    a = np.arange(1000, dtype=np.float32)
    ref = a + a[::-1]
    b = a[::-1].copy()
    K._apply("ADD", a, a, b)
    assert bits_equal(a, ref)


# --------------------------------------------------------------------------- copies
TYPES = [np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64,
         np.uint8, np.bool_]


def copy_sample(dtype):
    x = np.array([0.0, -0.0, 1.5, -1.5, 2.5, 300.0, -300.0, 65504.0, 70000.0, 1e-8,
                  np.nan, np.inf, -np.inf, 1e20, -2.7, 127.0, 128.0, 255.0, 256.0, -1.0])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.tile(x, 5).astype(dtype)


@pytest.mark.parametrize("src", TYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dst", TYPES, ids=lambda d: np.dtype(d).name)
def test_copy_every_type_pair(src, dst):
    x = copy_sample(src)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = x.astype(dst)
    for view in (x, x[::-2]):
        out = np.empty(view.shape, dst)
        K._apply("CPY", out, view)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert bits_equal(out, view.astype(dst))
    assert ref.shape == x.shape


def test_copy_float64_to_float16_rounds_once():
    # values that double rounding (f64 -> f32 -> f16) would get wrong
    x = np.array([1.0 + 2.0 ** -11 + 2.0 ** -40, 2049.0000000001, 0.00006103515625 * (1 + 2 ** -11 + 2 ** -30)])
    out = np.empty(3, np.float16)
    K._apply("CPY", out, x)
    assert bits_equal(out, x.astype(np.float16))


def test_copy_float_to_bf16_and_back():
    x = copy_sample(np.float32)
    out = np.empty(x.shape, np.uint16)
    K._apply("CPY", out, x, types=(K.TYPE_BF16, K.TYPE_F32))
    u = x.view(np.uint32).astype(np.uint64)
    ref = np.where(np.isnan(x), ((u >> 16) | 0x40), ((u + 0x7FFF + ((u >> 16) & 1)) >> 16)).astype(np.uint16)
    assert np.array_equal(out, ref)
    back = np.empty(x.shape, np.float32)
    K._apply("CPY", back, out, types=(K.TYPE_F32, K.TYPE_BF16))
    assert np.array_equal(back.view(np.uint32), out.astype(np.uint32) << 16)


@pytest.mark.parametrize("src_shape,dst_shape", [
    ((6, 4), (24,)), ((2, 3, 4), (4, 6)), ((4, 6), (3, 8)), ((5, 7), (7, 5)), ((1, 12), (3, 4, 1)),
])
@pytest.mark.parametrize("transpose", [False, True])
def test_reshaping_copy(src_shape, dst_shape, transpose):
    x = np.arange(np.prod(src_shape), dtype=np.float32).reshape(src_shape)
    if transpose:
        x = np.ascontiguousarray(x.T).T   # same logical array, Fortran memory
    out = np.empty(dst_shape, np.float32)
    K._apply("CPY", out, x)
    # ggml's flat order: ne[0] fastest == numpy's C order of the logical array
    assert np.array_equal(out, x.reshape(-1).reshape(dst_shape))


def test_permute_copy():
    x = np.random.default_rng(0).standard_normal((4, 8, 6, 5)).astype(np.float32)
    v = x.transpose(0, 2, 1, 3)
    out = np.empty(v.shape, np.float32)
    K._apply("CONT", out, v, n_threads=2)
    assert bits_equal(out, np.ascontiguousarray(v))


def test_copy_element_count_mismatch_refused():
    with pytest.raises(ValueError):
        K._apply("CPY", np.empty(5, np.float32), np.ones(6, np.float32))


# --------------------------------------------------------------------------- FE flags
INV, DBZ, OVF = K.FE_INVALID_FLAG, K.FE_DIVBYZERO_FLAG, K.FE_OVERFLOW_FLAG


@pytest.mark.parametrize("n_threads", [1, 2])
def test_fe_flags(n_threads, small_parallel):
    def run(op, a, b=None, out_dtype=None):
        a = np.asarray(a)
        out = np.empty(a.shape, out_dtype or a.dtype)
        if b is None:
            return K._apply(op, out, a, n_threads=n_threads)
        return K._apply(op, out, a, np.asarray(b, a.dtype), n_threads=n_threads)

    z = np.zeros(40)
    assert run("DIV", np.ones(40), z) & DBZ
    assert run("DIV", z, z) & INV
    assert run("ADD", np.ones(40), np.ones(40)) == 0
    assert run("MUL", np.full(40, 1e300), np.full(40, 1e300)) & OVF
    for dt in (np.int8, np.int32, np.int64, np.uint8):
        a = np.arange(40).astype(dt)
        assert run("FLOOR_DIV", a, np.zeros(40, dt)) & DBZ
        assert run("MOD", a, np.zeros(40, dt)) & DBZ
        assert run("FMOD", a, np.zeros(40, dt)) & DBZ
        assert run("FLOOR_DIV", a, np.ones(40, dt)) == 0
    mn = np.full(40, np.iinfo(np.int32).min, np.int32)
    out = np.empty(40, np.int32)
    assert K._apply("FLOOR_DIV", out, mn, np.full(40, -1, np.int32), n_threads=n_threads) & OVF
    assert (out == np.iinfo(np.int32).min).all()
    assert K._apply("MOD", out, mn, np.full(40, -1, np.int32), n_threads=n_threads) == 0
    assert (out == 0).all()
    nan = np.full(40, np.nan)
    assert run("LT", nan, np.ones(40), out_dtype=bool) == 0
    assert run("MAX", nan, np.ones(40)) == 0
    assert run("SQRT", -np.ones(40)) & INV
    assert run("LOG", z) & DBZ
    assert run("CPY", nan, out_dtype=np.int32) & INV
    assert run("CPY", np.full(40, 1e300), out_dtype=np.float32) & OVF
    assert run("CPY", np.full(40, 1e10, np.float32), out_dtype=np.float16) & OVF
    assert run("ADD", np.full(40, 60000, np.float16), np.full(40, 60000, np.float16)) & OVF
    assert run("CPY", np.ones(40), out_dtype=np.float32) == 0


def test_negative_integer_power_status_threads(small_parallel):
    a = np.arange(5000, dtype=np.int64) % 7
    b = np.ones(5000, np.int64)
    b[4321] = -2
    out = np.empty(5000, np.int64)
    assert K._apply("POW", out, a, b, n_threads=2) & K.STATUS_NEG_INT_POWER
    b[4321] = 2
    assert K._apply("POW", out, a, b, n_threads=2) == 0
    assert np.array_equal(out, np.power(a, b))


def test_negative_integer_power_status():
    a = np.arange(10, dtype=np.int32)
    b = np.array([1, 2, -1, 3, 0, 1, 1, 1, 1, 1], np.int32)
    out = np.empty(10, np.int32)
    assert K._apply("POW", out, a, b) & K.STATUS_NEG_INT_POWER
    b[2] = 1
    assert K._apply("POW", out, a, b) & K.STATUS_NEG_INT_POWER == 0
    assert np.array_equal(out, np.power(a, b))


# --------------------------------------------------------------------------- merge_dims
def test_merge_dims():
    # contiguous 3-D with one broadcast operand along dim 1
    shape, strides = K._merge_dims((4, 5, 6), [(120, 24, 4), (120, 24, 4), (24, 0, 4)])
    assert shape == (4, 5, 6) or len(shape) <= 3
    # fully contiguous collapses to 1-D
    shape, strides = K._merge_dims((4, 5, 6), [(120, 24, 4), (120, 24, 4)])
    assert shape == (120,) and strides == [(4,), (4,)]
    # size-1 dims dropped, zero-size becomes (0,)
    shape, strides = K._merge_dims((1, 7, 1), [(28, 4, 4)])
    assert shape == (7,) and strides == [(4,)]
    assert K._merge_dims((3, 0, 2), [(8, 8, 4)])[0] == (0,)
    assert K._merge_dims((1, 1), [(0, 0)])[0] == ()
    # broadcast dims merge with each other
    shape, strides = K._merge_dims((2, 3, 4), [(48, 16, 4), (0, 0, 4)])
    assert shape == (6, 4) and strides == [(16, 4), (0, 4)]
    # 64-dim numpy layouts fold
    shape, strides = K._merge_dims((1,) * 30 + (2,) * 20, [tuple([0] * 30 + [2 ** (19 - i) * 4 for i in range(20)])])
    assert shape == (2 ** 20,)


# --------------------------------------------------------------------------- bad input
def test_bad_descriptors_refused():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError):
        K._apply("ADD", np.empty((2, 3, 1, 1, 1), np.float32), a, a)       # > 4 dims
    ro = np.empty((2, 3), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        K._apply("ADD", ro, a, a)
    with pytest.raises(ValueError):
        K._apply("MUL_MAT", np.empty((2, 3), np.float32), a, a)            # not elementwise
    with pytest.raises(ValueError):
        K._apply(999, np.empty((2, 3), np.float32), a, a)
    with pytest.raises(ValueError):
        K._apply("ADD", np.empty((2, 3), np.float32), np.ones((2, 0), np.float32), a)
    # empty outputs are fine and touch nothing
    assert K._apply("ADD", np.empty((0, 3), np.float32), np.ones((0, 3), np.float32),
                    np.ones((1, 3), np.float32)) == 0


def test_op_names_and_support_table():
    names = K.op_names()
    assert names["ADD"] != names["SUB"] and names["NONE"] == 0
    assert K.op_supported_py("ADD", np.float32, np.float32, np.float32)
    assert K.op_supported_py("EQ", np.bool_, np.float16, np.float16)
    assert not K.op_supported_py("EQ", np.float32, np.float32, np.float32)
    assert K.op_supported_py("CPY", np.int8, np.float16)
    assert not K.op_supported_py("EXP", np.int32, np.int32)


def test_concurrent_python_threads():
    """Kernels called from many Python threads at once (each opening its own parallel
    region, GIL released) give every caller its own correct result."""
    import threading
    rng = np.random.default_rng(12)
    arrays = [(rng.standard_normal(200000).astype(np.float32),
               rng.standard_normal(200000).astype(np.float32)) for _ in range(8)]
    outs = [np.empty(200000, np.float32) for _ in range(8)]
    errors = []

    def work(i):
        try:
            for _ in range(5):
                K._apply("MUL", outs[i], arrays[i][0], arrays[i][1], n_threads=2)
                if not bits_equal(outs[i], arrays[i][0] * arrays[i][1]):
                    errors.append(i)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
