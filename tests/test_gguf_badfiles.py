"""Malformed GGUF files, built byte by byte: each class of defect is refused with a
GGUFError (a ValueError) naming the field and its byte offset -- never a crash, a hang or a
huge allocation."""
import struct
import time

import numpy as np
import pytest

import ggml_cy.gguf as gg
from ggml_cy.gguf import GGUFError
from _gguf_bytes import (LE, BE, U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64,
                         F64, small_file)

HEADER = 24


def bad(buf, *words, offset=None):
    t0 = time.perf_counter()
    with pytest.raises(GGUFError) as ei:
        gg.load(buf)
    assert time.perf_counter() - t0 < 2.0
    msg = str(ei.value)
    for w in words:
        assert w in msg, (w, msg)
    assert "byte" in msg, msg
    if offset is not None:
        assert ei.value.offset == offset, (ei.value.offset, msg)
        assert f"byte {offset}" in msg, msg
    assert isinstance(ei.value, ValueError)
    return ei.value


def test_small_file_is_valid():
    for b in (LE, BE):
        f = gg.load(small_file(b))
        assert f.metadata["t.u64"] == 2**64 - 1
        assert len(f.tensors) == 2


@pytest.mark.parametrize("b", [LE, BE], ids=["le", "be"])
def test_truncation_at_every_position(b):
    buf = small_file(b)
    gg.load(buf)
    for n in range(len(buf)):
        with pytest.raises(GGUFError):
            gg.load(buf[:n])


def test_empty_file(tmp_path):
    p = tmp_path / "empty.gguf"
    p.write_bytes(b"")
    bad(str(p), "empty", offset=0)
    bad(b"", "empty", offset=0)
    bad(b"GG", "too short", offset=0)


def test_bad_magic():
    buf = bytearray(small_file())
    buf[0:4] = b"GGML"
    bad(bytes(buf), "magic", "not a GGUF file", offset=0)
    bad(b"\x00" * 100, "magic", offset=0)


@pytest.mark.parametrize("version", [0, 4, 5, 1000, 0xFFFFFFFF])
def test_unknown_versions(version):
    buf = bytearray(small_file())
    buf[4:8] = struct.pack("<I", version)
    bad(bytes(buf), "version", "not supported", offset=4)


def test_version_1_is_refused_with_a_reason():
    buf = LE.file([LE.kv("a", U32, 1)], version=1)
    e = bad(buf, "version 1", "32-bit", offset=4)
    assert "v3" in str(e)


def test_version_2_and_big_endian_read():
    buf = LE.file([LE.kv("a", U32, 7)], version=2)
    f = gg.load(buf)
    assert f.version == 2 and f.metadata["a"] == 7 and f.byteorder == "little"
    f = gg.load(BE.file([BE.kv("a", U32, 7)]))
    assert f.version == 3 and f.metadata["a"] == 7 and f.byteorder == "big"


@pytest.mark.parametrize("n", [2, 10**6, 2**40, 2**63, 2**64 - 1])
def test_counts_that_cannot_fit(n):
    bad(LE.file([LE.kv("a", U8, 1)], n_kv=n), "metadata count", offset=16)
    bad(LE.file([LE.kv("a", U8, 1)], n_tensors=n), "tensor count", offset=8)


@pytest.mark.parametrize("n", [100, 2**32, 2**63, 2**64 - 1, 2**64 - 8])
def test_key_length_beyond_file(n):
    buf = LE.file([LE.u64(n) + b"abc" + LE.u32(U8) + b"\x01"])
    bad(buf, "key length", offset=HEADER)


def test_key_too_long_and_empty():
    buf = LE.file([LE.kv("k" * 65536, U8, 1)])
    bad(buf, "key length 65536", "limit", offset=HEADER)
    gg.load(LE.file([LE.kv("k" * 65535, U8, 1)]))
    bad(LE.file([LE.kv("", U8, 1)]), "empty", offset=HEADER)


@pytest.mark.parametrize("n", [2**32, 2**63, 2**64 - 1, 2**64 - 16])
def test_string_length_beyond_file(n):
    buf = LE.file([LE.s("k") + LE.u32(STR) + LE.u64(n) + b"abc"])
    bad(buf, "string value length", "'k'", offset=HEADER + 9 + 4)


@pytest.mark.parametrize("et,n", [(U32, 2**62), (U64, 2**61 + 1), (F64, 2**64 - 1),
                                  (STR, 2**61), (ARR, 2**60), (U8, 2**64 - 1), (U8, 100)])
def test_array_length_overflow(et, n):
    buf = LE.file([LE.s("k") + LE.u32(ARR) + LE.u32(et) + LE.u64(n) + b"\0" * 16])
    bad(buf, "array length", offset=HEADER + 9 + 4 + 4)


@pytest.mark.parametrize("t", [13, 14, 255, 2**31, 2**32 - 1])
def test_unknown_value_types(t):
    bad(LE.file([LE.s("k") + LE.u32(t) + b"\0" * 8]), "value type", "unknown",
        offset=HEADER + 9)
    bad(LE.file([LE.s("k") + LE.u32(ARR) + LE.u32(t) + LE.u64(1) + b"\0" * 8]),
        "array element type", "unknown", offset=HEADER + 9 + 4)


def _nested(depth, leaf=(U8, [1])):
    v = leaf
    for _ in range(depth - 1):
        v = (ARR, [v])
    return v


def test_nested_arrays_bounded():
    # depth counts array levels: 32 levels are read, 33 are refused
    f = gg.load(LE.file([LE.kv("k", ARR, _nested(gg.MAX_ARRAY_DEPTH))]))
    v = f.metadata["k"]
    for _ in range(gg.MAX_ARRAY_DEPTH - 1):
        assert isinstance(v, list) and len(v) == 1
        v = v[0]
    assert list(v) == [1]
    bad(LE.file([LE.kv("k", ARR, _nested(gg.MAX_ARRAY_DEPTH + 1))]), "nested")
    # a million nested array headers: refused in bounded time, no stack overflow
    deep = LE.s("k") + LE.u32(ARR) + (LE.u32(ARR) + LE.u64(1)) * 10**6
    bad(LE.file([deep]), "nested")


def test_invalid_utf8():
    for junk in (b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"a\xe2\x82", b"\xf4\x90\x80\x80"):
        bad(LE.file([LE.s(b"ok." + junk) + LE.u32(U8) + b"\x01"]), "key", "UTF-8")
        bad(LE.file([LE.kv("k", STR, b"x" + junk)]), "string value", "UTF-8")
        bad(LE.file([LE.kv("k", ARR, (STR, ["fine", b"x" + junk]))]), "UTF-8")
        buf = LE.file([], [LE.ti(b"t" + junk, [8], 0, 0)], b"\0" * 32)
        bad(buf, "tensor name", "UTF-8")
    # valid multi-byte UTF-8 passes
    f = gg.load(LE.file([LE.kv("k", STR, "ü€𝄞")]))
    assert f.metadata["k"] == "ü€𝄞"


def test_bool_values_are_0_or_1():
    bad(LE.file([LE.s("k") + LE.u32(BOOL) + b"\x02"]), "bool", offset=HEADER + 9 + 4)
    buf = LE.file([LE.s("k") + LE.u32(ARR) + LE.u32(BOOL) + LE.u64(3) + b"\x01\x00\x07"])
    bad(buf, "bool", offset=HEADER + 9 + 4 + 12 + 2)


def test_duplicate_keys():
    buf = LE.file([LE.kv("a", U8, 1), LE.kv("b", U8, 1), LE.kv("a", U32, 2)])
    e = bad(buf, "duplicate key", "'a'")
    assert e.offset == HEADER + 2 * (9 + 4 + 1)


def _tfile(*tis, data=64, kvs=()):
    return LE.file(list(kvs), list(tis), b"\0" * data)


def test_duplicate_tensor_names():
    bad(_tfile(LE.ti("w", [8], 0, 0), LE.ti("w", [8], 0, 32)), "duplicate tensor name")


def test_tensor_name_limit():
    gg.load(_tfile(LE.ti("n" * 63, [8], 0, 0)))
    bad(_tfile(LE.ti("n" * 64, [8], 0, 0)), "tensor name length 64", "limit", offset=HEADER)


@pytest.mark.parametrize("n_dims", [0, 5, 100, 2**32 - 1])
def test_n_dims(n_dims):
    buf = LE.file([], [LE.s("t") + LE.u32(n_dims) + LE.u64(8) * 4 + LE.u32(0) + LE.u64(0)],
                  b"\0" * 64)
    bad(buf, "n_dims", offset=HEADER + 9)


@pytest.mark.parametrize("ne", [[0], [8, 0], [-1], [8, 2, -5], [2**63]])
def test_non_positive_dims(ne):
    bad(_tfile(LE.ti("t", ne, 0, 0)), "dimensions must be positive")


def test_element_count_and_byte_overflow():
    bad(_tfile(LE.ti("t", [2**32, 2**32], 0, 0)), "element count", "overflows")
    bad(_tfile(LE.ti("t", [2**62], 0, 0)), "byte size", "overflows")
    bad(_tfile(LE.ti("t", [2**31, 2**31, 4], 0, 0)), "overflows")
    # fits in int64 but not in the file
    bad(_tfile(LE.ti("t", [2**40], 0, 0)), "runs past the end of the file")


def test_block_size_multiple():
    bad(_tfile(LE.ti("t", [33, 2], 2, 0)), "not a multiple of the block size 32", "q4_0")
    bad(_tfile(LE.ti("t", [32 * 7], 12, 0), data=2048), "block size 256")
    f = gg.load(_tfile(LE.ti("t", [64], 2, 0)))
    assert f.tensors["t"].nbytes == 36 and f.tensors["t"].type_name == "q4_0"


@pytest.mark.parametrize("t", [4, 5, 31, 32, 33, 36, 37, 38, 43, 99, 128, 129, 2**32 - 1])
def test_unknown_or_removed_types(t):
    bad(_tfile(LE.ti("t", [64], t, 0)), "unknown or removed", offset=HEADER + 9 + 4 + 8)


def test_offsets():
    bad(_tfile(LE.ti("a", [8], 0, 0), LE.ti("b", [8], 0, 16)), "not a multiple of the "
        "alignment 32")
    bad(_tfile(LE.ti("a", [16], 0, 0), LE.ti("b", [8], 0, 32), data=128), "overlaps")
    bad(_tfile(LE.ti("a", [8], 0, 32), LE.ti("b", [8], 0, 32), data=128), "overlaps")
    bad(_tfile(LE.ti("a", [8], 0, 64)), "runs past the end of the file")
    bad(_tfile(LE.ti("a", [8], 0, 2**64 - 32)), "runs past the end of the file")
    bad(_tfile(LE.ti("a", [8], 0, 0), data=31), "runs past the end of the file")
    # any order is fine as long as nothing overlaps
    f = gg.load(_tfile(LE.ti("a", [8], 0, 32), LE.ti("b", [8], 0, 0)))
    assert [t.offset for t in f.tensors.values()] == [32, 0]


def test_data_section_beyond_file():
    buf = LE.file([], [LE.ti("a", [8], 0, 0)], b"", pad=False)
    bad(buf, "beyond the end of the file")


@pytest.mark.parametrize("t,v", [(I32, 32), (U64, 32), (STR, "32"), (U16, 32), (F32, 32.0)])
def test_alignment_wrong_type(t, v):
    bad(LE.file([LE.kv("general.alignment", t, v)]), "general.alignment must be uint32",
        offset=HEADER + 8 + 17)


@pytest.mark.parametrize("v", [0, 3, 48, 2**31, 2**32 - 1])
def test_alignment_bad_value(v):
    bad(LE.file([LE.kv("general.alignment", U32, v)]), "power of two",
        offset=HEADER + 8 + 17 + 4)


def test_alignment_honoured():
    kvs = [LE.kv("general.alignment", U32, 64)]
    buf = LE.file(kvs, [LE.ti("a", [8], 0, 0), LE.ti("b", [8], 0, 64)], b"\1" * 96,
                  align=64)
    f = gg.load(buf)
    assert f.alignment == 64 and f.data_offset % 64 == 0
    bad(LE.file(kvs, [LE.ti("a", [8], 0, 0), LE.ti("b", [8], 0, 32)], b"\1" * 96, align=64),
        "alignment 64")


def test_error_is_valueerror_and_file_not_left_open(tmp_path):
    p = tmp_path / "bad.gguf"
    p.write_bytes(small_file()[:100])
    with pytest.raises(ValueError):
        gg.load(p)
    p.unlink()          # nothing holds the file


def test_no_large_allocation_for_claimed_sizes():
    # a 200-byte file claiming 2**40 elements of everything is refused before allocating
    import tracemalloc
    bufs = [LE.file([LE.kv("k", ARR, (U8, []))[:-8] + LE.u64(2**40)]),
            LE.file([LE.kv("k", U8, 1)], n_kv=2**50),
            LE.file([LE.kv("k", U8, 1)] * 3, n_tensors=5)]
    tracemalloc.start()
    for b in bufs:
        with pytest.raises(GGUFError):
            gg.load(b)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20


def test_memory_at_open_is_proportional_to_the_file():
    # the worst case: a file made only of tiny entries (14 bytes each); the Python objects
    # made at open (keys, their index) stay within a small factor of the file size
    import tracemalloc
    buf = LE.file([LE.kv(f"{i:x}", U8, 1) for i in range(100_000)])
    tracemalloc.start()
    f = gg.load(buf)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(f.metadata) == 100_000
    assert peak < 10 * len(buf), (peak, len(buf))
