/* ggml_cy's one op enum (ggml: enum ggml_op), shared by the CPU kernels, the graph and the
 * CUDA library. Elementwise unary ops are flat members here (ggml nests them under
 * GGML_OP_UNARY); the name table lives next to the CPU dispatch (ggml_cy/_kernels). */
#ifndef GGML_CY_OPS_DEFS_H
#define GGML_CY_OPS_DEFS_H

typedef enum {
    GGML_OP_NONE = 0,
    /* copy / convert (ggml_cpy, ggml_dup, ggml_cont): src0 -> dst, any type pair, any layout */
    GGML_OP_DUP,
    GGML_OP_CPY,
    GGML_OP_CONT,
    /* binary arithmetic: dst = src0 op src1, src1 tiled over src0 (ne1x divides ne0x) */
    GGML_OP_ADD,
    GGML_OP_SUB,
    GGML_OP_MUL,
    GGML_OP_DIV,        /* true divide */
    GGML_OP_FLOOR_DIV,  /* numpy floor_divide */
    GGML_OP_MOD,        /* numpy remainder: sign of the divisor */
    GGML_OP_FMOD,       /* C fmod: sign of the dividend */
    GGML_OP_MAX,        /* numpy maximum: NaN propagates */
    GGML_OP_MIN,        /* numpy minimum */
    GGML_OP_FMAX,       /* numpy fmax: NaN ignored */
    GGML_OP_FMIN,
    GGML_OP_POW,
    GGML_OP_PRELU,      /* src0 > 0 ? src0 : src1*src0 */
    /* logical and relational: dst type BOOL */
    GGML_OP_LOGICAL_AND,
    GGML_OP_LOGICAL_OR,
    GGML_OP_LOGICAL_XOR,
    GGML_OP_EQ,
    GGML_OP_NE,
    GGML_OP_GT,
    GGML_OP_GE,
    GGML_OP_LT,
    GGML_OP_LE,
    /* unary (src0 only). Parameters in dst->op_params as float bit patterns:
     * LEAKY_RELU [slope], CLAMP [min, max], SCALE [s], ELU [alpha=1] */
    GGML_OP_LOGICAL_NOT,
    GGML_OP_NEG,
    GGML_OP_ABS,
    GGML_OP_SGN,
    GGML_OP_SQR,
    GGML_OP_SQRT,
    GGML_OP_EXP,
    GGML_OP_EXPM1,
    GGML_OP_LOG,
    GGML_OP_LOG1P,
    GGML_OP_SIN,
    GGML_OP_COS,
    GGML_OP_TANH,
    GGML_OP_FLOOR,
    GGML_OP_CEIL,
    GGML_OP_ROUND,      /* rint: round half to even */
    GGML_OP_TRUNC,
    GGML_OP_RELU,
    GGML_OP_LEAKY_RELU,
    GGML_OP_ELU,
    GGML_OP_SIGMOID,
    GGML_OP_SILU,
    GGML_OP_GELU,       /* tanh approximation */
    GGML_OP_GELU_ERF,
    GGML_OP_GELU_QUICK, /* x * sigmoid(1.702 x) */
    GGML_OP_HARDSWISH,
    GGML_OP_HARDSIGMOID,
    GGML_OP_SOFTPLUS,
    GGML_OP_STEP,
    GGML_OP_CLAMP,
    GGML_OP_SCALE,
    /* graph-only ops (graph issue): views, reductions, matrix product */
    GGML_OP_ADD1,
    GGML_OP_VIEW,
    GGML_OP_RESHAPE,
    GGML_OP_PERMUTE,
    GGML_OP_TRANSPOSE,
    GGML_OP_SUM,
    GGML_OP_SUM_ROWS,
    GGML_OP_MEAN,
    GGML_OP_MUL_MAT,
    GGML_OP_COUNT
} ggml_op;

#endif
