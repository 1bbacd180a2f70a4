/* BF16-weight mul_mat on Intel AMX tiles (Sapphire Rapids and later Xeons), ggml's rule:
 * b (f32) is rounded to bf16 (round to nearest even, as VCVTNE2PS2BF16 does), every product
 * of two bf16 values is exact in f32, and TDPBF16PS sums them into f32 tiles.
 *
 * Why tiles: on the 16-core Xeon this project measures on, one core issues two 512-bit f32
 * FMAs per cycle (64 flops) but only one VDPBF16PS (also 64 flops), while one TDPBF16PS does
 * 16 x 16 x 32 multiply-adds in about 16 cycles (1024 flops per cycle).
 *
 * Layout, dst[n][m] = sum_k a[m][k] * b[n][k] (mul_mat.h's convention):
 *  - A operand: 16 rows of a (weights) x 32 k, loaded IN PLACE (row stride nb01), so the
 *    weights are never packed and a mat-vec streams them once; the last partial 32-k chunk
 *    and the rows past M come from a small zero-padded copy;
 *  - B operand: b converted to bf16 pairs and transposed in 32-bit units (the "VNNI" tile
 *    layout: tile row p holds the pair (2p, 2p+1) of 16 columns n), a panel of columns x one K
 *    block at a time in the thread's scratch;
 *  - C: 2 x 2 tiles (32 m x 32 n); a K block's partial sums go through dst itself (f32, so
 *    nothing is rounded on the way), transposed from the tiles' [m][n] with mm_tr16.
 * Every dst element gets the same sequence of tile ops (32-k chunks from k = 0 in order,
 * zero-padded past K), whatever N, the tile it falls in, the K block or the thread count:
 * the mat-vec path (N <= MM_GEMV_MAX_N) and the packed path give the same bits, as on the
 * other engines.
 *
 * The kernel needs AMX-TILE, AMX-BF16 and AVX512-BF16 in CPUID and the kernel's permission
 * for the tile state (Linux arch_prctl ARCH_REQ_XCOMP_PERM, once per process); mmx_ready()
 * checks both, once. GGML_CY_CPU_FEATURES below avx512 never reaches this header (it is
 * compiled only at the AVX-512 levels), and GGML_CY_NO_AMX=1 turns it off (tests compare
 * the engines). */
#ifndef GGML_CY_MUL_MAT_AMX_H
#define GGML_CY_MUL_MAT_AMX_H
#if defined(__AVX512F__) && defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && \
    !defined(__clang__) && __GNUC__ >= 11 && !defined(GGML_CY_NO_AMX_BUILD)
#define MMX_BUILT 1
#include <immintrin.h>
#include <cpuid.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "mul_mat_tr16.h"

#ifndef MMX_NX
#define MMX_NX 256      /* the most columns of b in one packed panel (a multiple of 32); a
                           narrower b takes a panel of its own width (mmx_panel_cols). The
                           16-core host flips between fast and slow periods of seconds (another
                           tenant on the tiles' core), so variants take turns in ten short
                           rounds, each compared by its best-round median (round w41,
                           bench/csrc/mmx_parts.c, 2 threads, a context's 16-byte offsets):
                           1024^3 256 x 2048 1.47 ms, 128 x 2048 (before) 1.73, 512 x 1024
                           1.70 (torch 1.14-1.19); each panel re-reads (and copies) a. Earlier
                           rounds, slow periods unseparated: 256 within the noise of 128 (w17),
                           as were a software prefetch of the next sub-block's a rows and tile
                           loads interleaved with the products (w16). */
#endif
#ifndef MMX_KC
#define MMX_KC 2048     /* the longest K block (a multiple of MMX_KS) */
#endif
#ifndef MMX_PANEL_ELEMS
#define MMX_PANEL_ELEMS (256 * 2048)   /* bf16 values of b in one panel (1 MiB, half the
                                          host's L2); a panel of nx columns takes K blocks
                                          of mmx_panel_k(nx) */
#endif
#ifndef MMX_KS
#define MMX_KS 512      /* k per sub-block: the A panel (32 x 512 bf16, 32 KiB) stays in L1
                           while the panel's column pairs pass. Device round amx4 (16-core
                           Xeon, tools/device/amx_probe2.c): 256, 512, 2048 and prefetch on/off
                           were within the host's noise of each other at 2 and 16 threads;
                           512 with prefetch was never far from the best. */
#endif
#ifndef MMX_COPY_MISALIGNED
#define MMX_COPY_MISALIGNED 1
#endif
#ifndef MMX_COPY_MIN_N
#define MMX_COPY_MIN_N 33   /* misaligned a is copied per sub-block only for panels of at
                               least this many columns (2 column pairs and more). The suite's
                               4096x4096x64 (N 64, 2 pairs) at 2 threads on the 16-core host:
                               read in place it ran faster in the host's fast periods (w41,
                               best-round medians 1.88 ms against 2.34 copied) and slower in
                               its slow ones (w42: best 3.87 against 2.95; the suite 0.55x
                               torch), so the copy stays from 2 pairs. */
#endif
_Static_assert(MMX_NX % 32 == 0 && MMX_KC % MMX_KS == 0 && MMX_KS % 32 == 0 &&
               (int64_t)MMX_NX * MMX_KS <= MMX_PANEL_ELEMS, "AMX panel sizes");

/* The columns of b in one panel for a product of N rows of b (N >= 1), and the K block that
 * a panel of nx columns takes (a whole number of sub-blocks, at most MMX_KC, the panel within
 * MMX_PANEL_ELEMS). The K blocks change no bit: a block's sums pass through dst as f32. */
static inline int64_t mmx_panel_cols(int64_t N) {
    const int64_t n = (N + 31) & ~(int64_t)31;
    return n < MMX_NX ? (n > 0 ? n : 32) : MMX_NX;
}
static inline int64_t mmx_panel_k(int64_t nx) {
    int64_t k = (int64_t)MMX_PANEL_ELEMS / nx / MMX_KS * MMX_KS;
    return k > MMX_KC ? MMX_KC : k < MMX_KS ? MMX_KS : k;
}

#define MMX_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,amx-tile,amx-bf16,prfchw")))

/* Bytes of per-thread scratch: the b panel, the zero-padded A copy (32 rows x KC), a C
 * staging tile, the C tiles of one row of 32 x 32 blocks and an aligned A panel (32 rows x
 * MMX_KS), plus alignment slack. */
#define MMX_BV_BYTES ((size_t)MMX_PANEL_ELEMS * 2)
static inline size_t mmx_work_bytes(void) {
    return MMX_BV_BYTES + (size_t)32 * MMX_KC * 2 + 1024 +
           (size_t)MMX_NX / 32 * 4096 + (size_t)32 * MMX_KS * 2 + 256;
}

/* 1 when the tiles may be used in this process (checked once; not thread-safe on the very
 * first call, but every caller computes the same answer). */
static int mmx_state = -1;
static inline int mmx_ready(void) {
    if (mmx_state >= 0) return mmx_state;
    int ok = 0;
    const char * off = getenv("GGML_CY_NO_AMX");
    unsigned int a, b, c, d;
    if (!(off && off[0] && off[0] != '0') && __get_cpuid_max(0, 0) >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        const int tile = (d >> 24) & 1, bf16t = (d >> 22) & 1;
        __cpuid_count(7, 1, a, b, c, d);
        const int avxbf16 = (a >> 5) & 1;
        /* ARCH_REQ_XCOMP_PERM (0x1023) for XFEATURE_XTILEDATA (18) */
        if (tile && bf16t && avxbf16 && syscall(SYS_arch_prctl, 0x1023, 18) == 0) ok = 1;
    }
    mmx_state = ok;
    return ok;
}

typedef struct {
    uint8_t palette, start_row, pad[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} mmx_tilecfg;

/* Every tile 16 rows x 64 bytes (full tiles; edges are zero-padded instead). */
MMX_TARGET static inline void mmx_config(void) {
    mmx_tilecfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) { cfg.colsb[t] = 64; cfg.rows[t] = 16; }
    _tile_loadconfig(&cfg);
}

/* Packs b rows [0, nn) (f32, adjacent along K, row stride ldb bytes) x k [k0, k0 + kb) into
 * bv: for each group of 16 rows, kb32/2 tile rows of 16 dwords (kb32 = kb rounded up to 32;
 * pairs past kb and rows past nn are zero). nn x kb32 <= MMX_PANEL_ELEMS. */
MMX_TARGET static inline void mmx_pack_b(const char * b, int64_t ldb, int64_t nn, int64_t k0,
                                         int64_t kb, uint32_t * bv) {
    const int64_t kb32 = (kb + 31) & ~(int64_t)31;
    for (int64_t g = 0; g < nn; g += 16) {
        uint32_t * out = bv + (g / 16) * (kb32 / 2) * 16;
        for (int64_t k = 0; k < kb32; k += 32) {
            const int64_t left = kb - k;
            const __mmask16 m0 = left >= 16 ? 0xFFFF : left <= 0 ? 0 : (__mmask16)((1u << left) - 1);
            const __mmask16 m1 = left >= 32 ? 0xFFFF : left <= 16 ? 0 : (__mmask16)((1u << (left - 16)) - 1);
            __m512 r[16];   /* bf16 pairs as 32-bit lanes, the type mm_tr16 moves */
            for (int i = 0; i < 16; i++) {
                if (g + i < nn) {
                    const float * row = (const float *)(b + (g + i) * ldb) + k0 + k;
                    const __m512 lo = _mm512_maskz_loadu_ps(m0, row);
                    const __m512 hi = _mm512_maskz_loadu_ps(m1, row + 16);
                    r[i] = (__m512)_mm512_cvtne2ps_pbh(hi, lo);   /* k order: lo then hi */
                } else {
                    r[i] = _mm512_setzero_ps();
                }
            }
            mm_tr16(r);
            for (int p = 0; p < 16; p++)
                _mm512_store_si512((__m512i *)(out + (k / 2 + p) * 16), _mm512_castps_si512(r[p]));
        }
    }
}

/* Copies rows [0, mm) x k [k0, k0 + kb) of a (bf16, row stride lda bytes) into apad as 32
 * rows of kb32 elements, zero-padded (rows past mm, k past kb). */
static inline void mmx_pad_a(const char * a, int64_t lda, int64_t mm, int64_t k0, int64_t kb,
                             uint16_t * apad) {
    const int64_t kb32 = (kb + 31) & ~(int64_t)31;
    for (int64_t i = 0; i < 32; i++) {
        uint16_t * out = apad + i * kb32;
        if (i < mm) {
            memcpy(out, a + i * lda + k0 * 2, (size_t)kb * 2);
            memset(out + kb, 0, (size_t)(kb32 - kb) * 2);
        } else {
            memset(out, 0, (size_t)kb32 * 2);
        }
    }
}

/* Moves one 16 x 16 C tile between the tile unit's [m][n] and dst's [n][m]:
 * store (to_dst): rows n < nn, columns m < mm of dst at d (row stride ldd floats);
 * load: the same block of dst into tile 't' through the staging buffer st (1 KiB). */
MMX_TARGET static inline void mmx_c_out(const float * st, float * d, int64_t ldd, int mm, int nn) {
    __m512 r[16];
    for (int i = 0; i < 16; i++) r[i] = _mm512_load_ps(st + 16 * i);
    mm_tr16(r);
    const __mmask16 mk = mm >= 16 ? 0xFFFF : (__mmask16)((1u << mm) - 1);
    for (int j = 0; j < nn; j++) _mm512_mask_storeu_ps(d + j * ldd, mk, r[j]);
}
MMX_TARGET static inline void mmx_c_in(float * st, const float * d, int64_t ldd, int mm, int nn) {
    __m512 r[16];
    const __mmask16 mk = mm >= 16 ? 0xFFFF : (__mmask16)((1u << mm) - 1);
    for (int j = 0; j < 16; j++)
        r[j] = j < nn ? _mm512_maskz_loadu_ps(mk, d + j * ldd) : _mm512_setzero_ps();
    mm_tr16(r);
    for (int i = 0; i < 16; i++) _mm512_store_ps(st + 16 * i, r[i]);
}

/* The C tiles of one 32 x 32 block: 0 = (m 0-15, n 0-15), 1 = (m 0-15, n 16-31),
 * 2 = (m 16-31, n 0-15), 3 = (m 16-31, n 16-31); tiles a block does not reach stay unused.
 * Start: zero, from dst (transposed through st) or from the thread's native scratch cs. */
enum { MMX_C_ZERO = 0, MMX_C_DST = 1, MMX_C_SCRATCH = 2 };

MMX_TARGET static inline void mmx_c_start(int mode, float * d, int64_t ldd, int mm, int nn,
                                          const float * cs, float * st) {
    const int two_n = nn > 16, two_m = mm > 16;
    const int m0 = mm < 16 ? mm : 16, n0 = nn < 16 ? nn : 16;
    if (mode == MMX_C_ZERO) {
        _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    } else if (mode == MMX_C_SCRATCH) {
        _tile_loadd(0, cs, 64);
        if (two_n) _tile_loadd(1, cs + 256, 64);
        if (two_m) _tile_loadd(2, cs + 512, 64);
        if (two_m && two_n) _tile_loadd(3, cs + 768, 64);
    } else {
        mmx_c_in(st, d, ldd, m0, n0); _tile_loadd(0, st, 64);
        if (two_n) { mmx_c_in(st, d + 16 * ldd, ldd, m0, nn - 16); _tile_loadd(1, st, 64); }
        if (two_m) { mmx_c_in(st, d + 16, ldd, mm - 16, n0); _tile_loadd(2, st, 64); }
        if (two_m && two_n) { mmx_c_in(st, d + 16 * ldd + 16, ldd, mm - 16, nn - 16); _tile_loadd(3, st, 64); }
    }
}

/* End: to dst (transposed, only the valid m < mm, n < nn) or to the scratch cs. */
MMX_TARGET static inline void mmx_c_end(int to_dst, float * d, int64_t ldd, int mm, int nn,
                                        float * cs, float * st) {
    const int two_n = nn > 16, two_m = mm > 16;
    const int m0 = mm < 16 ? mm : 16, n0 = nn < 16 ? nn : 16;
    if (!to_dst) {
        _tile_stored(0, cs, 64);
        if (two_n) _tile_stored(1, cs + 256, 64);
        if (two_m) _tile_stored(2, cs + 512, 64);
        if (two_m && two_n) _tile_stored(3, cs + 768, 64);
        return;
    }
    _tile_stored(0, st, 64); mmx_c_out(st, d, ldd, m0, n0);
    if (two_n) { _tile_stored(1, st, 64); mmx_c_out(st, d + 16 * ldd, ldd, m0, nn - 16); }
    if (two_m) { _tile_stored(2, st, 64); mmx_c_out(st, d + 16, ldd, mm - 16, n0); }
    if (two_m && two_n) { _tile_stored(3, st, 64); mmx_c_out(st, d + 16 * ldd + 16, ldd, mm - 16, nn - 16); }
}

#ifndef MMX_PF
#define MMX_PF 1        /* prefetch the B tiles two chunks ahead into L1 */
#endif
#if MMX_PF
#define MMX_PREFETCH_B(p) do { for (int l_ = 0; l_ < 16; l_++) \
        _mm_prefetch((const char *)((p) + 16 * l_), _MM_HINT_T0); } while (0)
#else
#define MMX_PREFETCH_B(p) do { } while (0)
#endif

/* The dst lines of the next 32 x 32 block of this row group (rows n of dst, 128 bytes each,
 * ldd floats apart), asked for with intent to write while this block's tiles run. The loop
 * walks a dst row group across m in 128-byte steps, rows a whole dst row (16 KiB at M =
 * 4096) apart, a pattern the hardware prefetchers do not follow; with a short K (4096 x
 * 4096 x 64: 8 tile products per block) the stores of C set the pace (2 threads wrote the 64
 * MB of C at ~9 GB/s each in round w33, against ~14 for torch). Prefetching never faults,
 * so the lines past M or N cost nothing but a slot. */
#ifndef MMX_PFW_MAX_THREADS
#define MMX_PFW_MAX_THREADS 2   /* (0: never) only calls of this many threads or fewer. The
                                   16-core host, bench/csrc/mmx_parts.c, static split,
                                   never / always, three rounds each: 4096 x 4096 x 64 at 2
                                   threads 4.0-4.2 ms / 3.6-3.9 (w34), 4.9-6.9 / 4.3-5.8
                                   (w35, a busier host); at 4 threads 3.2-3.5 / 3.6-3.9, at
                                   16 threads 0.97-1.03 / 1.15-1.20 (w34) and 1.12-1.20 /
                                   1.02-1.37 (w35): once several threads write C together
                                   the extra requests only queue. 1024^3 within noise. */
#endif
static inline int mmx_pf_c_for(int nth) { return nth <= MMX_PFW_MAX_THREADS; }
MMX_TARGET static inline void mmx_prefetch_c(const float * d, int64_t ldd, int nn) {
    for (int j = 0; j < nn; j++) {
        __builtin_prefetch(d + j * ldd, 1, 3);
        __builtin_prefetch(d + j * ldd + 16, 1, 3);
    }
}

/* The 32-k chunks [c_lo, c_hi) of A (32 rows at ap, row stride lda bytes) against B (the
 * 16-column groups at bv0 / bv1, 256 dwords per chunk), then the zero-padded tail (32 rows x
 * 32 at `tail`, chunk c_hi of B) when tail != NULL. (Prefetches past the panel's end are
 * harmless: prefetching never faults.) */
MMX_TARGET static inline void mmx_chunks(const char * ap, int64_t lda, int64_t c_lo,
                                         int64_t c_hi, const uint16_t * tail,
                                         const uint32_t * bv0, const uint32_t * bv1, int mm,
                                         int nn) {
    const int two_n = nn > 16, two_m = mm > 16;
    const char * a1 = ap + 16 * lda;
    if (two_m && two_n) {
        for (int64_t c = c_lo; c < c_hi; c++) {
            MMX_PREFETCH_B(bv0 + (c + 2) * 256); MMX_PREFETCH_B(bv1 + (c + 2) * 256);
            _tile_loadd(4, ap + c * 64, lda);
            _tile_loadd(5, a1 + c * 64, lda);
            _tile_loadd(6, bv0 + c * 256, 64);
            _tile_loadd(7, bv1 + c * 256, 64);
            _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
        }
        if (tail) {
            _tile_loadd(4, tail, 64); _tile_loadd(5, tail + 16 * 32, 64);
            _tile_loadd(6, bv0 + c_hi * 256, 64); _tile_loadd(7, bv1 + c_hi * 256, 64);
            _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
        }
    } else if (two_m) {
        for (int64_t c = c_lo; c < c_hi; c++) {
            MMX_PREFETCH_B(bv0 + (c + 2) * 256);
            _tile_loadd(4, ap + c * 64, lda);
            _tile_loadd(5, a1 + c * 64, lda);
            _tile_loadd(6, bv0 + c * 256, 64);
            _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(2, 5, 6);
        }
        if (tail) {
            _tile_loadd(4, tail, 64); _tile_loadd(5, tail + 16 * 32, 64);
            _tile_loadd(6, bv0 + c_hi * 256, 64);
            _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(2, 5, 6);
        }
    } else if (two_n) {
        for (int64_t c = c_lo; c < c_hi; c++) {
            MMX_PREFETCH_B(bv0 + (c + 2) * 256); MMX_PREFETCH_B(bv1 + (c + 2) * 256);
            _tile_loadd(4, ap + c * 64, lda);
            _tile_loadd(6, bv0 + c * 256, 64);
            _tile_loadd(7, bv1 + c * 256, 64);
            _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7);
        }
        if (tail) {
            _tile_loadd(4, tail, 64);
            _tile_loadd(6, bv0 + c_hi * 256, 64); _tile_loadd(7, bv1 + c_hi * 256, 64);
            _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7);
        }
    } else {
        for (int64_t c = c_lo; c < c_hi; c++) {
            MMX_PREFETCH_B(bv0 + (c + 2) * 256);
            _tile_loadd(4, ap + c * 64, lda);
            _tile_loadd(6, bv0 + c * 256, 64);
            _tile_dpbf16ps(0, 4, 6);
        }
        if (tail) {
            _tile_loadd(4, tail, 64);
            _tile_loadd(6, bv0 + c_hi * 256, 64);
            _tile_dpbf16ps(0, 4, 6);
        }
    }
}


/* dst block: rows n in [0, N) of b (row stride ldb bytes), columns m in [0, M) of a (bf16,
 * row stride lda bytes), K elements; d = dst at (n 0, m 0), row stride ldd floats.
 * work: mmx_work_bytes() of scratch. Runs on the calling thread (configures and releases
 * the tiles itself). b_ready: the scratch already holds these b rows converted (the same
 * rows of the same b, packed by this thread's previous call of the job); honoured only when
 * they make one panel (mmx_one_panel), the only case mmx_gemm leaves whole.
 * pf_c: prefetch dst ahead for writing (mmx_prefetch_c; mmx_pf_c_for picks it). */
static inline int mmx_one_panel(int64_t N, int64_t K) {
    return N <= MMX_NX && K <= mmx_panel_k(mmx_panel_cols(N));
}

MMX_TARGET static inline void mmx_gemm(const char * a, int64_t lda, int64_t M, const char * b,
                                       int64_t ldb, int64_t N, int64_t K, float * d,
                                       int64_t ldd, void * work, int b_ready, int pf_c) {
    if (M <= 0 || N <= 0) return;
    char * w = (char *)(((uintptr_t)work + 63) & ~(uintptr_t)63);
    uint32_t * bv = (uint32_t *)w;
    uint16_t * apad = (uint16_t *)(w + MMX_BV_BYTES);
    float * st = (float *)(w + MMX_BV_BYTES + (size_t)32 * MMX_KC * 2);
    float * cs = st + 256;      /* MMX_NX / 32 blocks of 4 C tiles (4 KiB each) */
    char * apanel = (char *)(cs + (MMX_NX / 32) * 1024);   /* 32 rows x MMX_KS, aligned */
    if (K <= 0) {
        for (int64_t n = 0; n < N; n++) memset(d + n * ldd, 0, (size_t)M * 4);
        return;
    }
    mmx_config();
    const int64_t nx = mmx_panel_cols(N), kc = mmx_panel_k(nx);
    for (int64_t n0 = 0; n0 < N; n0 += nx) {
        const int64_t nn = N - n0 < nx ? N - n0 : nx;
        for (int64_t k0 = 0; k0 < K; k0 += kc) {
            const int64_t kb = K - k0 < kc ? K - k0 : kc;
            const int64_t kb32 = (kb + 31) & ~(int64_t)31, gstride = (kb32 / 2) * 16;
            const int64_t nfull = kb / 32;
            if (!(b_ready && mmx_one_panel(N, K))) mmx_pack_b(b + n0 * ldb, ldb, nn, k0, kb, bv);
            for (int64_t m0 = 0; m0 < M; m0 += 32) {
                const int64_t mm = M - m0 < 32 ? M - m0 : 32;
                const char * ap = a + m0 * lda + k0 * 2;
                int64_t la = lda, nf = nfull;
                int has_tail = 0;
                if (mm < 32) {      /* rows past M: all of this K block from a padded copy */
                    mmx_pad_a(a + m0 * lda, lda, mm, k0, kb, apad);
                    ap = (const char *)apad; nf = kb32 / 32; la = kb32 * 2;
                } else if (kb % 32) {
                    mmx_pad_a(a + m0 * lda, lda, 32, k0 + nfull * 32, kb - nfull * 32, apad);
                    has_tail = 1;
                }
                /* sub-blocks of MMX_KS k: the A panel stays in L1 while the column pairs of
                 * the panel pass; the C tiles wait in the scratch between sub-blocks */
                const int64_t cstep = MMX_KS / 32, nsub = nf + has_tail;
                for (int64_t c0 = 0; c0 < nsub; c0 += cstep) {
                    const int64_t c1 = c0 + cstep < nsub ? c0 + cstep : nsub;
                    const int first = c0 == 0, last = c1 == nsub;
                    /* the tail chunk is the last one: it runs from the padded copy */
                    const int tail_here = has_tail && last;
                    const int64_t run_hi = tail_here ? c1 - 1 : c1;
                    /* rows not 64-byte aligned (ggml's 16-byte arena alignment, GGUF's 32)
                     * make every tile row straddle two cache lines: where the panel serves
                     * several column pairs (MMX_COPY_MIN_N), copy the sub-block (32 KiB,
                     * L1-resident after); a narrow b or a mat-vec reads a in place */
                    const char * sap = ap + c0 * 64;
                    int64_t sla = la;
                    if (MMX_COPY_MISALIGNED && nn >= MMX_COPY_MIN_N &&
                        (((uintptr_t)sap | (uintptr_t)la) & 63) && run_hi > c0) {
                        for (int r = 0; r < 32; r++)
                            memcpy(apanel + (size_t)r * MMX_KS * 2, sap + r * la,
                                   (size_t)(run_hi - c0) * 64);
                        sap = apanel; sla = MMX_KS * 2;
                    }
                    for (int64_t j = 0; j < nn; j += 32) {
                        const int jn = (int)(nn - j < 32 ? nn - j : 32);
                        float * dj = d + (n0 + j) * ldd + m0;
                        float * csj = cs + (j / 32) * 1024;
                        const uint32_t * b0 = bv + (j / 16) * gstride + c0 * 256;
                        mmx_c_start(first ? (k0 == 0 ? MMX_C_ZERO : MMX_C_DST) : MMX_C_SCRATCH,
                                    dj, ldd, (int)mm, jn, csj, st);
                        if (pf_c && last && m0 + 32 < M) mmx_prefetch_c(dj + 32, ldd, jn);
                        mmx_chunks(sap, sla, 0, run_hi - c0, tail_here ? apad : NULL, b0,
                                   b0 + gstride, (int)mm, jn);
                        mmx_c_end(last, dj, ldd, (int)mm, jn, csj, st);
                    }
                }
            }
        }
    }
    _tile_release();
}

/* The task grid for nth threads: gm parts of M (multiples of 32 rows) x gn parts of N, the
 * least estimated cycles of the busiest thread. Per task: the tile flops (1024 per cycle),
 * packing its b range once (~0.15 cycle per value: loads, rounding and a 16 x 16 transpose)
 * and streaming its a rows once per panel of b (~0.03 cycle per value); a task's panels are
 * MMX_NX columns wide, the last one narrower where its columns run out (mmx_panel_cols),
 * so a task makes ceil(columns / MMX_NX) passes over its a rows. */
static inline void mmx_grid(int64_t M, int64_t N, int64_t K, int64_t nbatch, int nth,
                            int64_t * gm_out, int64_t * gn_out) {
    const int64_t mtiles = (M + 31) / 32, ntiles = (N + 7) / 8;
    int64_t best_gm = 1, best_gn = 1;
    double best = -1.0;
    for (int64_t gm = 1; gm <= nth && gm <= mtiles; gm++) {
        for (int64_t gn = 1; gn <= nth && gn <= ntiles; gn++) {
            const int64_t ntasks = nbatch * gm * gn;
            if (ntasks > 4 * (int64_t)nth && (gm > 1 || gn > 1)) continue;
            const int64_t per = (ntasks + nth - 1) / nth;
            const double mt = (double)((mtiles + gm - 1) / gm * 32);
            const double nt = (double)((ntiles + gn - 1) / gn * 8);
            const double panels = (double)(((int64_t)nt + MMX_NX - 1) / MMX_NX);   /* a's passes */
            const double cost = (double)per * (2.0 * mt * nt * (double)K / 1024.0 +
                                               0.15 * nt * (double)K + 0.03 * mt * (double)K * panels);
            if (best < 0 || cost < best * 0.999) { best = cost; best_gm = gm; best_gn = gn; }
        }
    }
    *gm_out = best_gm;
    *gn_out = best_gn;
}
#endif
#endif
