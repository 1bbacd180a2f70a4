"""Kernel layer (issue 14): float32 <-> float16 contiguous rows (kernels_convert.h's
kern_f2h_row, kern_f2h_row_nt and kern_h2f_row: 16 lanes on AVX-512 builds, then 8 with
F16C, then one at a time). Every lane position of a vector, every tail length and start
offset, plain and streaming stores, 1 and 3 threads: the bits numpy's astype gives and its
float16 overflow and underflow reports (a value below half's smallest normal that rounds,
checked lane by lane beside the vector conversion). Signaling NaNs stay signaling with their
payload and report nothing, as in numpy's software conversions (the F16C instructions
would quiet them and report "invalid"), in both directions and into float64."""
import numpy as np
import pytest

from ggml_cy.cpu import _kernels as K

FE_INVALID, FE_OVERFLOW, FE_UNDERFLOW = 1, 8, 16
FLAGS = FE_INVALID | FE_OVERFLOW | FE_UNDERFLOW
# values that each take a different branch of the conversion: normal, rounding to a
# subnormal half (underflow), exactly a subnormal half (no report), to zero, +-0, the largest
# half, overflow to inf, inf, NaN with a payload, a tie that rounds to even
SPECIALS = np.array([1.5, 3e-5, 2.0 ** -24, 5.960464477539063e-08, 1e-9, 0.0, -0.0, 65504.0,
                     65520.0, np.inf, -np.inf, np.nan, 1.00048828125, -7e-6, 2.0 ** -14,
                     6.1e-5, 0.0, 0.0, 0.0, 0.0], np.float32)
# (a quiet NaN, three signaling ones, and a value below 2^-14 that rounds up to it: the
# instruction reports no underflow there, numpy does)
SPECIALS.view(np.uint32)[[11, 16, 17, 18, 19]] = [0x7FC01234, 0x7F800001, 0xFF812345, 0x7FBFFFFF,
                                                  0x387FF800]


def numpy_flags(x):
    with np.errstate(all="ignore"):
        ref = x.astype(np.float16)
    flags = 0
    for fl, kw in ((FE_INVALID, "invalid"), (FE_OVERFLOW, "over"), (FE_UNDERFLOW, "under")):
        try:
            with np.errstate(all="ignore", **{kw: "raise"}):
                x.astype(np.float16)
        except FloatingPointError:
            flags |= fl
    return ref, flags


def convert(x, out, n_threads, stream):
    old = K._set_tuning(llc_bytes=0, nt_min_bytes=0, nt_min_row_bytes=0) if stream else None
    try:
        flags = K._apply("CPY", out, x, n_threads=n_threads)
        plan = K._plan_info("CPY", out, x, n_threads=n_threads)
    finally:
        if old is not None:
            K._set_tuning(*old)
    return flags, plan


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("n_threads", [1, 3])
def test_f32_to_f16_every_lane_and_tail(stream, n_threads):
    rng = np.random.default_rng(5)
    for n in list(range(1, 41)) + [63, 64, 65, 1000, 4099]:
        for off_src, off_dst in ((0, 0), (1, 0), (0, 3), (5, 7)):
            base = (rng.standard_normal(n + off_src) * 300).astype(np.float32)
            x = base[off_src:]
            for lane in range(0, min(n, 33), 1 if n <= 40 else 11):
                v = x.copy()
                v[lane] = SPECIALS[(lane + n) % len(SPECIALS)]
                buf = np.zeros(n + off_dst, np.float16)
                out = buf[off_dst:]
                flags, plan = convert(v, out, n_threads, stream)
                ref, want = numpy_flags(v)
                assert np.array_equal(out.view(np.uint16), ref.view(np.uint16)), (n, lane)
                assert flags & FLAGS == want, (n, lane, flags, want)
                assert not buf[:off_dst].any()


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_f32_to_f16_special_in_a_later_block(stream):
    """The AVX-512 body converts blocks of 1024 floats bare and runs a block again through
    the per-vector checks only when a range test on the way found a tiny value or a
    signaling NaN there: each special alone in the middle of a long row, in a block of its
    own, beside clean blocks before and after (which must report nothing of it)."""
    rng = np.random.default_rng(9)
    n = 5000
    x = (rng.standard_normal(n) * 300).astype(np.float32)
    for k, sp in enumerate(SPECIALS.view(np.uint32)):
        for pos in (1024 + 37 * k, 3071, 4095, 4999):
            v = x.copy()
            v.view(np.uint32)[pos] = sp
            out = np.empty(n, np.float16)
            flags, plan = convert(v, out, 1, stream)
            ref, want = numpy_flags(v)
            assert np.array_equal(out.view(np.uint16), ref.view(np.uint16)), (k, pos)
            assert flags & FLAGS == want, (k, pos, flags, want)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_f32_to_f16_every_special_at_every_lane(stream):
    """All specials at once, rotated through the 16 lanes of a block, over several blocks."""
    for shift in range(16):
        v = np.roll(np.tile(SPECIALS, 5), shift)
        out = np.empty(v.size, np.float16)
        flags, plan = convert(v, out, 2, stream)
        ref, want = numpy_flags(v)
        assert np.array_equal(out.view(np.uint16), ref.view(np.uint16)), shift
        assert flags & FLAGS == want


def test_streaming_plan_is_taken():
    """The streaming cases above do reach the streaming row (the tuning hook's effect)."""
    x = np.ones(4096, np.float32)
    out = np.empty(4096, np.float16)
    assert convert(x, out, 1, True)[1]["nt"]
    assert not convert(x, out, 1, False)[1]["nt"]


@pytest.mark.parametrize("n_threads", [1, 3])
def test_f16_to_f32_every_pattern_every_offset(n_threads):
    """All 65536 half patterns, widened exactly (NaN payloads kept), from four offsets and
    with tails of every length up to 40."""
    pats = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    for off in range(4):
        h = np.concatenate([np.zeros(off, np.uint16), pats])[off:].view(np.float16)
        out = np.empty(h.size, np.float32)
        flags = K._apply("CPY", out, h, n_threads=n_threads)
        assert np.array_equal(out.view(np.uint32), h.astype(np.float32).view(np.uint32))
        assert flags & FLAGS == 0
    for n in range(1, 41):
        h = pats[1000:1000 + n].view(np.float16)
        out = np.empty(n, np.float32)
        K._apply("CPY", out, h, n_threads=n_threads)
        assert np.array_equal(out.view(np.uint32), h.astype(np.float32).view(np.uint32))


SNAN16 = np.array([0x7C01, 0xFDFF, 0x7D23], np.uint16)


@pytest.mark.parametrize("dst", [np.float32, np.float64])
def test_f16_signaling_nans_through_every_route(dst):
    """Contiguous (the vector rows), reversed and transposed (the staged and scalar routes),
    at every lane of a 16-block: numpy's bits and its silence (no warning)."""
    import warnings
    import ggml_cy as g
    base = np.tile(np.array([0x3C00, 0x0001, 0x8000, 0x7E00], np.uint16), 16)
    for lane in range(0, 32, 3):
        h = base.copy()
        h[lane] = SNAN16[lane % 3]
        h = h.view(np.float16)
        for v in (h, h[::-1], h.reshape(8, 8).T, h[1:]):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                with np.errstate(all="warn"):
                    got = g.astype(v, dst)
                    want = v.astype(dst)
            u = f"u{np.dtype(dst).itemsize}"
            assert np.array_equal(got.view(u), want.view(u)), lane


def test_f32_to_f16_random_bit_patterns_eager():
    """2^20 random float32 bit patterns (NaNs of every kind included) through the eager
    astype, contiguous and strided: numpy's bits and warnings."""
    import ggml_cy as g
    from _oracle import run
    x = np.random.default_rng(3).integers(0, 2 ** 32, 2 ** 20, dtype=np.uint64)
    x = x.astype(np.uint32).view(np.float32)
    for v in (x, x[::-1], x[1:], x.reshape(1024, 1024).T):
        got, want = run(lambda: g.astype(v, np.float16)), run(lambda: v.astype(np.float16))
        assert got.exc is None
        assert np.array_equal(got.value.view(np.uint16), want.value.view(np.uint16))
        assert got.warns == want.warns
