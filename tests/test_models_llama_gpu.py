"""ggml_cy.models.llama on the CUDA backend, and transformers' LlamaForCausalLM as a second
oracle.

* gpu: the same tiny random models as tests/test_models_llama.py, every weight type, run
  with backend="cuda": logits against the CPU backend's and against the float64 reference
  (tests/_llama_ref.py), prompt and decode steps, greedy generation equal to the CPU's.
* transformers: the F32/F16 models converted to Hugging Face's layout
  (``llama.hf_llama_weights``: q/k rows un-permuted from llama.cpp's rope "normal" order to
  HF's rotate_half order) run through LlamaForCausalLM in float32 on the CPU (and compared
  with the CUDA runner too when a device is present). NMSE measured 2026-11-25 (CPU runner,
  f16 KV cache): F32 ~3e-8, F16 ~4e-8 -- the f16 cache's rounding; the bound is 1e-6.
"""
import numpy as np
import pytest

pytest.importorskip("gguf")

import _llama_ref as R  # noqa: E402
from ggml_cy.models import llama  # noqa: E402
from ggml_cy.models.llama import LlamaModel  # noqa: E402

HP = R.HParams()
PROMPT = [1, 17, 250, 3, 99, 42, 7]
DECODE = [5, 123, 299]
# CUDA logits against the float64 reference: the CPU runner's bounds (same rounding
# model: f16 cache, activations quantized to Q8 for quantized weights)
TOL = {"F32": 1e-6, "F16": 1e-6, "BF16": 1e-6, "Q8_0": 1e-3, "Q4_0": 1e-3, "Q4_K": 1e-3,
       "Q6_K": 1e-3}
# CUDA against CPU: float weights differ by summation order only; quantized ones may
# quantize the activations differently (Q8_1 on the GPU, as ggml-cuda does); BF16: the CPU
# rounds the activations to bf16 before each product (ggml's rule), the CUDA mat-vec these
# 7-token prompts take does not: measured on the CPU side, the float64 reference with and
# without that rounding differ by NMSE 0.7e-5..1.2e-5 (the CPU against the unrounded one
# 0.7e-5..1.4e-5), so 1e-4
TOL_VS_CPU = {"F32": 1e-6, "F16": 1e-6, "BF16": 1e-4, "Q8_0": 5e-4, "Q4_0": 5e-4,
              "Q4_K": 5e-4, "Q6_K": 5e-4}
HF_TOL = 1e-6


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("llama_gpu")
    out = {}
    for wt in R.WEIGHT_TYPES:
        path = d / f"tiny-{wt}.gguf"
        out[wt] = (path, R.write_model(path, HP, wt, seed=1))
    return out


def _steps(model):
    model.reset()
    out = [model.eval(PROMPT)]
    for t in DECODE:
        out.append(model.eval([t]))
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("wtype", R.WEIGHT_TYPES)
def test_cuda_logits_match_cpu_and_float64(models, wtype):
    path, weights = models[wtype]
    ref = R.RefLlama(weights, HP)
    want = [ref.eval(PROMPT)] + [ref.eval([t]) for t in DECODE]
    cpu = _steps(LlamaModel(path, n_threads=2))
    gpu_model = LlamaModel(path, backend="cuda")
    # the CUDA backend's mul_mat takes bf16 weights (supports_op on the upload's probe node)
    assert gpu_model.bf16_widened == []
    gpu = _steps(gpu_model)
    for step, (g, c, w) in enumerate(zip(gpu, cpu, want)):
        assert g.shape == w.shape and g.dtype == np.float32
        e_ref, e_cpu = R.nmse(g, w), R.nmse(g, c)
        print(f"{wtype} step {step}: NMSE vs float64 {e_ref:.3g}, vs CPU {e_cpu:.3g}")
        assert e_ref < TOL[wtype], f"{wtype} step {step}: NMSE vs float64 {e_ref:.3g}"
        assert e_cpu < TOL_VS_CPU[wtype], f"{wtype} step {step}: NMSE vs CPU {e_cpu:.3g}"
        if wtype in ("F32", "F16", "BF16"):
            assert (g.argmax(1) == w.argmax(1)).all()
    # a second pass replays the captured decode graphs: same logits
    again = _steps(gpu_model)
    for a, b in zip(again, gpu):
        np.testing.assert_array_equal(a, b)


@pytest.mark.gpu
def test_cuda_generate_matches_cpu(models):
    path, _ = models["F16"]
    cpu = LlamaModel(path).generate([1, 2, 3], 8)
    gpu = LlamaModel(path, backend="cuda").generate([1, 2, 3], 8)
    assert gpu == cpu


@pytest.mark.gpu
def test_cuda_tied_output_and_bad_ids(tmp_path):
    path = tmp_path / "tied.gguf"
    R.write_model(path, HP, "Q8_0", seed=3, drop_tensors=("output.weight",))
    cpu = LlamaModel(path).eval(PROMPT)
    m = LlamaModel(path, backend="cuda")
    assert R.nmse(m.eval(PROMPT), cpu) < 5e-4
    with pytest.raises(ValueError, match="token ids"):
        m.eval([HP.n_vocab])
    m.close()
    with pytest.raises(RuntimeError, match="closed"):
        m.eval([1])


# ---------------------------------------------------------------------- transformers
def _hf_model(path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    cfg, state = llama.hf_llama_weights(path)
    config = transformers.LlamaConfig(**cfg)
    rp = getattr(config, "rope_parameters", None)        # transformers >= 5
    if isinstance(rp, dict):
        rp["rope_theta"] = cfg["rope_theta"]
    config._attn_implementation = "eager"
    model = transformers.LlamaForCausalLM(config).eval().to(torch.float32)
    missing, unexpected = model.load_state_dict(
        {k: torch.from_numpy(v) for k, v in state.items()}, strict=False)
    assert not unexpected and all("rotary" in k for k in missing), (missing, unexpected)
    return torch, model


def _hf_logits(path):
    """HF's logits for PROMPT + DECODE in one causal pass (no cache), split like _steps."""
    torch, model = _hf_model(path)
    with torch.no_grad():
        out = model(torch.tensor([PROMPT + DECODE])).logits[0].double().numpy()
    n = len(PROMPT)
    return [out[:n]] + [out[n + i:n + i + 1] for i in range(len(DECODE))]


@pytest.mark.parametrize("wtype", ["F32", "F16"])
def test_transformers_oracle_cpu(models, wtype):
    path, weights = models[wtype]
    hf = _hf_logits(path)
    # the oracle itself agrees with the float64 reference (layout and rope are right)
    ref = R.RefLlama(weights, HP)
    want = [ref.eval(PROMPT)] + [ref.eval([t]) for t in DECODE]
    for h, w in zip(hf, want):
        assert R.nmse(h, w) < 1e-9
    ours = _steps(LlamaModel(path, n_threads=2))
    for step, (o, h) in enumerate(zip(ours, hf)):
        err = R.nmse(o, h)
        print(f"{wtype} step {step}: NMSE ggml_cy (CPU) vs transformers {err:.3g}")
        assert err < HF_TOL and (o.argmax(1) == h.argmax(1)).all()


@pytest.mark.gpu
@pytest.mark.parametrize("wtype", ["F32", "F16"])
def test_transformers_oracle_cuda(models, wtype):
    path, _ = models[wtype]
    hf = _hf_logits(path)
    ours = _steps(LlamaModel(path, backend="cuda"))
    for step, (o, h) in enumerate(zip(ours, hf)):
        err = R.nmse(o, h)
        print(f"{wtype} step {step}: NMSE ggml_cy (CUDA) vs transformers {err:.3g}")
        assert err < HF_TOL and (o.argmax(1) == h.argmax(1)).all()
