"""Type information: py.typed, a stub for every compiled module naming every public name
(classes: every public attribute), stubs for the re-exporting packages, and mypy --strict
on examples/."""
import ast
import glob
import importlib
import inspect
import os
import shutil
import subprocess
import sys

import pytest

import ggml_cy

PKG = os.path.dirname(os.path.abspath(ggml_cy.__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _compiled_modules():
    mods = []
    for path in sorted(glob.glob(os.path.join(PKG, "**", "*.so"), recursive=True)):
        if os.path.basename(path).startswith("lib"):
            continue
        if "_isa_" in path:   # (pkg) a per-CPU-level build of a module that has its stub
            continue
        rel = os.path.relpath(path, os.path.dirname(PKG))
        stem = os.path.join(os.path.dirname(path), os.path.basename(path).split(".", 1)[0])
        mods.append((rel.split(".", 1)[0].replace(os.sep, "."), stem + ".pyi"))  # (pkg) a
        # dot in a parent folder (mktemp's /tmp/tmp.XXXX) must not cut the path
    return mods


def _is_api(mod, name):
    obj = getattr(mod, name)
    if inspect.ismodule(obj):
        return False
    if isinstance(obj, type) and hasattr(obj, "_fields"):
        return True
    owner = getattr(obj, "__module__", None)
    if (isinstance(obj, type) or callable(obj)) and owner and owner != mod.__name__ \
            and not owner.startswith("ggml_cy"):
        return False
    return True


def _stub_names(tree):
    """top-level names of a stub -> set of names in its class body (None: not a class)."""
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            body = set()
            for b in node.body:
                if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    body.add(b.name)
                elif isinstance(b, ast.AnnAssign) and isinstance(b.target, ast.Name):
                    body.add(b.target.id)
                elif isinstance(b, ast.Assign):
                    body.update(t.id for t in b.targets if isinstance(t, ast.Name))
            names[node.name] = body
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names[node.name] = None
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = None
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names[t.id] = None
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                names[a.asname or a.name] = None
    return names


def test_py_typed_and_package_data():
    assert os.path.exists(os.path.join(PKG, "py.typed"))
    setup = open(os.path.join(ROOT, "setup.py")).read()
    assert '"*.pyi"' in setup and '"py.typed"' in setup


@pytest.mark.parametrize("modname,stub", _compiled_modules())
def test_every_public_name_has_a_stub(modname, stub):
    assert os.path.exists(stub), f"{modname} has no stub: run tools/gen_stubs.py"
    tree = ast.parse(open(stub).read())
    have = _stub_names(tree)
    mod = importlib.import_module(modname)
    missing = []
    for name in (n for n in dir(mod) if not n.startswith("_")):
        if not _is_api(mod, name):
            continue
        if name not in have:
            missing.append(name)
            continue
        obj = getattr(mod, name)
        if isinstance(obj, type) and have[name] is not None and obj.__module__ == modname:
            attrs = set(dir(obj)) | set(vars(obj))
            for a in sorted(x for x in attrs if not x.startswith("_")):
                inherited = any(a in vars(b) for b in obj.__mro__[1:]) and a not in vars(obj)
                if not inherited and a not in have[name]:
                    missing.append(f"{name}.{a}")
    assert not missing, f"{stub} lacks {missing}: run tools/gen_stubs.py"


def test_reexporting_packages_have_stubs():
    from ggml_cy import ufuncs
    have = _stub_names(ast.parse(open(os.path.join(PKG, "ufuncs", "__init__.pyi")).read()))
    assert not [n for n in ufuncs.__all__ if n not in have]
    from ggml_cy.graph.context import Context
    ctx_stub = _stub_names(ast.parse(open(os.path.join(PKG, "graph", "context.pyi")).read()))
    core_stub = _stub_names(ast.parse(open(os.path.join(PKG, "core", "_core.pyi")).read()))
    builders = [n for n in vars(Context) if not n.startswith("_")]
    assert not [n for n in builders if n not in ctx_stub["Context"]]
    inherited = [n for n in dir(Context) if not n.startswith("_") and n not in vars(Context)]
    assert not [n for n in inherited if n not in core_stub["Context"]]


def _mypy_env():
    """(pkg) An in-place build: ggml_cy through MYPYPATH from the tree's root. An install:
    mypy finds it in site-packages itself (and refuses site-packages in MYPYPATH)."""
    import tempfile
    env = dict(os.environ)
    if os.path.realpath(os.path.dirname(PKG)) == os.path.realpath(ROOT):
        env["MYPYPATH"] = os.path.dirname(PKG)
        return env, os.path.dirname(PKG)
    env.pop("MYPYPATH", None)
    return env, tempfile.mkdtemp(prefix="ggml_cy_child_")


def test_mypy_strict_on_examples():
    pytest.importorskip("mypy")
    env, cwd = _mypy_env()
    extra = []
    try:
        import dask.array  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:     # the dask example needs the optional extra
        extra = ["--exclude", "dask_evaluate"]
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
                        "--no-incremental", *extra, os.path.join(ROOT, "examples")],
                       capture_output=True, text=True, env=env, cwd=cwd,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_sees_the_stubs(tmp_path):
    """A wrong argument type is reported: the stubs are in use, not Any."""
    pytest.importorskip("mypy")
    bad = tmp_path / "bad.py"
    bad.write_text("import ggml_cy\nctx = ggml_cy.Context(1 << 20)\n"
                   "t = ctx.new_tensor_2d('f32', 'x', 1)\n")
    env, cwd = _mypy_env()
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
                        "--no-incremental", str(bad)], capture_output=True, text=True,
                       env=env, cwd=cwd, timeout=600)
    assert r.returncode == 1 and "new_tensor_2d" in r.stdout, r.stdout + r.stderr
