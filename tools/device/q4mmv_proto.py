"""Developer tool (device rounds, issue 12): prototypes of the Q4_0 mat-vec and of the
dequantize kernels, compiled with cupy's NVRTC (no build of ggml_cy), timed back to back with
CUDA events on rotating weight sets (the bench's method), against torch's f16 mat-vec and a
device copy. Prints one line per variant; the winner goes into cuda/quant.cu.

    python3 tools/device/q4mmv_proto.py
"""
import sys

import cupy as cp
import numpy as np

M = K = 4096
NB = K // 32
SRC = r"""
#include <cuda_fp16.h>

__device__ __forceinline__ float h2f(unsigned int u) { return __half2float(__ushort_as_half((unsigned short)u)); }

// Q4_0 mat-vec with b quantized to int8 per 32 values inside every CTA (shared memory) and
// dp4a dot products; RW rows per warp, W warps per CTA, NP pairs of blocks per lane per row.
template <int RW, int W, int NP>
__device__ __forceinline__ void mv_q4_0_dp4a(const unsigned char * __restrict__ a, long long astr,
        const float * __restrict__ b, float * __restrict__ d, int M, int K) {
    extern __shared__ int smem[];
    int * qb = smem;                          // K/4 words of int8 b
    float * db = (float *)(smem + K / 4);     // K/32 scales
    int * sb = (int *)(db + K / 32);          // K/32 sums of the int8 values
    const int nb = K / 32;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int rbase = blockIdx.x * (W * RW) + warp * RW;
    unsigned int w[RW][NP][9];
#pragma unroll
    for (int r = 0; r < RW; r++) {
        const int row = rbase + r < M ? rbase + r : M - 1;
        const unsigned int * ar = (const unsigned int *)(a + (long long)row * astr);
#pragma unroll
        for (int c = 0; c < NP; c++) {
            const int p = lane + 32 * c;
            if (2 * p < nb) {
#pragma unroll
                for (int j = 0; j < 9; j++) w[r][c][j] = __ldg(ar + p * 9 + j);
            }
        }
    }
    for (int base = tid * 16; base < K; base += W * 32 * 16) {
        const float4 * bp = (const float4 *)(b + base);
        float x[16];
#pragma unroll
        for (int j = 0; j < 4; j++) { float4 v = __ldg(bp + j); x[4*j] = v.x; x[4*j+1] = v.y; x[4*j+2] = v.z; x[4*j+3] = v.w; }
        float amax = 0.0f;
#pragma unroll
        for (int j = 0; j < 16; j++) amax = fmaxf(amax, fabsf(x[j]));
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
        const float dd = amax / 127.0f, id = dd != 0.0f ? 1.0f / dd : 0.0f;
        int s = 0;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int q0 = __float2int_rn(x[4*j] * id), q1 = __float2int_rn(x[4*j+1] * id);
            int q2 = __float2int_rn(x[4*j+2] * id), q3 = __float2int_rn(x[4*j+3] * id);
            s += q0 + q1 + q2 + q3;
            qb[base / 4 + j] = (q0 & 0xff) | ((q1 & 0xff) << 8) | ((q2 & 0xff) << 16) | ((unsigned)q3 << 24);
        }
        s += __shfl_xor_sync(0xffffffffu, s, 1);
        if ((tid & 1) == 0) { db[base / 32] = dd; sb[base / 32] = s; }
    }
    __syncthreads();
    float acc[RW];
#pragma unroll
    for (int r = 0; r < RW; r++) acc[r] = 0.0f;
#pragma unroll
    for (int c = 0; c < NP; c++) {
        const int p = lane + 32 * c;
        if (2 * p >= nb) break;
        const int4 * bq = (const int4 *)(qb + p * 16);
        const int4 b0 = bq[0], b1 = bq[1], b2 = bq[2], b3 = bq[3];
        const float d0b = db[2 * p], d1b = db[2 * p + 1];
        const int s0 = sb[2 * p], s1 = sb[2 * p + 1];
#pragma unroll
        for (int r = 0; r < RW; r++) {
            const unsigned int * v = w[r][c];
            const unsigned int q0 = __funnelshift_r(v[0], v[1], 16), q1 = __funnelshift_r(v[1], v[2], 16);
            const unsigned int q2 = __funnelshift_r(v[2], v[3], 16), q3 = __funnelshift_r(v[3], v[4], 16);
            const unsigned int m = 0x0f0f0f0fu;
            int si = __dp4a((int)(q0 & m), b0.x, 0);
            si = __dp4a((int)(q1 & m), b0.y, si);
            si = __dp4a((int)(q2 & m), b0.z, si);
            si = __dp4a((int)(q3 & m), b0.w, si);
            si = __dp4a((int)((q0 >> 4) & m), b1.x, si);
            si = __dp4a((int)((q1 >> 4) & m), b1.y, si);
            si = __dp4a((int)((q2 >> 4) & m), b1.z, si);
            si = __dp4a((int)((q3 >> 4) & m), b1.w, si);
            int sj = __dp4a((int)(v[5] & m), b2.x, 0);
            sj = __dp4a((int)(v[6] & m), b2.y, sj);
            sj = __dp4a((int)(v[7] & m), b2.z, sj);
            sj = __dp4a((int)(v[8] & m), b2.w, sj);
            sj = __dp4a((int)((v[5] >> 4) & m), b3.x, sj);
            sj = __dp4a((int)((v[6] >> 4) & m), b3.y, sj);
            sj = __dp4a((int)((v[7] >> 4) & m), b3.z, sj);
            sj = __dp4a((int)((v[8] >> 4) & m), b3.w, sj);
            acc[r] = fmaf(h2f(v[0] & 0xffffu) * d0b, (float)(si - 8 * s0), acc[r]);
            acc[r] = fmaf(h2f(v[4] >> 16) * d1b, (float)(sj - 8 * s1), acc[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < RW; r++) {
        float s = acc[r];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0 && rbase + r < M) d[rbase + r] = s;
    }
}

#define MV(RW, W, NP) \
extern "C" __global__ void __launch_bounds__(W * 32) mv_##RW##_##W##_##NP(const unsigned char * a, long long astr, \
        const float * b, float * d, int M, int K) { mv_q4_0_dp4a<RW, W, NP>(a, astr, b, d, M, K); }
MV(1, 4, 2) MV(2, 4, 2) MV(4, 4, 2) MV(2, 8, 2) MV(4, 8, 2) MV(1, 8, 2) MV(2, 2, 2) MV(1, 2, 2)
MV(2, 16, 2) MV(1, 32, 2) MV(1, 16, 2) MV(4, 16, 2)

// The same with the weights loaded coalesced (16-byte loads of 64-block chunks: 1152 bytes,
// 72 uint4 per chunk and row) and handed to the lanes through a per-warp shared buffer
// (lane l reads words 9l..9l+8: 9 is odd, no bank conflicts). Needs K % 2048 == 0 and
// 16-byte aligned rows.
template <int RW, int W, int NP>
__device__ __forceinline__ void mv_q4_0_st(const unsigned char * __restrict__ a, long long astr,
        const float * __restrict__ b, float * __restrict__ d, int M, int K) {
    extern __shared__ int smem[];
    int * qb = smem;
    float * db = (float *)(smem + K / 4);
    int * sb = (int *)(db + K / 32);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    unsigned int * stage = (unsigned int *)(sb + K / 32) + warp * 288;
    const int rbase = blockIdx.x * (W * RW) + warp * RW;
    uint4 g[RW][NP][3];
#pragma unroll
    for (int r = 0; r < RW; r++) {
        const int row = rbase + r < M ? rbase + r : M - 1;
#pragma unroll
        for (int c = 0; c < NP; c++) {
            const uint4 * src = (const uint4 *)(a + (long long)row * astr + c * 1152);
            g[r][c][0] = __ldg(src + lane);
            g[r][c][1] = __ldg(src + 32 + lane);
            if (lane < 8) g[r][c][2] = __ldg(src + 64 + lane);
        }
    }
    for (int base = tid * 16; base < K; base += W * 32 * 16) {
        const float4 * bp = (const float4 *)(b + base);
        float x[16];
#pragma unroll
        for (int j = 0; j < 4; j++) { float4 v = __ldg(bp + j); x[4*j] = v.x; x[4*j+1] = v.y; x[4*j+2] = v.z; x[4*j+3] = v.w; }
        float amax = 0.0f;
#pragma unroll
        for (int j = 0; j < 16; j++) amax = fmaxf(amax, fabsf(x[j]));
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
        const float dd = amax / 127.0f, id = dd != 0.0f ? 1.0f / dd : 0.0f;
        int s = 0;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int q0 = __float2int_rn(x[4*j] * id), q1 = __float2int_rn(x[4*j+1] * id);
            int q2 = __float2int_rn(x[4*j+2] * id), q3 = __float2int_rn(x[4*j+3] * id);
            s += q0 + q1 + q2 + q3;
            qb[base / 4 + j] = (q0 & 0xff) | ((q1 & 0xff) << 8) | ((q2 & 0xff) << 16) | ((unsigned)q3 << 24);
        }
        s += __shfl_xor_sync(0xffffffffu, s, 1);
        if ((tid & 1) == 0) { db[base / 32] = dd; sb[base / 32] = s; }
    }
    __syncthreads();
    float acc[RW];
#pragma unroll
    for (int r = 0; r < RW; r++) acc[r] = 0.0f;
#pragma unroll
    for (int c = 0; c < NP; c++) {
        const int p = lane + 32 * c;
        const int4 * bq = (const int4 *)(qb + p * 16);
        const int4 b0 = bq[0], b1 = bq[1], b2 = bq[2], b3 = bq[3];
        const float d0b = db[2 * p], d1b = db[2 * p + 1];
        const int s0 = sb[2 * p], s1 = sb[2 * p + 1];
#pragma unroll
        for (int r = 0; r < RW; r++) {
            uint4 * st4 = (uint4 *)stage;
            st4[lane] = g[r][c][0];
            st4[32 + lane] = g[r][c][1];
            if (lane < 8) st4[64 + lane] = g[r][c][2];
            __syncwarp();
            unsigned int v[9];
#pragma unroll
            for (int j = 0; j < 9; j++) v[j] = stage[lane * 9 + j];
            __syncwarp();
            const unsigned int q0 = __funnelshift_r(v[0], v[1], 16), q1 = __funnelshift_r(v[1], v[2], 16);
            const unsigned int q2 = __funnelshift_r(v[2], v[3], 16), q3 = __funnelshift_r(v[3], v[4], 16);
            const unsigned int m = 0x0f0f0f0fu;
            int si = __dp4a((int)(q0 & m), b0.x, 0);
            si = __dp4a((int)(q1 & m), b0.y, si);
            si = __dp4a((int)(q2 & m), b0.z, si);
            si = __dp4a((int)(q3 & m), b0.w, si);
            si = __dp4a((int)((q0 >> 4) & m), b1.x, si);
            si = __dp4a((int)((q1 >> 4) & m), b1.y, si);
            si = __dp4a((int)((q2 >> 4) & m), b1.z, si);
            si = __dp4a((int)((q3 >> 4) & m), b1.w, si);
            int sj = __dp4a((int)(v[5] & m), b2.x, 0);
            sj = __dp4a((int)(v[6] & m), b2.y, sj);
            sj = __dp4a((int)(v[7] & m), b2.z, sj);
            sj = __dp4a((int)(v[8] & m), b2.w, sj);
            sj = __dp4a((int)((v[5] >> 4) & m), b3.x, sj);
            sj = __dp4a((int)((v[6] >> 4) & m), b3.y, sj);
            sj = __dp4a((int)((v[7] >> 4) & m), b3.z, sj);
            sj = __dp4a((int)((v[8] >> 4) & m), b3.w, sj);
            acc[r] = fmaf(h2f(v[0] & 0xffffu) * d0b, (float)(si - 8 * s0), acc[r]);
            acc[r] = fmaf(h2f(v[4] >> 16) * d1b, (float)(sj - 8 * s1), acc[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < RW; r++) {
        float s = acc[r];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0 && rbase + r < M) d[rbase + r] = s;
    }
}
#define MVS(RW, W, NP) \
extern "C" __global__ void __launch_bounds__(W * 32) mvs_##RW##_##W##_##NP(const unsigned char * a, long long astr, \
        const float * b, float * d, int M, int K) { mv_q4_0_st<RW, W, NP>(a, astr, b, d, M, K); }
MVS(1, 4, 2) MVS(2, 4, 2) MVS(4, 4, 2) MVS(2, 8, 2) MVS(4, 8, 2) MVS(1, 8, 2) MVS(8, 8, 2) MVS(1, 2, 2)

// ggml_cy's kernel in use (cuda/quant.cu k_mmv_q4_0<1, 4>, N = 1, f32 b): a lane takes half
// blocks of 4 rows, 2 units in flight, 4 warps per CTA
__device__ __forceinline__ float nib_f(unsigned int w, int j) {
    return __int_as_float(__byte_perm(w, 0x4B000000u, 0x7650u | (unsigned)j)) - 8388616.0f;
}
__device__ __forceinline__ unsigned int ld32a2(const unsigned char * p) {
    return (unsigned)*(const unsigned short *)p | ((unsigned)*(const unsigned short *)(p + 2) << 16);
}
extern "C" __global__ void __launch_bounds__(128) cur(const unsigned char * a, long long astr,
        const float * b, float * d, int M, int K) {
    constexpr int R = 4, UNROLL = 2, NT = 128;
    __shared__ float part[4][R];
    const int row0 = blockIdx.x * R;
    float acc[R] = {0.0f, 0.0f, 0.0f, 0.0f};
    const int nunits = K / 16;
    for (int un = threadIdx.x; un + NT * (UNROLL - 1) < nunits; un += NT * UNROLL) {
        float dd[UNROLL][R];
        uint2 qq[UNROLL][R];
#pragma unroll
        for (int k = 0; k < UNROLL; k++)
#pragma unroll
            for (int r = 0; r < R; r++) {
                const int u = un + NT * k, row = row0 + r < M ? row0 + r : M - 1;
                const unsigned char * blk = a + (long long)row * astr + (long long)(u >> 1) * 18;
                dd[k][r] = h2f(*(const unsigned short *)blk);
                qq[k][r] = make_uint2(ld32a2(blk + 2 + (u & 1) * 8), ld32a2(blk + 6 + (u & 1) * 8));
            }
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            const int u = un + NT * k, blk = u >> 1, h = u & 1;
            const float4 * bl = (const float4 *)b + (blk * 4 + h) * 2;
            const float4 * bh = (const float4 *)b + (blk * 4 + 2 + h) * 2;
            const float4 l0 = __ldg(bl), l1 = __ldg(bl + 1), h0 = __ldg(bh), h1 = __ldg(bh + 1);
            const float xl[8] = {l0.x, l0.y, l0.z, l0.w, l1.x, l1.y, l1.z, l1.w};
            const float xh[8] = {h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w};
#pragma unroll
            for (int r = 0; r < R; r++) {
                const unsigned lo0 = qq[k][r].x & 0x0f0f0f0fu, lo1 = qq[k][r].y & 0x0f0f0f0fu;
                const unsigned hi0 = (qq[k][r].x >> 4) & 0x0f0f0f0fu, hi1 = (qq[k][r].y >> 4) & 0x0f0f0f0fu;
                float t = 0.0f;
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    t = fmaf(nib_f(lo0, j), xl[j], t);
                    t = fmaf(nib_f(lo1, j), xl[4 + j], t);
                    t = fmaf(nib_f(hi0, j), xh[j], t);
                    t = fmaf(nib_f(hi1, j), xh[4 + j], t);
                }
                acc[r] = fmaf(dd[k][r], t, acc[r]);
            }
        }
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int r = 0; r < R; r++) {
        float s = acc[r];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) part[warp][r] = s;
    }
    __syncthreads();
    if (threadIdx.x < R && row0 + threadIdx.x < M)
        d[row0 + threadIdx.x] = part[0][threadIdx.x] + part[1][threadIdx.x] + part[2][threadIdx.x] + part[3][threadIdx.x];
}

// Octets: a lane takes 8 consecutive blocks (144 bytes: nine 16-byte loads), 16 lanes per
// row of 4096 (K = 4096 only), so a warp covers 2 rows per step and S steps. b's int8 chunks
// are stored swizzled (16-byte chunk c at c ^ ((c >> 4) & 7)) so that the 8 lanes of a
// shared-memory phase, 256 bytes apart, hit different banks.
__device__ __forceinline__ int swz(int c) { return c ^ ((c >> 4) & 7); }
template <int S, int W>
__device__ __forceinline__ void mv_q4_0_oct(const unsigned char * __restrict__ a, long long astr,
        const float * __restrict__ b, float * __restrict__ d, int M, int K) {
    extern __shared__ int smem[];
    int4 * qb4 = (int4 *)smem;                   // K / 16 chunks of 16 int8
    float * db = (float *)(smem + K / 4);
    int * sb = (int *)(db + K / 32);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int o = lane & 15, half = lane >> 4;
    const int rbase = (blockIdx.x * W + warp) * (2 * S);
    uint4 g[S][9];
#pragma unroll
    for (int st = 0; st < S; st++) {
        const int r = rbase + 2 * st + half;
        const int row = r < M ? r : M - 1;
        const uint4 * src = (const uint4 *)(a + (long long)row * astr) + o * 9;
#pragma unroll
        for (int j = 0; j < 9; j++) g[st][j] = __ldg(src + j);
    }
    for (int base = tid * 16; base < K; base += W * 32 * 16) {
        const float4 * bp = (const float4 *)(b + base);
        float x[16];
#pragma unroll
        for (int j = 0; j < 4; j++) { float4 v = __ldg(bp + j); x[4*j] = v.x; x[4*j+1] = v.y; x[4*j+2] = v.z; x[4*j+3] = v.w; }
        float amax = 0.0f;
#pragma unroll
        for (int j = 0; j < 16; j++) amax = fmaxf(amax, fabsf(x[j]));
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
        const float dd = amax / 127.0f, id = dd != 0.0f ? 1.0f / dd : 0.0f;
        int s = 0;
        int q[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int q0 = __float2int_rn(x[4*j] * id), q1 = __float2int_rn(x[4*j+1] * id);
            int q2 = __float2int_rn(x[4*j+2] * id), q3 = __float2int_rn(x[4*j+3] * id);
            s += q0 + q1 + q2 + q3;
            q[j] = (q0 & 0xff) | ((q1 & 0xff) << 8) | ((q2 & 0xff) << 16) | ((unsigned)q3 << 24);
        }
        qb4[swz(base / 16)] = make_int4(q[0], q[1], q[2], q[3]);
        s += __shfl_xor_sync(0xffffffffu, s, 1);
        if ((tid & 1) == 0) { db[base / 32] = dd; sb[base / 32] = s; }
    }
    __syncthreads();
    float acc[S];
#pragma unroll
    for (int st = 0; st < S; st++) acc[st] = 0.0f;
    const unsigned int m = 0x0f0f0f0fu;
#pragma unroll
    for (int i = 0; i < 8; i++) {                // block 8o + i
        const int blk = 8 * o + i;
        const int4 lo = qb4[swz(2 * blk)], hi = qb4[swz(2 * blk + 1)];
        const float dbk = db[blk];
        const int sbk = sb[blk];
#pragma unroll
        for (int st = 0; st < S; st++) {
            const unsigned int * wv = (const unsigned int *)g[st] + 9 * (i >> 1);
            unsigned int q0, q1, q2, q3, dh;
            if ((i & 1) == 0) {
                dh = wv[0] & 0xffffu;
                q0 = __funnelshift_r(wv[0], wv[1], 16); q1 = __funnelshift_r(wv[1], wv[2], 16);
                q2 = __funnelshift_r(wv[2], wv[3], 16); q3 = __funnelshift_r(wv[3], wv[4], 16);
            } else {
                dh = wv[4] >> 16;
                q0 = wv[5]; q1 = wv[6]; q2 = wv[7]; q3 = wv[8];
            }
            int si = __dp4a((int)(q0 & m), lo.x, 0);
            si = __dp4a((int)(q1 & m), lo.y, si);
            si = __dp4a((int)(q2 & m), lo.z, si);
            si = __dp4a((int)(q3 & m), lo.w, si);
            si = __dp4a((int)((q0 >> 4) & m), hi.x, si);
            si = __dp4a((int)((q1 >> 4) & m), hi.y, si);
            si = __dp4a((int)((q2 >> 4) & m), hi.z, si);
            si = __dp4a((int)((q3 >> 4) & m), hi.w, si);
            acc[st] = fmaf(h2f(dh) * dbk, (float)(si - 8 * sbk), acc[st]);
        }
    }
#pragma unroll
    for (int st = 0; st < S; st++) {
        float s = acc[st];
#pragma unroll
        for (int off = 8; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
        const int r = rbase + 2 * st + half;
        if (o == 0 && r < M) d[r] = s;
    }
}
#define MVO(S, W) \
extern "C" __global__ void __launch_bounds__(W * 32) mvo_##S##_##W(const unsigned char * a, long long astr, \
        const float * b, float * d, int M, int K) { mv_q4_0_oct<S, W>(a, astr, b, d, M, K); }
MVO(1, 8) MVO(2, 8) MVO(4, 8) MVO(2, 4) MVO(1, 4) MVO(2, 16)

// Quads: a lane takes 4 consecutive blocks (72 bytes, 8-byte aligned: nine 8-byte loads
// instead of two pairs' eighteen 4-byte loads); b's chunks swizzled (c ^ ((c >> 3) & 7)) so
// that lanes 128 bytes apart read different banks.
__device__ __forceinline__ int swq(int c) { return c ^ ((c >> 3) & 7); }
template <int RW, int W, int NQ>
__device__ __forceinline__ void mv_q4_0_quad(const unsigned char * __restrict__ a, long long astr,
        const float * __restrict__ b, float * __restrict__ d, int M, int K) {
    extern __shared__ int smem[];
    int4 * qb4 = (int4 *)smem;
    float * db = (float *)(smem + K / 4);
    int * sb = (int *)(db + K / 32);
    const int nb = K / 32;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int rbase = blockIdx.x * (W * RW) + warp * RW;
    uint2 g[RW][NQ][9];
#pragma unroll
    for (int r = 0; r < RW; r++) {
        const int row = rbase + r < M ? rbase + r : M - 1;
        const uint2 * ar = (const uint2 *)(a + (long long)row * astr);
#pragma unroll
        for (int c = 0; c < NQ; c++) {
            const int q = lane + 32 * c;
            if (4 * q < nb) {
#pragma unroll
                for (int j = 0; j < 9; j++) g[r][c][j] = __ldg(ar + q * 9 + j);
            }
        }
    }
    for (int base0 = warp * 512; base0 < K; base0 += W * 512) {
        const int base = base0 + lane * 16;
        const bool in = base < K;
        float x[16];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float4 v = in ? __ldg((const float4 *)(b + base) + j) : make_float4(0.f, 0.f, 0.f, 0.f);
            x[4*j] = v.x; x[4*j+1] = v.y; x[4*j+2] = v.z; x[4*j+3] = v.w;
        }
        float amax = 0.0f;
#pragma unroll
        for (int j = 0; j < 16; j++) amax = fmaxf(amax, fabsf(x[j]));
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
        const float dd = amax / 127.0f, id = dd != 0.0f ? 1.0f / dd : 0.0f;
        int s = 0;
        int qv[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int q0 = __float2int_rn(x[4*j] * id), q1 = __float2int_rn(x[4*j+1] * id);
            int q2 = __float2int_rn(x[4*j+2] * id), q3 = __float2int_rn(x[4*j+3] * id);
            s += q0 + q1 + q2 + q3;
            qv[j] = (q0 & 0xff) | ((q1 & 0xff) << 8) | ((q2 & 0xff) << 16) | ((unsigned)q3 << 24);
        }
        if (in) qb4[swq(base / 16)] = make_int4(qv[0], qv[1], qv[2], qv[3]);
        s += __shfl_xor_sync(0xffffffffu, s, 1);
        if (in && (lane & 1) == 0) { db[base / 32] = dd; sb[base / 32] = s; }
    }
    __syncthreads();
    float acc[RW];
#pragma unroll
    for (int r = 0; r < RW; r++) acc[r] = 0.0f;
    const unsigned int m = 0x0f0f0f0fu;
#pragma unroll
    for (int c = 0; c < NQ; c++) {
        const int q = lane + 32 * c;
        if (4 * q >= nb) break;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int b0i = 4 * q + 2 * h;          // blocks b0i, b0i + 1
            const int4 b0 = qb4[swq(2 * b0i)], b1 = qb4[swq(2 * b0i + 1)];
            const int4 b2 = qb4[swq(2 * b0i + 2)], b3 = qb4[swq(2 * b0i + 3)];
            const float d0b = db[b0i], d1b = db[b0i + 1];
            const int s0 = sb[b0i], s1 = sb[b0i + 1];
#pragma unroll
            for (int r = 0; r < RW; r++) {
                const unsigned int * v = (const unsigned int *)g[r][c] + 9 * h;
                const unsigned int q0 = __funnelshift_r(v[0], v[1], 16), q1 = __funnelshift_r(v[1], v[2], 16);
                const unsigned int q2 = __funnelshift_r(v[2], v[3], 16), q3 = __funnelshift_r(v[3], v[4], 16);
                int si = __dp4a((int)(q0 & m), b0.x, 0);
                si = __dp4a((int)(q1 & m), b0.y, si);
                si = __dp4a((int)(q2 & m), b0.z, si);
                si = __dp4a((int)(q3 & m), b0.w, si);
                si = __dp4a((int)((q0 >> 4) & m), b1.x, si);
                si = __dp4a((int)((q1 >> 4) & m), b1.y, si);
                si = __dp4a((int)((q2 >> 4) & m), b1.z, si);
                si = __dp4a((int)((q3 >> 4) & m), b1.w, si);
                int sj = __dp4a((int)(v[5] & m), b2.x, 0);
                sj = __dp4a((int)(v[6] & m), b2.y, sj);
                sj = __dp4a((int)(v[7] & m), b2.z, sj);
                sj = __dp4a((int)(v[8] & m), b2.w, sj);
                sj = __dp4a((int)((v[5] >> 4) & m), b3.x, sj);
                sj = __dp4a((int)((v[6] >> 4) & m), b3.y, sj);
                sj = __dp4a((int)((v[7] >> 4) & m), b3.z, sj);
                sj = __dp4a((int)((v[8] >> 4) & m), b3.w, sj);
                acc[r] = fmaf(h2f(v[0] & 0xffffu) * d0b, (float)(si - 8 * s0), acc[r]);
                acc[r] = fmaf(h2f(v[4] >> 16) * d1b, (float)(sj - 8 * s1), acc[r]);
            }
        }
    }
#pragma unroll
    for (int r = 0; r < RW; r++) {
        float s = acc[r];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0 && rbase + r < M) d[rbase + r] = s;
    }
}
#define MVQ(RW, W, NQ) \
extern "C" __global__ void __launch_bounds__(W * 32) mvq_##RW##_##W##_##NQ(const unsigned char * a, long long astr, \
        const float * b, float * d, int M, int K) { mv_q4_0_quad<RW, W, NQ>(a, astr, b, d, M, K); }
MVQ(4, 8, 1) MVQ(2, 8, 1) MVQ(8, 8, 1) MVQ(4, 4, 1) MVQ(2, 16, 1)

// ---- dequantize Q4_0 -> f32 (rows of whole blocks, contiguous): V values per thread
// G blocks per thread, stored straight (float4 per 4 values)
template <int G, bool CS>
__device__ __forceinline__ void deq_q4_0(const unsigned char * __restrict__ src, float * __restrict__ dst, long long nblk) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int g = 0; g < G; g++) {
        const long long bi = t + (long long)g * gridDim.x * blockDim.x;   // grid-strided blocks
        if (bi >= nblk) return;
        const unsigned short * p = (const unsigned short *)(src + bi * 18);
        unsigned int q[4];
        const float dd = h2f(__ldg(p));
#pragma unroll
        for (int j = 0; j < 4; j++) q[j] = (unsigned)__ldg(p + 1 + 2 * j) | ((unsigned)__ldg(p + 2 + 2 * j) << 16);
        float4 * o = (float4 *)(dst + bi * 32);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float4 lo = make_float4(dd * (float)((int)(q[j] & 15) - 8), dd * (float)((int)((q[j] >> 8) & 15) - 8),
                                    dd * (float)((int)((q[j] >> 16) & 15) - 8), dd * (float)((int)((q[j] >> 24) & 15) - 8));
            float4 hi = make_float4(dd * (float)((int)((q[j] >> 4) & 15) - 8), dd * (float)((int)((q[j] >> 12) & 15) - 8),
                                    dd * (float)((int)((q[j] >> 20) & 15) - 8), dd * (float)((int)((q[j] >> 28) & 15) - 8));
            if (CS) { __stcs(o + j, lo); __stcs(o + 4 + j, hi); } else { o[j] = lo; o[4 + j] = hi; }
        }
    }
}
extern "C" __global__ void __launch_bounds__(256) deq1(const unsigned char * s, float * d, long long n) { deq_q4_0<1, false>(s, d, n); }
extern "C" __global__ void __launch_bounds__(256) deq1cs(const unsigned char * s, float * d, long long n) { deq_q4_0<1, true>(s, d, n); }
extern "C" __global__ void __launch_bounds__(256) deq4cs(const unsigned char * s, float * d, long long n) { deq_q4_0<4, true>(s, d, n); }

// warp-staged: a warp decodes 32 blocks (lane = block) into shared memory, then writes the
// 4 KiB as 8 fully coalesced float4 stores per lane
template <bool CS>
__device__ __forceinline__ void deq_q4_0_w(const unsigned char * __restrict__ src, float * __restrict__ dst, long long nblk) {
    __shared__ float4 st[8][32 * 8 + 8];
    const int lane = threadIdx.x & 31, wp = threadIdx.x >> 5;
    const long long b0 = ((long long)blockIdx.x * 8 + wp) * 32;
    if (b0 >= nblk) return;
    const long long bi = b0 + lane;
    if (bi < nblk) {
        const unsigned short * p = (const unsigned short *)(src + bi * 18);
        const float dd = h2f(__ldg(p));
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const unsigned q = (unsigned)__ldg(p + 1 + 2 * j) | ((unsigned)__ldg(p + 2 + 2 * j) << 16);
            st[wp][lane * 8 + j + (lane >> 2)] = make_float4(dd * (float)((int)(q & 15) - 8), dd * (float)((int)((q >> 8) & 15) - 8),
                                          dd * (float)((int)((q >> 16) & 15) - 8), dd * (float)((int)((q >> 24) & 15) - 8));
            st[wp][lane * 8 + 4 + j + (lane >> 2)] = make_float4(dd * (float)((int)((q >> 4) & 15) - 8), dd * (float)((int)((q >> 12) & 15) - 8),
                                              dd * (float)((int)((q >> 20) & 15) - 8), dd * (float)((int)((q >> 28) & 15) - 8));
        }
    }
    __syncwarp();
    float4 * o = (float4 *)(dst + b0 * 32);
    const long long nv4 = (nblk - b0 < 32 ? nblk - b0 : 32) * 8;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const int i = k * 32 + lane;
        if (i < nv4) { const float4 v = st[wp][i + (i >> 5)]; if (CS) __stcs(o + i, v); else o[i] = v; }
    }
}
extern "C" __global__ void __launch_bounds__(256) deqw(const unsigned char * s, float * d, long long n) { deq_q4_0_w<false>(s, d, n); }
extern "C" __global__ void __launch_bounds__(256) deqwcs(const unsigned char * s, float * d, long long n) { deq_q4_0_w<true>(s, d, n); }
"""


SPIN = cp.RawKernel(r"""
extern "C" __global__ void spin(long long cycles) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}""", "spin")


def timeit(launch, n=200):
    for _ in range(3):
        launch(0)
    cp.cuda.Device().synchronize()
    # the GPU waits behind a spinning kernel while the host queues every launch (cupy's
    # host cost per launch is longer than these kernels): back-to-back device time
    SPIN((1,), (1,), (np.int64(int(2e9 * 30e-6 * n)),))
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record()
    for i in range(n):
        launch(i)
    e.record()
    e.synchronize()
    return cp.cuda.get_elapsed_time(s, e) * 1e3 / n


def main():
    mod = cp.RawModule(code=SRC, options=("-std=c++17",), name_expressions=None)
    rng = np.random.default_rng(1)
    dev = cp.cuda.runtime.getDeviceProperties(0)
    l2 = dev["l2CacheSize"]
    print("device:", dev["name"].decode(), "L2", l2 >> 20, "MiB")
    # ---------------------------------------------------------------- mat-vec
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
    # reference (float64 of the dequantized weights)
    r0 = raws[0].reshape(M, NB, 18)
    d0 = r0[:, :, 0:2].copy().view(np.float16).astype(np.float64)[..., 0]
    qs = r0[:, :, 2:]
    vals = np.concatenate([(qs & 15).astype(np.int64) - 8, (qs >> 4).astype(np.int64) - 8], axis=2)
    wf = (vals * d0[:, :, None]).reshape(M, K)
    ref = wf @ xh.astype(np.float64)
    variants = [("mv_4_8_2", 4, 8), ("mvq_4_8_1", 4, 8), ("mvq_2_8_1", 2, 8), ("mvq_8_8_1", 8, 8),
                ("mvq_4_4_1", 4, 4), ("mvq_2_16_1", 2, 16)]
    for name, rw, w in variants:
        f = mod.get_function(name)
        rows = rw * w
        grid = ((M + rows - 1) // rows,)
        blockd = (32 * w,)

        smem = K + NB * 8 + (w * 1152 if name.startswith("mvs") else 0)

        def launch(i, f=f, grid=grid, blockd=blockd, smem=smem, kk=k):
            f(grid, blockd, (a[i % kk], np.int64(NB * 18), x, out, np.int32(M), np.int32(K)), shared_mem=smem)
        launch(0)
        got = cp.asnumpy(out).astype(np.float64)
        nmse = float(np.sum((got - ref) ** 2) / np.sum(ref ** 2))
        t = timeit(launch)
        t2 = timeit(lambda i, launch=launch: launch(0))
        print(f"{name}: {t:.2f} us (L2-resident {t2:.2f})  nmse {nmse:.2e}  ({nbytes / t / 1e3:.0f} GB/s of weights)")
    try:
        import torch
        kt = max(2, int(3 * l2 // (M * K * 2)) + 1)
        tw = [torch.randn(M, K, device="cuda", dtype=torch.float16) for _ in range(kt)]
        tx = torch.randn(K, 1, device="cuda", dtype=torch.float16)
        to = torch.empty(M, 1, device="cuda", dtype=torch.float16)
        for _ in range(3):
            torch.matmul(tw[0], tx, out=to)
        torch.cuda.synchronize()
        st, en = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        st.record()
        for i in range(200):
            torch.matmul(tw[i % kt], tx, out=to)
        en.record()
        en.synchronize()
        print(f"torch f16 mat-vec: {st.elapsed_time(en) * 1e3 / 200:.2f} us")
        del tw
    except Exception as exc:
        print("torch: not measured:", exc)
    del a
    # ---------------------------------------------------------------- dequantize
    n = 16 << 20
    nblk = n // 32
    src = cp.asarray(rng.integers(0, 256, nblk * 18, dtype=np.uint8))
    dst = cp.empty(n, cp.float32)
    big_a = cp.empty(128 << 20, cp.float32)
    big_b = cp.empty_like(big_a)
    tc = timeit(lambda i: cp.copyto(big_b, big_a), 20)
    copy_gbps = 2 * big_a.nbytes / tc / 1e3
    print(f"copy 512 MiB: {tc:.1f} us = {copy_gbps:.0f} GB/s")
    nbytes = src.nbytes + dst.nbytes
    sr = cp.asnumpy(src).reshape(nblk, 18)
    dd = sr[:, 0:2].copy().view(np.float16).astype(np.float32)
    qq = sr[:, 2:]
    want = (np.concatenate([(qq & 15).astype(np.float32) - 8, (qq >> 4).astype(np.float32) - 8], axis=1)
            * dd).reshape(-1)
    for name, per in [("deq1", 1), ("deq1cs", 1), ("deq4cs", 4), ("deqw", 32), ("deqwcs", 32)]:
        f = mod.get_function(name)
        if per == 32:
            grid = ((nblk + 255) // 256,)
        else:
            grid = ((nblk // per + 255) // 256,)
        dst.fill(0)
        f(grid, (256,), (src, dst, np.int64(nblk)))
        ok = np.array_equal(cp.asnumpy(dst), want, equal_nan=True)
        t = timeit(lambda i, f=f, grid=grid: f(grid, (256,), (src, dst, np.int64(nblk))), 100)
        print("  bits", "equal" if ok else "DIFFER")
        print(f"{name}: {t:.2f} us  {nbytes / t / 1e3:.0f} GB/s  = {nbytes / t / 1e3 / copy_gbps:.3f} of copy")


if __name__ == "__main__":
    sys.exit(main())
