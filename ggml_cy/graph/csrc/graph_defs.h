/* ggml_cy's compute graph (ggml: struct ggml_cgraph), stored as one GGML_OBJECT_TYPE_GRAPH
 * object in a context's arena:
 *
 *   [ggml_cgraph header][nodes: size ptrs][leafs: size ptrs][hash keys: hash_size ptrs]
 *
 * The visited set is open addressing on tensor pointers (linear probing; NULL = empty
 * slot), sized to a prime >= 2*size so that probes stay short. */
#ifndef GGML_CY_GRAPH_DEFS_H
#define GGML_CY_GRAPH_DEFS_H
#include <stddef.h>
#include <stdint.h>
#include "core_defs.h"

typedef struct ggml_cgraph {
    int size;                  /* capacity of nodes[] and of leafs[] */
    int n_nodes;               /* ops, in dependency order */
    int n_leafs;               /* inputs (op NONE), in visit order */
    int n_auto_named;          /* counter for node_N / leaf_N names */
    ggml_tensor ** nodes;
    ggml_tensor ** leafs;
    size_t hash_size;          /* slots in the visited set */
    ggml_tensor ** hash_keys;  /* visited tensors; NULL marks a free slot */
} ggml_cgraph;

#endif
