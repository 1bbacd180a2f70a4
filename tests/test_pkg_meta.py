"""Package metadata, LICENSE, `ggml-cy info` / show_config, the CPU check (issue 16 item 3)."""
import io
import os
from importlib import metadata

import pytest

import ggml_cy
from ggml_cy.core import _startup

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pyproject():
    path = os.path.join(ROOT, "pyproject.toml")
    if not os.path.exists(path):
        pytest.skip("tests run outside the source tree (installed package)")
    import tomllib
    with open(path, "rb") as f:
        return tomllib.load(f)["project"]


def test_license_file_is_mit():
    p = _pyproject()
    assert p["license"] == "MIT" and p["license-files"] == ["LICENSE"]
    with open(os.path.join(ROOT, "LICENSE")) as f:
        text = f.read()
    assert text.startswith("MIT License") and "WITHOUT WARRANTY" in text


def test_pyproject_metadata():
    p = _pyproject()
    assert p["authors"] and p["urls"] and p["requires-python"] == ">=3.10"
    cls = p["classifiers"]
    for v in ("3.10", "3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {v}" in cls
    assert {"test", "bench"} <= set(p["optional-dependencies"])
    readme = open(os.path.join(ROOT, "README.md")).read()
    for extra in p["optional-dependencies"]:      # every extra is documented in README
        assert f"[{extra}]" in readme, extra


def test_installed_metadata_when_installed():
    try:
        md = metadata.metadata("ggml_cy")
    except metadata.PackageNotFoundError:
        pytest.skip("not installed (in-place build)")
    assert md["License-Expression"] == "MIT" or md["License"] == "MIT"
    assert md["Requires-Python"] == ">=3.10"
    assert any("Python :: 3.13" in c for c in md.get_all("Classifier"))


def test_show_config_reports_build_and_cpu():
    buf = io.StringIO()
    ggml_cy.show_config(file=buf)
    out = buf.getvalue()
    for key in ("SIMD target:", "CPU SIMD:", "CPU level:", "dispatch:", "OpenMP:", "CUDA:"):
        assert key in out
    if _startup.cpu_flags() and _startup.is_x86():
        assert "sse4_2" in out.split("CPU SIMD:")[1]


def test_cpu_level_rules():
    v2 = set(_startup.X86_LEVELS["baseline"])
    v3 = v2 | set(_startup.X86_LEVELS["avx2"])
    v4 = v3 | set(_startup.X86_LEVELS["avx512"])
    assert _startup.cpu_level(frozenset()) is None
    assert _startup.cpu_level(frozenset(v2)) == "baseline"
    assert _startup.cpu_level(frozenset(v3 - {"fma"})) == "baseline"
    assert _startup.cpu_level(frozenset(v3)) == "avx2"
    assert _startup.cpu_level(frozenset(v4)) == "avx512"
    assert _startup.cpu_level(frozenset(v4 - set(_startup.X86_LEVELS["avx2"]))) == "baseline"


def test_build_for_missing_instructions_is_refused_by_name(monkeypatch):
    monkeypatch.setattr(_startup, "_cpu_flags_cache", frozenset(_startup.X86_LEVELS["baseline"]))
    with pytest.raises(ImportError, match="avx2, fma") as e:
        _startup.check_build(["sse4_2", "avx2", "fma"])
    assert "sse4_2" not in str(e.value)
    _startup.check_build(["sse2", "sse4_2", "popcnt"])      # all present: no error
    monkeypatch.setattr(_startup, "_cpu_flags_cache", frozenset())
    _startup.check_build(["avx512f"])                         # unknown CPU: not refused
