"""Many Python threads calling ggml_cy's ops at once (each with n_threads=2, so OpenMP
regions run inside several Python threads), every result checked against numpy.

The GIL is released around every kernel, so these calls really overlap; a shared buffer,
a global thread count or floating-point flags leaking between calls would show up here as
a wrong value or a wrong warning.
"""
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import ggml_cy
from _oracle import LARGE_N, SIZE, assert_bitwise, assert_ulp, random_values

N_PY_THREADS = 8
CALLS_PER_THREAD = 24 if SIZE == "full" else 8

JOBS = [  # (op, dtypes, exact)
    ("add", [np.float32, np.float64, np.float16, np.int32, np.int8], True),
    ("subtract", [np.float32, np.int64, np.uint8], True),
    ("multiply", [np.float32, np.float16, np.int16], True),
    ("divide", [np.float32, np.float64], True),
    ("maximum", [np.float32, np.float16, np.int32], True),
    ("floor_divide", [np.float64, np.int32], True),
    ("remainder", [np.float32, np.int8], True),
    ("greater", [np.float32, np.int64], True),
    ("logical_and", [np.float32, np.bool_], True),
    ("exp", [np.float32, np.float64], False),
    ("tanh", [np.float32, np.float16], False),
    ("sqrt", [np.float64], False),
    ("astype", [np.float32, np.float16, np.int32], True),
]


def _cy(name):
    fn = getattr(ggml_cy, name, None)
    if fn is None:
        import ggml_cy.ufuncs as uf
        fn = getattr(uf, name)
    return fn


def _job(seed):
    """One random call, its numpy answer computed beforehand (in this thread)."""
    rng = np.random.default_rng(seed)
    op, dts, exact = JOBS[seed % len(JOBS)]
    dt = np.dtype(dts[rng.integers(len(dts))])
    n = int(rng.choice([1, 17, 1000, 40_001, LARGE_N]))
    layout = rng.choice(["contiguous", "strided", "broadcast"])
    a = random_values(dt, n, rng)
    b = random_values(dt, n, rng)
    if layout == "strided":
        a = np.repeat(a, 2)[::-2]
    elif layout == "broadcast" and n > 1:
        b = b[:1]
    unary = op in ("exp", "tanh", "sqrt")
    if True:
        with np.errstate(all="ignore"):
            if op == "astype":
                target = np.float16 if dt != np.float16 else np.float32
                if dt.kind in "iu":
                    target = np.float64
                expected = a.astype(target)
                args = (a, target)
            elif unary:
                expected = getattr(np, op)(a)
                args = (a,)
            else:
                expected = getattr(np, op)(a, b)
                args = (a, b)
    return op, args, expected, exact


def _worker(start_seed, barrier, errors):
    barrier.wait()  # everyone starts together, so calls overlap
    for k in range(CALLS_PER_THREAD):
        seed = start_seed * 1000 + k
        op, args, expected, exact = _job(seed)
        try:
            with np.errstate(all="ignore"):  # (warnings.catch_warnings is not thread-safe)
                got = _cy(op)(*args, n_threads=2)
            if exact:
                assert_bitwise(got, expected, what=f"{op} seed={seed}", nan_payload=True)
            else:
                assert_ulp(got, expected, 2 if expected.dtype != np.float16 else 1,
                           what=f"{op} seed={seed}")
        except Exception as e:  # noqa: BLE001 - collected and reported by the main thread
            errors.append(f"thread {start_seed} call {k} ({op}): {type(e).__name__}: "
                          f"{str(e).splitlines()[0]}")


@pytest.mark.parametrize("round_", range(2), ids=["round0", "round1"])
def test_many_python_threads_each_result_checked(round_):
    barrier = threading.Barrier(N_PY_THREADS)
    errors = []
    threads = [threading.Thread(target=_worker, args=(round_ * 100 + i, barrier, errors))
               for i in range(N_PY_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a worker thread hung"
    assert not errors, "\n".join(errors[:20])


def test_threads_share_inputs_and_write_distinct_outputs():
    """One big read-only input, each thread writing its own out= slice of a shared buffer."""
    rng = np.random.default_rng(9)
    a = random_values(np.float32, LARGE_N, rng)
    a.setflags(write=False)
    b = random_values(np.float32, LARGE_N, rng)
    out = np.zeros((N_PY_THREADS, LARGE_N), np.float32)
    ops = ["add", "multiply", "maximum", "subtract", "fmin", "divide", "minimum", "fmax"]

    def call(i):
        with np.errstate(all="ignore"):
            _cy(ops[i])(a, b, out=out[i], n_threads=2)

    with ThreadPoolExecutor(N_PY_THREADS) as ex:
        list(ex.map(call, range(N_PY_THREADS)))
    with np.errstate(all="ignore"):
        for i, op in enumerate(ops):
            assert_bitwise(out[i], getattr(np, op)(a, b), what=f"{op} row {i}")


def test_floating_point_errors_stay_with_their_call():
    """Floating-point flags are per call: a thread dividing by zero must not make a clean
    call in another thread report, and its own report must not be lost. (np.errstate is
    per thread, the warnings module is not: errors are raised rather than warned here.)"""
    clean = np.linspace(1, 2, LARGE_N, dtype=np.float64)
    zero = np.zeros(LARGE_N)
    results = {}
    barrier = threading.Barrier(2)

    def run(name, a, b):
        barrier.wait()
        raised = []
        for _ in range(20):
            with np.errstate(all="raise"):
                try:
                    _cy("divide")(a, b, n_threads=2)
                    raised.append(None)
                except FloatingPointError as e:
                    raised.append(str(e))
        results[name] = set(raised)

    t1 = threading.Thread(target=run, args=("clean", clean, clean))
    t2 = threading.Thread(target=run, args=("dirty", clean, zero))
    t1.start(), t2.start()
    t1.join(120), t2.join(120)
    assert results.get("dirty") == {"divide by zero encountered in divide"}, results
    assert results.get("clean") == {None}, results
