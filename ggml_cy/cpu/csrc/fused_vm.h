/* The fused executor's accumulator machine: a group of plain float arithmetic (+ - * /,
 * maximum, minimum, negative, abs, square on f32 or f64) is compiled at plan time into a
 * short program for one accumulator, then run over a block VM_R vectors at a time.
 *
 * Why an accumulator held in registers: running a group node by node over chunks in L1
 * (the previous design) costs a load, a load and a store per node and vector, plus the
 * per-chunk bookkeeping; for a 16-node chain that was more than the memory traffic. Here
 * the accumulator is VM_R vector registers (64 floats or 32 doubles; 128 or 64 on AVX-512
 * builds, whose 64-byte vectors load and stream whole cache lines: a*b + c*d - e, 1e7
 * float32 streamed, went from 0.81-0.85 to 0.92-0.94 of a hand-fused C loop with streaming
 * stores at 1 and 2 threads on a 2-core Emerald Rapids VM): a node that
 * continues from the previous node's result costs one load of its other operand and one
 * operation per vector, and one dispatch per VM_R vectors. A chain a*b + c - d ... runs
 * with its running value never leaving the registers; a tree (a*b + c*d) parks the result
 * of one branch in a small temp tile (L1) while the accumulator computes the other.
 *
 * Program: LOAD s (acc = slot s), an operation with slot s as second operand (acc = acc
 * op s) or, reversed, as first operand (acc = s op acc), a unary operation, STORE s
 * (slot s = acc) and STREAM s (the same with non-temporal stores, for large outputs).
 * Slots are the group's nodes and external inputs: memory that advances with the element
 * index, a temp tile, or a one-value tile (a broadcast input).
 *
 * Exactness: every element goes through one IEEE operation per node, in the node's own
 * operand order, exactly as in the unfused kernels (kernels_elem.h): vector lanes do the
 * scalar operation, maximum/minimum pick the first operand when it wins or is NaN
 * (kern_max), results are rounded to the type between nodes (registers hold floats), and
 * nothing is contracted into FMAs (fp-contract is off for these functions). */
#ifndef GGML_CY_FUSED_VM_H
#define GGML_CY_FUSED_VM_H
#include <stdint.h>
#include <string.h>
#include "kernels_elem.h"
#if defined(__AVX__)
#include <immintrin.h>
#endif

/* Vectors in the accumulator: 8, or 4 for streamed outputs on CPUs whose memory system
 * wants shorter runs per stream (vm_run_block's r; _fused.stream_vectors says when). Tiles
 * and staging buffers are sized for 8; a 4-vector run uses the first half of each. */
#define VM_R 8
/* Vector width: 64 bytes on AVX-512 builds (one cache line per load and per streaming
 * store), 32 elsewhere. Streamed outputs are cut at this boundary (VM_VBYTES). */
#if defined(__AVX512F__) && !defined(VM_FORCE_32)
#define VM_VBYTES 64
#else
#define VM_VBYTES 32
#endif
#define VM_BLOCK_BYTES (VM_R * VM_VBYTES)   /* bytes per accumulator block (and tile) */
#define VM_STAGE_BYTES (VM_BLOCK_BYTES + 64)   /* a staging tile (vm_partial) */
#define VM_MAX_NODES 32        /* FUSE_MAX_NODES */
#define VM_MAX_SLOTS 64        /* FUSE_MAX_SLOTS */
#define VM_MAX_INSTR (3 * VM_MAX_NODES + 1)

/* Node operations (the group finder maps ggml ops onto these). */
enum { VM_NONE = -1, VM_ADD = 0, VM_SUB, VM_MUL, VM_DIV, VM_MAX, VM_MIN, VM_NEG, VM_ABS,
       VM_SQR };

/* Instruction codes: VM_ADD..VM_SQR as above (acc = acc op s, or op(acc)), then: */
enum { VM_I_RADD = 16, VM_I_RSUB, VM_I_RMUL, VM_I_RDIV, VM_I_RMAX, VM_I_RMIN,  /* s op acc */
       VM_I_LOAD = 32, VM_I_STORE, VM_I_STREAM,
       VM_I_END        /* end of the program: next block */ };

/* How a slot is reached. */
enum { VM_K_TEMP = 0,   /* a group intermediate: a temp tile (when it is parked at all) */
       VM_K_MEM = 1,    /* memory that advances with the element index (input or output) */
       VM_K_CONST = 2   /* one value for the whole block (an input broadcast along rows) */ };

typedef struct {
    int code;             /* VM_ADD.. / VM_I_* */
    int slot;             /* operand or destination slot (unused by unary operations) */
} vm_instr;

typedef struct {
    int type;             /* 0 f32, 1 f64 */
    int n_instr;
    int n_slots;
    int n_nodes;          /* slots 0..n_nodes-1 are the group's nodes */
    int n_tiles;          /* tiles in the work area (temps, then one-value tiles) */
    int n_mem;            /* MEM slots (each gets a staging tile after the tiles) */
    int has_stream;
    vm_instr ins[VM_MAX_INSTR];
    signed char kind[VM_MAX_SLOTS];
    int tile_of[VM_MAX_SLOTS];   /* TEMP and CONST slots: their tile, else -1 */
} vm_prog;

/* Bytes of work area a program needs (the caller aligns it to 64 bytes). */
static inline size_t vm_work_bytes(const vm_prog * p) {
    return (size_t)p->n_tiles * VM_BLOCK_BYTES + (size_t)p->n_mem * VM_STAGE_BYTES;
}

/* ---------------------------------------------------------------- compiling a group */
/* Nodes 0..n_nodes-1 are slots 0..n_nodes-1; node i computes op[i](src0[i], src1[i])
 * (src1 = -1 for unary ops) over slots. kind[] gives every slot's kind (nodes: TEMP for
 * intermediates nothing outside the group reads, MEM for nodes written to memory);
 * stream[i]: node i is written with non-temporal stores when possible. Fills p; returns
 * 0, or -1 when the program does not fit (the caller then runs the group otherwise). */
static int vm_compile(vm_prog * p, int type, int n_nodes, int n_slots, const int * op,
                      const int * src0, const int * src1, const signed char * kind,
                      const int * stream) {
    int last_reader[VM_MAX_SLOTS];
    unsigned char stored[VM_MAX_SLOTS];
    int i, j, s, n = 0, acc = -1;
    if (n_nodes > VM_MAX_NODES || n_slots > VM_MAX_SLOTS)
        return -1;
    memset(p, 0, sizeof(*p));
    p->type = type;
    p->n_slots = n_slots;
    p->n_nodes = n_nodes;
    for (s = 0; s < n_slots; s++) {
        p->kind[s] = kind[s];
        p->tile_of[s] = -1;
        last_reader[s] = -1;
        stored[s] = kind[s] != VM_K_TEMP;   /* memory and one-value slots are readable */
        p->n_mem += kind[s] == VM_K_MEM;
    }
    for (i = 0; i < n_nodes; i++) {
        if (src0[i] >= 0) last_reader[src0[i]] = i;
        if (src1[i] >= 0) last_reader[src1[i]] = i;
    }
    for (j = 0; j < n_nodes; j++) {
        int a = src0[j], b = src1[j], load = -1, code, operand = -1;
        if (a < 0 || op[j] < VM_ADD || op[j] > VM_SQR) return -1;
        if (b < 0) {                                   /* unary */
            if (acc != a) load = a;
            code = op[j];
        } else if (acc == a) {                         /* acc op b (b may be a itself) */
            code = op[j];
            operand = b;
        } else if (acc == b) {                         /* a op acc */
            code = VM_I_RADD + op[j];
            operand = a;
        } else {
            load = a;
            code = op[j];
            operand = b;
        }
        /* park the accumulator's node in its temp tile when anything reads it later than
         * now, or reads it now from its slot */
        if (acc >= 0 && !stored[acc] && (last_reader[acc] > j || operand == acc
                                          || (load >= 0 && last_reader[acc] >= j))) {
            if (n >= VM_MAX_INSTR) return -1;
            p->tile_of[acc] = p->n_tiles++;
            p->ins[n].code = VM_I_STORE; p->ins[n++].slot = acc;
            stored[acc] = 1;
        }
        if (load >= 0) {
            if (!stored[load] || n >= VM_MAX_INSTR) return -1;
            p->ins[n].code = VM_I_LOAD; p->ins[n++].slot = load;
        }
        if (operand >= 0 && !stored[operand]) return -1;
        if (n + 2 > VM_MAX_INSTR) return -1;
        p->ins[n].code = code; p->ins[n++].slot = operand;
        acc = j;
        if (kind[j] == VM_K_MEM) {
            /* large outputs stream unless the group reads them back from memory */
            int nt = stream[j] && last_reader[j] <= j + 1;
            p->ins[n].code = nt ? VM_I_STREAM : VM_I_STORE; p->ins[n++].slot = j;
            stored[j] = 1;
            p->has_stream |= nt;
        }
    }
    for (s = 0; s < n_slots; s++)
        if (kind[s] == VM_K_CONST) p->tile_of[s] = p->n_tiles++;
    if (n >= VM_MAX_INSTR) return -1;
    p->ins[n].code = VM_I_END; p->ins[n++].slot = -1;
    p->n_instr = n;
    return 0;
}

/* ---------------------------------------------------------------- running it */
/* GCC/Clang vector types: AVX2 on this project's builds, SSE or NEON pairs elsewhere;
 * aligned(1) lets them load and store at any byte address: numpy arrays need not be
 * aligned to their element size (an odd offset into a uint8 buffer), and a typed access
 * there is undefined behaviour (UBSan). The loads are the same unaligned vector loads
 * (vmovups) either way. */
typedef float vm_vf32 __attribute__((vector_size(VM_VBYTES), aligned(1)));
typedef int32_t vm_vi32 __attribute__((vector_size(VM_VBYTES), aligned(1)));
typedef double vm_vf64 __attribute__((vector_size(VM_VBYTES), aligned(1)));
typedef int64_t vm_vi64 __attribute__((vector_size(VM_VBYTES), aligned(1)));

#if VM_VBYTES == 64
#define VM_STREAM_f32(p, v) _mm512_stream_ps((float *)(p), (__m512)(v))
#define VM_STREAM_f64(p, v) _mm512_stream_pd((double *)(p), (__m512d)(v))
#elif defined(__AVX__)
#define VM_STREAM_f32(p, v) _mm256_stream_ps((float *)(p), (__m256)(v))
#define VM_STREAM_f64(p, v) _mm256_stream_pd((double *)(p), (__m256d)(v))
#else
#define VM_STREAM_f32(p, v) (*(vm_vf32 *)(p) = (v))
#define VM_STREAM_f64(p, v) (*(vm_vf64 *)(p) = (v))
#endif

/* The machine itself, once per type: fused_vm_body.h is a template over these macros. */
#define VM_SFX f32
#define VM_T float
#define VM_VF vm_vf32
#define VM_VI vm_vi32
#define VM_W (VM_VBYTES / 4)
#define VM_ABSMASK ((int32_t)0x7fffffff)
#define VM_STREAM VM_STREAM_f32
#include "fused_vm_body.h"
#undef VM_SFX
#undef VM_T
#undef VM_VF
#undef VM_VI
#undef VM_W
#undef VM_ABSMASK
#undef VM_STREAM

#define VM_SFX f64
#define VM_T double
#define VM_VF vm_vf64
#define VM_VI vm_vi64
#define VM_W (VM_VBYTES / 8)
#define VM_ABSMASK ((int64_t)0x7fffffffffffffffLL)
#define VM_STREAM VM_STREAM_f64
#include "fused_vm_body.h"
#undef VM_SFX
#undef VM_T
#undef VM_VF
#undef VM_VI
#undef VM_W
#undef VM_ABSMASK
#undef VM_STREAM

/* Runs the program over n elements of a block, r (4 or 8) vectors at a time. base[s]: for
 * MEM slots the block's first element, for CONST slots the value; work: n_tiles tiles,
 * 64-byte aligned. Streamed stores are left unfenced (the caller fences once per group). */
static void vm_run_block(const vm_prog * p, char * const * base, int64_t n, char * work,
                         int r) {
    if (p->type) vm_run_block_f64(p, base, n, work, r);
    else vm_run_block_f32(p, base, n, work, r);
}
#endif
