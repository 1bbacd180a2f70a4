"""python -m bench ... --plot and python -m bench plot: PNG charts from result JSON
(speed-up per case against every peer, GB/s against the roofline, thread scaling)."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
PNG = b"\x89PNG\r\n\x1a\n"


def _bench(*args, timeout=600):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=timeout)


def _is_png(path):
    with open(path, "rb") as f:
        head = f.read(8)
    return head == PNG and os.path.getsize(path) > 5000


def _need_results():
    if not os.path.exists(os.path.join(RESULTS, "cpu-vm.json")):
        pytest.skip("the committed bench results are not in this tree (the sdist leaves "
                    "bench/results out)")


def test_plot_committed_results(tmp_path):
    pytest.importorskip("matplotlib")
    _need_results()
    files = [os.path.join(RESULTS, f) for f in ("cpu-vm.json", "graph-vm.json")]
    scaling = sorted(os.path.join(RESULTS, "scaling", f)
                     for f in os.listdir(os.path.join(RESULTS, "scaling")))
    r = _bench("plot", *files, "--out", str(tmp_path), "--scaling", *scaling)
    assert r.returncode == 0, r.stdout + r.stderr
    names = sorted(os.listdir(tmp_path))
    assert {"cpu-vm-speedup.png", "cpu-vm-roofline.png", "graph-vm-speedup.png"} <= set(names)
    assert any(n.endswith("-scaling.png") for n in names)
    assert all(_is_png(tmp_path / n) for n in names)


def test_plot_after_a_run(tmp_path):
    pytest.importorskip("matplotlib")
    r = _bench("cpu", "--smoke", "--threads", "1", "--json", str(tmp_path / "run.json"),
               "--plot", str(tmp_path))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    pngs = [n for n in os.listdir(tmp_path) if n.endswith(".png")]
    assert any("speedup" in n for n in pngs) and any("roofline" in n for n in pngs)
    assert all(_is_png(tmp_path / n) for n in pngs)


def test_plot_bad_input(tmp_path):
    pytest.importorskip("matplotlib")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"x": 1}))
    r = _bench("plot", str(bad), "--out", str(tmp_path))
    assert r.returncode == 2 and "not a bench result file" in r.stderr
    r = _bench("plot", str(tmp_path / "missing.json"), "--out", str(tmp_path))
    assert r.returncode == 2
    r = _bench("plot")
    assert r.returncode == 2
    if os.path.exists(os.path.join(RESULTS, "cpu-vm.json")):
        one = os.path.join(RESULTS, "cpu-vm.json")
        r = _bench("plot", "--scaling", one, "--out", str(tmp_path))
        assert r.returncode == 2 and "two or more" in r.stderr


def test_committed_charts_are_in_readme():
    _need_results()
    readme = open(os.path.join(ROOT, "README.md")).read()
    for name in ("cpu-vm-speedup.png", "cpu-vm-roofline.png", "cpu-vm-scaling.png"):
        assert f"bench/results/plots/{name}" in readme
        assert _is_png(os.path.join(RESULTS, "plots", name))
