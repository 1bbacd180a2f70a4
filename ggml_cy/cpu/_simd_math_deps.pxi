# The SIMD math headers (ggml_cy/cpu/csrc/simd_math*.h), named so that cythonize lists them
# as dependencies of the module that includes this file: a change to any of them rebuilds it.
# (_kernels, _compute and _fused reach them through kernels_elem.h; a header named nowhere
# left a developer build with a stale module.)
cdef extern from "simd_math.h":
    pass
cdef extern from "simd_math_more.h":
    pass
cdef extern from "simd_math_f64.h":
    pass
cdef extern from "simd_math_act32.h":
    pass
cdef extern from "simd_math_sincos32.h":
    pass
cdef extern from "simd_math_erf.h":
    pass
cdef extern from "simd_math_gelu32.h":
    pass
cdef extern from "simd_math_tanh.h":
    pass
cdef extern from "simd_math_f64_act.h":
    pass
cdef extern from "simd_math_log32.h":
    pass
cdef extern from "simd_math_exp32.h":
    pass
cdef extern from "simd_math_exp64.h":
    pass
cdef extern from "simd_math_sincos64.h":
    pass
cdef extern from "simd_math_tanh64.h":
    pass
cdef extern from "simd_math_tab64.h":
    pass
cdef extern from "simd_math_pow32.h":
    pass
cdef extern from "simd_math_pow64.h":
    pass
