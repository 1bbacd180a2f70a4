"""``ggml_cy.show_config()`` and ``ggml-cy info``: how this copy was built and what it runs on.

Build side (``ggml_cy/_build_config.py``, written by setup.py): compiler flags, the instruction
sets each compiled variant was allowed to use, OpenMP, CUDA. Run side: the CPU's model and
instruction sets (Linux /proc/cpuinfo), the dispatch level in use, threads, the OpenMP
spin-wait setting applied at import.
"""
import platform
import sys

from ggml_cy.core import _startup
from ggml_cy.cpu import cacheinfo as _cacheinfo


def _build_config():
    try:
        from ggml_cy import _build_config as cfg
    except ImportError:
        return None
    return cfg


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _default_threads():
    try:
        from ggml_cy.cpu import threads
        return threads.get_num_threads()
    except Exception:
        from ggml_cy.cpu import _kernels
        return _kernels.openmp_max_threads()


def _cuda_status(cfg):
    try:
        import ggml_cy.cuda as gcuda
    except ImportError:
        return "not built" if cfg is None or not getattr(cfg, "CUDA_BUILT", False) \
            else "built, but ggml_cy.cuda does not import"
    try:
        available = bool(gcuda.is_available())
    except Exception as e:
        return f"library present, device query failed ({type(e).__name__}: {e})"
    return "library present, device available" if available else \
        "library present, no usable device"


def config():
    """A dict describing the build and the running machine (what show_config prints)."""
    import numpy as np
    from ggml_cy._version import __version__
    from ggml_cy.cpu import _kernels
    cfg = _build_config()
    spin, spin_why = _startup.spin_applied
    llc, llc_source = _kernels.llc_info()
    return {
        "version": __version__,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "machine": platform.machine(),
        "openmp": bool(_kernels.openmp_enabled()),
        "openmp_spincount": spin,
        "openmp_spincount_source": spin_why,
        "default_threads": _default_threads(),
        "llc_bytes": llc,
        "llc_source": llc_source,
        "build_march": list(getattr(cfg, "MARCH_FLAGS", []) or []),
        "build_simd": list(getattr(cfg, "SIMD", []) or []),
        "build_levels": dict(getattr(cfg, "LEVELS", {}) or {}),
        "dispatch_level": _startup.dispatch_state.get("level"),
        "dispatch_reason": _startup.dispatch_state.get("reason"),
        "cpu_model": _cpu_model(),
        "cpu_level": _startup.cpu_level() if _startup.is_x86() else None,
        "cpu_simd": _startup.cpu_features_named(),
        "debug": bool(getattr(cfg, "DEBUG", False)),
        "cuda": _cuda_status(cfg),
        "bf16_mul_mat": _bf16_engine(),
    }


def _bf16_engine():
    """Which engine BF16-weight mul_mat uses on this CPU at the level in use."""
    try:
        from ggml_cy.cpu import _mul_mat
        return _mul_mat.bf16_engine()
    except (ImportError, AttributeError):
        return "unknown"


def lines():
    """The lines ``ggml-cy info`` and ``show_config()`` print."""
    from ggml_cy.core import _core
    c = config()
    omp = "off (serial kernels)"
    if c["openmp"]:
        omp = "on, spin-wait " + (f"{c['openmp_spincount']} ({c['openmp_spincount_source']})"
                                  if c["openmp_spincount"] is not None
                                  else f"not set by ggml_cy ({c['openmp_spincount_source']})")
    out = [
        f"ggml_cy {c['version']} (numpy {c['numpy']}, Python {c['python']}, {c['machine']})",
        f"OpenMP:          {omp}",
        f"default threads: {c['default_threads']}",
        f"last-level cache: {_cacheinfo.fmt(c['llc_bytes'])} ({c['llc_source']}; streaming "
        "stores only for calls whose data exceed it)",
        f"SIMD target:     baseline {' '.join(c['build_march']) or '(compiler default)'}: "
        f"{' '.join(c['build_simd']) or 'none'}",
    ]
    width = max((len(level) for level in c["build_levels"]), default=0) + 1
    for level, simd in c["build_levels"].items():
        # padded to the longest name: "avx512vnni" ran into its first flag at a fixed width
        out.append(f"  level {level:{width}s}{' '.join(simd)}")
    out += [
        f"dispatch:        {c['dispatch_level'] or 'none'} ({c['dispatch_reason'] or 'single build'})",
        f"CPU:             {c['cpu_model']}",
        f"CPU level:       {c['cpu_level'] or 'n/a'}",
        f"CPU SIMD:        {' '.join(c['cpu_simd']) or 'unknown'}",
        f"BF16 mul_mat:    {c['bf16_mul_mat']}",
        f"CUDA:            {c['cuda']}",
        f"tensor overhead: {_core.tensor_overhead()} bytes "
        f"(object header {_core.object_overhead()} + tensor struct "
        f"{_core.tensor_overhead() - _core.object_overhead()})",
    ]
    if c["debug"]:
        out.append("build:           DEBUG (bounds checks on, -O0)")
    return out


def show_config(file=None):
    """Print how ggml_cy was built and what it runs on (build and CPU instruction sets, the
    dispatch level in use, OpenMP, threads, CUDA)."""
    print("\n".join(lines()), file=file or sys.stdout)
