# The compute graph (ggml: struct ggml_cgraph) in a context's arena, and the C part of
# the op builders. The struct itself is in csrc/graph_defs.h:
#
#   GGML_OBJECT_TYPE_GRAPH payload:
#   [ggml_cgraph][nodes: size ptrs][leafs: size ptrs][visited hash keys: hash_size ptrs]
from ggml_cy.core._core cimport Context, ggml_tensor
from ggml_cy.cpu._compute cimport Plan

cdef extern from "graph_defs.h" nogil:
    ctypedef struct ggml_cgraph:
        int size                  # capacity of nodes[] and of leafs[]
        int n_nodes               # ops, in dependency order
        int n_leafs               # inputs (op NONE), in visit order
        int n_auto_named
        ggml_tensor ** nodes
        ggml_tensor ** leafs
        size_t hash_size          # slots of the visited set (a prime >= 2*size+1)
        ggml_tensor ** hash_keys  # NULL = free slot

cdef class Graph:
    cdef ggml_cgraph * g
    cdef Context ctx                  # the arena holding the graph (kept alive)
    cdef unsigned long long generation
    cdef list _roots                  # tensors passed to build_forward_expand (kept alive)
    cdef ggml_cgraph * live(self) except NULL
    cdef str _label(self, ggml_tensor * t)
    cdef object _wrap(self, ggml_tensor * t)
    cdef list _contexts(self)
    cdef unsigned char * pinned_nodes(self, ggml_cgraph * g) except NULL
    cdef int _check_plan(self, Plan plan) except -1
    cdef int _run(self, Plan plan, char * work) except -1
