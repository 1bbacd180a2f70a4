"""Dequantization (issue 12 item 2): every quantized type gguf-py can dequantize, bitwise
against gguf.quants.dequantize (float32), on random blocks (random bytes: scales include
NaN, inf, zero and subnormal halves) and on crafted special-value scales, with 1..3
threads; float16/bfloat16 outputs against numpy's rounding of the float32 result; Q8_1,
Q8_K, Q1_0 and Q2_0 (absent from gguf-py) against numpy transcriptions of ggml's formulas;
Tensor.numpy() of quantized tensors and views; bad input."""
import warnings

import numpy as np
import pytest

import ggml_cy
from ggml_cy import Context, GGMLType

gguf = pytest.importorskip("gguf")
from gguf import quants as gq  # noqa: E402

GQT = gguf.GGMLQuantizationType
GGUF_TYPES = [t for t in GGMLType if t.is_quantized and t.name in GQT.__members__
              and GQT[t.name] in gq._type_traits]
OWN_ORACLE = [GGMLType.Q8_1, GGMLType.Q8_K, GGMLType.Q1_0, GGMLType.Q2_0]


def test_every_quantized_type_is_covered():
    covered = set(GGUF_TYPES) | set(OWN_ORACLE)
    assert covered == {t for t in GGMLType if t.is_quantized}
    assert len(GGUF_TYPES) >= 23


def gguf_ref(raw, t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # NaN/inf scales: numpy warns
        with np.errstate(all="ignore"):
            return gq.dequantize(raw, GQT[t.name])


def bits_equal(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(
        a.view(np.uint8), b.view(np.uint8))


def random_raw(rng, t, rows, blocks_per_row):
    return rng.integers(0, 256, size=(rows, blocks_per_row * t.type_size), dtype=np.uint8)


@pytest.mark.parametrize("t", GGUF_TYPES, ids=str)
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_random_blocks_bitwise(t, n_threads):
    rng = np.random.default_rng(int(t) * 10 + n_threads)
    raw = random_raw(rng, t, 7, 5)
    ref = gguf_ref(raw, t)
    assert ref.shape == (7, 5 * t.blck_size)
    got = ggml_cy.dequantize(raw, t, ref.shape, n_threads=n_threads)
    assert bits_equal(got, ref)
    # many blocks in one row (the thread split cuts inside the row)
    raw1 = random_raw(rng, t, 1, 300)
    ref1 = gguf_ref(raw1, t).reshape(-1)
    got1 = ggml_cy.dequantize(raw1.reshape(-1), t, ref1.shape, n_threads=n_threads)
    assert bits_equal(got1, ref1)


# f16 patterns for the scales: zeros, subnormals, the largest normal, infinities, quiet and
# signalling NaNs with payloads
SPECIAL_F16 = [0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00,
               0x7e00, 0xfe00, 0x7c01, 0xfd55, 0x7fff, 0x3c00, 0xbc00, 0x1234]
# byte offsets of the f16 scale fields in each block (quant_blocks.h)
SCALE_OFFSETS = {
    "Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0], "Q2_K": [80, 82],
    "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208], "IQ2_XXS": [0],
    "IQ2_XS": [0], "IQ2_S": [0], "IQ3_XXS": [0], "IQ3_S": [0], "IQ1_S": [0], "IQ4_NL": [0],
    "IQ4_XS": [0], "TQ1_0": [52], "TQ2_0": [64]}


def craft_special(rng, t):
    """Blocks whose scales take every special value (pairs of them for two-scale types)."""
    n = len(SPECIAL_F16)
    if t.name in SCALE_OFFSETS:
        offs = SCALE_OFFSETS[t.name]
        raw = random_raw(rng, t, n * n if len(offs) == 2 else n, 1).copy()
        for i in range(raw.shape[0]):
            vals = [SPECIAL_F16[i % n], SPECIAL_F16[i // n]] if len(offs) == 2 else [SPECIAL_F16[i]]
            for o, v in zip(offs, vals):
                raw[i, o:o + 2] = np.array([v], np.uint16).view(np.uint8)
        return raw
    if t == GGMLType.IQ1_M:           # the f16 scale is spread over the top nibbles
        raw = random_raw(rng, t, n, 1).copy()
        for i, h in enumerate(SPECIAL_F16):
            sc = raw[i, 48:56].view(np.uint16)
            for k in range(4):
                sc[k] = (sc[k] & 0x0FFF) | (((h >> (4 * k)) & 0xF) << 12)
        return raw
    if t == GGMLType.MXFP4:           # every E8M0 exponent
        raw = random_raw(rng, t, 256, 1).copy()
        raw[:, 0] = np.arange(256)
        return raw
    if t == GGMLType.NVFP4:           # every UE4M3 scale byte, in each sub-block slot
        raw = random_raw(rng, t, 256, 1).copy()
        for k in range(4):
            raw[:, k] = (np.arange(256) + 64 * k) % 256
        return raw
    raise AssertionError(f"no crafting rule for {t}")


@pytest.mark.parametrize("t", GGUF_TYPES, ids=str)
def test_special_scales_bitwise(t):
    rng = np.random.default_rng(1000 + int(t))
    raw = craft_special(rng, t)
    ref = gguf_ref(raw, t)
    for nth in (1, 2):
        got = ggml_cy.dequantize(raw, t, ref.shape, n_threads=nth)
        assert bits_equal(got, ref)
    assert np.isnan(ref).any() or t in (GGMLType.MXFP4, GGMLType.NVFP4)


@pytest.mark.parametrize("t", GGUF_TYPES, ids=str)
def test_f16_bf16_outputs(t):
    rng = np.random.default_rng(2000 + int(t))
    raw = np.concatenate([random_raw(rng, t, 3, 4).reshape(-1),
                          craft_special(rng, t)[:4].reshape(-1)])
    n = raw.size // t.type_size * t.blck_size
    ref = gguf_ref(raw.reshape(1, -1), t).reshape(-1)
    with np.errstate(all="ignore"):
        want16 = ref.astype(np.float16)
    got16 = ggml_cy.dequantize(raw, t, (n,), dtype=np.float16, n_threads=2)
    assert bits_equal(got16, want16)
    gotbf = ggml_cy.dequantize(raw, t, (n,), dtype="bfloat16")
    assert bits_equal(gotbf, ggml_cy.float32_to_bfloat16(ref))


def test_f16_rounding_edges():
    # Q8_0 values d*q that land on float16 ties, overflow and subnormal boundaries
    ds = np.array([2.0 ** -24, 2.0 ** -14, 1.0009765625, 65504.0 / 127, 600.0, 1e-3, 3.0],
                  np.float16)
    raw = np.zeros((len(ds), 34), np.uint8)
    raw[:, 0:2] = ds.view(np.uint8).reshape(-1, 2)
    raw[:, 2:] = (np.arange(-16, 16, dtype=np.int8) * 4).view(np.uint8)
    ref = gguf_ref(raw, GGMLType.Q8_0)
    with np.errstate(all="ignore"):
        assert bits_equal(ggml_cy.dequantize(raw, "q8_0", ref.shape, dtype=np.float16),
                          ref.astype(np.float16))
    # every f16 scale times a few quants: float32 -> float16 / bfloat16 rounding
    raw = np.zeros((65536, 34), np.uint8)
    raw[:, 0:2] = np.arange(65536, dtype=np.uint16).view(np.uint8).reshape(-1, 2)
    raw[:, 2:] = np.array([1, -1, 3, -3, 5, 7, 127, -128] * 4, np.int8).view(np.uint8)
    ref = gguf_ref(raw, GGMLType.Q8_0)
    with np.errstate(all="ignore"):
        want = ref.astype(np.float16)
    assert bits_equal(ggml_cy.dequantize(raw, "q8_0", ref.shape, dtype=np.float16), want)
    assert bits_equal(ggml_cy.dequantize(raw, "q8_0", ref.shape, dtype="bf16"),
                      ggml_cy.float32_to_bfloat16(ref))


# ---------------------------------------------------------------- types gguf-py lacks
def f16(raw_u8):
    return raw_u8.copy().view(np.float16).astype(np.float32)


def oracle(t, raw):
    """numpy float32 transcriptions of ggml's dequantize_row_* for the types gguf-py lacks."""
    nb = raw.shape[0]
    with np.errstate(all="ignore"):
        if t == GGMLType.Q8_1:          # d (f16), s (f16), 32 x int8; y = q * d
            d = f16(raw[:, 0:2])
            return raw[:, 4:].view(np.int8).astype(np.float32) * d
        if t == GGMLType.Q8_K:          # d (f32), 256 x int8, 16 x int16 sums; y = d * q
            d = raw[:, 0:4].copy().view(np.float32)
            return d * raw[:, 4:260].view(np.int8).astype(np.float32)
        if t == GGMLType.Q1_0:          # d, 128 bits: bit ? d : -d
            # no arithmetic touches d: a signalling-NaN scale comes out as ggml's f16
            # conversion (F16C, and ggml's software one) leaves it: made quiet
            d = f16(raw[:, 0:2])
            db = d.view(np.uint32)
            d = np.where(np.isnan(d), db | np.uint32(0x00400000), db).view(np.float32)
            bits = np.unpackbits(raw[:, 2:], axis=1, bitorder="little").astype(bool)
            return np.where(bits, d, -d).astype(np.float32)
        if t == GGMLType.Q2_0:          # d, 64 x 2 bits: (q - 1) * d
            d = f16(raw[:, 0:2])
            q = (raw[:, 2:, None] >> np.array([0, 2, 4, 6], np.uint8)) & 3
            return (q.reshape(nb, 64).astype(np.int32) - 1).astype(np.float32) * d
    raise AssertionError(t)


@pytest.mark.parametrize("t", OWN_ORACLE, ids=str)
@pytest.mark.parametrize("n_threads", [1, 3])
def test_types_without_gguf_oracle(t, n_threads):
    rng = np.random.default_rng(3000 + int(t))
    raw = random_raw(rng, t, 40, 1)
    if t in SCALE_OFFSETS or t != GGMLType.Q8_K:
        raw[: len(SPECIAL_F16), 0:2] = np.array(SPECIAL_F16, np.uint16).view(np.uint8).reshape(-1, 2)
    else:
        raw[:6, 0:4] = np.array([0.0, -0.0, np.inf, np.nan, 1e-40, -3.5],
                                np.float32).view(np.uint8).reshape(-1, 4)
    want = oracle(t, raw).reshape(-1)
    got = ggml_cy.dequantize(raw, t, (raw.shape[0] * t.blck_size,), n_threads=n_threads)
    assert bits_equal(got, want)


# ---------------------------------------------------------------- tensors
@pytest.mark.parametrize("t", GGUF_TYPES + OWN_ORACLE, ids=str)
def test_tensor_numpy_dequantizes(t):
    rng = np.random.default_rng(4000 + int(t))
    raw = random_raw(rng, t, 6, 2).reshape(3, 2, -1)
    ctx = Context(1 << 20)
    a = ctx.tensor_from(raw, type=t, name="w")
    assert a.ne == (2 * t.blck_size, 2, 3, 1) and a.type is t
    assert bits_equal(a.raw(), raw)
    want = ggml_cy.dequantize(raw, t, (3, 2, 2 * t.blck_size))
    got = a.numpy()
    assert bits_equal(got, want)
    if t in GGUF_TYPES:
        assert bits_equal(got, gguf_ref(raw, t))
    assert bits_equal(np.asarray(a), want)
    assert a.numpy(ndim=4).shape == (1, 3, 2, 2 * t.blck_size)
    # a view of whole rows: row 1 of each 2-row plane (padded strides)
    v = a.view_3d(2 * t.blck_size, 1, 3, a.nb[1], a.nb[2], offset=a.nb[1])
    assert bits_equal(v.numpy(), want[:, 1:2, :])
    assert bits_equal(v.raw(), raw[:, 1:2, :])
    # a view of the second block of every row
    w = a.view_3d(t.blck_size, 2, 3, a.nb[1], a.nb[2], offset=t.type_size)
    assert bits_equal(w.numpy(), want[:, :, t.blck_size:])
    # tensor_from with ne given, flat bytes
    b = ctx.tensor_from(raw.reshape(-1), type=t, ne=(2 * t.blck_size, 6))
    assert bits_equal(b.numpy(), want.reshape(6, -1))
    # raw() writes through
    b.raw()[...] = 0
    assert not b.numpy().any()


def test_tensor_views_refuse_cutting_blocks():
    ctx = Context(1 << 20)
    a = ctx.tensor_from(np.zeros((4, 2 * 144), np.uint8), type="q4_K")
    with pytest.raises(ValueError, match="must not cut"):
        a.view_1d(128)
    with pytest.raises(ValueError, match="must not cut"):
        a.view_2d(256, 2, a.nb[1], offset=10)
    with pytest.raises(ValueError, match="must not cut"):
        a.view_2d(256, 2, a.nb[1] + 1)
    with pytest.raises(ValueError, match="cannot move dim 0"):
        a.transpose()
    with pytest.raises(ValueError, match="cannot move dim 0"):
        a.permute(1, 0, 2, 3)
    a.permute(0, 2, 1, 3)                               # rows may be permuted
    with pytest.raises(ValueError, match="block size"):
        a.reshape(128, 16)
    r = a.reshape(256, 8)
    assert r.ne == (256, 8, 1, 1) and r.nb[:2] == (144, 144)
    assert a.view_2d(256, 4, a.nb[1], offset=144).numpy().shape == (4, 256)


def test_tensor_from_blocks_bad_input():
    ctx = Context(1 << 20)
    with pytest.raises(ValueError, match="bytes"):
        ctx.tensor_from(np.zeros((2, 35), np.uint8), type="q8_0")      # not whole blocks
    with pytest.raises(ValueError, match="holds"):
        ctx.tensor_from(np.zeros(68, np.uint8), type="q8_0", ne=(32, 3))
    with pytest.raises(ValueError, match="multiple"):
        ctx.tensor_from(np.zeros(34, np.uint8), type="q8_0", ne=(16, 2))
    with pytest.raises(TypeError, match="quantize"):
        ctx.tensor_from(np.zeros((2, 32), np.float32), type="q8_0")
    with pytest.raises(TypeError, match="uint8"):
        ctx.tensor_from(np.zeros((2, 17), np.int16), type="q8_0")
    with pytest.raises(TypeError):
        ctx.tensor_from(np.zeros(4, np.float32), ne=(4,))
    used = ctx.used_mem
    with pytest.raises(ValueError):
        ctx.tensor_from(np.zeros(70, np.uint8), type="q8_0", ne=(32, 2))
    assert ctx.used_mem == used                       # a refused call allocates nothing
    t = ctx.tensor_from(bytes(34), type="q8_0")
    assert t.ne == (32, 1, 1, 1) and not t.numpy().any()


# ---------------------------------------------------------------- bad input
def test_dequantize_bad_input():
    raw = np.zeros(2 * 34, np.uint8)
    with pytest.raises(ValueError, match="takes 102 bytes"):
        ggml_cy.dequantize(raw, "q8_0", (3, 32))
    with pytest.raises(ValueError, match="multiple of 32"):
        ggml_cy.dequantize(raw, "q8_0", (2, 33))
    with pytest.raises(ValueError, match="unknown ggml type"):
        ggml_cy.dequantize(raw, 4, (2, 32))
    with pytest.raises(TypeError):
        ggml_cy.dequantize(raw, "nope", (2, 32))
    with pytest.raises(TypeError, match="not a quantized or float"):
        ggml_cy.dequantize(np.zeros(8, np.uint8), "i32", (2,))
    with pytest.raises(ValueError, match="C-contiguous"):
        ggml_cy.dequantize(np.zeros((2, 68), np.uint8)[:, ::2], "q8_0", (2, 32))
    with pytest.raises(TypeError, match="bytes"):
        ggml_cy.dequantize(raw.view(np.int16), "q8_0", (2, 32))
    with pytest.raises(TypeError):
        ggml_cy.dequantize([0] * 68, "q8_0", (2, 32))
    with pytest.raises(TypeError, match="dtype"):
        ggml_cy.dequantize(raw, "q8_0", (2, 32), dtype=np.float64)
    with pytest.raises(TypeError, match="dtype"):
        ggml_cy.dequantize(raw, "q8_0", (2, 32), dtype="nonsense")
    with pytest.raises(TypeError, match="shape"):
        ggml_cy.dequantize(raw, "q8_0", (2, 32.0))
    with pytest.raises(ValueError, match="negative"):
        ggml_cy.dequantize(raw, "q8_0", (-2, 32))
    with pytest.raises(ValueError, match="at least one"):
        ggml_cy.dequantize(raw, "q8_0", ())
    ro = np.empty((2, 32), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        ggml_cy.dequantize(raw, "q8_0", (2, 32), out=ro)
    with pytest.raises(ValueError, match="shape"):
        ggml_cy.dequantize(raw, "q8_0", (2, 32), out=np.empty((64,), np.float32))
    with pytest.raises(TypeError, match="dtype"):
        ggml_cy.dequantize(raw, "q8_0", (2, 32), out=np.empty((2, 32), np.float64))
    with pytest.raises(ValueError, match="C-contiguous"):
        ggml_cy.dequantize(raw, "q8_0", (2, 32), out=np.empty((32, 2), np.float32).T)
    with pytest.raises(TypeError):
        ggml_cy.dequantize(raw, "q8_0", (2, 32), out=[0.0] * 64)
    with pytest.raises(ValueError):
        ggml_cy.dequantize(raw, "q8_0", (2, 32), n_threads=0)
    with pytest.raises(TypeError):
        ggml_cy.dequantize(raw, "q8_0", (2, 32), n_threads=1.5)


def test_dequantize_out_and_shapes():
    rng = np.random.default_rng(7)
    raw = random_raw(rng, GGMLType.Q4_K, 4, 2)
    ref = gguf_ref(raw, GGMLType.Q4_K)
    out = np.full(ref.shape, 7.0, np.float32)
    assert ggml_cy.dequantize(raw, GGMLType.Q4_K, ref.shape, out=out) is out
    assert bits_equal(out, ref)
    out16 = np.empty(ref.shape, np.uint16)
    ggml_cy.dequantize(raw, "q4_K", ref.shape, out=out16, dtype="bfloat16")
    assert bits_equal(out16, ggml_cy.float32_to_bfloat16(ref))
    # bytes-likes, flat raw, any raw shape with the same bytes
    assert bits_equal(ggml_cy.dequantize(raw.tobytes(), 12, ref.shape), ref)
    assert bits_equal(ggml_cy.dequantize(bytearray(raw.tobytes()), "Q4_K", ref.size), ref.reshape(-1))
    assert bits_equal(ggml_cy.dequantize(memoryview(raw), "q4_k", (2, 2, 512)), ref.reshape(2, 2, 512))
    # empty
    assert ggml_cy.dequantize(b"", "q4_K", (0, 256)).shape == (0, 256)
    assert ggml_cy.dequantize(b"", "q4_K", (3, 0)).shape == (3, 0)
    # plain float types, as gguf-py's dequantize takes them
    x = np.linspace(-3, 3, 12, dtype=np.float32)
    assert bits_equal(ggml_cy.dequantize(x.view(np.uint8), "f32", (3, 4)), x.reshape(3, 4))
    h = x.astype(np.float16)
    assert bits_equal(ggml_cy.dequantize(h.view(np.uint8), "f16", (12,)), h.astype(np.float32))
    b = ggml_cy.float32_to_bfloat16(x)
    assert bits_equal(ggml_cy.dequantize(b.view(np.uint8), "bf16", (12,)),
                      ggml_cy.bfloat16_to_float32(b))


# ------------------------------------------------------- outputs that go out streamed
# A call whose float32 output reaches 48 MiB (dequant.h's GCY_DQ_NT_BYTES) writes it with
# non-temporal stores: straight from the registers when the output is 64-byte aligned,
# through an L1 buffer when it is not (numpy's large arrays start 16 bytes past a page).
STREAMED_VALUES = 13 << 20          # 52 MiB of float32


@pytest.mark.parametrize("t", [GGMLType.Q8_0, GGMLType.Q4_0, GGMLType.Q4_K, GGMLType.Q6_K,
                               GGMLType.IQ4_XS, GGMLType.Q5_1], ids=str)
def test_streamed_outputs_have_the_same_bits(t):
    rng = np.random.default_rng(int(t))
    nblk = STREAMED_VALUES // t.blck_size
    raw = random_raw(rng, t, 1, nblk).reshape(-1)
    # the reference: pieces of 1M values, each under the streaming threshold
    per = (1 << 20) // t.blck_size
    ref = np.concatenate([ggml_cy.dequantize(raw[i * t.type_size:(i + per) * t.type_size], t,
                                             (min(per, nblk - i) * t.blck_size,))
                          for i in range(0, nblk, per)])
    buf = np.empty(STREAMED_VALUES + 32, np.float32)
    base = (-buf.ctypes.data % 64) // 4                 # index of a 64-byte aligned float
    for off in (0, 1, 4, 13):                           # floats past an aligned address
        buf[:] = 7.0
        out = buf[base + off:base + off + STREAMED_VALUES]
        ggml_cy.dequantize(raw, t, out.shape, out=out, n_threads=2)
        assert bits_equal(out, ref), f"offset {4 * off} bytes"
        # nothing written around the output
        assert np.all(buf[:base + off] == 7.0) and np.all(buf[base + off + STREAMED_VALUES:] == 7.0)


# ---------------------------------------------------------------- the portable C path
_PORTABLE_C = r"""
#include "dequant.h"
int dq(int type, const uint8_t *src, long nrows, long nblk, char *dst, int kind) {
    return gcy_dequant_rows(type, src, nblk * (long)ggml_cy_block_bytes(type), nrows, nblk,
                            dst, nblk * ggml_cy_blck_size(type) * (kind ? 2 : 4), kind, 1);
}
"""


def test_portable_build_matches(tmp_path):
    """dequant.h compiled for plain x86-64 / the generic target (no F16C, no AVX2: the
    scalar f16 conversions and table lookups) gives the same bits as the built module."""
    import ctypes
    import os
    import shutil
    import subprocess
    cc = shutil.which(os.environ.get("CC", "cc").split()[0]) or shutil.which("gcc")
    root = os.path.dirname(ggml_cy.__file__)   # the headers of the package under test
    if cc is None or not os.path.exists(os.path.join(root, "cpu", "csrc", "dequant.h")):
        pytest.skip("no C compiler or no installed headers")
    src = tmp_path / "dq.c"
    src.write_text(_PORTABLE_C)
    lib = tmp_path / "libdq.so"
    flags = ["-O2", "-shared", "-fPIC", f"-I{root}/core/csrc", f"-I{root}/cpu/csrc"]
    march = ["-march=x86-64"] if os.uname().machine == "x86_64" else []
    r = subprocess.run([cc, *march, *flags, str(src), "-o", str(lib)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    dq = ctypes.CDLL(str(lib)).dq
    dq.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_long, ctypes.c_long,
                   ctypes.c_void_p, ctypes.c_int]
    rng = np.random.default_rng(99)
    for t in [t for t in GGMLType if t.is_quantized]:
        raw = random_raw(rng, t, 5, 3)
        for kind, dt in ((0, np.float32), (1, np.float16), (2, "bfloat16")):
            out = np.empty((5, 3 * t.blck_size), np.float32 if kind == 0 else np.uint16)
            assert dq(int(t), raw.ctypes.data, 5, 3, out.ctypes.data, kind) == 0
            want = ggml_cy.dequantize(raw, t, out.shape, dtype=dt)
            assert np.array_equal(out.view(np.uint8), want.view(np.uint8)), (t, kind)
