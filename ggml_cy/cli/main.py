"""Command line: ``ggml-cy info|demo`` (also ``python -m ggml_cy ...``)."""
import argparse
import sys


def _default_threads():
    """The eager API's default thread count; its environment rule without the compiled
    eager module; OpenMP's max threads as the last resort."""
    try:
        from ggml_cy.cpu import threads as _threads
    except ImportError:
        _threads = None
    if _threads is not None:
        try:
            return _threads.get_num_threads()
        except Exception:
            try:
                return _threads.default_num_threads()
            except Exception:
                pass
    from ggml_cy.cpu import _kernels
    return _kernels.openmp_max_threads()


def _build_config():
    try:
        from ggml_cy import _build_config as cfg
    except ImportError:
        return None
    return cfg


def _cuda_status():
    try:
        import ggml_cy.cuda as gcuda
    except ImportError:
        cfg = _build_config()
        return "not built" if cfg is None or not getattr(cfg, "CUDA_BUILT", False) \
            else "built, but ggml_cy.cuda does not import"
    try:
        available = bool(gcuda.is_available())
    except Exception as e:
        return f"library present, device query failed ({type(e).__name__}: {e})"
    if available:
        return "library present, device available"
    return "library present, no usable device"


def info_lines():
    """The lines `python -m ggml_cy info` prints."""
    import numpy as np
    import ggml_cy
    from ggml_cy.core import _core
    cfg = _build_config()
    from ggml_cy.cpu import _kernels
    openmp = _kernels.openmp_enabled()
    simd = getattr(cfg, "SIMD", None) if cfg is not None else None
    lines = [
        f"ggml_cy {ggml_cy.__version__} (numpy {np.__version__}, Python "
        f"{sys.version.split()[0]})",
        f"OpenMP:          {'on' if openmp else 'off (serial kernels)'}",
        f"default threads: {_default_threads()}",
        f"SIMD target:     {' '.join(simd) if simd else ('none' if cfg else 'unknown')}",
        f"CUDA:            {_cuda_status()}",
        f"tensor overhead: {_core.tensor_overhead()} bytes "
        f"(object header {_core.object_overhead()} + tensor struct "
        f"{_core.tensor_overhead() - _core.object_overhead()})",
    ]
    if cfg is not None and getattr(cfg, "DEBUG", False):
        lines.append("build:           DEBUG (bounds checks on, -O0)")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="ggml-cy", description="ggml_cy: ggml's core as a Cython package")
    sub = parser.add_subparsers(dest="command", metavar="{info,demo}")
    sub.add_parser("info", help="version, OpenMP, threads, SIMD flags, CUDA")
    sub.add_parser("demo", help="a short tour: context, tensors, views, ops, graph")
    args = parser.parse_args(argv)
    if args.command == "info":
        for line in info_lines():
            print(line)
        return 0
    if args.command == "demo":
        from ggml_cy.cli.demo import run_demo
        return run_demo()
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
