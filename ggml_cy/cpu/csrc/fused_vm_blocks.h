/* The accumulator machine's block loop for one element type (fused_vm_body.h's macros) and
 * VM_RR accumulator vectors (8 or 4): included twice per type by fused_vm_body.h. No include
 * guard: that is the point.
 *
 * Why two sizes: a block reads VM_RR vectors of one operand before the next operand. With 8
 * vectors of 64 bytes (512 bytes a stream at a time) a*b + c*d - e, 1e7 float32 streamed,
 * ran at 0.65-0.90 of the hand-fused C loop on a 2-core Zen 4 VM and with 4 (256 bytes) at
 * 0.94-1.06 (1 and 2 threads, several runs), while on the 16-core Xeon host 8 was as fast or faster (2 threads, 1e7: 0.94
 * against 0.79) and in cache 8 wins on both (one dispatch per 8 vectors):
 * tools/diag_vm_block.py, bench/results/vmblock-*.json. */
#if VM_RR == 4
#define VM_EACH(X) X(0) X(1) X(2) X(3)
#else
#define VM_EACH(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#endif
#define VM_BLOCKS_FN VM_CAT(VM_CAT(vm_blocks, VM_RR), VM_SFX)

/* n_blocks whole blocks (VM_RR * VM_W elements each) from ptr[] on; ptr[s] of every MEM
 * slot (listed in mem[]) advances by one block after each; ptr[-1] is any valid pointer
 * (unary operations name slot -1 and read nothing). One switch per instruction and block:
 * threaded dispatch (an indirect jump per handler) measured slower here, and so did 12
 * accumulator vectors. */
__attribute__((optimize("fp-contract=off")))
static void VM_BLOCKS_FN(const vm_prog * p, char ** ptr, const int * mem, int n_mem,
                         int64_t n_blocks) {
#define VM_DECL(r) VM_VF x##r = {0};
    VM_EACH(VM_DECL)
#undef VM_DECL
    const vm_instr * ins = p->ins;
    const int n_instr = p->n_instr;
    int64_t blk;
    int k;
    for (blk = 0; blk < n_blocks; blk++) {
        for (k = 0; k < n_instr; k++) {
            VM_T * o = (VM_T *)ptr[ins[k].slot];
            switch (ins[k].code) {
            case VM_I_LOAD: VM_EACH(VM_DO_LOAD) break;
            case VM_I_STORE: VM_EACH(VM_DO_STORE) break;
            case VM_I_STREAM:
                if (((uintptr_t)o & (VM_VBYTES - 1u)) == 0) { VM_EACH(VM_DO_STREAM) }
                else { VM_EACH(VM_DO_STORE) }
                break;
            case VM_ADD: VM_EACH(VM_DO_ADD) break;
            case VM_SUB: VM_EACH(VM_DO_SUB) break;
            case VM_MUL: VM_EACH(VM_DO_MUL) break;
            case VM_DIV: VM_EACH(VM_DO_DIV) break;
            case VM_MAX: VM_EACH(VM_DO_MAX) break;
            case VM_MIN: VM_EACH(VM_DO_MIN) break;
            case VM_I_RADD: VM_EACH(VM_DO_RADD) break;
            case VM_I_RSUB: VM_EACH(VM_DO_RSUB) break;
            case VM_I_RMUL: VM_EACH(VM_DO_RMUL) break;
            case VM_I_RDIV: VM_EACH(VM_DO_RDIV) break;
            case VM_I_RMAX: VM_EACH(VM_DO_RMAX) break;
            case VM_I_RMIN: VM_EACH(VM_DO_RMIN) break;
            case VM_NEG: VM_EACH(VM_DO_NEG) break;
            case VM_ABS: VM_EACH(VM_DO_ABS) break;
            case VM_SQR: VM_EACH(VM_DO_SQR) break;
            default: break;
            }
        }
        for (k = 0; k < n_mem; k++) ptr[mem[k]] += VM_RR * VM_VBYTES;
    }
}

#undef VM_EACH
#undef VM_BLOCKS_FN
