/* ggml_cy CPU kernels: element conversions (float16, bfloat16) and memory helpers
 * (non-temporal streaming) that Cython cannot express well.
 *
 * float16 follows numpy bit for bit: round to nearest even, overflow to inf raising
 * FE_OVERFLOW, NaN payload kept (top bits). With F16C (x86 -mf16c, implied by
 * -march=native on any AVX2 CPU) the hardware converts 8 lanes at a time; without it a
 * portable integer routine gives the same bits. float64 -> float16 rounds once, directly
 * from double (numpy's npy_double_to_half); going through float would round twice.
 *
 * bfloat16 is a storage type: float32's upper half, rounded to nearest even by integer
 * arithmetic; NaN stays a quiet NaN of the same sign. */
#ifndef GGML_CY_KERNELS_CONVERT_H
#define GGML_CY_KERNELS_CONVERT_H

#include <stdint.h>
#include <string.h>
#include <fenv.h>
#include "line_peel.h"
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

static inline uint32_t kern_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float kern_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t kern_f64_bits(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }

/* Floating-point exception flags. The kernels compute with SSE/AVX, so on x86 the flags
 * they raise live in MXCSR, whose flag bits equal glibc's FE_* values (IE=1 ZE=4 OE=8 UE=16
 * PE=32): reading and writing MXCSR directly costs a few cycles where
 * feclearexcept/fetestexcept also save and restore the x87 environment (~100 ns).
 * But libm may compute on the x87 unit, whose status word holds the same bits: glibc 2.39
 * (Ubuntu 24.04) computes fmod, fmodf and remainder with fprem/fprem1, so fmod(inf, 1) sets
 * "invalid" in the x87 status word and leaves MXCSR alone (glibc 2.36 raises it in MXCSR).
 * numpy reads both (fetestexcept), so these do too (fnstsw: ~6 ns on Zen 3, twice a call). */
#if defined(__SSE__) && (defined(__x86_64__) || defined(__i386__)) && \
    FE_INVALID == 1 && FE_DIVBYZERO == 4 && FE_OVERFLOW == 8 && FE_UNDERFLOW == 16
static inline unsigned kern_x87_status(void) {
    unsigned short sw;
    __asm__ volatile ("fnstsw %0" : "=a" (sw));
    return sw;
}
static inline void kern_raise(int flags) { _mm_setcsr(_mm_getcsr() | (unsigned)(flags & 0x3f)); }
/* Clears the flags numpy reports (not "inexact", raised by most arithmetic) in MXCSR and in
 * the x87 status word, writing each only when one is set: ldmxcsr costs more than the rest
 * of a small call. */
static inline void kern_fe_clear(void) {
    unsigned csr = _mm_getcsr();
    if (csr & 0x1du) _mm_setcsr(csr & ~0x1du);
    if (kern_x87_status() & 0x1du) __asm__ volatile ("fnclex");
}
static inline int kern_fe_test_all(void) {
    return (int)((_mm_getcsr() | kern_x87_status()) & 0x3fu);
}
#else
static inline void kern_raise(int flags) { feraiseexcept(flags); }
static inline void kern_fe_clear(void) { feclearexcept(FE_ALL_EXCEPT); }
static inline int kern_fe_test_all(void) { return fetestexcept(FE_ALL_EXCEPT); }
#endif

/* ---------------------------------------------------------------- float16, portable */
static inline float kern_h2f_soft(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1fu)                      /* inf / NaN: payload kept, as numpy does */
        return kern_bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        if (man == 0) return kern_bits_f32(sign);
        /* subnormal half: value man * 2^-24, exact in float */
        float v = (float)man * 5.9604644775390625e-08f;
        return sign ? -v : v;
    }
    return kern_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

/* Round the magnitude bits of a float (sign removed) to half, nearest even. */
static inline uint16_t kern_f2h_soft(float f) {
    uint32_t u = kern_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) {                /* inf or NaN */
        if (a == 0x7f800000u) return sign | 0x7c00u;
        uint16_t r = (uint16_t)(0x7c00u | ((a >> 13) & 0x3ffu));
        if ((r & 0x3ffu) == 0) r |= 1;     /* keep it a NaN */
        return sign | r;
    }
    if (a >= 0x477ff000u) {                /* rounds to >= 65520: overflow */
        kern_raise(FE_OVERFLOW | FE_INEXACT);
        return sign | 0x7c00u;
    }
    if (a < 0x38800000u) {                 /* below the smallest normal half (2^-14) */
        if (a < 0x33000000u) {             /* < 2^-25: rounds to zero (2^-25 ties to 0) */
            if (a) kern_raise(FE_UNDERFLOW | FE_INEXACT);
            return sign;
        }
        uint32_t e = a >> 23;
        uint32_t m = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e;         /* 14..24 bits to drop (value m*2^(e-150)) */
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1u);
        if (rem > halfway || (rem == halfway && (q & 1u))) q += 1u;
        if (rem) kern_raise(FE_UNDERFLOW | FE_INEXACT);
        return sign | (uint16_t)q;
    }
    /* normal: rebias exponent, round 13 dropped bits to nearest even */
    uint32_t r = a - 0x38000000u;          /* exponent - 112 */
    uint32_t lsb = (r >> 13) & 1u;
    r += 0xfffu + lsb;
    return sign | (uint16_t)(r >> 13);
}

/* float64 -> float16 with one rounding (numpy's npy_double_to_half). */
static inline uint16_t kern_d2h(double d) {
    uint64_t u = kern_f64_bits(d);
    uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
    uint64_t a = u & 0x7fffffffffffffffull;
    if (a >= 0x7ff0000000000000ull) {
        if (a == 0x7ff0000000000000ull) return sign | 0x7c00u;
        uint16_t r = (uint16_t)(0x7c00u | ((a >> 42) & 0x3ffu));
        if ((r & 0x3ffu) == 0) r |= 1;
        return sign | r;
    }
    if (a >= 0x40effe0000000000ull) {      /* >= 65520 */
        kern_raise(FE_OVERFLOW | FE_INEXACT);
        return sign | 0x7c00u;
    }
    if (a < 0x3f10000000000000ull) {       /* < 2^-14: subnormal half or zero */
        if (a < 0x3e60000000000000ull) {   /* < 2^-25 */
            if (a) kern_raise(FE_UNDERFLOW | FE_INEXACT);
            return sign;
        }
        uint64_t e = a >> 52;
        uint64_t m = (a & 0xfffffffffffffull) | 0x10000000000000ull;
        uint64_t shift = 1051u - e;        /* value m*2^(e-1075), half ulp 2^-24 */
        uint64_t q = m >> shift;
        uint64_t rem = m & ((1ull << shift) - 1u);
        uint64_t halfway = 1ull << (shift - 1u);
        if (rem > halfway || (rem == halfway && (q & 1u))) q += 1u;
        if (rem) kern_raise(FE_UNDERFLOW | FE_INEXACT);
        return sign | (uint16_t)q;
    }
    uint64_t r = a - 0x3f00000000000000ull; /* exponent - (1023-15) */
    uint64_t lsb = (r >> 42) & 1u;
    r += 0x1ffffffffffull + lsb;
    return sign | (uint16_t)(r >> 42);
}

/* ---------------------------------------------------------------- float16, F16C */
/* Signaling NaNs: numpy converts half <-> float in software and keeps a signaling NaN
 * signaling (payload kept, no "invalid" report); the F16C instructions quiet it and raise
 * "invalid". So NaN inputs take the software routines, and the vector rows check their
 * lanes for signaling NaNs before converting (the rare lanes go one by one). */
static inline int kern_f32_is_snan(float f) {
    const uint32_t a = kern_f32_bits(f) & 0x7fffffffu;
    return a > 0x7f800000u && a < 0x7fc00000u;
}
static inline int kern_f16_is_snan(uint16_t h) {
    const uint16_t a = h & 0x7fffu;
    return a > 0x7c00u && a < 0x7e00u;
}

/* float16 -> float64 exactly, NaN payloads kept (numpy's npy_half_to_double: a signaling
 * NaN stays signaling, where widening through a float conversion would quiet it). */
static inline double kern_h2d_nan(uint16_t h) {
    const uint64_t u = ((uint64_t)(h & 0x8000u) << 48) | 0x7ff0000000000000ull
                     | ((uint64_t)(h & 0x3ffu) << 42);
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* Keeps a conversion instruction inside the branch that checked its input: without it the
 * compiler may compute it ahead of the check (its result unused), which raises the very
 * "invalid" the check avoids. */
#define KERN_CVT_AFTER_CHECK(v) __asm__ volatile("" : "+v"(v))

#if defined(__F16C__)
/* The instruction alone, for ggml's own ops (norm and rope inputs, masks, get_rows,
 * quantized blocks' scales): ggml's CPU widens halves this way, so a signaling NaN comes out
 * quiet there as in ggml, and these per-element loops carry no check (the check below
 * doubled a strided widening loop's time). */
static inline float kern_h2f_hw(uint16_t h) { return _cvtsh_ss(h); }
static inline float kern_h2f(uint16_t h) {
    if (__builtin_expect(kern_f16_is_snan(h), 0)) return kern_h2f_soft(h);
    __asm__ volatile("" : "+r"(h));
    return _cvtsh_ss(h);
}
/* numpy raises "underflow" when a value below half's smallest normal (2^-14) converts
 * inexactly; the F16C instruction does not report it, so it is checked here. */
static inline void kern_f2h_underflow_check(float f, uint16_t h) {
    /* quiet comparisons: a NaN must not raise "invalid" here */
    if (__builtin_isless(__builtin_fabsf(f), 6.103515625e-05f) && f != 0.0f && _cvtsh_ss(h) != f)
        kern_raise(FE_UNDERFLOW | FE_INEXACT);
}
static inline uint16_t kern_f2h(float f) {
    if (__builtin_expect(kern_f32_is_snan(f), 0)) return kern_f2h_soft(f);
    KERN_CVT_AFTER_CHECK(f);
    uint16_t h = (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
    kern_f2h_underflow_check(f, h);
    return h;
}
#define KERN_HAVE_F16C 1
#else
static inline float kern_h2f_hw(uint16_t h) { return kern_h2f_soft(h); }
static inline float kern_h2f(uint16_t h) { return kern_h2f_soft(h); }
static inline uint16_t kern_f2h(float f) { return kern_f2h_soft(f); }
#define KERN_HAVE_F16C 0
#endif

/* float16 -> float64 as numpy does: exact, a signaling NaN kept signaling. */
static inline double kern_h2d(uint16_t h) {
    if (__builtin_expect((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu), 0)) return kern_h2d_nan(h);
    return (double)kern_h2f(h);
}

/* Contiguous rows. */
#if defined(__F16C__) && defined(__AVX__)
/* Nonzero when one of 8 halves is a signaling NaN (integer compares: a float compare
 * would itself report "invalid" for it). */
static inline int kern_h16_any_snan(__m128i h) {
    const __m128i a = _mm_and_si128(h, _mm_set1_epi16(0x7fff));
    const __m128i m = _mm_and_si128(_mm_cmpgt_epi16(a, _mm_set1_epi16(0x7c00)),
                                    _mm_cmpgt_epi16(_mm_set1_epi16(0x7e00), a));
    return _mm_movemask_epi8(m);
}
#endif

static inline void kern_h2f_row(const uint16_t * src, float * dst, int64_t n) {
    int64_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) {
        __m256i h = _mm256_loadu_si256((const __m256i *)(src + i));
        if (__builtin_expect(kern_h16_any_snan(_mm256_castsi256_si128(h))
                             | kern_h16_any_snan(_mm256_extracti128_si256(h, 1)), 0)) {
            for (int j = 0; j < 16; j++) dst[i + j] = kern_h2f(src[i + j]);
            continue;
        }
        KERN_CVT_AFTER_CHECK(h);
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(h));
    }
#endif
#if defined(__F16C__) && defined(__AVX__)
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(src + i));
        if (__builtin_expect(kern_h16_any_snan(h), 0)) {
            for (int j = 0; j < 8; j++) dst[i + j] = kern_h2f(src[i + j]);
            continue;
        }
        KERN_CVT_AFTER_CHECK(h);
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
#endif
    for (; i < n; i++) dst[i] = kern_h2f(src[i]);
}

#if defined(__F16C__) && defined(__AVX__)
/* Nonzero when one of 4 floats (bits u) is tiny (below half's smallest normal, not zero)
 * or a signaling NaN: integer compares, which report nothing. */
static inline int kern_f2h_rare4(__m128i u) {
    const __m128i a = _mm_and_si128(u, _mm_set1_epi32(0x7fffffff));
    const __m128i tiny = _mm_and_si128(_mm_cmpgt_epi32(a, _mm_setzero_si128()),
                                       _mm_cmpgt_epi32(_mm_set1_epi32(0x38800000), a));
    const __m128i snan = _mm_and_si128(_mm_cmpgt_epi32(a, _mm_set1_epi32(0x7f800000)),
                                       _mm_cmpgt_epi32(_mm_set1_epi32(0x7fc00000), a));
    return _mm_movemask_epi8(_mm_or_si128(tiny, snan));
}

/* 8 floats -> 8 halves; lanes that are tiny (numpy's underflow report) or signaling NaNs
 * (numpy keeps them signaling) send the 8 through kern_f2h one by one. */
static inline __m128i kern_f2h8(const float * src) {
    const __m256 x = _mm256_loadu_ps(src);
    const __m256i u = _mm256_castps_si256(x);
    if (__builtin_expect(kern_f2h_rare4(_mm256_castsi256_si128(u))
                         | kern_f2h_rare4(_mm256_extractf128_si256(u, 1)), 0)) {
        uint16_t hs[8];
        for (int j = 0; j < 8; j++) hs[j] = kern_f2h(src[j]);
        return _mm_loadu_si128((const __m128i *)hs);
    }
    __m256 y = x;
    KERN_CVT_AFTER_CHECK(y);
    return _mm256_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT);
}
#endif

#if defined(__AVX512F__)
/* 16 floats -> 16 halves (same bits and flags as two kern_f2h8): half the instructions per
 * element. f32 -> f16 1e7 in the 16-core Xeon's L3 (bench/csrc/cvt_lib.c,
 * tools/device/cvt_probe.py): 16 lanes with float compares for the underflow check ran one
 * thread 2584 -> 2308 us, two threads 1594 -> 1422 (cvtprobe-xeon-s1.json); float compares
 * report "invalid" on a signaling NaN, and with the integer checks here the next round gave
 * 2609 / 1306 us against 2493 / 1223 for the float-compare form (cvtprobe-xeon-s2.json). */
static inline __m256i kern_f2h16(const float * src) {
    const __m512 x = _mm512_loadu_ps(src);
    const __m512i a = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
    /* tiny: 0 < a < 2^-14's bits; signaling NaN: inf < a < the quiet bit (unsigned ranges) */
    const __mmask16 rare =
        _mm512_cmplt_epu32_mask(_mm512_sub_epi32(a, _mm512_set1_epi32(1)), _mm512_set1_epi32(0x387fffff))
      | _mm512_cmplt_epu32_mask(_mm512_sub_epi32(a, _mm512_set1_epi32(0x7f800001)), _mm512_set1_epi32(0x3fffff));
    if (__builtin_expect(rare != 0, 0)) {
        uint16_t hs[16];
        for (int j = 0; j < 16; j++) hs[j] = kern_f2h(src[j]);
        return _mm256_loadu_si256((const __m256i *)hs);
    }
    __m512 y = x;
    KERN_CVT_AFTER_CHECK(y);
    return _mm512_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT);
}
#endif

#if defined(__AVX512F__)
/* The row's body in blocks of KERN_F2H_BLOCK floats (4 KiB, in L1 when a block runs again):
 * the bare conversion, with integer range tests folded into two running extremes on the way
 * (a tiny value: a - 1 below 0x387fffff unsigned, zeros wrapping to the top; a signaling
 * NaN: a + 2^22 above 0x7fc00000 signed, quiet NaNs wrapping negative). A block where one
 * turned up runs again through kern_f2h16 (numpy's bits and flags). What the first run
 * raised: "overflow" and "inexact" as kern_f2h16 raises them; "underflow" for a subset of the
 * tiny values that kern_f2h16 then reports too; "invalid" for a signaling NaN, which
 * kern_f2h16 never raises -- nothing else in the row can, so it is cleared again unless it
 * was set when the row began. 3 integer uops a vector on the two 512-bit ports, no branch,
 * against kern_f2h16's 6, two mask moves and a branch: float32 -> float16 of 1e5 in L2, one
 * thread of the 2-core VM (C harness, alternating runs), 9.5-13.7 -> 7.8-8.2 us with
 * 64-byte aligned rows; rows 16 bytes past a line (numpy's) 11.2-11.3 -> 9.7-10.6 with the
 * source's head peeled (kern_f2h_row). Rows overlapping their source take kern_f2h16
 * throughout (a block runs twice). */
#define KERN_F2H_BLOCK 1024
#define KERN_MXCSR_IE 0x1u
static inline __attribute__((always_inline))
void kern_f2h_body16(const float * src, uint16_t * dst, int64_t n, int nt) {
    const __m512i absm = _mm512_set1_epi32(0x7fffffff), one = _mm512_set1_epi32(1);
    const __m512i qbit = _mm512_set1_epi32(0x00400000);
    const unsigned ie0 = _mm_getcsr() & KERN_MXCSR_IE;
    for (int64_t i = 0; i < n;) {
        const int64_t e = n - i < KERN_F2H_BLOCK ? n : i + KERN_F2H_BLOCK;
        __m512i lo = _mm512_set1_epi32(-1), hi = _mm512_set1_epi32((int32_t)0x80000000);
        for (int64_t j = i; j < e; j += 16) {
            __m512 x = _mm512_loadu_ps(src + j);
            const __m512i a = _mm512_and_si512(_mm512_castps_si512(x), absm);
            lo = _mm512_min_epu32(lo, _mm512_sub_epi32(a, one));
            hi = _mm512_max_epi32(hi, _mm512_add_epi32(a, qbit));
            KERN_CVT_AFTER_CHECK(x);
            const __m256i h = _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT);
            if (nt) _mm256_stream_si256((__m256i *)(dst + j), h);
            else _mm256_storeu_si256((__m256i *)(dst + j), h);
        }
        const int snan = _mm512_reduce_max_epi32(hi) > 0x7fc00000;
        if (__builtin_expect(snan || _mm512_reduce_min_epu32(lo) < 0x387fffffu, 0)) {
            for (int64_t j = i; j < e; j += 16) {
                const __m256i h = kern_f2h16(src + j);
                if (nt) _mm256_stream_si256((__m256i *)(dst + j), h);
                else _mm256_storeu_si256((__m256i *)(dst + j), h);
            }
            if (snan && !ie0) _mm_setcsr(_mm_getcsr() & ~KERN_MXCSR_IE);
        }
        i = e;
    }
}
static inline int kern_f2h_overlap(const float * src, const uint16_t * dst, int64_t n) {
    return (const char *)dst < (const char *)(src + n) && (const char *)src < (const char *)(dst + n);
}
#endif

static inline void kern_f2h_row(const float * src, uint16_t * dst, int64_t n) {
    int64_t i = 0;
#if defined(__AVX512F__)
    if (!kern_f2h_overlap(src, dst, n)) {
        /* the source's 64-byte boundary first (numpy's large arrays start 16 bytes past a
         * page: every 64-byte load would straddle two lines) */
        for (const int64_t h = kern_line_peel(src, 4, n); i < h; i++) dst[i] = kern_f2h(src[i]);
        const int64_t m = (n - i) & ~(int64_t)15;
        kern_f2h_body16(src + i, dst + i, m, 0);
        i += m;
    }
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(dst + i), kern_f2h16(src + i));
#endif
#if defined(__F16C__) && defined(__AVX__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i), kern_f2h8(src + i));
#endif
    for (; i < n; i++) dst[i] = kern_f2h(src[i]);
}

/* Same, with non-temporal stores for the 16-byte aligned body (outputs beyond the caches). */
static inline void kern_f2h_row_nt(const float * src, uint16_t * dst, int64_t n) {
    int64_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
    if (((uintptr_t)dst & 1u) == 0) {
#if defined(__AVX512F__)
        for (; i < n && ((uintptr_t)(dst + i) & 31u); i++) dst[i] = kern_f2h(src[i]);
        if (!kern_f2h_overlap(src + i, dst + i, n - i)) {
            const int64_t m = (n - i) & ~(int64_t)15;
            kern_f2h_body16(src + i, dst + i, m, 1);
            i += m;
        }
        for (; i + 16 <= n; i += 16)
            _mm256_stream_si256((__m256i *)(dst + i), kern_f2h16(src + i));
#else
        for (; i < n && ((uintptr_t)(dst + i) & 15u); i++) dst[i] = kern_f2h(src[i]);
#endif
        for (; i + 8 <= n; i += 8)
            _mm_stream_si128((__m128i *)(dst + i), kern_f2h8(src + i));
    }
#endif
    for (; i < n; i++) dst[i] = kern_f2h(src[i]);
}

/* ---------------------------------------------------------------- float16 arithmetic */
/* Fused float16 rows of add / sub / mul / div (issue 14): numpy's float16 arithmetic (both
 * operands widened to f32, the f32 result rounded to half, underflow reported as kern_f2h
 * does) in one pass over registers. The generic path stages each operand through an f32
 * buffer and the result back (three passes): 1.8-3x slower than torch's f16 add. Operands
 * contiguous; b_scalar: b is one value. Returns 0 (nothing done) for other ops. */
#define KERN_H16_ADD 1
#define KERN_H16_SUB 2
#define KERN_H16_MUL 3
#define KERN_H16_DIV 4

#define KERN_H16_OP(which, x, y) \
    ((which) == KERN_H16_ADD ? (x) + (y) : (which) == KERN_H16_SUB ? (x) - (y) \
     : (which) == KERN_H16_MUL ? (x) * (y) : (x) / (y))

static inline __attribute__((always_inline))
void kern_h16_binary_body(const int which, const int nt, int64_t n, uint16_t * d,
                          const uint16_t * a, const uint16_t * b, int b_scalar) {
    int64_t i = 0;
    /* nt: streaming stores (an output beyond the LLC), from the first 64-byte boundary of d
     * on; the scalar head computes the same bits as the vector body */
    if (nt && ((uintptr_t)d & 1u) == 0)
        for (; i < n && ((uintptr_t)(d + i) & 63u); i++) {
            const float x = kern_h2f(a[i]), y = kern_h2f(b_scalar ? b[0] : b[i]);
            d[i] = kern_f2h(KERN_H16_OP(which, x, y));
        }
    const int stream = nt && ((uintptr_t)(d + i) & 63u) == 0;
#if defined(__AVX512F__)
    const __m512 bs = _mm512_set1_ps(kern_h2f(b[0]));
    const __m512 tiny = _mm512_set1_ps(6.103515625e-05f);
    for (; i + 16 <= n; i += 16) {
        const __m512 x = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(a + i)));
        const __m512 y = b_scalar ? bs : _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(b + i)));
        __m512 r;
        if (which == KERN_H16_ADD) r = _mm512_add_ps(x, y);
        else if (which == KERN_H16_SUB) r = _mm512_sub_ps(x, y);
        else if (which == KERN_H16_MUL) r = _mm512_mul_ps(x, y);
        else r = _mm512_div_ps(x, y);
        const __m256i h = _mm512_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT);
        const __m512 ar = _mm512_abs_ps(r);
        const __mmask16 t = _mm512_cmp_ps_mask(ar, tiny, _CMP_LT_OQ)
                          & _mm512_cmp_ps_mask(ar, _mm512_setzero_ps(), _CMP_NEQ_OQ);
        if (__builtin_expect(t != 0, 0)) {
            float rs[16];
            uint16_t hs[16];
            _mm512_storeu_ps(rs, r);
            _mm256_storeu_si256((__m256i *)hs, h);
            for (int j = 0; j < 16; j++) kern_f2h_underflow_check(rs[j], hs[j]);
        }
        if (stream) _mm256_stream_si256((__m256i *)(d + i), h);
        else _mm256_storeu_si256((__m256i *)(d + i), h);
    }
#elif defined(__F16C__) && defined(__AVX__)
    const __m256 bs = _mm256_set1_ps(kern_h2f(b[0]));
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + i)));
        const __m256 y = b_scalar ? bs : _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(b + i)));
        __m256 r;
        if (which == KERN_H16_ADD) r = _mm256_add_ps(x, y);
        else if (which == KERN_H16_SUB) r = _mm256_sub_ps(x, y);
        else if (which == KERN_H16_MUL) r = _mm256_mul_ps(x, y);
        else r = _mm256_div_ps(x, y);
        float rs[8];
        _mm256_storeu_ps(rs, r);
        if (stream) _mm_stream_si128((__m128i *)(d + i), kern_f2h8(rs));
        else _mm_storeu_si128((__m128i *)(d + i), kern_f2h8(rs));
    }
#endif
    (void)stream;
    for (; i < n; i++) {
        const float x = kern_h2f(a[i]), y = kern_h2f(b_scalar ? b[0] : b[i]);
        d[i] = kern_f2h(KERN_H16_OP(which, x, y));
    }
}

static inline int kern_h16_binary(int which, int nt, int64_t n, uint16_t * d,
                                  const uint16_t * a, const uint16_t * b, int b_scalar) {
    nt = nt != 0;
    switch (which * 2 + nt) {
    case 2 * KERN_H16_ADD: kern_h16_binary_body(KERN_H16_ADD, 0, n, d, a, b, b_scalar); return 1;
    case 2 * KERN_H16_SUB: kern_h16_binary_body(KERN_H16_SUB, 0, n, d, a, b, b_scalar); return 1;
    case 2 * KERN_H16_MUL: kern_h16_binary_body(KERN_H16_MUL, 0, n, d, a, b, b_scalar); return 1;
    case 2 * KERN_H16_DIV: kern_h16_binary_body(KERN_H16_DIV, 0, n, d, a, b, b_scalar); return 1;
    case 2 * KERN_H16_ADD + 1: kern_h16_binary_body(KERN_H16_ADD, 1, n, d, a, b, b_scalar); return 1;
    case 2 * KERN_H16_SUB + 1: kern_h16_binary_body(KERN_H16_SUB, 1, n, d, a, b, b_scalar); return 1;
    case 2 * KERN_H16_MUL + 1: kern_h16_binary_body(KERN_H16_MUL, 1, n, d, a, b, b_scalar); return 1;
    case 2 * KERN_H16_DIV + 1: kern_h16_binary_body(KERN_H16_DIV, 1, n, d, a, b, b_scalar); return 1;
    default: return 0;
    }
}

/* ---------------------------------------------------------------- bfloat16 */
static inline float kern_bf2f(uint16_t h) { return kern_bits_f32((uint32_t)h << 16); }

static inline uint16_t kern_f2bf(float f) {
    uint32_t u = kern_f32_bits(f);
    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    uint32_t nan = (u >> 16) | 0x40u;      /* quiet NaN, sign and top payload kept */
    return (uint16_t)(((u & 0x7fffffffu) > 0x7f800000u) ? nan : rounded);
}

/* float64 -> bfloat16 with one rounding: round to odd into float, then to nearest even. */
static inline uint16_t kern_d2bf(double d) {
    float f = (float)d;
    uint32_t u = kern_f32_bits(f);
    if (d == d && (double)f != d && (u & 0x7fffffffu) != 0x7f800000u) {
        if (__builtin_fabs((double)f) > __builtin_fabs(d)) u -= 1u;  /* toward zero */
        u |= 1u;                                                      /* sticky bit */
    }
    return kern_f2bf(kern_bits_f32(u));
}

static inline void kern_bf2f_row(const uint16_t * src, float * dst, int64_t n) {
    uint32_t * d = (uint32_t *)dst;
    for (int64_t i = 0; i < n; i++) d[i] = (uint32_t)src[i] << 16;
}

static inline void kern_f2bf_row(const float * src, uint16_t * dst, int64_t n) {
    const uint32_t * s = (const uint32_t *)src;
    for (int64_t i = 0; i < n; i++) {
        uint32_t u = s[i];
        uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
        uint32_t nan = (u >> 16) | 0x40u;
        dst[i] = (uint16_t)(((u & 0x7fffffffu) > 0x7f800000u) ? nan : rounded);
    }
}

/* ---------------------------------------------------------------- streaming stores */
/* Copies nbytes with non-temporal stores for the 32-byte aligned body: the written lines
 * bypass the caches (no read-for-ownership), which is what lifts a large elementwise
 * op from ~2/3 of the memory bandwidth towards the STREAM figure. */
static inline void kern_stream_copy(char * dst, const char * src, int64_t nbytes) {
#if defined(__AVX__)
    int64_t head = (int64_t)((32u - ((uintptr_t)dst & 31u)) & 31u);
    if (head > nbytes) head = nbytes;
    memcpy(dst, src, (size_t)head);
    int64_t i = head;
    for (; i + 32 <= nbytes; i += 32)
        _mm256_stream_si256((__m256i *)(dst + i), _mm256_loadu_si256((const __m256i *)(src + i)));
    memcpy(dst + i, src + i, (size_t)(nbytes - i));
#else
    memcpy(dst, src, (size_t)nbytes);
#endif
}

/* k rows of rb bytes, row r from s + r * ss to d + r * sd (a same-type copy whose rows lie
 * apart: a permute's 256-byte rows). One tight loop of vector moves instead of a memcpy call
 * per row: with a call per row, the few rows whose loads were in flight at once (the
 * instruction window holds a row's call and branches) left the (4,128,64,64) permuted
 * float32 copy at 0.55-0.65x torch's time on one thread, the data in the L3 (2-core VM). */
static inline void kern_copy_rows(char * d, int64_t sd, const char * s, int64_t ss, int64_t rb,
                                  int64_t k) {
    for (int64_t r = 0; r < k; r++, d += sd, s += ss) {
        int64_t j = 0;
#if defined(__AVX512F__)
        for (; j + 64 <= rb; j += 64)
            _mm512_storeu_si512((void *)(d + j), _mm512_loadu_si512((const void *)(s + j)));
#elif defined(__AVX__)
        for (; j + 32 <= rb; j += 32)
            _mm256_storeu_si256((__m256i *)(d + j), _mm256_loadu_si256((const __m256i *)(s + j)));
#endif
        if (j < rb) memcpy(d + j, s + j, (size_t)(rb - j));
    }
}

/* Tile transpose into a dense buffer: out[r*cols + c] = src[c*s_c + r*s_r] (byte strides),
 * read along r (the source's contiguous direction) so each cache line is used whole. The
 * cache-blocked path of a.T + b feeds the rows of `out` to the contiguous row loops. */
#define KERN_TRANSPOSE_T(T)                                                              \
    do {                                                                                 \
        T * o = (T *)out;                                                                \
        for (int c = 0; c < cols; c++) {                                                 \
            const char * s = src + (int64_t)c * s_c;                                     \
            for (int r = 0; r < rows; r++)                                               \
                o[r * cols + c] = *(const T *)(s + (int64_t)r * s_r);                    \
        }                                                                                \
    } while (0)

#if defined(__AVX__)
/* 8x8 float transpose in registers: rows j of the input become columns of the output. */
static inline void kern_transpose8_ps(const char * src, int64_t s_c, float * out, int cols) {
    __m256 r0 = _mm256_loadu_ps((const float *)(src + 0 * s_c));
    __m256 r1 = _mm256_loadu_ps((const float *)(src + 1 * s_c));
    __m256 r2 = _mm256_loadu_ps((const float *)(src + 2 * s_c));
    __m256 r3 = _mm256_loadu_ps((const float *)(src + 3 * s_c));
    __m256 r4 = _mm256_loadu_ps((const float *)(src + 4 * s_c));
    __m256 r5 = _mm256_loadu_ps((const float *)(src + 5 * s_c));
    __m256 r6 = _mm256_loadu_ps((const float *)(src + 6 * s_c));
    __m256 r7 = _mm256_loadu_ps((const float *)(src + 7 * s_c));
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(out + 0 * cols, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(out + 1 * cols, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(out + 2 * cols, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(out + 3 * cols, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(out + 4 * cols, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(out + 5 * cols, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(out + 6 * cols, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(out + 7 * cols, _mm256_permute2f128_ps(u3, u7, 0x31));
}
#endif

static inline void kern_transpose_tile(const char * src, int64_t s_c, int64_t s_r, char * out,
                                       int rows, int cols, int esize) {
#if defined(__AVX__)
    if (esize == 4 && s_r == 4 && (rows & 7) == 0 && (cols & 7) == 0) {
        for (int c = 0; c < cols; c += 8)
            for (int r = 0; r < rows; r += 8)
                kern_transpose8_ps(src + (int64_t)c * s_c + (int64_t)r * 4, s_c,
                                   (float *)out + (int64_t)r * cols + c, cols);
        return;
    }
#endif
    switch (esize) {
        case 1: KERN_TRANSPOSE_T(uint8_t); break;
        case 2: KERN_TRANSPOSE_T(uint16_t); break;
        case 4: KERN_TRANSPOSE_T(uint32_t); break;
        default: KERN_TRANSPOSE_T(uint64_t); break;
    }
}

/* Software prefetch of a tile that will be transposed soon: its source rows are far apart
 * (one TLB page each), too scattered for the hardware prefetchers, so without this each
 * tile waits on its misses a few at a time. */
static inline void kern_prefetch_tile(const char * src, int64_t s_c, int64_t s_r, int rows,
                                      int cols) {
    int64_t span = (int64_t)rows * s_r;
    if (span < 0) { src += span; span = -span; }
    for (int c = 0; c < cols; c++) {
        const char * s = src + (int64_t)c * s_c;
        for (int64_t off = 0; off < span; off += 64) __builtin_prefetch(s + off, 0, 0);
    }
}

/* Contiguous rounding rows with explicit AVX rounding: gcc vectorizes floorf & co only
 * under -fno-trapping-math, which would also let it speculate divisions elsewhere and
 * raise flags numpy does not. _MM_FROUND_NO_EXC: no inexact flag, NaN kept. */
#define KERN_ROUND_ROWS(name, mode)                                                       \
static inline void kern_##name##_row_f32(const float * a, float * d, int64_t n) {       \
    int64_t i = 0;                                                                      \
    KERN_ROUND_BODY_PS(mode)                                                            \
    for (; i < n; i++) d[i] = _mm_cvtss_f32(_mm_round_ss(_mm_setzero_ps(),              \
                                  _mm_set_ss(a[i]), (mode) | _MM_FROUND_NO_EXC));        \
}                                                                                       \
static inline void kern_##name##_row_f64(const double * a, double * d, int64_t n) {     \
    int64_t i = 0;                                                                      \
    KERN_ROUND_BODY_PD(mode)                                                            \
    for (; i < n; i++) d[i] = _mm_cvtsd_f64(_mm_round_sd(_mm_setzero_pd(),              \
                                  _mm_set_sd(a[i]), (mode) | _MM_FROUND_NO_EXC));        \
}
#if defined(__AVX__)
#define KERN_ROUND_BODY_PS(mode) for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i,       \
        _mm256_round_ps(_mm256_loadu_ps(a + i), (mode) | _MM_FROUND_NO_EXC));
#define KERN_ROUND_BODY_PD(mode) for (; i + 4 <= n; i += 4) _mm256_storeu_pd(d + i,       \
        _mm256_round_pd(_mm256_loadu_pd(a + i), (mode) | _MM_FROUND_NO_EXC));
#else
#define KERN_ROUND_BODY_PS(mode)
#define KERN_ROUND_BODY_PD(mode)
#endif
#if defined(__SSE4_1__)
KERN_ROUND_ROWS(floor, _MM_FROUND_TO_NEG_INF)
KERN_ROUND_ROWS(ceil, _MM_FROUND_TO_POS_INF)
KERN_ROUND_ROWS(trunc, _MM_FROUND_TO_ZERO)
KERN_ROUND_ROWS(round, _MM_FROUND_TO_NEAREST_INT)
#else
#include <math.h>
#define KERN_ROUND_PORTABLE(name, fn)                                                     \
static inline void kern_##name##_row_f32(const float * a, float * d, int64_t n) {       \
    for (int64_t i = 0; i < n; i++) d[i] = fn##f(a[i]); }                               \
static inline void kern_##name##_row_f64(const double * a, double * d, int64_t n) {     \
    for (int64_t i = 0; i < n; i++) d[i] = fn(a[i]); }
KERN_ROUND_PORTABLE(floor, floor)
KERN_ROUND_PORTABLE(ceil, ceil)
KERN_ROUND_PORTABLE(trunc, trunc)
KERN_ROUND_PORTABLE(round, rint)
#endif

/* Next chunk index of a shared work counter (dynamic scheduling in compute_parallel). */
static inline int64_t kern_atomic_load(int64_t * counter) {
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
}
static inline int64_t kern_atomic_next(int64_t * counter) {
    return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

static inline void kern_sfence(void) {
#if defined(__SSE__)
    _mm_sfence();
#endif
}

#endif
