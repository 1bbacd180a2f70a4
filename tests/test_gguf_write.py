"""ggml_cy.gguf.save and the streaming GGUFWriter: every value type, inferred and explicit
types, every plain tensor type, quantized raw blocks, ggml_cy Tensors, big-endian files,
alignment, and bad input."""
import struct

import numpy as np
import pytest

import ggml_cy.gguf as gg
from ggml_cy.core._core import Context, GGMLType, float32_to_bfloat16
from ggml_cy.gguf import GGUFValueType as V, RawTensor, Value

SCALARS = [(V.UINT8, 255), (V.INT8, -128), (V.UINT16, 65535), (V.INT16, -32768),
           (V.UINT32, 2**32 - 1), (V.INT32, -2**31), (V.FLOAT32, 0.5), (V.BOOL, True),
           (V.STRING, "ünï"), (V.UINT64, 2**64 - 1), (V.INT64, -2**63), (V.FLOAT64, 0.1)]


@pytest.mark.parametrize("bo", ["little", "big"])
def test_every_value_type_explicit(tmp_path, bo):
    md = {f"k.{t.name.lower()}": Value(v, t) for t, v in SCALARS}
    for t, v in SCALARS:
        md[f"a.{t.name.lower()}"] = Value([v, v], (V.ARRAY, t))
    md["a.nested"] = Value([[1, 2], ["x", "y"], []], (V.ARRAY, [(V.ARRAY, V.UINT16),
                                                               (V.ARRAY, V.STRING),
                                                               (V.ARRAY, V.INT8)]))
    md["a.empty"] = Value([], (V.ARRAY, V.FLOAT64))
    p = tmp_path / "v.gguf"
    gg.save(p, md, byteorder=bo)
    with gg.load(p) as f:
        assert f.byteorder == bo
        for t, v in SCALARS:
            k = f"k.{t.name.lower()}"
            assert f.metadata.type(k) == t
            got = f.metadata[k]
            assert got == (np.float32(v) if t == V.FLOAT32 else v)
            a = f.metadata[f"a.{t.name.lower()}"]
            assert f.metadata.spec(f"a.{t.name.lower()}") == (V.ARRAY, t)
            assert list(a) == [got, got]
        n = f.metadata["a.nested"]
        assert n[0].tolist() == [1, 2] and n[1] == ["x", "y"] and n[2].tolist() == []
        assert f.metadata.spec("a.nested") == md["a.nested"].type
        assert f.metadata["a.empty"].dtype == np.float64 and f.metadata["a.empty"].size == 0


def test_inferred_types(tmp_path):
    md = {"b": True, "i": 5, "neg": -7, "big": 2**40, "huge": 2**63, "f": 1.25, "s": "x",
          "np8": np.uint8(3), "np64": np.float64(2.5), "li": [1, 2, 3], "lbig": [0, 2**33],
          "lf": [1, 2.5], "ls": ["a", "b"], "lb": [True, False],
          "arr": np.arange(4, dtype=np.int16), "nest": [[1, 2], [3]],
          "mixed_nest": [[1], ["a"]]}
    want = {"b": V.BOOL, "i": V.INT32, "neg": V.INT32, "big": V.INT64, "huge": V.UINT64,
            "f": V.FLOAT32, "s": V.STRING, "np8": V.UINT8, "np64": V.FLOAT64,
            "li": (V.ARRAY, V.INT32), "lbig": (V.ARRAY, V.INT64),
            "lf": (V.ARRAY, V.FLOAT32), "ls": (V.ARRAY, V.STRING), "lb": (V.ARRAY, V.BOOL),
            "arr": (V.ARRAY, V.INT16), "nest": (V.ARRAY, (V.ARRAY, V.INT32)),
            "mixed_nest": (V.ARRAY, [(V.ARRAY, V.INT32), (V.ARRAY, V.STRING)])}
    p = tmp_path / "i.gguf"
    gg.save(p, md)
    with gg.load(p) as f:
        for k, spec in want.items():
            assert f.metadata.spec(k) == spec, k
        assert f.metadata["huge"] == 2**63 and f.metadata["lf"].tolist() == [1.0, 2.5]
        assert f.metadata["lb"].dtype == np.bool_


def test_types_argument_and_scalar_type_for_lists(tmp_path):
    p = tmp_path / "t.gguf"
    gg.save(p, {"a": 3, "b": [1, 2]}, types={"a": "uint8", "b": "uint64"})
    with gg.load(p) as f:
        assert f.metadata.type("a") == V.UINT8
        assert f.metadata.spec("b") == (V.ARRAY, V.UINT64)


PLAIN = [np.float32, np.float16, np.float64, np.int8, np.int16, np.int32, np.int64]


@pytest.mark.parametrize("bo", ["little", "big"])
def test_plain_tensors_roundtrip(tmp_path, bo):
    rng = np.random.default_rng(0)
    ts = {f"t.{np.dtype(dt).name}": (rng.standard_normal((3, 5, 7)) * 50).astype(dt)
          for dt in PLAIN}
    ts["scalar"] = np.float32(3.0) * np.ones((), np.float32)
    ts["t.4d"] = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    ts["t.strided"] = np.arange(40, dtype=np.int32).reshape(5, 8)[:, ::2]
    f32 = rng.standard_normal((4, 6)).astype(np.float32)
    ts["t.bf16"] = RawTensor("bf16", (4, 6), f32)
    p = tmp_path / "t.gguf"
    gg.save(p, {}, ts, byteorder=bo)
    with gg.load(p) as f:
        for name, src in ts.items():
            ti = f.tensors[name]
            assert ti.offset % 32 == 0
            got = f.numpy(name)
            if name == "t.bf16":
                assert ti.type == GGMLType.BF16
                np.testing.assert_array_equal(got, float32_to_bfloat16(f32))
            elif name == "scalar":
                assert ti.shape == (1,) and got.tolist() == [3.0]
            else:
                assert got.dtype.newbyteorder("=") == src.dtype
                np.testing.assert_array_equal(got, src)
                assert ti.shape == src.shape


def test_quantized_raw_blocks(tmp_path):
    from ggml_cy.gguf import reader
    rng = np.random.default_rng(1)
    ts, raws = {}, {}
    for t, name in reader.GGML_TYPE_NAMES.items():
        if not reader.is_quantized(t):
            continue
        bs, bb = reader.block_size(t), reader.block_bytes(t)
        raw = rng.integers(0, 256, 3 * 2 * bb, dtype=np.uint8)
        raws[name] = raw
        ts[name] = RawTensor(t, (3, 2 * bs), raw.tobytes() if t % 2 else raw)
    p = tmp_path / "q.gguf"
    gg.save(p, {"general.alignment": 64}, ts)
    with gg.load(p) as f:
        assert f.alignment == 64 and f.metadata["general.alignment"] == 64
        for name, raw in raws.items():
            assert f.tensors[name].type_name == name and f.tensors[name].offset % 64 == 0
            np.testing.assert_array_equal(f.raw(name), raw)


def test_ggml_cy_tensors(tmp_path):
    ctx = Context(mem_size=1 << 20)
    a = ctx.tensor_from(np.arange(12, dtype=np.float32).reshape(3, 4), name="a")
    at = a.transpose()                          # non-contiguous view
    i = ctx.tensor_from(np.arange(6, dtype=np.int32), name="i")
    p = tmp_path / "c.gguf"
    gg.save(p, {}, {"a": a, "at": at, "i": i})
    with gg.load(p) as f:
        np.testing.assert_array_equal(f.numpy("a"), a.numpy())
        np.testing.assert_array_equal(f.numpy("at"), a.numpy().T)
        np.testing.assert_array_equal(f.numpy("i"), np.arange(6))
    u8 = ctx.tensor_from(np.zeros(4, np.uint8))
    with pytest.raises(ValueError, match="never written"):
        gg.save(tmp_path / "u8.gguf", {}, {"u": u8})


def test_quantized_ggml_cy_tensor(tmp_path):
    ctx = Context(mem_size=1 << 20)
    raw = np.random.default_rng(2).integers(0, 256, (2, 34), dtype=np.uint8)
    raw[:, 1] = 0          # small scales
    try:
        q = ctx.tensor_from(raw, type="q8_0")
    except Exception as e:      # quantized tensors in a Context come with ggml_cy's types
        pytest.skip(f"quantized Context tensors unavailable: {e}")
    p = tmp_path / "q.gguf"
    gg.save(p, {}, {"q": q})
    with gg.load(p) as f:
        assert f.tensors["q"].type_name == "q8_0" and f.tensors["q"].shape == (2, 32)
        assert f.raw("q").tobytes() == raw.tobytes()


def test_streaming_writer(tmp_path):
    p = tmp_path / "s.gguf"
    shapes = {f"blk.{i}": (64, 32) for i in range(5)}
    with gg.GGUFWriter(p) as w:
        w.add_metadata("general.name", "stream")
        for name, shape in shapes.items():
            w.add_tensor_info(name, "q8_0" if name == "blk.0" else GGMLType.F32, shape)
        w.write_header()
        for name, shape in shapes.items():
            if name == "blk.0":
                w.write_tensor(name, bytes(64 * 34))
            else:
                w.write_tensor(name, np.full(shape, float(name[-1]), np.float32))
    with gg.load(p) as f:
        assert f.metadata["general.name"] == "stream"
        assert f.tensors["blk.0"].type_name == "q8_0"
        for i in range(1, 5):
            assert (f.numpy(f"blk.{i}") == i).all()


def test_streaming_writer_errors(tmp_path):
    p = tmp_path / "e.gguf"
    w = gg.GGUFWriter(p)
    w.add_tensor_info("a", "f32", (4,))
    w.add_tensor_info("b", "f32", (4,))
    with pytest.raises(ValueError, match="next tensor to write is 'a'"):
        w.write_tensor("b", np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="declare everything"):
        w.add_metadata("late", 1)
    with pytest.raises(ValueError, match="16"):
        w.write_tensor("a", b"\0" * 8)
    w.write_tensor("a", np.zeros(4, np.float64))          # converted to f32
    with pytest.raises(ValueError, match="not written"):
        w.close()
    with pytest.raises(ValueError, match="closed"):
        w.write_tensor("b", np.zeros(4, np.float32))
    # an exception inside the with block removes the incomplete file
    q = tmp_path / "gone.gguf"
    with pytest.raises(RuntimeError):
        with gg.GGUFWriter(q) as w:
            w.add_tensor_info("a", "f32", (4,))
            raise RuntimeError("boom")
    assert not q.exists()


def test_file_object_and_header_only(tmp_path):
    import io
    bio = io.BytesIO()
    gg.save(bio, {"a": 1})
    f = gg.load(bio.getvalue())
    assert f.metadata["a"] == 1 and not f.tensors
    assert len(bio.getvalue()) == 24 + 8 + 1 + 4 + 4    # no padding without tensors


def test_bad_input(tmp_path):
    p = tmp_path / "bad.gguf"
    cases = [
        ({"k": None}, {}, TypeError), ({"k": {"a": 1}}, {}, TypeError),
        ({"k": b"bytes"}, {}, TypeError), ({"k": np.float16(1)}, {}, TypeError),
        ({"k": []}, {}, ValueError), ({"k": [1, "a"]}, {}, TypeError),
        ({"k": 2**64}, {}, ValueError), ({"k": -2**63 - 1}, {}, ValueError),
        ({"k": Value(256, "uint8")}, {}, ValueError), ({"k": Value(-1, "uint32")}, {}, ValueError),
        ({"k": Value(1e300, "float32")}, {}, ValueError),
        ({"k": Value([1, 300], (V.ARRAY, V.UINT8))}, {}, ValueError),
        ({"k": Value("x", "int32")}, {}, TypeError), ({"k": Value(1, "nosuch")}, {}, ValueError),
        ({"k": Value(1, 13)}, {}, ValueError), ({"": 1}, {}, ValueError), ({3: 1}, {}, TypeError),
        ({"k": Value([[1]], (V.ARRAY, V.INT32))}, {}, TypeError),
        ({"k": np.zeros((2, 2))}, {}, ValueError), ({"k": "\ud800"}, {}, ValueError),
        ({"general.alignment": 0}, {}, ValueError), ({"general.alignment": 48}, {}, ValueError),
        ({"general.alignment": Value(32, "string")}, {}, ValueError),
        ({}, {"t": np.zeros(4, np.uint8)}, TypeError), ({}, {"t": np.zeros(4, bool)}, TypeError),
        ({}, {"t": np.zeros(4, np.uint16)}, TypeError),
        ({}, {"t": np.zeros(4, np.complex64)}, TypeError),
        ({}, {"t": np.zeros((1, 1, 1, 1, 2), np.float32)}, ValueError),
        ({}, {"t": np.zeros((0, 3), np.float32)}, ValueError),
        ({}, {"n" * 64: np.zeros(4, np.float32)}, ValueError),
        ({}, {"t": RawTensor("q4_0", (2, 33), bytes(100))}, ValueError),
        ({}, {"t": RawTensor("q4_0", (2, 32), bytes(35))}, ValueError),
        ({}, {"t": RawTensor(128, (4,), bytes(4))}, ValueError),
        ({}, {"t": RawTensor("u8", (4,), bytes(4))}, ValueError),
        ({}, {"t": RawTensor(4, (32,), bytes(20))}, ValueError),
        ({}, {"t": RawTensor("f32", (-1,), bytes(4))}, ValueError),
        ({}, {"t": RawTensor("f32", (2.0,), bytes(8))}, TypeError),
        ({}, {"t": "not a tensor"}, TypeError), ({}, [("t",)], TypeError),
    ]
    for md, ts, exc in cases:
        with pytest.raises(exc):
            gg.save(p, md, ts)
        assert not p.exists(), (md, ts)
    for kw in ({"alignment": 0}, {"alignment": 3}, {"alignment": True}, {"alignment": 2**31},
               {"byteorder": "middle"}):
        with pytest.raises(ValueError):
            gg.save(p, {}, {}, **kw)
    with pytest.raises(ValueError, match="duplicate"):
        with gg.GGUFWriter(p) as w:
            w.add_metadata("a", 1)
            w.add_metadata("a", 2)
    with pytest.raises(ValueError, match="duplicate"):
        gg.save(p, {}, [("t", np.zeros(1, np.float32)), ("t", np.zeros(1, np.float32))])
    with pytest.raises(ValueError, match="conflicts"):
        gg.save(p, {"general.alignment": 64}, {}, alignment=32)


def test_writer_output_parses_as_ggml_lays_it_out(tmp_path):
    # the header bytes by hand: magic, version 3, counts, then the entry
    p = tmp_path / "h.gguf"
    gg.save(p, {"a": Value(7, "uint8")}, {"t": np.ones(3, np.float32)})
    b = p.read_bytes()
    assert b[:4] == b"GGUF" and struct.unpack("<IQQ", b[4:24]) == (3, 1, 1)
    assert b[24:24 + 8 + 1 + 4 + 1] == struct.pack("<Q", 1) + b"a" + struct.pack("<I", 0) + b"\7"
    assert len(b) % 32 == 0


@pytest.mark.parametrize("dst_bo", ["little", "big"])
def test_copy_metadata_and_requantize_flow(tmp_path, dst_bo):
    # the shape of a quantize tool: copy the metadata, change one value, stream tensors
    src_p, dst_p = tmp_path / "src.gguf", tmp_path / "dst.gguf"
    toks = [f"tok{i}" for i in range(5000)]
    w = np.arange(64 * 4, dtype=np.float32).reshape(4, 64)
    gg.save(src_p, {"general.architecture": "m", "general.alignment": 64,
                    "general.file_type": Value(0, "uint32"), "tokenizer.ggml.tokens": toks,
                    "nested": [[1, 2], ["a"]], "u8": Value(7, "uint8")},
            {"w": w, "b": np.ones(64, np.float32)})
    with gg.load(src_p) as src, gg.GGUFWriter(dst_p, byteorder=dst_bo) as out:
        out.copy_metadata(src, exclude={"general.file_type"})
        out.add_metadata("general.file_type", Value(7, "uint32"))
        for name, ti in src.tensors.items():
            out.add_tensor_info(name, "q8_0" if name == "w" else ti.type, ti.shape)
        out.write_header()
        for name in src.tensors:
            if name == "w":
                out.write_tensor(name, bytes(4 * 2 * 34))
            else:
                out.write_tensor(name, src.numpy(name))
    with gg.load(src_p) as a, gg.load(dst_p) as b:
        assert b.alignment == 64 and b.byteorder == dst_bo
        assert list(b.metadata)[-1] == "general.file_type"
        assert b.metadata["general.file_type"] == 7
        for k in a.metadata:
            if k != "general.file_type":
                assert b.metadata.spec(k) == a.metadata.spec(k), k
                if dst_bo == "little":
                    assert b.metadata.encoded(k) == a.metadata.encoded(k)
        assert b.metadata["tokenizer.ggml.tokens"] == toks
        assert b.tensors["w"].type_name == "q8_0" and b.tensors["w"].offset % 64 == 0
        np.testing.assert_array_equal(b.numpy("b"), np.ones(64, np.float32))
    with pytest.raises(TypeError):
        gg.GGUFWriter(tmp_path / "x.gguf").copy_metadata("not a file")
