"""The CUDA backend in ggml's backend model (ggml_cy.backend): a buffer type whose
buffers are device allocations, and a backend whose graph_compute runs every node on the
GPU (ggml_cy.cuda._cuda.graph_compute: no host round trip; a repeated graph is captured once as a
CUDA graph and replayed).

    backend = ggml_cy.cuda.cuda_init()
    buf = ggml_cy.backend.alloc_ctx_tensors(ctx, backend)   # ctx: a no_alloc Context
    ggml_cy.backend.tensor_set(a, host_a); ...
    backend.graph_compute(graph)
    ggml_cy.backend.tensor_get(result)
"""
import numpy as np

from ggml_cy import backend as _backend
from ggml_cy.cuda.runtime import require


def _lib():
    return require()


class CudaBuffer(_backend.Buffer):
    """One cudaMalloc allocation holding the tensors placed in it."""

    def _alloc(self, size):
        self._dev = _lib().Buffer.alloc(max(int(size), 1))
        return self._dev.ptr

    def _offset_of(self, tensor, offset):
        return tensor.data_ptr - self.base + offset

    def set_tensor(self, tensor, data, offset):
        self._dev.set_bytes(self._offset_of(tensor, offset), np.ascontiguousarray(data, np.uint8))

    def get_tensor(self, tensor, offset, size):
        out = np.empty(size, np.uint8)
        self._dev.get_bytes(self._offset_of(tensor, offset), out)
        return out

    def clear(self, value=0):
        self._dev.memset(0, int(value), self.size)

    def free(self):
        """Frees the device memory now; tensors placed in it can no longer be computed."""
        self._dev.free()


class CudaBufferType(_backend.BufferType):
    name = "CUDA"
    alignment = 256
    buffer_class = CudaBuffer


class CudaBackend(_backend.Backend):
    """ggml_backend_cuda: runs graphs whose tensors live in device memory."""
    name = "CUDA"

    def __init__(self, device=0):
        lib = _lib()
        lib.set_device(int(device))
        self.device = int(device)
        self.last_replayed = False
        self._nodes = None           # (graph, n_nodes, node addresses) of the last graph

    def get_default_buffer_type(self):
        return CudaBufferType()

    def supports_op(self, tensor):
        """True when graph_compute runs this node on the device: the op, its sources,
        types, shapes and op_params (ggml_cy_cuda_supports_node)."""
        return _lib().supports_node(tensor)

    def graph_compute(self, graph):
        """Runs every node on the GPU, in order. Returns the graph."""
        lib = _lib()
        n = graph.n_nodes            # raises if the graph's context was reset
        cached = self._nodes
        if cached is not None and cached[0] is graph and cached[1] == n:
            addrs = cached[2]
        else:                        # node addresses, taken once per graph and size
            addrs = [lib.tensor_address(t) for t in graph.nodes]
            self._nodes = (graph, n, addrs)
        self.last_replayed = lib.graph_compute(addrs)
        return graph

    def synchronize(self):
        _lib().synchronize()


def cuda_init(device=0):
    """ggml_backend_cuda_init."""
    return CudaBackend(device)
