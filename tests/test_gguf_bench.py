"""`python -m bench gguf --smoke` runs end to end (no timing asserted), and the model file
the bench builds is a valid GGUF file that gguf-py reads too."""
import importlib
import importlib.util
import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _bench(submodule):
    if "bench" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "bench", ROOT / "bench" / "__init__.py",
            submodule_search_locations=[str(ROOT / "bench")])
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench"] = module
        spec.loader.exec_module(module)
    return importlib.import_module(f"bench.{submodule}")


def test_gguf_suite_smoke(tmp_path, capsys):
    main = _bench("__main__").main
    path = tmp_path / "gguf.json"
    assert main(["gguf", "--smoke", "--json", str(path)]) == 0
    doc = json.loads(path.read_text())
    names = [r["name"] for r in doc["results"]]
    assert len(names) == 4 and names[0].startswith("open") and names[3].startswith("write")
    for r in doc["results"]:
        assert "ggml_cy" not in r["errors"], (r["name"], r["errors"])
        assert "ggml_cy" in r["timings"]
    out = capsys.readouterr().out
    assert "xgguf-py" in out and "/copy" in out


def test_bench_model_file(tmp_path):
    import ggml_cy.gguf as gg
    bench_gguf = _bench("gguf")
    p = tmp_path / "m.gguf"
    sz = dict(vocab=500, merges=400, tensors=30, write=0, chunks=1)
    toks = bench_gguf.build_model_file(p, sz)
    with gg.load(p) as f:
        assert f.metadata["tokenizer.ggml.tokens"] == toks
        assert len(f.metadata["tokenizer.ggml.merges"]) == 400
        assert len(f.tensors) == 30
    gguf = pytest.importorskip("gguf")
    r = gguf.GGUFReader(str(p))
    assert len(r.tensors) == 30
    assert r.fields["tokenizer.ggml.tokens"].contents()[:5] == toks[:5]
