"""Builds GGUF files byte by byte for the GGUF tests (independent of ggml_cy's writer)."""
import struct

U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
FMT = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", BOOL: "B",
       U64: "Q", I64: "q", F64: "d"}


class B:
    """A byte builder for one byte order ('<' or '>')."""

    def __init__(self, bo="<"):
        self.bo = bo

    def u32(self, v):
        return struct.pack(self.bo + "I", v)

    def u64(self, v):
        return struct.pack(self.bo + "Q", v % 2**64)

    def s(self, x):
        b = x.encode() if isinstance(x, str) else x
        return self.u64(len(b)) + b

    def val(self, t, v):
        """An encoded value (no type field)."""
        if t == STR:
            return self.s(v)
        if t == ARR:
            et, items = v
            return self.arr(et, items)
        return struct.pack(self.bo + FMT[t], v)

    def arr(self, et, items):
        return self.u32(et) + self.u64(len(items)) + b"".join(self.val(et, x) for x in items)

    def kv(self, key, t, v):
        return self.s(key) + self.u32(t) + self.val(t, v)

    def ti(self, name, ne, type, offset):
        return (self.s(name) + self.u32(len(ne)) + b"".join(self.u64(n) for n in ne)
                + self.u32(type) + self.u64(offset))

    def file(self, kvs=(), tis=(), data=b"", version=3, n_kv=None, n_tensors=None,
             align=32, magic=b"GGUF", pad=True):
        """kvs: encoded entries; tis: encoded infos; data: the data section."""
        head = (magic + self.u32(version) + self.u64(len(tis) if n_tensors is None
                                                      else n_tensors)
                + self.u64(len(kvs) if n_kv is None else n_kv) + b"".join(kvs)
                + b"".join(tis))
        if pad and (tis or data):
            head += b"\0" * (-len(head) % align)
        return head + data


LE = B("<")
BE = B(">")


def small_file(b=LE):
    """A small valid file: a few values of every kind, two f32 tensors (data ends the
    file: no trailing padding, so every proper prefix is invalid)."""
    kvs = [b.kv("general.architecture", STR, "test"),
           b.kv("t.u8", U8, 200), b.kv("t.i8", I8, -5), b.kv("t.u16", U16, 60000),
           b.kv("t.i16", I16, -30000), b.kv("t.u32", U32, 4000000000),
           b.kv("t.i32", I32, -2000000000), b.kv("t.f32", F32, 1.5), b.kv("t.bool", BOOL, 1),
           b.kv("t.u64", U64, 2**64 - 1), b.kv("t.i64", I64, -2**63), b.kv("t.f64", F64, 0.1),
           b.kv("t.arr", ARR, (I32, [1, -2, 3])), b.kv("t.sarr", ARR, (STR, ["a", "héllo"])),
           b.kv("t.nest", ARR, (ARR, [(U8, [1, 2]), (STR, ["x"])]))]
    data0 = struct.pack(b.bo + "8f", *range(8))
    data1 = struct.pack(b.bo + "8f", *range(8, 16))
    tis = [b.ti("a", [4, 2], 0, 0), b.ti("b", [8], 0, 32)]
    return b.file(kvs, tis, data0 + data1)
