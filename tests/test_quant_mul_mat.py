"""mul_mat with quantized weights (issue 12 item 4): every weight type against the float64
product of the dequantized weights with ggml's tolerance (NMSE < 5e-4, test-backend-ops'
threshold for quantized mul_mat), eager and in the graph, threads 1..3, mat-vec, 8 columns,
odd sizes, batches with broadcast, strided b, and bad arguments."""
import numpy as np
import pytest

import ggml_cy
from ggml_cy import GGMLType as T
from ggml_cy.cpu import _quant_ops
from ggml_cy.quants.compute import mul_mat_types

from _quant_data import random_blocks, dequant_ref

pytest.importorskip("gguf")

NMSE_MAX = 5e-4
TYPES = sorted(mul_mat_types(), key=int)
# the types the issue names as needing integer SIMD dots
INTEGER_TYPES = {T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K,
                 T.Q6_K, T.IQ4_NL, T.IQ4_XS, T.TQ1_0, T.TQ2_0, T.MXFP4}
# every type gguf-py can dequantize (and ggml multiplies with) must be a weight type
GGUF_WEIGHT_TYPES = INTEGER_TYPES | {T.IQ2_XXS, T.IQ2_XS, T.IQ2_S, T.IQ3_XXS, T.IQ3_S,
                                     T.IQ1_S, T.IQ1_M, T.NVFP4}


def nmse(out, ref):
    return float(np.sum((out - ref) ** 2) / np.sum(ref ** 2))


def test_type_coverage():
    kinds = mul_mat_types()
    assert GGUF_WEIGHT_TYPES <= set(kinds)
    for t in INTEGER_TYPES:
        assert kinds[t] == "integer", t
    assert T.Q8_K not in kinds and T.Q8_1 not in kinds   # activation formats only


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("N", [1, 8, 13])
@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_eager_nmse(t, N, n_threads):
    rng = np.random.default_rng(int(t) * 100 + N)
    M, K = 37, 768                      # odd row count; K a multiple of every block size
    raw = random_blocks(t, M, K, rng)
    w = dequant_ref(raw, t, K).astype(np.float64)
    assert np.isfinite(w).all()
    b = rng.standard_normal((N, K)).astype(np.float32)
    out = ggml_cy.mul_mat(raw, b, t, n_threads=n_threads)
    assert out.shape == (N, M) and out.dtype == np.float32
    assert nmse(out, b.astype(np.float64) @ w.T) < NMSE_MAX


@pytest.mark.parametrize("t", [T.Q4_0, T.Q8_0, T.Q4_K, T.Q6_K, T.IQ2_XXS], ids=lambda t: t.name)
def test_eager_shapes(t):
    rng = np.random.default_rng(5)
    K = 512
    raw = random_blocks(t, 5, K, rng)
    w = dequant_ref(raw, t, K).astype(np.float64)
    x = rng.standard_normal(K).astype(np.float32)           # 1-D b: a mat-vec, shape (M,)
    y = ggml_cy.mul_mat(raw, x, t)
    assert y.shape == (5,) and nmse(y, w @ x) < NMSE_MAX
    x3 = rng.standard_normal((2, 3, K))                     # float64 is converted
    y3 = ggml_cy.mul_mat(raw, x3, t.name.lower())
    assert y3.shape == (2, 3, 5) and nmse(y3, x3 @ w.T) < NMSE_MAX
    out = np.full((2, 3, 5), np.nan, np.float32)
    assert ggml_cy.mul_mat(raw, x3, int(t), out=out) is out
    np.testing.assert_array_equal(out, y3)
    # threads change nothing: every output element is one dot computed the same way
    big = rng.standard_normal((9, K)).astype(np.float32)
    r1 = ggml_cy.mul_mat(raw, big, t, n_threads=1)
    for n in (2, 3):
        np.testing.assert_array_equal(ggml_cy.mul_mat(raw, big, t, n_threads=n), r1)


def test_eager_large_rows_threads():
    # enough work that 2-3 threads really split rows and columns
    rng = np.random.default_rng(9)
    M, K = 300, 1024
    for t in (T.Q4_0, T.Q5_K):
        raw = random_blocks(t, M, K, rng)
        w = dequant_ref(raw, t, K).astype(np.float64)
        b = rng.standard_normal((8, K)).astype(np.float32)
        r1 = ggml_cy.mul_mat(raw, b, t, n_threads=1)
        assert nmse(r1, b @ w.T) < NMSE_MAX
        for n in (2, 3):
            np.testing.assert_array_equal(ggml_cy.mul_mat(raw, b, t, n_threads=n), r1)


def _graph_mul_mat(t, raw, K, b_arr, n_threads, batch_a=(1, 1), b_view=None):
    M = raw.shape[0] // (batch_a[0] * batch_a[1])
    ctx = ggml_cy.Context(64 << 20)
    a = ctx.new_tensor(t, (K, M) + tuple(batch_a))
    a.raw()[...] = raw.reshape(a.raw().shape)
    if b_view is None:
        b = ctx.new_tensor(T.F32, tuple(reversed(b_arr.shape)))
        b.numpy()[...] = b_arr
    else:
        b = b_view(ctx, b_arr)
    r = ctx.mul_mat(a, b)
    g = ctx.new_graph()
    g.build_forward_expand(r)
    g.compute(n_threads)
    return r.numpy().copy(), g


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.name)
def test_graph_matches_eager(t, n_threads):
    rng = np.random.default_rng(int(t))
    M, K, N = 19, 512 if t.blck_size < 512 else t.blck_size, 8
    raw = random_blocks(t, M, K, rng)
    b = rng.standard_normal((N, K)).astype(np.float32)
    res, g = _graph_mul_mat(t, raw, K, b, n_threads)
    np.testing.assert_array_equal(res, ggml_cy.mul_mat(raw, b, t))
    assert ("mul_mat_q", 0, 1) in g.plan(n_threads).steps


@pytest.mark.parametrize("n_threads", [1, 3])
def test_graph_batched_broadcast(n_threads):
    # a [K, M, 2, 1] repeated over b [K, N, 4, 3]: ggml's i02 = i12 / (ne12 / ne02)
    rng = np.random.default_rng(3)
    t, M, K, N = T.Q4_K, 7, 256, 5
    raw = random_blocks(t, 2 * M, K, rng)
    w = dequant_ref(raw, t, K).astype(np.float64).reshape(2, M, K)
    b = rng.standard_normal((3, 4, N, K)).astype(np.float32)
    res, _ = _graph_mul_mat(t, raw, K, b, n_threads, batch_a=(2, 1))
    assert res.shape == (3, 4, N, M)
    for i13 in range(3):
        for i12 in range(4):
            ref = b[i13, i12].astype(np.float64) @ w[i12 // 2].T
            assert nmse(res[i13, i12], ref) < NMSE_MAX


def _strided_b(ctx, arr):
    # rows padded: a view of a wider tensor (nb1 > ne0 * 4)
    N, K = arr.shape
    base = ctx.new_tensor(T.F32, (K + 32, N))
    base.numpy()[:, :K] = arr
    return base.view_2d(K, N, (K + 32) * 4, 0)


def _transposed_b(ctx, arr):
    # elements of a row 4*N bytes apart (nb0 != 4): the transpose of a [N, K] tensor
    N, K = arr.shape
    base = ctx.new_tensor(T.F32, (N, K))
    base.numpy()[...] = arr.T
    return base.transpose()


@pytest.mark.parametrize("view", [_strided_b, _transposed_b], ids=["padded", "transposed"])
@pytest.mark.parametrize("t", [T.Q4_0, T.Q5_1, T.Q6_K, T.IQ3_S], ids=lambda t: t.name)
def test_graph_strided_b(t, view):
    rng = np.random.default_rng(11)
    M, K, N = 9, 512, 6
    raw = random_blocks(t, M, K, rng)
    b = rng.standard_normal((N, K)).astype(np.float32)
    res, _ = _graph_mul_mat(t, raw, K, b, 2, b_view=view)
    np.testing.assert_array_equal(res, ggml_cy.mul_mat(raw, b, t))


def test_graph_bad_arguments():
    ctx = ggml_cy.Context(16 << 20)
    a = ctx.new_tensor(T.Q4_0, (64, 4))
    b16 = ctx.new_tensor(T.F16, (64, 3))
    b = ctx.new_tensor(T.F32, (96, 3))
    with pytest.raises(TypeError, match="mul_mat"):
        ctx.mul_mat(a, b16)                         # b must be f32
    with pytest.raises(ValueError, match="ne\\[0\\]"):
        ctx.mul_mat(a, b)                           # K mismatch
    w8k = ctx.new_tensor(T.Q8_K, (256, 2))
    with pytest.raises(TypeError, match="mul_mat"):
        ctx.mul_mat(w8k, ctx.new_tensor(T.F32, (256, 1)))   # activation format, not weights
    big = ctx.new_tensor(T.Q4_0, (64, 4, 2))
    perm = big.permute(0, 2, 1, 3)                  # rows strided, still blocks: allowed
    r = ctx.mul_mat(perm, ctx.new_tensor(T.F32, (64, 3, 4)))
    assert r.ne[:2] == (2, 3) or tuple(r.ne[:2]) == (2, 3)
    with pytest.raises(ValueError):
        ctx.mul_mat(big.transpose(), ctx.new_tensor(T.F32, (4, 3)))   # blocks not contiguous


class TestEagerBadInput:
    rng = np.random.default_rng(0)
    raw = random_blocks(T.Q4_0, 4, 64, rng)
    b = np.ones((2, 64), np.float32)

    def test_no_type(self):
        with pytest.raises(TypeError, match="type="):
            ggml_cy.mul_mat(self.raw, self.b)

    def test_unknown_type(self):
        with pytest.raises(ValueError, match="unknown type"):
            ggml_cy.mul_mat(self.raw, self.b, "q9_9")
        with pytest.raises(ValueError, match="unknown type"):
            ggml_cy.mul_mat(self.raw, self.b, 4)          # a retired ggml number
        with pytest.raises(TypeError):
            ggml_cy.mul_mat(self.raw, self.b, 2.5)

    def test_not_quantized(self):
        with pytest.raises(TypeError, match="quantized"):
            ggml_cy.mul_mat(self.raw, self.b, "f32")

    def test_ne0_mismatch(self):
        with pytest.raises(ValueError, match="ne0 mismatch"):
            ggml_cy.mul_mat(self.raw, np.ones((2, 96), np.float32), T.Q4_0)
        with pytest.raises(ValueError, match="block size"):
            ggml_cy.mul_mat(self.raw, np.ones((2, 65), np.float32), T.Q4_0)
        with pytest.raises(ValueError, match="ne0 mismatch"):
            ggml_cy.mul_mat(self.raw, self.b, T.Q8_0)     # bytes are not Q8_0 rows

    def test_bad_arrays(self):
        with pytest.raises(TypeError, match="uint8"):
            ggml_cy.mul_mat(self.raw.view(np.int8), self.b, T.Q4_0)
        with pytest.raises(TypeError, match="uint8"):
            ggml_cy.mul_mat(self.raw.reshape(-1), self.b, T.Q4_0)
        with pytest.raises(TypeError, match="real"):
            ggml_cy.mul_mat(self.raw, self.b.astype(np.complex64), T.Q4_0)
        with pytest.raises(TypeError, match="real"):
            ggml_cy.mul_mat(self.raw, np.array([["a"] * 64]), T.Q4_0)
        with pytest.raises(ValueError):
            ggml_cy.mul_mat(self.raw, np.float32(1), T.Q4_0)

    def test_bad_out(self):
        with pytest.raises(ValueError, match="out"):
            ggml_cy.mul_mat(self.raw, self.b, T.Q4_0, out=np.empty((2, 5), np.float32))
        with pytest.raises(ValueError, match="out"):
            ggml_cy.mul_mat(self.raw, self.b, T.Q4_0, out=np.empty((2, 4), np.float64))
        ro = np.empty((2, 4), np.float32)
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            ggml_cy.mul_mat(self.raw, self.b, T.Q4_0, out=ro)

    def test_bad_threads(self):
        with pytest.raises((ValueError, TypeError)):
            ggml_cy.mul_mat(self.raw, self.b, T.Q4_0, n_threads=0)

    def test_tensor_input(self):
        ctx = ggml_cy.Context(1 << 20)
        a = ctx.new_tensor(T.Q4_0, (64, 4))
        a.raw()[...] = self.raw
        np.testing.assert_array_equal(ggml_cy.mul_mat(a, self.b),
                                      ggml_cy.mul_mat(self.raw, self.b, T.Q4_0))
        with pytest.raises(TypeError, match="differs"):
            ggml_cy.mul_mat(a, self.b, T.Q8_0)
        # (issue 14 item 3) a float tensor runs the float kernel: b @ a.T
        f = ctx.new_tensor(T.F32, (64, 4))
        f.numpy(2)[...] = 0.5
        np.testing.assert_allclose(ggml_cy.mul_mat(f, self.b), self.b @ f.numpy(2).T, rtol=1e-6)
        with pytest.raises(ValueError, match="2-D"):
            ggml_cy.mul_mat(ctx.new_tensor(T.Q4_0, (64, 4, 2)), self.b)

    def test_empty(self):
        assert ggml_cy.mul_mat(self.raw, np.ones((0, 64), np.float32), T.Q4_0).shape == (0, 4)
        e = random_blocks(T.Q4_0, 0, 64, self.rng)
        assert ggml_cy.mul_mat(e, self.b, T.Q4_0).shape == (2, 0)


# flags of the standalone builds (tests/csrc/mmq_levels.c) and the CPU flags they need
SIMD_LEVELS = {"avx2": (["-mavx2", "-mfma", "-mf16c"], ["avx2", "fma", "f16c"]),
               "scalar": (["-march=x86-64"], []),
               "avx512": (["-march=x86-64-v4"], ["avx512f", "avx512bw", "avx512vl"]),
               "vnni": (["-march=x86-64-v4", "-mavx512vnni"],
                        ["avx512f", "avx512bw", "avx512vl", "avx512_vnni"])}


def _mmq_level_exe(level, tmp_path):
    """mul_mat_q.h compiled standalone for one level; None (skip) where this machine can't
    build or run it."""
    import os
    import platform
    import shutil
    import subprocess
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("x86 flags")
    cc = shutil.which(os.environ.get("CC", "cc").split()[-1]) or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    pkg = os.path.dirname(ggml_cy.__file__)   # the headers of the package under test
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.exists(os.path.join(pkg, "cpu", "csrc", "mul_mat_q.h")):
        pytest.skip("no installed headers")
    flags, need = SIMD_LEVELS[level]
    exe = str(tmp_path / f"mmq_{level}")
    r = subprocess.run([cc, "-O2", *flags, "-w", "-I", os.path.join(pkg, "cpu/csrc"),
                        "-I", os.path.join(pkg, "core/csrc"), "-o", exe,
                        os.path.join(here, "csrc/mmq_levels.c"), "-lm"],
                       capture_output=True, text=True)
    if r.returncode != 0 and level in ("avx512", "vnni") and "march" in r.stderr:
        pytest.skip(f"compiler lacks {flags}")
    assert r.returncode == 0, r.stderr
    try:
        cpu = open("/proc/cpuinfo").read().split()
    except OSError:
        cpu = []
    if any(f not in cpu for f in need):
        pytest.skip(f"CPU without {need} (or no /proc/cpuinfo)")
    return exe


def _mmq_run(exe, t, raw, b):
    import subprocess
    M, N, K = raw.shape[0], b.shape[0], b.shape[1]
    inp = np.array([int(t), M, K, N], np.int32).tobytes() + raw.tobytes() + b.tobytes()
    p = subprocess.run([exe], input=inp, capture_output=True)
    assert p.returncode == 0, (t, p.returncode)
    return np.frombuffer(p.stdout, np.float32).reshape(N, M)


@pytest.mark.parametrize("level", list(SIMD_LEVELS))
def test_simd_levels(level, tmp_path):
    """Every path of vecdot.h (AVX2 without VNNI, plain C, AVX-512, AVX-512 VNNI; this
    machine's build uses its best one), compiled standalone from the same headers and
    checked the same way."""
    exe = _mmq_level_exe(level, tmp_path)
    rng = np.random.default_rng(17)
    M, K, N = 21, 768, 11
    for t in TYPES:
        raw = random_blocks(t, M, K, rng)
        w = dequant_ref(raw, t, K).astype(np.float64)
        b = rng.standard_normal((N, K)).astype(np.float32)
        out = _mmq_run(exe, t, raw, b)
        assert nmse(out, b.astype(np.float64) @ w.T) < NMSE_MAX, t


def test_simd_levels_bitwise(tmp_path):
    """The integer dots give the same int32 sums on every SIMD path (vpdpbusd / vpdpwssd
    with VNNI, vpmaddubsw + vpmaddwd without) and the float steps after them are the same
    operations, so avx2, avx512 and avx512+VNNI agree bit for bit, for 1 column (the
    mat-vec path) and for several."""
    exes = {}
    for level in ("avx2", "avx512", "vnni"):
        try:
            exes[level] = _mmq_level_exe(level, tmp_path)
        except pytest.skip.Exception:
            pass
    if len(exes) < 2:
        pytest.skip(f"fewer than two SIMD levels run here ({list(exes)})")
    rng = np.random.default_rng(23)
    M = 19
    for t in [t for t in TYPES if t in INTEGER_TYPES]:
        K = 1280 if t.blck_size == 256 else 1248   # 39 blocks of 32: groups of 8 + a tail
        raw = random_blocks(t, M, K, rng)
        for N in (1, 3, 9):
            b = rng.standard_normal((N, K)).astype(np.float32)
            outs = {lv: _mmq_run(exe, t, raw, b) for lv, exe in exes.items()}
            first = next(iter(outs))
            for lv, o in outs.items():
                np.testing.assert_array_equal(o, outs[first], err_msg=f"{t.name} N={N} {lv}")
            if N == 9:   # and a column does not depend on the others
                one = _mmq_run(exes[first], t, raw, b[4:5])
                np.testing.assert_array_equal(one[0], outs[first][4], err_msg=t.name)
