"""The CUDA runtime handle of ggml_cy.cuda: loads the compiled wrapper (``_cuda``), says
whether a device is usable and answers device queries. Every other module of the package
imports this one for the library handle; this one imports none of them.

Without the compiled CUDA library (no nvcc at build time, or GGML_CY_CUDA=0) or without a
device, ``is_available()`` is False and ``require()`` raises RuntimeError saying why.
"""
try:
    from ggml_cy.cuda import _cuda
    _IMPORT_ERROR = None
    CudaError = _cuda.CudaError
except ImportError as exc:      # built without nvcc, or the library failed to load
    _cuda = None
    _IMPORT_ERROR = exc

    class CudaError(RuntimeError):
        """A CUDA error (the CUDA extension is not built here)."""

__all__ = ["is_available", "device_count", "device_name", "device_info", "synchronize",
           "CudaError", "Event", "runtime_version", "driver_version", "current_device",
           "set_device", "empty_cache", "cached_bytes", "stream_handle", "require"]


# ----------------------------------------------------------------------------- devices
def is_available():
    """True when the CUDA library was built and a device is present."""
    if _cuda is None:
        return False
    try:
        return _cuda.device_count() > 0
    except Exception:
        return False


_READY = []      # set once a device was seen: availability does not change in a process


def require():
    if _READY:
        return _cuda
    if _cuda is None:
        raise RuntimeError("ggml_cy.cuda is not available: ggml_cy was built without its CUDA "
                           "library (nvcc not found at build time, or GGML_CY_CUDA=0)"
                           + (f" [{_IMPORT_ERROR}]" if _IMPORT_ERROR else ""))
    try:
        n = _cuda.device_count()
    except Exception as exc:
        raise RuntimeError(f"ggml_cy.cuda is not available: {exc}") from exc
    if n == 0:
        raise RuntimeError("ggml_cy.cuda is not available: no CUDA device found "
                           "(no GPU, or no driver)")
    _READY.append(True)
    return _cuda


def device_count():
    if _cuda is None:
        return 0
    try:
        return _cuda.device_count()
    except Exception:
        return 0


def device_info(device=None):
    """Name, compute capability, multiprocessors, memory, L2, runtime/driver versions."""
    c = require()
    return c.device_props(c.get_device() if device is None else device)


def device_name(device=None):
    return device_info(device)["name"]


def runtime_version():
    return device_info()["runtime_version"]


def driver_version():
    return device_info()["driver_version"]


def current_device():
    return require().get_device()


def set_device(device):
    require().set_device(device)


def synchronize():
    """Waits until all work queued by ggml_cy on the device has finished."""
    require().synchronize()


def empty_cache():
    """Returns the device blocks that freed tensors left for reuse to the driver."""
    require().cache_clear()


def cached_bytes():
    """Bytes of freed device blocks held for reuse (the caching allocator)."""
    return require().cache_bytes()


def stream_handle():
    """The library's cudaStream_t (an int): all ggml_cy device work is queued there."""
    return require().stream_handle()


def Event():
    """A CUDA event on the library stream: e.record(); ...; e.elapsed_ms(e2)."""
    return require().Event()
