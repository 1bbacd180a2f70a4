"""python -m bench model: a ~100M-parameter llama model end to end (issue 13, item 4).

The bench writes a llama-architecture GGUF model with random weights (n_embd 768, 12
layers, 12 heads / 4 KV heads, n_ff 2048, vocab 16000: 100.1M parameters) in F16, Q8_0
and Q4_0 (``ggml_cy.models.llama.write_random_model`` with a minimal vocabulary so that
llama.cpp opens it) into a cache folder (``$GGML_CY_BENCH_CACHE``, default
``~/.cache/ggml_cy/bench_model``; reused by later runs), then per weight type:

* prompt: one eval of 128 tokens from an empty KV cache (last token's logits only),
  reported per token (tokens/s = 1 / time);
* decode: one-token steps after the 128-token prompt (positions 128..159, then back to
  128: the cache is rewound, never refilled), time per token; GB/s = the weight bytes a
  token reads (every matrix but the embedding table, which is looked up by row) / time.

Libraries (columns): ``ggml_cy`` (LlamaModel on the CPU, --threads N), ``llama.cpp``
(llama-cpp-python's Llama on the CPU, n_threads = n_threads_batch = N, f16 KV cache,
its default flash-attention setting), ``ggml_cy-cuda`` (LlamaModel(backend="cuda")) and
``torch-eager`` (transformers' LlamaForCausalLM in float16 on the GPU with the same
weights, a manual prompt + decode loop over its KV cache, no generate(); F16 rows only).
Columns of absent libraries are empty, with the reason in the footnotes.

Ratios: xllama = llama.cpp's time / ggml_cy's (target decode >= 0.8), xtorch =
torch-eager's / ggml_cy-cuda's (target decode >= 1.0), roof = ggml_cy's weight GB/s over
the CPU copy roofline measured in the same run (bench/roofline.py, float32 copy, GB/s
of bytes read + written), gpuroof = ggml_cy-cuda's over the device's d2d copy GB/s
(torch copy_ of 512 MiB, bytes read + written) measured in the same run.
"""
from __future__ import annotations

import hashlib
import os
import statistics
import sys
import tempfile
import time

import numpy as np

from bench import _env, _harness, _libs, _report
from bench._harness import Call, Case, Setup, Target

LIBS = ["ggml_cy", "llama.cpp", "ggml_cy-cuda", "torch-eager"]
# GGML_CY_BENCH_MODEL_LIBS="ggml_cy,llama.cpp": only these libraries (the others are skipped
# with a note), e.g. to time the CPU libraries on a GPU machine without the GPU ones loaded.
ONLY = [x.strip() for x in os.environ.get("GGML_CY_BENCH_MODEL_LIBS", "").split(",")
        if x.strip()]
TYPES = ["f16", "q8_0", "q4_0"]
# Libraries take turns sample by sample; llama.cpp's worker threads spin-wait for a while
# after a graph (and ggml_cy's pool threads after a job), so a sample taken right after the
# other library's shares the cores with its spinning threads (measured on the 2-core VM:
# ggml_cy's 2-thread Q8_0 decode 11.6 ms taken in turns, 3.8 ms alone). One untimed call of
# the same library before each sample (the harness's warm_each) outlasts the other's spin;
# a pause instead (settle_s) left every thread asleep and made both libraries 2-4x slower.
# Three calls: with one, ggml_cy's 2-thread Q8_0 decode (4 ms a call) still measured 6.6 ms
# in turns against 4.1 ms alone (llama.cpp's OpenMP threads spin for several ms). On the
# 16-core host even three 1.5 ms calls were not enough (16-thread Q4_0 decode 2.05 ms in
# turns, 1.27 ms in a loop alone), and a pause before every sample (so that the other
# library's threads sleep) left cold cores: 1.5-1.8 ms. So the libraries do not take turns
# (BLOCKS, the harness's Setup.blocks): each one's samples run back to back after a pause
# and three warm-up calls, one library after the other.
WARM_EACH = 3
SETTLE_S = 0.05
BLOCKS = True

CONFIG = dict(n_vocab=16000, n_embd=768, n_layer=12, n_head=12, n_head_kv=4, n_ff=2048,
              n_ctx=1024)
SMOKE_CONFIG = dict(n_vocab=512, n_embd=256, n_layer=2, n_head=4, n_head_kv=2, n_ff=512,
                    n_ctx=256)
PROMPT, SPAN = 128, 32
SMOKE_PROMPT, SMOKE_SPAN = 8, 4
DECODE_TOKEN = 7


def _config(opts):
    if opts.smoke:
        return SMOKE_CONFIG, SMOKE_PROMPT, SMOKE_SPAN
    return CONFIG, PROMPT, SPAN


def model_file(folder, wtype, config):
    """The cached model file for (wtype, config); written when missing."""
    from ggml_cy.models.llama import write_random_model
    tag = hashlib.sha1(repr(sorted(config.items())).encode()).hexdigest()[:10]
    path = os.path.join(folder, f"llama-random-{tag}-{wtype}.gguf")
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        write_random_model(tmp, wtype, seed=0, vocab=True, **config)
        os.replace(tmp, path)
    return path


def weight_bytes_per_token(path):
    """Bytes of weights one decode token reads: every tensor but token_embd (one row)."""
    from ggml_cy.gguf import load
    f = load(path)
    try:
        return sum(t.nbytes for name, t in f.tensors.items() if name != "token_embd.weight")
    finally:
        f.close()


# ----------------------------------------------------------------------------- callables
class _Rewind:
    """One decode step at a time after the prompt; after `span` steps the position goes
    back to the prompt's end (the cache past it is overwritten, as a new branch)."""

    def __init__(self, step, rewind, n_prompt, span):
        self.step, self.rewind = step, rewind
        self.n_prompt, self.span, self.i = n_prompt, span, 0

    def __call__(self):
        if self.i >= self.span:
            self.rewind(self.n_prompt)
            self.i = 0
        self.i += 1
        return self.step()


def _cy_prompt(model, prompt):
    model.reset()
    return model.eval(prompt, all_logits=False)


def _cy_decoder(model, prompt, span):
    _cy_prompt(model, prompt)

    def rewind(n):
        model.n_past = n

    return _Rewind(lambda: model.eval([DECODE_TOKEN], all_logits=False), rewind,
                   len(prompt), span)


def _llama_cpp_open(llama_cpp, path, n_threads, n_ctx, n_batch):
    return llama_cpp.Llama(model_path=path, n_ctx=n_ctx, n_batch=n_batch, n_ubatch=n_batch,
                           n_threads=n_threads, n_threads_batch=n_threads,
                           logits_all=False, verbose=False, seed=0)


def _lc_prompt(llm, prompt):
    llm.reset()
    llm.eval(prompt)


def _lc_decoder(llm, prompt, span):
    _lc_prompt(llm, prompt)

    def rewind(n):
        llm.n_tokens = n                  # eval() drops the cache past n_tokens

    return _Rewind(lambda: llm.eval([DECODE_TOKEN]), rewind, len(prompt), span)


class _TorchLlama:
    """transformers' LlamaForCausalLM (float16, CUDA) with the GGUF file's weights."""

    def __init__(self, torch, transformers, path, device="cuda"):
        from ggml_cy.models.llama import hf_llama_weights
        cfg, state = hf_llama_weights(path, dtype=np.float16)
        config = transformers.LlamaConfig(**cfg)
        rp = getattr(config, "rope_parameters", None)
        if isinstance(rp, dict):
            rp["rope_theta"] = cfg["rope_theta"]
        self.torch = torch
        with torch.device(device):
            self.model = transformers.LlamaForCausalLM(config).to(torch.float16).eval()
        self.model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()},
                                   strict=False)
        self.past = None
        self.tok = torch.tensor([[DECODE_TOKEN]], device=device)

    def prompt(self, ids):
        torch = self.torch
        with torch.inference_mode():
            out = self.model(ids, use_cache=True)
        self.past = out.past_key_values
        return out.logits[:, -1]

    def step(self):
        with self.torch.inference_mode():
            out = self.model(self.tok, past_key_values=self.past, use_cache=True)
        self.past = out.past_key_values
        return out.logits[:, -1]

    def rewind(self, n):
        extra = self.past.get_seq_length() - n
        if extra > 0:
            self.past.crop(-extra)         # a negative count: every transformers version


# ----------------------------------------------------------------------------- rooflines
def _gpu_copy_gbps(torch, n=1 << 27, reps=10):
    """Device-to-device copy of n float32 (bytes read + written), median GB/s."""
    a = torch.randn(n, device="cuda")
    b = torch.empty_like(a)
    b.copy_(a)
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        b.copy_(a)
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e-3)
    del a, b
    torch.cuda.empty_cache()
    return 2 * n * 4 / statistics.median(ts) / 1e9


def _cpu_roofline(opts):
    roofline, note = _libs.load_roofline(None)
    if roofline is None:
        return None, note
    from bench.quant import measure_copy_roofline
    r = measure_copy_roofline(roofline, opts)
    gbps = max((v["gbps"] for k, v in r.items() if k != "errors" and v.get("gbps")),
               default=None)
    return gbps, r


# ----------------------------------------------------------------------------- cases
def build_cases(env, opts):
    config, n_prompt, span = _config(opts)
    rng = np.random.default_rng(1)
    prompt = [int(t) for t in rng.integers(3, config["n_vocab"], n_prompt)]
    n_ctx = n_prompt + span + 8
    gc_llama = env["llama_mod"]
    llama_cpp, torch, transformers = env["llama_cpp"], env["torch"], env["transformers"]
    cases = []
    live = {}

    def close_live():
        for k in list(live):
            fn = getattr(live.pop(k), "close", None)
            if callable(fn):
                try:
                    fn()
                except Exception:
                    pass
        if env["torch_gpu"]:
            torch.cuda.empty_cache()

    def skips(wtype):
        s = {lib: "left out (GGML_CY_BENCH_MODEL_LIBS)" for lib in LIBS
             if ONLY and lib not in ONLY}
        if llama_cpp is None:
            s["llama.cpp"] = env["llama_cpp_note"]
        if not env["gpu_ok"]:
            s["ggml_cy-cuda"] = s["torch-eager"] = env["gpu_note"]
        elif not env["torch_gpu"]:
            s["torch-eager"] = "torch with CUDA is not installed"
        elif transformers is None:
            s["torch-eager"] = "transformers is not installed"
        elif wtype != "f16":
            s["torch-eager"] = "torch has no Q8_0/Q4_0 kernels: its f16 figure is the F16 row"
        return s

    def open_models(wtype, kind):
        """Models for this type, opened once for the prompt and decode cases."""
        if live.get("type") != wtype:
            close_live()
            live["type"] = wtype
        path = env["paths"][wtype]
        s = skips(wtype)
        impls = {}

        def opened(key, lib, factory):
            """The live object for `key`, made once; a failure skips only `lib`."""
            if key not in live:
                try:
                    live[key] = factory()
                except Exception as exc:
                    live[key] = f"{type(exc).__name__}: {exc}"
            obj = live[key]
            if isinstance(obj, str):
                s[lib] = f"could not open the model: {obj}"
                return None
            return obj

        m = None if "ggml_cy" in s else opened(
            "cy", "ggml_cy", lambda: gc_llama.LlamaModel(path, n_ctx=n_ctx, n_threads=opts.threads))
        if m is not None:
            impls["ggml_cy"] = (Call(_cy_prompt, m, prompt) if kind == "prompt"
                                else Call(_cy_decoder(m, prompt, span)))
        if "llama.cpp" not in s:
            llm = opened("lc", "llama.cpp", lambda: _llama_cpp_open(
                llama_cpp, path, opts.threads, n_ctx, max(n_prompt, 8)))
            if llm is not None:
                impls["llama.cpp"] = (Call(_lc_prompt, llm, prompt) if kind == "prompt"
                                      else Call(_lc_decoder(llm, prompt, span)))
        if "ggml_cy-cuda" not in s:
            mc = opened("cu", "ggml_cy-cuda", lambda: gc_llama.LlamaModel(
                path, n_ctx=n_ctx, backend="cuda", n_threads=opts.threads))
            if mc is not None:
                impls["ggml_cy-cuda"] = (Call(_cy_prompt, mc, prompt) if kind == "prompt"
                                         else Call(_cy_decoder(mc, prompt, span)))
        if "torch-eager" not in s:
            pt = opened("pt", "torch-eager", lambda: _TorchLlama(torch, transformers, path))
            if pt is not None:
                ids = torch.tensor([prompt], device="cuda")
                if kind == "prompt":
                    impls["torch-eager"] = Call(pt.prompt, ids)
                else:
                    pt.prompt(ids)
                    impls["torch-eager"] = Call(_Rewind(pt.step, pt.rewind, n_prompt, span))
        for c in impls.values():
            c.unchecked()
        return impls, s

    for wtype in TYPES:
        wbytes = env["wbytes"][wtype]

        def prompt_setup(wtype=wtype):
            impls, s = open_models(wtype, "prompt")
            return Setup(impls, per_op=n_prompt, skipped=s, sync=env["sync"], warm_each=WARM_EACH,
                         settle_s=SETTLE_S, blocks=BLOCKS)

        def decode_setup(wtype=wtype, wbytes=wbytes):
            impls, s = open_models(wtype, "decode")
            return Setup(impls, nbytes=wbytes, skipped=s, sync=env["sync"], warm_each=WARM_EACH,
                         settle_s=SETTLE_S, blocks=BLOCKS,
                         notes=[f"{wtype.upper()}: {wbytes / 1e6:.1f} MB of weights read "
                                "per decoded token"])

        params = dict(type=wtype.upper(), prompt=n_prompt, **config)
        cases.append(Case(f"prompt {n_prompt} tok {wtype.upper()} (per token)", prompt_setup,
                          group="prompt", params=dict(params, kind="prompt")))
        cases.append(Case(f"decode @{n_prompt}..{n_prompt + span} {wtype.upper()}",
                          decode_setup, group="decode",
                          params=dict(params, kind="decode", span=span,
                                      weight_bytes=wbytes),
                          targets=[Target("xllama>=0.8", "vs_llama.cpp", 0.8),
                                   Target("xtorch>=1", "cuda_vs_torch", 1.0)]))
    env["close"] = close_live
    return cases


def run(opts, json_path, argv=None, out=None):
    out = out if out is not None else sys.stdout
    t0 = time.perf_counter()
    gc, load_note = _libs.load_ggml_cy()
    from ggml_cy.models import llama as llama_mod
    llama_cpp = _libs.load_optional("llama_cpp")
    torch = _libs.load_optional("torch")
    transformers = _libs.load_optional("transformers") if torch is not None else None
    gpu_note, gpu_ok = None, False
    try:
        import ggml_cy.cuda as gcuda
        gpu_ok = bool(gcuda.is_available())
        if not gpu_ok:
            gpu_note = "ggml_cy.cuda is not available (no CUDA build or no device)"
    except Exception as exc:                          # pragma: no cover
        gpu_note = f"ggml_cy.cuda failed to import: {exc}"
    torch_gpu = bool(gpu_ok and torch is not None and torch.cuda.is_available())
    meta = _env.environment(gc, opts.threads, "model", argv)
    for name, mod in (("llama_cpp", llama_cpp), ("transformers", transformers)):
        meta["versions"][name] = getattr(mod, "__version__", None) if mod else None
    env = {"gc": gc, "llama_mod": llama_mod, "llama_cpp": llama_cpp, "torch": torch,
           "transformers": transformers, "gpu_ok": gpu_ok, "gpu_note": gpu_note,
           "torch_gpu": torch_gpu,
           "llama_cpp_note": "llama-cpp-python is not installed (pip install "
                             "llama-cpp-python builds llama.cpp from source)",
           "sync": torch.cuda.synchronize if torch_gpu else None}
    config, n_prompt, span = _config(opts)
    folder = os.environ.get("GGML_CY_BENCH_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "ggml_cy", "bench_model")
    tmpdir = None
    if opts.smoke:
        tmpdir = tempfile.TemporaryDirectory(prefix="ggml_cy_model_bench_")
        folder = tmpdir.name
    tw = time.perf_counter()
    env["paths"] = {t: model_file(folder, t, config) for t in TYPES}
    write_s = time.perf_counter() - tw
    env["wbytes"] = {t: weight_bytes_per_token(p) for t, p in env["paths"].items()}
    n_params = None
    try:
        from ggml_cy.gguf import load
        f = load(env["paths"]["f16"])
        n_params = sum(int(np.prod(t.shape)) for t in f.tensors.values())
        f.close()
    except Exception:
        pass
    roof_gbps, roof_detail = _cpu_roofline(opts)
    gpu_gbps = None
    if torch_gpu:
        gpu_gbps = _gpu_copy_gbps(torch, n=(1 << 20) if opts.smoke else (1 << 27))
    notes = [f"model   : llama, {n_params / 1e6 if n_params else 0:.1f}M parameters "
             f"(n_embd {config['n_embd']}, {config['n_layer']} layers, {config['n_head']}/"
             f"{config['n_head_kv']} heads, n_ff {config['n_ff']}, vocab {config['n_vocab']}"
             f"), random weights, files in {folder} ({write_s:.1f} s to write now)",
             f"method  : median per call over >= {opts.repeat} samples; prompt = one eval of "
             f"{n_prompt} tokens (time per token); decode = one token at positions "
             f"{n_prompt}..{n_prompt + span - 1} (time per token); {opts.threads} CPU threads "
             "for ggml_cy and llama.cpp",
             "roofline: CPU " + (f"{roof_gbps:.1f} GB/s float32 copy (bytes read + written)"
                                 if roof_gbps else f"unavailable ({roof_detail})")
             + ("; GPU " + (f"{gpu_gbps:.0f} GB/s d2d copy" if gpu_gbps else
                            "not measured"))]
    notes += [x for x in (load_note,) if x]
    print("\n".join(_env.format_header(meta, notes)), file=out, flush=True)
    if json_path is None:
        json_path = _report.default_json_path("model", opts)
    try:
        results = _harness.run_cases(build_cases(env, opts), opts)
    finally:
        if "close" in env:
            env["close"]()
        if tmpdir is not None:
            tmpdir.cleanup()
    ratios = [_harness.speedup("ggml_cy", "llama.cpp", key="vs_llama.cpp", header="xllama"),
              _harness.speedup("ggml_cy-cuda", "torch-eager", key="cuda_vs_torch",
                               header="xtorch"),
              _harness.bandwidth_fraction("ggml_cy", roof_gbps, "vs_roofline", "roof"),
              _harness.bandwidth_fraction("ggml_cy-cuda", gpu_gbps, "cuda_vs_copy",
                                          "gpuroof")]
    _harness.evaluate_ratios(results, ratios)
    for r in results:       # the prompt rows have no bandwidth (compute-bound)
        if r.case.group == "prompt":
            r.ratios.pop("vs_roofline", None)
            r.ratios.pop("cuda_vs_copy", None)
    meta["machine"]["load_average_end"] = _env.load_average()
    meta["runtime_s"] = round(time.perf_counter() - t0, 1)
    meta["roofline"] = {"cpu_copy_gbps": roof_gbps, "gpu_copy_gbps": gpu_gbps}
    meta["model"] = dict(config, n_params=n_params, prompt=n_prompt, span=span,
                         weight_bytes=env["wbytes"])
    pre = ["ratios  : xllama = llama.cpp time / ggml_cy time (CPU, same threads); xtorch = "
           "torch-eager time / ggml_cy-cuda time; roof / gpuroof = weight GB/s over the "
           "copy roofline; tokens/s = 1 / time",
           f"load    : {meta['machine']['load_average_start']} at start, "
           f"{meta['machine']['load_average_end']} at end (shared machine: noise)"]
    doc = _report.finish(results, LIBS, ratios, meta, json_path, out, preamble=pre)
    print(f"total {meta['runtime_s']} s", file=out, flush=True)
    return doc
