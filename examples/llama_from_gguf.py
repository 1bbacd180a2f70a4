"""Write a tiny llama model with random weights to a GGUF file, load it with
ggml_cy.models.llama, generate tokens greedily and print the speed.

    python examples/llama_from_gguf.py                 # Q8_0 weights, 16 tokens, 2 threads
    python examples/llama_from_gguf.py --type q4_k --threads 1 --tokens 32

The file is written by ggml_cy's own GGUF writer with llama.cpp's keys and tensor names
(quantized blocks from ggml_cy.quantize), so it is an ordinary llama-architecture GGUF
model: point ``LlamaModel`` at any other (token ids in, logits out; no tokenizer). The
model runs on the CPU (the CUDA backend lacks rms_norm, rope_ext and flash_attn_ext).
"""
import argparse
import os
import tempfile
import time

import numpy as np

import ggml_cy
from ggml_cy import gguf
from ggml_cy.models.llama import LlamaModel

TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_k", "q6_k")
# n_embd 256, 4 layers, 8 heads (2 KV heads), n_ff 768, 1000 tokens: about 5M parameters
CONFIG = dict(n_vocab=1000, n_embd=256, n_layer=4, n_head=8, n_head_kv=2, n_ff=768,
              n_ctx=512)


def _encode(x, wtype):
    if x.ndim == 1 or wtype == "f32":
        return x
    if wtype == "f16":
        return x.astype(np.float16)
    if wtype == "bf16":
        raw = ggml_cy.float32_to_bfloat16(x)
    else:
        raw = np.asarray(ggml_cy.quantize(x, wtype))
    return gguf.RawTensor(wtype, x.shape, raw.tobytes())


def write_random_llama(path, wtype="q8_0", seed=0, **cfg):
    """A random llama-architecture model in GGUF (2-D weights in wtype, norms in f32)."""
    c = dict(CONFIG, **cfg)
    d, hd = c["n_embd"], c["n_embd"] // c["n_head"]
    dkv = hd * c["n_head_kv"]
    rng = np.random.default_rng(seed)

    def mat(rows, cols):
        return (rng.standard_normal((rows, cols)) / np.sqrt(cols)).astype(np.float32)

    def vec():
        return (1.0 + 0.1 * rng.standard_normal(d)).astype(np.float32)

    u32, f32 = "uint32", "float32"
    meta = {
        "general.architecture": "llama",
        "general.name": "ggml_cy example: random tiny llama",
        "llama.context_length": gguf.Value(c["n_ctx"], u32),
        "llama.embedding_length": gguf.Value(d, u32),
        "llama.block_count": gguf.Value(c["n_layer"], u32),
        "llama.feed_forward_length": gguf.Value(c["n_ff"], u32),
        "llama.rope.dimension_count": gguf.Value(hd, u32),
        "llama.attention.head_count": gguf.Value(c["n_head"], u32),
        "llama.attention.head_count_kv": gguf.Value(c["n_head_kv"], u32),
        "llama.attention.layer_norm_rms_epsilon": gguf.Value(1e-5, f32),
        "llama.rope.freq_base": gguf.Value(10000.0, f32),
        "llama.vocab_size": gguf.Value(c["n_vocab"], u32),
    }
    w = {"token_embd.weight": rng.standard_normal((c["n_vocab"], d)).astype(np.float32)}
    for i in range(c["n_layer"]):
        p = f"blk.{i}."
        w.update({p + "attn_norm.weight": vec(), p + "attn_q.weight": mat(d, d),
                  p + "attn_k.weight": mat(dkv, d), p + "attn_v.weight": mat(dkv, d),
                  p + "attn_output.weight": mat(d, d), p + "ffn_norm.weight": vec(),
                  p + "ffn_gate.weight": mat(c["n_ff"], d),
                  p + "ffn_up.weight": mat(c["n_ff"], d),
                  p + "ffn_down.weight": mat(d, c["n_ff"])})
    w["output_norm.weight"] = vec()
    w["output.weight"] = mat(c["n_vocab"], d)
    gguf.save(path, meta, {k: _encode(v, wtype) for k, v in w.items()})
    return sum(v.size for v in w.values())


def main(wtype="q8_0", n_tokens=16, n_threads=2, prompt_len=32, path=None):
    with tempfile.TemporaryDirectory() as tmp:
        path = path or os.path.join(tmp, f"tiny-llama-{wtype}.gguf")
        n_params = write_random_llama(path, wtype)
        print(f"wrote {path}: {n_params / 1e6:.1f}M parameters, {wtype} weights, "
              f"{os.path.getsize(path) / 1e6:.1f} MB")
        model = LlamaModel(path, n_threads=n_threads)
        print(model.hparams)
        prompt = [int(t) for t in np.random.default_rng(1).integers(0, model.n_vocab,
                                                                    prompt_len)]
        t0 = time.perf_counter()
        logits = model.eval(prompt)
        t_prompt = time.perf_counter() - t0
        first = int(np.argmax(logits[-1]))
        t0 = time.perf_counter()
        rest = model.generate([first], n_tokens - 1) if n_tokens > 1 else []
        t_decode = time.perf_counter() - t0
        tokens = [first] + rest
        print(f"prompt: {prompt_len} tokens in {t_prompt * 1e3:.1f} ms "
              f"({prompt_len / t_prompt:.0f} tokens/s, {n_threads} threads)")
        print(f"generated {len(tokens)} tokens (greedy): {tokens}")
        if n_tokens > 1:
            print(f"decode: {(n_tokens - 1) / t_decode:.1f} tokens/s")
        model.close()
        return tokens


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--type", default="q8_0", choices=TYPES, help="weight type")
    ap.add_argument("--tokens", type=int, default=16, help="tokens to generate")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt", type=int, default=32, help="prompt length (random ids)")
    ap.add_argument("--out", default=None, help="keep the model file at this path")
    a = ap.parse_args()
    main(a.type, a.tokens, a.threads, a.prompt, a.out)
