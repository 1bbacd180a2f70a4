"""Kernel layer (issue 14): the fused transposed bands (csrc/kernels_transpose.h: a.T + b
and transposed copies, blocks transposed in registers) and the gathered streaming of short
rows (a permuted copy). Every result is checked bitwise against numpy and against the
generic paths (turned on and off with _set_fused_paths), FP flags included."""
import itertools

import numpy as np
import pytest

from ggml_cy.cpu import _kernels as K

TILE = K._have_tile()
OPS = [("ADD", np.add), ("SUB", np.subtract), ("MUL", np.multiply), ("DIV", np.divide),
       ("MAX", np.maximum), ("MIN", np.minimum)]


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.itemsize}") if a.dtype.kind == "f" else a


def bits_equal(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(bits(a), bits(b))


@pytest.fixture
def streaming(kernel_tuning):
    """Make small arrays take the streaming-store paths (and the parallel region)."""
    kernel_tuning(par_min=8, par_min_heavy=8, nt_min_bytes=64, nt_min_row_bytes=64, llc_bytes=0)


@pytest.fixture
def fused_off():
    """Call f with the fused paths off (the generic reference), then on again."""
    def run(f):
        old = K._set_fused_paths(False, False, ilv=False)
        try:
            return f()
        finally:
            K._set_fused_paths(*old)
    return run


def values(rng, shape, dtype):
    """Random values with NaNs of two payloads, infinities, zeros of both signs."""
    x = (rng.standard_normal(shape) * 50).astype(dtype)
    if np.dtype(dtype).kind == "f":
        flat = x.reshape(-1)
        k = max(1, flat.size // 20)
        idx = rng.choice(flat.size, size=min(flat.size, 6 * k), replace=False)
        u = flat.view(f"u{flat.itemsize}")
        nan_a = np.array([np.nan], dtype).view(u.dtype)[0]
        flat[idx[:k]] = np.nan
        if K._one_pass_nt():
            # another payload: which NaN of two comes out (numpy: the first operand's).
            # The baseline build's rows give the second one's on every path (main as
            # well: a finding apart from this file), so only the AVX levels check it.
            u[idx[k:2 * k]] = nan_a | 1
        flat[idx[2 * k:3 * k]] = np.inf
        flat[idx[3 * k:4 * k]] = -0.0
        flat[idx[4 * k:5 * k]] = 0.0
    return x


def offset_view(x, off):
    """x's values in a fresh buffer starting `off` elements past an allocation's start
    (numpy's large arrays sit 16 bytes off a 64-byte line)."""
    buf = np.empty(x.size + off, x.dtype)
    v = buf[off:].reshape(x.shape)
    v[...] = x
    return v


def check(op, f, out, a, b, n_threads, fused_off, expect_tile=None):
    with np.errstate(all="ignore"):
        ref = f(a, b) if b is not None else np.ascontiguousarray(a)
    flags = K._apply(op, out, a, b, n_threads=n_threads)
    ref = ref.astype(out.dtype, copy=False)
    if b is not None and out.dtype.kind == "f" and op in ("ADD", "MUL"):
        # of two NaNs, + and * give the first operand's (quieted), as numpy's own loops
        # do -- except numpy's strided scalar loop now and then (one element of 700 x 24
        # a.T + b gave the second one's: its compiler swapped the operands there), so
        # those places are held to the rule rather than to numpy
        x, y = np.broadcast_arrays(a, b)
        both = np.isnan(x) & np.isnan(y)
        quiet = np.array(np.nan, out.dtype).view(bits(out).dtype)
        first = bits(x) | quiet
        assert np.array_equal(bits(out)[both], first[both]), (op, out.shape, a.strides)
        ref = ref.copy()
        ref[both] = x[both]
        bits(ref)[both] = first[both]
    assert bits_equal(out, ref), (op, out.shape, a.strides)
    if expect_tile is not None and TILE:
        assert (K._plan_info(op, out, a, b, n_threads=n_threads)["tile"] >= 0) == expect_tile
    out2 = np.empty_like(out)
    flags2 = fused_off(lambda: K._apply(op, out2, a, b, n_threads=n_threads))
    assert bits_equal(out, out2)
    assert flags == flags2, (op, flags, flags2)


SHAPES = [(16, 16), (32, 48), (17, 33), (300, 270), (129, 257), (8, 200), (200, 8),
          (1, 64), (5, 7), (64, 1000), (700, 24)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("n_threads", [1, 3])
def test_transposed_binary(dtype, shape, n_threads, fused_off, streaming):
    rng = np.random.default_rng(sum(shape))
    m, n = shape
    for off in (0, 3):
        at = offset_view(values(rng, (n, m), dtype), off).T     # (m, n), transposed
        b = offset_view(values(rng, (m, n), dtype), off)
        # broadcast operands without NaNs: numpy's loop for a stride-0 second operand
        # returns the second NaN of two (the generic rows give the first one's; a finding
        # apart from the transposed paths)
        col = np.nan_to_num(values(rng, (m, 1), dtype), nan=1.5)
        row = np.nan_to_num(values(rng, (n,), dtype), nan=1.5)
        bt = values(rng, (n, m), dtype).T
        big = min(m, n) >= 8
        for op, f in OPS:
            out = offset_view(np.zeros((m, n), dtype), off)
            check(op, f, out, at, b, n_threads, fused_off, expect_tile=big)
            check(op, f, out, b, at, n_threads, fused_off, expect_tile=big)
            check(op, f, out, at, bt, n_threads, fused_off, expect_tile=big)
            check(op, f, out, at, col, n_threads, fused_off)
            check(op, f, out, col, at, n_threads, fused_off)
            check(op, f, out, at, row, n_threads, fused_off)
            check(op, f, out, at, np.asarray(dtype(2.5)), n_threads, fused_off)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_transposed_copy(dtype, shape, fused_off, streaming):
    rng = np.random.default_rng(7)
    m, n = shape
    src = values(rng, (n, m), dtype) if np.dtype(dtype).kind == "f" else \
        rng.integers(-1000, 1000, (n, m)).astype(dtype)
    for off, n_threads in itertools.product((0, 1, 5), (1, 2)):
        a = offset_view(src, off).T
        out = offset_view(np.zeros((m, n), dtype), off)
        check("CPY", None, out, a, None, n_threads, fused_off, expect_tile=min(m, n) >= 8)
        out = np.zeros((m, n), dtype)[::-1]          # negative output row stride
        check("CONT", None, out, a, None, n_threads, fused_off)


def test_transposed_negative_and_strided_sources(fused_off, streaming):
    rng = np.random.default_rng(11)
    x = values(rng, (90, 70), np.float32)
    y = values(rng, (70, 90), np.float32)
    for a in (x[::-1].T, x[:, ::-1].T, x[::-1, ::-1].T, x[::2].T, x.T[::-1]):
        b = y[: a.shape[0], : a.shape[1]]
        out = np.empty(a.shape, np.float32)
        for op, f in OPS:
            check(op, f, out, a, b, 2, fused_off)


def test_transposed_unaligned_elements(fused_off, streaming):
    # element pointers off their alignment (frombuffer at an odd offset): refused by the
    # fused bands, computed by the staged tiles
    vals = np.random.default_rng(0).standard_normal(1600).astype(np.float32)
    raw = np.zeros(4 * 1600 + 1, np.uint8)
    raw[1:] = vals.view(np.uint8)
    a = np.frombuffer(raw.data, np.float32, 1600, offset=1).reshape(40, 40)
    b = np.arange(1600, dtype=np.float32).reshape(40, 40)
    out = np.empty((40, 40), np.float32)
    check("ADD", np.add, out, a.T, b, 2, fused_off)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_transposed_fe_flags(n_threads, fused_off, streaming):
    z = np.zeros((40, 24), np.float32)
    one = np.ones((24, 40), np.float32)
    out = np.empty((24, 40), np.float32)
    # every element of one column 0/0 (invalid), another 1/0 (divide by zero)
    num = one.copy()
    num[:, 3] = 0
    check("DIV", np.divide, out, z.T, num, n_threads, fused_off)
    check("DIV", np.divide, out, num, z.T, n_threads, fused_off)
    big = np.full((40, 24), 3e38, np.float32)
    check("ADD", np.add, out, big.T, np.full((24, 40), 3e38, np.float32), n_threads, fused_off)
    check("MUL", np.multiply, out, big.T, np.full((24, 40), 1e-45, np.float32), n_threads,
          fused_off)
    # edge blocks (24 rows, 40 columns: partial blocks at both ends) with a column operand:
    # the lanes outside the block must not raise what numpy does not
    col = np.zeros((24, 1), np.float32)
    check("DIV", np.divide, out, z.T, col, n_threads, fused_off)
    check("DIV", np.divide, out, col, np.full((40, 24), 1e-40, np.float32).T, n_threads,
          fused_off)


def test_transposed_batched_and_chunked(fused_off, streaming):
    rng = np.random.default_rng(5)
    x = values(rng, (3, 50, 70), np.float64)
    y = values(rng, (3, 70, 50), np.float64)
    out = np.empty((3, 70, 50))
    old = K._set_signal_check(elements=1, chunk=300)   # the chunked (Ctrl-C) schedule
    try:
        for op, f in OPS:
            check(op, f, out, x.transpose(0, 2, 1), y, 2, fused_off)
            check(op, f, out, y, x.transpose(0, 2, 1), 1, fused_off)
    finally:
        K._set_signal_check(*old)


def test_transposed_half_keeps_staged_path(streaming):
    rng = np.random.default_rng(2)
    a = values(rng, (40, 33), np.float16)
    # NaNs in one operand only: of two float16 NaNs numpy returns the second one's
    # payload and the float16 rows the first one's (a finding apart from this path)
    b = np.nan_to_num(values(rng, (33, 40), np.float16), nan=1.5)
    out = np.empty((33, 40), np.float16)
    assert K._plan_info("ADD", out, a.T, b)["tile"] == -1
    K._apply("ADD", out, a.T, b, n_threads=2)
    with np.errstate(all="ignore"):
        assert bits_equal(out, a.T + b)


def test_transposed_in_place(fused_off):
    rng = np.random.default_rng(3)
    a = values(rng, (64, 48), np.float32)
    b = values(rng, (48, 64), np.float32)
    ref = b + a.T
    K._apply("ADD", b, b, a.T, n_threads=2)
    assert bits_equal(b, ref)


# --------------------------------------------------------------------------- gathered rows
@pytest.fixture
def gathering(kernel_tuning):
    """Streaming stores from 64-byte outputs, rows shorter than 512 bytes gathered."""
    kernel_tuning(par_min=8, par_min_heavy=8, nt_min_bytes=64, nt_min_row_bytes=512, llc_bytes=0)


def expect_gather(out, v, n_threads):
    p = K._plan_info("CONT", out, v, n_threads=n_threads)
    es = out.itemsize
    want = (K._one_pass_nt() and p["nd"] >= 2 and p["nb"][0][0] == es
            and p["nb"][0][1] == p["ne"][0] * es and p["ne"][0] * es < 512
            and p["ne"][0] * p["ne"][1] * es >= 512)
    assert p["gather"] == want, p
    return want


PERMS = [((4, 8, 6, 5), (0, 2, 1, 3)), ((16, 32, 16, 64), (0, 2, 1, 3)),
         ((3, 5, 7, 16), (1, 0, 2, 3)), ((6, 10, 24), (1, 0, 2)), ((2, 3, 4, 33), (2, 0, 1, 3))]


@pytest.mark.parametrize("shape,axes", PERMS, ids=lambda p: str(p))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_gathered_permute_copy(shape, axes, dtype, n_threads, fused_off, gathering):
    x = values(np.random.default_rng(1), shape, dtype) if np.dtype(dtype).kind == "f" else \
        np.random.default_rng(1).integers(-100, 100, shape).astype(dtype)
    v = x.transpose(axes)
    for off, runs in itertools.product((0, 1, 7), (1, 3, 16)):
        old = K._set_fused_paths(gather_runs=runs)     # output runs interleaved
        try:
            out = offset_view(np.zeros(v.shape, dtype), off)
            flags = K._apply("CONT", out, v, n_threads=n_threads)
        finally:
            K._set_fused_paths(*old)
        assert bits_equal(out, np.ascontiguousarray(v))
        expect_gather(out, v, n_threads)
        out2 = np.empty_like(out)
        assert fused_off(lambda: K._apply("CONT", out2, v, n_threads=n_threads)) == flags
        assert bits_equal(out, out2)


def test_gathered_convert_and_binary(fused_off, gathering):
    rng = np.random.default_rng(4)
    x = values(rng, (6, 20, 12, 40), np.float32)
    v = x.transpose(0, 2, 1, 3)
    assert expect_gather(np.empty(v.shape, np.float32), v, 2) == K._one_pass_nt()
    h = np.empty(v.shape, np.float16)
    K._apply("CPY", h, v, n_threads=2)
    assert bits_equal(h, v.astype(np.float16))
    y = values(rng, v.shape, np.float32)
    out = np.empty(v.shape, np.float32)
    for op, f in OPS:
        check(op, f, out, v, y, 2, fused_off)
        check(op, f, out, y, v, 3, fused_off)
    old = K._set_signal_check(elements=1, chunk=100)
    try:
        check("ADD", np.add, out, v, y, 2, fused_off)
    finally:
        K._set_signal_check(*old)


def test_gather_needs_back_to_back_rows(gathering):
    x = np.zeros((8, 16, 8, 32), np.float32)
    out = np.empty((8, 8, 16, 64), np.float32)[..., :32]      # rows not back to back
    assert not K._plan_info("CONT", out, x.transpose(0, 2, 1, 3))["gather"]
    K._apply("CONT", out, x.transpose(0, 2, 1, 3), n_threads=2)
    assert bits_equal(out, np.ascontiguousarray(x.transpose(0, 2, 1, 3)))


def test_gather_only_for_scattered_rows(gathering):
    # a broadcast add's sources stream by themselves: plain rows there
    a = np.ones((64, 16, 32), np.float32)
    out = np.empty_like(a)
    for b in (np.ones(32, np.float32), np.ones((64, 1, 32), np.float32)):
        assert not K._plan_info("ADD", out, a, b)["gather"]
        K._apply("ADD", out, a, b, n_threads=2)
        assert bits_equal(out, a + b)


# ------------------------------------------------------------- interleaved rows, plain stores
@pytest.fixture
def interleaving(kernel_tuning):
    """Plain stores everywhere (no streaming rule), parallel from 8 elements, the
    interleaved rows on (off by default: they depend on the CPU)."""
    kernel_tuning(par_min=8, par_min_heavy=8, nt_min_bytes=1 << 40, llc_bytes=1 << 40)
    old = K._set_fused_paths(ilv=True)
    yield
    K._set_fused_paths(*old)


def expect_ilv(out, v, n_threads):
    """P.ilv exactly where plan_build's rule says: output rows back to back and at most
    1 KiB, a source's rows apart, three dims or more, from 256 KiB of output."""
    p = K._plan_info("CONT", out, v, n_threads=n_threads)
    es = out.itemsize
    want = (p["nd"] >= 3 and p["ne"][1] >= 2 and p["nb"][0][0] == es
            and p["nb"][0][1] == p["ne"][0] * es and p["ne"][0] * es <= 1024
            and p["nb"][1][1] not in (0, p["ne"][0] * p["nb"][1][0])
            and out.nbytes >= 256 * 1024)
    assert not p["gather"] and not p["nt"]
    assert p["ilv"] == want, p
    return want


ILV_PERMS = [((16, 128, 64, 64), (0, 2, 1, 3)), ((8, 64, 40, 65), (0, 2, 1, 3)),
             ((3, 50, 70, 256), (1, 0, 2, 3)), ((40, 300, 24), (1, 0, 2)),
             ((2, 30, 40, 33), (2, 0, 1, 3)), ((4, 64, 64, 300), (0, 2, 1, 3))]


@pytest.mark.parametrize("shape,axes", ILV_PERMS, ids=lambda p: str(p))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8])
def test_interleaved_permute_copy(shape, axes, dtype, fused_off, interleaving):
    """Bitwise equal to numpy and to the row-by-row path, for every interleave width, every
    thread count (edges of partial runs where a thread's range starts or ends) and every
    output offset."""
    rng = np.random.default_rng(11)
    x = values(rng, shape, dtype) if np.dtype(dtype).kind == "f" else \
        rng.integers(-100, 100, shape).astype(dtype)
    v = x.transpose(axes)
    ref = np.ascontiguousarray(v)
    seen = False
    for off, runs, n_threads in itertools.product((0, 3), (1, 5, 16), (1, 2, 3)):
        old = K._set_fused_paths(ilv_runs=runs)
        try:
            out = offset_view(np.zeros(v.shape, dtype), off)
            seen |= expect_ilv(out, v, n_threads)
            flags = K._apply("CONT", out, v, n_threads=n_threads)
        finally:
            K._set_fused_paths(*old)
        assert bits_equal(out, ref)
        out2 = np.zeros_like(out)
        assert fused_off(lambda: K._apply("CONT", out2, v, n_threads=n_threads)) == flags
        assert bits_equal(out2, ref)
    if shape == (16, 128, 64, 64):
        assert seen      # the bench's permute copy


def test_interleaved_convert_and_binary(fused_off, interleaving):
    """Conversions and binary ops on the interleaved path: same bits and FP flags as the
    row-by-row path (NaN payloads, infinities, signed zeros in both operands)."""
    rng = np.random.default_rng(12)
    v = values(rng, (6, 80, 40, 48), np.float32).transpose(0, 2, 1, 3)
    h = np.empty(v.shape, np.float16)
    assert K._plan_info("CPY", h, v, n_threads=2)["ilv"]
    K._apply("CPY", h, v, n_threads=2)
    assert bits_equal(h, v.astype(np.float16))
    # float16 operands (converted through float32 row by row) take it; same-type float32
    # rows this short take the packed runs (run_rows_srun) first
    for dtype, path in ((np.float16, "ilv"), (np.float32, "srun")):
        a = np.ascontiguousarray(values(rng, (6, 80, 40, 48), dtype)).transpose(0, 2, 1, 3)
        y = values(rng, a.shape, dtype)
        out = np.empty(a.shape, dtype)
        assert K._plan_info("ADD", out, a, y, n_threads=2)[path]
        for op, f in OPS:
            check(op, f, out, a, y, 2, fused_off)
            check(op, f, out, y, a, 3, fused_off)


@pytest.mark.parametrize("on", [False, True])
def test_interleaved_through_copyto(on):
    """The public copyto and ascontiguousarray take it when it is on (plain stores: a
    working set far below the cache size rule's) and plain rows by default, equal to
    numpy's either way."""
    import ggml_cy
    x = np.random.default_rng(13).standard_normal((4, 64, 32, 64)).astype(np.float32)
    v = x.transpose(0, 2, 1, 3)
    out = np.empty(v.shape, np.float32)
    old = K._set_fused_paths(ilv=True) if on else K._set_fused_paths()
    try:
        p = K._plan_info("CONT", out, v, n_threads=2)
        assert p["ilv"] == on and not p["gather"] and not p["nt"]
        ggml_cy.copyto(out, v, n_threads=2)
        assert bits_equal(out, np.ascontiguousarray(v))
        assert bits_equal(ggml_cy.ascontiguousarray(v, n_threads=2), np.ascontiguousarray(v))
    finally:
        K._set_fused_paths(*old)


def test_gathered_rows_not_by_the_share_rule(kernel_tuning):
    """Staged-and-streamed gathering only by the cache-size rules: a working set past the
    many-core share (NT_SHARE_BYTES) but inside the LLC keeps plain rows, while a
    contiguous copy of that size streams by that rule."""
    kernel_tuning(llc_bytes=1 << 30, share_bytes=1 << 20, nt_min_bytes=1 << 20)
    x = np.zeros((8, 64, 32, 64), np.float32)           # 4 MiB each way
    v = x.transpose(0, 2, 1, 3)
    out = np.empty(v.shape, np.float32)
    for nth in (2, 16):
        p = K._plan_info("CONT", out, v, n_threads=nth)
        assert not p["gather"] and not p["nt"], p
    if K._one_pass_nt():
        assert K._plan_info("CONT", np.empty_like(x), x, n_threads=16)["nt"]
    kernel_tuning(llc_bytes=1 << 20)                     # now past the LLC: gathered
    assert K._plan_info("CONT", out, v, n_threads=2)["gather"] == K._one_pass_nt()


# ------------------------------------------------------ same-type copies' rows in stretches
COPY_CASES = [((16, 128, 64, 64), (0, 2, 1, 3)), ((5, 33, 7, 3), (0, 2, 1, 3)),
              ((3, 50, 70, 9), (1, 0, 2, 3)), ((40, 300, 24), (1, 0, 2)),
              ((2, 30, 40, 33), (2, 0, 1, 3)), ((9, 200, 1), (1, 0, 2))]


@pytest.mark.parametrize("shape,axes", COPY_CASES, ids=lambda p: str(p))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int16])
def test_copy_rows_in_stretches(shape, axes, dtype, fused_off, interleaving):
    """kern_copy_rows (plain stores, rows along dim 1 in one loop): bitwise equal to numpy
    and to the row-by-row path, for every thread count (ranges that start and end inside a
    stretch), output offsets (rows not on any boundary) and row lengths that are not a
    multiple of a vector (the memcpy tail), and a strided output (rows apart)."""
    K._set_fused_paths(ilv=False)      # the interleaving fixture turned it on
    rng = np.random.default_rng(21)
    x = values(rng, shape, dtype) if np.dtype(dtype).kind == "f" else \
        rng.integers(-100, 100, shape).astype(dtype)
    v = x.transpose(axes)
    ref = np.ascontiguousarray(v)
    for off, n_threads in itertools.product((0, 5), (1, 2, 3)):
        out = offset_view(np.zeros(v.shape, dtype), off)
        p = K._plan_info("CONT", out, v, n_threads=n_threads)
        assert not (p["gather"] or p["nt"] or p["ilv"]), p
        flags = K._apply("CONT", out, v, n_threads=n_threads)
        assert bits_equal(out, ref)
        old = K._set_fused_paths(copy_rows=False)
        try:
            out2 = np.zeros_like(out)
            assert K._apply("CONT", out2, v, n_threads=n_threads) == flags
        finally:
            K._set_fused_paths(*old)
        assert bits_equal(out2, ref)
    wide = np.zeros(v.shape[:-1] + (v.shape[-1] + 3,), dtype)
    K._apply("CONT", wide[..., :v.shape[-1]], v, n_threads=2)
    assert bits_equal(wide[..., :v.shape[-1]], ref) and not wide[..., v.shape[-1]:].any()
