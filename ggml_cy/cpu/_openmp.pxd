# OpenMP shim: cimport these instead of cython.parallel's openmp module so that a build
# without OpenMP still compiles (every query then answers one thread).
cdef extern from "omp_shim.h" nogil:
    enum:
        GGML_CY_HAVE_OPENMP   # 1 when the build found OpenMP
    int gcy_omp_thread_num()   # this thread's index inside a parallel region (ith)
    int gcy_omp_num_threads()  # threads in the current parallel region (nth)
    int gcy_omp_max_threads()
    int gcy_omp_num_procs()
