"""K-quants (Q2_K..Q6_K) and the activation formats (Q8_1, Q8_K) against ggml's reference
quantizer, quantize_row_*_ref of ggml-quants.c.

How this is verified (README "Quantized types"):
1. an oracle: ggml's own ggml-quants.c compiled here into a small shared library with
   -ffp-contract=off (strict IEEE order, no FMA) and compared block for block on random data
   of many magnitudes. It needs ggml's sources (GGML_CY_GGML_SRC=<ggml checkout>, or the git
   mirror the project was developed with) and a C compiler; skipped otherwise;
2. golden digests of the same oracle's output on deterministic data (an integer LCG, so the
   input is the same on every machine and numpy version): these always run;
3. blocks derived by hand (values on the quant grid come back exactly, with the scale bytes
   worked out from the algorithm), and the round-trip error through gguf-py's dequantizer.
"""
import ctypes
import hashlib
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from ggml_cy.quants import quantize

KTYPES = ["q2_K", "q3_K", "q4_K", "q5_K", "q6_K"]
ALL = KTYPES + ["q8_K", "q8_1"]


def lcg_data():
    """40 rows x 1024 float32 values from a 64-bit LCG (Knuth's MMIX constants): five
    families (near-normal, heavy-tailed, positive, sparse, integers) at eight magnitudes."""
    n = 40 * 1024
    x = 0x2545F4914F6CDD1D
    u = np.empty(4 * n, np.float64)
    for i in range(4 * n):
        x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        u[i] = ((x >> 40) + 0.5) / 2.0 ** 24
    u = u.reshape(4, 40, 1024)
    g = u.sum(axis=0) - 2.0                          # Irwin-Hall: near-normal, |g| < 2
    fam = np.empty((40, 1024))
    fam[0:8] = g[0:8]
    fam[8:16] = g[8:16] ** 3
    fam[16:24] = u[0, 16:24]
    fam[24:32] = np.where(u[1, 24:32] < 0.6, 0.0, g[24:32])
    fam[32:40] = np.round(g[32:40] * 4)
    scale = 10.0 ** (np.arange(40) % 8 - 4)           # 1e-4 ... 1e3
    return (fam * scale[:, None]).astype(np.float32)


# sha256 of quantize(lcg_data(), type), as produced by ggml's quantize_row_*_ref compiled with
# gcc -O2 -ffp-contract=off (ggml commit d99724f2, Aug 2026); ggml_cy matched it block for block.
GOLDEN = {
    "q2_K": "09a280083984c93357850a4045dd921fdbc3dba0663c50199f2ac07c03d51fc8",
    "q3_K": "922e76341ddb17db9c610590a7a88ca54b3aae3e81ba709ec6667041506eb6a5",
    "q4_K": "1f63cfa4693fad489a7da0ad76b220d9550484977c37ece513a2fccf2069ccac",
    "q5_K": "7ab666810e3d17fe6e15fbb09f135d2ef521f37a6025ba44e89f45adcfa96bda",
    "q6_K": "9ae3ac35445d24389be469d1fbdb3a040adf6e81f19e9b736703870a89d73a69",
    "q8_K": "afce4e79402aa094e78cb535eeaa84739b1f912d25d76e4b53496f1a212f279f",
    "q8_1": "ee36a05ce790d4a073d2c6bef1b6ef18747c6cbc1128a5e61e0552ebc68b7516",
}


@pytest.mark.parametrize("name", ALL)
def test_golden_digest(name):
    got = quantize(lcg_data(), name)
    assert hashlib.sha256(got.tobytes()).hexdigest() == GOLDEN[name]


# ------------------------------------------------------------------------------ the oracle

def _ggml_src():
    env = os.environ.get("GGML_CY_GGML_SRC")
    if env:
        p = pathlib.Path(env)
        return ("dir", p) if (p / "src" / "ggml-quants.c").exists() else None
    mirror = pathlib.Path("/work/.mirror/ggml-org+ggml/repo")
    if mirror.exists() and shutil.which("git"):
        return ("git", mirror)
    return None


STUBS = r"""
#include <stdlib.h>
#include <stddef.h>
void ggml_abort(const char * f, int l, const char * fmt, ...) { abort(); }
size_t ggml_row_size(int t, long long n) { abort(); }
const char * ggml_type_name(int t) { return "?"; }
size_t ggml_type_size(int t) { abort(); }
"""


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    src = _ggml_src()
    cc = shutil.which("gcc") or shutil.which("cc")
    if src is None or cc is None:
        pytest.skip("ggml's sources (GGML_CY_GGML_SRC) or a C compiler not available")
    d = tmp_path_factory.mktemp("ggml_oracle")
    if src[0] == "git":
        tar = subprocess.run(["git", f"--git-dir={src[1]}", "archive", "HEAD", "src", "include"],
                             capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(d)], input=tar, check=True)
        root = d
    else:
        root = src[1]
    (d / "stubs.c").write_text(STUBS)
    lib = d / "libggmlq.so"
    r = subprocess.run([cc, "-O2", "-DNDEBUG", "-ffp-contract=off", "-fPIC", "-shared",
                        f"-I{root / 'include'}", f"-I{root / 'src'}",
                        str(root / "src" / "ggml-quants.c"), str(d / "stubs.c"),
                        "-o", str(lib), "-lm"], capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"could not build ggml-quants.c: {r.stderr[-500:]}")
    return ctypes.CDLL(str(lib))


def run_oracle(lib, name, x):
    x = np.ascontiguousarray(x, np.float32)
    out = np.zeros_like(quantize(x, name))
    fn = getattr(lib, f"quantize_row_{name}_ref")
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    fn(x.ctypes.data, out.ctypes.data, x.size)
    return out


def random_rows(seed):
    rng = np.random.default_rng(seed)
    parts = []
    for scale in (1.0, 1e-3, 1e-20, 1e3, 1e10):
        parts += [rng.standard_normal((40, 256)) * scale,
                  rng.uniform(-1, 1, (20, 256)) * scale,
                  rng.uniform(0, 1, (20, 256)) * scale,
                  -rng.uniform(0, 1, (20, 256)) * scale,
                  rng.standard_t(2, (20, 256)) * scale,
                  np.round(rng.standard_normal((20, 256)) * 4) * scale]
        s = rng.standard_normal((20, 256)) * scale
        s[rng.random(s.shape) < 0.7] = 0
        parts.append(s)
    x = np.concatenate(parts).astype(np.float32)
    x[3] = 0
    x[4] = 1
    x[5, :128] = 0
    return x


@pytest.mark.parametrize("name", ALL)
def test_against_ggml_reference(oracle, name):
    x = random_rows(11)
    got = quantize(x, name)
    want = run_oracle(oracle, name, x)
    bad = np.nonzero((got != want).any(axis=1))[0]
    assert bad.size == 0, (bad[:5], x[bad[0]][:8])


@pytest.mark.parametrize("name", ALL)
def test_golden_digest_is_ggml(oracle, name):
    """The digests above are the reference's (re-derived whenever the oracle is at hand)."""
    want = run_oracle(oracle, name, lcg_data())
    assert hashlib.sha256(want.tobytes()).hexdigest() == GOLDEN[name]


# ------------------------------------------------------------------------------ by hand

def h16(v):
    return int(np.float32(v).astype(np.float16).view(np.uint16))


def test_zero_blocks():
    x = np.zeros((2, 256), np.float32)
    for name in ALL:
        assert not quantize(x, name).any(), name


def test_q4_K_on_grid():
    """Integers 0..15 in every 32-value group: min 0, scale 1 found exactly; the six-bit
    scale is 63 against d = fp16(1/63), mins 0 (dmin 0), quants = the values."""
    x = (np.arange(256) % 16).astype(np.float32)
    x = np.roll(x, 5).reshape(1, 256)
    b = quantize(x, "q4_K")[0]
    assert b[0:2].view(np.uint16)[0] == h16(np.float32(1) / np.float32(63))
    assert b[2:4].view(np.uint16)[0] == 0
    np.testing.assert_array_equal(b[4:8], [255] * 4)       # 63 | (63 >> 4) << 6
    np.testing.assert_array_equal(b[8:12], [0] * 4)
    np.testing.assert_array_equal(b[12:16], [15] * 4)      # low nibbles of scales 4..7
    q = b[16:].reshape(4, 32)
    L = x[0].reshape(4, 2, 32)
    np.testing.assert_array_equal(q & 15, L[:, 0])
    np.testing.assert_array_equal(q >> 4, L[:, 1])


def test_q6_K_on_grid():
    """x = (k - 8)/4 in every 16-group: the first largest magnitude is -2, the fit is exact
    with scale 1/16, the eight-bit scales all -128 against d = fp16(-1/2048), levels 4k."""
    k = np.arange(256) % 16
    x = ((k - 8) / 4.0).astype(np.float32).reshape(1, 256)
    b = quantize(x, "q6_K")[0]
    assert b[208:210].view(np.uint16)[0] == h16(-1 / 2048)
    np.testing.assert_array_equal(b[192:208].view(np.int8), [-128] * 16)
    ql, qh = b[:128], b[128:192]
    L = np.empty(256, np.int64)
    for h in range(2):
        for l in range(32):
            lo0, lo1 = ql[64 * h + l], ql[64 * h + 32 + l]
            hi = qh[32 * h + l]
            L[128 * h + l] = (lo0 & 15) | ((hi & 3) << 4)
            L[128 * h + 32 + l] = (lo1 & 15) | (((hi >> 2) & 3) << 4)
            L[128 * h + 64 + l] = (lo0 >> 4) | (((hi >> 4) & 3) << 4)
            L[128 * h + 96 + l] = (lo1 >> 4) | (((hi >> 6) & 3) << 4)
    np.testing.assert_array_equal(L, 4 * k)


@pytest.mark.parametrize("name,nmse_max", [("q2_K", 0.12), ("q3_K", 0.04), ("q4_K", 0.01),
                                           ("q5_K", 0.003), ("q6_K", 0.001)])
def test_round_trip_error(name, nmse_max):
    """Dequantized by gguf-py, Gaussian data comes back within the K-quants' usual error."""
    gguf = pytest.importorskip("gguf")
    from gguf.quants import dequantize
    x = np.random.default_rng(4).standard_normal((64, 512)).astype(np.float32)
    y = dequantize(quantize(x, name), gguf.GGMLQuantizationType[name.upper()])
    nmse = float(((y - x) ** 2).sum() / (x ** 2).sum())
    assert nmse < nmse_max, nmse


def test_threads_and_shapes():
    x = np.random.default_rng(6).standard_normal((2, 3, 4096)).astype(np.float32)
    for name in ALL:
        one = quantize(x, name, n_threads=1)
        np.testing.assert_array_equal(quantize(x, name, n_threads=2), one)
        np.testing.assert_array_equal(quantize(x.reshape(-1, 256), name, n_threads=3).reshape(one.shape), one)


def test_nonfinite_is_deterministic():
    """Like ggml's reference, NaN/inf are not checked: the blocks are meaningless but the
    same every time (and equal to the release-built reference's, see the oracle test)."""
    x = np.random.default_rng(8).standard_normal((4, 256)).astype(np.float32)
    x[0, 3] = np.nan
    x[1, 7] = np.inf
    x[2, :] = np.inf
    x[3, 9] = -np.inf
    for name in ALL:
        np.testing.assert_array_equal(quantize(x, name), quantize(x.copy(), name))


def test_nonfinite_matches_reference(oracle):
    x = np.random.default_rng(8).standard_normal((6, 256)).astype(np.float32)
    x[0, 3] = np.nan
    x[1, 7] = np.inf
    x[2, :] = np.inf
    x[3, 9] = -np.inf
    x[4, :] = 3e38
    x[5, :] = 1e-42
    for name in ALL:
        np.testing.assert_array_equal(quantize(x, name), run_oracle(oracle, name, x), name)
