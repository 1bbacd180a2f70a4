"""Random quantized blocks with sane scales, for tests of the quantized compute paths.

Every byte of a block is random except its scale fields, which are set to small finite
values, so the data exercises every quant pattern while the dequantized weights stay
finite (random float16 scales would often be inf/NaN)."""
import numpy as np

from ggml_cy import GGMLType as T

# byte offsets of the float16 scale fields inside one block
HALF_FIELDS = {
    T.Q4_0: (0,), T.Q4_1: (0, 2), T.Q5_0: (0,), T.Q5_1: (0, 2), T.Q8_0: (0,),
    T.IQ4_NL: (0,), T.Q2_K: (80, 82), T.Q3_K: (108,), T.Q4_K: (0, 2), T.Q5_K: (0, 2),
    T.Q6_K: (208,), T.IQ4_XS: (0,), T.TQ1_0: (52,), T.TQ2_0: (64,), T.IQ2_XXS: (0,),
    T.IQ2_XS: (0,), T.IQ2_S: (0,), T.IQ3_XXS: (0,), T.IQ3_S: (0,), T.IQ1_S: (0,),
    T.Q1_0: (0,), T.Q2_0: (0,), T.Q8_1: (0, 2),
}


def random_blocks(t, rows, ne0, rng):
    """(rows, row_bytes) uint8 blocks of type t holding rows x ne0 values."""
    t = T(t)
    bs, ts = t.blck_size, t.type_size
    nb = ne0 // bs
    raw = rng.integers(0, 256, size=(rows, nb, ts), dtype=np.uint8)
    for off in HALF_FIELDS.get(t, ()):
        h = rng.uniform(0.002, 0.02, size=(rows, nb)).astype(np.float16)
        raw[:, :, off:off + 2] = h.view(np.uint8).reshape(rows, nb, 2)
    if t == T.MXFP4:                       # E8M0 exponent near 2^-6
        raw[:, :, 0] = rng.integers(118, 126, size=(rows, nb))
    elif t == T.NVFP4:                     # UE4M3 sub-block scales, moderate
        raw[:, :, 0:4] = rng.integers(0x20, 0x40, size=(rows, nb, 4))
    elif t == T.IQ1_M:                     # the f16 scale is the top nibbles of scales[8]
        h = rng.uniform(0.002, 0.02, size=(rows, nb)).astype(np.float16).view(np.uint16)
        sc = raw[:, :, 48:56].copy().view(np.uint16)     # 4 little-endian uint16
        for i in range(4):
            sc[..., i] = (sc[..., i] & 0x0FFF) | (((h >> (4 * i)) & 0xF) << 12)
        raw[:, :, 48:56] = sc.view(np.uint8)
    elif t == T.Q8_K:
        d = rng.uniform(0.002, 0.02, size=(rows, nb)).astype(np.float32)
        raw[:, :, 0:4] = d.view(np.uint8).reshape(rows, nb, 4)
    return raw.reshape(rows, nb * ts)


def dequant_ref(raw, t, ne0):
    """The float32 dequantization the tests trust: gguf-py's where it knows the type,
    else ggml_cy.dequantize (itself tested bitwise against gguf-py)."""
    import gguf
    t = T(t)
    try:
        q = gguf.GGMLQuantizationType(int(t))
        return gguf.quants.dequantize(raw, q).reshape(raw.shape[0], ne0)
    except (ValueError, NotImplementedError):
        import ggml_cy
        return ggml_cy.dequantize(raw, t, (raw.shape[0], ne0))
