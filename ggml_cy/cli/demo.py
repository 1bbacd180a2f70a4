"""`python -m ggml_cy demo`: a short tour, one section per part of the project.

Sections are registered with the `section` decorator. The core's sections live here; other
parts add theirs in their own modules named ``ggml_cy/cli/demo_*.py`` (found and imported
by `run_demo`), for example ``ggml_cy/cli/demo_ops.py``::

    from ggml_cy.cli.demo import section

    @section(order=30, title="an op")
    def demo_add(out):
        out("ggml_cy.add([1, 2], [3, 4]) ->", ...)

`order` sorts the sections (core: 10-19, ops: 30-39, graph: 40-49, CUDA: 50-59); `out` is a
print-like callable. A section that raises is reported and the others still run.
"""
import importlib
import pkgutil

import numpy as np

_SECTIONS = []  # (order, title, function)


def section(order, title):
    """Registers fn(out) as a demo section (the decorator returns fn unchanged)."""
    def register(fn):
        if not any(f is fn for _, _, f in _SECTIONS):
            _SECTIONS.append((order, title, fn))
        return fn
    return register


def sections():
    """The registered sections, sorted by order: list of (order, title, function)."""
    return sorted(_SECTIONS, key=lambda s: (s[0], s[1]))


def _load_extensions():
    """Imports every ggml_cy.cli.demo_* module so that its sections register; returns the
    names that failed to import, with the error."""
    from ggml_cy import cli
    failed = []
    for mod in pkgutil.iter_modules(cli.__path__):
        if mod.name.startswith("demo_"):
            try:
                importlib.import_module(f"ggml_cy.cli.{mod.name}")
            except Exception as e:  # a broken extension must not hide the others
                failed.append((mod.name, e))
    return failed


def run_demo(out=print):
    """Runs every section; returns 0, or 1 when a section failed."""
    rc = 0
    for name, err in _load_extensions():
        out(f"[demo module {name} could not be imported: {type(err).__name__}: {err}]")
        rc = 1
    for order, title, fn in sections():
        out(f"== {title}")
        try:
            fn(out)
        except Exception as e:
            out(f"   [failed: {type(e).__name__}: {e}]")
            rc = 1
        out()
    return rc


# ------------------------------------------------------------------- core sections

@section(order=10, title="a context (ggml's memory arena)")
def demo_context(out):
    from ggml_cy import Context, tensor_overhead
    ctx = Context(1 << 16)
    out(f"ctx = Context(1 << 16)          -> {ctx!r}")
    out(f"tensor_overhead()               -> {tensor_overhead()} bytes per tensor "
        f"(32-byte object header + tensor struct)")
    ctx.new_tensor_2d("f32", 4, 3)
    out(f"after one 4x3 f32 tensor        -> used_mem() = {ctx.used_mem()} "
        f"(= {tensor_overhead()} + 48 data bytes)")


@section(order=11, title="tensors (ne[0] innermost; shape is ne reversed)")
def demo_tensors(out):
    from ggml_cy import Context
    ctx = Context(1 << 16)
    a = ctx.tensor_from(np.arange(12, dtype=np.float32).reshape(3, 4), name="a")
    out(f"a = ctx.tensor_from(np.arange(12.).reshape(3, 4))")
    out(f"  {a!r}")
    out(f"  a.shape = {a.shape}, a.strides = {a.strides}, a.nbytes = {a.nbytes}")
    from ggml_cy import bfloat16_to_float32
    b = ctx.tensor_from([0.1, 1 / 3, 3.0], type="bf16", name="b")
    out(f"b = ctx.tensor_from([0.1, 1/3, 3.0], type='bf16') -> {b!r}")
    out(f"  bits {b.numpy()} read back as {bfloat16_to_float32(b.numpy())}")


@section(order=12, title="views share the parent's memory")
def demo_views(out):
    from ggml_cy import Context
    ctx = Context(1 << 16)
    a = ctx.tensor_from(np.arange(12, dtype=np.float32).reshape(3, 4), name="a")
    t = a.transpose()
    out(f"t = a.transpose()               -> {t!r}")
    out("  t.numpy() =\n" + _indent(t.numpy()))
    v = ctx.view_2d(a, 2, 3, a.nb[1], 4)   # columns 1..2 of every row
    out(f"v = ctx.view_2d(a, 2, 3, nb1={a.nb[1]}, offset=4) -> {v!r}")
    v.numpy()[:] = -1
    out("  after v.numpy()[:] = -1, a.numpy() =\n" + _indent(a.numpy()))


def _indent(arr, pad="    "):
    return "\n".join(pad + line for line in str(arr).splitlines())
