// Shared internals of the CUDA library: error recording (never abort), the library stream,
// fast integer division, element types and their float conversions.
#pragma once

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdarg.h>
#include <string.h>
#include <type_traits>
#include <utility>

#include "ggml_cy_cuda.h"

namespace gcy {

// ------------------------------------------------------------------ errors
// Records `msg` as this thread's last error and returns `status` (callers `return fail(...)`).
int fail(int status, const char * fmt, ...);
// Turns a CUDA error into a status (OOM for cudaErrorMemoryAllocation) with CUDA's own string.
int fail_cuda(cudaError_t err, const char * what);
// After a kernel launch: the launch error, if any, as a status.
int check_launch(const char * what);

#define GCY_TRY(expr) do { int gcy_st_ = (expr); if (gcy_st_ != GGML_CY_CUDA_OK) return gcy_st_; } while (0)
#define GCY_CUDA(call, what) do { cudaError_t gcy_e_ = (call); if (gcy_e_ != cudaSuccess) return ::gcy::fail_cuda(gcy_e_, what); } while (0)

// ------------------------------------------------------------------ stream / device
int get_stream(cudaStream_t * stream);   // library stream, created on first use
int device_props(const cudaDeviceProp ** props);   // cached properties of the current device

// Checks that every byte an operand addresses ([data + min offset, data + max offset +
// element size)) lies in a live registered buffer (runtime.cu).
int check_tensor_memory(const ggml_tensor * t, const char * role);
// Moves on every buffer free: memory validated at generation g is still live while unchanged.
uint64_t registry_generation();

// ------------------------------------------------------------------ fast division
// Division by a run-time constant through a multiply-high and a shift (Granlund-Montgomery,
// as ggml's init_fastdiv_values): valid for dividends below 2^31 and divisors >= 1.
struct fastdiv {
    uint32_t mp;   // magic multiplier
    uint32_t l;    // shift
    uint32_t d;    // divisor
};

static inline fastdiv make_fastdiv(uint32_t d) {
    uint32_t l = 0;
    while (l < 32 && (uint32_t(1) << l) < d) l++;
    uint32_t mp = (uint32_t)(((uint64_t(1) << 32) * ((uint64_t(1) << l) - d)) / d + 1);
    return fastdiv{mp, l, d};
}

__device__ __forceinline__ uint32_t fdiv(uint32_t n, fastdiv f) {
    return (__umulhi(n, f.mp) + n) >> f.l;
}
__device__ __forceinline__ uint32_t fmod_u(uint32_t n, fastdiv f) {
    return n - fdiv(n, f) * f.d;
}

// ------------------------------------------------------------------ types
using half = __half;
using bf16 = __nv_bfloat16;

// The C type of each ggml type, and the type arithmetic is done in (float for half types:
// a float16/bfloat16 op is the float32 op rounded once, as numpy and the CPU path do).
template <typename T> struct calc { using type = T; };
template <> struct calc<half> { using type = float; };
template <> struct calc<bf16> { using type = float; };
template <typename T> using calc_t = typename calc<T>::type;

template <typename T> __device__ __forceinline__ calc_t<T> up(T x) { return x; }
// (NaNs widen with their sign and payload, as numpy's and F16C's conversions do: CUDA's
// own half -> float conversion returns one canonical NaN)
template <> __device__ __forceinline__ float up<half>(half x) {
    const unsigned short h = __half_as_ushort(x);
    if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu))
        return __uint_as_float(((unsigned)(h & 0x8000u) << 16) | 0x7f800000u |
                               ((unsigned)(h & 0x3ffu) << 13));
    return __half2float(x);
}
template <> __device__ __forceinline__ float up<bf16>(bf16 x) {
    return __uint_as_float((unsigned)__bfloat16_as_ushort(x) << 16);   // exact, NaNs too
}

// NaN into a half type as the CPU converts it (numpy's rule): sign and the top payload bits
// kept, quiet (CUDA's intrinsics return one canonical NaN).
template <typename S> __device__ __forceinline__ half nan_to_half(S x) {
    if constexpr (std::is_same_v<S, half>) {
        return x;
    } else if constexpr (std::is_same_v<S, double>) {
        const unsigned long long u = (unsigned long long)__double_as_longlong(x);
        return __ushort_as_half((unsigned short)(((u >> 48) & 0x8000u) | 0x7e00u |
                                                 ((u >> 42) & 0x3ffu)));
    } else {
        const unsigned u = __float_as_uint((float)up(x));
        return __ushort_as_half((unsigned short)(((u >> 16) & 0x8000u) | 0x7e00u |
                                                 ((u >> 13) & 0x3ffu)));
    }
}
template <typename S> __device__ __forceinline__ bf16 nan_to_bf16(S x) {
    if constexpr (std::is_same_v<S, bf16>) {
        return x;
    } else if constexpr (std::is_same_v<S, double>) {
        // as the CPU's kern_d2bf (through float32, then kern_f2bf): sign, quiet bit and the
        // top 6 payload bits
        const unsigned long long u = (unsigned long long)__double_as_longlong(x);
        return __ushort_as_bfloat16((unsigned short)(((u >> 48) & 0x8000u) | 0x7fc0u |
                                                     ((u >> 45) & 0x3fu)));
    } else {
        return __ushort_as_bfloat16((unsigned short)((__float_as_uint((float)up(x)) >> 16) |
                                                     0x40u));
    }
}

// Conversion between any two element types (casts, as numpy's astype: float -> int truncates,
// any -> bool is != 0, float -> half types round to nearest even).
template <typename D, typename S> __device__ __forceinline__ D convert(S x) {
    if constexpr (std::is_same_v<D, S>) {
        return x;
    } else if constexpr (std::is_same_v<D, bool>) {
        return up(x) != calc_t<S>(0);
    } else if constexpr (std::is_same_v<D, half>) {
        if (up(x) != up(x)) return nan_to_half(x);
        if constexpr (std::is_same_v<S, double>) return __double2half(x);
        else return __float2half_rn((float)up(x));
    } else if constexpr (std::is_same_v<D, bf16>) {
        if (up(x) != up(x)) return nan_to_bf16(x);
        if constexpr (std::is_same_v<S, double>) return __double2bfloat16(x);
        else return __float2bfloat16_rn((float)up(x));
    } else {
        return (D)up(x);
    }
}

template <typename T> constexpr bool is_floating_v =
    std::is_floating_point_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bf16>;

// Calls f((T*)nullptr) with T the C type of ggml type `type`; returns false when unknown.
template <typename F> static inline bool with_type(int type, F && f) {
    switch (type) {
        case GGML_TYPE_F32:  f((float *)nullptr); return true;
        case GGML_TYPE_F16:  f((half *)nullptr); return true;
        case GGML_TYPE_BF16: f((bf16 *)nullptr); return true;
        case GGML_TYPE_F64:  f((double *)nullptr); return true;
        case GGML_TYPE_I8:   f((int8_t *)nullptr); return true;
        case GGML_TYPE_I16:  f((int16_t *)nullptr); return true;
        case GGML_TYPE_I32:  f((int32_t *)nullptr); return true;
        case GGML_TYPE_I64:  f((int64_t *)nullptr); return true;
        case GGML_TYPE_U8:   f((uint8_t *)nullptr); return true;
        case GGML_TYPE_BOOL: f((bool *)nullptr); return true;
        default: return false;
    }
}

// ------------------------------------------------------------------ tensor helpers (host)
static inline int64_t nelements(const ggml_tensor * t) {
    return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
}
static inline bool is_contiguous(const ggml_tensor * t) {
    int64_t expect = (int64_t)ggml_type_size(t->type);
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (t->ne[i] != 1 && t->nb[i] != expect) return false;
        expect *= t->ne[i];
    }
    return true;
}
// rows of whole blocks, packed (quantized tensors; plain types too)
static inline bool is_contiguous_q(const ggml_tensor * t) {
    const int64_t blck = ggml_cy_blck_size(t->type);
    if (blck <= 0 || t->ne[0] % blck) return false;
    int64_t expect = (int64_t)ggml_cy_block_bytes(t->type);
    if (t->nb[0] != expect) return false;
    expect *= t->ne[0] / blck;
    for (int i = 1; i < GGML_MAX_DIMS; i++) {
        if (t->ne[i] != 1 && t->nb[i] != expect) return false;
        expect *= t->ne[i];
    }
    return true;
}
static inline bool same_shape(const ggml_tensor * a, const ggml_tensor * b) {
    for (int i = 0; i < GGML_MAX_DIMS; i++) if (a->ne[i] != b->ne[i]) return false;
    return true;
}

// Launch helpers
constexpr int BLOCK = 256;
static inline unsigned int ceil_div(int64_t a, int64_t b) { return (unsigned int)((a + b - 1) / b); }

// ------------------------------------------------------------------ programmatic dependent launch
// Hopper and later (sm_90+) can start a kernel's CTAs while the previous kernel of the stream
// still runs (CUDA's "programmatic dependent launch"): the new kernel is launched with the
// programmatic-serialization attribute (launch_pdl), and its threads call pdl_wait() before
// they touch global memory; griddepcontrol.wait returns once the previous grid has completed
// and its writes are visible, so reads and writes alike stay ordered after it. pdl_trigger()
// lets the next such kernel's CTAs be scheduled as soon as every CTA of this grid has started
// (without it, only when they have all exited). The saving is the launch latency between two
// short kernels (a few microseconds of a 4096x4096 Q4_0 mat-vec or a 16M-value dequantize).
// On older GPUs both device calls compile to nothing and the attribute is ignored.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}
// a hint: bring the 128-byte line holding p into L2 (no data moves into the SM)
__device__ __forceinline__ void prefetch_l2(const void * p) {
    asm volatile("prefetch.global.L2 [%0];" :: "l"(p));
}
// a hint: bring bytes [p, p + n) into L2 (sm_90: the 16-byte aligned middle through the bulk
// copy unit, one instruction; the partial lines at either end, and older GPUs, line by line)
__device__ __forceinline__ void prefetch_l2_range(const char * p, int n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const uintptr_t s = (uintptr_t)p, e = s + (uintptr_t)n;
    const uintptr_t s16 = (s + 15) & ~(uintptr_t)15, e16 = e & ~(uintptr_t)15;
    if (e16 > s16) {
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" :: "l"(s16), "r"((uint32_t)(e16 - s16)) : "memory");
        if (s16 != s) prefetch_l2(p);
        if (e16 != e) prefetch_l2(p + n - 1);
        return;
    }
#endif
    for (int off = 0; off < n; off += 128) prefetch_l2(p + off);
    if (n > 0) prefetch_l2(p + n - 1);
}
// Whether launch_pdl sets the attribute (ggml_cy_cuda_set_pdl; on by default).
bool pdl_enabled();
// Whether the Q4_0 x1 mat-vec prefetches its weights before its PDL wait
// (ggml_cy_cuda_set_mv_prefetch, a measurement switch; on by default).
bool mv_prefetch_enabled();
// Whether the op being launched follows a launch_pdl kernel on the library stream (which
// lets its successor start early): only then can work placed before a PDL wait overlap the
// previous kernel (behind any other kernel the mat-vec's prefetch measured a cost, not a
// gain). A performance hint, never a correctness one: launch_node takes the flag for its op
// (pdl_op_begin), launch_pdl sets it, stream copies and fills clear it (pdl_note_other).
void pdl_op_begin();
bool pdl_follows();
void pdl_note_launch();
void pdl_note_other();
// Launches kernel<<<grid, block, smem, stream>>>(args...) with programmatic serialization
// (when enabled); returns the launch's status like check_launch.
template <typename... P, typename... A>
static inline int launch_pdl(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                             A &&... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = pdl_enabled() ? 1 : 0;
    const cudaError_t err = cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...);
    if (err != cudaSuccess) { cudaGetLastError(); return fail_cuda(err, "kernel launch"); }
    if (cfg.numAttrs) pdl_note_launch();
    return GGML_CY_CUDA_OK;
}

// Per-family entry points (one .cu each), called by compute.cu after validation.
int binary_forward(ggml_tensor * dst, cudaStream_t stream);
int binary_scaled_i8(ggml_tensor * dst, float s0, float s1, float s_out, cudaStream_t stream);
int unary_forward(ggml_tensor * dst, cudaStream_t stream);
int copy_forward(ggml_tensor * dst, const ggml_tensor * src, cudaStream_t stream);
bool binary_supported(int op, int dst_type, int src0_type, int src1_type);
bool unary_supported(int op, int dst_type, int src0_type);
bool copy_supported(int dst_type, int src_type);
int reduce_forward(ggml_tensor * dst, cudaStream_t stream);           // SUM, SUM_ROWS, MEAN
bool reduce_supported(int op, int dst_type, int src0_type);
int mul_mat_forward(ggml_tensor * dst, cudaStream_t stream);
bool mul_mat_supported(int dst_type, int a_type, int b_type);
// quantized tensors (quant.cu): dequantizing and raw-block copies, GET_ROWS, MUL_MAT with
// quantized weights
bool quant_supported(int type);                       // the device dequantizes this type
bool quant_copy_supported(int dst_type, int src_type);
int quant_copy_forward(ggml_tensor * dst, const ggml_tensor * src, cudaStream_t stream);
bool get_rows_supported(int dst_type, int a_type, int ids_type);
int get_rows_forward(ggml_tensor * dst, cudaStream_t stream);
bool mul_mat_q_supported(int dst_type, int a_type, int b_type);
int mul_mat_q_forward(ggml_tensor * dst, cudaStream_t stream);

}  // namespace gcy
