# GGUF in compiled code: the parser of the header, the metadata and the tensor infos, the
# validation of every field, and the lazy decoding of metadata values.
#
# A GGUF file (little-endian, or every number byte-swapped in a big-endian file):
#   magic "GGUF" | version u32 | n_tensors u64 | n_kv u64
#   n_kv x  { key: string | value type u32 | value }
#   n_tensors x { name: string | n_dims u32 | ne[n_dims] u64 | type u32 | offset u64 }
#   padding to the alignment | tensor data (each tensor at data_offset + its offset)
# string = length u64 + UTF-8 bytes; array value = element type u32 + count u64 + elements
# (an element of type array is itself such an array: arrays of arrays nest).
#
# The parser walks the bytes once in C (nogil), checks every length against what is left of
# the file before it reads or allocates anything, and records where each entry lives
# (KV / TI records). Nothing but the keys and tensor names becomes a Python object at open;
# a value is decoded when it is asked for. The tables it allocates are bounded by the file
# size (a count is checked against the bytes left first). Errors carry a message naming the
# entry, the field and its byte offset.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t, int32_t, int16_t, int8_t
from libc.string cimport memcmp, memcpy
from libc.stdlib cimport calloc, free
from libc.stdio cimport snprintf
from cpython.unicode cimport PyUnicode_DecodeUTF8

import numpy as np

from ggml_cy.gguf.constants import (GGUFError, GGUFValueType, MAX_ALIGNMENT, MAX_KEY_LENGTH,
                                    MAX_NAME_LENGTH, MAX_ARRAY_DEPTH, DEFAULT_ALIGNMENT)

cdef extern from "ggml_types.h":
    int ggml_cy_type_in_ggml(int type) noexcept nogil
    int64_t ggml_cy_blck_size(int type) noexcept nogil
    size_t ggml_cy_block_bytes(int type) noexcept nogil
    const char * ggml_cy_type_name(int type) noexcept nogil
    int ggml_cy_is_quantized(int type) noexcept nogil

cdef extern from *:
    """
    #define GGUF_ASCII_MASK 0x8080808080808080ULL
    #define GGUF_I64_MAX 0x7fffffffffffffffLL
    static inline uint16_t gguf_bswap16(uint16_t x) { return __builtin_bswap16(x); }
    static inline uint32_t gguf_bswap32(uint32_t x) { return __builtin_bswap32(x); }
    static inline uint64_t gguf_bswap64(uint64_t x) { return __builtin_bswap64(x); }
    """
    uint64_t GGUF_ASCII_MASK
    int64_t GGUF_I64_MAX
    uint16_t gguf_bswap16(uint16_t x) noexcept nogil
    uint32_t gguf_bswap32(uint32_t x) noexcept nogil
    uint64_t gguf_bswap64(uint64_t x) noexcept nogil

cdef enum:
    T_U8 = 0
    T_I8 = 1
    T_U16 = 2
    T_I16 = 3
    T_U32 = 4
    T_I32 = 5
    T_F32 = 6
    T_BOOL = 7
    T_STR = 8
    T_ARR = 9
    T_U64 = 10
    T_I64 = 11
    T_F64 = 12
    T_COUNT = 13
    MSG_LEN = 400
    CTX_LEN = 160

# the limits of constants.py, for C (checked equal below)
cdef enum:
    C_MAX_DEPTH = 32
    C_MAX_KEY = 65535
    C_MAX_NAME = 63
    C_DEFAULT_ALIGNMENT = 32
cdef uint64_t C_MAX_ALIGNMENT = 1 << 30
assert (C_MAX_DEPTH, C_MAX_KEY, C_MAX_NAME, C_DEFAULT_ALIGNMENT, C_MAX_ALIGNMENT) == \
    (MAX_ARRAY_DEPTH, MAX_KEY_LENGTH, MAX_NAME_LENGTH, DEFAULT_ALIGNMENT, MAX_ALIGNMENT)

# bytes of one value of each fixed-size type (0: string and array have a variable size)
cdef uint64_t VSIZE[13]
VSIZE[:] = [1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8]
cdef const char * VNAME[13]
VNAME[:] = [b"uint8", b"int8", b"uint16", b"int16", b"uint32", b"int32", b"float32", b"bool",
            b"string", b"array", b"uint64", b"int64", b"float64"]

# smallest size in bytes of one metadata entry (key length, type, a 1-byte value) and of
# one tensor info (name of >= 0 bytes, n_dims, one dim, type, offset)
cdef enum:
    MIN_KV_BYTES = 8 + 4 + 1
    MIN_TI_BYTES = 8 + 4 + 8 + 4 + 8


cdef struct KV:
    uint64_t off        # byte where the entry starts (its key length)
    uint64_t key_off    # the key's bytes
    uint64_t key_len
    uint32_t vtype      # GGUF value type
    uint32_t etype      # arrays: element type
    uint64_t val_off    # the value (arrays: the element type field)
    uint64_t count      # arrays: number of elements
    uint64_t end        # one past the value's last byte


cdef struct TI:
    uint64_t off        # byte where the tensor info starts
    uint64_t name_off
    uint64_t name_len
    uint32_t n_dims
    uint32_t type
    int64_t ne[4]
    uint64_t offset     # from the start of the data section
    uint64_t nbytes


cdef struct Rd:
    const uint8_t * p
    uint64_t size
    uint64_t pos
    bint swap
    uint64_t err_off
    char ctx[CTX_LEN]    # the entry being read ("metadata #3 'general.name': ")
    char msg[MSG_LEN]


# ------------------------------------------------------------------------ primitive reads
cdef int need(Rd * r, uint64_t n, const char * field) noexcept nogil:
    if n > r.size - r.pos:
        r.err_off = r.pos
        snprintf(r.msg, MSG_LEN, "%s%s at byte %llu needs %llu bytes, but the file ends at "
                 "byte %llu (truncated file)", r.ctx, field, <unsigned long long>r.pos,
                 <unsigned long long>n, <unsigned long long>r.size)
        return -1
    return 0


cdef inline uint32_t ld32(const uint8_t * p, bint swap) noexcept nogil:
    cdef uint32_t v
    memcpy(&v, p, 4)
    return gguf_bswap32(v) if swap else v


cdef inline uint64_t ld64(const uint8_t * p, bint swap) noexcept nogil:
    cdef uint64_t v
    memcpy(&v, p, 8)
    return gguf_bswap64(v) if swap else v


cdef int rd32(Rd * r, const char * field, uint32_t * out) noexcept nogil:
    if need(r, 4, field) < 0:
        return -1
    out[0] = ld32(r.p + r.pos, r.swap)
    r.pos += 4
    return 0


cdef int rd64(Rd * r, const char * field, uint64_t * out) noexcept nogil:
    if need(r, 8, field) < 0:
        return -1
    out[0] = ld64(r.p + r.pos, r.swap)
    r.pos += 8
    return 0


cdef int64_t utf8_invalid(const uint8_t * s, uint64_t n) noexcept nogil:
    """Index of the first byte that is not valid UTF-8 (Python's strict decoder's rules:
    no overlong forms, no surrogates, nothing above U+10FFFF), or -1."""
    cdef uint64_t i = 0, w
    cdef uint8_t c, c1
    while i < n:
        if i + 8 <= n:
            memcpy(&w, s + i, 8)
            if (w & GGUF_ASCII_MASK) == 0:
                i += 8
                continue
        c = s[i]
        if c < 0x80:
            i += 1
        elif c < 0xC2:
            return <int64_t>i
        elif c < 0xE0:
            if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
                return <int64_t>i
            i += 2
        elif c < 0xF0:
            if i + 2 >= n:
                return <int64_t>i
            c1 = s[i + 1]
            if (c1 & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80:
                return <int64_t>i
            if (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 >= 0xA0):
                return <int64_t>i
            i += 3
        elif c < 0xF5:
            if i + 3 >= n:
                return <int64_t>i
            c1 = s[i + 1]
            if ((c1 & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80
                    or (s[i + 3] & 0xC0) != 0x80):
                return <int64_t>i
            if (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 >= 0x90):
                return <int64_t>i
            i += 4
        else:
            return <int64_t>i
    return -1


cdef int rdstr(Rd * r, const char * field, uint64_t max_len, uint64_t * off,
               uint64_t * length) noexcept nogil:
    """A string: its length, then that many bytes of valid UTF-8."""
    cdef uint64_t at = r.pos, n
    cdef int64_t bad
    if rd64(r, field, &n) < 0:
        return -1
    if max_len and n > max_len:
        r.err_off = at
        snprintf(r.msg, MSG_LEN, "%s%s length %llu at byte %llu exceeds the limit of %llu "
                 "bytes", r.ctx, field, <unsigned long long>n, <unsigned long long>at,
                 <unsigned long long>max_len)
        return -1
    if n > r.size - r.pos:
        r.err_off = at
        snprintf(r.msg, MSG_LEN, "%s%s length %llu at byte %llu runs past the end of the "
                 "file (%llu bytes left)", r.ctx, field, <unsigned long long>n,
                 <unsigned long long>at, <unsigned long long>(r.size - r.pos))
        return -1
    bad = utf8_invalid(r.p + r.pos, n)
    if bad >= 0:
        r.err_off = r.pos + <uint64_t>bad
        snprintf(r.msg, MSG_LEN, "%s%s is not valid UTF-8 (byte 0x%02x at byte %llu)",
                 r.ctx, field, r.p[r.pos + <uint64_t>bad], <unsigned long long>r.err_off)
        return -1
    if off != NULL:
        off[0] = r.pos
    if length != NULL:
        length[0] = n
    r.pos += n
    return 0


cdef int check_bools(Rd * r, uint64_t n) noexcept nogil:
    cdef uint64_t i
    for i in range(n):
        if r.p[r.pos + i] > 1:
            r.err_off = r.pos + i
            snprintf(r.msg, MSG_LEN, "%sbool at byte %llu is %u (a bool is 0 or 1)", r.ctx,
                     <unsigned long long>r.err_off, r.p[r.pos + i])
            return -1
    return 0


cdef int check_vtype(Rd * r, uint32_t t, uint64_t at, const char * field) noexcept nogil:
    if t >= T_COUNT:
        r.err_off = at
        snprintf(r.msg, MSG_LEN, "%s%s %u at byte %llu is unknown (GGUF value types are 0 "
                 "to 12)", r.ctx, field, t, <unsigned long long>at)
        return -1
    return 0


cdef int skip_value(Rd * r, uint32_t t, int depth) noexcept nogil:
    """Walks over one value of type t, checking it; r.pos ends one past it."""
    cdef uint64_t n, left, i, sz, at
    cdef uint32_t et
    if t == T_STR:
        return rdstr(r, b"string value", 0, NULL, NULL)
    if t == T_ARR:
        at = r.pos
        if depth >= C_MAX_DEPTH:
            r.err_off = at
            snprintf(r.msg, MSG_LEN, "%sarray at byte %llu is nested more than %d deep",
                     r.ctx, <unsigned long long>at, <int>C_MAX_DEPTH)
            return -1
        if rd32(r, b"array element type", &et) < 0:
            return -1
        if check_vtype(r, et, at, b"array element type") < 0:
            return -1
        if rd64(r, b"array length", &n) < 0:
            return -1
        left = r.size - r.pos
        sz = VSIZE[et] if VSIZE[et] else (8 if et == T_STR else 12)
        if n > left / sz:
            r.err_off = at + 4
            snprintf(r.msg, MSG_LEN, "%sarray length %llu at byte %llu: %llu elements of "
                     "type %s cannot fit in the %llu bytes left in the file", r.ctx,
                     <unsigned long long>n, <unsigned long long>(at + 4),
                     <unsigned long long>n, VNAME[et], <unsigned long long>left)
            return -1
        if et == T_STR:
            for i in range(n):
                if rdstr(r, b"string element", 0, NULL, NULL) < 0:
                    return -1
        elif et == T_ARR:
            for i in range(n):
                if skip_value(r, T_ARR, depth + 1) < 0:
                    return -1
        else:
            if et == T_BOOL and check_bools(r, n) < 0:
                return -1
            r.pos += n * sz
        return 0
    if need(r, VSIZE[t], VNAME[t]) < 0:
        return -1
    if t == T_BOOL and check_bools(r, 1) < 0:
        return -1
    r.pos += VSIZE[t]
    return 0


cdef inline void set_ctx(Rd * r, const char * what, uint64_t i, const uint8_t * name,
                         uint64_t name_len) noexcept nogil:
    cdef const char * dots = "..."
    cdef const char * none = ""
    if name == NULL:
        snprintf(r.ctx, CTX_LEN, "%s #%llu: ", what, <unsigned long long>i)
    else:
        snprintf(r.ctx, CTX_LEN, "%s #%llu '%.*s%s': ", what, <unsigned long long>i,
                 <int>(name_len if name_len < 60 else 60), name,
                 dots if name_len > 60 else none)


# ------------------------------------------------------------------------ the parse
cdef struct Out:
    uint32_t version
    bint swap
    uint64_t n_kv
    uint64_t n_tensors
    uint64_t alignment
    int64_t alignment_kv
    uint64_t info_end
    uint64_t data_offset
    KV * kvs
    TI * tis


cdef int parse(Rd * r, Out * o) noexcept nogil:
    cdef uint32_t v, vs, t
    cdef uint64_t i, j, left, key_off, key_len, n, a, at
    cdef int64_t ne, nel, blck, nrow
    cdef KV * kv
    cdef TI * ti
    cdef const char * what_ec = "element count"
    cdef const char * what_bs = "byte size"
    r.ctx[0] = 0
    if r.size < 4:
        r.err_off = 0
        snprintf(r.msg, MSG_LEN, "magic at byte 0: the file is %llu bytes, too short to be "
                 "a GGUF file", <unsigned long long>r.size)
        return -1
    if memcmp(r.p, b"GGUF", 4) != 0:
        r.err_off = 0
        snprintf(r.msg, MSG_LEN, "magic at byte 0 is %02x %02x %02x %02x, not 'GGUF': not a "
                 "GGUF file", r.p[0], r.p[1], r.p[2], r.p[3])
        return -1
    r.pos = 4
    if rd32(r, b"version", &v) < 0:
        return -1
    vs = gguf_bswap32(v)
    if v == 0 or v > 3:
        if 1 <= vs <= 3:
            r.swap = True       # a big-endian file: every number is byte-swapped
            v = vs
        else:
            r.err_off = 4
            snprintf(r.msg, MSG_LEN, "version %u at byte 4 is not supported (this reader "
                     "knows GGUF versions 2 and 3)", v)
            return -1
    if v == 1:
        r.err_off = 4
        snprintf(r.msg, MSG_LEN, "version 1 at byte 4: GGUF v1 (the 2023 draft with 32-bit "
                 "counts and lengths) is not supported; convert the model again with a "
                 "current llama.cpp or gguf-py to get a v3 file")
        return -1
    o.version = v
    o.swap = r.swap
    if rd64(r, b"tensor count", &o.n_tensors) < 0 or rd64(r, b"metadata count", &o.n_kv) < 0:
        return -1
    left = r.size - r.pos
    if o.n_kv > left / MIN_KV_BYTES:
        r.err_off = 16
        snprintf(r.msg, MSG_LEN, "metadata count %llu at byte 16 cannot fit in the %llu "
                 "bytes after the header", <unsigned long long>o.n_kv,
                 <unsigned long long>left)
        return -1
    if o.n_tensors > left / MIN_TI_BYTES or \
            o.n_tensors * MIN_TI_BYTES + o.n_kv * MIN_KV_BYTES > left:
        r.err_off = 8
        snprintf(r.msg, MSG_LEN, "tensor count %llu at byte 8 cannot fit in the %llu bytes "
                 "after the header", <unsigned long long>o.n_tensors,
                 <unsigned long long>left)
        return -1
    # bounded by the file size (checked above)
    o.kvs = <KV *>calloc(o.n_kv + 1, sizeof(KV))
    o.tis = <TI *>calloc(o.n_tensors + 1, sizeof(TI))
    if o.kvs == NULL or o.tis == NULL:
        snprintf(r.msg, MSG_LEN, "out of memory for %llu metadata entries",
                 <unsigned long long>o.n_kv)
        return -2
    o.alignment = C_DEFAULT_ALIGNMENT
    o.alignment_kv = -1

    for i in range(o.n_kv):
        kv = &o.kvs[i]
        kv.off = r.pos
        set_ctx(r, b"metadata", i, NULL, 0)
        if rdstr(r, b"key", C_MAX_KEY, &kv.key_off, &kv.key_len) < 0:
            return -1
        if kv.key_len == 0:
            r.err_off = kv.off
            snprintf(r.msg, MSG_LEN, "%skey at byte %llu is empty", r.ctx,
                     <unsigned long long>kv.off)
            return -1
        set_ctx(r, b"metadata", i, r.p + kv.key_off, kv.key_len)
        at = r.pos
        if rd32(r, b"value type", &kv.vtype) < 0:
            return -1
        if check_vtype(r, kv.vtype, at, b"value type") < 0:
            return -1
        kv.val_off = r.pos
        if skip_value(r, kv.vtype, 0) < 0:
            return -1
        kv.end = r.pos
        if kv.vtype == T_ARR:
            kv.etype = ld32(r.p + kv.val_off, r.swap)
            kv.count = ld64(r.p + kv.val_off + 4, r.swap)
        if kv.key_len == 17 and memcmp(r.p + kv.key_off, b"general.alignment", 17) == 0:
            if kv.vtype != T_U32:
                r.err_off = at
                snprintf(r.msg, MSG_LEN, "%svalue type at byte %llu is %s; "
                         "general.alignment must be uint32", r.ctx,
                         <unsigned long long>at, VNAME[kv.vtype])
                return -1
            a = ld32(r.p + kv.val_off, r.swap)
            if a == 0 or (a & (a - 1)) != 0 or a > C_MAX_ALIGNMENT:
                r.err_off = kv.val_off
                snprintf(r.msg, MSG_LEN, "%svalue %llu at byte %llu: the alignment must be "
                         "a power of two from 1 to %llu", r.ctx, <unsigned long long>a,
                         <unsigned long long>kv.val_off, <unsigned long long>C_MAX_ALIGNMENT)
                return -1
            o.alignment = a
            o.alignment_kv = <int64_t>i

    for i in range(o.n_tensors):
        ti = &o.tis[i]
        ti.off = r.pos
        set_ctx(r, b"tensor", i, NULL, 0)
        if rdstr(r, b"tensor name", C_MAX_NAME, &ti.name_off, &ti.name_len) < 0:
            return -1
        set_ctx(r, b"tensor", i, r.p + ti.name_off, ti.name_len)
        at = r.pos
        if rd32(r, b"n_dims", &ti.n_dims) < 0:
            return -1
        if ti.n_dims == 0 or ti.n_dims > 4:
            r.err_off = at
            snprintf(r.msg, MSG_LEN, "%sn_dims %u at byte %llu: a ggml tensor has 1 to 4 "
                     "dimensions", r.ctx, ti.n_dims, <unsigned long long>at)
            return -1
        for j in range(4):
            ti.ne[j] = 1
        for j in range(ti.n_dims):
            at = r.pos
            if rd64(r, b"dimension", &n) < 0:
                return -1
            ne = <int64_t>n
            if ne <= 0:
                r.err_off = at
                snprintf(r.msg, MSG_LEN, "%sne[%d] = %lld at byte %llu: dimensions must be "
                         "positive", r.ctx, <int>j, <long long>ne, <unsigned long long>at)
                return -1
            ti.ne[j] = ne
        at = r.pos
        if rd32(r, b"tensor type", &ti.type) < 0:
            return -1
        if not ggml_cy_type_in_ggml(ti.type):
            r.err_off = at
            snprintf(r.msg, MSG_LEN, "%stensor type %u at byte %llu is unknown or removed "
                     "from ggml", r.ctx, ti.type, <unsigned long long>at)
            return -1
        blck = ggml_cy_blck_size(ti.type)
        if ti.ne[0] % blck != 0:
            r.err_off = ti.name_off + ti.name_len + 4
            snprintf(r.msg, MSG_LEN, "%sne[0] = %lld at byte %llu is not a multiple of the "
                     "block size %lld of type %s", r.ctx, <long long>ti.ne[0],
                     <unsigned long long>r.err_off, <long long>blck,
                     ggml_cy_type_name(ti.type))
            return -1
        nel = 1
        if ti.ne[0] / blck > GGUF_I64_MAX / <int64_t>ggml_cy_block_bytes(ti.type):
            nrow = -1
        else:
            nrow = (ti.ne[0] / blck) * <int64_t>ggml_cy_block_bytes(ti.type)
        for j in range(4):
            if ti.ne[j] > GGUF_I64_MAX / nel:
                nel = -1
                break
            nel *= ti.ne[j]
            if j > 0 and nrow > 0:
                nrow = -1 if ti.ne[j] > GGUF_I64_MAX / nrow else nrow * ti.ne[j]
        if nel < 0 or nrow < 0:
            r.err_off = ti.name_off + ti.name_len + 4
            snprintf(r.msg, MSG_LEN, "%sthe %s of shape [%lld, %lld, %lld, %lld] at byte "
                     "%llu overflows int64", r.ctx,
                     what_ec if nel < 0 else what_bs,
                     <long long>ti.ne[0], <long long>ti.ne[1], <long long>ti.ne[2],
                     <long long>ti.ne[3], <unsigned long long>r.err_off)
            return -1
        ti.nbytes = <uint64_t>nrow
        at = r.pos
        if rd64(r, b"tensor offset", &ti.offset) < 0:
            return -1
        if ti.offset % o.alignment != 0:
            r.err_off = at
            snprintf(r.msg, MSG_LEN, "%soffset %llu at byte %llu is not a multiple of the "
                     "alignment %llu", r.ctx, <unsigned long long>ti.offset,
                     <unsigned long long>at, <unsigned long long>o.alignment)
            return -1

    r.ctx[0] = 0
    o.info_end = r.pos
    o.data_offset = (r.pos + o.alignment - 1) / o.alignment * o.alignment
    if o.n_tensors > 0 and o.data_offset > r.size:
        r.err_off = r.pos
        snprintf(r.msg, MSG_LEN, "data section at byte %llu (after the tensor infos, padded "
                 "to the alignment %llu) lies beyond the end of the file (%llu bytes)",
                 <unsigned long long>o.data_offset, <unsigned long long>o.alignment,
                 <unsigned long long>r.size)
        return -1
    for i in range(o.n_tensors):
        ti = &o.tis[i]
        left = r.size - o.data_offset if o.data_offset <= r.size else 0
        if ti.offset > left or ti.nbytes > left - ti.offset:
            set_ctx(r, b"tensor", i, r.p + ti.name_off, ti.name_len)
            r.err_off = ti.name_off + ti.name_len + 4 + 8 * ti.n_dims + 4
            snprintf(r.msg, MSG_LEN, "%sdata of %llu bytes at offset %llu (byte %llu of the "
                     "file; offset field at byte %llu) runs past the end of the file (%llu "
                     "bytes)", r.ctx, <unsigned long long>ti.nbytes,
                     <unsigned long long>ti.offset,
                     <unsigned long long>(o.data_offset + ti.offset),
                     <unsigned long long>r.err_off, <unsigned long long>r.size)
            return -1
    return 0


cdef class Parsed:
    """The parse of one GGUF file: where every entry lives; values are decoded on demand
    from the buffer it was given (which it keeps while open)."""
    cdef Out o
    cdef const uint8_t[::1] mv
    cdef object buf
    cdef readonly uint64_t size

    def __cinit__(self):
        self.o.kvs = NULL
        self.o.tis = NULL

    def __dealloc__(self):
        free(self.o.kvs)
        free(self.o.tis)

    def __init__(self, buf):
        """Parses buf (bytes, mmap, numpy uint8 array, ...); raises GGUFError."""
        cdef Rd r
        cdef int rc
        self.mv = buf
        self.buf = buf
        self.size = self.mv.shape[0]
        r.p = &self.mv[0] if self.size else <const uint8_t *>b""
        r.size = self.size
        r.pos = 0
        r.swap = False
        r.err_off = 0
        r.msg[0] = 0
        with nogil:
            rc = parse(&r, &self.o)
        if rc == -2:
            raise MemoryError(r.msg.decode("utf-8", "backslashreplace"))
        if rc < 0:
            e = GGUFError(r.msg.decode("utf-8", "backslashreplace"))
            e.offset = r.err_off
            raise e

    def release(self):
        """Drops the buffer (decoding then fails)."""
        self.mv = None
        self.buf = None

    cdef const uint8_t * ptr(self) except NULL:
        if self.mv is None:
            raise ValueError("the GGUF file is closed")
        return &self.mv[0]

    @property
    def version(self):
        return self.o.version

    @property
    def swapped(self):
        """True for a big-endian (byte-swapped) file."""
        return bool(self.o.swap)

    @property
    def n_kv(self):
        return self.o.n_kv

    @property
    def n_tensors(self):
        return self.o.n_tensors

    @property
    def alignment(self):
        return self.o.alignment

    @property
    def data_offset(self):
        return self.o.data_offset

    @property
    def info_end(self):
        return self.o.info_end

    def keys(self):
        """Every key, in file order (valid UTF-8: checked by the parse)."""
        cdef const uint8_t * p = self.ptr()
        cdef uint64_t i
        return [PyUnicode_DecodeUTF8(<const char *>p + self.o.kvs[i].key_off,
                                     self.o.kvs[i].key_len, NULL)
                for i in range(self.o.n_kv)]

    def kv_info(self, uint64_t i):
        """(offset, value type, element type, count) of entry i (arrays: element type and
        count; others: -1, 1)."""
        if i >= self.o.n_kv:
            raise IndexError(i)
        cdef KV * kv = &self.o.kvs[i]
        if kv.vtype == T_ARR:
            return kv.off, kv.vtype, kv.etype, kv.count
        return kv.off, kv.vtype, -1, 1

    def tensor_table(self):
        """Columns of the tensor infos: names (list of str), a (n, 9) int64 array with
        n_dims, type, ne0..ne3, offset, nbytes, info offset."""
        cdef const uint8_t * p = self.ptr()
        cdef uint64_t i
        cdef int j
        cdef TI * ti
        names = [PyUnicode_DecodeUTF8(<const char *>p + self.o.tis[i].name_off,
                                      self.o.tis[i].name_len, NULL)
                 for i in range(self.o.n_tensors)]
        tab = np.empty((self.o.n_tensors, 9), dtype=np.int64)
        cdef int64_t[:, ::1] t = tab
        for i in range(self.o.n_tensors):
            ti = &self.o.tis[i]
            t[i, 0] = ti.n_dims
            t[i, 1] = ti.type
            for j in range(4):
                t[i, 2 + j] = ti.ne[j]
            t[i, 6] = <int64_t>ti.offset
            t[i, 7] = <int64_t>ti.nbytes
            t[i, 8] = <int64_t>ti.off
        return names, tab

    def value(self, uint64_t i, bint numpy_arrays=True):
        """The value of entry i: int, float, bool, str; an array of numbers or bools as a
        1-D numpy array (numpy_arrays) or a list; strings as a list of str; arrays of
        arrays as lists of arrays."""
        if i >= self.o.n_kv:
            raise IndexError(i)
        cdef const uint8_t * p = self.ptr()
        cdef uint64_t pos = self.o.kvs[i].val_off
        return decode(self.buf, p, self.size, &pos, self.o.kvs[i].vtype, self.o.swap,
                      numpy_arrays)[0]

    def spec(self, uint64_t i):
        """The full GGUF type of entry i: a GGUFValueType, or for arrays
        (GGUFValueType.ARRAY, element spec), where the element spec of an array of arrays
        is one spec when all inner arrays share it, else a list of one spec per element."""
        if i >= self.o.n_kv:
            raise IndexError(i)
        cdef const uint8_t * p = self.ptr()
        cdef uint64_t pos = self.o.kvs[i].val_off
        return decode(self.buf, p, self.size, &pos, self.o.kvs[i].vtype, self.o.swap, True,
                      True)[1]

    def value_bytes(self, uint64_t i):
        """(start, end) byte range of entry i's encoded value."""
        return self.o.kvs[i].val_off, self.o.kvs[i].end


def ggml_type_table():
    """[(number, name)] of every ggml type a GGUF file may hold (ggml_types.h)."""
    return [(t, ggml_cy_type_name(t).decode()) for t in range(256) if ggml_cy_type_in_ggml(t)]


def type_traits(int t):
    """(elements per block, bytes per block, is quantized) of ggml type t."""
    if not ggml_cy_type_in_ggml(t):
        raise ValueError(f"{t} is not a ggml type number a GGUF file may hold")
    return (ggml_cy_blck_size(t), ggml_cy_block_bytes(t), ggml_cy_is_quantized(t) != 0)


# ------------------------------------------------------------------------ value decoding
_DTYPES = [np.dtype(x) for x in ("u1", "i1", "<u2", "<i2", "<u4", "<i4", "<f4", "u1", "V1",
                                 "V1", "<u8", "<i8", "<f8")]
_DTYPES_BE = [d.newbyteorder(">") if d.itemsize > 1 else d for d in _DTYPES]
_VT = [GGUFValueType(i) for i in range(13)]


cdef object scalar(const uint8_t * p, uint32_t t, bint swap):
    cdef uint16_t u16
    cdef uint32_t u32
    cdef uint64_t u64
    cdef float f32
    cdef double f64
    if t == T_U8:
        return p[0]
    if t == T_I8:
        return <int8_t>p[0]
    if t == T_BOOL:
        return p[0] != 0
    if t == T_U16 or t == T_I16:
        memcpy(&u16, p, 2)
        if swap:
            u16 = gguf_bswap16(u16)
        return u16 if t == T_U16 else <int16_t>u16
    if t == T_U32 or t == T_I32 or t == T_F32:
        u32 = ld32(p, swap)
        if t == T_U32:
            return u32
        if t == T_I32:
            return <int32_t>u32
        memcpy(&f32, &u32, 4)
        return f32
    u64 = ld64(p, swap)
    if t == T_U64:
        return u64
    if t == T_I64:
        return <int64_t>u64
    memcpy(&f64, &u64, 8)
    return f64


cdef inline int _within(uint64_t size, uint64_t pos, uint64_t n) except -1:
    # the parse validated every length; a file changed on disk since cannot make a read
    # leave the mapping
    if pos > size or n > size - pos:
        raise GGUFError(f"value at byte {pos} now lies outside the file: the file was "
                        f"changed after it was opened")
    return 0


cdef tuple decode(object buf, const uint8_t * p, uint64_t size, uint64_t * pos, uint32_t t,
                  bint swap, bint numpy_arrays, bint want_spec=False):
    """(value, spec) of the (already validated) value of type t at pos[0]; pos[0] moves
    past it. Every read is bounds-checked again against size."""
    cdef uint64_t n, i, k
    cdef uint32_t et
    if t == T_STR:
        _within(size, pos[0], 8)
        n = ld64(p + pos[0], swap)
        _within(size, pos[0] + 8, n)
        s = PyUnicode_DecodeUTF8(<const char *>p + pos[0] + 8, n, NULL)
        pos[0] += 8 + n
        return s, _VT[t]
    if t != T_ARR:
        _within(size, pos[0], VSIZE[t])
        v = scalar(p + pos[0], t, swap)
        pos[0] += VSIZE[t]
        return v, _VT[t]
    _within(size, pos[0], 12)
    et = ld32(p + pos[0], swap)
    n = ld64(p + pos[0] + 4, swap)
    pos[0] += 12
    if et >= T_COUNT or n > size:
        _within(size, size + 1, 0)
    if et == T_STR:
        out = [None] * n
        for i in range(n):
            _within(size, pos[0], 8)
            k = ld64(p + pos[0], swap)
            _within(size, pos[0] + 8, k)
            out[i] = PyUnicode_DecodeUTF8(<const char *>p + pos[0] + 8, k, NULL)
            pos[0] += 8 + k
        return out, (_VT[T_ARR], _VT[T_STR])
    if et == T_ARR:
        out = [None] * n
        specs = [None] * n if want_spec else None
        for i in range(n):
            v, sp = decode(buf, p, size, pos, T_ARR, swap, numpy_arrays, want_spec)
            out[i] = v
            if want_spec:
                specs[i] = sp
        if want_spec:
            if n == 0:
                return out, (_VT[T_ARR], _VT[T_ARR])
            if all(s == specs[0] for s in specs):
                return out, (_VT[T_ARR], specs[0])
            return out, (_VT[T_ARR], specs)
        return out, None
    dt = (_DTYPES_BE if swap else _DTYPES)[et]
    _within(size, pos[0], n * VSIZE[et])
    arr = np.frombuffer(buf, dtype=dt, count=<Py_ssize_t>n, offset=<Py_ssize_t>pos[0])
    pos[0] += n * VSIZE[et]
    if et == T_BOOL:
        arr = arr.astype(np.bool_)
    else:
        arr = arr.astype(dt.newbyteorder("="), copy=True)
    if not numpy_arrays:
        arr = arr.tolist()
    return arr, (_VT[T_ARR], _VT[et])
