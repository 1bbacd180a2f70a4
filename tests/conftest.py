"""Shared pytest setup: the `gpu` marker, hypothesis profiles and the kernels' tuning hook."""
import os

import pytest
from hypothesis import HealthCheck, settings

# CI gets a derandomized, bounded profile (numpy's conftest does the same).
settings.register_profile("ci", derandomize=True, max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=120, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("GGML_CY_HYPOTHESIS_PROFILE", "ci"))


def _cuda_available():
    try:
        import ggml_cy.cuda as gcuda
    except ImportError:
        return False
    try:
        return bool(gcuda.is_available())
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if _cuda_available():
        return
    skip = pytest.mark.skip(reason="no CUDA device (ggml_cy.cuda.is_available() is False)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def kernel_tuning():
    """Overrides the CPU kernels' size thresholds for one test: call it with
    ggml_cy.cpu._kernels._set_tuning's keywords; the previous values come back afterwards."""
    from ggml_cy.cpu import _kernels
    saved = []
    yield lambda **kw: saved.append(_kernels._set_tuning(**kw))
    for old in reversed(saved):
        _kernels._set_tuning(*old)


@pytest.fixture(params=[4, 8], ids=["r4", "r8"])
def stream_beyond_zero_llc(request):
    """The streaming-store rule planned with a 0-byte LLC: large outputs stream whatever
    this machine's cache (the rule itself: tests/test_cacheinfo.py); the machine's streamed
    groups run with 4 and with 8 accumulator vectors (fused_vm_blocks.h), whichever this
    CPU's default."""
    from ggml_cy.cpu import _fused, _kernels
    tuning = _kernels._set_tuning(llc_bytes=0)
    old = _fused.set_stream_vectors(request.param)
    yield
    _fused.set_stream_vectors(old)
    _kernels._set_tuning(*tuning)
