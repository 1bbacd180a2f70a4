"""Importing the libraries the bench compares, and giving each the same thread count.

ggml_cy is found the way `python -m bench` finds it: from the repository root, the source
tree's `ggml_cy/` comes first on sys.path. If that tree was never built in place it has no
compiled modules; the bench then falls back to an installed ggml_cy (`pip install .`), and
when there is none it stops with a message saying how to build.
"""
from __future__ import annotations

import importlib
import importlib.util
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]


class GgmlCyMissing(SystemExit):
    """ggml_cy cannot be imported: the message says how to build it."""


def _purge(name):
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[mod]


def _in_repo(path):
    try:
        return pathlib.Path(path or ".").resolve() == REPO
    except OSError:
        return False


def load_ggml_cy():
    """Import ggml_cy. Returns (module, note or None); raises GgmlCyMissing when impossible."""
    try:
        import ggml_cy
        return ggml_cy, None
    except ImportError as exc:
        error = exc
    spec = importlib.util.find_spec("ggml_cy")
    origin = pathlib.Path(spec.origin).resolve() if spec and spec.origin else None
    from_source = origin is not None and REPO in origin.parents
    if from_source:
        # The unbuilt source tree shadows any installed copy: look behind it.
        saved = list(sys.path)
        sys.path[:] = [p for p in sys.path if not _in_repo(p)]
        _purge("ggml_cy")
        try:
            import ggml_cy
            return ggml_cy, (f"note: the source tree {REPO / 'ggml_cy'} is not built in place "
                             f"({error}); using the installed ggml_cy at "
                             f"{pathlib.Path(ggml_cy.__file__).parent}")
        except ImportError:
            sys.path[:] = saved
            _purge("ggml_cy")
        raise GgmlCyMissing(
            f"ggml_cy imported from the source tree ({REPO / 'ggml_cy'}) is not built "
            f"(or only partly):\n    {type(error).__name__}: {error}\n"
            "Build it in place first, from the repository root:\n"
            "    tools/build.sh            (or: python setup.py build_ext --inplace)\n"
            "or install it (pip install .) and run `python -m bench ...` from the repository "
            "root again:\nthe bench then uses the installed package.")
    raise GgmlCyMissing(f"cannot import ggml_cy: {type(error).__name__}: {error}\n"
                        "Install it (pip install .) or build it in place (tools/build.sh).")


def load_optional(name):
    """A comparison library if installed, else None (its columns are left out)."""
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def load_roofline(ggml_cy):
    """The compiled roofline loops (bench/roofline.py) or None with the reason."""
    from bench import roofline
    try:
        return roofline.load(), None
    except roofline.RooflineUnavailable as exc:
        return None, f"the roofline loops are unavailable ({exc}): the roofline columns are left out"


def set_threads(n, ggml_cy=None, numexpr=None, torch=None):
    """Give every library `n` threads; returns notes on how (for the header)."""
    notes = []
    setter = getattr(ggml_cy, "set_num_threads", None) if ggml_cy is not None else None
    if setter is not None:
        setter(n)
        notes.append(f"ggml_cy.set_num_threads({n})")
    elif ggml_cy is not None:
        notes.append(f"ggml_cy: n_threads={n} passed to every call "
                     "(no ggml_cy.set_num_threads yet)")
    if numexpr is not None:
        numexpr.set_num_threads(n)
        notes.append(f"numexpr.set_num_threads({n})")
    if torch is not None:
        torch.set_num_threads(n)
        notes.append(f"torch.set_num_threads({n})")
    return notes


def ggml_threads_kwargs(ggml_cy, n):
    """Per-call keyword arguments for ggml_cy: none when the global setter exists."""
    return {} if hasattr(ggml_cy, "set_num_threads") else {"n_threads": n}


def blas_limits(n):
    """A context manager limiting numpy's BLAS to n threads (threadpoolctl), or None."""
    tpc = load_optional("threadpoolctl")
    if tpc is None:
        return None
    return tpc.threadpool_limits(limits=n, user_api="blas")
