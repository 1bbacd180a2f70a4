"""ggml_cy.threads(n) blocks in several Python threads (issue 17): each block is an override
for the thread that runs it, so interleaved blocks never leave the process-wide count
changed (before: 8 threads x 200 blocks ended at 8, 8, 2, 6 instead of the initial 2)."""
import os
import random
import sys
import threading

import numpy as np
import pytest

import ggml_cy
from ggml_cy.cpu import _kernels


def test_interleaved_blocks_restore_initial_value():
    initial = ggml_cy.get_num_threads()
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    errors = []
    barrier = threading.Barrier(8)

    def worker(k):
        rng = random.Random(k)
        try:
            barrier.wait()
            for _ in range(200):
                n = rng.randint(1, 8)
                with ggml_cy.threads(n):
                    if ggml_cy.get_num_threads() != n:
                        errors.append(("inside", k, n, ggml_cy.get_num_threads()))
                    if rng.random() < 0.3:
                        with ggml_cy.threads(n % 3 + 1):
                            if ggml_cy.get_num_threads() != n % 3 + 1:
                                errors.append(("nested", k))
                    if ggml_cy.get_num_threads() != n:
                        errors.append(("after nested", k, n))
            if ggml_cy.get_num_threads() != initial:
                errors.append(("end of thread", k, ggml_cy.get_num_threads()))
        except BaseException as e:      # pragma: no cover - reported below
            errors.append(repr(e))

    try:
        ts = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    finally:
        sys.setswitchinterval(old_interval)
    assert not errors, errors[:5]
    assert ggml_cy.get_num_threads() == initial
    assert _kernels._get_num_threads() == initial
    assert _kernels._get_local_threads() == 0


def test_block_is_local_to_its_thread_and_used_by_calls():
    initial = ggml_cy.get_num_threads()
    seen = {}
    inside = threading.Event()
    release = threading.Event()

    def other():
        inside.wait()
        seen["other"] = ggml_cy.get_num_threads()
        release.set()

    t = threading.Thread(target=other)
    t.start()
    with ggml_cy.threads(3):
        inside.set()
        release.wait()
        # the C side reads the same override (evaluate's default comes from it too)
        a = np.arange(300_000, dtype=np.float32)
        assert np.array_equal(ggml_cy.add(a, a), a + a)
        assert ggml_cy.get_num_threads() == 3
    t.join()
    assert seen["other"] == initial
    assert ggml_cy.get_num_threads() == initial


def test_set_num_threads_is_the_global_default():
    old = ggml_cy.get_num_threads()
    try:
        with ggml_cy.threads(1):
            prev = ggml_cy.set_num_threads(4)
            assert prev == old
            assert ggml_cy.get_num_threads() == 1           # the block still wins here
        assert ggml_cy.get_num_threads() == 4
        got = []
        t = threading.Thread(target=lambda: got.append(ggml_cy.get_num_threads()))
        t.start()
        t.join()
        assert got == [4]
    finally:
        ggml_cy.set_num_threads(old)


def test_one_block_object_entered_from_two_threads():
    block = ggml_cy.threads(2)
    initial = ggml_cy.get_num_threads()
    errors = []

    def use():
        for _ in range(100):
            with block:
                if ggml_cy.get_num_threads() != 2:
                    errors.append("value")
        if ggml_cy.get_num_threads() != initial:
            errors.append("restore")

    ts = [threading.Thread(target=use) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert ggml_cy.get_num_threads() == initial


def test_pool_many_python_threads_bitwise():
    # 8 Python threads, each asking for 2 pool threads at once: every caller gets its own
    # team; results stay exact
    a = np.linspace(-5, 5, 400_000, dtype=np.float32)
    b = np.linspace(3, -1, 400_000, dtype=np.float32)
    want = a * b + a
    errors = []
    # earlier tests may have left up to 8 cached teams of any size; teams never shrink, and
    # each team this test adds or grows holds one worker (n_threads=2)
    before = _kernels._pool_cached_workers()

    def run():
        for _ in range(40):
            if not np.array_equal(ggml_cy.evaluate("a * b + a", a=a, b=b, n_threads=2), want):
                errors.append("evaluate")
            if not np.array_equal(ggml_cy.add(a, b, n_threads=2), a + b):
                errors.append("add")

    ts = [threading.Thread(target=run) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[:3]
    assert _kernels._pool_cached_workers() <= before + 8   # at most 8 teams stay cached


@pytest.mark.parametrize("value", ["0", "lots", "-5", "2000"])
def test_barrier_yield_setting(value, tmp_path):
    """GGML_CY_BARRIER_YIELD_US (graph barriers: yield after the pause spin before sleeping):
    any value, good or malformed, leaves imports and multi-threaded graphs correct."""
    import subprocess
    import sys
    code = (
        "import numpy as np, ggml_cy as gc\n"
        "ctx = gc.Context(1 << 24)\n"
        "x = ctx.tensor_from(np.arange(1 << 16, dtype=np.float32))\n"
        "y = x\n"
        "for _ in range(20): y = ctx.add(ctx.mul(y, x), x)\n"
        "g = ctx.new_graph(); g.build_forward_expand(y); g.compute(2)\n"
        "ref = np.arange(1 << 16, dtype=np.float32); r = ref.copy()\n"
        "for _ in range(20): r = r * ref + ref\n"
        "assert np.array_equal(y.numpy(), r)\n"
        "print('ok')\n")
    # the child imports the ggml_cy this test imported (in-place build or install), from a
    # directory where no source tree shadows it
    env = dict(os.environ, GGML_CY_BARRIER_YIELD_US=value,
               PYTHONPATH=os.path.dirname(os.path.dirname(ggml_cy.__file__)))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, cwd=str(tmp_path))
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_pool_sleep_wake_path_with_no_spin(tmp_path):
    """GGML_CY_SPINCOUNT=0: every idle worker goes straight to sleep (the futex wait on Linux),
    so every job and every graph barrier goes through the sleep/wake path. Several Python
    threads with random pauses (workers asleep at random moments), eager calls and
    multi-threaded graphs: no lost wake-up (the child finishes) and exact results."""
    import subprocess
    import sys
    code = (
        "import threading, time, numpy as np, ggml_cy as gc\n"
        "a = np.linspace(-3, 3, 300_000, dtype=np.float32); b = a[::-1].copy()\n"
        "want = a * b + a\n"
        "want_g = want.copy()\n"
        "for _ in range(8): want_g = (want_g + a) - a\n"
        "errors = []\n"
        "def run(seed):\n"
        "    rng = np.random.default_rng(seed)\n"
        "    ctx = gc.Context(1 << 24)\n"
        "    x = ctx.tensor_from(a); y = ctx.tensor_from(b)\n"
        "    z = ctx.add(ctx.mul(x, y), x)\n"
        "    for _ in range(8): z = ctx.sub(ctx.add(z, x), x)\n"
        "    g = ctx.new_graph(); g.build_forward_expand(z)\n"
        "    for i in range(150):\n"
        "        if not np.array_equal(gc.evaluate('a * b + a', a=a, b=b, n_threads=2), want):\n"
        "            errors.append('evaluate')\n"
        "        if i % 10 == 0:\n"
        "            g.compute(2)\n"
        "            if not np.array_equal(z.numpy(), want_g): errors.append('graph')\n"
        "        if rng.random() < 0.05: time.sleep(rng.random() * 1e-3)\n"
        "ts = [threading.Thread(target=run, args=(s,)) for s in range(4)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "assert not errors, errors[:3]\n"
        "print('ok')\n")
    env = dict(os.environ, GGML_CY_SPINCOUNT="0", GGML_CY_BARRIER_YIELD_US="0",
               PYTHONPATH=os.path.dirname(os.path.dirname(ggml_cy.__file__)))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=240, cwd=str(tmp_path))
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
