// GGML_OP_SET_ROWS on the device (ggml's set_rows; CPU: ggml_cy/cpu/csrc/ops_rows_attn.h):
//   dst is a view of a (src[2]); src[0] = b [ne0, n, ne2, ne3] f32 or f16; src[1] = ids c
//   [n, ne11, ne12, 1] i32 or i64 broadcast by modulo over b's dims 2 and 3:
//     a[:, c[i, i2 % ne11, i3 % ne12], i2, i3] = convert(b[:, i, i2, i3])
//   converted to a's type (f32, f16, bf16: numpy's round-to-nearest-even, bitwise the CPU's).
// Quantized destinations are refused here (the CPU quantizes with gguf-py's exact emulation).
// An id outside [0, a.ne[1]) skips its row on the device (the CPU raises IndexError).
// (GET_ROWS lives in quant.cu, with the dequantizing kernels.)
#include "ops.cuh"

namespace gcy {

struct set_rows_args {
    const char * b; const char * ids; char * d;
    int64_t bnb[4], inb[3], dnb[4];
    int64_t ne11, ne12, dst_rows;
    fastdiv ne0, n, ne2;
    int wide;
};

template <typename S, typename D>
__global__ void __launch_bounds__(BLOCK) k_set_rows(set_rows_args a, uint32_t total) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    const uint32_t row = fdiv(t, a.ne0), k = t - row * a.ne0.d;
    const uint32_t v = fdiv(row, a.n), i = row - v * a.n.d;
    const uint32_t i3 = fdiv(v, a.ne2), i2 = v - i3 * a.ne2.d;
    const char * pi = a.ids + (int64_t)i * a.inb[0] + (int64_t)(i2 % a.ne11) * a.inb[1] +
                      (int64_t)(i3 % a.ne12) * a.inb[2];
    const int64_t i1 = a.wide ? *(const int64_t *)pi : (int64_t)*(const int32_t *)pi;
    if (i1 < 0 || i1 >= a.dst_rows) return;
    const S x = *(const S *)(a.b + (int64_t)k * a.bnb[0] + (int64_t)i * a.bnb[1] + (int64_t)i2 * a.bnb[2] +
                             (int64_t)i3 * a.bnb[3]);
    *(D *)(a.d + (int64_t)k * a.dnb[0] + i1 * a.dnb[1] + (int64_t)i2 * a.dnb[2] + (int64_t)i3 * a.dnb[3]) =
        convert<D>(x);
}

bool rows_is_op(int op) { return op == GGML_OP_SET_ROWS; }

// src0_type: the rows b, src1_type: the ids c, dst_type: a's
bool rows_types_ok(int op, int dst_type, int src0_type, int src1_type) {
    return op == GGML_OP_SET_ROWS && (src0_type == GGML_TYPE_F32 || src0_type == GGML_TYPE_F16) &&
           (src1_type == GGML_TYPE_I32 || src1_type == GGML_TYPE_I64) &&
           (dst_type == GGML_TYPE_F32 || dst_type == GGML_TYPE_F16 || dst_type == GGML_TYPE_BF16);
}

int rows_check(const ggml_tensor * dst) {
    const ggml_tensor * b = dst->src[0], * c = dst->src[1];
    if (!b || !c) return fail(GGML_CY_CUDA_ERR_INVALID, "set_rows: needs rows b and ids c");
    if (!rows_types_ok(dst->op, dst->type, b->type, c->type)) {
        return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "set_rows: rows %s, ids %s into %s (the CUDA kernel takes "
                    "f32/f16 rows, i32/i64 ids, an f32/f16/bf16 destination)", ggml_type_name(b->type),
                    ggml_type_name(c->type), ggml_type_name(dst->type));
    }
    if (dst->ne[0] != b->ne[0] || dst->ne[2] != b->ne[2] || dst->ne[3] != b->ne[3] || b->ne[1] != c->ne[0] ||
        c->ne[1] <= 0 || c->ne[2] <= 0 || b->ne[2] % c->ne[1] || b->ne[3] % c->ne[2] || c->ne[3] != 1) {
        return fail(GGML_CY_CUDA_ERR_INVALID, "set_rows: shapes do not match ggml's rule");
    }
    if (nelements(b) >= ((int64_t)1 << 31)) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "set_rows: too many elements");
    return GGML_CY_CUDA_OK;
}

int rows_forward(ggml_tensor * dst, cudaStream_t stream) {
    GCY_TRY(rows_check(dst));
    const ggml_tensor * b = dst->src[0], * c = dst->src[1];
    const int64_t total = nelements(b);
    if (total == 0) return GGML_CY_CUDA_OK;
    set_rows_args a;
    a.b = (const char *)b->data; a.ids = (const char *)c->data; a.d = (char *)dst->data;
    for (int i = 0; i < 4; i++) { a.bnb[i] = b->nb[i]; a.dnb[i] = dst->nb[i]; }
    for (int i = 0; i < 3; i++) a.inb[i] = c->nb[i];
    a.ne11 = c->ne[1]; a.ne12 = c->ne[2]; a.dst_rows = dst->ne[1];
    a.ne0 = make_fastdiv((uint32_t)b->ne[0]);
    a.n = make_fastdiv((uint32_t)b->ne[1]);
    a.ne2 = make_fastdiv((uint32_t)b->ne[2]);
    a.wide = c->type == GGML_TYPE_I64;
    const unsigned grid = ceil_div(total, BLOCK);
    bool ok = true;
    auto launch = [&](auto * sp) {
        using S = std::remove_pointer_t<decltype(sp)>;
        if (dst->type == GGML_TYPE_F32) k_set_rows<S, float><<<grid, BLOCK, 0, stream>>>(a, (uint32_t)total);
        else if (dst->type == GGML_TYPE_F16) k_set_rows<S, half><<<grid, BLOCK, 0, stream>>>(a, (uint32_t)total);
        else if (dst->type == GGML_TYPE_BF16) k_set_rows<S, bf16><<<grid, BLOCK, 0, stream>>>(a, (uint32_t)total);
        else ok = false;
    };
    if (b->type == GGML_TYPE_F32) launch((float *)nullptr);
    else launch((half *)nullptr);
    if (!ok) return fail(GGML_CY_CUDA_ERR_UNSUPPORTED, "set_rows type");
    return check_launch("set_rows kernel launch");
}

}  // namespace gcy
