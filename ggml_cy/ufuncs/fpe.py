"""numpy's floating-point error reporting for results computed by ggml_cy's kernels.

The kernels return the IEEE flags numpy would have seen (``compute_parallel``); ``report``
turns them into what numpy does under ``np.geterr()`` / ``np.errstate``: nothing, a
RuntimeWarning, a FloatingPointError, a call of ``np.geterrcall()``, a line on stdout, or
a ``write`` on the log object, with numpy's wording ("divide by zero encountered in
divide") and in numpy's order (divide, overflow, underflow, invalid).
"""
import os
import sys
import warnings

import numpy as np

# numpy's status bits (UFUNC_FPE_*), passed to 'call' handlers as numpy does.
NPY_FPE_DIVIDEBYZERO = 1
NPY_FPE_OVERFLOW = 2
NPY_FPE_UNDERFLOW = 4
NPY_FPE_INVALID = 8


def _table(fe_divbyzero, fe_overflow, fe_underflow, fe_invalid):
    return (
        (fe_divbyzero, NPY_FPE_DIVIDEBYZERO, "divide", "divide by zero"),
        (fe_overflow, NPY_FPE_OVERFLOW, "over", "overflow"),
        (fe_underflow, NPY_FPE_UNDERFLOW, "under", "underflow"),
        (fe_invalid, NPY_FPE_INVALID, "invalid", "invalid value"),
    )


_TABLE = None


def configure(fe_divbyzero, fe_overflow, fe_underflow, fe_invalid):
    """Called once by ggml_cy.ufuncs._eager with the C library's FE_* values."""
    global _TABLE
    _TABLE = _table(fe_divbyzero, fe_overflow, fe_underflow, fe_invalid)


# ggml_cy's own Python files: a warning names the first line outside them
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _outside_level(stacklevel):
    """warnings.warn's stacklevel, as seen from report(), moved past frames of ggml_cy's
    own Python files: numpy's warning names the line that called the ufunc, and ours the
    line that called ggml_cy (evaluate's operation-by-operation re-run, for one, calls the
    eager functions from expr/evaluate.py, recursively). All frames inside: unchanged."""
    level = stacklevel
    try:
        frame = sys._getframe(level)        # (this function is one frame below report)
    except ValueError:
        return stacklevel
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return stacklevel if frame is None else level


def report(flags, name, stacklevel=3):
    """Act on the FE_* bits in ``flags`` for the function ``name`` as numpy would (a
    warning names the first line outside ggml_cy's Python files, from ``stacklevel``
    on)."""
    if flags <= 0:
        return
    err = np.geterr()
    status = 0
    for fe, npy, _key, _text in _TABLE:
        if flags & fe:
            status |= npy
    for fe, _npy, key, text in _TABLE:
        if not flags & fe:
            continue
        mode = err[key]
        if mode == "ignore":
            continue
        msg = f"{text} encountered in {name}"
        if mode == "warn":
            warnings.warn(msg, RuntimeWarning, stacklevel=_outside_level(stacklevel))
        elif mode == "raise":
            raise FloatingPointError(msg)
        elif mode == "call":
            func = np.geterrcall()
            if func is None or not callable(func):
                # numpy's exception type and wording (two spaces included)
                raise NameError(f"python callback specified for {text} (in  {name}) "
                                "but no function found.")
            func(text, status)
        elif mode == "print":
            sys.stdout.write(f"Warning: {msg}\n")
        elif mode == "log":
            log = np.geterrcall()
            if log is None or not hasattr(log, "write"):
                raise NameError(f"log specified for {text} (in {name}) "
                                "but no object with write method found.")
            log.write(f"Warning: {msg}\n")
