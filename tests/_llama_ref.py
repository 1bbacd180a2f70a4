"""Tiny llama-architecture GGUF models with random weights, and an independent float64
numpy forward pass of the same model (the oracle of tests/test_models_llama.py).

The files are written with gguf-py (``gguf.GGUFWriter``), so they are what llama.cpp's
tools write: arch "llama", the ``llama.*`` hyperparameter keys, llama.cpp's tensor names,
2-D weights in the chosen type (norm weights stay F32, as llama.cpp's converter keeps
them). Q8_0/Q4_0/BF16 blocks come from ``gguf.quants.quantize``; gguf-py 0.19 cannot
quantize K-quants, so Q4_K/Q6_K blocks come from ``ggml_cy.quantize`` (ggml's reference
quantizer). The reference always reads the blocks back through
``gguf.quants.dequantize``, so it computes on exactly the weights the file holds.

The reference follows llama.cpp's graph for LLM_ARCH_LLAMA: RMSNorm (x / sqrt(mean(x^2) +
eps), times the weight), rotary embedding in ggml's *normal* mode (llama.cpp's rope type
for llama: adjacent pairs (2i, 2i+1) of each head rotated by pos * base^(-2i/n_rot);
convert_hf_to_gguf permutes HF's q/k rows so that this equals HF's rotate-half form),
grouped-query causal attention with scale 1/sqrt(head_dim), the SwiGLU feed-forward
``down(silu(gate(x)) * up(x))``, a final RMSNorm and the output projection.

``RefLlama(..., act_bf16=True)`` (for BF16 weights) rounds the activations to bfloat16
before every weight product, as llama.cpp's CPU backend computes (ggml's vec-dot partner
of BF16 is BF16: the f32 activations are rounded to nearest even).
"""
import dataclasses

import numpy as np

WEIGHT_TYPES = ("F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K", "Q6_K")


@dataclasses.dataclass
class HParams:
    n_vocab: int = 300
    n_embd: int = 256
    n_layer: int = 2
    n_head: int = 8
    n_head_kv: int = 2
    n_ff: int = 512
    n_ctx: int = 64
    eps: float = 1e-5
    rope_base: float = 10000.0
    n_rot: int = None            # rope.dimension_count; default: the head size
    rope_linear: float = None    # rope.scaling.factor of "linear" scaling (None: no key)
    rope_freqs: bool = False     # write a rope_freqs.weight tensor (Llama 3's factors)

    def __post_init__(self):
        if self.n_rot is None:
            self.n_rot = self.n_embd // self.n_head

    @property
    def head_dim(self):
        return self.n_embd // self.n_head


def tensor_shapes(hp):
    """name -> numpy shape (rows = outputs, columns = inputs; ggml's ne reversed)."""
    d, dkv = hp.n_embd, hp.head_dim * hp.n_head_kv
    shapes = {"token_embd.weight": (hp.n_vocab, d)}
    for i in range(hp.n_layer):
        p = f"blk.{i}."
        shapes.update({
            p + "attn_norm.weight": (d,),
            p + "attn_q.weight": (d, d),
            p + "attn_k.weight": (dkv, d),
            p + "attn_v.weight": (dkv, d),
            p + "attn_output.weight": (d, d),
            p + "ffn_norm.weight": (d,),
            p + "ffn_gate.weight": (hp.n_ff, d),
            p + "ffn_up.weight": (hp.n_ff, d),
            p + "ffn_down.weight": (d, hp.n_ff),
        })
    if hp.rope_freqs:
        shapes["rope_freqs.weight"] = (hp.n_rot // 2,)
    shapes["output_norm.weight"] = (d,)
    shapes["output.weight"] = (hp.n_vocab, d)
    return shapes


def random_weights(hp, seed=0):
    """float32 weights scaled so that activations stay O(1) through the layers."""
    rng = np.random.default_rng(seed)
    w = {}
    for name, shape in tensor_shapes(hp).items():
        if name == "rope_freqs.weight":
            w[name] = rng.uniform(1.0, 8.0, shape).astype(np.float32)
        elif len(shape) == 1:
            w[name] = (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        elif name == "token_embd.weight":
            w[name] = rng.standard_normal(shape).astype(np.float32)
        else:
            w[name] = (rng.standard_normal(shape) / np.sqrt(shape[1])).astype(np.float32)
    return w


def encode(arr, wtype):
    """(data for GGUFWriter.add_tensor, raw_dtype or None, float64 values the file holds)."""
    import gguf
    from gguf import quants
    qt = getattr(gguf.GGMLQuantizationType, wtype)
    if arr.ndim == 1 or wtype == "F32":
        return arr, None, arr.astype(np.float64)
    if wtype == "F16":
        h = arr.astype(np.float16)
        return h, None, h.astype(np.float64)
    if wtype in ("Q4_K", "Q6_K"):
        import ggml_cy
        blocks = np.asarray(ggml_cy.quantize(arr, wtype.lower()))
    else:
        blocks = quants.quantize(arr, qt)
    return blocks, qt, quants.dequantize(blocks, qt).astype(np.float64)


def metadata(hp):
    """The llama.* keys with gguf-py's writer method names, in the order the converter adds them."""
    return {
        "context_length": hp.n_ctx,
        "embedding_length": hp.n_embd,
        "block_count": hp.n_layer,
        "feed_forward_length": hp.n_ff,
        "rope_dimension_count": hp.n_rot,
        "head_count": hp.n_head,
        "head_count_kv": hp.n_head_kv,
        "layer_norm_rms_eps": hp.eps,
        "rope_freq_base": hp.rope_base,
        "vocab_size": hp.n_vocab,
    }


def write_model(path, hp, wtype="F32", seed=0, drop_keys=(), bad_keys=None,
                reshape=None, drop_tensors=(), vocab=True):
    """Writes a random llama model to path; returns the float64 weights it holds.

    drop_keys: metadata names (see ``metadata``) left out; bad_keys: {key name: value}
    written instead (raw ``llama.<key>`` names, any gguf-py value); reshape: {tensor:
    numpy shape} written with a wrong shape; drop_tensors: tensor names left out.
    vocab: write a minimal "llama" tokenizer (what llama.cpp needs to open the file)."""
    import gguf
    w = random_weights(hp, seed)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("ggml_cy tiny random llama")
    keys = metadata(hp)
    for k, v in keys.items():
        if k in drop_keys or (bad_keys and k in bad_keys):
            continue
        getattr(writer, "add_" + k)(v)
    if hp.rope_linear is not None:
        writer.add_string("llama.rope.scaling.type", "linear")
        writer.add_float32("llama.rope.scaling.factor", hp.rope_linear)
    for k, v in (bad_keys or {}).items():
        key = "llama." + {"rope_dimension_count": "rope.dimension_count",
                          "head_count": "attention.head_count",
                          "head_count_kv": "attention.head_count_kv",
                          "layer_norm_rms_eps": "attention.layer_norm_rms_epsilon",
                          "rope_freq_base": "rope.freq_base"}.get(k, k)
        if isinstance(v, str):
            writer.add_string(key, v)
        elif isinstance(v, float):
            writer.add_float32(key, v)
        else:
            writer.add_int32(key, v)
    writer.add_file_type(int(getattr(gguf.LlamaFileType, "MOSTLY_" + wtype,
                                     gguf.LlamaFileType.ALL_F32)))
    if vocab:
        tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)]
        tokens += [f"t{i}" for i in range(hp.n_vocab - len(tokens))]
        tokens = tokens[:hp.n_vocab]
        writer.add_tokenizer_model("llama")
        writer.add_token_list(tokens)
        writer.add_token_scores([0.0] * len(tokens))
        ttypes = [2, 3, 3] + [6] * 256 + [1] * (len(tokens) - 259)
        writer.add_token_types(ttypes[:len(tokens)])
        writer.add_bos_token_id(1)
        writer.add_eos_token_id(2)
    values = {}
    for name, arr in w.items():
        if name in drop_tensors:
            continue
        if reshape and name in reshape:
            arr = np.resize(arr, reshape[name]).astype(np.float32)
        data, raw_dtype, values[name] = encode(arr, wtype)
        if raw_dtype is None:
            writer.add_tensor(name, data)
        else:
            writer.add_tensor(name, data, raw_shape=data.shape, raw_dtype=raw_dtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return values


def _rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def _rope_normal(x, pos, n_rot, base, freq_scale=1.0, factors=None):
    """x (n, heads, head_dim): ggml's normal mode, pairs (2i, 2i+1) of the first n_rot,
    angle freq_scale * pos * base^(-2i/n_rot) / factors[i]."""
    x = x.copy()
    i = np.arange(n_rot // 2)
    inv = base ** (-2.0 * i / n_rot) * freq_scale
    if factors is not None:
        inv = inv / factors
    theta = pos[:, None].astype(np.float64) * inv[None, :]
    c, s = np.cos(theta)[:, None, :], np.sin(theta)[:, None, :]
    x0, x1 = x[..., 0:n_rot:2].copy(), x[..., 1:n_rot:2].copy()
    x[..., 0:n_rot:2] = x0 * c - x1 * s
    x[..., 1:n_rot:2] = x0 * s + x1 * c
    return x


class RefLlama:
    """float64 forward pass with a KV cache: ``eval(tokens)`` appends tokens at the next
    positions and returns their logits (n_tokens, n_vocab)."""

    def __init__(self, weights, hp, act_bf16=False):
        self.w = weights
        self.hp = hp
        self.act_bf16 = act_bf16
        self.reset()

    def _mm(self, x, name):
        """x @ W.T for weight ``name``; x rounded (f32, then bf16) with act_bf16."""
        if self.act_bf16:
            x = bf16_round(x)
        return x @ self.w[name].T

    def reset(self):
        self.k = [np.zeros((0, self.hp.n_head_kv, self.hp.head_dim)) for _ in range(self.hp.n_layer)]
        self.v = [np.zeros((0, self.hp.n_head_kv, self.hp.head_dim)) for _ in range(self.hp.n_layer)]

    @property
    def n_past(self):
        return self.k[0].shape[0]

    def eval(self, tokens):
        hp, w = self.hp, self.w
        tokens = np.asarray(tokens, dtype=np.int64)
        n = len(tokens)
        pos = np.arange(self.n_past, self.n_past + n)
        x = w["token_embd.weight"][tokens]
        hd, group = hp.head_dim, hp.n_head // hp.n_head_kv
        for il in range(hp.n_layer):
            p = f"blk.{il}."
            h = _rms_norm(x, w[p + "attn_norm.weight"], hp.eps)
            q = self._mm(h, p + "attn_q.weight").reshape(n, hp.n_head, hd)
            k = self._mm(h, p + "attn_k.weight").reshape(n, hp.n_head_kv, hd)
            v = self._mm(h, p + "attn_v.weight").reshape(n, hp.n_head_kv, hd)
            rope = dict(freq_scale=1.0 / hp.rope_linear if hp.rope_linear else 1.0,
                        factors=w.get("rope_freqs.weight"))
            q = _rope_normal(q, pos, hp.n_rot, hp.rope_base, **rope)
            k = _rope_normal(k, pos, hp.n_rot, hp.rope_base, **rope)
            self.k[il] = K = np.concatenate([self.k[il], k])
            self.v[il] = V = np.concatenate([self.v[il], v])
            kpos = np.arange(K.shape[0])
            masked = kpos[None, :] > pos[:, None]                 # (n, n_kv): future keys
            out = np.empty((n, hp.n_head, hd))
            for hh in range(hp.n_head):
                s = q[:, hh, :] @ K[:, hh // group, :].T / np.sqrt(hd)
                s[masked] = -np.inf
                s = np.exp(s - s.max(axis=1, keepdims=True))
                s /= s.sum(axis=1, keepdims=True)
                out[:, hh, :] = s @ V[:, hh // group, :]
            x = x + self._mm(out.reshape(n, hp.n_embd), p + "attn_output.weight")
            h = _rms_norm(x, w[p + "ffn_norm.weight"], hp.eps)
            g = self._mm(h, p + "ffn_gate.weight")
            u = self._mm(h, p + "ffn_up.weight")
            x = x + self._mm(g / (1.0 + np.exp(-g)) * u, p + "ffn_down.weight")
        x = _rms_norm(x, w["output_norm.weight"], hp.eps)
        return self._mm(x, "output.weight")


def bf16_round(x):
    """float64 values rounded to float32, then to bfloat16 as ggml does (round to nearest
    even, NaN made quiet), returned as float64."""
    n = np.asarray(x, np.float32).view(np.uint32)
    n = np.where((n & 0x7FFFFFFF) > 0x7F800000, (n & 0xFFFF0000) | 0x00400000, n)
    n = n.astype(np.uint64)
    return (((n + 0x7FFF + ((n >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(
        np.float32).astype(np.float64)


def nmse(a, ref):
    """test-backend-ops' normalized mean squared error: sum((a - ref)^2) / sum(ref^2)."""
    a = np.asarray(a, np.float64)
    ref = np.asarray(ref, np.float64)
    return float(np.sum((a - ref) ** 2) / np.sum(ref ** 2))
