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
from _oracle import (LARGE_N, SIZE, assert_bitwise, assert_ulp, numpy_free_choices,
                     random_values)

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


def _serial(op, args):
    """ggml_cy's answer with nothing else running (to tell concurrency bugs from others)."""
    try:
        with np.errstate(all="ignore"):
            return np.array(_cy(op)(*args, n_threads=2), copy=True)
    except Exception as e:  # noqa: BLE001
        return e


def _worker(jobs, barrier, errors):
    barrier.wait()  # everyone starts together, so calls overlap
    for seed, (op, args, expected, exact), serial in jobs:
        got = None
        try:
            with np.errstate(all="ignore"):  # (warnings.catch_warnings is not thread-safe)
                got = _cy(op)(*args, n_threads=2)
            if exact:
                free = (numpy_free_choices(op, list(zip("ab", args)), expected.shape)
                        if op != "astype" else None)
                assert_bitwise(got, expected, what=f"{op} seed={seed}", free=free)
            else:
                assert_ulp(got, expected, 2 if expected.dtype != np.float16 else 1,
                           what=f"{op} seed={seed}")
        except Exception as e:  # noqa: BLE001 - collected and reported by the main thread
            same = (isinstance(serial, np.ndarray) and got is not None
                    and np.asarray(got).dtype == serial.dtype
                    and np.array_equal(np.asarray(got).view(np.uint8), serial.view(np.uint8)))
            errors.append(f"seed {seed} ({op}): {type(e).__name__}: {str(e).splitlines()[0]}"
                          + (" [the same without concurrency: not a threading bug]"
                             if same else " [differs from the serial result: THREADING]"))


@pytest.mark.parametrize("round_", range(2), ids=["round0", "round1"])
def test_many_python_threads_each_result_checked(round_):
    barrier = threading.Barrier(N_PY_THREADS)
    errors = []
    work = []
    for i in range(N_PY_THREADS):
        jobs = []
        for k in range(CALLS_PER_THREAD):
            seed = (round_ * 100 + i) * 1000 + k
            job = _job(seed)
            jobs.append((seed, job, _serial(job[0], job[1])))
        work.append(jobs)
    threads = [threading.Thread(target=_worker, args=(work[i], barrier, errors))
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


@pytest.mark.parametrize("n_threads", [4, 8, 64], ids=["nth4", "nth8", "nth64"])
def test_more_threads_than_cores(n_threads):
    """More OpenMP threads than cores (and than rows for small shapes): still exact."""
    rng = np.random.default_rng(n_threads)
    for shape in [(3,), (5, 7), (LARGE_N,), (449, 447)]:
        a = random_values(np.float32, int(np.prod(shape)), rng).reshape(shape)
        b = random_values(np.float32, int(np.prod(shape)), rng).reshape(shape)
        with np.errstate(all="ignore"):
            assert_bitwise(_cy("add")(a, b, n_threads=n_threads), a + b,
                           what=f"add{shape} nth{n_threads}")
            assert_bitwise(_cy("add")(a.T, b.T, n_threads=n_threads), a.T + b.T,
                           what=f"add{shape}.T nth{n_threads}")


def test_python_threads_with_different_thread_counts():
    """Calls with n_threads 1, 2, 3 and 5 at the same time, each exact."""
    rng = np.random.default_rng(4)
    a = random_values(np.float64, LARGE_N, rng)
    b = random_values(np.float64, LARGE_N, rng)
    with np.errstate(all="ignore"):
        expected = np.multiply(a, b)
    barrier = threading.Barrier(4)
    errors = []

    def work(nt):
        barrier.wait()
        for _ in range(10):
            with np.errstate(all="ignore"):
                r = _cy("multiply")(a, b, n_threads=nt)
            try:
                assert_bitwise(r, expected, what=f"nth{nt}")
            except AssertionError as e:
                errors.append(str(e).splitlines()[0])

    ts = [threading.Thread(target=work, args=(nt,)) for nt in (1, 2, 3, 5)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not errors, errors[:5]
