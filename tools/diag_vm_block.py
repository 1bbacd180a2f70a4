"""Developer tool (issue 14): how many vectors the fused executor's accumulator machine
(ggml_cy/cpu/csrc/fused_vm.h) should take per block. Compiles tools/diag_vm_block.c once per
vector width (cc -O3 -march=native -fopenmp; 64-byte vectors where the CPU has AVX-512, and
32-byte ones with VM_FORCE_32) and times, in turns in one process:

- a*b + c*d - e and the bench's 16-operation chain, float32, through the machine with 8 and
  with 4 accumulator vectors (R8, R4) at each width;
- the hand-fused C loop of a*b + c*d - e (bench/roofline.py's fused_abcde_f32);
- the bench's STREAM add with non-temporal stores (bench/roofline.py), for scale.

Sizes whose six arrays exceed --stream-above bytes (default 32 MiB) stream the output (as
the package does beyond the last-level cache), smaller ones store it plainly. Inputs are near 1 so the chain never meets a subnormal.

    python3 tools/diag_vm_block.py [--threads 1,2] [--sizes 1e5,1e7] [--rounds 3] [--json PATH]

Prints, per threads / size / program, each variant's median time and its ratio to the C loop
(a*b + c*d - e) or to R8 at the widest width (the chain)."""
import argparse
import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from _diag_timing import block  # noqa: E402
from bench.roofline import Roofline  # noqa: E402

SRC = os.path.join(HERE, "diag_vm_block.c")
CSRC = os.path.join(ROOT, "ggml_cy", "cpu", "csrc")
LLC_GUESS = 32 << 20           # streamed at and above this many bytes of working set


def widths():
    """name suffix -> extra compiler flags: the build's own width, and 32 bytes where the
    CPU has AVX-512 (the package's AVX2 level)."""
    out = {"": []}
    if "avx512f" in open("/proc/cpuinfo").read():
        out[" 32B"] = ["-DVM_FORCE_32"]
    return out


def load(name, flags, tmp):
    so = os.path.join(tmp, "libvmb" + name.replace(" ", "_") + ".so")
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", "-I", CSRC,
                    *flags, SRC, "-o", so], check=True)
    lib = ctypes.CDLL(so)
    lib.vmb_run.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                            ctypes.c_int, ctypes.c_int64, ctypes.c_int, ctypes.c_int]
    lib.vmb_run.restype = ctypes.c_int
    return lib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--sizes", default="1e5,1e7")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--blk", type=int, default=8192, help="elements per vm_run_block call")
    ap.add_argument("--stream-above", type=float, default=LLC_GUESS)
    ap.add_argument("--json")
    opts = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="diag_vmb_")
    libs = {name: load(name, flags, tmp) for name, flags in widths().items()}
    variants = {f"R{r}{w}": (libs[w], r) for w in libs for r in (8, 4)}
    roof = Roofline()
    rng = np.random.default_rng(0)
    report = {"cpu": platform.processor() or platform.machine(), "rounds": []}
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            report["cpu"] = line.split(":", 1)[1].strip()
            break
    cases = []
    for size in (int(float(s)) for s in opts.sizes.split(",")):
        ins = [rng.uniform(0.9, 1.1, size).astype(np.float32) for _ in range(5)]
        out = np.empty(size, np.float32)
        ptrs = (ctypes.c_void_p * 5)(*[a.ctypes.data for a in ins])
        stream = int(6 * size * 4 > opts.stream_above)
        expect = ins[0] * ins[1] + ins[2] * ins[3] - ins[4]
        for lib, r in variants.values():    # every variant computes the same bits
            assert lib.vmb_run(0, ptrs, out.ctypes.data, size, 2, opts.blk, stream, r) == 0
            np.testing.assert_array_equal(out, expect)
        cases.append((size, ins, out, ptrs, stream))
    for r in range(opts.rounds):
        rnd = {}
        for th in (int(t) for t in opts.threads.split(",")):
            for size, ins, out, ptrs, stream in cases:
                o = out.ctypes.data
                fns = {f"{prog} {name}": (lambda lib=lib, p=pi, r=r: lib.vmb_run(
                           p, ptrs, o, size, th, opts.blk, stream, r))
                       for name, (lib, r) in variants.items()
                       for pi, prog in enumerate(("abcde", "chain16"))}
                fns["abcde C loop"] = lambda: roof.fused_abcde_f32(*ins, out, th, bool(stream))
                fns["NT add"] = lambda: roof.stream_add_f32(ins[0], ins[1], out, th, True)
                keys = list(fns)
                keys = keys[r % len(keys):] + keys[:r % len(keys)]
                us = {k: block(fns[k]) for k in keys}
                rnd[f"t{th} n{size:.0e} stream{stream}"] = us
        report["rounds"].append(rnd)
    med = {}
    for key in report["rounds"][0]:
        med[key] = {k: statistics.median(rd[key][k] for rd in report["rounds"])
                    for k in report["rounds"][0][key]}
        m = med[key]
        print(f"== {key} ({report['cpu']})")
        for k in sorted(m):
            ref = m["abcde C loop"] if k.startswith("abcde") else m.get("chain16 R8")
            ratio = "" if ref is None or k == "NT add" else f"  x{ref / m[k]:.2f}"
            print(f"  {k:18s} {m[k]:9.1f} us{ratio}")
    report["median_us"] = med
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
