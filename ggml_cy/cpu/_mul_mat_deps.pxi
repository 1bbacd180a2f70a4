# The headers mul_mat.h includes (ggml_cy/cpu/csrc), named so that cythonize lists them as
# dependencies of the modules that include this file (_compute, _mul_mat): a change to any
# of them rebuilds those modules (a header reached only through another is not tracked).
# Include this file AFTER the `cdef extern from "mul_mat.h"` block: Cython emits the
# #includes in order, and mul_mat_bf16.h is only complete when mul_mat.h includes it.
cdef extern from "matvec_repack.h":
    pass
cdef extern from "mul_mat_tr16.h":
    pass
cdef extern from "mul_mat_amx.h":
    pass
cdef extern from "mul_mat_bf16.h":
    pass
cdef extern from "mul_mat_thin.h":
    pass
cdef extern from "mul_mat_ndeal.h":
    pass
