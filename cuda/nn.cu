// Issue 13's row ops on the device (the CPU's are ggml_cy/cpu/csrc/ops_norm.h; same
// op_params, same types, same formulas): NORM, RMS_NORM, GROUP_NORM, SOFT_MAX (scale,
// optional f32/f16 mask broadcast over dims 2-3, ALiBi max_bias), DIAG_MASK_INF, GLU
// (reglu, geglu, swiglu, geglu_erf, geglu_quick; fused with swapped halves, or split).
//
// Types: f32 and f64 for all (f64 is ggml_cy's float64 data), GLU also f16 (computed in
// float, rounded once), as the CPU kernels. Every operand is read through its byte strides
// (permuted and strided views). One block per row (GROUP_NORM: per group and i3); a row is
// read completely before its result is written and each thread writes only the elements it
// read, so an in-place node (dst aliasing src0 element for element) is safe.
//
// Precision, against the CPU: sums are double (the CPU's too, but the order differs, so a
// mean can round differently in the last bit: NORM/RMS_NORM/GROUP_NORM agree to a few ulp);
// SOFT_MAX uses CUDA's expf/exp (within 2 ulp of the CPU's); DIAG_MASK_INF is exact; GLU's
// f32/f16 activations are evaluated in double and rounded once as the CPU's are (equal but
// for rare double-rounding ties), f64's in double (the CPU: long double).
#include <algorithm>

#include "ops.cuh"

namespace gcy {

namespace {

constexpr int NN_BLOCK = 256;

// ggml's enum ggml_glu_op
enum { GLU_REGLU = 0, GLU_GEGLU = 1, GLU_SWIGLU = 2, GLU_SWIGLU_OAI = 3, GLU_GEGLU_ERF = 4,
       GLU_GEGLU_QUICK = 5 };

float param_f32(const ggml_tensor * t, int i) {
    float f;
    memcpy(&f, &t->op_params[i], sizeof f);
    return f;
}

// Byte strides and extents of an operand, by value into the kernels.
struct view4 {
    const char * data;
    int64_t ne[4], nb[4];
};
view4 view_of(const ggml_tensor * t) {
    view4 v;
    v.data = (const char *)t->data;
    for (int i = 0; i < 4; i++) { v.ne[i] = t->ne[i]; v.nb[i] = t->nb[i]; }
    return v;
}

__device__ __forceinline__ const char * row_ptr(const view4 & v, int64_t i1, int64_t i2, int64_t i3) {
    return v.data + i1 * v.nb[1] + i2 * v.nb[2] + i3 * v.nb[3];
}
// row ir of a [ne1, ne2, ne3] row grid
__device__ __forceinline__ void row_index(int64_t ir, int64_t ne1, int64_t ne2, int64_t * i1,
                                          int64_t * i2, int64_t * i3) {
    *i1 = ir % ne1;
    *i2 = (ir / ne1) % ne2;
    *i3 = ir / (ne1 * ne2);
}

// ------------------------------------------------------------------ block reductions
template <typename V> __device__ __forceinline__ V warp_sum(V v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
// the CPU's running max: NaN never enters (w > mx ? w : mx)
template <typename V> __device__ __forceinline__ V max_keep(V a, V b) { return b > a ? b : a; }
template <typename V> __device__ __forceinline__ V warp_max(V v) {
    for (int o = 16; o > 0; o >>= 1) v = max_keep(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
// Every thread gets the block's total. `sh` holds 32 values; reusable right after return.
template <typename V> __device__ V block_sum(V v, V * sh) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = warp_sum(v);
    __syncthreads();                       // sh free from any previous use
    if (lane == 0) sh[w] = v;
    __syncthreads();
    V t = lane < nw ? sh[lane] : V(0);
    return warp_sum(t);
}
template <typename V> __device__ V block_max(V v, V * sh) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) sh[w] = v;
    __syncthreads();
    V t = lane < nw ? sh[lane] : V(-INFINITY);
    return warp_max(t);
}

// compute type of the norms (the CPU's R): float for f32, double for f64
template <typename T> __device__ __forceinline__ T r_sqrt(T x) {
    if constexpr (std::is_same_v<T, double>) return sqrt(x); else return sqrtf(x);
}
template <typename T> __device__ __forceinline__ T r_exp(T x) {
    if constexpr (std::is_same_v<T, double>) return exp(x); else return expf(x);
}
template <typename T> __device__ __forceinline__ T at(const char * p, int64_t i, int64_t nb) {
    return *(const T *)(p + i * nb);
}

// ------------------------------------------------------------------ NORM / RMS_NORM
template <typename T, bool RMS>
__global__ void k_norm(view4 x, view4 y, int64_t nrows, T eps) {
    __shared__ double sh[32];
    const int64_t ir = blockIdx.x;
    if (ir >= nrows) return;
    int64_t i1, i2, i3;
    row_index(ir, x.ne[1], x.ne[2], &i1, &i2, &i3);
    const char * xp = row_ptr(x, i1, i2, i3);
    char * yp = (char *)row_ptr(y, i1, i2, i3);
    const int64_t n = x.ne[0], sb = x.nb[0], db = y.nb[0];
    T mean = T(0), scale;
    if constexpr (RMS) {
        double s = 0.0;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
            const T v = at<T>(xp, j, sb);
            s = __dadd_rn(s, (double)(T)(v * v));
        }
        s = block_sum(s, sh);
        mean = (T)(s / (double)n);
        scale = T(1) / r_sqrt<T>(mean + eps);
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
            *(T *)(yp + j * db) = at<T>(xp, j, sb) * scale;
    } else {
        double s = 0.0;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += (double)at<T>(xp, j, sb);
        s = block_sum(s, sh);
        mean = (T)(s / (double)n);
        double s2 = 0.0;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
            const T d = at<T>(xp, j, sb) - mean;
            s2 = __dadd_rn(s2, (double)(T)(d * d));
        }
        s2 = block_sum(s2, sh);
        scale = T(1) / r_sqrt<T>((T)(s2 / (double)n) + eps);
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
            *(T *)(yp + j * db) = (at<T>(xp, j, sb) - mean) * scale;
    }
}

// Rows of up to NPT * blockDim elements: the row stays in registers between the passes
// (x read once, y written once). Same formulas as k_norm; sums in another order.
template <typename T, bool RMS, int NPT>
__global__ void k_norm_reg(view4 x, view4 y, int64_t nrows, T eps) {
    __shared__ double sh[32];
    const int64_t ir = blockIdx.x;
    if (ir >= nrows) return;
    int64_t i1, i2, i3;
    row_index(ir, x.ne[1], x.ne[2], &i1, &i2, &i3);
    const char * xp = row_ptr(x, i1, i2, i3);
    char * yp = (char *)row_ptr(y, i1, i2, i3);
    const int64_t n = x.ne[0], sb = x.nb[0], db = y.nb[0];
    T v[NPT];
#pragma unroll
    for (int q = 0; q < NPT; q++) {
        const int64_t j = threadIdx.x + (int64_t)q * blockDim.x;
        v[q] = j < n ? at<T>(xp, j, sb) : T(0);
    }
    double s = 0.0;
    if constexpr (RMS) {
#pragma unroll
        for (int q = 0; q < NPT; q++) s = __dadd_rn(s, (double)(T)(v[q] * v[q]));
        s = block_sum(s, sh);
        const T scale = T(1) / r_sqrt<T>((T)(s / (double)n) + eps);
#pragma unroll
        for (int q = 0; q < NPT; q++) {
            const int64_t j = threadIdx.x + (int64_t)q * blockDim.x;
            if (j < n) *(T *)(yp + j * db) = v[q] * scale;
        }
    } else {
#pragma unroll
        for (int q = 0; q < NPT; q++) s += (double)v[q];
        s = block_sum(s, sh);
        const T mean = (T)(s / (double)n);
        double s2 = 0.0;
#pragma unroll
        for (int q = 0; q < NPT; q++) {
            const int64_t j = threadIdx.x + (int64_t)q * blockDim.x;
            const T d = v[q] - mean;
            if (j < n) s2 = __dadd_rn(s2, (double)(T)(d * d));
        }
        s2 = block_sum(s2, sh);
        const T scale = T(1) / r_sqrt<T>((T)(s2 / (double)n) + eps);
#pragma unroll
        for (int q = 0; q < NPT; q++) {
            const int64_t j = threadIdx.x + (int64_t)q * blockDim.x;
            if (j < n) *(T *)(yp + j * db) = (v[q] - mean) * scale;
        }
    }
}

// ------------------------------------------------------------------ GROUP_NORM
// One block per (group g, i3): channels [g*cpg, min(ne2, g*cpg + cpg)).
template <typename T>
__global__ void k_group_norm(view4 x, view4 y, int64_t n_groups, int64_t cpg, T eps) {
    __shared__ double sh[32];
    const int64_t g = blockIdx.x % n_groups, i3 = blockIdx.x / n_groups;
    const int64_t ne0 = x.ne[0], ne1 = x.ne[1], ne2 = x.ne[2];
    const int64_t start = g * cpg, end = start + cpg < ne2 ? start + cpg : ne2;
    if (start >= end) return;
    const int64_t plane = ne0 * ne1, count = plane * (end - start);
    double s = 0.0;
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
        const int64_t i2 = start + k / plane, r = k % plane;
        s += (double)at<T>(row_ptr(x, r / ne0, i2, i3), r % ne0, x.nb[0]);
    }
    s = block_sum(s, sh);
    const T mean = (T)(s / (double)count);
    double s2 = 0.0;
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
        const int64_t i2 = start + k / plane, r = k % plane;
        const T d = at<T>(row_ptr(x, r / ne0, i2, i3), r % ne0, x.nb[0]) - mean;
        s2 = __dadd_rn(s2, (double)(T)(d * d));
    }
    s2 = block_sum(s2, sh);
    const T scale = T(1) / r_sqrt<T>((T)(s2 / (double)count) + eps);
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
        const int64_t i2 = start + k / plane, r = k % plane;
        const T d = at<T>(row_ptr(x, r / ne0, i2, i3), r % ne0, x.nb[0]) - mean;
        *(T *)((char *)row_ptr(y, r / ne0, i2, i3) + (r % ne0) * y.nb[0]) = d * scale;
    }
}

// ------------------------------------------------------------------ SOFT_MAX
// y = softmax(x * scale + slope * mask); the row passes through y (as on the CPU).
template <typename T>
__global__ void k_soft_max(view4 x, view4 y, view4 m, int has_mask, int m16, int64_t nrows,
                           T scale, float max_bias, float m0, float m1, uint32_t nl2) {
    __shared__ double shd[32];
    __shared__ T sht[32];
    const int64_t ir = blockIdx.x;
    if (ir >= nrows) return;
    int64_t i1, i2, i3;
    row_index(ir, x.ne[1], x.ne[2], &i1, &i2, &i3);
    const char * xp = row_ptr(x, i1, i2, i3);
    char * yp = (char *)row_ptr(y, i1, i2, i3);
    const int64_t n = x.ne[0], sb = x.nb[0], db = y.nb[0];
    T slope = T(1);
    if (max_bias > 0.0f) {
        const uint32_t h = (uint32_t)i2;
        const double b = h < nl2 ? (double)m0 : (double)m1;
        const double e = h < nl2 ? (double)(h + 1) : (double)(2 * (h - nl2) + 1);
        slope = (T)(float)pow(b, e);
    }
    const char * mp = has_mask ? row_ptr(m, i1, i2 % m.ne[2], i3 % m.ne[3]) : nullptr;
    T mx = T(-INFINITY);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        T w = a_mul(at<T>(xp, j, sb), scale);
        if (mp) {
            const T mv = m16 ? (T)up(at<half>(mp, j, m.nb[0])) : (T)at<float>(mp, j, m.nb[0]);
            w = a_add(w, a_mul(slope, mv));
        }
        *(T *)(yp + j * db) = w;
        mx = max_keep(mx, w);
    }
    mx = block_max(mx, sht);
    double s = 0.0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const T e = r_exp<T>(*(T *)(yp + j * db) - mx);
        *(T *)(yp + j * db) = e;
        s += (double)e;
    }
    s = block_sum(s, shd);
    const T inv = (T)(1.0 / s);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) *(T *)(yp + j * db) *= inv;
}

// SOFT_MAX with the row in registers (NPT elements per thread): y written once.
template <typename T, int NPT>
__global__ void k_soft_max_reg(view4 x, view4 y, view4 m, int has_mask, int m16, int64_t nrows,
                               T scale, float max_bias, float m0, float m1, uint32_t nl2) {
    __shared__ double shd[32];
    __shared__ T sht[32];
    const int64_t ir = blockIdx.x;
    if (ir >= nrows) return;
    int64_t i1, i2, i3;
    row_index(ir, x.ne[1], x.ne[2], &i1, &i2, &i3);
    const char * xp = row_ptr(x, i1, i2, i3);
    char * yp = (char *)row_ptr(y, i1, i2, i3);
    const int64_t n = x.ne[0], sb = x.nb[0], db = y.nb[0];
    T slope = T(1);
    if (max_bias > 0.0f) {
        const uint32_t h = (uint32_t)i2;
        const double b = h < nl2 ? (double)m0 : (double)m1;
        const double e = h < nl2 ? (double)(h + 1) : (double)(2 * (h - nl2) + 1);
        slope = (T)(float)pow(b, e);
    }
    const char * mp = has_mask ? row_ptr(m, i1, i2 % m.ne[2], i3 % m.ne[3]) : nullptr;
    T w[NPT];
    T mx = T(-INFINITY);
#pragma unroll
    for (int q = 0; q < NPT; q++) {
        const int64_t j = threadIdx.x + (int64_t)q * blockDim.x;
        if (j < n) {
            T v = a_mul(at<T>(xp, j, sb), scale);
            if (mp) {
                const T mv = m16 ? (T)up(at<half>(mp, j, m.nb[0])) : (T)at<float>(mp, j, m.nb[0]);
                v = a_add(v, a_mul(slope, mv));
            }
            w[q] = v;
            mx = max_keep(mx, v);
        } else {
            w[q] = T(0);
        }
    }
    mx = block_max(mx, sht);
    double s = 0.0;
#pragma unroll
    for (int q = 0; q < NPT; q++) {
        const int64_t j = threadIdx.x + (int64_t)q * blockDim.x;
        if (j < n) {
            w[q] = r_exp<T>(w[q] - mx);
            s += (double)w[q];
        }
    }
    s = block_sum(s, shd);
    const T inv = (T)(1.0 / s);
#pragma unroll
    for (int q = 0; q < NPT; q++) {
        const int64_t j = threadIdx.x + (int64_t)q * blockDim.x;
        if (j < n) *(T *)(yp + j * db) = w[q] * inv;
    }
}

// ------------------------------------------------------------------ DIAG_MASK_INF
template <typename T>
__global__ void k_diag_mask_inf(view4 x, view4 y, int64_t nrows, int64_t n_past) {
    const int64_t ir = blockIdx.x;
    if (ir >= nrows) return;
    int64_t i1, i2, i3;
    row_index(ir, x.ne[1], x.ne[2], &i1, &i2, &i3);
    const char * xp = row_ptr(x, i1, i2, i3);
    char * yp = (char *)row_ptr(y, i1, i2, i3);
    for (int64_t j = threadIdx.x; j < x.ne[0]; j += blockDim.x)
        *(T *)(yp + j * y.nb[0]) = j > n_past + i1 ? T(-INFINITY) : at<T>(xp, j, x.nb[0]);
}

// ------------------------------------------------------------------ GLU
// The activations one precision up (f32/f16: double, as the CPU's; f64: double) and
// rounded once to the compute type C, times the gate in C.
template <int OP> __device__ __forceinline__ double glu_act(double w) {
    if constexpr (OP == GLU_GEGLU) {
        const double u = 0.7978845608028654 * w * (1.0 + 0.044715 * w * w);
        return w / (1.0 + exp(-2.0 * u));
    } else if constexpr (OP == GLU_SWIGLU) {
        return w / (1.0 + exp(-w));
    } else if constexpr (OP == GLU_GEGLU_ERF) {
        return 0.5 * w * erfc(-w * 0.7071067811865476);
    } else {   // GLU_GEGLU_QUICK
        return w / (1.0 + exp(-1.702 * w));
    }
}

template <int OP, typename T>
__global__ void k_glu(view4 a, view4 g, view4 y, int64_t n, int64_t a_off, int64_t g_off) {
    using C = calc_t<T>;
    const int64_t nc = y.ne[0], ne1 = y.ne[1], ne2 = y.ne[2];
    for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < n;
         k += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i0 = k % nc, ir = k / nc;
        int64_t i1, i2, i3;
        row_index(ir, ne1, ne2, &i1, &i2, &i3);
        const C xa = (C)up(at<T>(row_ptr(a, i1, i2, i3) + a_off, i0, a.nb[0]));
        const C xg = (C)up(at<T>(row_ptr(g, i1, i2, i3) + g_off, i0, g.nb[0]));
        C r;
        if constexpr (OP == GLU_REGLU) r = xa > C(0) ? xa * xg : C(0);
        else r = (C)glu_act<OP>((double)xa) * xg;
        *(T *)((char *)row_ptr(y, i1, i2, i3) + i0 * y.nb[0]) = convert<T>(r);
    }
}

bool glu_op_ok(int op) {
    return op == GLU_REGLU || op == GLU_GEGLU || op == GLU_SWIGLU || op == GLU_GEGLU_ERF ||
           op == GLU_GEGLU_QUICK;
}

bool is_fd(int type) { return type == GGML_TYPE_F32 || type == GGML_TYPE_F64; }

template <typename F> bool with_fd(int type, F && f) {
    if (type == GGML_TYPE_F32) { f((float *)nullptr); return true; }
    if (type == GGML_TYPE_F64) { f((double *)nullptr); return true; }
    return false;
}

unsigned grid_rows(int64_t nrows) { return (unsigned)nrows; }

// Elements per thread of the register kernels (a power of two up to 16), 0: the row is
// too long for them (the strided multi-pass kernels take it).
int reg_npt(int64_t n, int block) {
    for (int npt = 1; npt <= 16; npt <<= 1)
        if (n <= (int64_t)npt * block) return npt;
    return 0;
}

}  // namespace

// ------------------------------------------------------------------ family entry points
bool nn_is_op(int op) {
    return op == GGML_OP_NORM || op == GGML_OP_RMS_NORM || op == GGML_OP_GROUP_NORM ||
           op == GGML_OP_SOFT_MAX || op == GGML_OP_DIAG_MASK_INF || op == GGML_OP_GLU;
}

bool nn_types_ok(int op, int dst_type, int src0_type, int src1_type) {
    if (op == GGML_OP_GLU)
        return (is_fd(dst_type) || dst_type == GGML_TYPE_F16) && src0_type == dst_type &&
               (src1_type < 0 || src1_type == dst_type);
    if (!is_fd(dst_type) || src0_type != dst_type) return false;
    if (op == GGML_OP_SOFT_MAX)
        return src1_type < 0 || src1_type == GGML_TYPE_F32 || src1_type == GGML_TYPE_F16;
    return src1_type < 0;
}

static bool same_ne(const ggml_tensor * a, const ggml_tensor * b) { return same_shape(a, b); }

int nn_check(const ggml_tensor * t) {
    const ggml_tensor * s = t->src[0], * b = t->src[1];
    const int op = t->op;
    if (!nn_types_ok(op, t->type, s->type, b ? b->type : -1))
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "op %d: no CUDA kernel for dst type %d, "
                    "src0 type %d, src1 type %d", op, t->type, s->type, b ? b->type : -1);
    for (int d = 0; d < 4; d++)
        if (t->ne[d] < 0 || s->ne[d] < 0 || (b && b->ne[d] < 0))
            return fail(GGML_CY_CUDA_ERR_INVALID, "op %d: negative extent", op);
    if (op == GGML_OP_GLU) {
        if (!glu_op_ok(t->op_params[0]))
            return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "GLU: variant %d has no kernel", t->op_params[0]);
        if (b) {
            if (!same_ne(s, b) || !same_ne(s, t))
                return fail(GGML_CY_CUDA_ERR_INVALID, "GLU: split x, g and dst must have one shape");
        } else if (t->ne[0] != s->ne[0] / 2) {
            return fail(GGML_CY_CUDA_ERR_INVALID, "GLU: dst ne0 must be half of src0's");
        }
        for (int d = 1; d < 4; d++)
            if (t->ne[d] != s->ne[d]) return fail(GGML_CY_CUDA_ERR_INVALID, "GLU: shapes differ");
        return GGML_CY_CUDA_OK;
    }
    if (!same_ne(s, t)) return fail(GGML_CY_CUDA_ERR_INVALID, "op %d: dst and src0 shapes differ", op);
    if (op == GGML_OP_SOFT_MAX && b) {
        if (b->ne[0] != s->ne[0] || b->ne[1] < s->ne[1] || b->ne[2] <= 0 || b->ne[3] <= 0 ||
            s->ne[2] % b->ne[2] || s->ne[3] % b->ne[3])
            return fail(GGML_CY_CUDA_ERR_INVALID, "SOFT_MAX: the mask does not cover or "
                        "broadcast over x");
    }
    if (op == GGML_OP_GROUP_NORM && t->op_params[0] < 1)
        return fail(GGML_CY_CUDA_ERR_INVALID, "GROUP_NORM: n_groups must be >= 1");
    const int64_t rows = s->ne[1] * s->ne[2] * s->ne[3];
    if (op != GGML_OP_GROUP_NORM && rows > 0x7fffffffLL)
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "op %d: more than 2^31-1 rows", op);
    if (op == GGML_OP_GROUP_NORM && (int64_t)t->op_params[0] * s->ne[3] > 0x7fffffffLL)
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "GROUP_NORM: too many groups");
    return GGML_CY_CUDA_OK;
}

int nn_forward(ggml_tensor * t, cudaStream_t stream) {
    const ggml_tensor * s = t->src[0], * b = t->src[1];
    const int op = t->op;
    const view4 x = view_of(s), y = view_of(t);
    const int64_t nrows = s->ne[1] * s->ne[2] * s->ne[3];
    if (op == GGML_OP_GLU) {
        const int64_t n = nelements(t);
        if (n == 0) return GGML_CY_CUDA_OK;
        const int gop = t->op_params[0];
        const bool swapped = t->op_params[1] != 0;
        int64_t a_off = 0, g_off = 0;
        if (!b) {
            if (swapped) a_off = t->ne[0] * s->nb[0];
            else g_off = t->ne[0] * s->nb[0];
        }
        const view4 g = b ? view_of(b) : x;
        const unsigned grid = (unsigned)std::min<int64_t>((n + NN_BLOCK - 1) / NN_BLOCK, 65535LL * 8);
        auto launch = [&](auto * tp) {
            using T = std::remove_pointer_t<decltype(tp)>;
            switch (gop) {
                case GLU_REGLU: k_glu<GLU_REGLU, T><<<grid, NN_BLOCK, 0, stream>>>(x, g, y, n, a_off, g_off); break;
                case GLU_GEGLU: k_glu<GLU_GEGLU, T><<<grid, NN_BLOCK, 0, stream>>>(x, g, y, n, a_off, g_off); break;
                case GLU_SWIGLU: k_glu<GLU_SWIGLU, T><<<grid, NN_BLOCK, 0, stream>>>(x, g, y, n, a_off, g_off); break;
                case GLU_GEGLU_ERF: k_glu<GLU_GEGLU_ERF, T><<<grid, NN_BLOCK, 0, stream>>>(x, g, y, n, a_off, g_off); break;
                default: k_glu<GLU_GEGLU_QUICK, T><<<grid, NN_BLOCK, 0, stream>>>(x, g, y, n, a_off, g_off); break;
            }
        };
        if (t->type == GGML_TYPE_F16) launch((half *)nullptr);
        else with_fd(t->type, launch);
        return check_launch("GLU");
    }
    if (op == GGML_OP_GROUP_NORM) {
        const int64_t ng = t->op_params[0];
        if (nelements(s) == 0) return GGML_CY_CUDA_OK;
        const int64_t cpg = (s->ne[2] + ng - 1) / ng;
        const float eps = param_f32(t, 1);
        with_fd(t->type, [&](auto * tp) {
            using T = std::remove_pointer_t<decltype(tp)>;
            k_group_norm<T><<<(unsigned)(ng * s->ne[3]), NN_BLOCK, 0, stream>>>(x, y, ng, cpg, (T)eps);
        });
        return check_launch("GROUP_NORM");
    }
    if (nrows == 0 || s->ne[0] == 0) return GGML_CY_CUDA_OK;
    const unsigned grid = grid_rows(nrows);
    const int block = s->ne[0] >= NN_BLOCK ? NN_BLOCK : (int)((s->ne[0] + 31) / 32 * 32);
    if (op == GGML_OP_NORM || op == GGML_OP_RMS_NORM) {
        const float eps = param_f32(t, 0);
        const int npt = reg_npt(s->ne[0], block);
        with_fd(t->type, [&](auto * tp) {
            using T = std::remove_pointer_t<decltype(tp)>;
            const T e = (T)eps;
            if (op == GGML_OP_RMS_NORM) {
                switch (npt) {
                    case 1: k_norm_reg<T, true, 1><<<grid, block, 0, stream>>>(x, y, nrows, e); break;
                    case 2: k_norm_reg<T, true, 2><<<grid, block, 0, stream>>>(x, y, nrows, e); break;
                    case 4: k_norm_reg<T, true, 4><<<grid, block, 0, stream>>>(x, y, nrows, e); break;
                    case 8: k_norm_reg<T, true, 8><<<grid, block, 0, stream>>>(x, y, nrows, e); break;
                    case 16: k_norm_reg<T, true, 16><<<grid, block, 0, stream>>>(x, y, nrows, e); break;
                    default: k_norm<T, true><<<grid, block, 0, stream>>>(x, y, nrows, e); break;
                }
            } else {
                switch (npt) {
                    case 1: k_norm_reg<T, false, 1><<<grid, block, 0, stream>>>(x, y, nrows, e); break;
                    case 2: k_norm_reg<T, false, 2><<<grid, block, 0, stream>>>(x, y, nrows, e); break;
                    case 4: k_norm_reg<T, false, 4><<<grid, block, 0, stream>>>(x, y, nrows, e); break;
                    case 8: k_norm_reg<T, false, 8><<<grid, block, 0, stream>>>(x, y, nrows, e); break;
                    case 16: k_norm_reg<T, false, 16><<<grid, block, 0, stream>>>(x, y, nrows, e); break;
                    default: k_norm<T, false><<<grid, block, 0, stream>>>(x, y, nrows, e); break;
                }
            }
        });
        return check_launch(op == GGML_OP_NORM ? "NORM" : "RMS_NORM");
    }
    if (op == GGML_OP_DIAG_MASK_INF) {
        const int64_t n_past = t->op_params[0];
        with_fd(t->type, [&](auto * tp) {
            using T = std::remove_pointer_t<decltype(tp)>;
            k_diag_mask_inf<T><<<grid, block, 0, stream>>>(x, y, nrows, n_past);
        });
        return check_launch("DIAG_MASK_INF");
    }
    // SOFT_MAX: ggml's ALiBi constants (host powf, as the CPU), the slope per head on device
    const float scale = param_f32(t, 0), max_bias = param_f32(t, 1);
    const uint32_t n_head = (uint32_t)s->ne[2];
    uint32_t nl2 = 1;
    while (nl2 * 2 <= (n_head ? n_head : 1)) nl2 *= 2;
    const float m0 = powf(2.0f, -(max_bias) / (float)nl2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / (float)nl2);
    const view4 m = b ? view_of(b) : x;
    const int m16 = b && b->type == GGML_TYPE_F16;
    const int npt = reg_npt(s->ne[0], block);
    const int hm = b != nullptr;
    with_fd(t->type, [&](auto * tp) {
        using T = std::remove_pointer_t<decltype(tp)>;
        const T sc = (T)scale;
        switch (npt) {
            case 1: k_soft_max_reg<T, 1><<<grid, block, 0, stream>>>(x, y, m, hm, m16, nrows, sc, max_bias, m0, m1, nl2); break;
            case 2: k_soft_max_reg<T, 2><<<grid, block, 0, stream>>>(x, y, m, hm, m16, nrows, sc, max_bias, m0, m1, nl2); break;
            case 4: k_soft_max_reg<T, 4><<<grid, block, 0, stream>>>(x, y, m, hm, m16, nrows, sc, max_bias, m0, m1, nl2); break;
            case 8: k_soft_max_reg<T, 8><<<grid, block, 0, stream>>>(x, y, m, hm, m16, nrows, sc, max_bias, m0, m1, nl2); break;
            case 16: k_soft_max_reg<T, 16><<<grid, block, 0, stream>>>(x, y, m, hm, m16, nrows, sc, max_bias, m0, m1, nl2); break;
            default: k_soft_max<T><<<grid, block, 0, stream>>>(x, y, m, hm, m16, nrows, sc, max_bias, m0, m1, nl2); break;
        }
    });
    return check_launch("SOFT_MAX");
}

}  // namespace gcy
