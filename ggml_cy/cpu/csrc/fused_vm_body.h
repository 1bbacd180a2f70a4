/* The accumulator machine of fused_vm.h for one element type: included once per type
 * with VM_SFX (name suffix), VM_T (element), VM_VF/VM_VI (float and int vectors of
 * VM_VBYTES bytes), VM_W (lanes), VM_ABSMASK (all bits but the sign) and VM_STREAM (non-temporal
 * vector store) defined. No include guard: that is the point. */
#define VM_CAT2(a, b) a##_##b
#define VM_CAT(a, b) VM_CAT2(a, b)
#define VM_FN(name) VM_CAT(name, VM_SFX)

/* the accumulator registers are x0..x7, or x0..x3 in 4-vector runs (VM_EACH, defined by
 * fused_vm_blocks.h); VM_LDV(r): operand vector r of slot pointer o */
#define VM_LDV(r) (*(const VM_VF *)(o + (r) * VM_W))
#define VM_SELV(m, x, y) ((VM_VF)(((VM_VI)(m) & (VM_VI)(x)) | (~(VM_VI)(m) & (VM_VI)(y))))
/* kern_max / kern_min lane-wise: the first operand when it wins or is NaN */
#define VM_MAXV(x, y) VM_SELV(((x) > (y)) | ((x) != (x)), x, y)
#define VM_MINV(x, y) VM_SELV(((x) < (y)) | ((x) != (x)), x, y)

#define VM_DO_LOAD(r) x##r = VM_LDV(r);
#define VM_DO_STORE(r) *(VM_VF *)(o + (r) * VM_W) = x##r;
#define VM_DO_STREAM(r) VM_STREAM(o + (r) * VM_W, x##r);
#define VM_DO_ADD(r) x##r = x##r + VM_LDV(r);
#define VM_DO_SUB(r) x##r = x##r - VM_LDV(r);
#define VM_DO_MUL(r) x##r = x##r * VM_LDV(r);
#define VM_DO_DIV(r) x##r = x##r / VM_LDV(r);
#define VM_DO_MAX(r) { VM_VF y = VM_LDV(r); x##r = VM_MAXV(x##r, y); }
#define VM_DO_MIN(r) { VM_VF y = VM_LDV(r); x##r = VM_MINV(x##r, y); }
#define VM_DO_RADD(r) x##r = VM_LDV(r) + x##r;
#define VM_DO_RSUB(r) x##r = VM_LDV(r) - x##r;
#define VM_DO_RMUL(r) x##r = VM_LDV(r) * x##r;
#define VM_DO_RDIV(r) x##r = VM_LDV(r) / x##r;
#define VM_DO_RMAX(r) { VM_VF y = VM_LDV(r); x##r = VM_MAXV(y, x##r); }
#define VM_DO_RMIN(r) { VM_VF y = VM_LDV(r); x##r = VM_MINV(y, x##r); }
#define VM_DO_NEG(r) x##r = -x##r;
#define VM_DO_ABS(r) x##r = (VM_VF)((VM_VI)x##r & VM_ABSMASK);
#define VM_DO_SQR(r) x##r = x##r * x##r;

/* vm_blocks_8 and vm_blocks_4: 8 or 4 accumulator vectors */
#define VM_RR 8
#include "fused_vm_blocks.h"
#undef VM_RR
#define VM_RR 4
#include "fused_vm_blocks.h"
#undef VM_RR

static inline void VM_FN(vm_blocks)(const vm_prog * p, char ** ptr, const int * mem,
                                    int n_mem, int64_t n_blocks, int r) {
    if (r == 4) VM_CAT(VM_CAT(vm_blocks, 4), VM_SFX)(p, ptr, mem, n_mem, n_blocks);
    else VM_CAT(VM_CAT(vm_blocks, 8), VM_SFX)(p, ptr, mem, n_mem, n_blocks);
}

/* m (< one block of r vectors) elements through the vector machine: the inputs' elements
 * are copied into staging tiles padded with ones (harmless operands: no NaN, no denormal),
 * one block runs there, and the outputs' m elements are copied back. Output staging tiles sit 8
 * bytes past a 64-byte boundary, so STREAM stores plainly there (the copy-out reads
 * them back at once). Heads before a streamed output's alignment and block tails. */
static void VM_FN(vm_partial)(const vm_prog * p, char ** ptr, const int * mem, int n_mem,
                              int64_t m, char * stage, int r) {
    char * real[VM_MAX_SLOTS];
    int k;
    int64_t e;
    for (k = 0; k < n_mem; k++) {
        const int s = mem[k];
        VM_T * t = (VM_T *)(stage + (size_t)k * VM_STAGE_BYTES);
        real[k] = ptr[s];
        if (s < p->n_nodes) {
            t = (VM_T *)((char *)t + 8);
        } else {
            memcpy(t, real[k], (size_t)m * sizeof(VM_T));
            for (e = m; e < r * VM_W; e++) t[e] = (VM_T)1;
        }
        ptr[s] = (char *)t;
    }
    VM_FN(vm_blocks)(p, ptr, mem, 0, 1, r);
    for (k = 0; k < n_mem; k++) {
        const int s = mem[k];
        if (s < p->n_nodes)
            memcpy(real[k], ptr[s], (size_t)m * sizeof(VM_T));
        ptr[s] = real[k] + m * (int64_t)sizeof(VM_T);
    }
}

static void VM_FN(vm_run_block)(const vm_prog * p, char * const * base, int64_t n,
                                char * work, int r) {
    char * ptrs[VM_MAX_SLOTS + 1];
    char ** ptr = ptrs + 1;      /* ptr[-1]: what unary operations "read" */
    int mem[VM_MAX_SLOTS];
    int n_mem = 0, s, k;
    char * stage = work + (size_t)p->n_tiles * VM_BLOCK_BYTES;
    ptrs[0] = work;
    for (s = 0; s < p->n_slots; s++) {
        char * tile = work + (size_t)(p->tile_of[s] < 0 ? 0 : p->tile_of[s]) * VM_BLOCK_BYTES;
        if (p->kind[s] == VM_K_MEM) {
            ptr[s] = base[s];
            mem[n_mem++] = s;
        } else {
            ptr[s] = tile;
            if (p->kind[s] == VM_K_CONST) {
                VM_T v;
                memcpy(&v, base[s], sizeof(VM_T));     /* any alignment */
                for (k = 0; k < VM_R * VM_W; k++) ((VM_T *)tile)[k] = v;
            }
        }
    }
    /* the first streamed output's 32-byte boundary: elements before it are a head */
    int64_t head = 0;
    if (p->has_stream) {
        for (k = 0; k < p->n_instr; k++) {
            if (p->ins[k].code == VM_I_STREAM) {
                uintptr_t addr = (uintptr_t)base[p->ins[k].slot];
                if (addr % sizeof(VM_T) == 0)
                    head = (int64_t)(((VM_VBYTES - (addr & (VM_VBYTES - 1u)))
                                      & (VM_VBYTES - 1u)) / sizeof(VM_T));
                break;
            }
        }
        if (head > n) head = n;
    }
    if (head)
        VM_FN(vm_partial)(p, ptr, mem, n_mem, head, stage, r);
    const int64_t per = (int64_t)r * VM_W;
    const int64_t blocks = (n - head) / per;
    VM_FN(vm_blocks)(p, ptr, mem, n_mem, blocks, r);
    if (n - head - blocks * per)
        VM_FN(vm_partial)(p, ptr, mem, n_mem, n - head - blocks * per, stage, r);
}

#undef VM_CAT2
#undef VM_CAT
#undef VM_FN
#undef VM_LDV
#undef VM_SELV
#undef VM_MAXV
#undef VM_MINV
#undef VM_DO_LOAD
#undef VM_DO_STORE
#undef VM_DO_STREAM
#undef VM_DO_ADD
#undef VM_DO_SUB
#undef VM_DO_MUL
#undef VM_DO_DIV
#undef VM_DO_MAX
#undef VM_DO_MIN
#undef VM_DO_RADD
#undef VM_DO_RSUB
#undef VM_DO_RMUL
#undef VM_DO_RDIV
#undef VM_DO_RMAX
#undef VM_DO_RMIN
#undef VM_DO_NEG
#undef VM_DO_ABS
#undef VM_DO_SQR
