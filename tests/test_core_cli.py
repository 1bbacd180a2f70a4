"""`python -m ggml_cy info|demo` and the `ggml-cy` entry point (ggml_cy.__main__.main)."""
import subprocess
import sys

import pytest

from ggml_cy import __version__
from ggml_cy.cli.main import main
from ggml_cy.cli import demo as _demo


def test_info(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert __version__ in out
    for key in ("OpenMP:", "default threads:", "SIMD target:", "CUDA:", "368 bytes"):
        assert key in out


def test_demo_shows_context_tensors_and_a_view(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "Context(mem_size=" in out and "used_mem() = 416" in out
    assert "op=TRANSPOSE" in out and "op=VIEW" in out and "failed" not in out


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "info" in capsys.readouterr().out


def test_bad_command():
    with pytest.raises(SystemExit):
        main(["frobnicate"])


def test_demo_sections_are_pluggable_and_failures_contained():
    calls = []

    def ok(out):
        calls.append("ok")
        out("hello from a plugged-in section")

    def broken(out):
        raise RuntimeError("boom")

    before = list(_demo._SECTIONS)
    try:
        _demo.section(order=98, title="plug")(ok)
        _demo.section(order=99, title="broken")(broken)
        lines = []
        rc = _demo.run_demo(out=lambda *a: lines.append(" ".join(map(str, a))))
        text = "\n".join(lines)
        assert rc == 1 and calls == ["ok"]
        assert "hello from a plugged-in section" in text
        assert "[failed: RuntimeError: boom]" in text
        assert text.index("== plug") > text.index("== a context")
    finally:
        _demo._SECTIONS[:] = before


def test_module_runs_as_script(tmp_path):
    import os
    import ggml_cy
    root = os.path.dirname(os.path.dirname(ggml_cy.__file__))
    env = dict(os.environ, PYTHONPATH=root)
    r = subprocess.run([sys.executable, "-m", "ggml_cy", "info"], capture_output=True,
                       text=True, cwd=tmp_path, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "OpenMP" in r.stdout
