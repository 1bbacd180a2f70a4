"""python -m bench gguf: GGUF reading and writing (issue 11), side by side with gguf-py.

Cases:
* open: a file shaped like a current LLM's (152k-token vocabulary with scores and token
  types, 150k merges, 300 tensors) opened and closed: ggml_cy.gguf.load vs
  gguf.GGUFReader (target: >= 50x faster);
* one value + one view: reading one metadata value (first read, nothing cached) and one
  tensor as numpy from an open file; gguf-py's reader has them decoded at open already;
* whole vocabulary: all 152k tokens as Python strings from an open file;
* write 1 GiB: ggml_cy.gguf.save of 16 float32 tensors of 64 MiB held in memory vs copying
  a 1 GiB file that is in the page cache (shutil.copyfile: the disk-to-page-cache copy
  speed of this machine, measured in the same run; target: >= 0.8 of it), with gguf-py's
  writer as a peer. Files go to a temporary folder (GGML_CY_BENCH_TMP to choose it).

The files are built here; nothing is downloaded.
"""
from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
import time

import numpy as np

from bench import _env, _harness, _libs, _report
from bench._harness import Call, Case, Setup, Target

LIBS = ["ggml_cy", "gguf-py", "copy"]
N_VOCAB, N_MERGES, N_TENSORS = 152_064, 150_000, 300


def _sizes(opts):
    if opts.smoke:
        return dict(vocab=2000, merges=2000, tensors=20, write=1 << 20, chunks=4)
    if opts.quick:
        return dict(vocab=N_VOCAB, merges=N_MERGES, tensors=N_TENSORS, write=256 << 20,
                    chunks=4)
    return dict(vocab=N_VOCAB, merges=N_MERGES, tensors=N_TENSORS, write=1 << 30, chunks=16)


def _vocab(n, seed=0):
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyzĠ_ĊABCDEFGHIJ0123456789éü的"
    toks = [f"<|special_{i}|>" for i in range(min(n, 64))]
    while len(toks) < n:
        toks.append("".join(rng.choice(letters) for _ in range(rng.randint(1, 12))))
    return toks


def build_model_file(path, sz):
    """A llama-shaped GGUF file: tokenizer arrays and N tensors (q4_K / f32 mix)."""
    from ggml_cy.gguf import RawTensor, Value, save
    toks = _vocab(sz["vocab"])
    merges = [f"{toks[i % len(toks)]} {toks[(i * 7 + 1) % len(toks)]}"
              for i in range(sz["merges"])]
    md = {"general.architecture": "llama", "general.name": "bench-model",
          "llama.context_length": Value(32768, "uint32"),
          "llama.embedding_length": Value(4096, "uint32"),
          "llama.block_count": Value(N_TENSORS // 10, "uint32"),
          "llama.attention.head_count": Value(32, "uint32"),
          "llama.rope.freq_base": Value(1e6, "float32"),
          "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "qwen2",
          "tokenizer.ggml.tokens": toks,
          "tokenizer.ggml.scores": np.linspace(-1, 0, len(toks), dtype=np.float32),
          "tokenizer.ggml.token_type": np.ones(len(toks), dtype=np.int32),
          "tokenizer.ggml.merges": merges,
          "tokenizer.ggml.bos_token_id": Value(1, "uint32")}
    tensors = {}
    for i in range(sz["tensors"]):
        if i % 3 == 2:
            tensors[f"blk.{i // 10}.norm_{i}.weight"] = np.ones(1024, np.float32)
        else:
            tensors[f"blk.{i // 10}.w_{i}.weight"] = RawTensor("q4_K", (16, 1024),
                                                               bytes(16 * 4 * 144))
    save(path, md, tensors)
    return toks


def _open_close(load, path):
    f = load(path)
    f.close()
    return len(f.tensors)


def _gguf_py_open(reader_cls, path):
    r = reader_cls(path)
    n = len(r.tensors)
    del r
    return n


def _cy_value_and_view(f, key, name):
    f.metadata._cache.clear()          # first read: decoded from the mapping
    v = f.metadata[key]
    a = f.numpy(name)
    return v, a.shape


def _py_value_and_view(r, key, idx):
    v = r.fields[key].contents()
    a = r.tensors[idx].data
    return v, a.shape


def _cy_tokens(f):
    f.metadata._cache.clear()
    return len(f.metadata["tokenizer.ggml.tokens"])


def _py_tokens(r):
    return len(r.fields["tokenizer.ggml.tokens"].contents())


def _cy_write(save, path, tensors):
    save(path, {"general.architecture": "bench"}, tensors)


def _py_write(gguf, path, tensors):
    w = gguf.GGUFWriter(path, "bench")
    for name, a in tensors.items():
        w.add_tensor(name, a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def build_cases(env, opts, tmp):
    gc, gguf = env["gc"], env["gguf"]
    from ggml_cy.gguf import load, save
    sz = _sizes(opts)
    path = os.path.join(tmp, "model.gguf")
    t0 = time.perf_counter()
    build_model_file(path, sz)
    env["build_s"] = time.perf_counter() - t0
    env["model_bytes"] = os.path.getsize(path)
    skip = {} if gguf is not None else {"gguf-py": "gguf-py is not installed"}
    cases = []

    def open_setup():
        impls = {"ggml_cy": Call(_open_close, load, path).unchecked()}
        if gguf is not None:
            impls["gguf-py"] = Call(_gguf_py_open, gguf.GGUFReader, path).unchecked()
        return Setup(impls, skipped=dict(skip, copy="not a copy case"))
    cases.append(Case(f"open {sz['vocab'] // 1000}k vocab+{sz['merges'] // 1000}k merges+"
                      f"{sz['tensors']} t", open_setup, group="read",
                      params={"vocab": sz["vocab"], "merges": sz["merges"],
                              "tensors": sz["tensors"], "file_bytes": env["model_bytes"]},
                      targets=[Target("xgguf-py>=50", "vs_gguf-py", 50.0)]))

    opened = {}

    def _opened():
        if "cy" not in opened:
            opened["cy"] = load(path)
            if gguf is not None:
                opened["py"] = gguf.GGUFReader(path)
        return opened["cy"], opened.get("py")

    def value_setup():
        f, r = _opened()
        idx = 2                     # the first float32 tensor (a norm weight)
        name = list(f.tensors)[idx]
        impls = {"ggml_cy": Call(_cy_value_and_view, f, "llama.context_length",
                                 name).unchecked()}
        if r is not None:
            assert r.tensors[idx].name == name
            impls["gguf-py"] = Call(_py_value_and_view, r, "llama.context_length",
                                    idx).unchecked()
        return Setup(impls, skipped=dict(skip, copy="not a copy case"))
    cases.append(Case("open file: 1 value + 1 view", value_setup, group="read"))

    def tokens_setup():
        f, r = _opened()
        impls = {"ggml_cy": Call(_cy_tokens, f).unchecked()}
        if r is not None:
            impls["gguf-py"] = Call(_py_tokens, r).unchecked()
        return Setup(impls, skipped=dict(skip, copy="not a copy case"))
    cases.append(Case(f"open file: all {sz['vocab'] // 1000}k tokens as str", tokens_setup,
                      group="read"))

    def write_setup():
        for k in list(opened):      # release the read cases' files and mappings
            if k == "cy":
                opened[k].close()
            del opened[k]
        n = sz["write"] // 4 // sz["chunks"]
        tensors = {f"t{i}": np.full(n, i, dtype=np.float32) for i in range(sz["chunks"])}
        nbytes = sum(a.nbytes for a in tensors.values())
        src = os.path.join(tmp, "copy_src.bin")
        with open(src, "wb") as fh:
            for a in tensors.values():
                fh.write(a)
        with open(src, "rb") as fh:               # make sure it is in the page cache
            while fh.read(1 << 24):
                pass
        impls = {"ggml_cy": Call(_cy_write, save, os.path.join(tmp, "w_cy.gguf"),
                                 tensors).unchecked(),
                 "copy": Call(shutil.copyfile, src, os.path.join(tmp, "w_copy.bin"))
                 .unchecked()}
        if gguf is not None:
            impls["gguf-py"] = Call(_py_write, gguf, os.path.join(tmp, "w_py.gguf"),
                                    tensors).unchecked()
        return Setup(impls, nbytes=nbytes, skipped=skip,
                     notes=["copy = shutil.copyfile of a file in the page cache"])
    cases.append(Case(f"write {sz['write'] >> 20} MiB ({sz['chunks']} f32 tensors)",
                      write_setup, group="write",
                      params={"bytes": sz["write"], "tensors": sz["chunks"]},
                      targets=[Target("/copy>=0.8", "vs_copy", 0.8)]))
    return cases


def run(opts, json_path, argv=None, out=None):
    out = out if out is not None else sys.stdout
    t0 = time.perf_counter()
    gc, load_note = _libs.load_ggml_cy()
    gguf = _libs.load_optional("gguf")
    env = {"gc": gc, "gguf": gguf}
    meta = _env.environment(gc, opts.threads, "gguf", argv)
    try:
        import importlib.metadata
        meta["versions"]["gguf"] = importlib.metadata.version("gguf")
    except Exception:
        meta["versions"]["gguf"] = None
    notes = ["method  : median per call over >= "
             f"{opts.repeat} samples after warm-up; single-threaded (file formats)",
             "peers   : gguf-py (gguf.GGUFReader / GGUFWriter); copy = shutil.copyfile of a "
             "file in the page cache (this machine's disk-to-page-cache copy speed)"]
    notes += [x for x in (load_note,) if x]
    if gguf is None:
        notes.append("gguf-py is not installed (pip install gguf): its columns are empty")
    print("\n".join(_env.format_header(meta, notes)), file=out, flush=True)
    if json_path is None:
        json_path = _report.default_json_path("gguf", opts)
    base = os.environ.get("GGML_CY_BENCH_TMP") or None
    with tempfile.TemporaryDirectory(prefix="ggml_cy_gguf_bench_", dir=base) as tmp:
        results = _harness.run_cases(build_cases(env, opts, tmp), opts)
    ratios = [_harness.speedup("ggml_cy", "gguf-py", header="xgguf-py"),
              _harness.bandwidth_vs_lib("ggml_cy", "copy", "vs_copy", "/copy")]
    _harness.evaluate_ratios(results, ratios)
    meta["machine"]["load_average_end"] = _env.load_average()
    meta["runtime_s"] = round(time.perf_counter() - t0, 1)
    meta["model_file_bytes"] = env.get("model_bytes")
    pre = ["ratios  : xgguf-py = speed-up of ggml_cy over gguf-py; /copy = ggml_cy's write "
           "GB/s over the page-cache copy's",
           f"files   : model file {env.get('model_bytes', 0) / 1e6:.1f} MB, built in "
           f"{env.get('build_s', 0):.2f} s by ggml_cy.gguf.save",
           f"load    : {meta['machine']['load_average_start']} at start, "
           f"{meta['machine']['load_average_end']} at end (shared machine: noise)"]
    doc = _report.finish(results, LIBS, ratios, meta, json_path, out, preamble=pre)
    print(f"total {meta['runtime_s']} s", file=out, flush=True)
    return doc
