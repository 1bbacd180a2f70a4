"""Runs a test scenario in a fresh Python interpreter under a timeout (fork, Ctrl-C and
other process-level tests), so a hang fails the test instead of blocking CI.

The child imports the ggml_cy these tests import (an in-place build or an install): it
runs in the folder that holds that package, so an unbuilt source tree in the current
directory (CI runs pytest from the clone after `pip install .`) does not shadow it."""
import os
import subprocess
import sys
import textwrap

import pytest

import ggml_cy

HOME = os.path.dirname(os.path.dirname(os.path.abspath(ggml_cy.__file__)))
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [HOME] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))


def run_child(prelude, body, timeout):
    """prelude + body (both dedented) in a child interpreter; its stdout. Fails the test on
    a timeout or a non-zero exit, with the child's output."""
    code = textwrap.dedent(prelude) + textwrap.dedent(body)
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=HOME, env=ENV, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"hung (> {timeout} s); output so far: {e.stdout!r} {e.stderr!r}")
    assert p.returncode == 0, f"rc={p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p.stdout
