"""Developer tool (device rounds, issue 12): where the Q4_0 4096x4096 x1 mat-vec spends its
time. Compiles with cupy's NVRTC (no ggml_cy build), times back to back with CUDA events on
rotating weight sets (the bench's method) and prints one line per kernel:

  * floors: an empty kernel of the same grid; the weight loads alone in the mat-vec's pattern
    (a lane's 9-word block pairs) and coalesced (16-byte lane-contiguous loads);
  * "cur": the kernel before the warp split (every warp loads weights and quantizes b), with
    and without an L2 prefetch hint; "ws2"...: the warp-specialized form cuda/quant.cu's
    k_mv_q4_0_q8 now has (8 weight warps, 2 or 4 b warps; C4: four dp4a chains per pair;
    other rows per warp);
  * b quantized once by a separate kernel (the pair's time: the cost of every CTA doing it);
  * ggml_cy's own mul_mat on the same weights (when importable), also timed by the bench's
    EventTimer, and the ws2 kernel in blocking / non-blocking streams;
  * phase traces (%globaltimer at a CTA's start, after its loads are issued, after b is ready
    (__syncthreads), and at its end, relative to the earliest CTA start; L2 flushed first).

    python3 tools/device/q4mv_probe.py
"""
import sys

import cupy as cp
import numpy as np

from q4mmv_proto import timeit   # the same back-to-back timer (behind a spinning kernel)

M = K = 4096
NB = K // 32
SRC = r"""
#include <cuda_fp16.h>
typedef unsigned int u32;
typedef unsigned long long u64;
__device__ __forceinline__ u64 gtime() { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }

template <int HINT> __device__ __forceinline__ u32 ldw(const u32 * p) {
    u32 v;
    if (HINT == 0) v = __ldg(p);
    else if (HINT == 1) asm volatile("ld.global.nc.L2::128B.u32 %0, [%1];" : "=r"(v) : "l"(p));
    else asm volatile("ld.global.nc.L2::256B.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

// b -> int8 per 32 values into shared memory (ggml_cy's k_mv_q4_0_q8 step): W warps, 512 values
// per warp step
__device__ __forceinline__ void load16(const float * __restrict__ b, int base, float * x) {
#pragma unroll
    for (int j = 0; j < 4; j++) { const float4 v = __ldg((const float4 *)(b + base) + j);
        x[4*j] = v.x; x[4*j+1] = v.y; x[4*j+2] = v.z; x[4*j+3] = v.w; }
}
// PRE_X: the first step's 16 values per lane are already in x (loaded before the weights)
template <int W, bool PRE_X = false>
__device__ __forceinline__ void quant_b(const float * __restrict__ b, int K, int * qb, float * db, int * sb, float * x) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int base0 = warp * 512; base0 < K; base0 += W * 512) {
        const int base = base0 + lane * 16;
        if (!PRE_X || base0 != warp * 512) load16(b, base, x);
        float amax = 0.0f;
#pragma unroll
        for (int j = 0; j < 16; j++) amax = fmaxf(amax, fabsf(x[j]));
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
        const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        int s = 0;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int q0 = __float2int_rn(x[4*j] * id), q1 = __float2int_rn(x[4*j+1] * id);
            const int q2 = __float2int_rn(x[4*j+2] * id), q3 = __float2int_rn(x[4*j+3] * id);
            s += q0 + q1 + q2 + q3;
            qb[base / 4 + j] = (int)((u32)(q0 & 0xff) | ((u32)(q1 & 0xff) << 8) | ((u32)(q2 & 0xff) << 16) | ((u32)q3 << 24));
        }
        s += __shfl_xor_sync(0xffffffffu, s, 1);
        if ((lane & 1) == 0) { db[base / 32] = d; sb[base / 32] = s; }
    }
}

template <int RW, int NP>
__device__ __forceinline__ void dots(const u32 (*w)[NP][9], const int * qb, const float * db, const int * sb,
                                     int nb, float * acc) {
    const int lane = threadIdx.x & 31;
    constexpr u32 m4 = 0x0f0f0f0fu;
#pragma unroll
    for (int c = 0; c < NP; c++) {
        const int pr = lane + 32 * c;
        if (2 * pr >= nb) break;
        const int4 * bq = (const int4 *)(qb + pr * 16);
        const int4 b0 = bq[0], b1 = bq[1], b2 = bq[2], b3 = bq[3];
        const float d0 = db[2 * pr], d1 = db[2 * pr + 1];
        const int s0 = sb[2 * pr], s1 = sb[2 * pr + 1];
#pragma unroll
        for (int r = 0; r < RW; r++) {
            const u32 * v = w[r][c];
            const u32 q0 = __funnelshift_r(v[0], v[1], 16), q1 = __funnelshift_r(v[1], v[2], 16);
            const u32 q2 = __funnelshift_r(v[2], v[3], 16), q3 = __funnelshift_r(v[3], v[4], 16);
            int si = __dp4a((int)(q0 & m4), b0.x, 0); si = __dp4a((int)(q1 & m4), b0.y, si);
            si = __dp4a((int)(q2 & m4), b0.z, si); si = __dp4a((int)(q3 & m4), b0.w, si);
            si = __dp4a((int)((q0 >> 4) & m4), b1.x, si); si = __dp4a((int)((q1 >> 4) & m4), b1.y, si);
            si = __dp4a((int)((q2 >> 4) & m4), b1.z, si); si = __dp4a((int)((q3 >> 4) & m4), b1.w, si);
            int sj = __dp4a((int)(v[5] & m4), b2.x, 0); sj = __dp4a((int)(v[6] & m4), b2.y, sj);
            sj = __dp4a((int)(v[7] & m4), b2.z, sj); sj = __dp4a((int)(v[8] & m4), b2.w, sj);
            sj = __dp4a((int)((v[5] >> 4) & m4), b3.x, sj); sj = __dp4a((int)((v[6] >> 4) & m4), b3.y, sj);
            sj = __dp4a((int)((v[7] >> 4) & m4), b3.z, sj); sj = __dp4a((int)((v[8] >> 4) & m4), b3.w, sj);
            const float da0 = __half2float(__ushort_as_half((unsigned short)(v[0] & 0xffffu)));
            const float da1 = __half2float(__ushort_as_half((unsigned short)(v[4] >> 16)));
            acc[r] = fmaf(da0 * d0, (float)(si - 8 * s0), acc[r]);
            acc[r] = fmaf(da1 * d1, (float)(sj - 8 * s1), acc[r]);
        }
    }
}

// The same sums in four independent dp4a chains per block pair (low and high nibbles of
// each block) instead of two chains of eight: the sums wait less on dp4a latency.
template <int RW, int NP>
__device__ __forceinline__ void dots4(const u32 (*w)[NP][9], const int * qb, const float * db, const int * sb,
                                      int nb, float * acc) {
    const int lane = threadIdx.x & 31;
    constexpr u32 m4 = 0x0f0f0f0fu;
#pragma unroll
    for (int c = 0; c < NP; c++) {
        const int pr = lane + 32 * c;
        if (2 * pr >= nb) break;
        const int4 * bq = (const int4 *)(qb + pr * 16);
        const int4 b0 = bq[0], b1 = bq[1], b2 = bq[2], b3 = bq[3];
        const float d0 = db[2 * pr], d1 = db[2 * pr + 1];
        const int s0 = sb[2 * pr], s1 = sb[2 * pr + 1];
#pragma unroll
        for (int r = 0; r < RW; r++) {
            const u32 * v = w[r][c];
            const u32 q0 = __funnelshift_r(v[0], v[1], 16), q1 = __funnelshift_r(v[1], v[2], 16);
            const u32 q2 = __funnelshift_r(v[2], v[3], 16), q3 = __funnelshift_r(v[3], v[4], 16);
            int sa = __dp4a((int)(q0 & m4), b0.x, -8 * s0);
            int sb_ = __dp4a((int)((q0 >> 4) & m4), b1.x, 0);
            int sc = __dp4a((int)(v[5] & m4), b2.x, -8 * s1);
            int sd = __dp4a((int)((v[5] >> 4) & m4), b3.x, 0);
            sa = __dp4a((int)(q1 & m4), b0.y, sa); sb_ = __dp4a((int)((q1 >> 4) & m4), b1.y, sb_);
            sc = __dp4a((int)(v[6] & m4), b2.y, sc); sd = __dp4a((int)((v[6] >> 4) & m4), b3.y, sd);
            sa = __dp4a((int)(q2 & m4), b0.z, sa); sb_ = __dp4a((int)((q2 >> 4) & m4), b1.z, sb_);
            sc = __dp4a((int)(v[7] & m4), b2.z, sc); sd = __dp4a((int)((v[7] >> 4) & m4), b3.z, sd);
            sa = __dp4a((int)(q3 & m4), b0.w, sa); sb_ = __dp4a((int)((q3 >> 4) & m4), b1.w, sb_);
            sc = __dp4a((int)(v[8] & m4), b2.w, sc); sd = __dp4a((int)((v[8] >> 4) & m4), b3.w, sd);
            const float da0 = __half2float(__ushort_as_half((unsigned short)(v[0] & 0xffffu)));
            const float da1 = __half2float(__ushort_as_half((unsigned short)(v[4] >> 16)));
            acc[r] = fmaf(da0 * d0, (float)(sa + sb_), acc[r]);
            acc[r] = fmaf(da1 * d1, (float)(sc + sd), acc[r]);
        }
    }
}

// PRE: b was quantized by quant_b_kernel into global memory (qg, dg, sg), copied to shared
template <int RW, int W, int NP, int HINT, bool TRACE, bool PRE, bool BF = false>
__device__ __forceinline__ void mv(const unsigned char * __restrict__ a, long long astr, const float * __restrict__ b,
        float * __restrict__ d, int M, int K, u64 * ts, const int * qg, const float * dg, const int * sg) {
    extern __shared__ int smem[];
    const int nb = K / 32;
    int * qb = smem; float * db = (float *)(smem + K / 4); int * sb = (int *)(db + nb);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int rbase = blockIdx.x * (W * RW) + warp * RW;
    if (TRACE && threadIdx.x == 0) ts[blockIdx.x * 4 + 0] = gtime();
    float x[16];
    if (BF) load16(b, warp * 512 + lane * 16, x);
    u32 w[RW][NP][9];
#pragma unroll
    for (int r = 0; r < RW; r++) {
        const int row = rbase + r < M ? rbase + r : M - 1;
        const u32 * ar = (const u32 *)(a + (long long)row * astr);
#pragma unroll
        for (int c = 0; c < NP; c++) {
            const int pr = lane + 32 * c;
            if (2 * pr < nb) {
#pragma unroll
                for (int j = 0; j < 9; j++) w[r][c][j] = ldw<HINT>(ar + pr * 9 + j);
            }
        }
    }
    if (TRACE && threadIdx.x == 0) ts[blockIdx.x * 4 + 1] = gtime();
    if (PRE) {
        for (int i = threadIdx.x; i < K / 4; i += W * 32) qb[i] = __ldg(qg + i);
        for (int i = threadIdx.x; i < nb; i += W * 32) { db[i] = __ldg(dg + i); sb[i] = __ldg(sg + i); }
    } else {
        quant_b<W, BF>(b, K, qb, db, sb, x);
    }
    __syncthreads();
    if (TRACE && threadIdx.x == 0) ts[blockIdx.x * 4 + 2] = gtime();
    float acc[RW];
#pragma unroll
    for (int r = 0; r < RW; r++) acc[r] = 0.0f;
    dots<RW, NP>(w, qb, db, sb, nb, acc);
#pragma unroll
    for (int r = 0; r < RW; r++) {
        float s = acc[r];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0 && rbase + r < M) d[rbase + r] = s;
    }
    if (TRACE) { __syncthreads(); if (threadIdx.x == 0) ts[blockIdx.x * 4 + 3] = gtime(); }
}

#define MV(NAME, RW, W, NP, HINT, TRACE, PRE, ...) \
extern "C" __global__ void __launch_bounds__(W * 32) NAME(const unsigned char * a, long long astr, const float * b, \
        float * d, int M, int K, u64 * ts, const int * qg, const float * dg, const int * sg) { \
    mv<RW, W, NP, HINT, TRACE, PRE, ##__VA_ARGS__>(a, astr, b, d, M, K, ts, qg, dg, sg); }
MV(cur, 4, 8, 2, 0, false, false)
MV(cur_h128, 4, 8, 2, 1, false, false)
MV(cur_h256, 4, 8, 2, 2, false, false)
MV(rw2_w16, 2, 16, 2, 0, false, false)
MV(rw2_w16_h256, 2, 16, 2, 2, false, false)
MV(rw4_w4, 4, 4, 2, 0, false, false)
MV(rw8_w8_h256, 8, 8, 2, 2, false, false)
MV(pre, 4, 8, 2, 0, false, true)
MV(trace, 4, 8, 2, 0, true, false)
MV(bfirst, 4, 8, 2, 0, false, false, true)
MV(bfirst_h256, 4, 8, 2, 2, false, false, true)
MV(bfirst_rw2_w16, 2, 16, 2, 0, false, false, true)
MV(bfirst_rw4_w4, 4, 4, 2, 0, false, false, true)
MV(trace_bfirst, 4, 8, 2, 0, true, false, true)

// Warp-specialized: W warps load and multiply the weights, WS more warps quantize b (all
// their b loads issued first, at the CTA's start, so b does not queue behind the weights).
template <int RW, int W, int NP, int WS, bool TRACE, bool C4 = false>   // C4: dots4
__device__ __forceinline__ void mv_ws(const unsigned char * __restrict__ a, long long astr, const float * __restrict__ b,
        float * __restrict__ d, int M, int K, u64 * ts) {
    extern __shared__ int smem[];
    const int nb = K / 32;
    int * qb = smem; float * db = (float *)(smem + K / 4); int * sb = (int *)(db + nb);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (TRACE && threadIdx.x == 0) ts[blockIdx.x * 4 + 0] = gtime();
    if (warp >= W) {
        constexpr int NS = 8 / WS;            // 512-value steps per b warp (K = 4096)
        float xs[NS][16];
        const int r = warp - W;
#pragma unroll
        for (int t = 0; t < NS; t++) {
            const int base = (r + WS * t) * 512 + lane * 16;
            if (base < K) load16(b, base, xs[t]);
        }
#pragma unroll
        for (int t = 0; t < NS; t++) {
            const int base = (r + WS * t) * 512 + lane * 16;
            const float * x = xs[t];
            float amax = 0.0f;
#pragma unroll
            for (int j = 0; j < 16; j++) amax = fmaxf(amax, fabsf(x[j]));
            amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
            const float dd = amax / 127.0f, id = dd != 0.0f ? 1.0f / dd : 0.0f;
            int s = 0;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int q0 = __float2int_rn(x[4*j] * id), q1 = __float2int_rn(x[4*j+1] * id);
                const int q2 = __float2int_rn(x[4*j+2] * id), q3 = __float2int_rn(x[4*j+3] * id);
                s += q0 + q1 + q2 + q3;
                if (base < K) qb[base / 4 + j] = (int)((u32)(q0 & 0xff) | ((u32)(q1 & 0xff) << 8) | ((u32)(q2 & 0xff) << 16) | ((u32)q3 << 24));
            }
            s += __shfl_xor_sync(0xffffffffu, s, 1);
            if (base < K && (lane & 1) == 0) { db[base / 32] = dd; sb[base / 32] = s; }
        }
        __syncthreads();
        if (TRACE) __syncthreads();
        return;
    }
    const int rbase = blockIdx.x * (W * RW) + warp * RW;
    u32 w[RW][NP][9];
#pragma unroll
    for (int r = 0; r < RW; r++) {
        const int row = rbase + r < M ? rbase + r : M - 1;
        const u32 * ar = (const u32 *)(a + (long long)row * astr);
#pragma unroll
        for (int c = 0; c < NP; c++) {
            const int pr = lane + 32 * c;
            if (2 * pr < nb) {
#pragma unroll
                for (int j = 0; j < 9; j++) w[r][c][j] = __ldg(ar + pr * 9 + j);
            }
        }
    }
    if (TRACE && threadIdx.x == 0) ts[blockIdx.x * 4 + 1] = gtime();
    __syncthreads();
    if (TRACE && threadIdx.x == 0) ts[blockIdx.x * 4 + 2] = gtime();
    float acc[RW];
#pragma unroll
    for (int r = 0; r < RW; r++) acc[r] = 0.0f;
    if (C4) dots4<RW, NP>(w, qb, db, sb, nb, acc);
    else dots<RW, NP>(w, qb, db, sb, nb, acc);
#pragma unroll
    for (int r = 0; r < RW; r++) {
        float s = acc[r];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0 && rbase + r < M) d[rbase + r] = s;
    }
    if (TRACE) { __syncthreads(); if (threadIdx.x == 0) ts[blockIdx.x * 4 + 3] = gtime(); }
}
#define MVWS(NAME, RW, W, NP, WS, TRACE, ...) \
extern "C" __global__ void __launch_bounds__((W + WS) * 32) NAME(const unsigned char * a, long long astr, const float * b, \
        float * d, int M, int K, u64 * ts, const int * qg, const float * dg, const int * sg) { \
    mv_ws<RW, W, NP, WS, TRACE, ##__VA_ARGS__>(a, astr, b, d, M, K, ts); }
MVWS(ws2, 4, 8, 2, 2, false)
MVWS(ws4, 4, 8, 2, 4, false)
MVWS(ws2c4, 4, 8, 2, 2, false, true)
MVWS(ws4c4, 4, 8, 2, 4, false, true)
MVWS(ws2c4_rw2_w16, 2, 16, 2, 2, false, true)
MVWS(ws2c4_rw8_w4, 8, 4, 2, 2, false, true)
MVWS(ws2_rw8_w4, 8, 4, 2, 2, false)
MVWS(trace_ws2, 4, 8, 2, 2, true)
MVWS(trace_ws2c4, 4, 8, 2, 2, true, true)

extern "C" __global__ void __launch_bounds__(256) quant_b_kernel(const float * b, int K, int * qg, float * dg, int * sg) {
    // one CTA of 8 warps quantizes b into global memory
    float x[16];
    quant_b<8>(b, K, qg, dg, sg, x);
}

// floors: the same loads, XOR-reduced (no b, no arithmetic)
extern "C" __global__ void __launch_bounds__(256) floor_ld9(const unsigned char * a, long long astr, float * d, int M, int K) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nb = K / 32;
    const int rbase = blockIdx.x * 32 + warp * 4;
    u32 x = 0;
    u32 w[4][2][9];
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const u32 * ar = (const u32 *)(a + (long long)(rbase + r) * astr);
#pragma unroll
        for (int c = 0; c < 2; c++) { const int pr = lane + 32 * c;
            if (2 * pr < nb) {
#pragma unroll
                for (int j = 0; j < 9; j++) w[r][c][j] = __ldg(ar + pr * 9 + j); } }
    }
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 2; c++)
#pragma unroll
            for (int j = 0; j < 9; j++) x ^= w[r][c][j];
    x ^= __shfl_xor_sync(0xffffffffu, x, 16);
    if (lane == 0) d[rbase] = __uint_as_float(x);
}
extern "C" __global__ void __launch_bounds__(256) floor_ldc(const unsigned char * a, long long astr, float * d, int M, int K) {
    // a warp's 4 rows are 4 * 2304 contiguous bytes: 18 lane-contiguous 16-byte loads per lane
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int rbase = blockIdx.x * 32 + warp * 4;
    const uint4 * p = (const uint4 *)(a + (long long)rbase * astr);
    uint4 v[18];
#pragma unroll
    for (int j = 0; j < 18; j++) v[j] = __ldg(p + 32 * j + lane);
    u32 x = 0;
#pragma unroll
    for (int j = 0; j < 18; j++) x ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
    x ^= __shfl_xor_sync(0xffffffffu, x, 16);
    if (lane == 0) d[rbase] = __uint_as_float(x);
}
extern "C" __global__ void __launch_bounds__(256) empty(float * d) { if (d == nullptr) d[0] = 1.0f; }
"""

def main():
    mod = cp.RawModule(code=SRC, options=("-std=c++17",))
    rng = np.random.default_rng(1)
    dev = cp.cuda.runtime.getDeviceProperties(0)
    l2 = dev["l2CacheSize"]
    print("device:", dev["name"].decode(), "L2", l2 >> 20, "MiB", "SMs", dev["multiProcessorCount"])
    nbytes = M * NB * 18
    k = max(2, int(3 * l2 // nbytes) + 1)
    raws = []
    for i in range(k):
        r = rng.integers(0, 256, (M, NB * 18), dtype=np.uint8)
        blk = r.reshape(-1, 18)
        blk[:, 0:2] = (rng.uniform(0.5, 1.5, (blk.shape[0], 1)) * 0.01).astype(np.float16).view(np.uint8)
        raws.append(r)
    a = [cp.asarray(r) for r in raws]
    xh = rng.standard_normal(K).astype(np.float32)
    x = cp.asarray(xh)
    out = cp.zeros(M, cp.float32)
    r0 = raws[0].reshape(M, NB, 18)
    d0 = r0[:, :, 0:2].copy().view(np.float16).astype(np.float64)[..., 0]
    qs = r0[:, :, 2:]
    vals = np.concatenate([(qs & 15).astype(np.int64) - 8, (qs >> 4).astype(np.int64) - 8], axis=2)
    ref = (vals * d0[:, :, None]).reshape(M, K) @ xh.astype(np.float64)
    ts = cp.zeros(4 * 1024, cp.uint64)
    qg, dg, sg = cp.zeros(K // 4, cp.int32), cp.zeros(NB, cp.float32), cp.zeros(NB, cp.int32)
    smem = K + NB * 8
    astr = np.int64(NB * 18)
    results = {}

    def mv_launch(name, rw, w, ws=0):
        f = mod.get_function(name)
        grid = ((M + rw * w - 1) // (rw * w),)

        def launch(i):
            f(grid, (32 * (w + ws),), (a[i % k], astr, x, out, np.int32(M), np.int32(K), ts, qg, dg, sg),
              shared_mem=smem)
        return launch

    def report(name, launch, check=True):
        launch(0)
        cp.cuda.Device().synchronize()
        extra = ""
        if check:
            got = cp.asnumpy(out).astype(np.float64)
            extra = f"  nmse {float(np.sum((got - ref) ** 2) / np.sum(ref ** 2)):.1e}"
        t = timeit(launch)
        t2 = timeit(lambda i: launch(0))
        results[name] = (t, t2)
        print(f"{name:20s} {t:6.2f} us  (L2-resident {t2:5.2f})  {nbytes / t / 1e3:5.0f} GB/s{extra}", flush=True)

    fe = mod.get_function("empty")
    report("empty128x256", lambda i: fe((128,), (256,), (out,)), check=False)
    for fl in ("floor_ld9", "floor_ldc"):
        f = mod.get_function(fl)
        report(fl, lambda i, f=f: f((128,), (256,), (a[i % k], astr, out, np.int32(M), np.int32(K))), check=False)
    for name, rw, w in [("cur", 4, 8), ("cur_h256", 4, 8)]:
        report(name, mv_launch(name, rw, w))
    for name, rw, w, ws in [("ws2", 4, 8, 2), ("ws2c4", 4, 8, 2)]:
        report(name, mv_launch(name, rw, w, ws))
    fq = mod.get_function("quant_b_kernel")
    pre = mv_launch("pre", 4, 8)

    def pair(i):
        fq((1,), (256,), (x, np.int32(K), qg, dg, sg))
        pre(i)
    report("pre+quant", pair)
    report("pre alone", pre)
    # the same kernel launched into a created stream: blocking (ordered with the legacy
    # default stream, as ggml_cy's own stream is) and non-blocking
    ws2 = mv_launch("ws2", 4, 8, 2)
    for label, nb_flag in (("ws2 blocking stream", False), ("ws2 nonblocking", True)):
        with cp.cuda.Stream(non_blocking=nb_flag):
            report(label, ws2)
    ggml_cy_section(raws, xh, k, timeit_fn=timeit, report=report,
                    mv_kernel=(mod.get_function("ws2"), (M // 32,), (320,), smem,
                               (astr, x, out, np.int32(M), np.int32(K), ts, qg, dg, sg)))
    print("cupy weight buffers mod 256:", [int(a_.data.ptr) % 256 for a_ in a[:6]])
    for tname in ("trace", "trace_bfirst"):
        trace(mv_launch(tname, 4, 8), tname, ts)
    trace(mv_launch("trace_ws2", 4, 8, 2), "trace_ws2", ts)
    trace(mv_launch("trace_ws2c4", 4, 8, 2), "trace_ws2c4", ts)
    return 0


def ggml_cy_section(raws, xh, k, timeit_fn, report, mv_kernel=None):
    """ggml_cy's own mul_mat on the same weights, timed by this tool's method (cupy events on
    the legacy stream, which waits for ggml_cy's blocking stream) and by the bench's
    EventTimer (torch sleep, ggml_cy events): the kernel alone vs what the bench sees."""
    try:
        import ggml_cy.cuda as gcuda
        import torch
        from bench.gpu import EventTimer
    except Exception as exc:
        print("ggml_cy section skipped:", exc)
        return
    ws = [gcuda.from_blocks(r, "Q4_0") for r in raws]
    x = gcuda.asarray(xh.reshape(1, -1))
    outs = [gcuda.empty((1, M), np.float32) for _ in range(k)]
    launch = lambda i: gcuda.mul_mat(ws[i % k], x, out=outs[i % k])   # noqa: E731
    report("ggml_cy tool", launch, check=False)
    if mv_kernel is not None:     # the probe's ws2 kernel on ggml_cy's weight buffers
        f, grid, block, smem, args_rest = mv_kernel
        ptrs = [np.uint64(w.data_ptr) for w in ws]
        print("ggml_cy weight buffers mod 256:", [int(p_) % 256 for p_ in ptrs[:6]])
        report("ws2 on ggml_cy bufs", lambda i: f(grid, block, (ptrs[i % k],) + args_rest, shared_mem=smem),
               check=False)
    with cp.cuda.ExternalStream(gcuda.stream_handle()):    # spin and events on its stream
        report("ggml_cy own stream", launch, check=False)
    timer = EventTimer(torch, gcuda)
    import time
    t0 = time.perf_counter()
    for i in range(8):
        launch(i)
    host_s = (time.perf_counter() - t0) / 8
    gcuda.synchronize()
    xs = sorted(timer.sample("ggml_cy", launch, 120, host_s) for _ in range(9))
    print(f"ggml_cy bench-timer {xs[4] * 1e6:6.2f} us (host {host_s * 1e6:.1f} us per call)")
    xs = sorted(timer.sample("ggml_cy", launch, 120, 3 * host_s) for _ in range(9))
    print(f"ggml_cy bench-timer, 3x sleep {xs[4] * 1e6:6.2f} us")


def trace(tr, tname, ts):
    """Phase times of one launch (thread 0 of every CTA), relative to the first CTA start."""
    tr(0)
    cp.cuda.Device().synchronize()
    flush = cp.empty(64 << 20, cp.float32)      # 256 MB: evicts the weights from L2
    for rep in range(2):
        flush.fill(rep)
        cp.cuda.Device().synchronize()
        tr(rep + 1)
        cp.cuda.Device().synchronize()
        t = cp.asnumpy(ts[:4 * 128]).reshape(128, 4).astype(np.int64)
        t -= t[:, 0].min()
        med = np.median(t, axis=0)
        mx = t.max(axis=0)
        print(f"{tname} {rep}: start med {med[0]:.0f} max {mx[0]:.0f} ns | loads issued med {med[1]:.0f} | "
              f"b ready med {med[2]:.0f} max {mx[2]:.0f} | end med {med[3]:.0f} max {mx[3]:.0f} ns")


if __name__ == "__main__":
    sys.exit(main())
