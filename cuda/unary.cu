// Unary elementwise ops: dst = op(src0), same shape, any strides. Half types compute in
// float and round once; the op is chosen at run time (one kernel per type pair keeps the
// build small; these kernels are bound by memory, not by the switch).
#include "ops.cuh"

namespace gcy {

__device__ __forceinline__ float  u_exp(float x) { return expf(x); }
__device__ __forceinline__ double u_exp(double x) { return exp(x); }

template <typename C> __device__ __forceinline__ C un_float(int op, C x, float p0, float p1) {
    constexpr bool D = std::is_same_v<C, double>;
    switch (op) {
        case GGML_OP_NEG: return -x;
        case GGML_OP_ABS: return D ? fabs(x) : fabsf(x);
        case GGML_OP_SGN: return x > C(0) ? C(1) : (x < C(0) ? C(-1) : (x == C(0) ? C(0) : x));
        case GGML_OP_SQR: return m_mul(x, x);
        case GGML_OP_SQRT: return D ? sqrt(x) : sqrtf(x);
        case GGML_OP_EXP: return u_exp(x);
        case GGML_OP_EXPM1: return D ? expm1(x) : expm1f(x);
        case GGML_OP_LOG: return D ? log(x) : logf(x);
        case GGML_OP_LOG1P: return D ? log1p(x) : log1pf(x);
        case GGML_OP_SIN: return D ? sin(x) : sinf(x);
        case GGML_OP_COS: return D ? cos(x) : cosf(x);
        case GGML_OP_TANH: return D ? tanh(x) : tanhf(x);
        case GGML_OP_FLOOR: return D ? floor(x) : floorf(x);
        case GGML_OP_CEIL: return D ? ceil(x) : ceilf(x);
        case GGML_OP_ROUND: return D ? rint(x) : rintf(x);
        case GGML_OP_TRUNC: return D ? trunc(x) : truncf(x);
        case GGML_OP_RELU: return x > C(0) ? x : C(0);
        case GGML_OP_LEAKY_RELU: return x > C(0) ? x : m_mul((C)p0, x);
        case GGML_OP_ELU: return x > C(0) ? x : m_mul((C)p0, D ? expm1(x) : expm1f(x));
        case GGML_OP_SIGMOID: return m_div(C(1), m_add(C(1), u_exp(-x)));
        case GGML_OP_SILU: return m_div(x, m_add(C(1), u_exp(-x)));
        case GGML_OP_GELU: {
            const C k = C(0.7978845608028654);   // sqrt(2/pi)
            C inner = m_mul(m_mul(k, x), m_add(C(1), m_mul(C(0.044715), m_mul(x, x))));
            C t = D ? tanh(inner) : tanhf(inner);
            return m_mul(m_mul(C(0.5), x), m_add(C(1), t));
        }
        case GGML_OP_GELU_ERF: {
            C e = D ? erf(m_mul(x, C(0.7071067811865476))) : erff(m_mul(x, C(0.7071067811865476)));
            return m_mul(m_mul(C(0.5), x), m_add(C(1), e));
        }
        case GGML_OP_GELU_QUICK: return m_mul(x, m_div(C(1), m_add(C(1), u_exp(m_mul(C(-1.702), x)))));
        case GGML_OP_HARDSWISH: {
            C h = m_div(m_add(x, C(3)), C(6));
            h = h < C(0) ? C(0) : (h > C(1) ? C(1) : h);
            return m_mul(x, h);
        }
        case GGML_OP_HARDSIGMOID: {
            C h = m_div(m_add(x, C(3)), C(6));
            return h < C(0) ? C(0) : (h > C(1) ? C(1) : h);
        }
        case GGML_OP_SOFTPLUS: return x > C(20) ? x : (D ? log1p(exp(x)) : log1pf(expf(x)));
        case GGML_OP_STEP: return x > C(0) ? C(1) : C(0);
        case GGML_OP_CLAMP: return x < (C)p0 ? (C)p0 : (x > (C)p1 ? (C)p1 : x);
        case GGML_OP_SCALE: return m_mul(x, (C)p0);
        default: return x;
    }
}

template <typename C> __device__ __forceinline__ C un_int(int op, C x, float p0, float p1) {
    switch (op) {
        case GGML_OP_NEG: if constexpr (std::is_signed_v<C>) return wrap_sub(C(0), x); else return wrap_sub(C(0), x);
        case GGML_OP_ABS: if constexpr (std::is_signed_v<C>) return x < 0 ? wrap_sub(C(0), x) : x; else return x;
        case GGML_OP_SGN:
            if constexpr (std::is_signed_v<C>) return x > 0 ? C(1) : (x < 0 ? C(-1) : C(0));
            else return x > 0 ? C(1) : C(0);
        case GGML_OP_SQR: return wrap_mul(x, x);
        case GGML_OP_RELU: return x > 0 ? x : C(0);
        case GGML_OP_STEP: return x > 0 ? C(1) : C(0);
        default: return x;
    }
}

template <typename T, typename TD> __device__ __forceinline__ TD un_elem(int op, T x, float p0, float p1) {
    if constexpr (std::is_same_v<TD, bool> && !std::is_same_v<T, bool>) {
        return up(x) == calc_t<T>(0);   // LOGICAL_NOT, the one op with a bool result
    } else if constexpr (std::is_same_v<T, bool>) {
        return !x;                      // LOGICAL_NOT on bool
    } else if constexpr (is_floating_v<T>) {
        return convert<TD>(un_float<calc_t<T>>(op, up(x), p0, p1));
    } else {
        return un_int<T>(op, x, p0, p1);
    }
}

struct unravel4 {
    fastdiv ne0, ne1, ne2;
    int64_t snb[4], dnb[4];
};

template <typename T, typename TD>
__global__ void k_unary_flat(int op, const T * __restrict__ x, TD * __restrict__ y, uint32_t n, float p0, float p1) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = un_elem<T, TD>(op, x[i], p0, p1);
    }
}

template <typename T, typename TD>
__global__ void k_unary_unravel(int op, const char * x, char * y, uint32_t n, unravel4 u, float p0, float p1) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t t = fdiv(i, u.ne0);
    const uint32_t i0 = i - t * u.ne0.d;
    uint32_t v = fdiv(t, u.ne1);
    const uint32_t i1 = t - v * u.ne1.d;
    const uint32_t i3 = fdiv(v, u.ne2);
    const uint32_t i2 = v - i3 * u.ne2.d;
    const T a = *(const T *)(x + i0 * u.snb[0] + i1 * u.snb[1] + i2 * u.snb[2] + (int64_t)i3 * u.snb[3]);
    *(TD *)(y + i0 * u.dnb[0] + i1 * u.dnb[1] + i2 * u.dnb[2] + (int64_t)i3 * u.dnb[3]) = un_elem<T, TD>(op, a, p0, p1);
}

bool unary_supported(int op, int dst_type, int src0_type) {
    if (!op_is_unary(op)) return false;
    if (op == GGML_OP_LOGICAL_NOT) return dst_type == GGML_TYPE_BOOL && ggml_type_valid(src0_type);
    if (dst_type != src0_type) return false;
    bool ok = false;   // the op table's cuda column (ops_defs.h: ggml_cy_op_cuda_types)
    with_type(src0_type, [&](auto * tp) {
        using T = std::remove_pointer_t<decltype(tp)>;
        ok = (ggml_cy_op_cuda_types(op) & type_bit<T>()) != 0;
    });
    return ok;
}

int unary_forward(ggml_tensor * dst, cudaStream_t stream) {
    const ggml_tensor * src = dst->src[0];
    const int op = dst->op;
    if (!unary_supported(op, dst->type, src->type)) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "unary op %d not supported for dst=%s src=%s", op,
                    ggml_type_name(dst->type), ggml_type_name(src->type));
    }
    if (!same_shape(dst, src)) return fail(GGML_CY_CUDA_ERR_INVALID, "unary op: dst and src shapes differ");
    const int64_t n = nelements(dst);
    if (n == 0) return GGML_CY_CUDA_OK;
    if (n >= (int64_t(1) << 31)) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "tensor too large");
    float p0, p1;
    memcpy(&p0, &dst->op_params[0], sizeof p0);
    memcpy(&p1, &dst->op_params[1], sizeof p1);
    if (op == GGML_OP_ELU && p0 == 0.f) p0 = 1.f;   // ELU's alpha defaults to 1
    const bool flat = is_contiguous(dst) && is_contiguous(src);
    unravel4 u;
    u.ne0 = make_fastdiv((uint32_t)dst->ne[0]);
    u.ne1 = make_fastdiv((uint32_t)dst->ne[1]);
    u.ne2 = make_fastdiv((uint32_t)dst->ne[2]);
    for (int i = 0; i < 4; i++) { u.snb[i] = src->nb[i]; u.dnb[i] = dst->nb[i]; }
    const unsigned grid_flat = ceil_div(n, BLOCK * 4) ? ceil_div(n, BLOCK * 4) : 1;
    const unsigned grid = ceil_div(n, BLOCK);
    with_type(src->type, [&](auto * tp) {
        using T = std::remove_pointer_t<decltype(tp)>;
        if (dst->type == GGML_TYPE_BOOL) {
            if (flat) k_unary_flat<T, bool><<<grid_flat, BLOCK, 0, stream>>>(op, (const T *)src->data, (bool *)dst->data, (uint32_t)n, p0, p1);
            else k_unary_unravel<T, bool><<<grid, BLOCK, 0, stream>>>(op, (const char *)src->data, (char *)dst->data, (uint32_t)n, u, p0, p1);
        } else if constexpr (!std::is_same_v<T, bool>) {
            if (flat) k_unary_flat<T, T><<<grid_flat, BLOCK, 0, stream>>>(op, (const T *)src->data, (T *)dst->data, (uint32_t)n, p0, p1);
            else k_unary_unravel<T, T><<<grid, BLOCK, 0, stream>>>(op, (const char *)src->data, (char *)dst->data, (uint32_t)n, u, p0, p1);
        }
    });
    return check_launch("unary kernel launch");
}

}  // namespace gcy
