"""threadpoolctl support: ``threadpoolctl.threadpool_limits(n)`` limits ggml_cy too.

ggml_cy's threads are its own pool with its own count (not OpenMP's), so an OpenMP
entry that threadpoolctl finds (``omp_set_num_threads``) does not govern it. This module registers a threadpoolctl controller for ggml_cy's kernel module
(``ggml_cy/cpu/_kernels*.so``): ``threadpool_info()`` lists it with
``user_api == internal_api == "ggml_cy"``, and ``threadpool_limits(n)`` /
``threadpool_limits(n, user_api="ggml_cy")`` / ``ThreadpoolController().limit(...)`` set
and restore the count that ``ggml_cy.set_num_threads`` sets.

threadpoolctl is optional and not imported by ggml_cy: when it is already imported the
controller is registered at once, otherwise a finder on ``sys.meta_path`` registers it
right after ``import threadpoolctl`` runs (and then removes itself), so importing
ggml_cy costs nothing more.
"""
import importlib.abc
import importlib.util
import os
import sys
import threading

__all__ = ["register", "GgmlCyController"]

_registered = False
_lock = threading.Lock()


def _kernels_path():
    from ggml_cy.cpu import _kernels
    return os.path.realpath(_kernels.__file__)


def _make_controller_class(threadpoolctl):
    class GgmlCyController(threadpoolctl.LibController):
        """threadpoolctl's view of ggml_cy's process-wide default thread count."""
        user_api = "ggml_cy"
        internal_api = "ggml_cy"
        # the compiled kernel module, e.g. _kernels.cpython-311-x86_64-linux-gnu.so; its
        # module-init symbol confirms the match
        filename_prefixes = ("_kernels.",)
        check_symbols = ("PyInit__kernels",)

        def _ours(self):
            # another package could ship a module called _kernels: only ggml_cy's counts
            try:
                return os.path.realpath(self.filepath) == _kernels_path()
            except Exception:
                return False

        def get_num_threads(self):
            if not self._ours():
                return None
            # the process-wide default (what set_num_threads sets and threadpool_limits
            # restores), not a ggml_cy.threads block's thread-local override
            from ggml_cy.cpu import _kernels
            return _kernels._get_num_threads()

        def set_num_threads(self, num_threads):
            if not self._ours():
                return None
            from ggml_cy.cpu import threads
            return threads.set_num_threads(num_threads)

        def get_version(self):
            # the package's version, read without importing upward (layers)
            pkg = sys.modules.get("ggml_cy")
            return getattr(pkg, "__version__", None)

    return GgmlCyController


GgmlCyController = None   # the class, once registered


def register():
    """Registers the controller with threadpoolctl (once; needs threadpoolctl >= 3.0).
    Returns True when registered (now or before), False when threadpoolctl is absent or
    too old to accept controllers."""
    global _registered, GgmlCyController
    with _lock:
        if _registered:
            return True
        tpc = sys.modules.get("threadpoolctl")
        if tpc is None:
            try:
                import threadpoolctl as tpc
            except ImportError:
                return False
        if not hasattr(tpc, "register") or not hasattr(tpc, "LibController"):
            return False
        cls = _make_controller_class(tpc)
        tpc.register(cls)
        GgmlCyController = cls
        _registered = True
        return True


class _RegisterAfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when ``threadpoolctl`` is imported it wraps that module's
    loader so that the controller is registered once the module has run."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "threadpoolctl":
            return None
        others = [f for f in sys.meta_path if f is not self]
        for finder in others:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find else None
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        finder_self = self

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec_):
                return loader.create_module(spec_)

            def exec_module(self, module):
                loader.exec_module(module)
                _remove(finder_self)
                try:
                    register()
                except Exception:   # never break the user's import
                    pass

        spec.loader = _Loader()
        return spec


def _remove(finder):
    try:
        sys.meta_path.remove(finder)
    except ValueError:
        pass


def install():
    """Registers now when threadpoolctl is loaded, else on its import."""
    if "threadpoolctl" in sys.modules:
        try:
            register()
        except Exception:
            pass
        return
    if not any(isinstance(f, _RegisterAfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterAfterImport())
