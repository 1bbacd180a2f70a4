"""`ggml-cy gguf info FILE [--json]` and `ggml-cy gguf verify FILE`."""
import json
import subprocess
import sys

import numpy as np
import pytest

import ggml_cy.gguf as gg
from ggml_cy.cli.main import main
from ggml_cy.gguf import RawTensor, Value


@pytest.fixture
def model(tmp_path):
    p = tmp_path / "m.gguf"
    gg.save(p, {"general.architecture": "tiny", "tiny.n": Value(7, "uint32"),
                "tokens": [f"t{i}" for i in range(100)], "nested": [[1, 2], ["a"]]},
            {"w": np.ones((4, 32), np.float32),
             "q": RawTensor("q4_K", (2, 256), bytes(2 * 144))})
    return p


def test_info_text(model, capsys):
    assert main(["gguf", "info", str(model)]) == 0
    out = capsys.readouterr().out
    assert "GGUF version 3, little-endian, alignment 32" in out
    assert "4 key/value pairs" in out and "2 tensors" in out
    assert "uint32" in out and "tiny.n = 7" in out
    assert "array[string]" in out and "|      100 | tokens = ['t0'" in out and "..." in out
    assert "'t99'" not in out                      # abbreviated
    lines = [l for l in out.splitlines() if " w " in l or " q " in l]
    assert any("f32" in l and "[32, 4]" in l and l.rstrip().endswith("512") for l in lines)
    assert any("q4_K" in l and "[256, 2]" in l and "288" in l for l in lines)
    assert main(["gguf", "info", "--full", str(model)]) == 0
    assert "'t99'" in capsys.readouterr().out


def test_info_json(model, capsys):
    assert main(["gguf", "info", "--json", str(model)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["version"] == 3 and doc["alignment"] == 32 and doc["byteorder"] == "little"
    md = doc["metadata"]
    assert md["tiny.n"] == {"type": "uint32", "value": 7}
    assert md["tokens"]["n"] == 100 and md["tokens"]["truncated"] is True
    assert len(md["tokens"]["value"]) == 8
    assert md["nested"]["value"] == [[1, 2], ["a"]]
    t = {x["name"]: x for x in doc["tensors"]}
    assert t["w"] == {"name": "w", "type": "f32", "shape": [4, 32], "ne": [32, 4],
                      "offset": 0, "nbytes": 512}
    assert t["q"]["type"] == "q4_K" and t["q"]["offset"] == 512
    assert main(["gguf", "info", "--json", "--full", str(model)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["metadata"]["tokens"]["value"]) == 100


def test_verify(model, tmp_path, capsys):
    assert main(["gguf", "verify", str(model)]) == 0
    assert "OK" in capsys.readouterr().out
    bad = tmp_path / "bad.gguf"
    b = bytearray(model.read_bytes())
    bad.write_bytes(bytes(b[:-10]))
    assert main(["gguf", "verify", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "invalid GGUF file" in err and "runs past the end of the file" in err
    assert "byte" in err
    b[4] = 9
    bad.write_bytes(bytes(b))
    assert main(["gguf", "verify", str(bad)]) == 1
    assert "version 9 at byte 4" in capsys.readouterr().err
    assert main(["gguf", "info", str(bad)]) == 1
    assert main(["gguf", "verify", str(tmp_path / "missing.gguf")]) == 1
    assert "No such file" in capsys.readouterr().err


def test_help_and_entry_point(model, capsys):
    assert main(["gguf"]) == 2
    assert "verify" in capsys.readouterr().out
    import os
    import ggml_cy
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ggml_cy.__file__)))
    r = subprocess.run([sys.executable, "-m", "ggml_cy", "gguf", "verify", str(model)],
                       capture_output=True, text=True, timeout=120, env=env,
                       cwd=str(model.parent))   # (pkg) no source tree shadows the install
    assert r.returncode == 0 and "OK" in r.stdout


def test_info_json_is_strict(tmp_path, capsys):
    p = tmp_path / "nan.gguf"
    gg.save(p, {"a": float("nan"), "b": [1.0, float("inf"), -float("inf")],
                "c": Value(float("nan"), "float64")})
    assert main(["gguf", "info", "--json", str(p)]) == 0
    out = capsys.readouterr().out
    assert "NaN" not in out and "Infinity" not in out
    md = json.loads(out)["metadata"]
    assert md["a"]["value"] == "nan" and md["b"]["value"] == [1.0, "inf", "-inf"]
    assert md["c"]["value"] == "nan"
