"""The last-level cache measured at import and the streaming-store rule built on it
(issue 14 item 1): non-temporal stores only for calls whose data exceed the LLC."""
import io
import subprocess
import sys

import numpy as np
import pytest

from ggml_cy.cpu import _kernels as K
from ggml_cy.cpu import cacheinfo


@pytest.mark.parametrize("text, want", [("32768K", 32 << 20), ("1024K", 1 << 20),
                                        ("96M", 96 << 20), ("1G", 1 << 30), ("4096", 4096),
                                        (" 2m ", 2 << 20), ("8MiB", 8 << 20)])
def test_parse_size(text, want):
    assert cacheinfo.parse_size(text) == want


@pytest.mark.parametrize("text", ["", "K", "-1M", "1.5M", "12Q", "0", "abc", "9" * 30])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError):
        cacheinfo.parse_size(text)


def test_parse_size_type():
    with pytest.raises(TypeError):
        cacheinfo.parse_size(32)


def _fake_cache(root, cpu, entries):
    for i, (level, kind, size, shared) in enumerate(entries):
        d = root / f"cpu{cpu}" / "cache" / f"index{i}"
        d.mkdir(parents=True)
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
        (d / "shared_cpu_list").write_text(f"{shared}\n")


def test_sysfs_one_shared_l3(tmp_path):
    for cpu in range(4):
        _fake_cache(tmp_path, cpu, [(1, "Data", "48K", str(cpu)),
                                    (1, "Instruction", "32K", str(cpu)),
                                    (2, "Unified", "2048K", str(cpu)),
                                    (3, "Unified", "107520K", "0-3")])
    n, desc = cacheinfo.from_sysfs(cpus=range(4), root=str(tmp_path))
    assert n == 107520 << 10
    assert "L3" in desc


def test_sysfs_instances_add_up(tmp_path):
    """Two sockets (or core complexes): the threads reach both L3s."""
    for cpu in range(4):
        _fake_cache(tmp_path, cpu, [(2, "Unified", "1024K", str(cpu)),
                                    (3, "Unified", "32M", "0-1" if cpu < 2 else "2-3")])
    n, desc = cacheinfo.from_sysfs(cpus=range(4), root=str(tmp_path))
    assert n == 64 << 20
    assert "2 instances" in desc
    # only the CPUs this process may run on count
    n1, _ = cacheinfo.from_sysfs(cpus=[0, 1], root=str(tmp_path))
    assert n1 == 32 << 20


def test_sysfs_without_l3_uses_l2(tmp_path):
    _fake_cache(tmp_path, 0, [(1, "Data", "32K", "0"), (2, "Unified", "512K", "0")])
    assert cacheinfo.from_sysfs(cpus=[0], root=str(tmp_path))[0] == 512 << 10


def test_sysfs_garbage_is_skipped(tmp_path):
    _fake_cache(tmp_path, 0, [(3, "Unified", "lots", "0"), (2, "Unified", "1M", "0")])
    _fake_cache(tmp_path, 1, [(3, "Instruction", "8M", "1")])
    assert cacheinfo.from_sysfs(cpus=[0, 1, 7], root=str(tmp_path))[0] == 1 << 20
    assert cacheinfo.from_sysfs(cpus=[5], root=str(tmp_path)) is None
    assert cacheinfo.from_sysfs(cpus=[0], root=str(tmp_path / "nowhere")) is None


def test_detect_env_override_and_bad_values():
    assert cacheinfo.detect({"GGML_CY_LLC_BYTES": "96M"})[0] == 96 << 20
    with pytest.warns(RuntimeWarning, match="GGML_CY_LLC_BYTES"):
        n, desc = cacheinfo.detect({"GGML_CY_LLC_BYTES": "lots"})
    assert n > 0 and "GGML_CY_LLC_BYTES" not in desc


def test_detect_falls_back(monkeypatch):
    monkeypatch.setattr(cacheinfo, "from_sysfs", lambda: None)
    assert cacheinfo.detect({}, sysconf_llc=lambda: (3, 8 << 20)) == \
        (8 << 20, "sysconf: L3 8 MiB")
    n, desc = cacheinfo.detect({}, sysconf_llc=lambda: (0, 0))
    assert n == cacheinfo.DEFAULT_BYTES and "assumed" in desc
    monkeypatch.setattr(cacheinfo, "from_sysfs", lambda: 1 / 0)   # never stops the import
    assert cacheinfo.detect({})[0] == cacheinfo.DEFAULT_BYTES


def test_kernels_know_the_llc():
    n, source = K.llc_info()
    assert n > 0 and source
    level, nbytes = K._sysconf_llc()
    assert level in (0, 2, 3) and nbytes >= 0


def test_llc_in_show_config():
    import ggml_cy
    buf = io.StringIO()
    ggml_cy.show_config(file=buf)
    assert "last-level cache:" in buf.getvalue()
    assert ggml_cy._config.config()["llc_bytes"] == K.llc_info()[0]


def test_env_override_reaches_the_kernels():
    code = "from ggml_cy.cpu import _kernels as K; print(K.llc_info()[0])"
    from _child import ENV, HOME    # the ggml_cy under test, not an unbuilt source tree
    env = dict(ENV, GGML_CY_LLC_BYTES="3M")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, cwd=HOME)
    assert int(out.stdout.split()[-1]) == 3 << 20


@pytest.fixture
def llc():
    """Set the LLC the rule plans with; restores the tuning afterwards."""
    old = K._set_tuning()
    yield lambda n: K._set_tuning(llc_bytes=n)
    K._set_tuning(*old)


def test_streaming_only_beyond_the_llc(llc):
    n = 2_000_000                     # 8 MB per float32 array: 24 MB per add
    a = np.ones(n, np.float32)
    out = np.empty_like(a)
    llc(16 << 20)
    assert K._plan_info("ADD", out, a, a[::-1].copy())["nt"] is True
    llc(64 << 20)
    assert K._plan_info("ADD", out, a, a[::-1].copy())["nt"] is False
    # a broadcast source counts its own bytes: 8 MB out + 8 MB in + 4 bytes
    llc(20 << 20)
    assert K._plan_info("ADD", out, a, np.ones(1, np.float32))["nt"] is False
    llc(12 << 20)
    assert K._plan_info("ADD", out, a, np.ones(1, np.float32))["nt"] is True
    # small outputs never stream, whatever the cache
    llc(0)
    small = np.ones(1000, np.float32)
    assert K._plan_info("ADD", np.empty_like(small), small, small)["nt"] is False


def test_many_threads_stream_beyond_a_quarter_of_the_llc(llc):
    # from 8 threads on, a working set beyond LLC/4 streams (the 16-core host's shared L3);
    # the compute-bound SIMD math rows plan as one thread
    n = 2_000_000                     # 24 MB per add, 16 MB per exp
    a = np.ones(n, np.float32)
    out = np.empty_like(a)
    b = a[::-1].copy()
    llc(64 << 20)
    assert K._plan_info("ADD", out, a, b, n_threads=16)["nt"] is True
    assert K._plan_info("ADD", out, a, b, n_threads=8)["nt"] is True
    assert K._plan_info("ADD", out, a, b, n_threads=7)["nt"] is False
    assert K._plan_info("ADD", out, a, b, n_threads=2)["nt"] is False
    assert K._plan_info("EXP", out, a, n_threads=16)["nt"] is False
    llc(128 << 20)
    assert K._plan_info("ADD", out, a, b, n_threads=16)["nt"] is False


def test_streamed_and_cached_results_agree(llc):
    import ggml_cy
    rng = np.random.default_rng(5)
    a = rng.standard_normal(1_500_001).astype(np.float32)
    b = rng.standard_normal(1_500_001).astype(np.float32)
    got = []
    for size in (0, 1 << 40):
        llc(size)
        for nt in (1, 2):
            out = np.full_like(a, np.nan)
            ggml_cy.add(a[1:], b[:-1], out=out[1:], n_threads=nt)
            got.append(out[1:].copy())
    for g in got:
        np.testing.assert_array_equal(g, a[1:] + b[:-1])


@pytest.fixture
def share():
    """Set the LLC and the many-core share (NT_SHARE_BYTES) together; restores both."""
    old = K._set_tuning()
    yield lambda llc_bytes, share_bytes: K._set_tuning(llc_bytes=llc_bytes,
                                                       share_bytes=share_bytes)
    K._set_tuning(*old)


def test_many_core_share_streams_one_pass_rows_at_any_thread_count(share):
    """On a machine of 8+ usable cores a working set beyond cores x 2 MiB streams for the rows
    that stream in one pass (same-type arithmetic, same-type copies), whatever the thread
    count; staged rows (conversions) only from 8 threads; share 0 leaves the LLC rules."""
    n = 3_000_000                     # 36 MB per add, 24 MB per copy, 18 MB to float16
    a = np.ones(n, np.float32)
    out = np.empty_like(a)
    b = a[::-1].copy()
    h = np.empty(n, np.float16)
    share(300 << 20, 8 << 20)         # a 300 MB L3 and 4 cores x 2 MiB (the rule itself)
    one_pass = K._one_pass_nt()       # the baseline build streams through the staged route
    for nth in (1, 2, 4, 16):
        assert K._plan_info("ADD", out, a, b, n_threads=nth)["nt"] is (one_pass or nth >= 8)
        assert K._plan_info("MAX", out, a, b, n_threads=nth)["nt"] is (one_pass or nth >= 8)
        assert K._plan_info("CPY", out, a, n_threads=nth)["nt"] is (one_pass or nth >= 8)
        assert K._plan_info("CPY", h, a, n_threads=nth)["nt"] is (nth >= 8), nth
    # the compute-bound math rows plan as one thread and are no one-pass rows
    assert K._plan_info("EXP", out, a, n_threads=16)["nt"] is False
    # below the share: plain stores (the 16 threads' private caches hold it)
    share(300 << 20, 48 << 20)
    assert K._plan_info("ADD", out, a, b, n_threads=2)["nt"] is False
    # share off: the LLC rules alone (a quarter of it from 8 threads)
    share(300 << 20, 0)
    assert K._plan_info("ADD", out, a, b, n_threads=2)["nt"] is False
    assert K._plan_info("ADD", out, a, b, n_threads=16)["nt"] is False


def test_share_set_from_usable_cores():
    """NT_SHARE_BYTES at import: cores x 2 MiB with 8+ usable cores or more than 24 MiB of
    LLC per usable core (a slice of a server socket), else 0 (off); an explicit
    GGML_CY_LLC_BYTES turns it off."""
    import os
    cores = len(os.sched_getaffinity(0))
    llc = K.llc_info()[0]
    slice_ = cores >= 8 or llc > cores * (24 << 20)
    want = cores * (2 << 20) if slice_ and not os.environ.get("GGML_CY_LLC_BYTES") else 0
    assert K._nt_share_bytes() == want
    code = "from ggml_cy.cpu import _kernels as K; print(K._nt_share_bytes())"
    from _child import ENV, HOME
    env = dict(ENV, GGML_CY_LLC_BYTES="3M")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, cwd=HOME)
    assert int(out.stdout.split()[-1]) == 0


def test_socket_slice_rule():
    """_shares_socket: 8+ usable cores, or a few cores seeing more than 24 MiB of LLC each
    (a 2-core VM on a 260 MB L3), share a server socket's cache; a 2-core VM on a 32 MB
    L3 (16 MiB a core), a desktop X3D part (96 MB, 8 cores) and a laptop do not."""
    MB = 1 << 20
    assert K._shares_socket(260 * MB, 2)
    assert K._shares_socket(300 * MB, 16)
    assert K._shares_socket(8 * MB, 8)
    assert not K._shares_socket(32 * MB, 2)
    assert not K._shares_socket(96 * MB, 6)
    assert not K._shares_socket(12 * MB, 4)
    assert not K._shares_socket(0, 0)


def test_machine_groups_stream_under_the_share_at_any_thread_count(share):
    """A fused group on the accumulator machine streams from its registers (one pass), so
    the socket-share rule applies to it at 1 and 2 threads as to the eager one-pass rows; a
    block-path group (a staged write-out) keeps the LLC rules below 8 threads."""
    from ggml_cy.graph.context import Context
    n = 3_000_000                     # 36 MB read and written by a*b - a
    x = np.ones(n, np.float32)
    ctx = Context(128 << 20)
    ta = ctx.tensor_from(x)
    tb = ctx.tensor_from(x)
    r = ctx.sub(ctx.mul(ta, tb), ta)                   # machine group
    r2 = ctx.sub(ctx.tanh(ta), tb)                     # block path (tanh)
    g = ctx.new_graph().build_forward_expand(r)
    g2 = ctx.new_graph().build_forward_expand(r2)
    share(300 << 20, 8 << 20)
    one_pass = K._one_pass_nt()
    for nth in (1, 2, 16):
        p = g.plan(nth)
        assert p.machine_groups == [(0, 2)]
        assert (1 in p.streamed_nodes) is (one_pass or nth >= 8), nth
        assert (1 in g2.plan(nth).streamed_nodes) is (nth >= 8), nth
    share(300 << 20, 0)                                # share off: the LLC rules
    assert g.plan(2).streamed_nodes == []
    share(0, 0)                                        # everything beyond the LLC streams
    assert 1 in g.plan(2).streamed_nodes
    g.compute(2)
    np.testing.assert_array_equal(r.numpy(), x * x - x)
