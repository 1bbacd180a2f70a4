/* ggml_cy's CUDA library: the one plain C header (ggml's ggml-cuda.h is the model).
 *
 * Every function returns a status (0 = OK) and never aborts: CUDA errors become a status plus
 * a message (cudaGetErrorString and what we were doing) read back with
 * ggml_cy_cuda_last_error(). Ops take ggml_tensor descriptors (core_defs.h, the SAME struct the
 * CPU path uses) whose `data` are device pointers, and the op enum of ops_defs.h.
 *
 * Memory safety: every device pointer an op touches must lie inside a registered region: a
 * buffer from ggml_cy_cuda_buffer_alloc, or foreign memory registered with
 * ggml_cy_cuda_buffer_wrap (DLPack imports). Ops check each operand's byte extent against the
 * registry before launching, so a freed buffer or a stray pointer gives a status, not a fault.
 *
 * All work goes to one library stream per process (created on first use, with default
 * flags so that it orders itself with the legacy default stream that torch and cupy use by
 * default). Calls that return data to the host synchronize that stream. */
#ifndef GGML_CY_CUDA_H
#define GGML_CY_CUDA_H

#include <stddef.h>
#include <stdint.h>

/* core_defs.h checks its struct sizes with C11's _Static_assert, which C++ spells
 * static_assert: map it for C++ (nvcc) consumers only. */
#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert
#define GGML_CY_CUDA_MAPPED_STATIC_ASSERT
#endif
#include "core_defs.h"
#include "ops_defs.h"
#ifdef GGML_CY_CUDA_MAPPED_STATIC_ASSERT
#undef _Static_assert
#undef GGML_CY_CUDA_MAPPED_STATIC_ASSERT
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    GGML_CY_CUDA_OK = 0,
    GGML_CY_CUDA_ERR_NO_DEVICE = 1,   /* no CUDA device / driver */
    GGML_CY_CUDA_ERR_OOM = 2,         /* device out of memory */
    GGML_CY_CUDA_ERR_INVALID = 3,     /* bad argument: shapes, types, null pointers */
    GGML_CY_CUDA_ERR_UNSUPPORTED = 4, /* op/type combination not implemented on the GPU */
    GGML_CY_CUDA_ERR_BAD_POINTER = 5, /* freed or unknown buffer, pointer outside any buffer */
    GGML_CY_CUDA_ERR_CUDA = 6         /* any other CUDA runtime error */
} ggml_cy_cuda_status;

typedef struct {
    char name[256];
    int major, minor;           /* compute capability */
    int multiprocessors;
    size_t total_memory;        /* bytes */
    int l2_cache_bytes;
    int max_grid_y, max_grid_z;
    int runtime_version, driver_version;
} ggml_cy_cuda_device_props;

/* Opaque handle of a device allocation (or of a registered foreign region). */
typedef struct ggml_cy_cuda_buffer ggml_cy_cuda_buffer;

/* --- errors --- */
/* Message of the last failure on this thread ("" when none). */
const char * ggml_cy_cuda_last_error(void);
const char * ggml_cy_cuda_status_name(int status);

/* --- devices --- */
int ggml_cy_cuda_device_count(int * count);            /* 0 devices is OK, count = 0 */
int ggml_cy_cuda_device_props_get(int device, ggml_cy_cuda_device_props * props);
int ggml_cy_cuda_set_device(int device);
int ggml_cy_cuda_get_device(int * device);
/* The library stream (a cudaStream_t as an opaque pointer), created on first use. */
int ggml_cy_cuda_stream(void ** stream);
int ggml_cy_cuda_synchronize(void);                    /* waits for the library stream */
/* Programmatic dependent launch (sm_90+) for the kernels that take it (the Q4_0 mat-vec and
 * the dequantize kernel): on by default; returns the previous setting (1/0). */
int ggml_cy_cuda_set_pdl(int enable);
/* Whether the Q4_0 x1 mat-vec asks L2 for its weights before its PDL wait (with PDL on, behind
 * a PDL kernel): on by default; returns the previous setting (1/0). A measurement switch. */
int ggml_cy_cuda_set_mv_prefetch(int enable);
int ggml_cy_cuda_mem_info(size_t * free_bytes, size_t * total_bytes);

/* --- buffers --- */
/* Allocates `size` bytes (cudaMalloc, 256-byte aligned). Out of memory: ERR_OOM. */
int ggml_cy_cuda_buffer_alloc(size_t size, ggml_cy_cuda_buffer ** out);
/* Freed blocks are kept for reuse by later allocations of a close size (a caching
 * allocator, capped at 4 GiB per device and flushed when cudaMalloc runs out of memory).
 * cache_clear returns them to the driver; cache_bytes reports what is held. */
int ggml_cy_cuda_cache_clear(void);
int ggml_cy_cuda_cache_bytes(size_t * bytes);
/* Registers foreign device memory [ptr, ptr+size) (not freed by the library). */
int ggml_cy_cuda_buffer_wrap(void * ptr, size_t size, ggml_cy_cuda_buffer ** out);
/* Frees (or unregisters) the buffer; waits for pending work on the library stream first.
 * A second free of the same handle gives ERR_BAD_POINTER. */
int ggml_cy_cuda_buffer_free(ggml_cy_cuda_buffer * buf);
int ggml_cy_cuda_buffer_info(ggml_cy_cuda_buffer * buf, void ** base, size_t * size);
/* Byte ranges inside the buffer: memset (async), host->device and device->host copies
 * (synchronous for the host side). */
int ggml_cy_cuda_buffer_memset(ggml_cy_cuda_buffer * buf, size_t offset, int value, size_t size);
int ggml_cy_cuda_buffer_set(ggml_cy_cuda_buffer * buf, size_t offset, const void * host, size_t size);
int ggml_cy_cuda_buffer_get(ggml_cy_cuda_buffer * buf, size_t offset, void * host, size_t size);
/* 1 when [ptr, ptr+size) lies in a live registered region, else 0. */
int ggml_cy_cuda_range_valid(const void * ptr, size_t size);

/* --- events (timing on the library stream) --- */
int ggml_cy_cuda_event_create(void ** event);
int ggml_cy_cuda_event_record(void * event);
int ggml_cy_cuda_event_elapsed_ms(void * start, void * end, float * ms);   /* synchronizes end */
int ggml_cy_cuda_event_destroy(void * event);
/* Makes the library stream wait for work already queued on `other` (a cudaStream_t; NULL
 * or 1 for the legacy default stream, 2 for per-thread), and the other way round. */
int ggml_cy_cuda_stream_wait_other(void * other);
int ggml_cy_cuda_other_wait_stream(void * other);

/* --- ops --- */
/* 1 when compute_forward implements `op` for these types (src1_type -1 for unary/copy). */
int ggml_cy_cuda_supports_op(int op, int dst_type, int src0_type, int src1_type);
/* 1 when graph_compute runs this node: its op, the sources it needs (and no others), their
 * types, shapes and the node's op_params (memory is not looked at); 0 otherwise. */
int ggml_cy_cuda_supports_node(const ggml_tensor * node);
/* Computes one node: dst = op(dst->src[0], dst->src[1]) per ops_defs.h, with ggml's tiling
 * (each source's ne divides dst's per dim), any signed byte strides; copies (DUP/CPY/CONT)
 * for any layout and type pair with equal element counts. View ops (VIEW, RESHAPE,
 * PERMUTE, TRANSPOSE, NONE) do nothing. Async on the library stream. */
int ggml_cy_cuda_compute_forward(ggml_tensor * dst);
/* int8 ops with per-tensor scales: dst = sat(rint((src0*s0 op src1*s1) / s_out)), op one of
 * ADD SUB MUL DIV MAX MIN (dst->op), all three tensors GGML_TYPE_I8. */
int ggml_cy_cuda_binary_scaled_i8(ggml_tensor * dst, float s0, float s1, float s_out);

/* --- graphs --- */
/* Runs nodes[0..n) in order on the library stream with no host round trip. When the same
 * node list (same pointers, ops, types, shapes, strides, data pointers) comes again it is
 * captured as a CUDA graph and replayed from then on. *replayed (may be NULL) is set to 1
 * when this call launched a captured graph. */
int ggml_cy_cuda_graph_compute(ggml_tensor ** nodes, int n_nodes, int * replayed);
int ggml_cy_cuda_graph_cache_clear(void);
/* Enables (1, default) or disables (0) the capture of repeated graphs. */
int ggml_cy_cuda_graph_capture_enable(int enable);

#ifdef __cplusplus
}
#endif
#endif
