"""ggml_cy.dask: evaluate, the eager functions and GGUF tensors on dask arrays, with the
threaded scheduler and a dask.distributed LocalCluster of 2 worker processes, on arrays of
many chunks, bitwise against numpy (reductions: dask's tree sums, compared closely)."""
import os

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

import ggml_cy  # noqa: E402
import ggml_cy.dask as gd  # noqa: E402


def _bitwise(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8)) if got.dtype.kind == "f" \
        else np.array_equal(got, want)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((700, 130)).astype(np.float32)
    b = rng.standard_normal(130).astype(np.float32)
    c = rng.standard_normal((700, 1))
    i = rng.integers(-9, 9, (700, 130)).astype(np.int32)
    return a, b, c, i


def _dask(a, b, c, i):
    return (da.from_array(a, chunks=(128, 64)), da.from_array(b, chunks=50),
            da.from_array(c, chunks=(200, 1)), da.from_array(i, chunks=(300, 130)))


CASES = [
    ("a*b + 2*a - b", lambda a, b, c, i: a * b + 2 * a - b),
    ("a*b - c", lambda a, b, c, i: a * b - c),
    ("where(a > b, a, i)", lambda a, b, c, i: np.where(a > b, a, i)),
    ("(a > 0) & (i % 2 == 0)", lambda a, b, c, i: (a > 0) & (i % 2 == 0)),
    ("maximum(a, b) * i", lambda a, b, c, i: np.maximum(a, b) * i),
]


@pytest.mark.parametrize("expr,ref", CASES)
def test_evaluate_threaded(expr, ref):
    a, b, c, i = _data()
    A, B, C, I = _dask(a, b, c, i)
    r = gd.evaluate(expr, a=A, b=B, c=C, i=I)
    assert isinstance(r, da.Array) and r.numblocks[0] > 1 and r.numblocks[1] > 1
    got = r.compute(scheduler="threads")
    _bitwise(got, ref(a, b, c, i))
    assert r.dtype == got.dtype
    # chunks follow the largest input's (the broadcast inputs are aligned to them)
    assert r.chunks[0][0] == 128


def test_reductions_and_eager():
    a, b, c, i = _data(1)
    A, B, C, I = _dask(a, b, c, i)
    s = gd.evaluate("sum(a*b, axis=0)", a=A, b=B).compute(scheduler="threads")
    np.testing.assert_allclose(s, np.sum((a * b).astype(np.float64), axis=0), rtol=1e-4, atol=1e-3)
    s0 = gd.evaluate("sum(a*b + c)", a=A, b=B, c=C).compute()
    np.testing.assert_allclose(s0, np.sum(a * b + c), rtol=1e-10)
    _bitwise(gd.add(A, B).compute(), a + b)
    _bitwise(gd.exp(A).compute(), ggml_cy.exp(a))          # ggml_cy's kernel per block
    _bitwise(gd.multiply(A, 3).compute(), a * 3)
    _bitwise(gd.relu(A).compute(), ggml_cy.relu(a))
    _bitwise(gd.evaluate("a * x", a=A, x=2.5).compute(), a * 2.5)
    _bitwise(gd.evaluate("a * b", a=a, b=B).compute(), a * b)   # numpy and dask mixed


def test_threads_per_block_threaded(monkeypatch):
    cores = gd._cores()
    with dask.config.set(num_workers=1):
        assert gd.threads_per_block() == cores
    with dask.config.set(num_workers=cores):
        assert gd.threads_per_block() == 1


def test_bad_input():
    A = da.ones((10, 10), chunks=5)
    with pytest.raises(NameError, match="'z'"):
        gd.evaluate("a + z", a=A)
    with pytest.raises(TypeError, match="number"):
        gd.evaluate("a + b", a=A, b=[1, 2])
    with pytest.raises(ValueError, match="broadcast"):
        gd.evaluate("a + b", a=A, b=da.ones(3))
    with pytest.raises(ValueError, match="out of bounds"):
        gd.evaluate("sum(a, axis=2)", a=A)
    with pytest.raises(TypeError, match="out="):
        gd.add(A, A, out=np.empty((10, 10)))
    with pytest.raises(ValueError):
        gd.add(A, da.ones(3))
    with pytest.raises(TypeError):
        gd.evaluate(3, a=A)
    with pytest.raises(ValueError, match="n_threads"):
        gd.evaluate("a + 1", a=A, n_threads=0)


def _write_gguf(path, quantized=False):
    from ggml_cy.gguf import save, RawTensor
    rng = np.random.default_rng(5)
    tensors = {"w32": rng.standard_normal((300, 70)).astype(np.float32),
               "w16": rng.standard_normal((90, 33)).astype(np.float16),
               "v": np.arange(1000, dtype=np.int32)}
    if not quantized:
        save(path, metadata={"general.name": "t"}, tensors=tensors)
        return tensors
    q = rng.standard_normal((200, 256)).astype(np.float32)
    raw = ggml_cy.quantize(q, "q4_K")
    save(path, tensors={**tensors, "q": RawTensor("q4_K", q.shape, raw)})
    return {**tensors, "q": ggml_cy.dequantize(raw, "q4_K", q.shape)}


def test_quantize_dequantize_blocks():
    x = np.random.default_rng(7).standard_normal((300, 512)).astype(np.float32)
    X = da.from_array(x, chunks=(64, 128))
    for t in ("q8_0", "q4_K", "q6_K"):
        q = gd.quantize(X, t)
        assert q.numblocks[0] == 5
        ref = ggml_cy.quantize(x, t)
        _bitwise(q.compute(scheduler="threads"), ref)
        d = gd.dequantize(q, t)
        assert d.shape == x.shape and d.dtype == np.float32
        _bitwise(d.compute(), ggml_cy.dequantize(ref, t, x.shape))
    # chunks that cut ggml blocks are rechunked to whole rows
    q = gd.quantize(da.from_array(x, chunks=(64, 100)), "q8_0")
    assert q.chunks[-1] == (ggml_cy.quantize(x[:1], "q8_0").shape[-1],)
    _bitwise(q.compute(), ggml_cy.quantize(x, "q8_0"))
    _bitwise(gd.dequantize(q, "q8_0", dtype=np.float16).compute(),
             ggml_cy.dequantize(ggml_cy.quantize(x, "q8_0"), "q8_0", x.shape,
                                dtype=np.float16))
    with pytest.raises(ValueError, match="multiple"):
        gd.quantize(da.ones((4, 33), chunks=2), "q8_0")
    with pytest.raises(TypeError):
        gd.quantize(da.ones((4, 32), dtype=np.int32), "q8_0")
    with pytest.raises(ValueError, match="whole blocks"):
        gd.dequantize(da.ones((4, 33), dtype=np.uint8), "q8_0")
    with pytest.raises(TypeError):
        gd.dequantize(da.ones((4, 34)), "q8_0")


def test_from_gguf_quantized(tmp_path):
    path = str(tmp_path / "q.gguf")
    want = _write_gguf(path, quantized=True)
    arrs = gd.from_gguf(path, chunks={"q": (64, 256)})
    q = arrs["q"]
    assert q.dtype == np.float32 and q.numblocks[0] > 1
    _bitwise(q.compute(scheduler="threads"), want["q"])


def test_from_gguf_threaded(tmp_path):
    path = str(tmp_path / "m.gguf")
    want = _write_gguf(path)
    arrs = gd.from_gguf(path, chunks=(64, 32))
    assert set(arrs) == set(want)
    w = arrs["w32"]
    assert w.numblocks == (5, 3) and w.dtype == np.float32
    for name, ref in want.items():
        _bitwise(arrs[name].compute(scheduler="threads"), ref)
    r = gd.evaluate("w * 2 + 1", w=arrs["w32"]).compute()
    _bitwise(r, want["w32"] * 2 + 1)
    with pytest.raises(KeyError):
        gd.from_gguf(path, names=["nope"])


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_local_cluster_two_processes(client, tmp_path):
    a, b, c, i = _data(2)
    A, B, C, I = _dask(a, b, c, i)
    for expr, ref in CASES:
        got = gd.evaluate(expr, a=A, b=B, c=C, i=I).compute()
        _bitwise(got, ref(a, b, c, i))
    _bitwise(gd.multiply(A, B).compute(), a * b)
    # the workers run ggml_cy with cores // (2 processes x 1 thread) threads each
    layout = gd._cluster_layout()
    assert sum(layout.values()) == 2
    per = client.run(gd.threads_per_block, layout)
    assert sorted(per.values()) == [max(1, gd._cores() // 2)] * 2
    assert all(n * 2 <= max(2, gd._cores()) for n in per.values())
    path = str(tmp_path / "m.gguf")
    want = _write_gguf(path)
    arrs = gd.from_gguf(path, chunks=(64, 32))
    _bitwise(arrs["w16"].compute(), want["w16"])
    _bitwise(gd.evaluate("w * 2", w=arrs["w32"]).compute(), want["w32"] * 2)
    x = np.random.default_rng(8).standard_normal((256, 256)).astype(np.float32)
    q = gd.quantize(da.from_array(x, chunks=(64, 256)), "q4_K")
    _bitwise(q.compute(), ggml_cy.quantize(x, "q4_K"))
    qpath = str(tmp_path / "q.gguf")
    wq = _write_gguf(qpath, quantized=True)
    _bitwise(gd.from_gguf(qpath, names=["q"], chunks={"q": (64, 256)})["q"].compute(), wq["q"])
