"""Developer probe (not shipped): does the f32 GEMM's speed on a machine depend on where its
scratch (the packed a and b blocks) and its operands sit in memory? One process, one thread
pinned per CPU, calls taking turns with torch: the shipped kernel (bench/csrc/mm_ab.c's
mm_ab_pf16, built by tools/device/build_mm_ab.sh) with its scratch in each of several
separate 4 KiB-page mappings (madvise NOHUGEPAGE), in a 2 MiB-aligned mapping advised onto
transparent huge pages, and with the operands themselves on 4 KiB pages. If some 4 KiB
buffers run slow round after round while others in the same process run fast, the speed
follows the pages; if every variant slows together, it follows the moment.
Usage: python3 mm_place_probe.py SECONDS_PER_CPU CPUS(comma) [N4K] > rows.jsonl"""
import ctypes
import json
import mmap
import os
import sys

import numpy as np
import torch

from probe_common import take_turns

HUGE = 2 << 20


def mapped(nfloats, huge):
    """A float32 array in its own anonymous mapping: 2 MiB aligned and advised onto huge
    pages, or advised never to use them. The mapping stays alive through the array."""
    nbytes = nfloats * 4
    size = (nbytes + 2 * HUGE) // HUGE * HUGE
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    off = (-base) % HUGE
    m.madvise(mmap.MADV_HUGEPAGE if huge else mmap.MADV_NOHUGEPAGE)
    arr = np.frombuffer(m, np.float32, nfloats, off)
    arr[...] = 0.0   # touch every page now, under the advice
    return arr


def huge_kib(arr):
    """AnonHugePages (KiB) of the smaps entries that overlap arr's bytes."""
    lo = arr.ctypes.data
    hi = lo + arr.nbytes
    total, cur = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                s, e = (int(x, 16) for x in head.split("-"))
                cur = s < hi and e > lo
            elif cur and head == "AnonHugePages:":
                total += int(line.split()[1])
    return total


def main():
    secs = float(sys.argv[1])
    cpus = [int(c) for c in sys.argv[2].split(",")]
    n4k = int(sys.argv[3]) if len(sys.argv) > 3 else 6
    M = N = K = 1024
    lib = ctypes.CDLL("/tmp/mm_ab.so")
    f = lib.mm_ab_pf16
    f.restype = None
    f.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64] * 3 + [ctypes.c_void_p]
    rng = np.random.default_rng(1)
    a_h, b_h, c_h = (mapped(M * K, True), mapped(N * K, True), mapped(M * N, True))
    a_h[...] = rng.standard_normal(M * K, dtype=np.float32)
    b_h[...] = rng.standard_normal(N * K, dtype=np.float32)
    a_s, b_s, c_s = (mapped(M * K, False), mapped(N * K, False), mapped(M * N, False))
    a_s[...] = a_h
    b_s[...] = b_h
    wn = 1 << 20   # floats: more than mm_work_floats_per_thread()
    works = {"thp": mapped(wn, True)}
    for i in range(n4k):
        works[f"4k{i}"] = mapped(wn, False)
    pages = {k: huge_kib(v) for k, v in works.items()}
    pages.update(a_h=huge_kib(a_h), a_s=huge_kib(a_s), c_h=huge_kib(c_h), c_s=huge_kib(c_s))
    with open("/sys/kernel/mm/transparent_hugepage/enabled") as fh:
        thp_mode = fh.read().strip()
    calls = {}
    for k, w in works.items():
        calls[k] = (lambda w=w: f(a_h.ctypes.data, b_h.ctypes.data, c_h.ctypes.data, M, N, K,
                                  w.ctypes.data))
    calls["in4k_thp"] = lambda: f(a_s.ctypes.data, b_s.ctypes.data, c_s.ctypes.data, M, N, K,
                                  works["thp"].ctypes.data)
    calls["in4k_4k0"] = lambda: f(a_s.ctypes.data, b_s.ctypes.data, c_s.ctypes.data, M, N, K,
                                  works["4k0"].ctypes.data)
    ta = torch.from_numpy(a_h.reshape(M, K))
    tb = torch.from_numpy(b_h.reshape(N, K))
    tc = torch.from_numpy(c_h.reshape(N, M))
    torch.set_num_threads(1)
    calls["torch"] = lambda: torch.matmul(tb, ta.T, out=tc)
    names = list(calls)
    fl = 2.0 * M * N * K
    print(json.dumps({"pid": os.getpid(), "thp_mode": thp_mode, "anon_huge_kib": pages}), flush=True)
    for cpu in cpus:
        os.sched_setaffinity(0, {cpu})
        rounds = take_turns(calls, secs)
        out = {"pid": os.getpid(), "cpu": cpu, "rounds": len(rounds), "gflops_median": {},
               "vs_torch_median": {}}
        for v in names:
            ts = sorted(x[v] for x in rounds)
            out["gflops_median"][v] = round(fl / ts[len(ts) // 2] / 1e9, 1)
            if v != "torch":
                q = sorted(x["torch"] / x[v] for x in rounds)
                out["vs_torch_median"][v] = round(q[len(q) // 2], 3)
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
