/* Runs the fused executor's accumulator machine (ggml_cy/cpu/csrc/fused_vm.h) outside the
 * package, for tools/diag_vm_block.py (developer tool, not shipped): one shared library per
 * vector width (-DVM_FORCE_32 for 32-byte vectors on AVX-512), each exporting the same
 * function, so that the machine's block sizes (r = 4 or 8 vectors) and both widths can be
 * timed in turns in one process, beside the bench's hand-fused C loop.
 *
 * Programs: 0 = a*b + c*d - e (the graph bench's fused case), 1 = the bench's 16-operation
 * chain over a..e. The output is streamed (non-temporal) when `stream` is set. Each thread
 * takes one contiguous share of the elements and runs it piece by piece (blk elements per
 * vm_run_block call, from the output's 64-byte boundary on), as _fused.run_program does. */
#include <stdint.h>
#include <stdlib.h>
#include <omp.h>
#if defined(__AVX__)
#include <immintrin.h>
#endif
#include "fused_vm.h"

/* the bench's CHAIN_OPS: (op, input) pairs after acc = a (inputs: 0 a .. 4 e) */
static const int chain_op[16] = {VM_MUL, VM_ADD, VM_SUB, VM_MUL, VM_ADD, VM_MUL, VM_SUB, VM_MUL,
                                 VM_ADD, VM_MUL, VM_SUB, VM_MUL, VM_ADD, VM_MUL, VM_SUB, VM_MUL};
static const int chain_in[16] = {1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1};

static int compile_prog(vm_prog * p, int prog, int stream) {
    int op[16], s0[16], s1[16], st[16];
    signed char kind[21];
    int n_nodes, j;
    if (prog == 0) {   /* nodes 0 a*b, 1 c*d, 2 n0 + n1, 3 n2 - e; inputs a..e at 4..8 */
        static const int o[4] = {VM_MUL, VM_MUL, VM_ADD, VM_SUB};
        static const int a0[4] = {4, 6, 0, 2}, a1[4] = {5, 7, 1, 8};
        n_nodes = 4;
        for (j = 0; j < 4; j++) { op[j] = o[j]; s0[j] = a0[j]; s1[j] = a1[j]; }
    } else {           /* nodes 0..15; inputs a..e at 16..20 */
        n_nodes = 16;
        for (j = 0; j < 16; j++) {
            op[j] = chain_op[j];
            s0[j] = j == 0 ? 16 : j - 1;
            s1[j] = 16 + chain_in[j];
        }
    }
    for (j = 0; j < n_nodes; j++) {
        kind[j] = j == n_nodes - 1 ? VM_K_MEM : VM_K_TEMP;
        st[j] = j == n_nodes - 1 && stream;
    }
    for (j = n_nodes; j < n_nodes + 5; j++) kind[j] = VM_K_MEM;
    return vm_compile(p, 0, n_nodes, n_nodes + 5, op, s0, s1, kind, st);
}

/* in[0..4] = a..e, out: n floats; r: accumulator vectors (4 or 8). Returns 0, or -1 when
 * the program does not compile. */
int vmb_run(int prog, float * const * in, float * out, int64_t n, int nth, int64_t blk,
            int stream, int r) {
    vm_prog p;
    if (compile_prog(&p, prog, stream) != 0) return -1;
    const int n_nodes = prog == 0 ? 4 : 16;
    #pragma omp parallel num_threads(nth)
    {
        const int ith = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t i0 = n * ith / nt, i1 = n * (ith + 1) / nt;
        char * work = aligned_alloc(64, (vm_work_bytes(&p) + 63) / 64 * 64 + 64);
        char * base[21];
        /* the first piece ends at the output's 64-byte boundary, as _fused.set_head cuts
         * rows, so only a thread's first and last piece have loose ends */
        int64_t head = (int64_t)(((64u - ((uintptr_t)(out + i0) & 63u)) & 63u) / 4);
        for (int64_t i = i0; i < i1;) {
            int64_t m = i == i0 && head ? head : blk;
            if (m > i1 - i) m = i1 - i;
            for (int s = 0; s < n_nodes + 5; s++) base[s] = 0;
            base[n_nodes - 1] = (char *)(out + i);
            for (int k = 0; k < 5; k++) base[n_nodes + k] = (char *)(in[k] + i);
            vm_run_block(&p, base, m, work, r);
            i += m;
        }
#if defined(__AVX__)
        _mm_sfence();
#endif
        free(work);
    }
    return 0;
}
