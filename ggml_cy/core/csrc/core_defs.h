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

/* ggml's numbers where ggml has the type (see ggml.h enum ggml_type); U8 and BOOL are ours. */
typedef enum {
    GGML_TYPE_F32 = 0,
    GGML_TYPE_F16 = 1,
    GGML_TYPE_I8 = 24,
    GGML_TYPE_I16 = 25,
    GGML_TYPE_I32 = 26,
    GGML_TYPE_I64 = 27,
    GGML_TYPE_F64 = 28,
    GGML_TYPE_BF16 = 30,
    GGML_TYPE_U8 = 40,
    GGML_TYPE_BOOL = 41,
    GGML_TYPE_COUNT = 42
} ggml_type;

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

static inline bool ggml_type_valid(int type) {
    switch (type) {
        case GGML_TYPE_F32: case GGML_TYPE_F16: case GGML_TYPE_I8: case GGML_TYPE_I16:
        case GGML_TYPE_I32: case GGML_TYPE_I64: case GGML_TYPE_F64: case GGML_TYPE_BF16:
        case GGML_TYPE_U8: case GGML_TYPE_BOOL:
            return true;
        default:
            return false;
    }
}

static inline size_t ggml_type_size(int type) {
    switch (type) {
        case GGML_TYPE_F32: case GGML_TYPE_I32: return 4;
        case GGML_TYPE_F16: case GGML_TYPE_BF16: case GGML_TYPE_I16: return 2;
        case GGML_TYPE_I8: case GGML_TYPE_U8: case GGML_TYPE_BOOL: return 1;
        case GGML_TYPE_I64: case GGML_TYPE_F64: return 8;
        default: return 0;
    }
}

static inline const char * ggml_type_name(int type) {
    switch (type) {
        case GGML_TYPE_F32: return "f32";
        case GGML_TYPE_F16: return "f16";
        case GGML_TYPE_I8: return "i8";
        case GGML_TYPE_I16: return "i16";
        case GGML_TYPE_I32: return "i32";
        case GGML_TYPE_I64: return "i64";
        case GGML_TYPE_F64: return "f64";
        case GGML_TYPE_BF16: return "bf16";
        case GGML_TYPE_U8: return "u8";
        case GGML_TYPE_BOOL: return "bool";
        default: return "?";
    }
}

#ifdef __cplusplus
}
#endif
#endif
