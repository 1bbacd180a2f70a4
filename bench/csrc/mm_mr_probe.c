/* Developer probe (not shipped): does a taller f32 micro-kernel tile help? mul_mat.h's
 * AVX-512 kernel is 8 x 32 (16 zmm accumulators: per k two loads of the 32-wide panel from
 * L2 and eight broadcasts); a 12 x 32 or 14 x 32 tile (24 / 28 accumulators) needs a third
 * less L2 traffic per flop. Same loop order as mm_task (M blocks of NC, K blocks of KC, the
 * a block packed once per (NC, KC), the b block per MC, tiles over MR x NR), a simplified
 * packing (scalar loops, the same for every MR), shapes whose N divides by 8, 12 and 14.
 *   gcc -O3 -march=x86-64-v4 -fopenmp -DMR=12 bench/csrc/mm_mr_probe.c -o /tmp/mr12
 *   /tmp/mr12 THREADS M N K      (N a multiple of MR and of MC = 168's split per thread)
 * 2-core VM, 2026-11-27: 1024 x 1176 x 1024 at one thread 157-159 GFLOP/s for MR = 8,
 * 150-156 for 12 and 153-155 for 14 (three rounds); at two threads 298 / 299 / 296. */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <omp.h>
#ifndef MR
#define MR 8
#endif
#define NR 32
#define KC 256
#define NC 512
#define MC 168
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static inline void micro(int64_t kb,const float*bp,const float*ap,float*c,int64_t ldc,int acc){
  __m512 c0[MR],c1[MR];
  for(int i=0;i<MR;i++){c0[i]=_mm512_setzero_ps();c1[i]=_mm512_setzero_ps();}
  for(int64_t k=0;k<kb;k++){
    const __m512 a0=_mm512_load_ps(ap+k*NR),a1=_mm512_load_ps(ap+k*NR+16);
    const float*bk=bp+k*MR;
#pragma GCC unroll 16
    for(int i=0;i<MR;i++){__m512 b=_mm512_set1_ps(bk[i]);c0[i]=_mm512_fmadd_ps(b,a0,c0[i]);c1[i]=_mm512_fmadd_ps(b,a1,c1[i]);}
  }
#pragma GCC unroll 16
  for(int i=0;i<MR;i++){float*row=c+i*ldc;__m512 v0=c0[i],v1=c1[i];
    if(acc){v0=_mm512_add_ps(_mm512_loadu_ps(row),v0);v1=_mm512_add_ps(_mm512_loadu_ps(row+16),v1);}
    _mm512_storeu_ps(row,v0);_mm512_storeu_ps(row+16,v1);}
}
/* dst[n][m] = sum_k a[m][k] b[n][k]; M,N multiples of NR/MR for simplicity */
static void gemm(const float*a,const float*b,float*c,int64_t M,int64_t N,int64_t K,int64_t n_lo,int64_t n_hi,float*ap,float*bp){
  for(int64_t jc=0;jc<M;jc+=NC){int64_t mb=M-jc<NC?M-jc:NC;
    for(int64_t pc=0;pc<K;pc+=KC){int64_t kb=K-pc<KC?K-pc:KC;
      for(int64_t p=0;p<mb;p+=NR) for(int64_t k=0;k<kb;k++) for(int j=0;j<NR;j++) ap[p*kb+k*NR+j]=a[(jc+p+j)*K+pc+k];
      for(int64_t ic=n_lo;ic<n_hi;ic+=MC){int64_t nbk=n_hi-ic<MC?n_hi-ic:MC;
        for(int64_t p=0;p<nbk;p+=MR) for(int64_t k=0;k<kb;k++) for(int j=0;j<MR;j++) bp[p*kb+k*MR+j]=(p+j<nbk)?b[(ic+p+j)*K+pc+k]:0;
        for(int64_t ir=0;ir+MR<=nbk;ir+=MR) for(int64_t jr=0;jr<mb;jr+=NR)
          micro(kb,bp+ir*kb,ap+jr*kb,c+(ic+ir)*M+jc+jr,M,pc>0);
      }}}
}
int main(int argc,char**argv){
  int nt=atoi(argv[1]); int64_t M=atol(argv[2]),N=atol(argv[3]),K=atol(argv[4]);
  float*a=aligned_alloc(64,M*K*4),*b=aligned_alloc(64,N*K*4),*c=aligned_alloc(64,M*N*4);
  for(int64_t i=0;i<M*K;i++)a[i]=(i%7)*0.1f; for(int64_t i=0;i<N*K;i++)b[i]=(i%5)*0.2f;
  double ts[15];
  for(int r=0;r<15;r++){double t=now();
#pragma omp parallel num_threads(nt)
    {int th=omp_get_thread_num(); int64_t per=((N/nt)+MR-1)/MR*MR; int64_t lo=th*per,hi=lo+per<N?lo+per:N;
     static __thread float*ap=0,*bp=0; if(!ap){ap=aligned_alloc(64,NC*KC*4);bp=aligned_alloc(64,(MC+MR)*KC*4);}
     gemm(a,b,c,M,N,K,lo,hi,ap,bp);}
    ts[r]=now()-t;}
  double best=1e9; for(int r=0;r<15;r++) if(ts[r]<best)best=ts[r];
  printf("MR=%d %ldx%ldx%ld threads=%d best %.3f ms = %.1f GF/s\n",MR,M,N,K,nt,best*1e3,2.0*M*N*K/best*1e-9);
}
