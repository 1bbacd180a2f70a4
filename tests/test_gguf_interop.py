"""Interop with gguf-py (the reference Python implementation): files gguf-py writes are read
bit for bit (every value type, nested arrays, every tensor type gguf-py can write, little-
and big-endian), gguf-py reads ggml_cy's files bit for bit, and re-writing a gguf-py file
with ggml_cy reproduces its bytes exactly."""
import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

import ggml_cy.gguf as gg                                    # noqa: E402
from ggml_cy.gguf import GGUFValueType as V, RawTensor, Value  # noqa: E402

GV = gguf.GGUFValueType
ENDIAN = {"little": gguf.GGUFEndian.LITTLE, "big": gguf.GGUFEndian.BIG}
SCALARS = [("uint8", 250, V.UINT8), ("int8", -100, V.INT8), ("uint16", 65000, V.UINT16),
           ("int16", -32000, V.INT16), ("uint32", 4_000_000_000, V.UINT32),
           ("int32", -2_000_000_000, V.INT32), ("float32", 0.25, V.FLOAT32),
           ("uint64", 2**64 - 2, V.UINT64), ("int64", -2**62, V.INT64),
           ("float64", 1e-300, V.FLOAT64), ("bool", True, V.BOOL), ("string", "gguf ✓", V.STRING)]
ARRAYS = [(GV.UINT8, [0, 255]), (GV.INT8, [-128, 127]), (GV.UINT16, [1, 65535]),
          (GV.INT16, [-5, 5]), (GV.UINT32, [7, 2**32 - 1]), (GV.INT32, [-1, 1]),
          (GV.FLOAT32, [0.5, -2.0]), (GV.BOOL, [True, False, True]),
          (GV.STRING, ["a", "", "日本"]), (GV.UINT64, [0, 2**64 - 1]),
          (GV.INT64, [-2**63, 2**63 - 1]), (GV.FLOAT64, [0.1, 1e308])]


def _quant_types():
    out = []
    for qt in gguf.GGMLQuantizationType:
        bs, bb = gguf.GGML_QUANT_SIZES[qt]
        if qt.name in ("F32", "F16", "F64", "I8", "I16", "I32", "I64"):
            continue
        if qt.name == "Q8_1":
            # gguf-py 0.19 sizes a Q8_1 block at 40 bytes (two float32); ggml's block_q8_1
            # holds two halves (36 bytes). Q8_1 is an activation type, never in model files.
            assert (bs, bb) == (32, 40)
            continue
        out.append((qt, bs, bb))
    return out


def _write_with_gguf_py(path, bo):
    rng = np.random.default_rng(0)
    w = gguf.GGUFWriter(str(path), "test", endianess=ENDIAN[bo])
    for name, v, _ in SCALARS:
        getattr(w, f"add_{name}")(f"s.{name}", v)
    for et, vals in ARRAYS:
        w.add_key_value(f"a.{et.name.lower()}", vals, GV.ARRAY, sub_type=et)
    w.add_array("a.inferred", [1, 2, 3])
    w.add_array("a.nested", [[1, 2], [3, 4, 5]])
    w.add_array("a.nested_str", [["x", "y"], ["z"]])
    tensors = {}
    for dt in (np.float32, np.float16, np.float64, np.int8, np.int16, np.int32, np.int64):
        a = (rng.standard_normal((3, 8)) * 40).astype(dt)
        tensors[f"t.{np.dtype(dt).name}"] = a
        w.add_tensor(f"t.{np.dtype(dt).name}", a)
    raws = {}
    for qt, bs, bb in _quant_types():
        raw = rng.integers(0, 256, (2, 2 * bb), dtype=np.uint8)
        raws[f"q.{qt.name.lower()}"] = (qt, raw)
        w.add_tensor(f"q.{qt.name.lower()}", raw, raw_dtype=qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return tensors, raws


@pytest.mark.parametrize("bo", ["little", "big"])
def test_read_gguf_py_files(tmp_path, bo):
    p = tmp_path / f"py_{bo}.gguf"
    tensors, raws = _write_with_gguf_py(p, bo)
    ref = gguf.GGUFReader(str(p))
    with gg.load(p) as f:
        assert f.byteorder == bo and f.version == 3
        md = f.metadata
        assert list(md) == [k for k in ref.fields if not k.startswith("GGUF.")]
        for name, v, t in SCALARS:
            k = f"s.{name}"
            assert md.type(k) == t
            assert md[k] == ref.fields[k].contents()
            assert md[k] == (float(np.float32(v)) if t == V.FLOAT32 else v)
        for et, vals in ARRAYS:
            k = f"a.{et.name.lower()}"
            assert md.spec(k) == (V.ARRAY, V(int(et)))
            got = md[k]
            assert (got if isinstance(got, list) else got.tolist()) == ref.fields[k].contents()
        assert md["a.inferred"].tolist() == [1, 2, 3]
        nest = md["a.nested"]
        assert [x.tolist() for x in nest] == [[1, 2], [3, 4, 5]]
        assert md.spec("a.nested") == (V.ARRAY, (V.ARRAY, V.INT32))
        assert md["a.nested_str"] == [["x", "y"], ["z"]]
        ref_t = {t.name: t for t in ref.tensors}
        assert list(f.tensors) == [t.name for t in ref.tensors]
        for name, a in tensors.items():
            ti = f.tensors[name]
            assert ti.shape == a.shape and ti.file_offset == ref_t[name].data_offset
            got = f.numpy(name)
            np.testing.assert_array_equal(got, a)
            assert f.raw(name).tobytes() == ref_t[name].data.tobytes()
        for name, (qt, raw) in raws.items():
            ti = f.tensors[name]
            assert int(ti.type) == int(qt) and ti.nbytes == raw.nbytes
            assert f.raw(name).tobytes() == raw.tobytes()
            assert f.raw(name).tobytes() == ref_t[name].data.tobytes()


@pytest.mark.parametrize("bo", ["little", "big"])
def test_rewrite_reproduces_gguf_py_bytes(tmp_path, bo):
    p = tmp_path / "py.gguf"
    _write_with_gguf_py(p, bo)
    q = tmp_path / "cy.gguf"
    with gg.load(p) as f:
        md = {k: Value(f.metadata[k], f.metadata.spec(k)) for k in f.metadata}
        ts = {n: RawTensor(ti.type, ti.shape, f.raw(n)) for n, ti in f.tensors.items()}
        gg.save(q, md, ts, byteorder=bo)
    assert q.read_bytes() == p.read_bytes()


@pytest.mark.parametrize("bo", ["little", "big"])
def test_gguf_py_reads_ggml_cy_files(tmp_path, bo):
    rng = np.random.default_rng(1)
    md = {f"s.{name}": Value(v, t) for name, v, t in SCALARS}
    for et, vals in ARRAYS:
        md[f"a.{et.name.lower()}"] = Value(vals, (V.ARRAY, V(int(et))))
    md["a.nested"] = [[1, 2], [3]]
    ts = {}
    for dt in (np.float32, np.float16, np.float64, np.int8, np.int16, np.int32, np.int64):
        ts[f"t.{np.dtype(dt).name}"] = (rng.standard_normal((2, 3, 4)) * 9).astype(dt)
    raws = {}
    for qt, bs, bb in _quant_types():
        raw = rng.integers(0, 256, 3 * bb, dtype=np.uint8)
        raws[f"q.{qt.name.lower()}"] = raw
        ts[f"q.{qt.name.lower()}"] = RawTensor(int(qt), (3, bs), raw)
    p = tmp_path / "cy.gguf"
    gg.save(p, md, ts, byteorder=bo)
    ref = gguf.GGUFReader(str(p))
    assert ref.endianess == ENDIAN[bo]
    for name, v, t in SCALARS:
        f = ref.fields[f"s.{name}"]
        assert f.types == [GV(int(t))]
        assert f.contents() == (float(np.float32(v)) if t == V.FLOAT32 else v)
    for et, vals in ARRAYS:
        f = ref.fields[f"a.{et.name.lower()}"]
        assert f.types == [GV.ARRAY, et]
        want = [float(np.float32(x)) for x in vals] if et == GV.FLOAT32 else vals
        assert f.contents() == want
    assert ref.fields["a.nested"].types[:2] == [GV.ARRAY, GV.ARRAY]
    rt = {t.name: t for t in ref.tensors}
    for name, src in ts.items():
        t = rt[name]
        if name in raws:
            assert t.data.tobytes() == raws[name].tobytes()
            assert int(t.tensor_type) == int(src.type)
        else:
            assert t.data.tobytes() == src.astype(src.dtype.newbyteorder(
                "<" if bo == "little" else ">")).tobytes()
            assert tuple(int(x) for x in t.shape[::-1]) == src.shape


def test_same_content_same_bytes(tmp_path):
    # the same metadata and tensors written by gguf-py and by ggml_cy give identical files
    p, q = tmp_path / "py.gguf", tmp_path / "cy.gguf"
    a = np.arange(40, dtype=np.float32).reshape(5, 8)
    h = np.ones(7, np.float16)
    w = gguf.GGUFWriter(str(p), "llama")
    w.add_uint32("llama.context_length", 4096)
    w.add_array("tokenizer.ggml.tokens", ["<s>", "</s>", "hi"])
    w.add_array("tokenizer.ggml.scores", [0.0, -1.5, 2.25])
    w.add_tensor("a", a)
    w.add_tensor("h", h)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    gg.save(q, {"general.architecture": "llama",
                "llama.context_length": Value(4096, "uint32"),
                "tokenizer.ggml.tokens": ["<s>", "</s>", "hi"],
                "tokenizer.ggml.scores": [0.0, -1.5, 2.25]}, {"a": a, "h": h})
    assert q.read_bytes() == p.read_bytes()


def test_quantized_numpy_matches_gguf_py_dequantize(tmp_path):
    pytest.importorskip("ggml_cy.quants")
    import gguf.quants
    p = tmp_path / "q.gguf"
    rng = np.random.default_rng(3)
    raws = {}
    ts = {}
    for qt, bs, bb in _quant_types():
        raw = rng.integers(0, 256, (3, 2 * bb), dtype=np.uint8)
        raws[qt] = raw
        ts[f"q.{qt.name.lower()}"] = RawTensor(int(qt), (3, 2 * bs), raw)
    gg.save(p, {}, ts)
    checked = 0
    with gg.load(p) as f:
        for qt, raw in raws.items():
            try:
                with np.errstate(all="ignore"):
                    ref = gguf.quants.dequantize(raw, qt)
            except NotImplementedError:
                continue
            got = f.numpy(f"q.{qt.name.lower()}")
            if qt.name == "BF16":       # a plain type: numpy() gives the bit patterns
                from ggml_cy.core._core import bfloat16_to_float32
                got = bfloat16_to_float32(got)
            assert got.dtype == np.float32 and got.shape == ref.shape
            np.testing.assert_array_equal(got, ref.astype(np.float32), err_msg=qt.name)
            checked += 1
    assert checked >= 10
