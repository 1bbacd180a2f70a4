// Elementwise op semantics on the device, numpy's (the CPU path's) for every type:
// integer arithmetic wraps, integer division by zero gives 0, maximum/minimum propagate NaN,
// floor_divide/remainder follow npy_divmod. No fast-math anywhere; mul-add patterns use
// __fmul_rn/__fadd_rn so that no FMA contraction changes a result.
#pragma once

#include "common.cuh"

namespace gcy {

// ------------------------------------------------------------------ op classes
// (the op classes come from the op table: ops_defs.h's predicates)
__host__ __device__ constexpr bool op_is_binary(int op) { return ggml_cy_op_is_binary(op); }
__host__ __device__ constexpr bool op_gives_bool(int op) {   // logical / relational
    return ggml_cy_op_is_binary(op) && ggml_cy_op_gives_bool(op);
}
// Bitwise commutative for every type: the kernels may swap such operands. Not maximum/
// minimum/fmax/fmin: on ties of signed zeros numpy picks a particular operand.
__host__ __device__ constexpr bool op_is_commutative(int op) {
    return op == GGML_OP_ADD || op == GGML_OP_MUL || op == GGML_OP_LOGICAL_AND ||
           op == GGML_OP_LOGICAL_OR || op == GGML_OP_LOGICAL_XOR || op == GGML_OP_EQ ||
           op == GGML_OP_NE;
}
__host__ __device__ constexpr bool op_is_unary(int op) { return ggml_cy_op_is_unary(op); }

// The op table's CUDA types as a bit of ggml_cy_op_cuda_types (ops_defs.h): float16 and
// bfloat16 compute in f32, so they count as f32.
template <typename T> __host__ __device__ constexpr int type_bit() {
    if constexpr (std::is_same_v<T, bool>) return GGML_CY_TBIT_BOOL;
    else if constexpr (std::is_same_v<T, double>) return GGML_CY_TBIT_F64;
    else if constexpr (is_floating_v<T>) return GGML_CY_TBIT_F32;
    else if constexpr (std::is_same_v<T, int8_t>) return GGML_CY_TBIT_I8;
    else if constexpr (std::is_same_v<T, int16_t>) return GGML_CY_TBIT_I16;
    else if constexpr (std::is_same_v<T, int32_t>) return GGML_CY_TBIT_I32;
    else if constexpr (std::is_same_v<T, int64_t>) return GGML_CY_TBIT_I64;
    else if constexpr (std::is_same_v<T, uint8_t>) return GGML_CY_TBIT_U8;
    else return 0;
}

// Which binary ops exist for an input type (T = the C type): the op table's cuda column.
template <typename T> __host__ __device__ constexpr bool bin_valid(int op) {
    return op_is_binary(op) && (ggml_cy_op_cuda_types(op) & type_bit<T>()) != 0;
}

// ------------------------------------------------------------------ float helpers
__device__ __forceinline__ float  m_fmod(float a, float b)   { return fmodf(a, b); }
__device__ __forceinline__ double m_fmod(double a, double b) { return fmod(a, b); }
__device__ __forceinline__ float  m_floor(float a)  { return floorf(a); }
__device__ __forceinline__ double m_floor(double a) { return floor(a); }
__device__ __forceinline__ float  m_copysign(float a, float b)   { return copysignf(a, b); }
__device__ __forceinline__ double m_copysign(double a, double b) { return copysign(a, b); }
__device__ __forceinline__ float  m_pow(float a, float b)   { return powf(a, b); }
__device__ __forceinline__ double m_pow(double a, double b) { return pow(a, b); }
// x86's NaN results, which numpy gives on the CPU: a NaN operand comes back quieted (the
// first one when both are NaN), an invalid operation (inf - inf, 0 * inf, 0 / 0) gives the
// "default NaN" with the sign set. CUDA's arithmetic returns one canonical NaN instead, so
// the four basic operations re-derive the x86 answer when the result is NaN (a branch
// that memory-bound kernels never feel).
__device__ __forceinline__ float x86_nan(float r, float a, float b) {
    if (r == r) return r;
    if (a != a) return __uint_as_float(__float_as_uint(a) | 0x00400000u);
    if (b != b) return __uint_as_float(__float_as_uint(b) | 0x00400000u);
    return __uint_as_float(0xffc00000u);
}
__device__ __forceinline__ double x86_nan(double r, double a, double b) {
    if (r == r) return r;
    if (a != a) return __longlong_as_double(__double_as_longlong(a) | 0x0008000000000000ll);
    if (b != b) return __longlong_as_double(__double_as_longlong(b) | 0x0008000000000000ll);
    return __longlong_as_double((long long)0xfff8000000000000ull);
}
// the operations themselves (no contraction into FMAs)
__device__ __forceinline__ float  a_mul(float a, float b)   { return __fmul_rn(a, b); }
__device__ __forceinline__ double a_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float  a_add(float a, float b)   { return __fadd_rn(a, b); }
__device__ __forceinline__ double a_add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float  a_sub(float a, float b)   { return __fsub_rn(a, b); }
__device__ __forceinline__ double a_sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float  a_div(float a, float b)   { return __fdiv_rn(a, b); }
__device__ __forceinline__ double a_div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float  m_mul(float a, float b)   { return x86_nan(__fmul_rn(a, b), a, b); }
__device__ __forceinline__ double m_mul(double a, double b) { return x86_nan(__dmul_rn(a, b), a, b); }
__device__ __forceinline__ float  m_add(float a, float b)   { return x86_nan(__fadd_rn(a, b), a, b); }
__device__ __forceinline__ double m_add(double a, double b) { return x86_nan(__dadd_rn(a, b), a, b); }
__device__ __forceinline__ float  m_sub(float a, float b)   { return x86_nan(__fsub_rn(a, b), a, b); }
__device__ __forceinline__ double m_sub(double a, double b) { return x86_nan(__dsub_rn(a, b), a, b); }
__device__ __forceinline__ float  m_div(float a, float b)   { return x86_nan(__fdiv_rn(a, b), a, b); }
__device__ __forceinline__ double m_div(double a, double b) { return x86_nan(__ddiv_rn(a, b), a, b); }

// numpy's npy_divmod: floor quotient, remainder with the divisor's sign.
template <typename C> __device__ __forceinline__ C np_divmod(C a, C b, C * mod_out) {
    C mod = m_fmod(a, b);
    if (b == C(0)) { *mod_out = mod; return m_div(a, b); }
    C div = m_div(m_sub(a, mod), b);
    if (mod != C(0)) {
        if ((b < C(0)) != (mod < C(0))) { mod = m_add(mod, b); div = m_sub(div, C(1)); }
    } else {
        mod = m_copysign(C(0), b);
    }
    C floordiv;
    if (div != C(0)) {
        floordiv = m_floor(div);
        if (m_sub(div, floordiv) > C(0.5)) floordiv = m_add(floordiv, C(1));
    } else {
        floordiv = m_copysign(C(0), m_div(a, b));
    }
    *mod_out = mod;
    return floordiv;
}

// ------------------------------------------------------------------ integer helpers
template <typename C> __device__ __forceinline__ C wrap_add(C a, C b) {
    using U = std::make_unsigned_t<C>; return (C)(U)((U)a + (U)b);
}
template <typename C> __device__ __forceinline__ C wrap_sub(C a, C b) {
    using U = std::make_unsigned_t<C>; return (C)(U)((U)a - (U)b);
}
template <typename C> __device__ __forceinline__ C wrap_mul(C a, C b) {
    using U = std::make_unsigned_t<C>;
    if constexpr (sizeof(C) < 4) return (C)(U)((unsigned)(U)a * (unsigned)(U)b);
    else return (C)(U)((U)a * (U)b);
}
template <typename C> __device__ __forceinline__ C int_floor_div(C a, C b) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<C>) {
        if (b == C(-1)) return wrap_sub(C(0), a);   // MIN // -1 wraps to MIN, as numpy
        C q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
        return q;
    } else {
        return a / b;
    }
}
template <typename C> __device__ __forceinline__ C int_mod(C a, C b) {   // numpy remainder
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<C>) {
        if (b == C(-1)) return 0;
        C r = a % b;
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
    } else {
        return a % b;
    }
}
template <typename C> __device__ __forceinline__ C int_fmod(C a, C b) {   // C's %, sign of a
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<C>) { if (b == C(-1)) return 0; }
    return a % b;
}
template <typename C> __device__ __forceinline__ C int_pow(C a, C b) {
    if constexpr (std::is_signed_v<C>) {
        if (b < 0) return a == 1 ? C(1) : (a == C(-1) ? ((b & 1) ? C(-1) : C(1)) : C(0));
    }
    C r = 1;
    while (b) {
        if (b & 1) r = wrap_mul(r, a);
        a = wrap_mul(a, a);
        b = (C)(b >> 1);
    }
    return r;
}

// ------------------------------------------------------------------ binary ops
// bin_op<OP>(a, b) on values of the compute type C (calc_t of the element type).
// RAW: + - * / without the x86 NaN fix-up (bin_elem redoes a NaN result exactly).
template <int OP, bool RAW = false, typename C> __device__ __forceinline__ auto bin_op(C a, C b) {
    if constexpr (OP == GGML_OP_LOGICAL_AND) return (a != C(0)) && (b != C(0));
    else if constexpr (OP == GGML_OP_LOGICAL_OR) return (a != C(0)) || (b != C(0));
    else if constexpr (OP == GGML_OP_LOGICAL_XOR) return (a != C(0)) != (b != C(0));
    else if constexpr (OP == GGML_OP_EQ) return a == b;
    else if constexpr (OP == GGML_OP_NE) return a != b;
    else if constexpr (OP == GGML_OP_GT) return a > b;
    else if constexpr (OP == GGML_OP_GE) return a >= b;
    else if constexpr (OP == GGML_OP_LT) return a < b;
    else if constexpr (OP == GGML_OP_LE) return a <= b;
    else if constexpr (std::is_same_v<C, bool>) {
        if constexpr (OP == GGML_OP_ADD || OP == GGML_OP_MAX) return a || b;
        else return a && b;   // MUL, MIN
    } else if constexpr (std::is_floating_point_v<C>) {
        if constexpr (OP == GGML_OP_ADD) return RAW ? a_add(a, b) : m_add(a, b);
        else if constexpr (OP == GGML_OP_SUB) return RAW ? a_sub(a, b) : m_sub(a, b);
        else if constexpr (OP == GGML_OP_MUL) return RAW ? a_mul(a, b) : m_mul(a, b);
        else if constexpr (OP == GGML_OP_DIV) return RAW ? a_div(a, b) : m_div(a, b);
        else if constexpr (OP == GGML_OP_FLOOR_DIV) { C m; return np_divmod(a, b, &m); }
        else if constexpr (OP == GGML_OP_MOD) {
            if (b == C(0)) return m_fmod(a, b);
            C m; np_divmod(a, b, &m); return m;
        }
        else if constexpr (OP == GGML_OP_FMOD) return m_fmod(a, b);
        // numpy's float32/float64 loops: the SECOND operand on ties (maximum(+0, -0) = -0);
        // float16 keeps the first (bin_elem routes it to bin_op_h16)
        else if constexpr (OP == GGML_OP_MAX) return (a > b || a != a) ? a : b;
        else if constexpr (OP == GGML_OP_MIN) return (a < b || a != a) ? a : b;
        else if constexpr (OP == GGML_OP_FMAX) return (a > b || b != b) ? a : b;
        else if constexpr (OP == GGML_OP_FMIN) return (a < b || b != b) ? a : b;
        else if constexpr (OP == GGML_OP_POW) return m_pow(a, b);
        else if constexpr (OP == GGML_OP_PRELU) return a > C(0) ? a : m_mul(b, a);
        else return C(0);
    } else {
        if constexpr (OP == GGML_OP_ADD) return wrap_add(a, b);
        else if constexpr (OP == GGML_OP_SUB) return wrap_sub(a, b);
        else if constexpr (OP == GGML_OP_MUL) return wrap_mul(a, b);
        else if constexpr (OP == GGML_OP_FLOOR_DIV) return int_floor_div(a, b);
        else if constexpr (OP == GGML_OP_MOD) return int_mod(a, b);
        else if constexpr (OP == GGML_OP_FMOD) return int_fmod(a, b);
        else if constexpr (OP == GGML_OP_MAX || OP == GGML_OP_FMAX) return a >= b ? a : b;
        else if constexpr (OP == GGML_OP_MIN || OP == GGML_OP_FMIN) return a <= b ? a : b;
        else if constexpr (OP == GGML_OP_POW) return int_pow(a, b);
        else if constexpr (OP == GGML_OP_PRELU) return a > C(0) ? a : wrap_mul(b, a);
        else return C(0);
    }
}

// Element in, element out: loads widen to the compute type, the result narrows to TD.
// float16 maximum/minimum/fmax/fmin: numpy's half loops are scalar and keep the FIRST
// operand on ties (maximum(+0, -0) = +0), as the CPU kernels' "h16" rows do.
template <int OP> __device__ __forceinline__ float bin_op_h16(float a, float b) {
    if constexpr (OP == GGML_OP_MAX) return (a >= b || a != a) ? a : b;
    else if constexpr (OP == GGML_OP_MIN) return (a <= b || a != a) ? a : b;
    else if constexpr (OP == GGML_OP_FMAX) return (a >= b || b != b) ? a : b;
    else return (a <= b || b != b) ? a : b;   // FMIN
}

template <int OP, typename T, bool RAW, typename C> __device__ __forceinline__ auto bin_core(C a, C b) {
    if constexpr (std::is_same_v<T, half> && (OP == GGML_OP_MAX || OP == GGML_OP_MIN ||
                                              OP == GGML_OP_FMAX || OP == GGML_OP_FMIN))
        return bin_op_h16<OP>(a, b);
    else
        return bin_op<OP, RAW>(a, b);
}

template <typename T> __device__ __forceinline__ bool is_nan(T x) {
    if constexpr (std::is_same_v<T, half>) return __hisnan(x);
    else if constexpr (std::is_same_v<T, bf16>) return __hisnan(x);
    else if constexpr (std::is_floating_point_v<T>) return x != x;
    else return false;
}

// One element: the hardware path (conversions and arithmetic exact for every non-NaN
// result), then, only when the result is NaN (rare, and warp-uniform when absent), the
// same element again with the NaN bits x86 and numpy give (x86_nan, exact widening and
// narrowing of half types). One compare per element on the fast path.
template <int OP, typename T, typename TD> __device__ __forceinline__ TD bin_elem(T x, T y) {
    if constexpr (is_floating_v<T> && !std::is_same_v<TD, bool>) {
        TD r;
        if constexpr (std::is_same_v<T, half>)
            r = __float2half_rn(bin_core<OP, T, true>(__half2float(x), __half2float(y)));
        else if constexpr (std::is_same_v<T, bf16>)
            r = __float2bfloat16_rn(bin_core<OP, T, true>(up(x), up(y)));
        else
            r = (TD)bin_core<OP, T, true>(x, y);
        if (!is_nan(r)) return r;
        return convert<TD>(bin_core<OP, T, false>(up(x), up(y)));
    } else {
        return convert<TD>(bin_core<OP, T, false>(up(x), up(y)));
    }
}

// The op chosen at run time (general/strided kernels, where index math dominates anyway).
// Arithmetic cases are compiled only when TD is the element type, bool-valued ones only
// when TD is bool, which keeps each instantiation small.
#define GCY_BIN_CASE(OPN)                                                              \
    case OPN:                                                                          \
        if constexpr (bin_valid<T>(OPN) && (op_gives_bool(OPN) ? std::is_same_v<TD, bool> \
                                                               : std::is_same_v<TD, T>)) \
            return bin_elem<OPN, T, TD>(x, y);                                         \
        break;

template <typename T, typename TD> __device__ TD bin_elem_rt(int op, T x, T y) {
    switch (op) {
        GGML_CY_CUDA_BINARY_OPS(GCY_BIN_CASE)
        default: break;
    }
    return TD();
}

// ------------------------------------------------------------------ node-level op families
// Issue 13's ops, one family per file, each with four entry points that compute.cu's family
// table (FAMILIES) calls: is_op (the ops of the family), types_ok (the type-level answer of
// ggml_cy_cuda_supports_op; src1_type -1: none), check (types, shapes and op_params of one
// node: a status and a message, no memory access) and forward (launches on `stream`; the
// node passed check and the memory checks).
// nn.cu: NORM, RMS_NORM, GROUP_NORM, SOFT_MAX, DIAG_MASK_INF, GLU
bool nn_is_op(int op);
bool nn_types_ok(int op, int dst_type, int src0_type, int src1_type);
int nn_check(const ggml_tensor * dst);
int nn_forward(ggml_tensor * dst, cudaStream_t stream);
// shape.cu: CONCAT, REPEAT, PAD, ARGSORT, TOP_K, ARGMAX
bool shape_is_op(int op);
bool shape_types_ok(int op, int dst_type, int src0_type, int src1_type);
int shape_check(const ggml_tensor * dst);
int shape_forward(ggml_tensor * dst, cudaStream_t stream);
// --- issue 13 (cuops2): node-level families in compute.cu's table: is_op, types_ok (the
// type-level answer; src1_type -1: none), check (types, shapes, op_params; no memory access),
// forward (launches on stream)
bool rope_is_op(int op);                       // rope.cu: ROPE
bool rope_types_ok(int op, int dst_type, int src0_type, int src1_type);
int rope_check(const ggml_tensor * dst);
int rope_forward(ggml_tensor * dst, cudaStream_t stream);
bool rows_is_op(int op);                       // rows.cu: SET_ROWS
bool rows_types_ok(int op, int dst_type, int src0_type, int src1_type);
int rows_check(const ggml_tensor * dst);
int rows_forward(ggml_tensor * dst, cudaStream_t stream);
bool attn_is_op(int op);                       // attn.cu: FLASH_ATTN_EXT
bool attn_types_ok(int op, int dst_type, int src0_type, int src1_type);
int attn_check(const ggml_tensor * dst);
int attn_forward(ggml_tensor * dst, cudaStream_t stream);
// 16 bytes of T (8 halves / 8 bfloat16 / 4 floats) widened into out[] (NaNs not repaired)
template <typename T> __device__ __forceinline__ void widen16(const uint4 u, float * out) {
    if constexpr (std::is_same_v<T, float>) {
        out[0] = __uint_as_float(u.x); out[1] = __uint_as_float(u.y);
        out[2] = __uint_as_float(u.z); out[3] = __uint_as_float(u.w);
    } else {
        const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            if constexpr (std::is_same_v<T, half>) {
                const float2 f = __half22float2(*(const __half2 *)&w[i]);
                out[2 * i] = f.x; out[2 * i + 1] = f.y;
            } else {
                out[2 * i] = __uint_as_float(w[i] << 16);
                out[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
            }
        }
    }
}
// --- end issue 13 (cuops2)

}  // namespace gcy
