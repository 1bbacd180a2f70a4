"""Developer tool (issue 14, many cores): where do ggml_cy's eager ops and evaluate stop
scaling? Times a few cases at 1, 2, 4, 8 and all threads against torch at the same count,
once per environment variant (each variant in a fresh process, as the knobs are read at
import): the default, a long worker spin, never and always non-temporal stores.

    python3 tools/diag_threads.py [--json PATH]

Prints one table per variant: microseconds (median of batches) and ggml_cy / torch."""
import json
import os
import subprocess
import sys

from _diag_timing import block

VARIANTS = {
    "default": {},
    "spin1e6": {"GGML_CY_SPINCOUNT": "1000000"},
    "never_nt": {"GGML_CY_LLC_BYTES": str(1 << 40)},
    "always_nt": {"GGML_CY_LLC_BYTES": "4096"},
}


def child(threads):
    import numpy as np
    import torch
    import ggml_cy as gc

    rng = np.random.default_rng(0)

    def arr(n, dt=np.float32):
        return rng.standard_normal(n).astype(dt)

    cases = []
    for n in (10**5, 10**6, 10**7):
        a, b, o = arr(n), arr(n), np.empty(n, np.float32)
        cases.append((f"mul f32 {n:.0e}", lambda nt, a=a, b=b, o=o: gc.multiply(a, b, out=o, n_threads=nt),
                      lambda a=torch.from_numpy(a), b=torch.from_numpy(b), o=torch.from_numpy(o):
                      torch.mul(a, b, out=o)))
    n = 10**6
    a, b, o = arr(n, np.float16), arr(n, np.float16), np.empty(n, np.float16)
    cases.append(("add f16 1e6", lambda nt: gc.add(a, b, out=o, n_threads=nt),
                  lambda ta=torch.from_numpy(a), tb=torch.from_numpy(b), to=torch.from_numpy(o):
                  torch.add(ta, tb, out=to)))
    a, b = arr(n), arr(n)
    ob = np.empty(n, bool)
    cases.append(("greater f32 1e6", lambda nt: gc.greater(a, b, out=ob, n_threads=nt),
                  lambda ta=torch.from_numpy(a), tb=torch.from_numpy(b), to=torch.from_numpy(ob):
                  torch.gt(ta, tb, out=to)))
    A = arr(4096 * 4096).reshape(4096, 4096)
    B = arr(4096)
    O = np.empty_like(A)
    cases.append(("(4096,4096)+(4096,)", lambda nt: gc.add(A, B, out=O, n_threads=nt),
                  lambda ta=torch.from_numpy(A), tb=torch.from_numpy(B), to=torch.from_numpy(O):
                  torch.add(ta, tb, out=to)))
    n = 10**7
    ea, eb, ec, ed, ee = (arr(n) for _ in range(5))
    eo = np.empty(n, np.float32)
    cases.append(("a*b+c*d-e 1e7", lambda nt: gc.evaluate("a*b+c*d-e", n_threads=nt, out=eo, a=ea, b=eb,
                                                           c=ec, d=ed, e=ee),
                  None))
    res = {}
    for name, g, t in cases:
        row = {}
        for nt in threads:
            torch.set_num_threads(nt)
            for lib, fn in (("ggml_cy", lambda: g(nt)), ("torch", t)):
                if fn is None:
                    continue
                row.setdefault(lib, {})[nt] = block(fn)
        res[name] = row
    return res


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        print(json.dumps(child([int(x) for x in sys.argv[2].split(",")])))
        return
    out = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    ncpu = len(os.sched_getaffinity(0))
    threads = sorted({1, 2, 4, 8, ncpu} & set(range(1, ncpu + 1)))
    allres = {}
    for vname, env in VARIANTS.items():
        e = dict(os.environ, **env)
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        e["PYTHONPATH"] = os.pathsep.join(x for x in (root, e.get("PYTHONPATH")) if x)
        p = subprocess.run([sys.executable, __file__, "--child", ",".join(map(str, threads))],
                           env=e, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            print(vname, "FAILED", p.stderr[-2000:])
            continue
        res = json.loads(p.stdout.strip().splitlines()[-1])
        allres[vname] = res
        print(f"== {vname} {env}")
        print(f"{'case':24s} " + " ".join(f"{'t=' + str(t):>16s}" for t in threads))
        for name, row in res.items():
            g = row["ggml_cy"]
            tt = row.get("torch", {})
            cells = []
            for t in threads:
                gv = g[str(t)]
                r = f" {tt[str(t)] / gv:4.2f}x" if str(t) in tt else ""
                cells.append(f"{gv:9.1f}{r:>7s}")
            print(f"{name:24s} " + " ".join(cells))
    if out:
        with open(out, "w") as f:
            json.dump({"threads": threads, "variants": VARIANTS, "results": allres}, f, indent=1)


if __name__ == "__main__":
    main()
