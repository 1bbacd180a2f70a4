"""ggml_cy.models.llama against an independent float64 numpy forward pass (tests/_llama_ref.py)
on tiny random llama models written by gguf-py in every weight type.

Tolerances: test-backend-ops' normalized mean squared error, sum((a-ref)^2)/sum(ref^2), of
the logits against the float64 reference computed on the weights the file holds (for
quantized types: the blocks dequantized by gguf-py). The errors left are ggml's own
rounding: mul_mat with f16 weights rounds the activations to f16, quantized weights
quantize them to Q8_0 / Q8_K (ggml's vec-dot partners), the KV cache is f16.
"""
import numpy as np
import pytest

pytest.importorskip("gguf")

import _llama_ref as R  # noqa: E402
from ggml_cy.models import llama  # noqa: E402
from ggml_cy.models.llama import LlamaFormatError, LlamaModel  # noqa: E402

HP = R.HParams()            # 2 layers, n_embd 256, 8 heads / 2 KV heads, n_ff 512, vocab 300

# NMSE bound per weight type, f16 KV cache (measured on this model, 2026-11-25: F32/F16/
# BF16 2e-8..5e-8, the f16 cache's rounding; Q8_0/Q4_0 0.9e-4..1.6e-4, Q4_K/Q6_K
# 1.9e-4..3.6e-4: every mul_mat quantizes its activations to Q8_0 / Q8_K as ggml does,
# 3e-5 / 4.6e-5 NMSE per product, and the model has 16 products in a row).
# BF16 weights follow ggml's rule (the activations rounded to bf16 before each product, as
# llama.cpp computes; the reference does the same, act_bf16): measured 0.8e-5..1.1e-5 with
# the f16 cache (an activation within the other roundings' noise of a bf16 rounding
# boundary rounds the other way, one bf16 ulp, and that spreads; without the reference's
# rounding 0.7e-5..1.4e-5).
TOL = {"F32": 1e-6, "F16": 1e-6, "BF16": 1e-4, "Q8_0": 1e-3, "Q4_0": 1e-3, "Q4_K": 1e-3,
       "Q6_K": 1e-3}
# f32 KV cache with F32 / F16 weights: float32 rounding only (measured 3-5e-13); BF16: the
# rounding flips above only (measured 5e-11..2.3e-6 against act_bf16, 0.7e-5..1.2e-5
# against the unrounded reference)
TOL_F32_EXACT = 1e-10
TOL_F32_BF16 = 1e-5
PROMPT = [1, 17, 250, 3, 99, 42, 7]
DECODE = [5, 123, 299]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("llama")
    out = {}
    for wt in R.WEIGHT_TYPES:
        path = d / f"tiny-{wt}.gguf"
        out[wt] = (path, R.write_model(path, HP, wt, seed=1))
    return out


def _run(model, ref):
    """prompt then one-token decode steps on both; yields (ours, reference) logits."""
    yield model.eval(PROMPT), ref.eval(PROMPT)
    for t in DECODE:
        yield model.eval([t]), ref.eval([t])


@pytest.mark.parametrize("wtype", R.WEIGHT_TYPES)
def test_logits_match_float64_reference(models, wtype):
    path, weights = models[wtype]
    model = LlamaModel(path, n_threads=2)
    ref = R.RefLlama(weights, HP, act_bf16=wtype == "BF16")
    for step, (ours, want) in enumerate(_run(model, ref)):
        assert ours.shape == want.shape and ours.dtype == np.float32
        err = R.nmse(ours, want)
        assert err < TOL[wtype], f"{wtype} step {step}: NMSE {err:.3g} >= {TOL[wtype]}"
        if wtype in ("F32", "F16", "BF16"):
            assert (ours.argmax(1) == want.argmax(1)).all()
    assert model.n_past == len(PROMPT) + len(DECODE)


@pytest.mark.parametrize("wtype", ["F32", "F16", "BF16"])
def test_float_weights_f32_cache_tight(models, wtype):
    path, weights = models[wtype]
    model = LlamaModel(path, n_threads=3, cache_type="f32")
    ref = R.RefLlama(weights, HP, act_bf16=wtype == "BF16")
    for step, (ours, want) in enumerate(_run(model, ref)):
        err = R.nmse(ours, want)
        tol = TOL_F32_BF16 if wtype == "BF16" else TOL_F32_EXACT
        assert err < tol, f"step {step}: NMSE {err:.3g}"


@pytest.mark.parametrize("wtype", ["F32", "Q4_0", "Q6_K"])
def test_prompt_plus_decode_equals_one_pass(models, wtype):
    path, _ = models[wtype]
    model = LlamaModel(path, n_threads=2)
    toks = PROMPT + DECODE
    full = model.eval(toks)
    model.reset()
    parts = [model.eval(toks[:4])] + [model.eval([t]) for t in toks[4:]]
    steps = np.concatenate(parts)
    assert len(model._graphs) == 1          # the decode steps reused one graph
    # quantized weights: the same integer dot products either way (< 1e-12); float weights:
    # a one-column kernel may order its float32 sums differently from the blocked GEMM
    # (1.5e-10 was measured for F32 with one, through the f16 cache)
    tol = 1e-8 if wtype == "F32" else 1e-12
    assert R.nmse(steps, full) < tol, R.nmse(steps, full)
    assert (steps.argmax(1) == full.argmax(1)).all()
    model.reset()
    last = model.eval(toks, all_logits=False)              # only the last row is projected
    assert last.shape == (1, HP.n_vocab) and model.n_past == len(toks)
    assert R.nmse(last, full[-1:]) < tol


def test_thread_counts_agree(models):
    path, _ = models["Q4_K"]
    res = []
    for nt in (1, 2, 3):
        m = LlamaModel(path, n_threads=nt)
        res.append(np.concatenate([m.eval(PROMPT), m.eval([9])]))
    for r in res[1:]:
        assert R.nmse(r, res[0]) < 1e-12


@pytest.mark.parametrize("wtype", ["F32", "F16", "BF16", "Q4_0", "Q8_0"])
def test_repacked_weights_give_the_same_bits(models, wtype):
    """The CPU runner's row-interleaved copies (repack=True, the default) change speed,
    not bits: prompt and decode logits equal those read from the mapping alone."""
    from ggml_cy.cpu import _mul_mat
    path, _ = models[wtype]
    plain = LlamaModel(path, n_threads=2, repack=False)
    fast = LlamaModel(path, n_threads=2)
    copied = _mul_mat.repack_helps(int(getattr(llama.GGMLType, wtype)))
    assert plain._repacks == [] and len(fast._repacks) == (HP.n_layer * 7 + 1) * copied
    assert all(c.attached for c in fast._repacks)
    for t in ([PROMPT], [[4]], [[77]]):
        a, b = plain.eval(t[0]), fast.eval(t[0])
        assert a.tobytes() == b.tobytes()
    fast.close()
    assert fast._repacks == []


def test_generate_greedy_matches_reference(models):
    path, weights = models["F32"]
    model = LlamaModel(path, n_threads=2, cache_type="f32")
    got = model.generate(PROMPT, 6)
    ref = R.RefLlama(weights, HP)
    want, logits = [], ref.eval(PROMPT)[-1]
    for _ in range(6):
        want.append(int(np.argmax(logits)))
        logits = ref.eval([want[-1]])[-1]
    assert got == want
    assert model.n_past == len(PROMPT) + 5
    model.reset()
    s1 = model.generate(PROMPT, 4, greedy=False, temperature=0.8, seed=3)
    model.reset()
    assert model.generate(PROMPT, 4, greedy=False, temperature=0.8, seed=3) == s1
    assert all(0 <= t < HP.n_vocab for t in s1)


def test_hparams_and_tied_output(tmp_path):
    hp = R.HParams(n_embd=64, n_head=4, n_head_kv=4, n_ff=96, n_layer=1, n_vocab=280, n_rot=8)
    path = tmp_path / "tied.gguf"
    w = R.write_model(path, hp, "F32", drop_tensors=("output.weight",))
    model = LlamaModel(path, n_ctx=16, cache_type="f32")
    h = model.hparams
    assert (h.n_vocab, h.n_embd, h.n_layer, h.n_head, h.n_head_kv, h.n_ff, h.n_rot,
            h.n_ctx_train) == (280, 64, 1, 4, 4, 96, 8, hp.n_ctx)
    assert h.eps == pytest.approx(1e-5) and h.rope_base == 10000.0
    w["output.weight"] = w["token_embd.weight"]         # llama.cpp's tied embeddings
    ref = R.RefLlama(w, hp)                             # partial rotation: n_rot 8 < 16
    assert R.nmse(model.eval(PROMPT), ref.eval(PROMPT)) < TOL_F32_EXACT
    assert R.nmse(model.eval([4]), ref.eval([4])) < TOL_F32_EXACT


def test_rope_linear_scaling_and_freq_factors(tmp_path):
    hp = R.HParams(n_embd=64, n_head=4, n_head_kv=2, n_ff=64, n_layer=1, n_vocab=270,
                   n_rot=12, rope_linear=4.0, rope_freqs=True)
    path = tmp_path / "rope.gguf"
    w = R.write_model(path, hp, "F32")
    model = LlamaModel(path, cache_type="f32")
    assert model.hparams.freq_scale == 0.25 and "rope_freqs.weight" in model.w
    ref = R.RefLlama(w, hp)
    assert R.nmse(model.eval(PROMPT), ref.eval(PROMPT)) < TOL_F32_EXACT
    assert R.nmse(model.eval([8]), ref.eval([8])) < TOL_F32_EXACT
    bad = tmp_path / "bad.gguf"
    R.write_model(bad, hp, "F32", reshape={"rope_freqs.weight": (5,)})
    with pytest.raises(LlamaFormatError, match=r"rope_freqs.weight must be F32 with ne \[6\]"):
        LlamaModel(bad)


# ---------------------------------------------------------------------- bad files
SMALL = R.HParams(n_embd=64, n_head=4, n_head_kv=2, n_ff=64, n_layer=1, n_vocab=270)


@pytest.mark.parametrize("key, message", [
    ("embedding_length", "missing key llama.embedding_length"),
    ("block_count", "missing key llama.block_count"),
    ("feed_forward_length", "missing key llama.feed_forward_length"),
    ("head_count", "missing key llama.attention.head_count"),
    ("layer_norm_rms_eps", "missing key llama.attention.layer_norm_rms_epsilon"),
    ("context_length", "missing key llama.context_length"),
])
def test_missing_key(tmp_path, key, message):
    path = tmp_path / "m.gguf"
    R.write_model(path, SMALL, "F32", drop_keys=(key,))
    with pytest.raises(LlamaFormatError, match=message):
        LlamaModel(path)


@pytest.mark.parametrize("bad, message", [
    ({"head_count": 0}, "head_count must be a positive integer"),
    ({"embedding_length": -64}, "embedding_length must be a positive integer"),
    ({"block_count": "two"}, "block_count must be a positive integer"),
    ({"layer_norm_rms_eps": -1.0}, "epsilon must be a positive finite number"),
    ({"rope_freq_base": float("nan")}, "freq_base must be a positive finite number"),
    ({"head_count": 3}, "not a multiple of attention.head_count 3"),
    ({"head_count_kv": 3}, "not a multiple of attention.head_count_kv 3"),
    ({"rope_dimension_count": 7}, "rope.dimension_count 7 must be even"),
    ({"rope_dimension_count": 64}, "at most the head size 16"),
    ({"vocab_size": 100}, "token_embd.weight has ne"),
    ({"feed_forward_length": 128}, "ffn_gate.weight has ne"),
    ({"attention.key_length": 8}, "key_length 8 differs from the head size 16"),
    ({"rope.scaling.type": "yarn"}, "rope.scaling.type 'yarn' is not supported"),
    ({"rope.scaling.type": "linear"}, "missing key llama.rope.scaling.factor"),
])
def test_bad_key(tmp_path, bad, message):
    path = tmp_path / "m.gguf"
    R.write_model(path, SMALL, "F32", bad_keys=bad)
    with pytest.raises(LlamaFormatError, match=message):
        LlamaModel(path)


def test_bad_tensors(tmp_path):
    p1 = tmp_path / "shape.gguf"
    R.write_model(p1, SMALL, "F32", reshape={"blk.0.attn_k.weight": (64, 64)})
    with pytest.raises(LlamaFormatError, match=r"blk.0.attn_k.weight has ne \[64, 64\], the "
                                               r"hyperparameters need \[64, 32\]"):
        LlamaModel(p1)
    p2 = tmp_path / "missing.gguf"
    R.write_model(p2, SMALL, "F32", drop_tensors=("blk.0.ffn_up.weight",))
    with pytest.raises(LlamaFormatError, match="missing tensor blk.0.ffn_up.weight"):
        LlamaModel(p2)
    p3 = tmp_path / "notgguf.gguf"
    p3.write_bytes(b"GGUF" + bytes(range(60)))
    with pytest.raises(LlamaFormatError, match="not a readable GGUF file"):
        LlamaModel(p3)
    p4 = tmp_path / "arch.gguf"
    import gguf
    w = gguf.GGUFWriter(str(p4), "gpt2")
    w.add_embedding_length(64)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(LlamaFormatError, match="general.architecture is 'gpt2'"):
        LlamaModel(p4)
    with pytest.raises(FileNotFoundError):
        LlamaModel(tmp_path / "absent.gguf")


def test_bad_arguments(models):
    path, _ = models["Q8_0"]
    with pytest.raises(ValueError, match="cache_type"):
        LlamaModel(path, cache_type="q8_0")
    with pytest.raises(ValueError, match="n_ctx"):
        LlamaModel(path, n_ctx=0)
    with pytest.raises((ValueError, TypeError)):
        LlamaModel(path, n_threads=0)
    with pytest.raises(ValueError, match="backend must be 'cpu' or 'cuda'"):
        LlamaModel(path, backend="metal")
    with pytest.raises(ValueError, match="backend"):
        LlamaModel(path, backend=None)
    with pytest.raises(ValueError, match="device"):
        LlamaModel(path, backend="cuda", device=-1)
    with pytest.raises(TypeError, match="repack"):
        LlamaModel(path, repack="yes")
    m = LlamaModel(path, n_ctx=8)
    with pytest.raises(ValueError, match=r"token ids must be in \[0, 300\)"):
        m.eval([1, 300])
    with pytest.raises(ValueError, match="token ids"):
        m.eval([-1])
    with pytest.raises(ValueError, match="empty"):
        m.eval([])
    with pytest.raises(ValueError, match="1-D"):
        m.eval([[1, 2]])
    with pytest.raises(TypeError, match="integer"):
        m.eval([1.5])
    with pytest.raises(TypeError, match="string"):
        m.eval("hello")
    with pytest.raises(ValueError, match="do not fit the KV cache of 8"):
        m.eval(list(range(9)))
    assert m.n_past == 0                      # nothing was run
    m.eval(list(range(6)))
    with pytest.raises(ValueError, match="do not fit"):
        m.eval([1, 2, 3])
    with pytest.raises(ValueError, match="do not fit"):
        m.generate([1], 3)
    with pytest.raises(ValueError, match="non-negative"):
        m.generate([1], -1)
    with pytest.raises(ValueError, match="temperature"):
        m.generate([1], 1, greedy=False, temperature=0)
    assert m.n_past == 6
    m.reset()
    assert m.generate([1, 2], 0) == [] and m.n_past == 2
    assert llama.load(path).n_vocab == HP.n_vocab
    with LlamaModel(path) as m2:
        m2.eval([1])
    with pytest.raises(RuntimeError, match="closed"):
        m2.eval([1])


def test_cuda_backend_absent_is_a_clear_error(models):
    import ggml_cy.cuda
    if ggml_cy.cuda.is_available():
        pytest.skip("a CUDA device is present (tests/test_models_llama_gpu.py runs it)")
    path, _ = models["F16"]
    with pytest.raises(RuntimeError, match="ggml_cy.cuda is not available"):
        LlamaModel(path, backend="CUDA")


@pytest.mark.parametrize("wtype", ["F32", "BF16", "Q4_K"])
def test_device_placement_path_on_a_stand_in_backend(models, monkeypatch, wtype):
    """backend="cuda"'s code path (weights copied into a buffer of the backend, host-side
    embedding lookup, inputs through tensor_set, backend.graph_compute, logits through
    tensor_get) run with the CPU backend standing in for CUDA: the same logits as the CPU
    runner. The real device runs tests/test_models_llama_gpu.py."""
    import ggml_cy.cuda.backend as cb
    import ggml_cy.cuda.runtime as rt
    from ggml_cy.backend.cpu import CpuBackend

    class StandIn(CpuBackend):
        def supports_op(self, tensor):
            return True

    monkeypatch.setattr(rt, "require", lambda: None)
    monkeypatch.setattr(cb, "cuda_init", lambda device=0: StandIn(2))
    path, _ = models[wtype]
    dev = LlamaModel(path, backend="cuda")
    cpu = LlamaModel(path, n_threads=2)
    assert dev.backend == "cuda" and dev.gw["blk.0.attn_q.weight"] is not \
        dev.w["blk.0.attn_q.weight"]
    for toks in (PROMPT, [5], [123], [299]):
        a, b = dev.eval(toks), cpu.eval(toks)
        assert a.shape == b.shape and R.nmse(a, b) < 1e-12
    assert dev.generate([3, 4], 4) == cpu.generate([3, 4], 4)
    dev.close()


@pytest.mark.parametrize("takes_bf16", [True, False])
def test_upload_asks_the_backend_about_bf16_mul_mat(models, monkeypatch, takes_bf16):
    """The upload widens BF16 matrices to f32 exactly where the backend it uploads to says
    (supports_op on a mul_mat node) that it takes no bf16 weights. Taken: the CPU runner's
    logits; widened: f32 products do not round the activations to bf16 as ggml's bf16
    mul_mat does, so the two differ by that rounding (within BF16's bound, measured 1.4e-5)."""
    import ggml_cy.cuda.backend as cb
    import ggml_cy.cuda.runtime as rt
    from ggml_cy.backend.cpu import CpuBackend

    asked = []

    class StandIn(CpuBackend):
        def supports_op(self, tensor):
            if tensor.op_name == "MUL_MAT" and tensor.src[0].type.name == "BF16":
                asked.append(tuple(tensor.src[0].ne))
                return takes_bf16
            return True

    monkeypatch.setattr(rt, "require", lambda: None)
    monkeypatch.setattr(cb, "cuda_init", lambda device=0: StandIn(2))
    path, _ = models["BF16"]
    dev = LlamaModel(path, backend="cuda")
    cpu = LlamaModel(path, n_threads=2)
    assert asked, "the backend was not asked"
    bf16 = sorted(n for n, t in dev.w.items() if t.type.name == "BF16")
    assert bf16 and dev.bf16_widened == ([] if takes_bf16 else
                                         [n for n in bf16 if n in dev.gw])
    for n in bf16:
        if n in dev.gw:
            assert dev.gw[n].type.name == ("BF16" if takes_bf16 else "F32")
    a, b = dev.eval(PROMPT), cpu.eval(PROMPT)
    assert R.nmse(a, b) < (1e-12 if takes_bf16 else TOL["BF16"])
    dev.close()


def test_cuda_library_takes_the_bf16_probe(models):
    """What the CUDA backend answers the upload (its supports_op is the library's
    supports_node, host code needing no device): bf16 weights are taken, as its type table
    says, so a GPU keeps BF16 matrices BF16 (tests/test_models_llama_gpu.py checks it on
    one). Runs wherever the CUDA library is built, CI's GPU-less machine included."""
    cuda = pytest.importorskip("ggml_cy.cuda._cuda", reason="the CUDA library is not built")
    from ggml_cy.core._core import GGMLType
    from ggml_cy.graph.context import Context
    ctx = Context(16 * 1024, no_alloc=True)
    m = LlamaModel(models["BF16"][0])
    node = llama._bf16_mul_mat_probe(ctx, m.w.values())
    assert node is not None and node.src[0].type.name == "BF16"
    assert cuda.supports_node(node)
    assert cuda.supports_op(int(node.op), int(GGMLType.F32), int(GGMLType.BF16),
                            int(GGMLType.F32))
    assert llama._bf16_mul_mat_probe(ctx, LlamaModel(models["F16"][0]).w.values()) is None


def test_bf16_weights_stay_bf16_on_the_cpu(models):
    path, _ = models["BF16"]
    m = LlamaModel(path)
    assert m.weight_types == ["BF16", "F32"]
    assert m.gw["blk.0.attn_q.weight"].type.name == "BF16"     # no f32 copy at load


def test_hf_layout_weights(models):
    """hf_llama_weights un-permutes q/k: HF's rotate_half rope on its rows equals ggml's
    adjacent-pair rope on the file's rows (checked on one head's projection)."""
    path, weights = models["F32"]
    cfg, st = llama.hf_llama_weights(path)
    assert cfg["num_key_value_heads"] == HP.n_head_kv and cfg["vocab_size"] == HP.n_vocab
    assert len(st) == 3 + 9 * HP.n_layer
    np.testing.assert_array_equal(st["model.layers.1.mlp.down_proj.weight"],
                                  weights["blk.1.ffn_down.weight"])
    x = np.random.default_rng(0).standard_normal(HP.n_embd)
    hd, pos = HP.head_dim, np.array([5])
    q_gg = (weights["blk.0.attn_q.weight"] @ x).reshape(1, HP.n_head, hd)
    want = R._rope_normal(q_gg, pos, hd, HP.rope_base)[0]
    q_hf = (st["model.layers.0.self_attn.q_proj.weight"] @ x).reshape(HP.n_head, hd)
    inv = HP.rope_base ** (-np.arange(0, hd, 2) / hd)
    ang = np.concatenate([5 * inv, 5 * inv])
    rot = np.concatenate([-q_hf[:, hd // 2:], q_hf[:, :hd // 2]], axis=1)
    got = q_hf * np.cos(ang) + rot * np.sin(ang)
    # same values, HF order: pairs (i, i + hd/2) hold what GGUF keeps at (2i, 2i+1)
    np.testing.assert_allclose(got[:, :hd // 2], want[:, 0::2], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[:, hd // 2:], want[:, 1::2], rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------- example, tool
def _load(relpath, name):
    import importlib.util
    import pathlib
    spec = importlib.util.spec_from_file_location(
        name, pathlib.Path(__file__).resolve().parents[1] / relpath)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_generates(tmp_path, capsys):
    ex = _load("examples/llama_from_gguf.py", "llama_from_gguf")
    path = str(tmp_path / "ex.gguf")
    toks = ex.main("q4_0", n_tokens=5, n_threads=2, prompt_len=6, path=path)
    out = capsys.readouterr().out
    assert len(toks) == 5 and f"generated 5 tokens (greedy): {toks}" in out
    assert "tokens/s" in out and "q4_0 weights" in out
    m = LlamaModel(path)                   # the file the example wrote: same greedy tokens
    prompt = [int(t) for t in np.random.default_rng(1).integers(0, m.n_vocab, 6)]
    first = int(np.argmax(m.eval(prompt)[-1]))
    assert [first] + m.generate([first], 4) == toks


def test_example_with_its_defaults(tmp_path, capsys):
    """The command line's path: n_threads None (ggml_cy's default), backends found."""
    ex = _load("examples/llama_from_gguf.py", "llama_from_gguf_defaults")
    toks = ex.main("q8_0", n_tokens=3, prompt_len=4, path=str(tmp_path / "d.gguf"))
    assert len(toks) == 3 and "[cpu] decode:" in capsys.readouterr().out


def test_compare_llama_cpp_script():
    tool = _load("tools/compare_llama_cpp.py", "compare_llama_cpp")
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        assert tool.main(["--types", "q8_0"]) == 2          # says how to install it
        return
    assert tool.main(["--types", "f16,q8_0", "--tokens", "8"]) == 0


def test_write_random_model(tmp_path):
    from ggml_cy.models.llama import write_random_model
    p = tmp_path / "r.gguf"
    n = write_random_model(p, "bf16", n_vocab=64, n_embd=64, n_layer=1, n_head=4,
                           n_head_kv=1, n_ff=96, n_ctx=32)
    m = LlamaModel(p)
    assert n == 64 * 64 * 2 + 3 * 64 + 64 * 64 * 2 + 64 * 16 * 2 + 3 * 64 * 96
    assert m.weight_types == ["BF16", "F32"] and m.n_ctx == 32
    assert m.eval([1, 2, 3]).shape == (3, 64)
    with pytest.raises(ValueError, match="wtype"):
        write_random_model(p, "q5_k")
    with pytest.raises(ValueError, match="multiple"):
        write_random_model(p, "f32", n_embd=64, n_head=5)
