"""Layer 1, the core: ggml's C structs (context, object list, tensor), the memory arena,
tensor creation and views, the element and block types with their traits, and the op
table every layer above reads. No kernels here.

Modules: ``_core`` (compiled: Context, Tensor, GGMLType, the arena), ``_dtypes.pxd``
(numpy dtype <-> ggml type, for Cython front ends), ``csrc/`` (the C headers shared with
the CUDA library: ``core_defs.h`` structs, ``ops_defs.h`` the op enum).
"""
