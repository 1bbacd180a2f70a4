"""The benchmark harness runs end to end on tiny sizes (no timing is asserted: speed belongs
in bench/, not in tests). bench/ is loaded from the source tree by path, without putting the
repository root on sys.path, so that an installed ggml_cy (CI) is not shadowed by the
unbuilt sources."""
import importlib
import importlib.util
import io
import json
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _bench(submodule=None):
    if "bench" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "bench", ROOT / "bench" / "__init__.py",
            submodule_search_locations=[str(ROOT / "bench")])
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench"] = module
        spec.loader.exec_module(module)
    return importlib.import_module(f"bench.{submodule}") if submodule else sys.modules["bench"]


def _readonly(x):
    x.setflags(write=False)
    return x


def _run(suite, tmp_path, capsys):
    main = _bench("__main__").main
    path = tmp_path / f"{suite}.json"
    assert main([suite, "--smoke", "--threads", "2", "--json", str(path)]) == 0
    printed = capsys.readouterr()
    doc = json.loads(path.read_text())
    return doc, printed.out, printed.err


def _check_ggml_cy_rows(doc):
    for r in doc["results"]:
        assert "ggml_cy" not in r["errors"], (r["name"], r["errors"])
        assert "ggml_cy" not in r["mismatches"], (r["name"], r["mismatches"])


def test_cpu_suite_smoke(tmp_path, capsys):
    doc, out, err = _run("cpu", tmp_path, capsys)
    names = [r["name"] for r in doc["results"]]
    assert "add f32 n=16" in names and "add f16 n=1e3" in names
    assert any(n.startswith("a.T+b") for n in names)
    for r in doc["results"]:
        assert "numpy" in r["timings"], r
        assert r["timings"]["numpy"]["median_s"] > 0
        assert r["nbytes"] > 0
    _check_ggml_cy_rows(doc)
    meta = doc["meta"]
    assert meta["threads"] == 2 and meta["suite"] == "cpu"
    assert "cpu" in meta["machine"] and "numpy" in meta["versions"]
    assert "roofline" in doc
    assert "machine :" in out and "build   :" in out and "case" in out
    assert "[  1/" in err  # progress goes to stderr


def test_graph_suite_smoke(tmp_path, capsys):
    doc, out, _ = _run("graph", tmp_path, capsys)
    names = [r["name"] for r in doc["results"]]
    assert names[0].startswith("a*b + c*d - e") and names[2].startswith("mul_mat")
    for r in doc["results"]:
        assert "numpy" in r["timings"], r
    _check_ggml_cy_rows(doc)
    assert "targets:" in out


def test_cpu_suite_reports_the_fastest_peer(tmp_path, capsys):
    """issue 14: every row has xbest (ggml_cy against the fastest of numpy/numexpr/torch)."""
    doc, out, _ = _run("cpu", tmp_path, capsys)
    assert "xbest" in out
    r = next(r for r in doc["results"] if r["name"] == "add f32 n=1e3")
    peers = [r["timings"][p]["median_s"] for p in ("numpy", "numexpr", "torch")
             if p in r["timings"]]
    want = min(peers) / r["timings"]["ggml_cy"]["median_s"]
    assert r["ratios"]["vs_best"] == pytest.approx(want)
    assert any(t["label"] == "best>=1" for t in r["targets"])


def test_cpu_in_case_roofline():
    """Cases with the beyond-cache target time the non-temporal STREAM add in their own turns
    (arrays of the case's byte count); /roofNT is taken against it there, against the run's
    roofline elsewhere."""
    cpu, harness = _bench("cpu"), _bench("_harness")
    roofline = _bench("roofline").load()
    a = np.ones(3000, np.float32)
    out = np.empty_like(a)
    base = harness.Case("add", lambda: harness.Setup(
        {"ggml_cy": harness.Call(np.add, a, a, out=out)}, nbytes=3 * a.nbytes,
        reference=a + a), targets=[cpu.NT_TARGET])
    case = cpu.with_case_roofline(base, roofline, 2)
    assert case.name == "add" and case.targets == [cpu.NT_TARGET]
    setup = case.setup()
    assert set(setup.impls) == {"ggml_cy", cpu.IN_CASE_ROOF}
    roof_call = setup.impls[cpu.IN_CASE_ROOF]
    assert not roof_call.check and roof_call.args[0].size == 3000   # 3 arrays, same bytes
    opts = harness.Options.make(2, smoke=True, progress=None)
    res = harness.measure(case, opts)
    assert set(res.timings) == {"ggml_cy", cpu.IN_CASE_ROOF} and not res.mismatches
    ratio = cpu.roofline_nt_fraction("ggml_cy", 1e-9)
    assert ratio.fn(res) == pytest.approx(res.gbps("ggml_cy") / res.gbps(cpu.IN_CASE_ROOF))
    plain = harness.measure(base, opts)
    assert ratio.fn(plain) == pytest.approx(plain.gbps("ggml_cy") / 1e-9)
    assert cpu.roofline_nt_fraction("ggml_cy", None).fn(plain) is None


def test_scaling_suite_smoke(tmp_path, capsys):
    doc, out, _ = _run("scaling", tmp_path, capsys)
    names = [r["name"] for r in doc["results"]]
    assert names == ["add n=1e3 t=1", "add n=1e3 t=2", "(8,8)+(8,) t=1", "(8,8)+(8,) t=2",
                     "a*b + c*d - e n=1e3 t=1", "a*b + c*d - e n=1e3 t=2"]
    _check_ggml_cy_rows(doc)
    for r in doc["results"]:
        assert "numpy" in r["timings"] and r["ratios"]["vs_best"] > 0
        assert r["params"]["threads"] in (1, 2)
        if r["params"]["threads"] == 1:
            assert r["ratios"]["vs_t1"] == pytest.approx(1.0)
    assert doc["thread_counts"] == [1, 2]
    fused = [r for r in doc["results"] if r["params"]["case"] == "fused"]
    assert all("C loop NT" in r["timings"] and "vs_c_best" in r["ratios"] for r in fused)
    assert "xT1" in out


def test_scaling_thread_counts():
    counts = _bench("scaling").thread_counts
    assert counts(1) == [1]
    assert counts(2) == [1, 2]
    assert counts(16) == [1, 2, 4, 8, 16]
    assert counts(12) == [1, 2, 4, 8, 12]


def test_gpu_frame_on_a_fake_device(tmp_path):
    frame = _bench("gpu_frame")
    harness = _bench("_harness")
    opts = harness.Options.make(threads=1, smoke=True, progress=None)

    def build(env):
        def setup():
            a = np.arange(64, dtype=np.float32)
            out = np.empty_like(a)
            return frame.Setup({"ggml_cy": frame.Call(np.add, a, a, out=out),
                                "torch": frame.Call(np.add, a, a, out=out)},
                               nbytes=3 * a.nbytes, reference=a + a, sync=env["sync"],
                               compare=frame.device_compare)
        return [frame.Case("add 64", setup, targets=[frame.Target("torch>=0", "vs_torch", 0)])]

    synced = []
    out = io.StringIO()
    path = tmp_path / "gpu.json"
    doc = frame.run_device_suite(build, opts, {"name": "Fake Device"}, lambda: synced.append(1),
                                 json_path=str(path), out=out)
    assert synced, "the sync hook runs inside the timing"
    saved = json.loads(path.read_text())
    assert saved["meta"]["device"]["name"] == "Fake Device"
    assert doc["results"][0]["targets"][0]["passed"] is True
    assert "Fake Device" in out.getvalue()


def test_measure_batches_small_calls():
    harness = _bench("_harness")
    opts = harness.Options(threads=1, repeat=3, budget_s=0.001, min_sample_s=1e-4,
                           progress=None)
    case = harness.Case("noop", lambda: harness.Setup({"f": harness.Call(len, ())}))
    res = harness.measure(case, opts)
    t = res.timings["f"]
    assert t.inner > 1 and t.samples >= 3 and 0 < t.min_s <= t.median_s


def test_blocks_warm_up_for_a_time_before_sampling(monkeypatch):
    """With blocks, each library's block starts after the pause with untimed calls for
    warm_s (at least warm_each of them): the pause is recorded where the harness sleeps,
    every call with its start time."""
    import time
    harness = _bench("_harness")
    opts = harness.Options(threads=2, repeat=3, budget_s=0.001, min_sample_s=1e-4,
                           progress=None)
    events = []
    real_sleep = time.sleep
    monkeypatch.setattr(harness.time, "sleep", lambda s: (events.append(("pause", None, 0.0)),
                                                          real_sleep(s)))

    def call(lib):
        t = time.perf_counter()
        events.append(("call", lib, t))
        while time.perf_counter() - t < 0.001:     # 1 ms of work (no sleep: it is patched)
            pass
    setup = harness.Setup({lib: harness.Call(call, lib) for lib in "ab"}, blocks=True,
                          settle_s=0.001, warm_each=2, warm_s=0.03, rounds=1)
    res = harness.measure(harness.Case("warm", lambda: setup), opts)
    for lib in "ab":
        n = res.timings[lib].samples
        assert n >= 3
        mine = [i for i, e in enumerate(events) if e[:2] == ("call", lib)]
        timed = mine[-n:]
        pause = max(i for i, e in enumerate(events[:timed[0]]) if e[0] == "pause")
        warm = [i for i in mine if pause < i < timed[0]]
        assert len(warm) >= 2
        # (1 ms for the stamps being taken inside the calls: two warm calls alone span ~2)
        assert events[timed[0]][2] - events[warm[0]][2] >= 0.03 - 0.001
        assert all(events[i][1] == lib for i in range(pause + 1, timed[-1] + 1))


def test_measure_reports_errors_and_mismatches():
    harness = _bench("_harness")
    opts = harness.Options.make(threads=1, smoke=True, progress=None)
    ref = np.zeros(3)

    def boom():
        raise RuntimeError("kernel exploded")
    case = harness.Case("bad", lambda: harness.Setup(
        {"wrong": harness.Call(np.ones, 3), "raises": harness.Call(boom),
         "right": harness.Call(np.zeros, 3)}, reference=ref))
    res = harness.measure(case, opts)
    assert "raises" in res.errors and "kernel exploded" in res.errors["raises"]
    assert "wrong" in res.mismatches and "right" not in res.mismatches
    assert "right" in res.timings


def test_bad_command_lines():
    main = _bench("__main__").main
    for argv in (["nosuch"], ["cpu", "--threads", "0"], ["cpu", "--repeat", "0"]):
        with pytest.raises(SystemExit):
            main(argv)


def test_roofline_loops():
    roofline = _bench("roofline").load()
    rng = np.random.default_rng(0)
    a, b = rng.random(1003, dtype=np.float32), rng.random(1003, dtype=np.float32)
    for nontemporal in (False, True):
        for threads in (1, 2, 3):
            c = np.empty_like(a)
            roofline.stream_add_f32(a, b, c, threads, nontemporal)
            assert np.array_equal(c, a + b)
            d = np.empty_like(a)
            roofline.fused_abcde_f32(a, b, a, b, a, d, threads, nontemporal)
            assert np.allclose(d, a * b + a * b - a, rtol=1e-6)
        c = np.empty_like(a)
        assert roofline.fill_f32(c, 2.5, threads) is c and np.all(c == 2.5)
    empty = np.empty(0, np.float32)
    roofline.stream_add_f32(empty, empty, empty, 2, True)
    roofline.fill_f32(empty, 1.0, 2)


@pytest.mark.parametrize("bad", [
    lambda r, a: r.stream_add_f32(a, a[:5], np.empty_like(a)),          # lengths differ
    lambda r, a: r.stream_add_f32(a, a, np.empty_like(a), 0),           # no threads
    lambda r, a: r.stream_add_f32(a, a, np.empty_like(a), "2"),         # not an int
    lambda r, a: r.stream_add_f32(a.astype(np.float64), a, np.empty_like(a)),  # dtype
    lambda r, a: r.stream_add_f32(a[::2], a[::2], np.empty_like(a[::2])),  # strided
    lambda r, a: r.stream_add_f32(a, a, None),                          # no output
    lambda r, a: r.stream_add_f32(a, a, _readonly(np.empty_like(a))),  # read-only output
    lambda r, a: r.fused_abcde_f32(a, a, a, a, a[:3], np.empty_like(a)),
    lambda r, a: r.fill_f32(_readonly(np.empty_like(a)), 1.0),          # read-only output
    lambda r, a: r.fill_f32(a.astype(np.float64), 1.0),                 # dtype
    lambda r, a: r.fill_f32(a, 1.0, 0),                                  # no threads
])
def test_roofline_rejects_bad_input(bad):
    roofline = _bench("roofline").load()
    a = np.ones(16, np.float32)
    with pytest.raises((ValueError, TypeError)):
        bad(roofline, a)


def test_quant_suite_smoke(tmp_path, capsys):
    pytest.importorskip("gguf")
    doc, out, _ = _run("quant", tmp_path, capsys)
    names = [r["name"] for r in doc["results"]]
    for t in ("Q8_0", "Q4_0", "Q4_K", "Q6_K", "IQ4_XS"):
        assert f"dequantize {t} -> f32" in names
    _check_ggml_cy_rows(doc)                 # bitwise equal to gguf-py
    for r in doc["results"]:
        if r["name"].startswith("dequantize"):
            assert "gguf-py" in r["timings"] and r["nbytes"] > 0
    assert doc["meta"]["suite"] == "quant" and "xgguf" in out


def test_matmul_suite_smoke(tmp_path, capsys):
    """issue 14 item 3: f32/f16/bf16 x three shapes, ggml_cy's results within ggml's NMSE."""
    doc, out, _ = _run("matmul", tmp_path, capsys)
    names = [r["name"] for r in doc["results"]]
    assert len(names) == 9 and names[0] == "mul_mat f32 64x64x64" and "bf16" in names[-1]
    for r in doc["results"]:
        assert r["timings"]["ggml_cy"]["median_s"] > 0 and "numpy" in r["timings"], r
    _check_ggml_cy_rows(doc)
    assert "torch>=0.9" in out
