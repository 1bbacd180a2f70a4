"""threadpoolctl governs ggml_cy's thread count (a registered controller), whichever of
the two is imported first; GGML_CY_NUM_THREADS / OMP_NUM_THREADS at import."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(code, **env):
    e = dict(os.environ)
    for k in ("GGML_CY_NUM_THREADS", "OMP_NUM_THREADS"):
        e.pop(k, None)
    e.update(env)
    # (pkg) the child imports the ggml_cy under test (in-place build or an install), from a
    # folder where no unbuilt source tree shadows it
    import tempfile
    import ggml_cy
    e["PYTHONPATH"] = os.path.dirname(os.path.dirname(ggml_cy.__file__)) + os.pathsep + \
        e.get("PYTHONPATH", "")
    with tempfile.TemporaryDirectory() as cwd:    # an empty folder: nothing shadows
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                           capture_output=True, text=True, env=e, timeout=120, cwd=cwd)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.strip()


@pytest.mark.parametrize("first", ["ggml_cy", "threadpoolctl"])
def test_threadpool_limits_limits_ggml_cy(first):
    pytest.importorskip("threadpoolctl")
    second = "threadpoolctl" if first == "ggml_cy" else "ggml_cy"
    out = _run(f"""
        import {first}, {second}
        import ggml_cy, threadpoolctl
        ggml_cy.set_num_threads(3)
        info = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "ggml_cy"]
        assert len(info) == 1 and info[0]["num_threads"] == 3, info
        assert info[0]["version"] == ggml_cy.__version__
        with threadpoolctl.threadpool_limits(1):
            assert ggml_cy.get_num_threads() == 1
            import numpy as np
            assert (ggml_cy.add(np.ones(10**5), 1) == 2).all()
        assert ggml_cy.get_num_threads() == 3
        with threadpoolctl.threadpool_limits(2, user_api="ggml_cy"):
            assert ggml_cy.get_num_threads() == 2
        with threadpoolctl.threadpool_limits(limits={{"ggml_cy": 1}}):
            assert ggml_cy.get_num_threads() == 1
        ctl = threadpoolctl.ThreadpoolController()
        with ctl.limit(limits=1, user_api="ggml_cy"):
            assert ggml_cy.get_num_threads() == 1
        assert ggml_cy.get_num_threads() == 3
        print("ok")
    """)
    assert out.endswith("ok")


def test_no_threadpoolctl_import_cost():
    out = _run("""
        import sys, ggml_cy
        print("threadpoolctl" in sys.modules)
    """)
    assert out == "False"


@pytest.mark.parametrize("env,want", [
    ({"GGML_CY_NUM_THREADS": "3", "OMP_NUM_THREADS": "2"}, 3),
    ({"OMP_NUM_THREADS": "2,1"}, 2),
    ({"GGML_CY_NUM_THREADS": "bogus", "OMP_NUM_THREADS": "2"}, 2),
])
def test_env_precedence(env, want):
    out = _run("import warnings; warnings.simplefilter('ignore'); import ggml_cy; "
               "print(ggml_cy.get_num_threads())", **env)
    assert out.splitlines()[-1] == str(want)
