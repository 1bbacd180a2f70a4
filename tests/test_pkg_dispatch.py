"""Runtime CPU dispatch (issue 14 item 4, issue 16 item 2): the hot kernel modules are built
per level (baseline x86-64-v2, avx2 = x86-64-v3, avx512 = x86-64-v4) and the best level the
CPU has is loaded at import; GGML_CY_CPU_FEATURES caps it."""
import io
import json
import os
import subprocess
import sys
import types

import pytest

import ggml_cy
from ggml_cy import _config
from ggml_cy.core import _startup

try:
    from ggml_cy import _build_config as CFG
except ImportError:           # pragma: no cover
    CFG = None
BUILT = dict(getattr(CFG, "LEVELS", {}) or {})
V2 = set(_startup.X86_LEVELS["baseline"])
V3 = V2 | set(_startup.X86_LEVELS["avx2"])
V4 = V3 | set(_startup.X86_LEVELS["avx512"])
V4VNNI = V4 | set(_startup.X86_LEVELS["avx512vnni"])
ALL_BUILT = {"avx2": ["avx2", "fma", "f16c"], "avx512": ["avx2", "fma", "avx512f", "avx512bw"]}


def test_choose_level_rules():
    c = _startup.choose_level
    assert c(ALL_BUILT, {}, frozenset(V4))[0] == "avx512"
    assert c(ALL_BUILT, {}, frozenset(V3))[0] == "avx2"
    assert c(ALL_BUILT, {}, frozenset(V2))[0] == "baseline"
    assert c(ALL_BUILT, {}, frozenset())[0] == "baseline"                # unknown CPU
    assert c({}, {}, frozenset(V4))[0] == "baseline"                     # nothing built
    assert c(ALL_BUILT, {"GGML_CY_CPU_FEATURES": "avx2"}, frozenset(V4))[0] == "avx2"
    assert c(ALL_BUILT, {"GGML_CY_CPU_FEATURES": "BASELINE"}, frozenset(V4))[0] == "baseline"
    # a cap above the CPU never raises the level
    assert c(ALL_BUILT, {"GGML_CY_CPU_FEATURES": "avx512"}, frozenset(V3))[0] == "avx2"
    level, why = c({"avx2": ["avx2"]}, {}, frozenset(V4))
    assert level == "avx2" and "avx512 kernels not built" in why
    with pytest.warns(RuntimeWarning, match="GGML_CY_CPU_FEATURES"):
        assert c(ALL_BUILT, {"GGML_CY_CPU_FEATURES": "sse9"}, frozenset(V4))[0] == "avx512"
    # avx512vnni: only on a CPU with VNNI and a build that has it
    vnni = dict(ALL_BUILT, avx512vnni=ALL_BUILT["avx512"] + ["avx512vnni"])
    assert c(vnni, {}, frozenset(V4VNNI))[0] == "avx512vnni"
    assert c(vnni, {}, frozenset(V4))[0] == "avx512"
    assert c(ALL_BUILT, {}, frozenset(V4VNNI))[0] == "avx512"
    assert c(vnni, {"GGML_CY_CPU_FEATURES": "avx512"}, frozenset(V4VNNI))[0] == "avx512"


def test_module_levels_take_the_next_lower_build():
    # a level that builds only some modules (avx512vnni): the others load from below
    built = {"avx2": [], "avx512": [], "avx512vnni": []}
    mods = ["m.a", "m.b"]
    got = _startup.module_levels("avx512vnni", mods, built, {"avx512vnni": ["m.b"]})
    assert got == {"m.a": "avx512", "m.b": "avx512vnni"}
    assert _startup.module_levels("avx512", mods, built, {"avx512vnni": ["m.b"]}) == \
        {"m.a": "avx512", "m.b": "avx512"}
    assert _startup.module_levels("avx512vnni", mods, {"avx2": []}, None) == \
        {"m.a": "avx2", "m.b": "avx2"}
    assert _startup.module_levels("baseline", mods, built, None) == \
        {"m.a": "baseline", "m.b": "baseline"}


def test_missing_variant_files_fall_back_to_baseline(tmp_path, monkeypatch):
    # CI runs this file with GGML_CY_CPU_FEATURES set (one run per level): the cap would
    # decide the level before the missing files do
    monkeypatch.delenv("GGML_CY_CPU_FEATURES", raising=False)
    monkeypatch.setattr(_startup, "dispatch_state", {})
    monkeypatch.setattr(_startup, "_cpu_flags_cache", frozenset(V4))
    cfg = types.SimpleNamespace(DISPATCHED=["ggml_cy.cpu._nothing"], LEVELS=ALL_BUILT)
    assert _startup.install_dispatch(str(tmp_path), cfg) == "baseline"
    assert "missing" in _startup.dispatch_state["reason"]
    assert not any(isinstance(f, _startup._LevelFinder) for f in sys.meta_path)


_PROBE = r"""
import json, sys
import numpy as np
import ggml_cy
from ggml_cy.core import _startup
rng = np.random.default_rng(0)
a32, b32 = rng.standard_normal((2, 4099)).astype(np.float32)
a16, b16 = a32.astype(np.float16), b32.astype(np.float16)
res = {
  "add": ggml_cy.add(a32, b32).tobytes().hex(),
  "div16": ggml_cy.divide(a16, b16).tobytes().hex(),
  "cvt": ggml_cy.astype(a32, np.float16).tobytes().hex(),
  "max": ggml_cy.maximum(a32, b32).tobytes().hex(),
  "eval": ggml_cy.evaluate("a*b-a/b", a=a32, b=b32).tobytes().hex(),
}
# issue 14 (math): the vectorized float32 math functions (compared by MATH_RULE below)
for f in ("exp", "log", "sin", "cos", "tanh", "sigmoid", "silu"):
    res["m_" + f] = getattr(ggml_cy, f)(a32 * 30).tobytes().hex()
ctx = ggml_cy.Context(1 << 22)
x = ctx.tensor_from(a32.reshape(1, -1)[:, :4096].reshape(64, 64))
y = ctx.tensor_from(b32[:4096].reshape(64, 64))
g = ctx.new_graph(); out = ctx.mul(ctx.add(x, y), y); g.build_forward_expand(out); g.compute(2)
res["graph"] = out.numpy().tobytes().hex()
try:                                  # quantize / dequantize (dispatched modules too)
    from ggml_cy import quants
    w = rng.standard_normal((4, 256)).astype(np.float32)
    for qt in ("Q8_0", "Q4_K", "Q6_K"):
        if qt in [str(getattr(t, "name", t)) for t in quants.quantizable_types()]:
            raw = quants.quantize(w, qt)
            res["q_" + qt] = np.asarray(raw).tobytes().hex()
            res["dq_" + qt] = quants.dequantize(raw, qt, w.shape).tobytes().hex()
            res["dq16_" + qt] = quants.dequantize(raw, qt, w.shape, dtype=np.float16).tobytes().hex()
    # quantized mul_mat (vecdot.h: integer dots; avx512vnni's vpdpbusd gives the same int32
    # sums as avx2's vpmaddubsw + vpmaddwd), eager and in the graph; 1 and 9 columns
    for qt in ("Q4_0", "Q8_0", "Q5_0", "Q4_1", "Q4_K", "Q6_K"):
        raw = quants.quantize(rng.standard_normal((40, 512)).astype(np.float32), qt)
        for n in (1, 9):
            bq = rng.standard_normal((n, 512)).astype(np.float32)
            res["mm_%s_%d" % (qt, n)] = ggml_cy.mul_mat(raw, bq, qt, n_threads=2).tobytes().hex()
        qctx = ggml_cy.Context(1 << 22)
        qa = qctx.new_tensor(getattr(ggml_cy.GGMLType, qt), (512, 40))
        qa.raw()[...] = raw
        qb = qctx.tensor_from(bq)
        qg = qctx.new_graph(); qo = qctx.mul_mat(qa, qb); qg.build_forward_expand(qo); qg.compute(2)
        res["mmg_" + qt] = qo.numpy().tobytes().hex()
except ImportError:
    pass
files = {m: sys.modules[m].__file__ for m in _startup.dispatch_state["modules"]}
print(json.dumps({"level": _startup.dispatch_state["level"], "files": files, "res": res,
                  "module_levels": _startup.dispatch_state.get("module_levels", {}),
                  "finders": sum(isinstance(f, _startup._LevelFinder) for f in sys.meta_path)}))
"""


def _probe(level):
    import os
    env = dict(os.environ)
    env.pop("GGML_CY_CPU_FEATURES", None)
    if level:
        env["GGML_CY_CPU_FEATURES"] = level
    import tempfile
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(ggml_cy.__file__))  # this ggml_cy,
    r = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                       env=env, timeout=300, cwd=tempfile.mkdtemp(prefix="ggml_cy_child_"))  # no tree shadowing
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not BUILT, reason="a single-level build (GGML_CY_MARCH / GGML_CY_NATIVE)")
def test_each_level_loads_its_build_and_agrees_bitwise():
    cpu = _startup.cpu_level()
    if cpu is None:
        pytest.skip("CPU features unknown")
    levels = [lv for lv in _startup.LEVEL_NAMES
              if _startup.LEVEL_NAMES.index(lv) <= _startup.LEVEL_NAMES.index(cpu)
              and (lv == "baseline" or lv in BUILT)]
    results = {lv: _probe(lv) for lv in levels}
    level_modules = getattr(CFG, "LEVEL_MODULES", {}) or {}
    for lv, r in results.items():
        assert r["level"] == lv and r["finders"] == 0
        want = _startup.module_levels(lv, list(r["files"]), BUILT, level_modules)
        assert r["module_levels"] == want
        for mod, path in r["files"].items():
            if want[mod] == "baseline":
                assert "_isa_" not in path, (mod, path)
            else:
                assert f"_isa_{want[mod]}{os.sep}" in path, (mod, path)
        if lv in level_modules:        # a partial level loads its own modules
            assert all(want[m] == lv for m in level_modules[lv])
    base = results["baseline"]["res"]
    for lv, r in results.items():
        for k, v in r["res"].items():
            if k.startswith(("m_", "mm")):
                continue
            assert v == base[k], f"{k} differs between baseline and {lv}"
    _check_mul_mat_levels({lv: r["res"] for lv, r in results.items()})
    _check_math_levels({lv: r["res"] for lv, r in results.items()})
    assert _probe(None)["level"] == levels[-1]           # default: the best the CPU has


def _check_mul_mat_levels(res):
    """Quantized mul_mat: every SIMD level (avx2, avx512, avx512vnni) gives the same bits
    (the same int32 lane sums, then the same float operations); the baseline's plain C sums
    each block whole, so it is only close (ggml's NMSE 5e-4 is checked by
    tests/test_quant_mul_mat.py)."""
    import numpy as np
    fast = [lv for lv in res if lv != "baseline"]
    for k in [k for k in res["baseline"] if k.startswith("mm")]:
        for lv in fast[1:]:
            assert res[lv][k] == res[fast[0]][k], f"{k}: {lv} != {fast[0]}"
        ref = np.frombuffer(bytes.fromhex(res["baseline"][k]), np.float32).astype(np.float64)
        for lv in fast:
            got = np.frombuffer(bytes.fromhex(res[lv][k]), np.float32).astype(np.float64)
            assert np.sum((got - ref) ** 2) <= 1e-8 * np.sum(ref ** 2), (k, lv)
    # eager and graph agree (the same kernel)
    for lv in res:
        for qt in [k[4:] for k in res[lv] if k.startswith("mmg_")]:
            assert res[lv]["mmg_" + qt] == res[lv]["mm_%s_9" % qt], (lv, qt)


def _check_math_levels(res):
    """The SIMD math functions (csrc/simd_math.h, README "Math functions"): avx2 and avx512
    agree bit for bit (the same operations, FMA contracted alike); the baseline has no FMA,
    so it may differ from them by 1 ulp, no more -- 3 for sigmoid and silu, whose float-lane
    forms stack three roundings on exp's (within 2.5 / 3.5 ulp of the exact value at every
    level: tests/test_simd_math.py)."""
    import numpy as np
    fast = [lv for lv in res if lv != "baseline"]
    for k in [k for k in res["baseline"] if k.startswith("m_")]:
        arrs = {lv: np.frombuffer(bytes.fromhex(res[lv][k]), np.int32).astype(np.int64)
                for lv in res}
        for lv in fast[1:]:
            assert np.array_equal(arrs[lv], arrs[fast[0]]), f"{k}: {lv} != {fast[0]}"
        for lv in fast:
            ia, ib = arrs[lv], arrs["baseline"]
            ia = np.where(ia < 0, -(ia & 0x7fffffff), ia)
            ib = np.where(ib < 0, -(ib & 0x7fffffff), ib)
            tol = 3 if k in ("m_sigmoid", "m_silu") else 1
            assert np.abs(ia - ib).max() <= tol, f"{k}: baseline vs {lv} beyond {tol} ulp"


def test_show_config_names_the_level_in_use():
    buf = io.StringIO()
    ggml_cy.show_config(file=buf)
    line = [ln for ln in buf.getvalue().splitlines() if ln.startswith("dispatch:")][0]
    assert _startup.dispatch_state["level"] in line
    # every built level's line: its name, then its flags, apart (the names differ in length)
    built = _config.config()["build_levels"]
    for ln in buf.getvalue().splitlines():
        if ln.startswith("  level "):
            name, rest = ln[len("  level "):].split(" ", 1)
            assert name in built, ln
            assert rest.split() == list(built[name]), ln
