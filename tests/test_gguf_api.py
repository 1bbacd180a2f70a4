"""ggml's GGUF API: gguf_init_from_file with and without a context (data, descriptors for
alloc_ctx_tensors, a copy-on-write mapping), the gguf_get_* accessors, computing with a
loaded tensor."""
import numpy as np
import pytest

import ggml_cy.gguf as gg
from ggml_cy import Context
from ggml_cy.backend import alloc_ctx_tensors, cpu_init
from ggml_cy.gguf import GGUFValueType as V, RawTensor, Value


@pytest.fixture
def model(tmp_path):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 64)).astype(np.float32)
    e = np.arange(10, dtype=np.int32)
    q = rng.integers(0, 256, 2 * 34, dtype=np.uint8)
    q[1::34] = 0
    md = {"general.architecture": "tiny", "tiny.n_embd": Value(64, "uint32"),
          "tiny.eps": 1e-5, "tiny.flag": True, "tiny.i8": Value(-3, "int8"),
          "tiny.u8": Value(3, "uint8"), "tiny.u16": Value(3, "uint16"),
          "tiny.i16": Value(-3, "int16"), "tiny.i32": -3, "tiny.u64": Value(3, "uint64"),
          "tiny.i64": Value(-3, "int64"), "tiny.f64": Value(0.5, "float64"),
          "tokens": ["a", "b", "c"], "scores": [0.5, 1.5, 2.5], "nested": [[1], [2, 3]]}
    p = tmp_path / "tiny.gguf"
    gg.save(p, md, {"w": w, "e": e, "q": RawTensor("q8_0", (2, 32), q)})
    return p, w, e, q


def test_accessors(model):
    p, w, e, q = model
    g = gg.gguf_init_from_file(p)
    assert isinstance(g, gg.GGUFContext)
    assert gg.gguf_get_version(g) == 3 and gg.gguf_get_alignment(g) == 32
    assert gg.gguf_get_data_offset(g) % 32 == 0
    assert gg.gguf_get_n_kv(g) == 15 and gg.gguf_get_n_tensors(g) == 3
    k = gg.gguf_find_key(g, "tiny.n_embd")
    assert k == 1 and gg.gguf_get_key(g, k) == "tiny.n_embd"
    assert gg.gguf_get_kv_type(g, k) == V.UINT32 and gg.gguf_get_val_u32(g, k) == 64
    assert gg.gguf_find_key(g, "missing") == -1
    getters = {"tiny.eps": ("f32", np.float32(1e-5)), "tiny.flag": ("bool", True),
               "tiny.i8": ("i8", -3), "tiny.u8": ("u8", 3), "tiny.u16": ("u16", 3),
               "tiny.i16": ("i16", -3), "tiny.i32": ("i32", -3), "tiny.u64": ("u64", 3),
               "tiny.i64": ("i64", -3), "tiny.f64": ("f64", 0.5),
               "general.architecture": ("str", "tiny")}
    for key, (suffix, want) in getters.items():
        i = gg.gguf_find_key(g, key)
        assert getattr(gg, f"gguf_get_val_{suffix}")(g, i) == want
        assert gg.gguf_type_name(gg.gguf_get_kv_type(g, i)) == suffix
    with pytest.raises(TypeError, match="uint32, not a int32"):
        gg.gguf_get_val_i32(g, k)
    t = gg.gguf_find_key(g, "tokens")
    assert gg.gguf_get_arr_type(g, t) == V.STRING and gg.gguf_get_arr_n(g, t) == 3
    assert gg.gguf_get_arr_str(g, t, 2) == "c"
    s = gg.gguf_find_key(g, "scores")
    assert gg.gguf_get_arr_data(g, s).tolist() == [0.5, 1.5, 2.5]
    with pytest.raises(TypeError):
        gg.gguf_get_arr_data(g, t)
    with pytest.raises(TypeError):
        gg.gguf_get_arr_str(g, s, 0)
    with pytest.raises(TypeError):
        gg.gguf_get_arr_n(g, k)
    with pytest.raises(IndexError):
        gg.gguf_get_arr_str(g, t, 3)
    n = gg.gguf_find_key(g, "nested")
    assert gg.gguf_get_arr_type(g, n) == V.ARRAY
    assert [x.tolist() for x in gg.gguf_get_val(g, n)] == [[1], [2, 3]]
    for bad in (-1, 15, 10**20):
        with pytest.raises(IndexError):
            gg.gguf_get_key(g, bad)
    with pytest.raises(TypeError):
        gg.gguf_get_key(g, "0")
    assert gg.gguf_find_tensor(g, "e") == 1 and gg.gguf_find_tensor(g, "zz") == -1
    assert gg.gguf_get_tensor_name(g, 0) == "w"
    assert gg.gguf_get_tensor_offset(g, 0) == 0
    assert gg.gguf_get_tensor_offset(g, 1) == 4 * 64 * 4
    assert gg.gguf_get_tensor_size(g, 2) == 68
    assert int(gg.gguf_get_tensor_type(g, 2)) == 8
    with pytest.raises(IndexError):
        gg.gguf_get_tensor_name(g, 3)
    with pytest.raises(TypeError):
        gg.gguf_get_n_kv("not a context")
    gg.gguf_free(g)


def test_context_with_data_and_compute(model):
    p, w, e, q = model
    g, ctx = gg.gguf_init_from_file(p, no_alloc=False, ctx=True)
    assert not ctx.no_alloc
    tw = ctx.get_tensor("w")
    assert tw.ne[:2] == (64, 4)
    np.testing.assert_array_equal(tw.numpy(), w)
    np.testing.assert_array_equal(ctx.get_tensor("e").numpy(), e)
    assert ctx.get_tensor("q").raw().tobytes() == q.tobytes()
    g.close()                              # the context owns copies
    x = np.random.default_rng(1).standard_normal((3, 64)).astype(np.float32)
    c2 = Context(mem_size=1 << 20)
    r = c2.mul_mat(tw, c2.tensor_from(x))
    gr = c2.new_graph()
    gr.build_forward_expand(r)
    gr.compute(1)
    np.testing.assert_allclose(r.numpy(), x @ w.T, rtol=1e-5, atol=1e-5)


def test_no_alloc_descriptors_then_backend(model):
    p, w, e, q = model
    g, ctx = gg.gguf_init_from_file(p, no_alloc=True, ctx=True)
    assert ctx.no_alloc
    assert all(not t.has_data for t in ctx.tensors())
    assert [t.name for t in ctx.tensors()] == ["w", "e", "q"]
    alloc_ctx_tensors(ctx, cpu_init())
    assert gg.gguf_load_tensors(g, ctx) == 3
    np.testing.assert_array_equal(ctx.get_tensor("w").numpy(), w)
    assert ctx.get_tensor("q").raw().tobytes() == q.tobytes()
    gg.gguf_free(g)


def test_mmap_tensors_point_into_a_private_mapping(model):
    p, w, e, q = model
    before = p.read_bytes()
    g, ctx = gg.gguf_init_from_file(p, ctx=True, mmap=True)
    tw = ctx.get_tensor("w")
    a = tw.numpy()
    np.testing.assert_array_equal(a, w)
    off = gg.gguf_get_data_offset(g)
    assert tw.data_ptr % 32 == 0
    a[0, 0] = 1234.0                      # private: the file never changes
    assert tw.numpy()[0, 0] == 1234.0
    g.close()
    del g
    assert p.read_bytes() == before
    assert off > 0


def test_big_endian_files(tmp_path):
    p = tmp_path / "be.gguf"
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    gg.save(p, {"k": Value(5, "uint32")}, {"a": a}, byteorder="big")
    g, ctx = gg.gguf_init_from_file(p, ctx=True)
    np.testing.assert_array_equal(ctx.get_tensor("a").numpy(), a)
    assert gg.gguf_get_val_u32(g, 0) == 5
    with pytest.raises(ValueError, match="big-endian"):
        gg.gguf_init_from_file(p, ctx=True, mmap=True)
    q = tmp_path / "beq.gguf"
    gg.save(q, {}, {"q": RawTensor("q8_0", (32,), bytes(34))}, byteorder="big")
    with pytest.raises(ValueError, match="big-endian"):
        gg.gguf_init_from_file(q, ctx=True)
    g2, c2 = gg.gguf_init_from_file(q, ctx=True, no_alloc=True)     # descriptors are fine
    alloc_ctx_tensors(c2, cpu_init())
    with pytest.raises(ValueError, match="big-endian"):
        gg.gguf_load_tensors(g2, c2)


def test_bad_arguments(model, tmp_path):
    p = model[0]
    with pytest.raises(TypeError):
        gg.gguf_init_from_file(p, no_alloc=1)
    with pytest.raises(ValueError):
        gg.gguf_init_from_file(p, ctx=True, no_alloc=True, mmap=True)
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF\x03\0\0\0" + b"\xff" * 16)
    with pytest.raises(gg.GGUFError):
        gg.gguf_init_from_file(bad, ctx=True)


def test_readme_example_runs(tmp_path, monkeypatch, capsys):
    import pathlib
    import re
    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    m = re.search(r"<!-- gguf-example -->\s*```python\n(.+?)\n```", readme, re.S)
    assert m, "README's GGUF section must hold the example"
    monkeypatch.chdir(tmp_path)
    exec(compile(m.group(1), "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "3 2048 uint32" in out and "2048" in out
    w = np.arange(8 * 32, dtype=np.float32).reshape(8, 32)
    assert str(w.sum(axis=1)[0]) in out or "496." in out
