"""examples/simple_ctx.py runs and prints ggml's simple-ctx result; the graph demo
sections run."""
import importlib.util
import pathlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_simple_ctx_example(capsys):
    spec = importlib.util.spec_from_file_location("simple_ctx", ROOT / "examples" / "simple_ctx.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(n_threads=2)
    want = mod.MATRIX_B @ mod.MATRIX_A.T
    assert np.array_equal(out, want)
    text = capsys.readouterr().out
    assert text.splitlines()[0] == "mul mat (4 x 3) (transposed result):"
    assert " 60.00 55.00 50.00 110.00" in text and " 42.00 29.00 28.00 64.00" in text


def test_graph_demo_sections_run():
    import ggml_cy.cli.demo_graph  # noqa: F401  (registers the sections)
    from ggml_cy.cli.demo import sections
    lines = []
    ours = [(o, t, f) for o, t, f in sections() if 40 <= o < 50]
    assert len(ours) == 4
    for _, _, fn in ours:
        fn(lambda *a: lines.append(" ".join(map(str, a))))
    text = "\n".join(lines)
    assert "fused" in text and "[0. 4. 0. 8.]" in text
