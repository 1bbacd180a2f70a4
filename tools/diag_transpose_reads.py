"""Developer tool (issue 14): why a.T + b (4096, 4096) float32 stays near 0.6 of the
non-temporal STREAM add on the 2-core VM. Measures in one process, in rotating rounds:

- the bench's roofline, STREAM add with non-temporal stores (bench/roofline.py);
- ggml_cy.add(a.T, b, out=out) (the fused band kernel, kernels_transpose.h);
- read-only passes of tools/diag_transpose_reads.c (compiled here with cc -O3
  -march=native -fopenmp): a and b front to back; a and b in the fused band's order (bands
  of 256 rows, panels of 64 columns); a and b by 1024 x 1024 tiles, each part in runs of 4 KiB
  from 8 rows read in lockstep (the best read order found); a alone in runs of 1 KiB and
  4 KiB from 16, 8 or 64 rows read in lockstep; a and b in strips of 16 or 32 output rows
  across all columns (b's rows in long runs, a's column strip one or two lines per row, with
  or without software prefetch).

    python3 tools/diag_transpose_reads.py [--threads 2] [--rounds 3] [--json PATH]

Prints GB/s per round (reads only for the read passes; the add's three arrays for the add
and the kernel) and each round's kernel / NT-add ratio; the kernel's read rate (its 128 MiB
of reads over its time) is to be compared with the band-order read pass."""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from _diag_timing import block  # noqa: E402
from bench.roofline import Roofline  # noqa: E402
import ggml_cy  # noqa: E402

N = 4096


def load_passes():
    so = os.path.join(tempfile.mkdtemp(prefix="diag_tr_"), "libdiag_tr.so")
    src = os.path.join(HERE, "diag_transpose_reads.c")
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", src, "-o", so],
                   check=True)
    lib = ctypes.CDLL(so)
    p, i64, ci = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    lib.diag_read_seq.argtypes = [p, p, i64, ci]
    lib.diag_read_bands.argtypes = [p, p, i64, ci, ci, ci]
    lib.diag_read_runs.argtypes = [p, i64, ci, ci, ci]
    lib.diag_read_tiles.argtypes = [p, p, i64, ci, ci, ci]
    lib.diag_read_strips.argtypes = [p, p, i64, ci, ci, ci]
    for f in (lib.diag_read_seq, lib.diag_read_bands, lib.diag_read_runs, lib.diag_read_tiles,
              lib.diag_read_strips):
        f.restype = ctypes.c_float
    return lib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    opts = ap.parse_args()
    th = opts.threads
    ggml_cy.set_num_threads(th)
    lib, roof = load_passes(), Roofline()
    rng = np.random.default_rng(0)
    a = rng.random((N, N), dtype=np.float32)
    b = rng.random((N, N), dtype=np.float32)
    out = np.empty((N, N), np.float32)
    np.testing.assert_array_equal(ggml_cy.add(a.T, b, out=out), a.T + b)
    A, B, O = a.reshape(-1), b.reshape(-1), out.reshape(-1)
    pa, pb = a.ctypes.data, b.ctypes.data
    gb = N * N * 4 / 1e9                        # GB per array
    cases = {
        "nt_add (3 arrays)": (3 * gb, lambda: roof.stream_add_f32(A, B, O, th, True)),
        "ggml_cy a.T+b (3 arrays)": (3 * gb, lambda: ggml_cy.add(a.T, b, out=out)),
        "read a, b sequential": (2 * gb, lambda: lib.diag_read_seq(pa, pb, N * N, th)),
        "read a, b band order 256x64":
            (2 * gb, lambda: lib.diag_read_bands(pa, pb, N, 256, 64, th)),
        "read a, b tiles 1024, 8 streams":
            (2 * gb, lambda: lib.diag_read_tiles(pa, pb, N, 1024, 8, th)),
        "read a runs 1 KiB x 16 streams": (gb, lambda: lib.diag_read_runs(pa, N, 256, 16, th)),
        "read a runs 4 KiB x 8 streams": (gb, lambda: lib.diag_read_runs(pa, N, 1024, 8, th)),
        "read a runs 4 KiB x 64 streams": (gb, lambda: lib.diag_read_runs(pa, N, 1024, 64, th)),
        # row-block-major (b in long runs, a one line per source row): 2026-11-29, Zen 4
        # VM: 9-14 GB/s against 25 for the band order and 34 front to back
        "read a, b strips of 16 rows": (2 * gb, lambda: lib.diag_read_strips(pa, pb, N, 16, 0, th)),
        "read a, b strips of 32, pf 32":
            (2 * gb, lambda: lib.diag_read_strips(pa, pb, N, 32, 32, th)),
    }
    rounds = []
    for r in range(opts.rounds):
        row = {name: gb / (block(fn, batch_s=0.05, max_reps=5, samples=7) * 1e-6)
               for name, (gb, fn) in cases.items()}
        row["kernel / nt_add"] = row["ggml_cy a.T+b (3 arrays)"] / row["nt_add (3 arrays)"]
        row["kernel reads GB/s"] = row["ggml_cy a.T+b (3 arrays)"] * 2 / 3
        rounds.append(row)
        print(f"round {r}:")
        for k, v in row.items():
            print(f"  {k:34s} {v:7.3f}" if "/" in k else f"  {k:34s} {v:7.1f}")
    summary = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    print("median over rounds:")
    for k, v in summary.items():
        print(f"  {k:34s} {v:7.3f}" if "/" in k else f"  {k:34s} {v:7.1f}")
    if opts.json:
        with open(opts.json, "w") as f:
            cpu = open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0]
            json.dump({"threads": th, "n": N, "rounds": rounds, "median": summary,
                       "cpu": cpu.strip(": \t")}, f, indent=1)


if __name__ == "__main__":
    main()
