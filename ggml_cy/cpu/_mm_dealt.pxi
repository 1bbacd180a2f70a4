# Whether a float mul_mat node on nt threads runs with its tasks dealt (csrc/mul_mat.h,
# mm_compute_dealt, on the job's task counters) instead of ggml's static split: from 9
# threads on (_kernels.mm_deals), and on 2..4 threads where csrc/mul_mat_ndeal.h takes the
# product (one operand whole in each thread's scratch: mm_work_floats_for). Included by the
# modules that run mul_mat (_compute, _mul_mat) after their `cdef extern from "mul_mat.h"`.
cdef inline bint mm_dealt(const ggml_tensor * node, int nt) noexcept nogil:
    return mm_deals(nt) or (mm_deals_few(nt) and mm_ndeal_takes(node, nt) != 0)
