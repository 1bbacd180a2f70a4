"""``ggml-cy quantize IN OUT TYPE``: a small model file built here (F32/F16/BF16 weight
matrices, 1-D norms, a matrix whose rows are not whole blocks, an already quantized tensor,
integer tensors, metadata of several types) is converted; gguf-py reads the result back and
the blocks are compared with gguf-py's quantizer (bitwise) / ggml_cy.quantize and their
dequantized values with the source."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
from gguf.quants import dequantize, quantize as gguf_quantize  # noqa: E402

from ggml_cy.cli.main import main  # noqa: E402
from ggml_cy.cli import quantize_cmd  # noqa: E402
from ggml_cy.core._core import bfloat16_to_float32, float32_to_bfloat16  # noqa: E402
from ggml_cy.quants import quantize  # noqa: E402

QT = gguf.GGMLQuantizationType
RNG = np.random.default_rng(12)
W = {
    "token_embd.weight": RNG.standard_normal((48, 256)).astype(np.float32),
    "blk.0.attn_q.weight": RNG.standard_normal((256, 256)).astype(np.float16),
    "blk.0.ffn_up.weight": RNG.standard_normal((2, 64, 256)).astype(np.float32),  # 3-D
    "blk.0.attn_norm.weight": RNG.standard_normal(256).astype(np.float32),
    "blk.0.odd.weight": RNG.standard_normal((8, 100)).astype(np.float32),
    "blk.0.attn_q.bias": RNG.standard_normal(256).astype(np.float32),
    "blk.0.extra": RNG.standard_normal((4, 256)).astype(np.float32),          # not a weight
    "pos.weight": np.arange(64, dtype=np.int32).reshape(2, 32),
}
BF16_NAME = "blk.0.attn_k.weight"
BF16_F32 = RNG.standard_normal((32, 512)).astype(np.float32)
Q8_NAME = "output.weight"
Q8_F32 = RNG.standard_normal((16, 256)).astype(np.float32)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "tiny.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny")
    w.add_file_type(1)
    w.add_uint32("llama.block_count", 1)
    w.add_float32("llama.rope.freq_base", 10000.0)
    w.add_array("tokenizer.ggml.tokens", ["a", "b", "<s>"])
    w.add_array("tokenizer.ggml.scores", [0.5, -1.0, 2.0])
    for name, arr in W.items():
        w.add_tensor(name, arr)
    w.add_tensor(BF16_NAME, float32_to_bfloat16(BF16_F32), raw_dtype=QT.BF16)
    w.add_tensor(Q8_NAME, gguf_quantize(Q8_F32, QT.Q8_0), raw_dtype=QT.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        rc = main(list(argv))
    finally:
        sys.stdout, sys.stderr = old
    return rc, out.getvalue(), err.getvalue()


def tensors(path):
    r = gguf.GGUFReader(str(path))
    return r, {t.name: t for t in r.tensors}


@pytest.mark.parametrize("qtype", ["q4_0", "q8_0", "q5_1", "mxfp4"])
def test_quantize_model_gguf_types(model, tmp_path, qtype):
    dst = tmp_path / f"tiny-{qtype}.gguf"
    rc, out, err = run_cli("quantize", str(model), str(dst), qtype, "--threads", "2")
    assert rc == 0, err
    assert "MB/s" in err and f"[{len(W) + 2}/{len(W) + 2}]" in err
    assert "size:" in out and "MiB" in out and "blk.0.odd.weight" in out
    r, t = tensors(dst)
    QTYPE = QT[qtype.upper()]
    for name in ("token_embd.weight", "blk.0.attn_q.weight", "blk.0.ffn_up.weight", BF16_NAME):
        assert t[name].tensor_type == QTYPE, name
        if name == BF16_NAME:
            x = bfloat16_to_float32(float32_to_bfloat16(BF16_F32))
        else:
            x = W[name].astype(np.float32)
        want = gguf_quantize(x.reshape(-1, x.shape[-1]), QTYPE)
        np.testing.assert_array_equal(np.asarray(t[name].data).reshape(want.shape), want,
                                      err_msg=name)
        back = dequantize(np.asarray(t[name].data), QTYPE).reshape(x.shape)
        assert np.abs(back - x).max() < 0.8 * np.abs(x).max()
    # kept as they were: 1-D, not a weight, odd rows, integers, already quantized
    for name in ("blk.0.attn_norm.weight", "blk.0.attn_q.bias", "blk.0.extra",
                 "blk.0.odd.weight", "pos.weight"):
        np.testing.assert_array_equal(np.asarray(t[name].data).reshape(W[name].shape), W[name])
    assert t[Q8_NAME].tensor_type == QT.Q8_0
    np.testing.assert_array_equal(np.asarray(t[Q8_NAME].data).reshape(-1),
                                  gguf_quantize(Q8_F32, QT.Q8_0).reshape(-1))
    # metadata kept, file type set as llama-quantize does
    f = r.fields
    assert bytes(f["general.name"].parts[-1]).decode() == "tiny"
    assert [bytes(f["tokenizer.ggml.tokens"].parts[i]).decode()
            for i in f["tokenizer.ggml.tokens"].data] == ["a", "b", "<s>"]
    assert float(f["llama.rope.freq_base"].parts[-1][0]) == 10000.0
    assert int(f["general.file_type"].parts[-1][0]) == quantize_cmd.FILE_TYPE[qtype]
    assert int(f["general.quantization_version"].parts[-1][0]) == 2
    assert os.path.getsize(dst) < os.path.getsize(model)


@pytest.mark.parametrize("qtype", ["q4_K", "q6_K"])
def test_quantize_model_kquants(model, tmp_path, qtype):
    dst = tmp_path / f"tiny-{qtype}.gguf"
    rc, out, err = run_cli("quantize", str(model), str(dst), qtype, "--quiet")
    assert rc == 0 and err == ""
    r, t = tensors(dst)
    QTYPE = QT[qtype.upper()]
    for name in ("token_embd.weight", "blk.0.attn_q.weight", "blk.0.ffn_up.weight"):
        x = W[name].astype(np.float32)
        assert t[name].tensor_type == QTYPE
        raw = np.asarray(t[name].data)
        np.testing.assert_array_equal(raw.reshape(-1), quantize(x, qtype).reshape(-1))
        back = dequantize(raw, QTYPE).reshape(x.shape)
        nmse = ((back - x) ** 2).sum() / (x ** 2).sum()
        assert nmse < 0.01, (name, nmse)
    # "odd" (100 wide) is not a multiple of 256: kept, and reported
    assert t["blk.0.odd.weight"].tensor_type == QT.F32
    assert "blk.0.odd.weight" in out


def test_python_api_and_console_script(model, tmp_path):
    dst = tmp_path / "api.gguf"
    seen = []
    st = quantize_cmd.quantize_file(str(model), str(dst), "Q8_0", n_threads=1,
                                    progress=lambda *a: seen.append(a[:2]))
    assert seen[-1] == (len(W) + 2, len(W) + 2)
    assert set(st["quantized"]) == {"token_embd.weight", "blk.0.attn_q.weight",
                                    "blk.0.ffn_up.weight", BF16_NAME}
    assert st["out_bytes"] == os.path.getsize(dst)
    # python -m ggml_cy quantize, from another directory (the source tree would shadow)
    r = subprocess.run([sys.executable, "-m", "ggml_cy", "quantize", str(model),
                        str(tmp_path / "m.gguf"), "q4_0"], capture_output=True, text=True,
                       cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": os.pathsep.join(
                           p for p in sys.path if p)})
    assert r.returncode == 0, r.stderr
    assert "size:" in r.stdout


def test_bad_arguments(model, tmp_path):
    dst = str(tmp_path / "x.gguf")
    rc, _, err = run_cli("quantize", str(tmp_path / "missing.gguf"), dst, "q4_0")
    assert rc == 1 and "no such file" in err
    rc, _, err = run_cli("quantize", str(model), dst, "q9_9")
    assert rc == 1 and "unknown" in err
    rc, _, err = run_cli("quantize", str(model), dst, "iq2_xxs")
    assert rc == 1 and "cannot quantize" in err
    rc, _, err = run_cli("quantize", str(model), dst, "q8_K")
    assert rc == 1 and "cannot quantize" in err
    rc, _, err = run_cli("quantize", str(model), str(model), "q4_0")
    assert rc == 1 and "input" in err
    rc, _, err = run_cli("quantize", str(model), dst, "q4_0", "--threads", "0")
    assert rc == 1 and "threads" in err
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\xff" * 40)
    rc, _, err = run_cli("quantize", str(bad), dst, "q4_0")
    assert rc == 1 and "ggml-cy quantize:" in err
    assert not os.path.exists(dst)
    with pytest.raises(SystemExit):
        run_cli("quantize", str(model))


def test_memory_stays_near_one_tensor(tmp_path):
    """Tensor by tensor, chunk by chunk: converting 16 tensors of 1 MiB allocates (numpy and
    Python, traced) far less than the file, about one tensor's output and one chunk."""
    import tracemalloc
    src = tmp_path / "big.gguf"
    from ggml_cy.gguf import save
    rng = np.random.default_rng(3)
    save(str(src), {"general.architecture": "llama"},
         {f"blk.{i}.ffn.weight": rng.standard_normal((256, 1024)).astype(np.float32)
          for i in range(16)})
    dst = tmp_path / "big-q8.gguf"
    tracemalloc.start()
    try:
        quantize_cmd.quantize_file(str(src), str(dst), "q8_0", n_threads=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert os.path.getsize(src) > 16 << 20
    assert peak < 2 << 20, peak      # measured: ~0.3 MiB (one Q8_0 tensor)
    r, t = tensors(dst)
    assert len(t) == 16 and all(x.tensor_type == QT.Q8_0 for x in t.values())


def test_progress_bar_on_a_terminal(model, tmp_path):
    class Tty(io.StringIO):
        def isatty(self):
            return True
    out, err = Tty(), Tty()
    args = type("A", (), dict(input=str(model), output=str(tmp_path / "t.gguf"),
                              type="q8_0", threads=1, quiet=False))()
    assert quantize_cmd.run(args, out, err) == 0
    text = err.getvalue()
    n = len(W) + 2
    assert text.count("\r") == n and text.endswith("\n")
    assert f"{n}/{n} tensors" in text and "MB/s" in text and "#" * 30 in text
