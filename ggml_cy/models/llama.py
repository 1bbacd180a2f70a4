"""A llama-architecture model from a GGUF file, run on ggml_cy's graph (llama.cpp's
LLM_ARCH_LLAMA graph) on the CPU backend or the CUDA backend.

    from ggml_cy.models.llama import LlamaModel
    model = LlamaModel("model.gguf", n_threads=2)
    logits = model.eval([1, 15043, 3186])     # (3, n_vocab) float32; positions 0..2
    logits = model.eval([29991])              # one decode step at position 3
    model.reset()                             # empty the KV cache
    tokens = model.generate([1, 15043], 16)   # greedy: 16 new token ids
    gpu = LlamaModel("model.gguf", backend="cuda")   # weights and KV cache on the GPU

Token ids in, logits out (no tokenizer). On the CPU the weights stay in the file's memory
mapping (zero-copy, every type as stored: mul_mat takes f32, f16, bf16 and quantized
weights). With ``backend="cuda"`` (``device=`` picks the GPU) the weights are copied once
into one device buffer in their own types (quantized stays quantized; BF16 matrices are
widened to f32 only when the CUDA mul_mat has no bf16 kernel), the KV cache lives on the
device, every eval runs the same graph through the CUDA backend (which captures a
repeated graph as a CUDA graph and replays it) and only the logits come back. As in
llama.cpp the token embedding lookup stays on the host (the table stays in the mapping;
the looked-up rows go up as the graph's input). Each ``eval`` builds (or reuses) one
graph over its tokens:

    x = get_rows(token_embd, tokens)
    per layer: h = rms_norm(x, eps) * attn_norm
               q, k, v = mul_mat(wq|wk|wv, h); q, k = rope_ext(normal mode, freq_base)
               k, v -> set_rows into the layer's KV cache (f16 or f32) at the positions
               a = flash_attn_ext(q, k_cache[:n_kv], v_cache[:n_kv], causal f16 mask,
                                  1/sqrt(head_dim))
               x = x + mul_mat(wo, a)
               h = rms_norm(x, eps) * ffn_norm
               x = x + mul_mat(w_down, swiglu_split(mul_mat(w_gate, h), mul_mat(w_up, h)))
    logits = mul_mat(output, rms_norm(x, eps) * output_norm)

which is llama.cpp's graph for this architecture (rope type "normal": adjacent pairs of
each head, as llama.cpp's converter permutes q/k for). Errors: ``LlamaFormatError`` (a
ValueError) for a file that is not a usable llama model (missing or bad keys, missing
tensors, wrong shapes or types), ValueError/TypeError for bad token ids or arguments,
RuntimeError for backend="cuda" without a usable CUDA build or device, and
NotImplementedError (naming the ops) when the CUDA backend lacks a kernel the graph needs.
"""
from __future__ import annotations

import math
import os
import time
from typing import Any, Optional, Sequence, Union

import numpy as np

from ggml_cy.core._core import GGMLType, Tensor
from ggml_cy.cpu import _quant_ops
from ggml_cy.cpu import _mul_mat
from ggml_cy.cpu import threads as _threads
from ggml_cy.graph.context import Context
from ggml_cy.backend import cpu_init, alloc_ctx_tensors, tensor_set, tensor_get
from ggml_cy.graph._graph import tensor_nbytes as _graph_nbytes
from ggml_cy.core._core import op_name as _op_name
from ggml_cy.gguf import api as _gguf_api
from ggml_cy.gguf.reader import GGUFError

__all__ = ["LlamaModel", "LlamaHParams", "LlamaFormatError", "load", "write_random_model",
           "hf_llama_weights"]

ARCH = "llama"
KV_PAD = 256        # the attention's key count is padded to a multiple of this


class LlamaFormatError(ValueError):
    """A GGUF file that is not a usable llama-architecture model."""


class LlamaHParams:
    """The hyperparameters from a file's ``llama.*`` keys (llama.cpp's names in brackets):
    n_vocab (vocab_size; else the tokenizer's token count; else token_embd's rows), n_embd
    (embedding_length), n_layer (block_count), n_ff (feed_forward_length), n_head
    (attention.head_count), n_head_kv (attention.head_count_kv; default n_head), eps
    (attention.layer_norm_rms_epsilon), rope_base (rope.freq_base; default 10000), n_rot
    (rope.dimension_count; default the head size), n_ctx_train (context_length),
    freq_scale (1 / rope.scaling.factor when rope.scaling.type is "linear", else 1)."""

    n_vocab: int
    n_embd: int
    n_layer: int
    n_ff: int
    n_head: int
    n_head_kv: int
    eps: float
    rope_base: float
    n_rot: int
    n_ctx_train: int
    freq_scale: float

    FIELDS = ("n_vocab", "n_embd", "n_layer", "n_ff", "n_head", "n_head_kv", "eps",
              "rope_base", "n_rot", "n_ctx_train", "freq_scale")

    def __init__(self, **kw: Any) -> None:
        for f in self.FIELDS:
            setattr(self, f, kw[f])

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    @property
    def n_embd_kv(self) -> int:
        return self.head_dim * self.n_head_kv

    def __repr__(self) -> str:
        return "LlamaHParams(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self.FIELDS) + ")"

    @classmethod
    def from_metadata(cls, md: Any, source: str = "file") -> "LlamaHParams":
        """Reads and checks the keys of a GGUF metadata mapping; LlamaFormatError names
        the key and what is wrong."""
        arch = md.get("general.architecture")
        if arch is None:
            raise LlamaFormatError(f"{source}: no general.architecture key (not a model file)")
        if arch != ARCH:
            raise LlamaFormatError(f"{source}: general.architecture is {arch!r}; this runner "
                                   f"reads {ARCH!r} models only")

        def get(key, kind, default=None, required=True):
            full = f"{ARCH}.{key}"
            if full not in md:
                if required:
                    raise LlamaFormatError(f"{source}: missing key {full}")
                return default
            v = md[full]
            if kind == "int":
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0:
                    raise LlamaFormatError(f"{source}: {full} must be a positive integer, "
                                           f"got {v!r}")
                return int(v)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.number)) \
                    or not math.isfinite(float(v)) or float(v) <= 0:
                raise LlamaFormatError(f"{source}: {full} must be a positive finite number, "
                                       f"got {v!r}")
            return float(v)

        n_embd = get("embedding_length", "int")
        n_layer = get("block_count", "int")
        n_ff = get("feed_forward_length", "int")
        n_head = get("attention.head_count", "int")
        n_head_kv = get("attention.head_count_kv", "int", n_head, required=False)
        eps = get("attention.layer_norm_rms_epsilon", "float")
        n_ctx_train = get("context_length", "int")
        rope_base = get("rope.freq_base", "float", 10000.0, required=False)
        if n_embd % n_head:
            raise LlamaFormatError(f"{source}: embedding_length {n_embd} is not a multiple of "
                                   f"attention.head_count {n_head}")
        if n_head % n_head_kv:
            raise LlamaFormatError(f"{source}: attention.head_count {n_head} is not a multiple "
                                   f"of attention.head_count_kv {n_head_kv}")
        head_dim = n_embd // n_head
        n_rot = get("rope.dimension_count", "int", head_dim, required=False)
        if n_rot > head_dim or n_rot % 2:
            raise LlamaFormatError(f"{source}: rope.dimension_count {n_rot} must be even and "
                                   f"at most the head size {head_dim}")
        for key in ("attention.key_length", "attention.value_length"):
            kl = get(key, "int", head_dim, required=False)
            if kl != head_dim:
                raise LlamaFormatError(f"{source}: {ARCH}.{key} {kl} differs from the head size "
                                       f"{head_dim} (embedding_length / head_count); not "
                                       "supported")
        freq_scale = 1.0
        stype = md.get(f"{ARCH}.rope.scaling.type", "none")
        if stype == "linear":
            freq_scale = 1.0 / get("rope.scaling.factor", "float")
        elif stype != "none":
            raise LlamaFormatError(f"{source}: {ARCH}.rope.scaling.type {stype!r} is not "
                                   "supported (only 'none' and 'linear')")
        n_vocab = get("vocab_size", "int", None, required=False)
        if n_vocab is None and "tokenizer.ggml.tokens" in md:
            n_vocab = len(md["tokenizer.ggml.tokens"])
        return cls(n_vocab=n_vocab, n_embd=n_embd, n_layer=n_layer, n_ff=n_ff,
                   n_head=n_head, n_head_kv=n_head_kv, eps=eps, rope_base=rope_base,
                   n_rot=n_rot, n_ctx_train=n_ctx_train, freq_scale=freq_scale)


def _tensor_plan(hp):
    """name -> (ne, role); role: "embd" (a get_rows table), "norm" (f32 vector), "mat"."""
    d, dkv, ff = hp.n_embd, hp.n_embd_kv, hp.n_ff
    plan = {"token_embd.weight": ((d, hp.n_vocab), "embd")}
    for i in range(hp.n_layer):
        p = f"blk.{i}."
        plan.update({
            p + "attn_norm.weight": ((d,), "norm"),
            p + "attn_q.weight": ((d, d), "mat"),
            p + "attn_k.weight": ((d, dkv), "mat"),
            p + "attn_v.weight": ((d, dkv), "mat"),
            p + "attn_output.weight": ((d, d), "mat"),
            p + "ffn_norm.weight": ((d,), "norm"),
            p + "ffn_gate.weight": ((d, ff), "mat"),
            p + "ffn_up.weight": ((d, ff), "mat"),
            p + "ffn_down.weight": ((ff, d), "mat"),
        })
    plan["output_norm.weight"] = ((d,), "norm")
    plan["output.weight"] = ((d, hp.n_vocab), "mat")
    return plan


def _raw_bytes(t):
    """A weight's stored bytes as a flat uint8 array (a view of the file's mapping)."""
    return np.asarray(tensor_get(t, 0, _graph_nbytes(t)), dtype=np.uint8).reshape(-1)


def _ne(t):
    """ne with trailing 1s dropped (the GGUF file's dims)."""
    ne = list(t.ne)
    while len(ne) > 1 and ne[-1] == 1:
        ne.pop()
    return tuple(ne)


def _bf16_mul_mat_probe(ctx, weights):
    """A mul_mat node of the first BF16 matrix's shape over f32 activations (two tokens), in
    `ctx` (a context without memory will do), or None where no weight is a BF16 matrix:
    what the upload asks the backend about."""
    for t in weights:
        if GGMLType(t.type) == GGMLType.BF16 and t.ne[1] > 1:      # ne: 4 entries
            k, m = int(t.ne[0]), int(t.ne[1])
            return ctx.mul_mat(ctx.new_tensor_2d(GGMLType.BF16, k, m),
                               ctx.new_tensor_2d(GGMLType.F32, k, 2))
    return None


class LlamaModel:
    """A llama-architecture GGUF model with a KV cache, on the CPU or a CUDA GPU.

    ``LlamaModel(path, n_ctx=None, n_threads=None, cache_type="f16", backend="cpu",
    device=0)``: n_ctx is the KV cache length (default: the file's context_length, capped
    at 4096); cache_type "f16" (llama.cpp's default) or "f32"; n_threads the CPU graph's
    thread count (default: ggml_cy's; with CUDA it serves the host-side embedding lookup);
    backend "cpu" or "cuda" (ggml's backend names, any case); device the CUDA device.

    ``repack`` (CPU backend, default True): keep a row-interleaved copy of every F32, F16,
    BF16 weight matrix, and of Q4_0 / Q8_0 ones where AVX-512 runs the quantized dots, for the
    decode steps (``ggml_cy.cpu._mul_mat.repack_for_matvec``; the idea of llama.cpp's CPU
    repack buffers). The logits have the same bits either way; decode reads one sequential
    stream per matrix, 16 rows per instruction (2-4x the weight bandwidth on one core). It
    costs memory as large as those weights; other quantized types are not copied."""

    def __init__(self, path: Union[str, "os.PathLike[str]"], n_ctx: Optional[int] = None,
                 n_threads: Optional[int] = None, cache_type: str = "f16",
                 backend: str = "cpu", device: int = 0, repack: bool = True) -> None:
        self.path = str(path)
        if not isinstance(repack, (bool, np.bool_)):
            raise TypeError(f"repack must be a bool, got {type(repack).__name__}")
        self._repacks = []
        self.n_threads = None if n_threads is None else _threads.check_num_threads(n_threads)
        if cache_type not in ("f16", "f32"):
            raise ValueError(f"cache_type must be 'f16' or 'f32', got {cache_type!r}")
        if not isinstance(backend, str) or backend.lower() not in ("cpu", "cuda"):
            raise ValueError(f"backend must be 'cpu' or 'cuda', got {backend!r}")
        if isinstance(device, bool) or not isinstance(device, (int, np.integer)) \
                or device < 0:
            raise ValueError(f"device must be a non-negative integer, got {device!r}")
        self.backend = backend.lower()
        self.cache_type = GGMLType.F16 if cache_type == "f16" else GGMLType.F32
        self._closed = True
        self._dev_ctx = self._cache_ctx = self._bf16_ctx = None
        if self.backend == "cuda":           # before opening the file: a clear error first
            from ggml_cy.cuda.runtime import require
            require()                         # RuntimeError: no CUDA build / no device
            from ggml_cy.cuda.backend import cuda_init
            self._backend = cuda_init(int(device))
        else:
            self._backend = cpu_init(self.n_threads)
        try:
            self._gguf, self._wctx = _gguf_api.gguf_init_from_file(self.path, ctx=True,
                                                                   mmap=True)
        except GGUFError as e:
            raise LlamaFormatError(f"{self.path}: not a readable GGUF file: {e}") from e
        try:
            md = self._gguf.file.metadata
            self.hparams = hp = LlamaHParams.from_metadata(md, self.path)
            self.metadata = md
            self._load_weights(hp)
            if n_ctx is None:
                n_ctx = min(hp.n_ctx_train, 4096)
            if isinstance(n_ctx, bool) or not isinstance(n_ctx, (int, np.integer)) \
                    or n_ctx <= 0:
                raise ValueError(f"n_ctx must be a positive integer, got {n_ctx!r}")
            self.n_ctx = int(n_ctx)
            self._graphs = {}    # (n, n_kv, all_logits) -> a built graph, reused while it fits
            if self.backend == "cuda":
                self._upload_weights()
            elif repack:
                self._repack_weights()
            self._make_cache()
            self.n_past = 0
            self.last_eval_s = 0.0
            self._closed = False
            if self.backend == "cuda":
                self._check_backend_ops()
        except BaseException:
            self._closed = True
            self._gguf.close()              # no mapping left open behind the error
            self._dev_ctx = self._cache_ctx = self._bf16_ctx = None
            raise

    # ------------------------------------------------------------------ loading
    def _load_weights(self, hp):
        tensors = {t.name: t for t in self._wctx.tensors()}
        if hp.n_vocab is None:
            emb = tensors.get("token_embd.weight")
            if emb is None:
                raise LlamaFormatError(f"{self.path}: missing tensor token_embd.weight")
            hp.n_vocab = emb.ne[1]
        plan = _tensor_plan(hp)
        if "output.weight" not in tensors:      # tied embeddings, as llama.cpp allows
            plan.pop("output.weight")
            self._tied = True
        else:
            self._tied = False
        for name, (ne, role) in plan.items():
            t = tensors.get(name)
            if t is None:
                raise LlamaFormatError(f"{self.path}: missing tensor {name}")
            if _ne(t) != tuple(ne):
                raise LlamaFormatError(f"{self.path}: tensor {name} has ne {list(_ne(t))}, "
                                       f"the hyperparameters need {list(ne)}")
            typ = GGMLType(t.type)
            if role == "norm":
                if typ != GGMLType.F32:
                    raise LlamaFormatError(f"{self.path}: norm weight {name} must be F32, "
                                           f"got {typ.name}")
            elif not (typ in (GGMLType.F32, GGMLType.F16, GGMLType.BF16) or (
                    typ.is_quantized and _quant_ops.mul_mat_supported(int(typ))
                    and _quant_ops.get_rows_supported(int(typ)))):
                raise LlamaFormatError(f"{self.path}: tensor {name} has type {typ.name}, "
                                       "which ggml_cy cannot multiply with")
        self.weight_types = sorted({GGMLType(tensors[n].type).name for n in plan})
        self.w = {n: tensors[n] for n in plan}
        ff = tensors.get("rope_freqs.weight")      # Llama 3's per-pair frequency factors
        if ff is not None:
            if _ne(ff) != (hp.n_rot // 2,) or ff.type != GGMLType.F32:
                raise LlamaFormatError(f"{self.path}: rope_freqs.weight must be F32 with ne "
                                       f"[{hp.n_rot // 2}], got {GGMLType(ff.type).name} "
                                       f"{list(_ne(ff))}")
            self.w["rope_freqs.weight"] = ff
        if self._tied:
            self.w["output.weight"] = self.w["token_embd.weight"]
        # the weights a graph reads (CUDA: replaced by device copies in _upload_weights);
        # the embedding table stays in the mapping for the host-side lookup
        self.gw = dict(self.w)

    def _repack_weights(self):
        """CPU: row-interleaved copies of the float matrices the graph multiplies with
        (the tensors keep pointing into the mapping; the copies hang off them)."""
        done = set()
        for name, (ne, role) in _tensor_plan(self.hparams).items():
            t = self.gw.get(name)
            if role != "mat" or t is None or id(t) in done:
                continue
            typ = GGMLType(t.type)
            if not _mul_mat.repack_helps(int(typ)):
                continue
            if typ in (GGMLType.Q4_0, GGMLType.Q8_0) and t.ne[0] % 256:
                continue                     # the copy needs whole groups of 8 blocks
            self._repacks.append(_mul_mat.repack_for_matvec(t, n_threads=self.n_threads))
            done.add(id(t))

    def _upload_weights(self):
        """CUDA: one device buffer holding every weight the graph reads, in its own type
        (BF16 matrices widened to f32 where the backend's mul_mat takes no bf16 weights)."""
        bf16_ok = self._backend_takes_bf16_mul_mat()
        names = [n for n in self.w if n != "token_embd.weight" or self._tied]
        if self._tied:
            names.remove("output.weight")      # the same tensor as token_embd.weight
        size = len(names) * 512 + 4096
        ctx = Context(size, no_alloc=True)
        dev, widen = {}, set()
        for n in names:
            t = self.w[n]
            typ = GGMLType(t.type)
            if typ == GGMLType.BF16 and not bf16_ok:
                typ = GGMLType.F32
                widen.add(n)
            dev[n] = ctx.new_tensor(typ, list(t.ne), name=n[:63])
        alloc_ctx_tensors(ctx, self._backend)
        for n in names:
            src = _raw_bytes(self.w[n])              # the stored bytes, any type
            if n in widen:
                src = (src.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
            tensor_set(dev[n], memoryview(src.reshape(-1).view(np.uint8)))
        self._dev_ctx = ctx
        self.gw = {n: dev[n] for n in names}
        self.gw["output.weight"] = dev["token_embd.weight" if self._tied else "output.weight"]
        self.device_weight_bytes = sum(dev[n].nbytes for n in names)
        self.bf16_widened = sorted(widen)

    def _backend_takes_bf16_mul_mat(self):
        """Whether the backend runs mul_mat(bf16 weight, f32 activations) as the graph builds
        it: ggml's question, backend.supports_op on a node (_bf16_mul_mat_probe), rather than
        one library's type table."""
        ctx = Context(16 * 1024, no_alloc=True)
        node = _bf16_mul_mat_probe(ctx, self.w.values())
        return node is None or bool(self._backend.supports_op(node))

    def _make_cache(self):
        hp = self.hparams
        es = GGMLType(self.cache_type).type_size
        size = 2 * hp.n_layer * (hp.n_embd_kv * self.n_ctx * es + 512) + 4096
        cuda = self.backend == "cuda"
        self._cache_ctx = Context(4096 * hp.n_layer + 4096, no_alloc=True) if cuda \
            else Context(size)
        self._k = [self._cache_ctx.new_tensor_2d(self.cache_type, hp.n_embd_kv, self.n_ctx)
                   for _ in range(hp.n_layer)]
        self._v = [self._cache_ctx.new_tensor_2d(self.cache_type, hp.n_embd_kv, self.n_ctx)
                   for _ in range(hp.n_layer)]
        if cuda:
            alloc_ctx_tensors(self._cache_ctx, self._backend).clear(0)
        else:
            for t in self._k + self._v:
                t.numpy()[...] = 0

    def _check_backend_ops(self):
        """CUDA: every node of a prompt graph and a decode graph must have a kernel;
        NotImplementedError names the missing ones (op and types)."""
        missing = {}
        for n in (2, 1):
            _, graph, _, _ = self._built(n, min(KV_PAD, self.n_ctx), n == 1)
            for t in graph.nodes:
                if not self._backend.supports_op(t):
                    srcs = "/".join(GGMLType(s.type).name for s in t.src if s is not None)
                    missing[f"{_op_name(t.op)}({srcs} -> {GGMLType(t.type).name})"] = 1
        if missing:
            raise NotImplementedError("the CUDA backend has no kernel for: "
                                      + ", ".join(missing)
                                      + f" (needed by the llama graph of {self.path})")

    # ------------------------------------------------------------------ API
    def reset(self) -> None:
        """Empties the KV cache (the next eval starts at position 0)."""
        self.n_past = 0

    @property
    def n_vocab(self) -> int:
        return self.hparams.n_vocab

    def _check_tokens(self, tokens):
        if self._closed:
            raise RuntimeError("the model is closed")
        if isinstance(tokens, (str, bytes)):
            raise TypeError("tokens must be a sequence of integer token ids, not a string "
                            "(there is no tokenizer)")
        arr = np.asarray(tokens)
        if arr.ndim == 0:
            arr = arr.reshape(1)
        if arr.ndim != 1:
            raise ValueError(f"tokens must be 1-D, got shape {arr.shape}")
        if arr.size == 0:
            raise ValueError("tokens is empty")
        if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"tokens must be integer ids, got dtype {arr.dtype}")
        if arr.min() < 0 or arr.max() >= self.n_vocab:
            raise ValueError(f"token ids must be in [0, {self.n_vocab}), got "
                             f"{arr.min()}..{arr.max()}")
        if self.n_past + arr.size > self.n_ctx:
            raise ValueError(f"{arr.size} tokens after {self.n_past} do not fit the KV cache "
                             f"of {self.n_ctx} (reset() or a larger n_ctx)")
        return arr.astype(np.int32)

    def eval(self, tokens: Sequence[int], all_logits: bool = True) -> np.ndarray:
        """Runs tokens at positions n_past.. (a prompt or one decode step), appends them to
        the KV cache, returns their logits as float32 (n_tokens, n_vocab), or with
        all_logits=False only the last token's (1, n_vocab), which skips the output
        projection of the others (as llama.cpp does for the positions it is not asked for)."""
        ids = self._check_tokens(tokens)
        t0 = time.perf_counter()
        n, end = ids.size, self.n_past + ids.size
        # the attention reads n_kv cache positions, n_past + n rounded up to a multiple of
        # KV_PAD (llama.cpp's padding): the positions past n_past + n are masked (and
        # skipped), and one graph serves every decode step of the same padded length
        n_kv = min(-(-end // KV_PAD) * KV_PAD, self.n_ctx)
        ctx, graph, inputs, out = self._built(n, n_kv, bool(all_logits))
        pos = np.arange(self.n_past, end)
        mask = np.where(np.arange(n_kv)[None, :] > pos[:, None], -np.inf, 0.0)
        if self.backend == "cuda":
            tensor_set(inputs["x"], self._embed(ids))
            tensor_set(inputs["pos"], pos.astype(np.int32))
            tensor_set(inputs["rows"], pos.astype(np.int64))
            tensor_set(inputs["mask"], mask.astype(np.float16))
            self._backend.graph_compute(graph)
            logits = tensor_get(out).reshape(-1, out.ne[0]).astype(np.float32, copy=False)
        else:
            inputs["tokens"].numpy()[...] = ids
            inputs["pos"].numpy()[...] = pos
            inputs["rows"].numpy()[...] = pos
            inputs["mask"].numpy()[...] = mask.astype(np.float16)
            graph.compute(plan=inputs["plan"])
            logits = np.array(out.numpy(ndim=2), dtype=np.float32, copy=True)
        self.n_past = end
        self.last_eval_s = time.perf_counter() - t0
        return logits

    def _built(self, n, n_kv, all_logits):
        """The graph for n tokens reading n_kv cache positions: built once, kept while
        it serves (every prompt graph until the next eval; a few decode graphs)."""
        key = (n, n_kv, all_logits)
        built = self._graphs.get(key)
        if built is None:
            built = self._build(n, n_kv, all_logits)
            if n == 1:                      # keep the decode graphs (a few, newest)
                while len(self._graphs) >= 4:
                    self._graphs.pop(next(iter(self._graphs)))
                self._graphs[key] = built
        return built

    def _embed(self, ids):
        """CUDA: the embedding rows of ids looked up on the host (float32 [n, n_embd])."""
        t = self.w["token_embd.weight"]
        typ = GGMLType(t.type)
        rows = _raw_bytes(t).reshape(self.hparams.n_vocab, -1)[ids]   # stored rows
        if typ == GGMLType.F32:
            return np.ascontiguousarray(rows).view(np.float32)
        if typ == GGMLType.F16:
            return np.ascontiguousarray(rows).view(np.float16).astype(np.float32)
        if typ == GGMLType.BF16:
            bits = np.ascontiguousarray(rows).view(np.uint16).astype(np.uint32)
            return (bits << 16).view(np.float32)
        from ggml_cy.quants import dequantize
        return dequantize(np.ascontiguousarray(rows), typ.name.lower(),
                          (ids.size, self.hparams.n_embd), n_threads=self.n_threads)

    def generate(self, tokens: Sequence[int], n: int, greedy: bool = True,
                 temperature: float = 1.0, seed: Optional[int] = None) -> list[int]:
        """Feeds tokens (after what the cache holds), then picks n new tokens one decode
        step at a time: the argmax (greedy) or a sample from softmax(logits / temperature).
        Returns the n new token ids."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"n must be a non-negative integer, got {n!r}")
        if not greedy and not (isinstance(temperature, (int, float)) and temperature > 0):
            raise ValueError(f"temperature must be > 0, got {temperature!r}")
        rng = np.random.default_rng(seed)
        self._check_tokens(tokens)
        if self.n_past + len(np.atleast_1d(tokens)) + max(int(n) - 1, 0) > self.n_ctx:
            raise ValueError(f"{n} new tokens do not fit the KV cache of {self.n_ctx}")
        out = []
        logits = self.eval(tokens, all_logits=False)[-1]
        for i in range(int(n)):
            if greedy:
                tok = int(np.argmax(logits))
            else:
                z = logits.astype(np.float64) / temperature
                p = np.exp(z - z.max())
                tok = int(rng.choice(p.size, p=p / p.sum()))
            out.append(tok)
            if i + 1 < n:
                logits = self.eval([tok], all_logits=False)[-1]
        return out

    def close(self) -> None:
        """Releases the file and its mapping, the KV cache and the graphs; eval and
        generate raise RuntimeError afterwards."""
        if not self._closed:
            self._gguf.close()
        self._closed = True
        for c in self._repacks:
            c.detach()
        self._repacks = []
        self.w, self.gw, self._graphs, self._k, self._v = {}, {}, {}, [], []
        self._wctx = self._cache_ctx = self._bf16_ctx = self._dev_ctx = None

    def __enter__(self) -> "LlamaModel":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ the graph
    def _build(self, n, n_kv, all_logits=True):
        hp, w = self.hparams, self.gw
        cuda = self.backend == "cuda"
        hd, nh, nkv = hp.head_dim, hp.n_head, hp.n_head_kv
        n_tensors = hp.n_layer * 48 + 64
        mem = n_tensors * 400 + Context.graph_overhead(max(2048, n_tensors)) + 65536
        ctx = Context(mem, no_alloc=True)
        if cuda:    # the embedding rows come from the host (_embed)
            x = x_in = ctx.new_tensor_2d(GGMLType.F32, hp.n_embd, n)
        else:
            tokens = ctx.new_tensor_1d(GGMLType.I32, n)
        pos = ctx.new_tensor_1d(GGMLType.I32, n)
        rows = ctx.new_tensor_1d(GGMLType.I64, n)
        mask = ctx.new_tensor_2d(GGMLType.F16, n_kv, n)
        es = GGMLType(self.cache_type).type_size
        scale = 1.0 / math.sqrt(hd)

        def norm(x, weight):
            return ctx.mul(ctx.rms_norm(x, hp.eps), weight)

        def rope(x):
            return ctx.rope_ext(x, pos, w.get("rope_freqs.weight"), hp.n_rot, 0,
                                hp.n_ctx_train, hp.rope_base, hp.freq_scale, 0.0, 1.0, 0.0,
                                0.0)

        graph = ctx.new_graph(max(2048, n_tensors))
        if not cuda:
            x = ctx.get_rows(w["token_embd.weight"], tokens)      # [n_embd, n]
        for il in range(hp.n_layer):
            p = f"blk.{il}."
            h = norm(x, w[p + "attn_norm.weight"])
            qm = ctx.mul_mat(w[p + "attn_q.weight"], h)
            km = ctx.mul_mat(w[p + "attn_k.weight"], h)
            v = ctx.mul_mat(w[p + "attn_v.weight"], h)              # [n_embd_kv, n]
            # the three products of h side by side in the node order (the executor
            # shares h's conversion between them)
            for t in (qm, km, v):
                graph.build_forward_expand(t)
            q = rope(ctx.reshape_3d(qm, hd, nh, n))
            k = rope(ctx.reshape_3d(km, hd, nkv, n))
            kc = ctx.set_rows(self._k[il], ctx.reshape_2d(k, hp.n_embd_kv, n), rows)
            vc = ctx.set_rows(self._v[il], v, rows)
            # [hd, n_kv, n_head_kv] views of the written caches (head h at h * hd)
            cache_nb = (hp.n_embd_kv * es, hd * es, hp.n_embd_kv * self.n_ctx * es)
            kv = ctx.view_4d(kc, hd, n_kv, nkv, 1, *cache_nb, 0)
            vv = ctx.view_4d(vc, hd, n_kv, nkv, 1, *cache_nb, 0)
            qp = ctx.permute(q, 0, 2, 1, 3)                           # [hd, n, n_head]
            a = ctx.flash_attn_ext(qp, kv, vv, mask, scale)          # [hd, n_head, n]
            a = ctx.reshape_2d(a, hp.n_embd, n)
            x = ctx.add(x, ctx.mul_mat(w[p + "attn_output.weight"], a))
            h = norm(x, w[p + "ffn_norm.weight"])
            g = ctx.mul_mat(w[p + "ffn_gate.weight"], h)
            u = ctx.mul_mat(w[p + "ffn_up.weight"], h)
            graph.build_forward_expand(g)
            graph.build_forward_expand(u)
            x = ctx.add(x, ctx.mul_mat(w[p + "ffn_down.weight"], ctx.swiglu_split(g, u)))
        if not all_logits and n > 1:                                  # the last token only
            x = ctx.view_2d(x, hp.n_embd, 1, x.nb[1], (n - 1) * x.nb[1])
        x = norm(x, w["output_norm.weight"])
        out = ctx.mul_mat(w["output.weight"], x)                      # [n_vocab, n or 1]
        graph.build_forward_expand(out)
        alloc_ctx_tensors(ctx, self._backend)
        inputs = {"pos": pos, "rows": rows, "mask": mask}
        if cuda:
            inputs["x"] = x_in
        else:
            inputs["tokens"] = tokens
            inputs["plan"] = graph.plan(self.n_threads)     # made once per graph
        return ctx, graph, inputs, out


def load(path: Union[str, "os.PathLike[str]"], **kw: Any) -> LlamaModel:
    """``LlamaModel(path, **kw)``."""
    return LlamaModel(path, **kw)


# ---------------------------------------------------------------------- random models
RANDOM_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_k", "q6_k")


def write_random_model(path: Union[str, "os.PathLike[str]"], wtype: str = "q8_0",
                       seed: int = 0, n_vocab: int = 1000, n_embd: int = 256,
                       n_layer: int = 4, n_head: int = 8, n_head_kv: int = 2,
                       n_ff: int = 768, n_ctx: int = 512, vocab: bool = False) -> int:
    """Writes a llama-architecture GGUF model with random weights (llama.cpp's keys and
    tensor names; 2-D weights in wtype, one of RANDOM_TYPES, norm weights f32; weights
    scaled by 1/sqrt(fan-in)); returns its parameter count. For examples and benchmarks:
    ggml_cy needs no tokenizer; vocab=True adds a minimal SentencePiece-style ("llama")
    token list, which llama.cpp requires to open the file. K-quant types need n_embd and
    n_ff multiples of 256."""
    from ggml_cy import gguf as _gguf
    from ggml_cy.quants import quantize
    from ggml_cy.core._core import float32_to_bfloat16
    if wtype not in RANDOM_TYPES:
        raise ValueError(f"wtype must be one of {RANDOM_TYPES}, got {wtype!r}")
    d = n_embd
    if d % n_head or n_head % n_head_kv:
        raise ValueError("n_embd must be a multiple of n_head, n_head of n_head_kv")
    hd = d // n_head
    dkv = hd * n_head_kv
    rng = np.random.default_rng(seed)

    def mat(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) / np.sqrt(cols)).astype(np.float32)

    def vec() -> np.ndarray:
        return (1.0 + 0.1 * rng.standard_normal(d)).astype(np.float32)

    def encode(x: np.ndarray) -> Any:
        if x.ndim == 1 or wtype == "f32":
            return x
        if wtype == "f16":
            return x.astype(np.float16)
        raw = float32_to_bfloat16(x) if wtype == "bf16" else np.asarray(quantize(x, wtype))
        return _gguf.RawTensor(wtype, x.shape, np.ascontiguousarray(raw).tobytes())

    V = _gguf.Value
    meta = {
        "general.architecture": ARCH,
        "general.name": "ggml_cy random llama",
        f"{ARCH}.context_length": V(n_ctx, "uint32"),
        f"{ARCH}.embedding_length": V(d, "uint32"),
        f"{ARCH}.block_count": V(n_layer, "uint32"),
        f"{ARCH}.feed_forward_length": V(n_ff, "uint32"),
        f"{ARCH}.rope.dimension_count": V(hd, "uint32"),
        f"{ARCH}.attention.head_count": V(n_head, "uint32"),
        f"{ARCH}.attention.head_count_kv": V(n_head_kv, "uint32"),
        f"{ARCH}.attention.layer_norm_rms_epsilon": V(1e-5, "float32"),
        f"{ARCH}.rope.freq_base": V(10000.0, "float32"),
        f"{ARCH}.vocab_size": V(n_vocab, "uint32"),
    }
    if vocab:
        toks = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)]
        toks = (toks + [f"t{i}" for i in range(max(0, n_vocab - len(toks)))])[:n_vocab]
        ttypes = ([2, 3, 3] + [6] * 256 + [1] * max(0, n_vocab - 259))[:n_vocab]
        meta.update({
            "tokenizer.ggml.model": "llama",
            "tokenizer.ggml.tokens": toks,
            "tokenizer.ggml.scores": np.zeros(n_vocab, np.float32),
            "tokenizer.ggml.token_type": np.asarray(ttypes, np.int32),
            "tokenizer.ggml.bos_token_id": V(1, "uint32"),
            "tokenizer.ggml.eos_token_id": V(2, "uint32"),
        })
    w = {"token_embd.weight": rng.standard_normal((n_vocab, d)).astype(np.float32)}
    for i in range(n_layer):
        p = f"blk.{i}."
        w.update({p + "attn_norm.weight": vec(), p + "attn_q.weight": mat(d, d),
                  p + "attn_k.weight": mat(dkv, d), p + "attn_v.weight": mat(dkv, d),
                  p + "attn_output.weight": mat(d, d), p + "ffn_norm.weight": vec(),
                  p + "ffn_gate.weight": mat(n_ff, d), p + "ffn_up.weight": mat(n_ff, d),
                  p + "ffn_down.weight": mat(d, n_ff)})
    w["output_norm.weight"] = vec()
    w["output.weight"] = mat(n_vocab, d)
    _gguf.save(os.fspath(path), meta, {k: encode(v) for k, v in w.items()})
    return sum(v.size for v in w.values())


# ---------------------------------------------------------------------- transformers layout
def _unpermute_rows(w: np.ndarray, n_head: int) -> np.ndarray:
    """Undoes llama.cpp's converter permutation of q/k rows: GGUF rotates adjacent pairs
    (2i, 2i+1) of each head (rope "normal" mode), Hugging Face's rotate_half rotates
    (i, i + head_dim/2); row h*hd + 2i + j of the file is row h*hd + j*hd/2 + i of HF's."""
    rows, cols = w.shape
    hd = rows // n_head
    return w.reshape(n_head, hd // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)


def hf_llama_weights(path: Union[str, "os.PathLike[str]"], dtype: Any = np.float32
                     ) -> tuple[dict, dict]:
    """A llama GGUF file in Hugging Face transformers' layout: (config, state) with
    config the ``LlamaConfig`` keyword arguments and state {HF parameter name: numpy
    array of dtype} (weights dequantized, q/k rows un-permuted; ``lm_head.weight`` is
    the embedding when the file ties them). Needs neither torch nor transformers:
    ``LlamaForCausalLM(LlamaConfig(**config))`` and ``load_state_dict`` of the arrays as
    tensors give the same model (the tests and ``python -m bench model`` do that)."""
    from ggml_cy.quants import dequantize
    g, wctx = _gguf_api.gguf_init_from_file(str(path), ctx=True, mmap=True)
    try:
        hp = LlamaHParams.from_metadata(g.file.metadata, str(path))
        tensors = {t.name: t for t in wctx.tensors()}
        if hp.n_vocab is None:
            hp.n_vocab = tensors["token_embd.weight"].ne[1]

        def get(name):
            t = tensors.get(name)
            if t is None:
                raise LlamaFormatError(f"{path}: missing tensor {name}")
            typ = GGMLType(t.type)
            shape = tuple(reversed(_ne(t)))
            raw = _raw_bytes(t)
            if typ == GGMLType.F32:
                a = raw.view(np.float32)
            elif typ == GGMLType.F16:
                a = raw.view(np.float16).astype(np.float32)
            elif typ == GGMLType.BF16:
                a = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
            else:
                a = dequantize(raw, typ.name.lower(), shape)
            return np.ascontiguousarray(a.reshape(shape), dtype=np.float32)

        st = {"model.embed_tokens.weight": get("token_embd.weight"),
              "model.norm.weight": get("output_norm.weight")}
        st["lm_head.weight"] = get("output.weight") if "output.weight" in tensors \
            else st["model.embed_tokens.weight"]
        for i in range(hp.n_layer):
            p, q = f"blk.{i}.", f"model.layers.{i}."
            st[q + "input_layernorm.weight"] = get(p + "attn_norm.weight")
            st[q + "self_attn.q_proj.weight"] = _unpermute_rows(get(p + "attn_q.weight"),
                                                                hp.n_head)
            st[q + "self_attn.k_proj.weight"] = _unpermute_rows(get(p + "attn_k.weight"),
                                                                hp.n_head_kv)
            st[q + "self_attn.v_proj.weight"] = get(p + "attn_v.weight")
            st[q + "self_attn.o_proj.weight"] = get(p + "attn_output.weight")
            st[q + "post_attention_layernorm.weight"] = get(p + "ffn_norm.weight")
            st[q + "mlp.gate_proj.weight"] = get(p + "ffn_gate.weight")
            st[q + "mlp.up_proj.weight"] = get(p + "ffn_up.weight")
            st[q + "mlp.down_proj.weight"] = get(p + "ffn_down.weight")
        if hp.n_rot != hp.head_dim or hp.freq_scale != 1.0 or "rope_freqs.weight" in tensors:
            raise LlamaFormatError(f"{path}: partial rotary dims, rope scaling and rope "
                                   "frequency factors have no plain LlamaConfig equivalent")
        config = dict(vocab_size=hp.n_vocab, hidden_size=hp.n_embd,
                      intermediate_size=hp.n_ff, num_hidden_layers=hp.n_layer,
                      num_attention_heads=hp.n_head, num_key_value_heads=hp.n_head_kv,
                      rms_norm_eps=hp.eps, rope_theta=hp.rope_base,
                      max_position_embeddings=hp.n_ctx_train, hidden_act="silu",
                      attention_bias=False, mlp_bias=False,
                      tie_word_embeddings="output.weight" not in tensors)
        return config, {k: v.astype(dtype, copy=False) for k, v in st.items()}
    finally:
        g.close()
