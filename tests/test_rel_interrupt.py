"""Ctrl-C during one long call (issue 17, item 2): SIGINT arriving while a long eager call or
graph compute runs raises KeyboardInterrupt within about a second (not at the end of the
call), and ggml_cy stays usable (correct results afterwards, on several threads).

Which calls check (README "Reliability"): eager elementwise functions with at least
2**23 output elements (between chunks of 2**21 elements, on the calling thread, every
50 ms); graph compute / evaluate between graph steps (every 50 ms); quantize between
chunks of 4096 blocks (every 50 ms); GGUF writes between 64 MiB pieces of a tensor."""
import textwrap

import pytest

from _child import run_child

TIMEOUT = 180

PRELUDE = textwrap.dedent("""
    import os, signal, sys, threading, time
    import numpy as np
    import ggml_cy

    # Python's own Ctrl-C handler: a process started in the background by a shell without
    # job control inherits SIGINT ignored (and Python then installs no handler), so every
    # signal below would be lost (2026-11-26: CI launched as `( bash .ci/run & )` failed
    # all of these tests that way)
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def interrupted_after(delay, fn, before_signal=None):
        '''Runs fn with a SIGINT sent `delay` s after the start (before_signal, if given, runs
        on the timer's thread just before it). Returns (finished, seconds from the signal to
        the KeyboardInterrupt, total seconds).'''
        finished = [False]
        sent = [None]

        def fire():
            if before_signal is not None:
                before_signal()
            sent[0] = time.perf_counter()
            os.kill(os.getpid(), signal.SIGINT)

        timer = threading.Timer(delay, fire)
        t0 = time.perf_counter()
        timer.start()
        try:
            fn()
            finished[0] = True
            time.sleep(5)       # the signal, if still on its way, lands here
        except KeyboardInterrupt:
            pass
        t1 = time.perf_counter()
        timer.join()
        return finished[0], t1 - (sent[0] or t1), t1 - t0

    def stops_early(delay, fn, full, tries=3):
        '''interrupted_after(delay, fn) up to `tries` times, until a run is interrupted and
        ends before `full` s (the uninterrupted time): a busy machine may delay the timer
        thread or slow one run (the check is about where the call stops, not about the
        neighbours). Returns the last run's (finished, latency, total).'''
        for attempt in range(tries):
            finished, latency, total = interrupted_after(delay, fn)
            print("full", full, "latency", latency, "total", total, "try", attempt)
            if not finished and total < full:
                break
        return finished, latency, total

    def timed(fn, repeats=3):
        '''The fastest of `repeats` runs: the first run of a call pays one-time costs (the
        thread pool's start, page faults of a fresh 800 MB result without transparent huge
        pages yet) and was seen to take 5x as long as the later ones; a signal timed from it
        then arrived after the interrupted call had ended.'''
        best = None
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            t = time.perf_counter() - t0
            best = t if best is None else min(best, t)
        return best
""")


def _run(body):
    return run_child(PRELUDE, body, TIMEOUT)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_ctrl_c_in_a_2e8_element_add(n_threads):
    out = _run(f"""
        # 2e8 elements into a fresh result (its pages are first touched by the kernel).
        # float64: a float32 add of 2e8 elements takes only 50-100 ms on a 2-core Zen 4 once
        # the pages come cheaply, about the 50 ms between signal checks; 8-byte elements
        # double that
        a = np.arange(20000, dtype=np.float64).reshape(20000, 1)
        b = np.arange(10000, dtype=np.float64)
        full = timed(lambda: ggml_cy.add(a, b, n_threads={n_threads}))
        delay = min(0.1, full / 5)
        finished, latency, total = stops_early(
            delay, lambda: ggml_cy.add(a, b, n_threads={n_threads}), full)
        assert not finished, "the call ran to its end"
        assert latency < 1.0, latency
        assert total < full, (total, full)
        # still usable, and correct
        out = ggml_cy.add(a, b, n_threads={n_threads})
        assert np.array_equal(out[::997], (a + b)[::997])
        del out
        x = np.linspace(-1, 1, 3_000_000, dtype=np.float32)
        assert np.array_equal(ggml_cy.multiply(x, x, n_threads=2), x * x)
        print("ok")
    """)
    assert "ok" in out


@pytest.mark.parametrize("n_threads", [1, 2])
def test_ctrl_c_in_a_long_call_on_the_general_path(n_threads):
    """The element-by-element fallback (two tilings that do not nest, reshaping copies whose
    shapes share no refinement) runs a long call in chunks too, with the same checks; its
    result is exact on one and on several threads."""
    out = _run(f"""
        from ggml_cy.cpu import _kernels as K
        a = np.arange(4, dtype=np.float32)
        b = np.arange(6, dtype=np.float32) * 10
        out = np.empty(12 * 2**22, np.float32)
        assert K._plan_info("ADD", out, a, b)["general"]
        full = timed(lambda: K._apply("ADD", out, a, b, n_threads={n_threads}), repeats=1)
        assert np.array_equal(out.reshape(-1, 12)[::4099], np.broadcast_to(
            np.tile(a, 3) + np.tile(b, 2), (2**22, 12))[::4099])
        finished, latency, total = stops_early(
            min(0.1, full / 5), lambda: K._apply("ADD", out, a, b, n_threads={n_threads}), full)
        assert not finished and latency < 1.0 and total < full, (latency, total, full)
        print("ok")
    """)
    assert "ok" in out


@pytest.mark.parametrize("fuse", [False, True])
def test_ctrl_c_in_a_long_graph_compute(fuse):
    out = _run(f"""
        # big enough that the call takes well over the signal delay plus its latency (the
        # graph got faster once its work buffer was kept: 0.1 s left no margin)
        ctx = ggml_cy.Context(64 << 20)
        x = ctx.tensor_from(np.ones(8_000_000, np.float32))
        r = x
        for i in range(1500):
            r = ctx.scale_inplace(r, 1.0)
        g = ctx.new_graph(4096).build_forward_expand(r)
        full = timed(lambda: g.compute(2, fuse={fuse}))
        delay = min(0.1, full / 5)
        finished, latency, total = stops_early(delay, lambda: g.compute(2, fuse={fuse}), full)
        assert not finished and latency < 1.0 and total < full, (latency, total, full)
        # usable afterwards: a fresh graph computes correctly
        ctx2 = ggml_cy.Context(16 << 20)
        p = ctx2.tensor_from(np.arange(1_000_000, dtype=np.float32))
        q = ctx2.add(p, p)
        ctx2.new_graph().build_forward_expand(q).compute(2)
        assert np.array_equal(q.numpy(), np.arange(1_000_000, dtype=np.float32) * 2)
        print("ok")
    """)
    assert "ok" in out


def test_ctrl_c_between_evaluate_calls_still_works():
    out = _run("""
        a = np.linspace(0, 1, 1_000_000)
        def loop():
            while True:
                ggml_cy.evaluate("a * a + 1", a=a)
        finished, latency, total = interrupted_after(0.2, loop)
        assert not finished and latency < 1.0, latency
        assert np.array_equal(ggml_cy.evaluate("a * a + 1", a=a), a * a + 1)
        print("ok")
    """)
    assert "ok" in out


def test_ctrl_c_in_a_big_quantization():
    out = _run("""
        x = np.random.default_rng(0).standard_normal(1 << 24).astype(np.float32)
        full = timed(lambda: ggml_cy.quantize(x, "q4_K", n_threads=2))
        delay = min(0.1, full / 5)
        finished, latency, total = stops_early(
            delay, lambda: ggml_cy.quantize(x, "q4_K", n_threads=2), full)
        assert not finished and latency < 1.0 and total < full, (latency, total, full)
        small = x[:1 << 16]
        want = ggml_cy.quantize(small, "q4_K", n_threads=1)
        assert np.array_equal(ggml_cy.quantize(small, "q4_K", n_threads=2), want)
        print("ok")
    """)
    assert "ok" in out


def test_ctrl_c_in_a_big_gguf_write(tmp_path):
    # Whether the write stopped early is read from the file itself, not from the clock: a
    # descriptor opened just before the signal still sees the partial file after the
    # writer's cleanup unlinks it. (Comparing the interrupted run's time with the fastest
    # uninterrupted one failed in CI on 2026-11-27: one 64 MiB piece took 0.2 s there
    # against 0.025 s in the timed runs -- the disk, not the check.)
    out = _run(f"""
        from ggml_cy import gguf
        big = np.ones(384 << 20, np.uint8).view(np.float32)      # 384 MiB tensor
        path = {str(tmp_path / "big.gguf")!r}
        full = timed(lambda: gguf.save(path, {{"a": 1}}, {{"w": big}}))
        full_size = os.path.getsize(path)
        os.remove(path)
        fd = [None]

        def hold_the_file():
            for _ in range(1000):          # the writer creates it at its start
                try:
                    fd[0] = os.open(path, os.O_RDONLY)
                    return
                except FileNotFoundError:
                    time.sleep(0.001)

        # A write into the page cache can run several times faster than the timed ones
        # (CI 2026-11-29: 320 MiB within the 50 ms delay, the signal landing in the last
        # piece), so a run that finished or was stopped only in its last piece is tried
        # again with half the delay.
        delay = min(0.05, full / 5)
        for attempt in range(4):
            fd[0] = None
            finished, latency, total = interrupted_after(
                delay, lambda: gguf.save(path, {{"a": 1}}, {{"w": big}}), hold_the_file)
            assert fd[0] is not None, "the writer never created the file"
            written = os.fstat(fd[0]).st_size
            os.close(fd[0])
            print("full", full, "latency", latency, "total", total, "written", written,
                  full_size, "delay", delay)
            if finished and os.path.exists(path):
                os.remove(path)
            if not finished and written <= full_size - (64 << 20):
                break
            delay /= 2
        assert not finished and latency < 1.0, (latency, total, full)
        # stopped at least one 64 MiB piece before the end
        assert written <= full_size - (64 << 20), (written, full_size)
        assert not os.path.exists(path)                                 # and cleaned up
        small = {str(tmp_path / "small.gguf")!r}
        gguf.save(small, {{"a": 1}}, {{"w": np.arange(8, dtype=np.float32)}})
        with gguf.load(small) as f:
            assert np.array_equal(f.numpy("w"), np.arange(8, dtype=np.float32))
        print("ok")
    """)
    assert "ok" in out
