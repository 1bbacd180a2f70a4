"""How many threads a light elementwise call gets (threads_for, issue 14): one thread below
PAR_MIN_ELEMS output elements, or below PAR_MIN_BYTES of output for 8-byte types (a light
op's cost is the bytes it moves, so float64 goes parallel at half the elements); then about
one thread per PAR_MIN/2 elements, up to the threads allowed. Heavy ops keep their own
threshold. The numbers are the ones tools/device/par_probe.py measured (see _kernels)."""
import numpy as np
import pytest

from ggml_cy.cpu import _kernels as K


def nth(op, dtype, n, allowed=16):
    return K._threads_for(op, np.empty(n, dtype), allowed)


@pytest.mark.parametrize("op", ["ADD", "MUL", "MAX", "CPY"])
def test_four_byte_and_smaller_types_go_parallel_from_32k_elements(op):
    for dt in (np.float32, np.float16, np.int32, np.int8):
        if not K.op_supported_py(op, dt, dt, None if op == "CPY" else dt):
            continue
        assert nth(op, dt, 32767) == 1, dt
        assert nth(op, dt, 32768) == 2, dt
        assert nth(op, dt, 65536) == 4, dt
        assert nth(op, dt, 1 << 20) == 16, dt


@pytest.mark.parametrize("op", ["ADD", "MUL", "MAX", "CPY"])
def test_eight_byte_types_go_parallel_at_half_the_elements(op):
    for dt in (np.float64, np.int64):
        if not K.op_supported_py(op, dt, dt, None if op == "CPY" else dt):
            continue
        assert nth(op, dt, 16383) == 1, dt
        assert nth(op, dt, 16384) == 2, dt
        assert nth(op, dt, 32768) == 4, dt
        assert nth(op, dt, 65536) == 8, dt


def test_threads_allowed_and_one_thread_caps():
    assert nth("ADD", np.float64, 1 << 20, allowed=3) == 3
    assert nth("ADD", np.float64, 1 << 20, allowed=1) == 1
    assert nth("ADD", np.float32, 10, allowed=16) == 1


def test_tuning_hook_still_lowers_every_threshold():
    """Tests set par_min=8 to run tiny inputs on several threads: the byte rule must not
    keep a float64 call on one thread then."""
    old = K._set_tuning(par_min=8, par_min_heavy=8)
    try:
        assert nth("ADD", np.float64, 64, allowed=4) == 4
        assert nth("ADD", np.float32, 64, allowed=4) == 4
    finally:
        K._set_tuning(*old)


def test_eager_results_match_numpy_across_the_new_thresholds():
    """The sizes around each threshold, with the default thread count: same bits as numpy."""
    rng = np.random.default_rng(3)
    for dt in (np.float64, np.float32, np.float16):
        for n in (16383, 16384, 16385, 32767, 32768, 32769, 49152):
            a = rng.standard_normal(n).astype(dt)
            b = rng.standard_normal(n).astype(dt)
            for op in ("add", "multiply", "maximum"):
                got = getattr(__import__("ggml_cy"), op)(a, b, n_threads=2)
                want = getattr(np, op)(a, b)
                assert got.tobytes() == want.tobytes(), (dt, n, op)
