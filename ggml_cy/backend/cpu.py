"""The CPU backend (ggml_backend_cpu): host buffers and the threaded graph executor."""
import numpy as np

from ggml_cy.backend.base import Backend, Buffer, BufferType
from ggml_cy.cpu import threads as _threads
from ggml_cy.graph import _graph

__all__ = ["CpuBackend", "CpuBufferType", "CpuBuffer", "cpu_init"]


class CpuBuffer(Buffer):
    """Host memory (a numpy byte array, 64-byte aligned)."""
    host_readable = True

    def _alloc(self, size):
        align = self.buft.alignment
        self._mem = np.zeros(size + align, dtype=np.uint8)
        addr = self._mem.ctypes.data
        self._offset = (-addr) % align
        return addr + self._offset

    def _view(self, tensor, offset, size):
        start = tensor.data_ptr - self.base + offset
        return self._mem[self._offset + start:self._offset + start + size]

    def set_tensor(self, tensor, data, offset):
        self._view(tensor, offset, data.size)[:] = data

    def get_tensor(self, tensor, offset, size):
        return self._view(tensor, offset, size).copy()

    def clear(self, value=0):
        self._mem[:] = value


class CpuBufferType(BufferType):
    name = "CPU"
    alignment = 64
    buffer_class = CpuBuffer


class CpuBackend(Backend):
    """The CPU backend: the threaded graph executor (fused elementwise groups included)."""
    name = "CPU"

    def __init__(self, n_threads=None):
        self.n_threads = n_threads

    def set_n_threads(self, n_threads):
        self.n_threads = _threads.check_num_threads(n_threads)

    def get_default_buffer_type(self):
        return CpuBufferType()

    def supports_op(self, tensor):
        return _graph.cpu_supports(tensor)

    def graph_compute(self, graph):
        graph.compute(self.n_threads)
        return graph


def cpu_init(n_threads=None):
    """ggml_backend_cpu_init."""
    return CpuBackend(n_threads)
