/* ggml_cy core definitions: the C layout of ggml's context, object and tensor structs.
 * Shared by the Cython modules (declared in ggml_cy/_core.pxd, where each field is
 * documented) and by the CUDA library in cuda/, so both backends read one struct. */
#ifndef GGML_CY_CORE_DEFS_H
#define GGML_CY_CORE_DEFS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GGML_MAX_DIMS 4
#define GGML_MAX_SRC 10
#define GGML_MAX_OP_PARAMS 64
#define GGML_MAX_NAME 64
#define GGML_MEM_ALIGN 16

#include "ggml_types.h"   /* enum ggml_type (ggml's numbers) and the type traits */

typedef enum {
    GGML_OBJECT_TYPE_TENSOR = 0,
    GGML_OBJECT_TYPE_GRAPH = 1,
    GGML_OBJECT_TYPE_WORK_BUFFER = 2
} ggml_object_type;

enum {
    GGML_TENSOR_FLAG_INPUT = 1,
    GGML_TENSOR_FLAG_OUTPUT = 2,
    GGML_TENSOR_FLAG_PARAM = 4
};

typedef struct ggml_object {
    size_t offs;
    size_t size;
    struct ggml_object * next;
    int type;
    char padding[4];
} ggml_object;

typedef struct ggml_tensor {
    int type;
    void * buffer;
    int64_t ne[GGML_MAX_DIMS];
    int64_t nb[GGML_MAX_DIMS];
    int op;
    int32_t op_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)];
    int32_t flags;
    struct ggml_tensor * src[GGML_MAX_SRC];
    struct ggml_tensor * view_src;
    size_t view_offs;
    void * data;
    char name[GGML_MAX_NAME];
    void * extra;
    char padding[8];
} ggml_tensor;

typedef struct ggml_context {
    size_t mem_size;
    void * mem_buffer;
    bool mem_buffer_owned;
    bool no_alloc;
    int n_objects;
    ggml_object * objects_begin;
    ggml_object * objects_end;
} ggml_context;

#define GGML_OBJECT_SIZE sizeof(ggml_object)
#define GGML_TENSOR_SIZE sizeof(ggml_tensor)

/* Checked at compile time so the documented overheads stay true (C and C++ spellings). */
#ifdef __cplusplus
#define GGML_CY_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define GGML_CY_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
GGML_CY_STATIC_ASSERT(sizeof(ggml_object) == 32, "ggml_object must be 32 bytes");
GGML_CY_STATIC_ASSERT(sizeof(ggml_tensor) % GGML_MEM_ALIGN == 0, "ggml_tensor must pad to 16 bytes");

/* The types the core's tensors hold today: the plain (one element per block) types. */
static inline bool ggml_type_valid(int type) {
    return ggml_cy_type_known(type) && !ggml_cy_is_quantized(type);
}

/* Element size of a plain type (0 otherwise). */
static inline size_t ggml_type_size(int type) {
    return ggml_type_valid(type) ? ggml_cy_block_bytes(type) : 0;
}

static inline const char * ggml_type_name(int type) {
    return ggml_cy_type_name(type);
}

#ifdef __cplusplus
}
#endif
#endif
