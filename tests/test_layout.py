"""The package is layered (docs/architecture.md): every import points down the layers and
no module imports itself back through others. These tests read every module's imports and
cimports from the source (lazy imports inside functions count too) and also import each
module in a fresh interpreter, so a cycle or an upward import fails here."""
import ast
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

import ggml_cy

PKG = pathlib.Path(ggml_cy.__file__).resolve().parent
SRC = pathlib.Path(__file__).resolve().parents[1] / "ggml_cy"
if not (SRC / "core").is_dir():      # tests run against an install without the sources
    SRC = PKG

# Rank of each folder: a module may import modules of a lower rank, and of its own folder
# (as long as that makes no cycle). Front ends take ranks 5-7 in the order they use each
# other; "" is the top-level package (re-exports only); the CLI sits above it, since its demo
# shows the public API.
RANK = {"core": 0, "cpu": 1, "graph": 2, "backend": 3, "cuda": 4, "quants": 5.2,
        "ufuncs": 5, "gguf": 5.5, "expr": 6, "models": 7, "dask": 7, "numexpr": 7,
        "": 9, "cli": 10, "__main__": 11}
TOP_LEVEL_OK = {"__init__", "__main__", "_version", "_build_config", "_config", "context", "numexpr",
                "dask"}


def _modules():
    """module name -> source file (.py, .pyx, .pyx.tp, .pxd) for every module of the tree."""
    mods = {}
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in (".py", ".pyx", ".pxd", ".tp") or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(SRC.parent).as_posix()
        for suffix in (".pyx.tp", ".py", ".pyx", ".pxd"):
            if rel.endswith(suffix):
                rel = rel[: -len(suffix)]
                break
        else:
            continue
        if path.suffix == ".pyx" and (path.parent / (path.name + ".tp")).exists():
            continue                       # generated from the template beside it
        name = rel.replace("/", ".")
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        mods.setdefault(name, []).append(path)
    # (pkg) an install has compiled modules without their .pyx: known names, no sources
    # (per-CPU-level builds under _isa_*/ are the same modules)
    for path in sorted(SRC.rglob("*.so")):
        if path.name.startswith("lib") or path.parent.name.startswith("_isa_"):
            continue
        rel = path.relative_to(SRC.parent).as_posix()
        mods.setdefault(rel.split(".", 1)[0].replace("/", "."), [])
    return mods


_IMPORT_RE = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+c?import[ \t]+(\([^)]*\)|[^\n#]*)"
                        r"|c?import[ \t]+([\w., \t]+))", re.M)
_STRINGS_RE = re.compile(r'"""(?:.|\n)*?"""|\'\'\'(?:.|\n)*?\'\'\'')


def _resolve(name, modules):
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def _imports_of(path, modules):
    """The ggml_cy modules a source file imports: ``from a.b import c`` depends on module
    a.b.c when that is a module, else on a.b (c is an attribute of it)."""
    text = _STRINGS_RE.sub("", path.read_text())      # docstrings hold example code
    found = set()
    for m in _IMPORT_RE.finditer(text):
        if m.group(3):
            cands = [c.strip().split(" ")[0] for c in m.group(3).split(",")]
        else:
            base = m.group(1)
            names = [n.strip().split(" ")[0] for n in
                     m.group(2).replace("(", " ").replace(")", " ").replace("\\", " ")
                     .split(",") if n.strip()]
            cands = [f"{base}.{n}" if f"{base}.{n}" in modules else base for n in names]
        for c in cands:
            c = _resolve(c, modules)
            if c.startswith("ggml_cy"):
                found.add(c)
    return found


def _folder(name):
    """The layer folder of a module; "" for the top-level package and its modules, and
    "__main__" for ``python -m ggml_cy`` (a shim over the CLI)."""
    parts = name.split(".")
    if parts[-1] == "__main__" and len(parts) == 2:
        return "__main__"
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (SRC / parts[1]).is_dir()) else ""


def _graph():
    mods = _modules()
    return {name: set().union(*(_imports_of(p, mods) for p in paths)) - {name}
            for name, paths in mods.items()}


def test_every_folder_has_a_rank():
    folders = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders <= set(RANK), f"give these folders a layer rank: {folders - set(RANK)}"
    assert folders >= {"core", "cpu", "graph", "backend", "cuda", "ufuncs", "expr", "gguf", "cli"}
    top = {p.stem for p in SRC.glob("*.py")}
    assert top <= TOP_LEVEL_OK, f"modules outside the layer folders: {top - TOP_LEVEL_OK}"


def test_imports_point_down_the_layers():
    bad = []
    for name, deps in _graph().items():
        for dep in deps:
            src, dst = _folder(name), _folder(dep)
            if src != dst and RANK[dst] > RANK[src]:
                bad.append(f"{name} ({src or 'top'}) imports {dep} ({dst or 'top'}) above it")
    assert not bad, "\n".join(sorted(bad))


def test_no_import_cycles():
    graph = _graph()
    state, stack, cycles = {}, [], []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for d in sorted(graph.get(n, ())):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _importable():
    names = []
    for name, paths in _modules().items():
        if all(p.suffix == ".pxd" for p in paths):
            continue
        names.append(name)
    return names


def test_each_module_imports_in_isolation():
    """A fresh interpreter per module: a module that only works after another one was
    imported first (a hidden cycle or a missing import) fails here."""
    env = dict(os.environ, PYTHONPATH=str(PKG.parent))
    names = [n for n in _importable() if not n.endswith("__main__")]

    def run(name):
        r = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True,
                           text=True, cwd=str(PKG.parent.parent), env=env, timeout=120)
        return name, r.returncode, r.stderr[-2000:]

    # Front ends of optional extras import their dependency at the top and say which extra
    # to install when it is missing; without that dependency they are not importable alone.
    optional = {"ggml_cy.dask": "dask"}
    names = [n for n in names
             if n not in optional or importlib.util.find_spec(optional[n]) is not None]
    # a build without nvcc (CUDA_BUILT False) compiles no CUDA wrapper: its .pyx is in the
    # tree, its module is not (ggml_cy.cuda's Python side says so: test_cuda_nogpu.py)
    from ggml_cy import _build_config
    if not _build_config.CUDA_BUILT:
        names = [n for n in names if n != "ggml_cy.cuda._cuda"]
    with ThreadPoolExecutor(max_workers=4) as pool:
        failures = [(n, err) for n, rc, err in pool.map(run, names) if rc != 0]
    assert not failures, "\n\n".join(f"{n}:\n{err}" for n, err in failures)
