# Whether a float mul_mat node on nt threads runs through the job's task counters
# (csrc/mul_mat.h, mm_compute_dealt) instead of ggml's plain static split: from 9 threads on
# (_kernels.mm_deals: tasks dealt), and on 2..4 threads where csrc/mul_mat_ndeal.h takes the
# product (each call the static split, timed, or -- while that split has been seen to lag --
# tasks dealt with b whole in each thread's scratch: mm_work_floats_for), and on 2 threads
# and more for bf16 weights on the AMX tiles (mm_amx_takes). Included by the
# modules that run mul_mat (_compute, _mul_mat) after their `cdef extern from "mul_mat.h"`;
# each of them keeps its own running lag (the functions below act on this module's).
cdef extern from "mul_mat.h" nogil:
    int mm_ndeal_set(int mode, int lag)
    int mm_ndeal_lag_now()
    int mm_ndeal_on_now()
    int64_t mm_gv_llc      # the f32 mat-vec's prefetch rule (mm_gv_prefetch_for)
    int mm_amx_takes(const ggml_tensor * dst)

from ggml_cy.cpu._kernels cimport llc_bytes

# The last-level cache _kernels measured at its import, for this module's copy of the rule.
mm_gv_llc = llc_bytes()


def _gv_llc():
    """Tests: the cache size this module's f32 mat-vec compares a matrix with (0: unknown,
    rows prefetched)."""
    return mm_gv_llc


cdef inline bint mm_dealt(const ggml_tensor * node, int nt) noexcept nogil:
    return mm_deals(nt) or (mm_deals_few(nt) and (mm_ndeal_takes(node, nt) != 0
                                                  or mm_amx_takes(node) != 0))


def _set_ndeal(int mode, int lag=-1):
    """Tests and probes: how this module's 2..4-thread float products (csrc/mul_mat_ndeal.h)
    choose, -1 by the static split's measured lag (the default), 0 always the split, 1 always
    dealt; lag (0..1000 permille, -1 to leave it) sets the running mean and turns dealing
    off. Returns the previous mode. The bits are the same every way."""
    if mode not in (-1, 0, 1):
        raise ValueError(f"_set_ndeal: mode must be -1, 0 or 1, got {mode}")
    if lag < -1 or lag > 1000:
        raise ValueError(f"_set_ndeal: lag must be -1 or 0..1000 permille, got {lag}")
    return mm_ndeal_set(mode, lag)


def _ndeal_state():
    """(running mean of the static split's lag in permille, dealing on) of this module."""
    return mm_ndeal_lag_now(), bool(mm_ndeal_on_now())
