"""Write a tiny llama model with random weights to a GGUF file, load it with
ggml_cy.models.llama, generate tokens greedily and print the speed.

    python examples/llama_from_gguf.py                 # Q8_0 weights, 16 tokens
    python examples/llama_from_gguf.py --type q4_k --threads 1 --tokens 32
    python examples/llama_from_gguf.py --backend cuda       # the GPU only

The file (``write_random_model``: llama.cpp's keys and tensor names, 2-D weights in the
chosen type) is an ordinary llama-architecture GGUF model: point ``LlamaModel`` at any
other (token ids in, logits out; no tokenizer). By default the model runs on the CPU and,
when ggml_cy.cuda has a device, on the GPU too (``LlamaModel(path, backend="cuda")``),
with the same greedy tokens expected from both.
"""
import argparse
import os
import tempfile
import time
from typing import Optional

import numpy as np

import ggml_cy
from ggml_cy.models.llama import RANDOM_TYPES, LlamaModel, write_random_model


def main(wtype: str = "q8_0", n_tokens: int = 16, n_threads: Optional[int] = None,
         prompt_len: int = 32, path: Optional[str] = None,
         backends: Optional[list[str]] = None) -> list[int]:
    """Returns the CPU's greedy tokens (the first backend's when the CPU is not run)."""
    if n_threads is None:
        n_threads = ggml_cy.get_num_threads()       # ggml_cy's default thread count
    if backends is None:
        # (a plain `import ggml_cy.cuda` here would make ggml_cy local to this function,
        # unbound above when n_threads is None)
        from ggml_cy import cuda as gcuda
        gpu = bool(gcuda.is_available())  # type: ignore[no-untyped-call]
        backends = ["cpu"] + (["cuda"] if gpu else [])
    with tempfile.TemporaryDirectory() as tmp:
        path = path or os.path.join(tmp, f"tiny-llama-{wtype}.gguf")
        n_params = write_random_model(path, wtype)
        print(f"wrote {path}: {n_params / 1e6:.1f}M parameters, {wtype} weights, "
              f"{os.path.getsize(path) / 1e6:.1f} MB")
        results = {}
        for backend in backends:
            results[backend] = _run(path, backend, n_tokens, n_threads, prompt_len)
        if len(results) > 1:
            same = len({tuple(t) for t in results.values()}) == 1
            print("same tokens on " + " and ".join(results) + ": " + ("yes" if same else "no"))
        return next(iter(results.values()))


def _run(path: str, backend: str, n_tokens: int, n_threads: int,
         prompt_len: int) -> list[int]:
    model = LlamaModel(path, n_threads=n_threads, backend=backend)
    where = f"{n_threads} threads" if backend == "cpu" else "CUDA"
    print(f"[{backend}] {model.hparams}")
    rng = np.random.default_rng(1)
    prompt = [int(t) for t in rng.integers(0, model.n_vocab, prompt_len)]
    t0 = time.perf_counter()
    logits = model.eval(prompt)
    t_prompt = time.perf_counter() - t0
    tokens = [int(np.argmax(logits[-1]))]
    t0 = time.perf_counter()
    if n_tokens > 1:
        tokens += model.generate(tokens, n_tokens - 1)
    t_decode = time.perf_counter() - t0
    print(f"[{backend}] prompt: {prompt_len} tokens in {t_prompt * 1e3:.1f} ms "
          f"({prompt_len / t_prompt:.0f} tokens/s, {where})")
    print(f"[{backend}] generated {len(tokens)} tokens (greedy): {tokens}")
    if n_tokens > 1:
        print(f"[{backend}] decode: {(n_tokens - 1) / t_decode:.1f} tokens/s")
    model.close()
    return tokens


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="a random tiny llama model, generated greedily")
    ap.add_argument("--type", default="q8_0", choices=RANDOM_TYPES, help="weight type")
    ap.add_argument("--tokens", type=int, default=16, help="tokens to generate")
    ap.add_argument("--threads", type=int, default=None, help="default: ggml_cy's")
    ap.add_argument("--prompt", type=int, default=32, help="prompt length (random ids)")
    ap.add_argument("--out", default=None, help="keep the model file at this path")
    ap.add_argument("--backend", choices=["auto", "cpu", "cuda"], default="auto",
                    help="auto: the CPU, and the GPU when ggml_cy.cuda has a device")
    a = ap.parse_args()
    main(a.type, a.tokens, a.threads, a.prompt, a.out,
         None if a.backend == "auto" else [a.backend])
