"""The bench's roofline loops: the fastest plain C this machine runs for a memory-bound add,
measured in the same process as the kernels they bound (John McCalpin's STREAM "add"), and
the fused ``a*b + c*d - e`` loop that bounds the graph bench's fused case.

They serve the benchmarks only, so they are not part of the package: ``load()`` compiles
``bench/csrc/roofline.c`` with the system C compiler (``$CC`` or cc; -O3 -march=native
-fopenmp) into ``bench/build/`` the first time, and calls it through ctypes.
"""
import ctypes
import os
import subprocess
import sysconfig

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "csrc", "roofline.c")
LIBRARY = os.path.join(HERE, "build", "libroofline.so")


class RooflineUnavailable(RuntimeError):
    """The roofline library could not be compiled (no C compiler, no OpenMP)."""


def _compile():
    os.makedirs(os.path.dirname(LIBRARY), exist_ok=True)
    cc = os.environ.get("CC") or (sysconfig.get_config_var("CC") or "cc").split()[0]
    tmp = f"{LIBRARY}.{os.getpid()}.tmp"
    base = [cc, "-O3", "-fPIC", "-shared", "-fopenmp", SOURCE, "-o", tmp]
    for flags in (["-march=native"], []):
        try:
            r = subprocess.run(base[:1] + flags + base[1:], capture_output=True, text=True,
                               timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            raise RooflineUnavailable(f"cannot run the C compiler {cc!r}: {exc}") from None
        if r.returncode == 0:
            os.replace(tmp, LIBRARY)
            return
    raise RooflineUnavailable(f"compiling {SOURCE} failed: {r.stderr.strip()[-500:]}")


def _library():
    if not os.path.exists(LIBRARY) or os.path.getmtime(LIBRARY) < os.path.getmtime(SOURCE):
        _compile()
    lib = ctypes.CDLL(LIBRARY)
    f32p, i64, cint = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    lib.gcy_roofline_add_f32.argtypes = [f32p, f32p, f32p, i64, cint, cint]
    lib.gcy_roofline_add_f32.restype = None
    lib.gcy_roofline_fused_abcde_f32.argtypes = [f32p] * 6 + [i64, cint, cint]
    lib.gcy_roofline_fused_abcde_f32.restype = None
    lib.gcy_roofline_copy_f32.argtypes = [f32p, f32p, i64, cint, cint]
    lib.gcy_roofline_copy_f32.restype = None
    lib.gcy_roofline_fill_f32.argtypes = [f32p, ctypes.c_float, i64, cint]
    lib.gcy_roofline_fill_f32.restype = None
    lib.gcy_roofline_have_nt.restype = cint
    return lib


def _check_threads(n_threads):
    if not isinstance(n_threads, int) or isinstance(n_threads, bool):
        raise TypeError(f"n_threads must be an int, got {type(n_threads).__name__}")
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")


def _check_arrays(names, arrays, writable):
    n = None
    for name, a in zip(names, arrays):
        if not isinstance(a, np.ndarray) or a.dtype != np.float32 or a.ndim != 1 or \
                not a.flags.c_contiguous:
            raise TypeError(f"{name} must be a 1-D contiguous float32 array")
        if name in writable and not a.flags.writeable:
            raise ValueError(f"{name} is read-only")
        if n is not None and a.shape[0] != n:
            raise ValueError(f"{name} has {a.shape[0]} elements, expected {n} "
                             "(all arrays the same length)")
        n = a.shape[0]
    return n


class Roofline:
    """The compiled loops (see the module docstring). ``HAVE_NONTEMPORAL``: whether
    nontemporal=True really streams (the compiler targeted AVX)."""

    def __init__(self):
        self._lib = _library()
        self.HAVE_NONTEMPORAL = bool(self._lib.gcy_roofline_have_nt())

    def stream_add_f32(self, a, b, c, n_threads=1, nontemporal=False):
        """c[:] = a + b on 1-D contiguous float32 arrays with n_threads threads; returns c."""
        _check_threads(n_threads)
        n = _check_arrays(("a", "b", "c"), (a, b, c), ("c",))
        self._lib.gcy_roofline_add_f32(a.ctypes.data, b.ctypes.data, c.ctypes.data, n,
                                       n_threads, bool(nontemporal))
        return c

    def copy_f32(self, a, c, n_threads=1, nontemporal=False):
        """c[:] = a on 1-D contiguous float32 arrays (bench/quant.py's roofline); returns c."""
        _check_threads(n_threads)
        n = _check_arrays(("a", "c"), (a, c), ("c",))
        self._lib.gcy_roofline_copy_f32(a.ctypes.data, c.ctypes.data, n, n_threads,
                                        bool(nontemporal))
        return c

    def fill_f32(self, c, value=0.0, n_threads=1):
        """c[:] = value with non-temporal stores (plain without AVX): the write-only part of
        a copy, the bound of any loop writing c (bench/quant.py's dequantize cases)."""
        _check_threads(n_threads)
        n = _check_arrays(("c",), (c,), ("c",))
        self._lib.gcy_roofline_fill_f32(c.ctypes.data, float(value), n, n_threads)
        return c

    def fused_abcde_f32(self, a, b, c, d, e, out, n_threads=1, nontemporal=False):
        """out[:] = a*b + c*d - e in one pass over 1-D contiguous float32 arrays; returns
        out. The plain loop may be contracted into FMAs: a speed bound, not a reference."""
        _check_threads(n_threads)
        n = _check_arrays(("a", "b", "c", "d", "e", "out"), (a, b, c, d, e, out), ("out",))
        self._lib.gcy_roofline_fused_abcde_f32(a.ctypes.data, b.ctypes.data, c.ctypes.data,
                                               d.ctypes.data, e.ctypes.data, out.ctypes.data,
                                               n, n_threads, bool(nontemporal))
        return out


_LOADED = []


def load():
    """The Roofline loops, compiled on first use (raises RooflineUnavailable)."""
    if not _LOADED:
        _LOADED.append(Roofline())
    return _LOADED[0]
