"""ggml_cy.quantize against gguf-py's gguf.quants.quantize, bit for bit: random data at many
magnitudes, exact rounding ties, the boundary where block scales turn subnormal (the SIMD
fast path hands over to the exact scalar path there), +-0, subnormals, huge values, NaN and
infinities. Plus shapes, threads, out=, the activation formats Q8_1/Q8_K and bad input."""
import warnings

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
from gguf.quants import quantize as gguf_quantize  # noqa: E402

import ggml_cy  # noqa: E402
from ggml_cy.quants import quantize  # noqa: E402

QT = gguf.GGMLQuantizationType
GGUF_TYPES = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "BF16", "TQ1_0", "TQ2_0", "MXFP4"]
FLT_MIN = np.float32(1.17549435e-38)
SPECIALS = np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-45, -1e-45, 1e-40,
                     FLT_MIN, 3.4028235e38, -3.4028235e38, 1e38, 65504, 65520, 1e-7,
                     0.5, -0.5, 1.5, 8.5, 1.0, -1.0], np.float32)


def _numpy_reduce_order_known():
    """ggml_cy reproduces numpy 2.x's AVX-512 min/max reduction order (which zero sign and
    which NaN a reduction returns; csrc/quantize.h). On a CPU where numpy dispatches another
    SIMD width that order differs; the sweeps then use +0 and the default NaN only."""
    x = np.ones((3, 32), np.float32)
    x[1, 0], x[1, 4] = -0.0, 0.0
    y = np.ones((3, 32), np.float32)
    y.view(np.uint32)[1, 20] = 0xffc00011
    z = np.ones((3, 32), np.float32)
    z.view(np.uint32)[1, 3] = 0xffc00011
    return (not np.signbit(x.min(axis=-1, keepdims=True)[1, 0])
            and y.max(axis=-1, keepdims=True).view(np.uint32)[1, 0] == 0xffc00011
            and z.min(axis=-1, keepdims=True).view(np.uint32)[1, 0] == 0x7fc00000)


ORDER_KNOWN = _numpy_reduce_order_known()


def portable(x):
    if not ORDER_KNOWN:
        x = np.where(x == 0, np.float32(0), x)
        x = np.where(np.isnan(x), np.float32(np.nan), x)
    return x


def blck(name):
    return 256 if name.startswith("TQ") else (1 if name == "BF16" else 32)


def oracle(x, name):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return gguf_quantize(x, QT[name])


def families(name, nblocks=64, seed=0):
    """name -> (rows of one block each) for the data families the tests sweep."""
    rng = np.random.default_rng(seed)
    n = max(blck(name), 32)
    out = {}
    for scale in (1.0, 1e-3, 1e-30, 1e-37, 1e-38, 1e-40, 1e-44, 1e30, 3e38):
        with np.errstate(over="ignore"):
            x = (rng.standard_normal((nblocks, n)) * scale).astype(np.float32)
        out[f"normal{scale:g}"] = x
        y = x.copy()
        y[np.arange(nblocks), rng.integers(0, n, nblocks)] = rng.choice(SPECIALS, nblocks)
        out[f"one_special{scale:g}"] = y
    out["specials"] = rng.choice(SPECIALS, (nblocks, n)).astype(np.float32)
    # exact ties: with amax = 127 (Q8_0: d = 1), 8 (Q4_0: d = -1), ... halves hit .5 exactly
    for amax in (127.0, 8.0, 16.0, 1.0, 2.0):
        t = (rng.integers(-2 * int(amax), 2 * int(amax) + 1, (nblocks, n)) * 0.5).astype(np.float32)
        t[:, 0] = amax
        t[: nblocks // 2, 0] = -amax
        out[f"ties{amax:g}"] = t
    # block maxima around the smallest normal scale: 127 * FLT_MIN (Q8_0), 8/16 * FLT_MIN
    edges = []
    for k in (127, 16, 8, 1):
        base = np.float32(k) * FLT_MIN
        for step in (-2, -1, 0, 1, 2):
            edges.append(np.nextafter(base, np.float32(np.inf if step > 0 else 0))
                         if step else base)
    e = (rng.uniform(-1, 1, (len(edges), n)).astype(np.float32)
         * np.array(edges, np.float32)[:, None])
    e[np.arange(len(edges)), 3] = edges
    out["scale_edges"] = e
    # powers of two and their neighbours as block maxima (MXFP4's exponent, Q scales)
    p = np.ldexp(np.float32(1), np.arange(-140, 127, 7)).astype(np.float32)
    pm = np.concatenate([p, np.nextafter(p, np.float32(0)), np.nextafter(p, np.float32(np.inf))])
    q = rng.uniform(-1, 1, (len(pm), n)).astype(np.float32) * pm[:, None]
    q[:, 5] = pm
    out["pow2"] = q
    out["zeros"] = np.zeros((4, n), np.float32)
    nz = np.zeros((4, n), np.float32)
    nz[:, ::2] = -0.0
    out["negzeros"] = nz
    return out


@pytest.mark.parametrize("name", GGUF_TYPES)
def test_bitwise_gguf(name):
    for fam, x in families(name).items():
        x = portable(x.reshape(-1, x.shape[-1]))
        got = quantize(x, name)
        want = oracle(x, name)
        assert got.dtype == np.uint8 and got.shape == want.shape
        bad = np.nonzero((got != want).any(axis=-1))[0]
        assert bad.size == 0, (fam, x[bad[0]], got[bad[0]], want[bad[0]])


@pytest.mark.parametrize("name", GGUF_TYPES)
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_rows_and_threads(name, n_threads):
    rng = np.random.default_rng(5)
    b = max(blck(name), 32)
    x = rng.standard_normal((3, 5, 8 * b)).astype(np.float32)
    want = oracle(x, name)
    got = quantize(x, name, n_threads=n_threads)
    assert got.shape == want.shape == x.shape[:-1] + (want.shape[-1],)
    np.testing.assert_array_equal(got, want)
    out = np.zeros_like(want)
    assert quantize(x, getattr(ggml_cy.GGMLType, name, QT[name].value), out=out) is out
    np.testing.assert_array_equal(out, want)
    # non-contiguous and float64/float16 inputs are converted to float32 first, as gguf-py
    xt = np.asfortranarray(x)
    np.testing.assert_array_equal(quantize(xt, name), want)
    np.testing.assert_array_equal(quantize(x.astype(np.float64), name),
                                  oracle(x.astype(np.float64), name))
    np.testing.assert_array_equal(quantize(x.astype(np.float16), name),
                                  oracle(x.astype(np.float16), name))


@pytest.mark.parametrize("name", ["Q4_1", "Q5_1", "Q8_0", "TQ2_0", "TQ1_0", "Q4_0", "Q5_0"])
def test_zero_signs_and_nans(name):
    """Blocks of +-0, +-1, 2, NaNs of both signs and infinities: the sign of a zero min and
    the NaN a reduction returns follow numpy's order (Q4_1/Q5_1's m, every type's d)."""
    rng = np.random.default_rng(9)
    vals = np.array([0.0, -0.0, 1.0, 2.0, -1.0, np.nan, -np.nan, np.inf, -np.inf], np.float32)
    n = 256 if name.startswith("TQ") else 32
    for probs in ([.5, .5, 0, 0, 0, 0, 0, 0, 0], [.3, .3, .2, .2, 0, 0, 0, 0, 0],
                  [.25, .25, .2, .1, .1, .03, .03, .02, .02]):
        x = portable(rng.choice(vals, (2000, n), p=probs).astype(np.float32))
        np.testing.assert_array_equal(quantize(x, name), oracle(x, name))


def test_large_parallel_matches():
    """A run long enough to split over threads equals the one-thread result and gguf-py."""
    x = np.random.default_rng(7).standard_normal((1, 32 * 4096 * 5)).astype(np.float32)
    for name in ("Q8_0", "Q4_0", "Q5_0"):
        one = quantize(x, name, n_threads=1)
        np.testing.assert_array_equal(quantize(x, name, n_threads=2), one)
        np.testing.assert_array_equal(quantize(x, name, n_threads=3), one)
        np.testing.assert_array_equal(one, oracle(x, name))


def test_type_spellings_and_plain_types():
    x = np.random.default_rng(1).standard_normal((2, 64)).astype(np.float32)
    a = quantize(x, "q8_0")
    np.testing.assert_array_equal(quantize(x, "Q8_0"), a)
    np.testing.assert_array_equal(quantize(x, 8), a)
    np.testing.assert_array_equal(quantize(x, QT.Q8_0), a)
    np.testing.assert_array_equal(quantize(x, "f32").view(np.float32), x)
    np.testing.assert_array_equal(quantize(x, "f16").view(np.float16), x.astype(np.float16))
    assert quantize(np.zeros((0, 64), np.float32), "q4_0").shape == (0, 36)
    assert set(GGUF_TYPES + ["Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_1", "Q8_K"]) <= \
        {t.upper() for t in ggml_cy.quants.quantizable_types()}


def test_q8_1_activation_format():
    """Q8_1 = Q8_0's scale and quants plus s = float16(d * sum(q)) with d the float32 scale
    before rounding to float16 (ggml's quantize_row_q8_1_ref)."""
    x = np.random.default_rng(2).standard_normal((16, 32)).astype(np.float32)
    q8_0 = quantize(x, "q8_0")
    q8_1 = quantize(x, "q8_1")
    assert q8_1.shape == (16, 36)
    np.testing.assert_array_equal(q8_1[:, :2], q8_0[:, :2])
    np.testing.assert_array_equal(q8_1[:, 4:], q8_0[:, 2:])
    d = np.abs(x).max(axis=1) / np.float32(127)
    s = (q8_0[:, 2:].view(np.int8).astype(np.int32).sum(axis=1).astype(np.float32) * d)
    np.testing.assert_array_equal(q8_1[:, 2:4].copy().view(np.uint16)[:, 0],
                                  s.astype(np.float16).view(np.uint16))


def test_q8_k_activation_format():
    """Q8_K (ggml's quantize_row_q8_K_ref): d = max/-127 in float32 (max = the value of
    largest magnitude), q = nearest-even(x / d) capped at 127, bsums of 16."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 512)).astype(np.float32)
    x[1] = 0
    got = quantize(x, "q8_K").reshape(8, 2, 292)
    blocks = x.reshape(8, 2, 256)
    for r in range(8):
        for b in range(2):
            v = blocks[r, b]
            blk = got[r, b]
            d = blk[:4].copy().view(np.float32)[0]
            q = blk[4:260].view(np.int8).astype(np.int32)
            bs = blk[260:].copy().view(np.int16)
            if not np.abs(v).max():
                assert d == 0 and not q.any()
                continue
            mx = v[np.argmax(np.abs(v))]
            iscale = np.float32(-127.0) / mx
            want_q = np.minimum(np.rint(iscale * v), 127).astype(np.int32)  # rint: nearest even
            np.testing.assert_array_equal(q, want_q)
            assert d == np.float32(1) / iscale
            np.testing.assert_array_equal(bs, want_q.reshape(16, 16).sum(axis=1))


# ------------------------------------------------------------------------------ bad input

def test_bad_row_length():
    with pytest.raises(ValueError, match="multiple of"):
        quantize(np.zeros((2, 33), np.float32), "q4_0")
    with pytest.raises(ValueError, match="multiple of"):
        quantize(np.zeros(128, np.float32), "q4_K")


@pytest.mark.parametrize("bad", [999, -1, 4, "q9_9", "", 1 << 40])
def test_unknown_type(bad):
    with pytest.raises(ValueError, match="unknown"):
        quantize(np.zeros(32, np.float32), bad)


@pytest.mark.parametrize("bad", [True, 1.5, None, object()])
def test_type_of_wrong_kind(bad):
    with pytest.raises(TypeError):
        quantize(np.zeros(32, np.float32), bad)


@pytest.mark.parametrize("name", ["iq2_xxs", "iq4_nl", "i32", "nvfp4"])
def test_unsupported_type(name):
    with pytest.raises(ValueError, match="cannot quantize"):
        quantize(np.zeros(256, np.float32), name)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_, np.complex64, object])
def test_wrong_dtype(dtype):
    with pytest.raises(TypeError, match="float"):
        quantize(np.zeros(32, dtype), "q8_0")
    with pytest.raises(TypeError):
        quantize(["a"] * 32, "q8_0")


def test_zero_dim():
    with pytest.raises(ValueError, match="axis"):
        quantize(np.float32(1), "q8_0")


def test_bad_out():
    x = np.zeros((2, 32), np.float32)
    ro = np.zeros((2, 34), np.uint8)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        quantize(x, "q8_0", out=ro)
    with pytest.raises(TypeError, match="uint8"):
        quantize(x, "q8_0", out=np.zeros((2, 34), np.int8))
    with pytest.raises(TypeError, match="numpy array"):
        quantize(x, "q8_0", out=bytearray(68))
    with pytest.raises(ValueError, match="shape"):
        quantize(x, "q8_0", out=np.zeros((2, 35), np.uint8))
    with pytest.raises(ValueError, match="contiguous"):
        quantize(x, "q8_0", out=np.zeros((2, 68), np.uint8)[:, ::2])
    with pytest.raises(ValueError):
        quantize(x, "q8_0", n_threads=0)
    with pytest.raises(TypeError):
        quantize(x, "q8_0", n_threads=1.5)


# ------------------------------------------------------------------------------ graph cpy

CPY_TYPES = ["q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K",
             "tq1_0", "tq2_0", "mxfp4"]


@pytest.mark.parametrize("name", CPY_TYPES)
@pytest.mark.parametrize("n_threads", [1, 2, 4])
def test_graph_cpy_quantizes(name, n_threads):
    """ctx.cpy(f32/f16/bf16 tensor, quantized tensor) in a graph = ggml_cy.quantize."""
    T = ggml_cy.GGMLType
    qt = T[name.upper()]
    rng = np.random.default_rng(21)
    x = rng.standard_normal((6, 512)).astype(np.float32)
    ctx = ggml_cy.Context(8 << 20)
    srcs = {
        "f32": ctx.tensor_from(x),
        "f16": ctx.tensor_from(x.astype(np.float16)),
        "bf16": ctx.tensor_from(x, type=T.BF16),
    }
    wants = {"f32": x, "f16": x.astype(np.float16).astype(np.float32),
             "bf16": ggml_cy.bfloat16_to_float32(ggml_cy.float32_to_bfloat16(x))}
    for key, a in srcs.items():
        b = ctx.new_tensor_2d(qt, 512, 6)
        c = ctx.cpy(a, b)
        ctx.new_graph().build_forward_expand(c).compute(n_threads)
        np.testing.assert_array_equal(b.raw(), quantize(wants[key], name), err_msg=key)


def test_graph_cpy_strided_source_and_reshape():
    """Rows of the source may be strided (a view), and the destination may have another
    shape with the same element count: src's rows go one after another (ggml's rule)."""
    T = ggml_cy.GGMLType
    x = np.random.default_rng(22).standard_normal((8, 1024)).astype(np.float32)
    ctx = ggml_cy.Context(8 << 20)
    a = ctx.tensor_from(x)
    v = ctx.view_2d(a, 512, 8, a.nb[1], 256 * 4)        # columns 256..767 of every row
    b = ctx.new_tensor_2d(T.Q8_0, 1024, 4)                # 4 rows of 1024: same count
    ctx.new_graph().build_forward_expand(ctx.cpy(v, b)).compute(2)
    want = quantize(np.ascontiguousarray(x[:, 256:768]), "q8_0").reshape(4, -1)
    np.testing.assert_array_equal(b.raw(), want)


def test_graph_cpy_bad():
    T = ggml_cy.GGMLType
    ctx = ggml_cy.Context(8 << 20)
    a = ctx.tensor_from(np.zeros((4, 48), np.float32))
    with pytest.raises(ValueError, match="whole"):
        ctx.cpy(a, ctx.new_tensor_2d(T.Q4_0, 64, 3))          # rows of 48: not whole blocks
    a2 = ctx.tensor_from(np.zeros((4, 64), np.float32))
    with pytest.raises(TypeError, match="cannot quantize"):
        ctx.cpy(a2, ctx.new_tensor_2d(T.IQ2_XXS, 256, 1))
    with pytest.raises(TypeError, match="f32, f16 or bf16"):
        ctx.cpy(ctx.tensor_from(np.zeros((4, 64), np.int32)), ctx.new_tensor_2d(T.Q8_0, 64, 4))
    with pytest.raises(ValueError, match="adjacent"):
        sq = ctx.tensor_from(np.zeros((64, 64), np.float32))
        ctx.cpy(sq.transpose(), ctx.new_tensor_2d(T.Q8_0, 64, 64))
    with pytest.raises(ValueError, match="element counts"):
        ctx.cpy(a2, ctx.new_tensor_2d(T.Q8_0, 64, 3))


def test_bench_suite_smoke(tmp_path, capsys):
    """python -m bench quant_quantize --smoke runs, checks the blocks against gguf-py and
    writes its JSON (the real sizes and targets are in bench/, not in the tests)."""
    import json
    import pathlib
    import sys
    root = pathlib.Path(__file__).resolve().parents[1]
    if not (root / "bench").is_dir():
        pytest.skip("bench/ is not next to the tests")
    sys.path.insert(0, str(root))
    try:
        from bench.__main__ import main
    finally:
        sys.path.remove(str(root))
    path = tmp_path / "q.json"
    assert main(["quant_quantize", "--smoke", "--threads", "2", "--json", str(path)]) == 0
    doc = json.loads(path.read_text())
    assert [r["name"] for r in doc["results"]][:2] == ["quantize Q8_0 16384",
                                                       "quantize Q4_0 16384"]
    for r in doc["results"]:
        assert not r["errors"] and not r["mismatches"], r


@pytest.mark.parametrize("march", ["x86-64", "haswell"])
def test_portable_and_avx2_builds_agree(tmp_path, march):
    """The scalar emulation (a build without AVX/F16C) and the AVX2 paths give the blocks of
    this build (AVX-512 where the CPU has it) on every data family, every type."""
    import ctypes
    import pathlib
    import platform
    import shutil
    import subprocess
    root = pathlib.Path(ggml_cy.__file__).resolve().parent   # the package under test's headers
    cc = shutil.which("gcc")
    if cc is None or not (root / "cpu" / "csrc" / "quantize.h").exists() \
            or platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("needs gcc, the package's C headers and an x86-64 CPU")
    if march == "haswell":
        from numpy._core._multiarray_umath import __cpu_features__ as feats
        if not feats.get("AVX2") or not feats.get("F16C"):
            pytest.skip("CPU without AVX2/F16C")
    (tmp_path / "q.c").write_text(
        '#include "quantize.h"\n'
        "void qz(int t, const float * x, void * y, long long k) "
        "{ ggml_cy_quantize_fn_of(t)(x, y, k); }\n")
    lib = tmp_path / "libq.so"
    subprocess.run([cc, "-O3", f"-march={march}", "-fno-math-errno", "-fPIC", "-shared",
                    f"-I{root / 'core' / 'csrc'}", f"-I{root / 'cpu' / 'csrc'}",
                    str(tmp_path / "q.c"), "-o", str(lib), "-lm"], check=True)
    L = ctypes.CDLL(str(lib))
    L.qz.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong]
    from ggml_cy.quants.quantize import resolve_type
    for name in GGUF_TYPES + ["Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "Q8_1"]:
        fams = families("TQ1_0" if ("K" in name or name.startswith("TQ")) else name, nblocks=16)
        fams["big"] = np.random.default_rng(1).standard_normal((8, 4096)).astype(np.float32)
        for fam, x in fams.items():
            x = np.ascontiguousarray(x)
            want = quantize(x, name)
            got = np.zeros_like(want)
            L.qz(resolve_type(name), x.ctypes.data, got.ctypes.data, x.size)
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {fam}")
