"""Quantized types (issue 12 item 1): ggml's numbers, block sizes and bytes per block,
blck_size/type_size/row_size, the C block structs, and quantized tensors in a Context
(creation, views by rows, reshape/permute rules, raw bytes)."""
import numpy as np
import pytest

import ggml_cy
from ggml_cy import Context, GGMLType
from ggml_cy.core import _core

gguf = pytest.importorskip("gguf")
GQT = gguf.GGMLQuantizationType

QUANTIZED = [t for t in GGMLType if t.is_quantized]
# ggml's numbers (ggml.h enum ggml_type); Q2_0 is in ggml, not (yet) in gguf-py 0.19
GGML_QUANT_NUMBERS = {
    "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q8_1": 9, "Q2_K": 10, "Q3_K": 11,
    "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "Q8_K": 15, "IQ2_XXS": 16, "IQ2_XS": 17,
    "IQ3_XXS": 18, "IQ1_S": 19, "IQ4_NL": 20, "IQ3_S": 21, "IQ2_S": 22, "IQ4_XS": 23,
    "IQ1_M": 29, "TQ1_0": 34, "TQ2_0": 35, "MXFP4": 39, "NVFP4": 40, "Q1_0": 41, "Q2_0": 42}


def test_numbers_follow_ggml():
    assert {t.name: int(t) for t in QUANTIZED} == GGML_QUANT_NUMBERS


@pytest.mark.parametrize("t", QUANTIZED, ids=str)
def test_sizes_match_gguf_py(t):
    if t.name not in GQT.__members__:
        pytest.skip(f"gguf-py {gguf.__name__} has no {t.name}")
    g = GQT[t.name]
    assert int(g) == int(t)
    bs, ts = gguf.GGML_QUANT_SIZES[g]
    if t == GGMLType.Q8_1:
        # gguf-py still lists the old block_q8_1 (float d, float s: 40 bytes); ggml's
        # ggml-common.h has two halves (36 bytes), which is what ggml writes and reads
        assert (bs, ts) == (32, 40)
        bs, ts = 32, 36
    assert (t.blck_size, t.type_size, t.size) == (bs, ts, ts)
    assert ggml_cy.blck_size(t) == bs and ggml_cy.type_size(t) == ts
    assert ggml_cy.row_size(t, 4 * bs) == 4 * ts
    assert ggml_cy.row_size(t, 0) == 0


@pytest.mark.parametrize("t", QUANTIZED, ids=str)
def test_c_block_struct_sizes(t):
    # quant_blocks.h's structs are compiled into the core: their sizeof must be the bytes
    # per block (the header also asserts this at compile time)
    assert _core._block_struct_size(t) == t.type_size


def test_q2_0_and_plain_sizes():
    assert (GGMLType.Q2_0.blck_size, GGMLType.Q2_0.type_size) == (64, 18)
    assert (GGMLType.Q1_0.blck_size, GGMLType.Q1_0.type_size) == (128, 18)
    assert ggml_cy.blck_size("f32") == 1 and ggml_cy.type_size(np.float16) == 2
    assert ggml_cy.row_size(GGMLType.F32, 10) == 40
    assert ggml_cy.row_size("q4_K", 512) == 288 and ggml_cy.row_size(8, 64) == 68
    assert str(GGMLType.Q4_K) == "q4_K" and GGMLType.Q4_K.is_quantized
    assert not GGMLType.F32.is_quantized


def test_bad_input():
    with pytest.raises(ValueError, match="multiple of 32"):
        ggml_cy.row_size(GGMLType.Q4_0, 33)
    with pytest.raises(ValueError, match=">= 0"):
        ggml_cy.row_size(GGMLType.Q4_0, -32)
    with pytest.raises(TypeError):
        ggml_cy.row_size(GGMLType.Q4_0, 32.0)
    with pytest.raises(TypeError):
        ggml_cy.row_size(GGMLType.Q4_0, True)
    with pytest.raises(ValueError, match="unknown ggml type"):
        ggml_cy.blck_size(4)            # retired Q4_2
    with pytest.raises(ValueError, match="unknown ggml type"):
        ggml_cy.type_size(31)
    with pytest.raises(TypeError):
        ggml_cy.type_size(None)
    with pytest.raises(TypeError):
        ggml_cy.blck_size(object())
    with pytest.raises(OverflowError):
        ggml_cy.row_size(GGMLType.F64, 2 ** 62)
    with pytest.raises(TypeError, match="quantized"):
        GGMLType.Q4_0.numpy_dtype


@pytest.mark.parametrize("t", QUANTIZED, ids=str)
def test_new_tensor_strides(t):
    ctx = Context(1 << 20)
    bs, ts = t.blck_size, t.type_size
    a = ctx.new_tensor(t, (2 * bs, 3, 2))
    assert a.type is t
    assert a.nb == (ts, 2 * ts, 6 * ts, 12 * ts)
    assert a.nbytes == 12 * ts and a.is_contiguous
    assert a.nelements == 12 * bs and a.nrows == 6
    with pytest.raises(ValueError, match="multiple of its block size"):
        ctx.new_tensor(t, (bs + 1, 2))
    with pytest.raises(ValueError, match="multiple of its block size"):
        ctx.new_tensor_1d(t, bs // 2)
    e = ctx.new_tensor(t, (0, 3))
    assert e.nbytes == 0
