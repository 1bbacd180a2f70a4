"""Layer 2, the CPU kernels and the executor: kernels take ggml_tensor descriptors and
nothing else (``noexcept nogil``), called by the eager functions and by the graph executor.

Modules: ``_kernels`` (generated from ``_kernels.pyx.tp``: one row function per op and
type, the dispatch ``compute_forward``/``compute_parallel``, the default thread count),
``_fused`` (fused elementwise groups and the accumulator machine), ``_compute`` (plans
and the one-parallel-region executor), ``threads`` (the thread-count settings),
``_openmp.pxd`` (the OpenMP shim), ``csrc/`` (the C kernels: conversions, elementwise
formulas, the fused machine, mul_mat).
"""

# threadpoolctl.threadpool_limits(n) limits ggml_cy's thread count too (eco, issue 15)
from ggml_cy.cpu import threadpoolctl_hook as _threadpoolctl_hook  # noqa: E402

_threadpoolctl_hook.install()
