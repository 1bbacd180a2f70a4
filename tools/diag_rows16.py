"""Developer tool (issue 14, many cores): the 16-core host's failing CPU rows, ggml_cy at
several thread counts against torch at all threads, in one process with the libraries
taking turns block by block (several rounds, so that a slow phase of the shared host hits
every library), once per environment variant (a fresh process each: the knobs are read at
import).

    python3 tools/diag_rows16.py [--json PATH] [--variants default,spin]

Prints per case and variant: the median over rounds of each block's median (microseconds),
and torch / ggml_cy for each ggml_cy thread count."""
import json
import os
import statistics
import subprocess
import sys
import time

from _diag_timing import block

VARIANTS = {
    "default": {},
    "spin": {"GGML_CY_SPINCOUNT": "1000000"},
    "always_nt": {"GGML_CY_LLC_BYTES": "4096"},
}
ROUNDS = int(os.environ.get("DIAG_ROUNDS", "5"))


def cases(np, torch, gc):
    rng = np.random.default_rng(0)

    def arr(*shape, dt=np.float32):
        return rng.standard_normal(shape).astype(dt)

    out = []
    for op, tname in (("add", "add"), ("multiply", "mul"), ("maximum", "maximum")):
        for n in ((10**6, 10**7) if op == "maximum" else (10**7,)):
            a, b, o = arr(n), arr(n), np.empty(n, np.float32)
            ta, tb, to = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(o)
            out.append((f"{op} f32 {n:.0e}",
                        lambda nt, f=getattr(gc, op), a=a, b=b, o=o: f(a, b, out=o, n_threads=nt),
                        lambda f=getattr(torch, tname), ta=ta, tb=tb, to=to: f(ta, tb, out=to)))
    for sa, sb in (((4096, 4096), (4096,)), ((8, 512, 4096), (512, 4096))):
        A, B = arr(*sa), arr(*sb)
        O = np.empty_like(A)
        out.append((f"{sa}+{sb}", lambda nt, A=A, B=B, O=O: gc.add(A, B, out=O, n_threads=nt),
                    lambda ta=torch.from_numpy(A), tb=torch.from_numpy(B), to=torch.from_numpy(O):
                    torch.add(ta, tb, out=to)))
    x = arr(10**7) * 1000
    out.append(("f32->f16 1e7 astype", lambda nt, x=x: gc.astype(x, np.float16, n_threads=nt),
                lambda tx=torch.from_numpy(x): tx.to(torch.float16)))
    x = arr(10**7)
    o = np.empty_like(x)
    out.append(("exp f32 1e7", lambda nt, x=x, o=o: gc.exp(x, out=o, n_threads=nt),
                lambda tx=torch.from_numpy(x), to=torch.from_numpy(o): torch.exp(tx, out=to)))
    return out


def child(threads):
    import numpy as np
    import torch
    import ggml_cy as gc

    nmax = max(threads)
    torch.set_num_threads(nmax)
    res = {}
    for name, g, t in cases(np, torch, gc):
        runs = {"torch": []}
        for _ in range(ROUNDS):
            time.sleep(0.05)
            runs["torch"].append(block(t))
            for nt in threads:
                time.sleep(0.05)
                runs.setdefault(f"g{nt}", []).append(block(lambda: g(nt)))
        res[name] = {k: [statistics.median(v), min(v), max(v)] for k, v in runs.items()}
    return res


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        print(json.dumps(child([int(x) for x in sys.argv[2].split(",")])))
        return
    out = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
    names = (sys.argv[sys.argv.index("--variants") + 1].split(",") if "--variants" in sys.argv
             else list(VARIANTS))
    ncpu = len(os.sched_getaffinity(0))
    threads = sorted({ncpu, max(1, ncpu * 3 // 4), max(1, ncpu // 2)}, reverse=True)
    allres = {}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for vname in names:
        e = dict(os.environ, **VARIANTS[vname])
        e["PYTHONPATH"] = os.pathsep.join(x for x in (root, e.get("PYTHONPATH")) if x)
        p = subprocess.run([sys.executable, __file__, "--child", ",".join(map(str, threads))],
                           env=e, capture_output=True, text=True, timeout=400)
        if p.returncode != 0:
            print(vname, "FAILED", p.stderr[-2000:])
            continue
        res = json.loads(p.stdout.strip().splitlines()[-1])
        allres[vname] = res
        print(f"== {vname} {VARIANTS[vname]}  (median of {ROUNDS} rounds [min-max], us)")
        for name, row in res.items():
            tv = row["torch"][0]
            cells = [f"torch {tv:8.1f} [{row['torch'][1]:.0f}-{row['torch'][2]:.0f}]"]
            for nt in threads:
                m, lo, hi = row[f"g{nt}"]
                cells.append(f"g{nt} {m:8.1f} [{lo:.0f}-{hi:.0f}] {tv / m:4.2f}x")
            print(f"{name:28s} " + " | ".join(cells))
    if out:
        with open(out, "w") as f:
            json.dump({"threads": threads, "variants": {k: VARIANTS[k] for k in names},
                       "results": allres}, f, indent=1)


if __name__ == "__main__":
    main()
