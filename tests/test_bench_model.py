"""python -m bench model runs end to end on a tiny model (--smoke): the ggml_cy column is
measured for every case, the other libraries are measured or skipped with a reason."""
import json

import pytest

from test_bench_smoke import _bench


def test_model_suite_smoke(tmp_path, capsys, monkeypatch):
    pytest.importorskip("gguf")
    monkeypatch.setenv("GGML_CY_BENCH_CACHE", str(tmp_path / "cache"))
    main = _bench("__main__").main
    path = tmp_path / "model.json"
    assert main(["model", "--smoke", "--threads", "2", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    doc = json.loads(path.read_text())
    names = [r["name"] for r in doc["results"]]
    for t in ("F16", "Q8_0", "Q4_0"):
        assert any(n.startswith("prompt") and t in n for n in names)
        assert any(n.startswith("decode") and t in n for n in names)
    for r in doc["results"]:
        assert "ggml_cy" in r["timings"], (r["name"], r["errors"], r["skipped"])
        for lib in ("llama.cpp", "ggml_cy-cuda", "torch-eager"):
            assert lib in r["timings"] or lib in r["skipped"] or lib in r["errors"]
        if r["name"].startswith("decode"):
            assert r["nbytes"] > 0
    assert doc["meta"]["suite"] == "model" and "xllama" in out
