"""`import ggml_cy` has no side effects on the environment (issue 16 item 4)."""
import json
import os
import subprocess
import sys

import pytest

from ggml_cy.core import _startup

_CHILD = r"""
import json, os, subprocess, sys
before = dict(os.environ)
import ggml_cy
ggml_cy.add([1.0], [2.0])
after = dict(os.environ)
child = subprocess.run([sys.executable, "-c", "import os, json; print(json.dumps(dict(os.environ)))"],
                       capture_output=True, text=True, check=True).stdout
from ggml_cy.core import _startup
print(json.dumps({"same": before == after, "diff": sorted(set(after.items()) ^ set(before.items())),
                  "child": json.loads(child), "spin": list(_startup.spin_applied)}))
"""


def _child_env_and_cwd(env):
    """The child imports the ggml_cy this test imported (in-place build or install), from a
    directory where no source tree shadows it."""
    import tempfile
    import ggml_cy
    env = dict(env, PYTHONPATH=os.path.dirname(os.path.dirname(ggml_cy.__file__)))
    return env, tempfile.mkdtemp(prefix="ggml_cy_child_")


def _run(env_extra=(), drop=()):
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(env_extra)
    env, cwd = _child_env_and_cwd(env)
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                         env=env, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


_OMP = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "GGML_CY_SPINCOUNT")


def test_import_leaves_environ_identical():
    r = _run(drop=_OMP)
    assert r["same"], r["diff"]
    assert "GOMP_SPINCOUNT" not in r["child"]           # child processes inherit nothing
    from ggml_cy._build_config import OPENMP
    if OPENMP:
        assert r["spin"][0] == _startup.DEFAULT_SPINCOUNT   # applied to our OpenMP load


def test_user_openmp_settings_win_and_stay():
    r = _run({"GOMP_SPINCOUNT": "123"}, drop=_OMP)
    assert r["same"], r["diff"]
    assert r["child"]["GOMP_SPINCOUNT"] == "123"
    assert r["spin"][0] is None and "GOMP_SPINCOUNT" in r["spin"][1]


def test_project_setting_default_keeps_libgomp_own():
    r = _run({"GGML_CY_SPINCOUNT": "default"}, drop=_OMP)
    assert r["same"] and r["spin"][0] is None
    assert "GOMP_SPINCOUNT" not in r["child"]


def test_spin_setting_rules():
    s = _startup.spin_setting
    assert s({}, runtime_loaded=False)[0] == _startup.DEFAULT_SPINCOUNT
    assert s({"GGML_CY_SPINCOUNT": "500"}, runtime_loaded=False)[0] == 500
    assert s({"GGML_CY_SPINCOUNT": "0"}, runtime_loaded=False)[0] == 0
    assert s({"GGML_CY_SPINCOUNT": "Default"}, runtime_loaded=False)[0] is None
    assert s({"OMP_WAIT_POLICY": "passive"}, runtime_loaded=False)[0] is None
    assert s({}, runtime_loaded=True)[0] is None          # someone else loaded libgomp first
    assert s({}, openmp_built=False, runtime_loaded=False)[0] is None
    with pytest.warns(RuntimeWarning, match="GGML_CY_SPINCOUNT"):
        assert s({"GGML_CY_SPINCOUNT": "-3"}, runtime_loaded=False)[0] == \
            _startup.DEFAULT_SPINCOUNT
    with pytest.warns(RuntimeWarning):
        s({"GGML_CY_SPINCOUNT": "lots"}, runtime_loaded=False)


def test_environ_restored_when_load_fails(monkeypatch):
    for k in _OMP:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setattr(_startup, "_openmp_runtime_loaded", lambda: False)
    monkeypatch.setattr(_startup, "spin_applied", _startup.spin_applied)
    seen = []

    def boom():
        seen.append(os.environ.get("GOMP_SPINCOUNT"))
        raise ImportError("x")
    with pytest.raises(ImportError):
        _startup.import_with_openmp_settings(boom, True)
    assert seen == [str(_startup.DEFAULT_SPINCOUNT)]      # present while the runtime loads
    assert "GOMP_SPINCOUNT" not in os.environ               # and gone afterwards
