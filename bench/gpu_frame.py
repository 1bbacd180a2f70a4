"""The generic part of a GPU bench (issue 5): device header, synchronized timing, torch
comparison columns, table and JSON with the device recorded. bench/gpu.py (the CUDA work)
defines the cases and calls `run_gpu_suite`; see bench/README.md for the API.

Timing on a device: a sample is `inner` back-to-back launches followed by one
`torch.cuda.synchronize()` (Setup.sync), so launch queues stay full and the sync's own
latency is amortized; the harness batches until a sample lasts >= min_sample_s.
"""
from __future__ import annotations

import importlib
import sys
import time

import numpy as np

from bench import _env, _harness, _libs, _report
from bench._harness import Call, Case, Setup, Target  # noqa: F401  (re-exported for gpu.py)

GPU_LIBS = ["ggml_cy", "torch"]


def no_device_reason(gc, torch):
    """None when a CUDA device is usable by both ggml_cy and torch, else why not."""
    if torch is None:
        return "torch is not installed (the GPU bench compares against torch)"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    try:
        # a submodule: an attribute of the package only once something imported it
        cuda = importlib.import_module(gc.__name__ + ".cuda")
    except ImportError as exc:
        return f"ggml_cy.cuda is not available ({exc})"
    try:
        if not cuda.is_available():
            return "ggml_cy.cuda.is_available() is False"
    except Exception as exc:
        return f"ggml_cy.cuda.is_available() failed: {exc}"
    return None


def device_info(torch, gc=None):
    """Name, capability, memory, driver/runtime versions of the current device."""
    info = {}
    try:
        idx = torch.cuda.current_device()
        props = torch.cuda.get_device_properties(idx)
        info.update(name=props.name, index=idx, capability=f"{props.major}.{props.minor}",
                    memory_gib=round(props.total_memory / 2**30, 1),
                    multiprocessors=props.multi_processor_count,
                    torch_cuda=torch.version.cuda)
    except Exception as exc:
        info["error"] = f"{type(exc).__name__}: {exc}"
    cuda = getattr(gc, "cuda", None) if gc is not None else None
    for attr in ("device_name", "runtime_version", "driver_version"):
        fn = getattr(cuda, attr, None) if cuda is not None else None
        if callable(fn):
            try:
                info[f"ggml_cy_{attr}"] = fn()
            except Exception:
                pass
    return info


def cuda_sync(torch):
    """The Setup.sync for device work: waits for every queued kernel."""
    return torch.cuda.synchronize


def to_host(x):
    """A numpy copy of a device result: torch tensor (.cpu()), ggml_cy device tensor
    (.numpy() copies back), or anything np.asarray takes."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        return x.detach().cpu().numpy()
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        return np.asarray(x.numpy())
    return np.asarray(x)


def device_compare(result, reference):
    """Setup.compare for device results: bring them to the host, then compare with numpy."""
    return _harness.default_compare(to_host(result), reference)


def torch_ratios():
    """x torch = torch's time / ggml_cy's (above 1: ggml_cy is faster); GB/s ratio alike."""
    return [_harness.speedup("ggml_cy", "torch", header="xtorch")]


def run_gpu_suite(build_cases, opts, json_path=None, argv=None, out=None,
                  libs=GPU_LIBS, ratios=None, notes=()):
    """Header, cases, table, JSON for a GPU suite on the current CUDA device.

    build_cases(env) -> list of Case, env = {"gc", "torch", "sync", "device", "opts"}.
    Returns the JSON doc, or None when no device is usable (a message says why).
    """
    out = out if out is not None else sys.stdout
    gc, load_note = _libs.load_ggml_cy()
    torch = _libs.load_optional("torch")
    reason = no_device_reason(gc, torch)
    if reason is not None:
        print(f"bench gpu: skipped: {reason}", file=out, flush=True)
        return None
    notes = list(notes) + ([load_note] if load_note else [])
    return run_device_suite(build_cases, opts, device_info(torch, gc), cuda_sync(torch),
                            gc=gc, torch=torch, json_path=json_path, argv=argv, out=out,
                            libs=libs, ratios=ratios, notes=notes)


def run_device_suite(build_cases, opts, device, sync, gc=None, torch=None, json_path=None,
                     argv=None, out=None, libs=GPU_LIBS, ratios=None, notes=()):
    """The device-independent body of run_gpu_suite (the tests drive it on the CPU)."""
    out = out if out is not None else sys.stdout
    t0 = time.perf_counter()
    meta = _env.environment(gc, opts.threads, "gpu", argv, extra={"device": device})
    header = [f"device  : {device.get('name')} (compute capability {device.get('capability')},"
              f" {device.get('memory_gib')} GiB, {device.get('multiprocessors')} SMs), "
              f"torch CUDA {device.get('torch_cuda')}",
              f"method  : median per call over >= {opts.repeat} samples; a sample = a batch of "
              "launches + one device synchronize; GB/s = bytes read + written / median",
              *notes]
    print("\n".join(_env.format_header(meta, header)), file=out, flush=True)
    if json_path is None:
        json_path = _report.default_json_path("gpu", opts, tag=device.get("name"))
    env = {"gc": gc, "torch": torch, "sync": sync, "device": device, "opts": opts}
    results = _harness.run_cases(build_cases(env), opts)
    ratios = list(ratios) if ratios is not None else torch_ratios()
    _harness.evaluate_ratios(results, ratios)
    meta["runtime_s"] = round(time.perf_counter() - t0, 1)
    pre = ["ratios  : xtorch = torch's time / ggml_cy's (above 1: ggml_cy faster); "
           "'!' = result differs from the reference; "
           "'~' = noisy (quartile spread > 30% of the median)"]
    doc = _report.finish(results, libs, ratios, meta, json_path, out, preamble=pre)
    print(f"total {meta['runtime_s']} s", file=out, flush=True)
    return doc
