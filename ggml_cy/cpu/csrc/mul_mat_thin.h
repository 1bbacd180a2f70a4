/* (issue 14) The packed path's tasks with few rows of b (N small, a wide): F32 / F16 weights
 * on AVX-512, without packing a.
 *
 * mm_task packs every K block of its rows of a into 32-wide k-major panels (16 x 16
 * transposes) so that a vector holds 32 columns of C. That pays where each packed element
 * serves many rows of b; with N = 64 it serves 64, and on the 2-core VM the packing of a
 * alone took a quarter of the task (4096 x 64 x 4096 f32, one thread: 4.9 of 21 ms; the b
 * packing 0.5). Here the roles of the operands swap: a vector holds 16 rows of b (lanes along
 * N, b packed into 32-row k-major panels by mm_pack_a, which is cheap: N is small), and a is
 * read as it lies, one element broadcast per row of a and k. A tile is 8 rows of a x 32 rows of b:
 * per k two loads of the b panel, eight broadcasts, sixteen FMAs, as mm_micro with the
 * operands exchanged. The tile's sums leave through one 16 x 16 transpose (each output row of
 * dst takes 8 adjacent floats).
 *
 * The arithmetic is mm_micro's, element for element: per K block of MM_KC an FMA chain over k
 * in order starting from zero (a*b and b*a are the same exact product), the block's sum
 * stored (first block) or added to the stored sum (later blocks), blocks in order. So the
 * bits are those of every other path (tests/test_gemm_thin.py compares them).
 *
 * Loop order: M blocks of MM_THIN_MB rows (their dst columns stay in L2 across the K blocks),
 * K blocks, N blocks of at most MM_THIN_NB rows (one packed b block, in L2), then groups of 8
 * rows of a, each against every 32-row panel of the b block. A group's K block of a (8 rows x
 * MM_KC: 8 KiB) is read from memory once and then from L1 for the other panels; the next
 * group's rows are prefetched while the first panel runs. F16 rows (and f32 rows whose start
 * is not 4-byte aligned: mul_mat's a always has its elements adjacent) are widened to f32 per
 * group first, row by row (no transpose). */
#ifndef GGML_CY_MUL_MAT_THIN_H
#define GGML_CY_MUL_MAT_THIN_H
#if defined(MM_AVX512)

/* Tasks with MM_THIN_NMIN..MM_THIN_NMAX rows of b take the thin path, where their last
 * 32-row panel is at most MM_THIN_PAD rows short (the padding is computed). Packed -> thin,
 * best ms of bench/csrc/mm_tune.c, 4096 x N x 4096, built with -DMM_THIN_NMAX=0 and without:
 *   2-core VM, f32, 2 threads: N = 16 3.8 -> 4.0, 24 4.6 -> 3.8, 32 5.5 -> 3.9, 48 7.1 ->
 *   7.7, 64 8.8 -> 7.9 (f16 8.4 -> 7.6), 80 10.4 -> 11.8, 96 12.1 -> 12.1, 128 15.8 -> 15.9;
 *   16-core host (round w21, round 1 / round 2, f32 unless named): N = 32 at 2 threads
 *   8.8 / 6.1 -> 6.6 / 4.3 (f16 6.8 / 5.5 -> 6.7 / 4.4), N = 64 at 2 threads 10.0 / 10.0 ->
 *   8.6 / 8.4 (f16 11.6 / 9.4 -> 8.5 / 8.6), at 16 threads 2.5 / 2.3 -> 1.8 / 2.2; N = 96
 *   lost there in one round of two (2 threads 13.5 -> 21.2 ms), hence 64. */
#ifndef MM_THIN_NMAX
#define MM_THIN_NMAX 64
#endif
#define MM_THIN_NMIN 24
#define MM_THIN_PAD 8
#define MM_THIN_MR 8        /* rows of a per tile (broadcast) */
/* rows of b per tile (two zmm): b is packed as mm_pack_a packs a, into MM_NR-wide k-major
 * panels (bp[p*kb + k*MM_NR + j] = b(n0+p+j, k0+k), rows past the block zero) */
#define MM_THIN_NR MM_NR
#define MM_THIN_MB 2048     /* rows of a per M block */
/* rows of b per packed block: what fits in mm_task's b scratch ((MM_MC + MM_MR) x MM_KC) */
#define MM_THIN_NB ((MM_MC + MM_MR) / MM_THIN_NR * MM_THIN_NR)

/* 1 when a task of nrows rows of b takes the thin path for weights of this type. */
static inline int mm_thin_takes(int type, int64_t nrows) {
    return (type == GGML_TYPE_F32 || type == GGML_TYPE_F16) && nrows >= MM_THIN_NMIN
        && nrows <= MM_THIN_NMAX && (-nrows & (MM_THIN_NR - 1)) <= MM_THIN_PAD
        && MM_THIN_NB >= MM_THIN_NR;
}

/* Floats of a copy of every packed block of nrows rows of b (mm_thin_task's pre). */
static inline size_t mm_thin_pre_floats(int64_t nrows, int64_t K) {
    return (size_t)mm_cdiv(K, MM_KC) * (size_t)(mm_cdiv(nrows, MM_THIN_NR) * MM_THIN_NR)
           * MM_KC;
}

/* dst[n][m] (+)= the tile's sum, for its rows n < cols of b and m < rows of a (acc[i][h]
 * lane j: a row i, b row 16h + j). One 16 x 16 transpose puts b row j's 8 values in the low half of
 * r[j] and b row 16 + j's in the high half. c: &dst[n0][m0], row stride ldc floats. */
static inline __attribute__((always_inline)) void mm_thin_store(const __m512 (*acc)[MM_THIN_MR][2],
                                                                float * c, int64_t ldc,
                                                                int accumulate, int rows, int cols) {
    __m512 r[16];
    for (int i = 0; i < MM_THIN_MR; i++) {
        r[i] = (*acc)[i][0];
        r[8 + i] = (*acc)[i][1];
    }
    mm_tr16(r);
    const __mmask8 mask = rows >= 8 ? (__mmask8)0xff : (__mmask8)((1u << rows) - 1u);
    for (int j = 0; j < 16 && j < cols; j++) {
        float * lo = c + j * ldc;
        __m256 v = _mm512_castps512_ps256(r[j]);
        if (accumulate) v = _mm256_add_ps(_mm256_maskz_loadu_ps(mask, lo), v);
        _mm256_mask_storeu_ps(lo, mask, v);
        if (16 + j < cols) {
            float * hi = c + (16 + j) * ldc;
            __m256 w = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(r[j]), 1));
            if (accumulate) w = _mm256_add_ps(_mm256_maskz_loadu_ps(mask, hi), w);
            _mm256_mask_storeu_ps(hi, mask, w);
        }
    }
}

/* One tile: rows m0..m0+7 of a (row i at a0 + i * lda floats, elements adjacent; rows past
 * `rows` repeat row 0 and are not stored) against one 32-row b panel, K block of kb.
 * pf (NULL: none): the next group's first row at this K block (rows pf_ld bytes apart,
 * elements pf_es bytes), its lines prefetched one per 16 k (f16 rows: each line twice). */
static inline void mm_thin_micro(int64_t kb, const float * __restrict a0, int64_t lda,
                                 const float * __restrict bp, float * __restrict c, int64_t ldc,
                                 int accumulate, int rows, int cols, const char * pf,
                                 int64_t pf_ld, int64_t pf_es) {
    const float * ar[MM_THIN_MR];
    for (int i = 0; i < MM_THIN_MR; i++) ar[i] = a0 + (i < rows ? i : 0) * lda;
    MM_ACC16_ZERO();
    for (int64_t k = 0; k < kb; k++) {
        _mm_prefetch((const char *)(bp + (k + MM_PF_A) * MM_THIN_NR), _MM_HINT_T0);
        _mm_prefetch((const char *)(bp + (k + MM_PF_A) * MM_THIN_NR) + 64, _MM_HINT_T0);
        if (pf && (k & 15) == 0)   /* one line of each of the next group's rows per 16 k */
            for (int i = 0; i < MM_THIN_MR; i++)
                _mm_prefetch(pf + i * pf_ld + k * pf_es, _MM_HINT_T0);
        const __m512 b0 = _mm512_load_ps(bp + k * MM_THIN_NR);
        const __m512 b1 = _mm512_load_ps(bp + k * MM_THIN_NR + 16);
        __m512 x;
        x = _mm512_set1_ps(ar[0][k]); c00 = _mm512_fmadd_ps(x, b0, c00); c01 = _mm512_fmadd_ps(x, b1, c01);
        x = _mm512_set1_ps(ar[1][k]); c10 = _mm512_fmadd_ps(x, b0, c10); c11 = _mm512_fmadd_ps(x, b1, c11);
        x = _mm512_set1_ps(ar[2][k]); c20 = _mm512_fmadd_ps(x, b0, c20); c21 = _mm512_fmadd_ps(x, b1, c21);
        x = _mm512_set1_ps(ar[3][k]); c30 = _mm512_fmadd_ps(x, b0, c30); c31 = _mm512_fmadd_ps(x, b1, c31);
        x = _mm512_set1_ps(ar[4][k]); c40 = _mm512_fmadd_ps(x, b0, c40); c41 = _mm512_fmadd_ps(x, b1, c41);
        x = _mm512_set1_ps(ar[5][k]); c50 = _mm512_fmadd_ps(x, b0, c50); c51 = _mm512_fmadd_ps(x, b1, c51);
        x = _mm512_set1_ps(ar[6][k]); c60 = _mm512_fmadd_ps(x, b0, c60); c61 = _mm512_fmadd_ps(x, b1, c61);
        x = _mm512_set1_ps(ar[7][k]); c70 = _mm512_fmadd_ps(x, b0, c70); c71 = _mm512_fmadd_ps(x, b1, c71);
    }
    MM_ACC16_ARRAY(acc);
    mm_thin_store(&acc, c, ldc, accumulate, rows, cols);
}

/* mm_task's work for a thin task (mm_thin_takes): dst rows [n_lo, n_hi), columns
 * [m_lo, m_hi); a, b and cbase at the batch matrix; K > 0. work: as mm_task's. pre: NULL
 * (b packed block by block into work), or a copy of all of b's packed blocks for these
 * rows (mm_thin_pre_floats floats), packed here when ready is 0 and read when it is 1. */
static inline void mm_thin_task(const ggml_tensor * dst, const char * a, const char * b,
                                char * cbase, int64_t K, int64_t m_lo, int64_t m_hi,
                                int64_t n_lo, int64_t n_hi, float * work, float * pre,
                                int ready) {
    const ggml_tensor * src0 = dst->src[0];
    const ggml_tensor * src1 = dst->src[1];
    const int type = src0->type;
    const int64_t nb00 = src0->nb[0], nb01 = src0->nb[1];
    const int64_t ldc = dst->nb[1] / 4;
    float * wide = (float *)(((uintptr_t)work + 63) & ~(uintptr_t)63);   /* 8 x MM_KC */
    float * bp = wide + (size_t)MM_NC * MM_KC;
    /* f32 rows adjacent along K with 4-byte-aligned starts are read where they lie */
    const int64_t npad = mm_cdiv(n_hi - n_lo, MM_THIN_NR) * MM_THIN_NR;
    const int direct = type == GGML_TYPE_F32 && nb00 == 4 && nb01 % 4 == 0
                       && ((uintptr_t)a & 3) == 0;
    for (int64_t jc = m_lo; jc < m_hi; jc += MM_THIN_MB) {
        const int64_t je = (m_hi - jc < MM_THIN_MB) ? m_hi : jc + MM_THIN_MB;
        for (int64_t pc = 0; pc < K; pc += MM_KC) {
            const int64_t kb = (K - pc < MM_KC) ? K - pc : MM_KC;
            for (int64_t ic = n_lo; ic < n_hi; ic += MM_THIN_NB) {
                const int64_t nbk = (n_hi - ic < MM_THIN_NB) ? n_hi - ic : MM_THIN_NB;
                /* with pre: this block's place in the thread's copy of b (mul_mat_ndeal.h),
                 * packed by the thread's first task, read by its later ones */
                float * bq = pre == NULL ? bp
                             : pre + (pc / MM_KC) * npad * MM_KC + (ic - n_lo) * MM_KC;
                /* wide serves as mm_pack_a's row scratch (b's elements apart) before the
                 * groups below use it */
                if (pre == NULL || !ready)
                    mm_pack_a(b, GGML_TYPE_F32, src1->nb[0], src1->nb[1], ic, nbk, pc, kb, bq,
                              wide);
                for (int64_t m = jc; m < je; m += MM_THIN_MR) {
                    const int rows = (int)(je - m < MM_THIN_MR ? je - m : MM_THIN_MR);
                    const float * a0;
                    int64_t lda;
                    const char * pf = NULL;
                    if (direct) {
                        a0 = (const float *)(a + m * nb01 + pc * 4);
                        lda = nb01 / 4;
                        if (m + MM_THIN_MR < je) pf = a + (m + MM_THIN_MR) * nb01 + pc * 4;
                    } else {
                        for (int i = 0; i < rows; i++)
                            mm_widen_row(a + (m + i) * nb01 + pc * nb00, type, nb00, kb,
                                         wide + i * kb);
                        a0 = wide;
                        lda = kb;
                        if (m + MM_THIN_MR < je && nb00 == 2)
                            pf = a + (m + MM_THIN_MR) * nb01 + pc * 2;
                    }
                    for (int64_t p = 0; p < nbk; p += MM_THIN_NR) {
                        const int cols = (int)(nbk - p < MM_THIN_NR ? nbk - p : MM_THIN_NR);
                        float * c = (float *)(cbase + (ic + p) * dst->nb[1]) + m;
                        mm_thin_micro(kb, a0, lda, bq + p * kb, c, ldc, pc > 0, rows, cols,
                                      p == 0 ? pf : NULL, nb01, nb00);
                    }
                }
            }
        }
    }
}

#endif
#endif
