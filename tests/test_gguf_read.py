"""ggml_cy.gguf.load: values and types, zero-copy tensor views, lazy metadata, lifetime."""
import os
import resource
import struct
import tracemalloc

import numpy as np
import pytest

import ggml_cy.gguf as gg
from ggml_cy.gguf import GGUFValueType as V
from _gguf_bytes import (LE, BE, U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64,
                         F64, small_file)

EXPECTED = {
    "general.architecture": ("test", V.STRING), "t.u8": (200, V.UINT8), "t.i8": (-5, V.INT8),
    "t.u16": (60000, V.UINT16), "t.i16": (-30000, V.INT16), "t.u32": (4000000000, V.UINT32),
    "t.i32": (-2000000000, V.INT32), "t.f32": (1.5, V.FLOAT32), "t.bool": (True, V.BOOL),
    "t.u64": (2**64 - 1, V.UINT64), "t.i64": (-2**63, V.INT64), "t.f64": (0.1, V.FLOAT64),
}


@pytest.fixture(params=["le", "be"])
def small(request, tmp_path):
    b = LE if request.param == "le" else BE
    p = tmp_path / f"small_{request.param}.gguf"
    p.write_bytes(small_file(b))
    return p, request.param


def test_values_and_types(small):
    path, bo = small
    with gg.load(path) as f:
        assert f.version == 3 and f.alignment == 32
        assert f.byteorder == ("little" if bo == "le" else "big")
        md = f.metadata
        assert list(md) == list(EXPECTED) + ["t.arr", "t.sarr", "t.nest"]
        for k, (v, t) in EXPECTED.items():
            assert md[k] == v and type(md[k]) is type(v), k
            assert md.type(k) == t
        assert md["t.arr"].dtype == np.int32 and md["t.arr"].tolist() == [1, -2, 3]
        assert md["t.arr"].dtype.byteorder in "=|"
        assert md.type("t.arr") == V.ARRAY and md.array_type("t.arr") == V.INT32
        assert md.array_len("t.arr") == 3
        assert md["t.sarr"] == ["a", "héllo"]
        nest = md["t.nest"]
        assert nest[0].tolist() == [1, 2] and nest[0].dtype == np.uint8 and nest[1] == ["x"]
        assert md.spec("t.nest") == (V.ARRAY, [(V.ARRAY, V.UINT8), (V.ARRAY, V.STRING)])
        assert md.spec("t.arr") == (V.ARRAY, V.INT32)
        assert md.spec("t.u8") == V.UINT8
        with pytest.raises(TypeError):
            md["x"] = 1
        with pytest.raises(ValueError):
            md["t.arr"][0] = 5          # read-only
        assert "t.u8" in md and "nope" not in md and md.index("nope") == -1
        with pytest.raises(KeyError):
            md["nope"]


def test_tensors(small):
    path, bo = small
    with gg.load(path) as f:
        a, b = f.tensors["a"], f.tensors["b"]
        assert list(f.tensors) == ["a", "b"]
        assert a.shape == (2, 4) and a.ne == (4, 2) and a.type == gg.reader.GGMLType.F32
        assert a.offset == 0 and b.offset == 32 and a.nbytes == 32 and a.n_elements == 8
        assert a.file_offset == f.data_offset
        x = f.numpy("a")
        assert x.shape == (2, 4) and not x.flags.writeable
        np.testing.assert_array_equal(x, np.arange(8, dtype=np.float32).reshape(2, 4))
        np.testing.assert_array_equal(f.numpy(b), np.arange(8, 16, dtype=np.float32))
        r = f.raw("b")
        assert r.dtype == np.uint8 and r.size == 32 and not r.flags.writeable
        fmt = "<" if bo == "le" else ">"
        assert r.tobytes() == struct.pack(fmt + "8f", *range(8, 16))
        # zero copy: views of one mapping
        assert np.shares_memory(f.raw("b"), f.numpy("b"))
        assert np.shares_memory(f.raw("a"), f.raw("a"))
        with pytest.raises(KeyError, match="no tensor named"):
            f.raw("zz")


def test_close_keeps_handed_out_arrays_valid(small):
    path, _ = small
    f = gg.load(path)
    x = f.numpy("a")
    md = f.metadata
    arr = md["t.arr"]
    f.close()
    assert f.closed
    np.testing.assert_array_equal(x, np.arange(8, dtype=np.float32).reshape(2, 4))
    assert arr.tolist() == [1, -2, 3]
    assert md["t.arr"].tolist() == [1, -2, 3]       # cached values stay
    with pytest.raises(ValueError, match="closed"):
        f.raw("a")
    with pytest.raises(ValueError, match="closed"):
        md["t.sarr"]
    f.close()                                       # twice is fine
    del x
    os.unlink(path)


def test_path_kinds(small):
    path, _ = small
    for p in (path, str(path), os.fsencode(str(path))):
        if isinstance(p, bytes):
            continue        # bytes are the in-memory form
        with gg.load(p) as f:
            assert len(f.tensors) == 2
    with gg.load(path.read_bytes()) as f:
        assert f.metadata["t.u8"] == 200
    with pytest.raises(FileNotFoundError):
        gg.load(path.parent / "missing.gguf")


def _vocab_file(n):
    b = LE
    toks = [f"tok{i}" for i in range(n)]
    return b.file([b.kv("tokenizer.ggml.tokens", ARR, (STR, toks)),
                   b.kv("tokenizer.ggml.scores", ARR, (F32, [0.0] * n))])


def test_metadata_is_lazy(tmp_path):
    p = tmp_path / "vocab.gguf"
    p.write_bytes(_vocab_file(150_000))
    tracemalloc.start()
    f = gg.load(p)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20, peak            # 150k str objects would take megabytes
    assert f.metadata.array_len("tokenizer.ggml.tokens") == 150_000
    toks = f.metadata["tokenizer.ggml.tokens"]
    assert len(toks) == 150_000 and toks[123] == "tok123"
    f.close()


def test_open_reads_no_tensor_data(tmp_path):
    # a 4 GiB tensor in a sparse file: opening and viewing it touches no data pages
    b = LE
    head = b.file([b.kv("a", U8, 1)], [b.ti("big", [2**30], 0, 0)], b"")
    p = tmp_path / "sparse.gguf"
    with open(p, "wb") as fh:
        fh.write(head)
        fh.truncate(len(head) + 4 * 2**30)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with gg.load(p) as f:
        v = f.numpy("big")
        assert v.shape == (2**30,)
        assert float(v[12345]) == 0.0
        del v
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert rss1 - rss0 < 200 * 1024        # KiB


def test_quantized_numpy_and_raw():
    data = bytes(range(36))
    buf = LE.file([], [LE.ti("q", [64], 2, 0)], data + b"\0" * 28)
    f = gg.load(buf)
    assert f.raw("q").tobytes() == data
    ti = f.tensors["q"]
    assert ti.type_name == "q4_0" and int(ti.type) == 2 and ti.nbytes == 36
    try:
        from ggml_cy.quants import dequantize  # noqa: F401
    except ImportError:
        with pytest.raises(NotImplementedError, match="q4_0"):
            f.numpy("q")
    else:
        x = f.numpy("q")
        assert x.shape == (64,) and x.dtype == np.float32


def test_types_table():
    from ggml_cy.gguf import reader
    names = reader.GGML_TYPE_NAMES
    assert names[0] == "f32" and names[12] == "q4_K" and names[30] == "bf16"
    assert names[39] == "mxfp4" and names[41] == "q1_0"
    for retired in (4, 5, 31, 32, 33, 36, 37, 38, 128, 129):
        assert retired not in names
    assert reader.block_size("q4_K") == 256 and reader.block_bytes("q4_K") == 144
    assert reader.ggml_type("Q8_0") == 8 and reader.is_quantized(8)
    with pytest.raises(ValueError):
        reader.ggml_type(128)
    with pytest.raises(ValueError):
        reader.ggml_type("u8")
    with pytest.raises(TypeError):
        reader.ggml_type(1.0)


def test_file_changed_after_open_cannot_crash(tmp_path):
    # lengths rewritten on disk after the parse: decoding notices instead of reading
    # outside the mapping
    p = tmp_path / "c.gguf"
    p.write_bytes(LE.file([LE.kv("s", STR, "hello"), LE.kv("a", ARR, (STR, ["x", "y"])),
                           LE.kv("n", ARR, (ARR, [(U8, [1])]))]))
    f = gg.load(p)
    raw = bytearray(p.read_bytes())
    pos_s = 24 + 8 + 1 + 4                     # the string's length field
    with open(p, "r+b") as fh:
        fh.seek(pos_s)
        fh.write(struct.pack("<Q", 2**40))
        tail = raw.rindex(b"\x01") - 8          # the inner array's count
        fh.seek(tail)
        fh.write(struct.pack("<Q", 2**62))
    with pytest.raises(gg.GGUFError, match="changed"):
        f.metadata["s"]
    with pytest.raises(gg.GGUFError, match="changed"):
        f.metadata["n"]
    assert f.metadata["a"] == ["x", "y"]
    f.close()


def test_mutable_buffer_is_copied():
    buf = bytearray(small_file())
    f = gg.load(buf)
    buf[:] = b"\xff" * len(buf)
    assert f.metadata["t.sarr"] == ["a", "héllo"]
    assert f.numpy("b")[0] == 8.0


def test_numpy_dtype_conversion(tmp_path):
    from ggml_cy.core._core import float32_to_bfloat16
    x = np.array([[1.5, -2.25], [3.0, 1e-3]], np.float32)
    p = tmp_path / "b.gguf"
    gg.save(p, {}, {"b": gg.RawTensor("bf16", (2, 2), x), "h": x.astype(np.float16)})
    with gg.load(p) as f:
        assert f.numpy("b").dtype == np.uint16
        np.testing.assert_array_equal(f.numpy("b"), float32_to_bfloat16(x))
        from ggml_cy.core._core import bfloat16_to_float32
        want = bfloat16_to_float32(float32_to_bfloat16(x))
        np.testing.assert_array_equal(f.numpy("b", dtype=np.float32), want)
        assert f.numpy("b", dtype=np.float32)[0, 0] == 1.5
        assert f.numpy("b", dtype=np.float64).dtype == np.float64
        np.testing.assert_array_equal(f.numpy("h", dtype=np.float32), x.astype(np.float16))
