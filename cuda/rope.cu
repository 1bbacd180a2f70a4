// GGML_OP_ROPE on the device (ggml's rope_ext): normal (mode 0) and NeoX (mode 2) pair
// layouts, freq_base / freq_scale, YaRN (ext_factor, attn_factor, beta_fast, beta_slow over
// n_ctx_orig), optional f32 freq factors, partial rotation (n_dims < head size), f32 and f16,
// any strides. Semantics and the order of the float32 arithmetic follow the CPU kernel
// (ggml_cy/cpu/csrc/ops_rope.h): the per-call constants (theta_scale, the YaRN correction
// range, mscale) are computed on the host with the same libm calls, each pair's angle is the
// same running product p * theta_scale^k, and every multiply/add is an explicit _rn operation
// (no FMA contraction). Only cos/sin differ in implementation: they are evaluated in double
// and rounded once, which is what glibc's cosf/sinf give in all but rare ties, so results
// agree with the CPU to the last bit almost everywhere (the tests use an NMSE bound).
//
// One CTA per (token i2, batch i3): its threads build the (cos, sin) table of that position
// in shared memory, then rotate every head's pairs and copy the unrotated tail.
#include <math.h>

#include "ops.cuh"

namespace gcy {

struct rope_args {
    const char * src; char * dst; const char * pos; const char * ff;
    int64_t snb[4], dnb[4];
    int64_t pos_nb0, ff_nb0;
    int ne0, ne1, ne2;
    int n_dims, neox, has_ext;
    float theta_scale, freq_scale, ext_factor, mscale, corr0, corr1;
};

template <typename T>
__global__ void __launch_bounds__(256) k_rope(rope_args a) {
    extern __shared__ float cs[];   // [n_dims/2][2]: cos, sin (times mscale)
    const int i2 = blockIdx.x % a.ne2, i3 = blockIdx.x / a.ne2;
    const int half = a.n_dims / 2;
    const float p = (float)*(const int32_t *)(a.pos + (int64_t)i2 * a.pos_nb0);
    for (int k = threadIdx.x; k < half; k += blockDim.x) {
        float theta = p;   // p * theta_scale^k as the CPU's running product
        for (int j = 0; j < k; j++) theta = __fmul_rn(theta, a.theta_scale);
        const float f = a.ff ? *(const float *)(a.ff + (int64_t)k * a.ff_nb0) : 1.0f;
        const float theta_extrap = __fdiv_rn(theta, f);
        const float theta_interp = __fmul_rn(a.freq_scale, theta_extrap);
        float th = theta_interp;
        if (a.has_ext) {
            float y = __fdiv_rn(__fsub_rn((float)k, a.corr0), fmaxf(0.001f, __fsub_rn(a.corr1, a.corr0)));
            y = fminf(1.0f, fmaxf(0.0f, y));
            const float mix = __fmul_rn(__fsub_rn(1.0f, y), a.ext_factor);
            th = __fadd_rn(__fmul_rn(theta_interp, __fsub_rn(1.0f, mix)), __fmul_rn(theta_extrap, mix));
        }
        double s, c;
        sincos((double)th, &s, &c);
        cs[2 * k] = __fmul_rn((float)c, a.mscale);
        cs[2 * k + 1] = __fmul_rn((float)s, a.mscale);
    }
    __syncthreads();
    const int step = a.neox ? 1 : 2, off = a.neox ? half : 1;
    const int tail = a.ne0 - a.n_dims;
    const int per_head = half + tail;    // work items per head: pairs, then tail elements
    const int64_t n_items = (int64_t)per_head * a.ne1;
    const char * sbase = a.src + (int64_t)i2 * a.snb[2] + (int64_t)i3 * a.snb[3];
    char * dbase = a.dst + (int64_t)i2 * a.dnb[2] + (int64_t)i3 * a.dnb[3];
    for (int64_t it = threadIdx.x; it < n_items; it += blockDim.x) {
        const int i1 = (int)(it / per_head), w = (int)(it - (int64_t)i1 * per_head);
        const char * s = sbase + (int64_t)i1 * a.snb[1];
        char * d = dbase + (int64_t)i1 * a.dnb[1];
        if (w < half) {
            const int64_t e0 = (int64_t)w * step, e1 = e0 + off;
            const float x0 = up(*(const T *)(s + e0 * a.snb[0]));
            const float x1 = up(*(const T *)(s + e1 * a.snb[0]));
            const float c = cs[2 * w], sn = cs[2 * w + 1];
            *(T *)(d + e0 * a.dnb[0]) = convert<T>(__fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, sn)));
            *(T *)(d + e1 * a.dnb[0]) = convert<T>(__fadd_rn(__fmul_rn(x0, sn), __fmul_rn(x1, c)));
        } else {
            const int64_t e = a.n_dims + (w - half);
            *(T *)(d + e * a.dnb[0]) = *(const T *)(s + e * a.snb[0]);
        }
    }
}

static float rope_corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    return n_dims * logf(n_ctx_orig / (n_rot * 2 * (float)M_PI)) / (2 * logf(base));
}

bool rope_is_op(int op) { return op == GGML_OP_ROPE; }

bool rope_types_ok(int op, int dst_type, int src0_type, int src1_type) {
    return op == GGML_OP_ROPE && (src0_type == GGML_TYPE_F32 || src0_type == GGML_TYPE_F16) &&
           dst_type == src0_type && (src1_type == GGML_TYPE_I32 || src1_type < 0);
}

int rope_check(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0], * pos = dst->src[1], * ff = dst->src[2];
    if (!a || !pos) return fail(GGML_CY_CUDA_ERR_INVALID, "rope: needs a and positions");
    if (!rope_types_ok(dst->op, dst->type, a->type, pos->type) || (ff && ff->type != GGML_TYPE_F32)) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "rope: a %s, positions %s -> %s (needs f32/f16 a, i32 "
                    "positions, f32 freq factors)", ggml_type_name(a->type), ggml_type_name(pos->type),
                    ggml_type_name(dst->type));
    }
    const int n_dims = dst->op_params[1], mode = dst->op_params[2];
    if (!same_shape(a, dst)) return fail(GGML_CY_CUDA_ERR_INVALID, "rope: dst must have a's shape");
    if (n_dims <= 0 || n_dims % 2 || n_dims > a->ne[0])
        return fail(GGML_CY_CUDA_ERR_INVALID, "rope: n_dims %d must be even, positive and <= ne[0]", n_dims);
    if (mode != 0 && mode != 2)
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "rope: mode %d (only 0 normal and 2 NeoX)", mode);
    if (pos->ne[0] != a->ne[2] || pos->ne[1] != 1 || pos->ne[2] != 1 || pos->ne[3] != 1)
        return fail(GGML_CY_CUDA_ERR_INVALID, "rope: one position per token (ne[2])");
    if (ff && ff->ne[0] < n_dims / 2) return fail(GGML_CY_CUDA_ERR_INVALID, "rope: too few freq factors");
    if (n_dims > 8192) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "rope: n_dims %d > 8192", n_dims);
    for (int i = 0; i < 4; i++)
        if (a->ne[i] >= (1 << 30)) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "rope: tensor too large");
    if (a->ne[2] * a->ne[3] >= ((int64_t)1 << 31)) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "rope: too many tokens");
    return GGML_CY_CUDA_OK;
}

int rope_forward(ggml_tensor * dst, cudaStream_t stream) {
    GCY_TRY(rope_check(dst));
    const ggml_tensor * a = dst->src[0], * pos = dst->src[1], * ff = dst->src[2];
    if (nelements(dst) == 0) return GGML_CY_CUDA_OK;
    const int n_dims = dst->op_params[1], mode = dst->op_params[2], n_ctx_orig = dst->op_params[4];
    float fp[6];
    memcpy(fp, &dst->op_params[5], sizeof fp);
    const float freq_base = fp[0], freq_scale = fp[1], ext_factor = fp[2], attn_factor = fp[3];
    const float beta_fast = fp[4], beta_slow = fp[5];
    rope_args p;
    p.src = (const char *)a->data; p.dst = (char *)dst->data; p.pos = (const char *)pos->data;
    p.ff = ff ? (const char *)ff->data : nullptr;
    for (int i = 0; i < 4; i++) { p.snb[i] = a->nb[i]; p.dnb[i] = dst->nb[i]; }
    p.pos_nb0 = pos->nb[0]; p.ff_nb0 = ff ? ff->nb[0] : 0;
    p.ne0 = (int)a->ne[0]; p.ne1 = (int)a->ne[1]; p.ne2 = (int)a->ne[2];
    p.n_dims = n_dims; p.neox = mode == 2;
    // the host-side constants, computed as the CPU kernel computes them
    p.theta_scale = powf(freq_base, -2.0f / n_dims);
    const float lo = floorf(rope_corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base));
    const float hi = ceilf(rope_corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base));
    p.corr0 = lo > 0 ? lo : 0;
    p.corr1 = hi < (float)(n_dims - 1) ? hi : (float)(n_dims - 1);
    p.freq_scale = freq_scale; p.ext_factor = ext_factor;
    p.has_ext = ext_factor != 0.0f;
    float mscale = attn_factor;
    if (p.has_ext) {
        volatile float t = 0.1f * logf(1.0f / freq_scale);   // no contraction into an FMA
        mscale *= 1.0f + t;
    }
    p.mscale = mscale;
    const unsigned grid = (unsigned)(a->ne[2] * a->ne[3]);
    const size_t smem = (size_t)n_dims * sizeof(float);
    if (a->type == GGML_TYPE_F32) k_rope<float><<<grid, 256, smem, stream>>>(p);
    else k_rope<half><<<grid, 256, smem, stream>>>(p);
    return check_launch("rope kernel launch");
}

}  // namespace gcy
