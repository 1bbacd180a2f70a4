"""Mutation fuzzing of the GGUF reader: valid files (little- and big-endian, nested arrays,
quantized and plain tensors) are mutated at random -- bytes flipped, ranges overwritten,
bytes inserted and deleted, length and count fields set to extreme values, the file cut --
and every result must either load (and then every value and tensor can be read) or raise
GGUFError. A crash, a hang or any other exception fails.

Time budget: GGML_CY_GGUF_FUZZ_SECONDS (default 10 s in all); the seed is
GGML_CY_FUZZ_SEED (default 0), printed on failure.
"""
import os
import random
import struct
import time

import numpy as np

import ggml_cy.gguf as gg
from ggml_cy.gguf import GGUFError
from _gguf_bytes import LE, BE, U8, U32, I64, F32, STR, ARR, small_file

BUDGET = float(os.environ.get("GGML_CY_GGUF_FUZZ_SECONDS", "10"))
SEED = int(os.environ.get("GGML_CY_FUZZ_SEED", "0"))
MAX_CALL_SECONDS = 5.0

SPECIAL64 = [0, 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1, 2**64 - 8, 7, 65,
             2**16]
SPECIAL32 = [0, 1, 4, 5, 8, 9, 12, 13, 31, 128, 2**31, 2**32 - 1]


def _seeds():
    out = [small_file(LE), small_file(BE)]
    kvs = [LE.kv("general.alignment", U32, 64),
           LE.kv("tok", ARR, (STR, [f"t{i}" for i in range(40)])),
           LE.kv("sc", ARR, (F32, [0.5] * 20)),
           LE.kv("deep", ARR, (ARR, [(ARR, [(U8, [1, 2]), (STR, ["z"])]), (ARR, [])])),
           LE.kv("i", I64, -1)]
    tis = [LE.ti("q", [64, 2], 2, 0),         # q4_0: 72 bytes
           LE.ti("k", [256], 12, 128),        # q4_K: 144 bytes
           LE.ti("f", [3, 5], 1, 320)]        # f16: 30 bytes
    out.append(LE.file(kvs, tis, bytes(range(256)) * 2, align=64))
    return out


def _mutate(rng, buf):
    b = bytearray(buf)
    for _ in range(rng.randint(1, 4)):
        if not b:
            break
        op = rng.randrange(7)
        i = rng.randrange(len(b))
        if op == 0:
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            b[i] = rng.randrange(256)
        elif op == 2 and i + 8 <= len(b):
            v = rng.choice(SPECIAL64)
            b[i:i + 8] = struct.pack(rng.choice("<>") + "Q", v)
        elif op == 3 and i + 4 <= len(b):
            b[i:i + 4] = struct.pack(rng.choice("<>") + "I", rng.choice(SPECIAL32))
        elif op == 4:
            del b[i:i + rng.randint(1, 16)]
        elif op == 5:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        else:
            del b[i:]
    return bytes(b)


def _exercise(buf):
    try:
        f = gg.load(buf)
    except GGUFError as e:
        assert isinstance(e, ValueError) and "byte" in str(e)
        return False
    for k in f.metadata:
        f.metadata[k]
        f.metadata.spec(k)
    for name, ti in f.tensors.items():
        r = f.raw(name)
        assert r.size == ti.nbytes
        int(r[:16].sum())
        if ti.type_name in ("f32", "f16", "bf16", "i8", "i16", "i32", "i64", "f64"):
            a = f.numpy(name)
            assert a.shape == ti.shape
    f.close()
    return True


def test_fuzz_reader():
    rng = random.Random(SEED)
    seeds = _seeds()
    for s in seeds:
        assert _exercise(s)
    deadline = time.monotonic() + BUDGET
    n = ok = 0
    while time.monotonic() < deadline:
        buf = _mutate(rng, rng.choice(seeds))
        t0 = time.monotonic()
        try:
            ok += _exercise(buf)
        except Exception as e:
            raise AssertionError(f"seed {SEED}, case {n}: {type(e).__name__}: {e}\n"
                                 f"file: {buf!r}") from e
        assert time.monotonic() - t0 < MAX_CALL_SECONDS, f"seed {SEED}, case {n}: slow"
        n += 1
    assert n > 100
    print(f"gguf fuzz: {n} files, {ok} valid")
