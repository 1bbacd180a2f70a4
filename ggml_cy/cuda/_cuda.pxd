# The CUDA library's C header (cuda/ggml_cy_cuda.h), declared for Cython. setup.py puts
# cuda/ and ggml_cy/csrc on the include path of the _cuda extension and links it against
# libggml_cy_cuda.so (rpath $ORIGIN). Every function returns a ggml_cy_cuda_status.
from libc.stdint cimport int32_t, int64_t

cdef extern from "ggml_cy_cuda.h" nogil:
    # The tensor descriptor the kernels read (core_defs.h; the CPU path uses the same one).
    ctypedef struct ggml_tensor:
        int type
        void * buffer
        int64_t ne[4]
        int64_t nb[4]
        int op
        int32_t op_params[16]
        int32_t flags
        ggml_tensor * src[10]
        ggml_tensor * view_src
        size_t view_offs
        void * data
        char name[64]
        void * extra

    ctypedef enum ggml_cy_cuda_status:
        GGML_CY_CUDA_OK
        GGML_CY_CUDA_ERR_NO_DEVICE
        GGML_CY_CUDA_ERR_OOM
        GGML_CY_CUDA_ERR_INVALID
        GGML_CY_CUDA_ERR_UNSUPPORTED
        GGML_CY_CUDA_ERR_BAD_POINTER
        GGML_CY_CUDA_ERR_CUDA

    ctypedef struct ggml_cy_cuda_device_props:
        char name[256]
        int major, minor
        int multiprocessors
        size_t total_memory
        int l2_cache_bytes
        int max_grid_y, max_grid_z
        int runtime_version, driver_version

    ctypedef struct ggml_cy_cuda_buffer:
        pass

    const char * ggml_cy_cuda_last_error()
    const char * ggml_cy_cuda_status_name(int status)

    int ggml_cy_cuda_device_count(int * count)
    int ggml_cy_cuda_device_props_get(int device, ggml_cy_cuda_device_props * props)
    int ggml_cy_cuda_set_device(int device)
    int ggml_cy_cuda_get_device(int * device)
    int ggml_cy_cuda_stream(void ** stream)
    int ggml_cy_cuda_synchronize()
    int ggml_cy_cuda_mem_info(size_t * free_bytes, size_t * total_bytes)

    int ggml_cy_cuda_buffer_alloc(size_t size, ggml_cy_cuda_buffer ** out)
    int ggml_cy_cuda_cache_clear()
    int ggml_cy_cuda_cache_bytes(size_t * bytes)
    int ggml_cy_cuda_buffer_wrap(void * ptr, size_t size, ggml_cy_cuda_buffer ** out)
    int ggml_cy_cuda_buffer_free(ggml_cy_cuda_buffer * buf)
    int ggml_cy_cuda_buffer_info(ggml_cy_cuda_buffer * buf, void ** base, size_t * size)
    int ggml_cy_cuda_buffer_memset(ggml_cy_cuda_buffer * buf, size_t offset, int value, size_t size)
    int ggml_cy_cuda_buffer_set(ggml_cy_cuda_buffer * buf, size_t offset, const void * host, size_t size)
    int ggml_cy_cuda_buffer_get(ggml_cy_cuda_buffer * buf, size_t offset, void * host, size_t size)
    int ggml_cy_cuda_range_valid(const void * ptr, size_t size)

    int ggml_cy_cuda_event_create(void ** event)
    int ggml_cy_cuda_event_record(void * event)
    int ggml_cy_cuda_event_elapsed_ms(void * start, void * end, float * ms)
    int ggml_cy_cuda_event_destroy(void * event)
    int ggml_cy_cuda_stream_wait_other(void * other)
    int ggml_cy_cuda_other_wait_stream(void * other)

    int ggml_cy_cuda_supports_op(int op, int dst_type, int src0_type, int src1_type)
    int ggml_cy_cuda_supports_node(const ggml_tensor * node)
    int ggml_cy_cuda_compute_forward(ggml_tensor * dst)
    int ggml_cy_cuda_binary_scaled_i8(ggml_tensor * dst, float s0, float s1, float s_out)

    int ggml_cy_cuda_graph_compute(ggml_tensor ** nodes, int n_nodes, int * replayed)
    int ggml_cy_cuda_graph_cache_clear()
    int ggml_cy_cuda_graph_capture_enable(int enable)
    int ggml_cy_cuda_set_pdl(int enable)
    int ggml_cy_cuda_set_mv_prefetch(int enable)


# A device allocation (or a registered foreign region, for DLPack imports).
cdef class Buffer:
    cdef ggml_cy_cuda_buffer * handle
    cdef readonly size_t size
    cdef readonly size_t ptr
    cdef readonly bint foreign
    cdef void * dl_managed      # DLManagedTensor* of a DLPack import, released on free
    cdef object __weakref__
    cdef ggml_cy_cuda_buffer * live(self) except NULL
