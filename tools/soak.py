"""Soak test (issue 17, item 5): many Python threads in several processes, for N minutes,
mixing eager calls, evaluate, graph compute, quantize/dequantize, GGUF reads and (where a
GPU is usable) CUDA calls. Every result is checked bitwise against numpy (or a reference
computed once at start); each process samples its RSS every few seconds.

    python tools/soak.py --minutes 10 --procs 3 --threads 4

Processes: the main one plus --procs - 1 workers, started alternately with the "fork" and
"spawn" methods (a forked worker starts after the main process has run multithreaded
calls, so fork safety is soaked too). Exit status 0 only when no call gave a wrong result
or raised, and no process's RSS grew more than --max-growth-mb (default 64 MiB) between
the end of its warm-up (the first --warmup-s seconds, default 30) and its end. A summary
is printed (and written as JSON with --json PATH). Not part of CI (it takes minutes).
"""
import argparse
import json
import multiprocessing as mp
import os
import random
import sys
import tempfile
import threading
import time
import traceback

import numpy as np

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


# ----------------------------------------------------------------------------- tasks
def _arrays(rng, dtype, n):
    if np.dtype(dtype).kind == "f":
        a = rng.standard_normal(n).astype(dtype)
        b = (rng.standard_normal(n) + 2).astype(dtype)
    else:
        a = rng.integers(-1000, 1000, n).astype(dtype)
        b = rng.integers(1, 1000, n).astype(dtype)
    return a, b


def t_eager(g, rng, shared):
    dtype = rng.choice([np.float32, np.float64, np.int32, np.int64])
    n = rng.choice([1, 17, 1000, 65_536, 200_000, 1_000_000])
    a, b = _arrays(rng, dtype, n)
    name = rng.choice(["add", "subtract", "multiply", "maximum", "minimum"])
    nt = rng.choice([None, 1, 2, 3])
    got = getattr(g, name)(a, b, n_threads=nt)
    want = getattr(np, name)(a, b)
    return np.array_equal(got, want) and got.dtype == want.dtype


def t_evaluate(g, rng, shared):
    n = rng.choice([10, 5000, 300_000])
    a, b = _arrays(rng, np.float64, n)
    c = rng.standard_normal(n)
    exprs = {"a * b + c": lambda: a * b + c, "(a - b) * c": lambda: (a - b) * c,
             "a * a - b * c + 1.5": lambda: a * a - b * c + 1.5,
             "maximum(a, b) - c": lambda: np.maximum(a, b) - c}
    e = rng.choice(list(exprs))
    got = g.evaluate(e, a=a, b=b, c=c, n_threads=rng.choice([1, 2]))
    return np.array_equal(got, exprs[e]())


def t_graph(g, rng, shared):
    n = rng.choice([100, 50_000, 400_000])
    a, b = _arrays(rng, np.float32, n)
    ctx = g.Context(8 * n * 4 + (1 << 20))
    ta, tb = ctx.tensor_from(a), ctx.tensor_from(b)
    r = ctx.add(ctx.mul(ta, tb), ctx.sub(ta, tb))
    ctx.new_graph().build_forward_expand(r).compute(rng.choice([1, 2, 3]))
    return np.array_equal(r.numpy(), a * b + (a - b))


def t_threads_block(g, rng, shared):
    k = rng.choice([1, 2, 3])
    with g.threads(k):
        ok = g.get_num_threads() == k
        a, b = _arrays(rng, np.float32, 100_000)
        ok &= np.array_equal(g.multiply(a, b), a * b)
    return ok


def t_quant(g, rng, shared):
    x, q, d = shared["quant"]
    nt = rng.choice([1, 2, 3])
    return (np.array_equal(g.quantize(x, "q4_K", n_threads=nt), q)
            and np.array_equal(g.dequantize(q, "q4_K", x.shape, n_threads=nt).view(np.uint32),
                               d.view(np.uint32)))


def t_gguf(g, rng, shared):
    from ggml_cy import gguf
    path, tensors = shared["gguf"]
    ok = True
    with gguf.load(path) as f:
        for name, arr in tensors.items():
            ok &= np.array_equal(f.numpy(name), arr)
        ok &= f.metadata["soak.answer"] == 42
    return bool(ok)


def t_cuda(g, rng, shared):
    import ggml_cy.cuda as gc
    a, b = _arrays(rng, np.float32, rng.choice([1000, 1_000_000]))
    da, db = gc.asarray(a), gc.asarray(b)
    return np.array_equal((da + db).numpy(), a + b) and np.array_equal((da * db).numpy(), a * b)


TASKS = [t_eager, t_eager, t_eager, t_evaluate, t_evaluate, t_graph, t_threads_block, t_quant,
         t_gguf]


def setup_shared(g, tmpdir, label):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 4096)).astype(np.float32)
    q = g.quantize(x, "q4_K", n_threads=1)
    d = g.dequantize(q, "q4_K", x.shape, n_threads=1)
    from ggml_cy import gguf
    tensors = {"w": rng.standard_normal((128, 256)).astype(np.float32),
               "b": rng.integers(0, 100, 1000).astype(np.int32),
               "h": rng.standard_normal(4096).astype(np.float16)}
    path = os.path.join(tmpdir, f"soak-{label}.gguf")     # one file per process
    gguf.save(path, {"soak.answer": 42}, tensors)
    return {"quant": (x, q, d), "gguf": (path, tensors)}


# ----------------------------------------------------------------------------- one process
def run_process(label, seconds, n_threads, warmup_s, sample_s, tmpdir, result_path):
    import ggml_cy as g
    tasks = list(TASKS)
    gpu = False
    try:
        import ggml_cy.cuda as gc
        gpu = bool(gc.is_available())
    except Exception:
        gpu = False
    if gpu:
        tasks.append(t_cuda)
    shared = setup_shared(g, tmpdir, label)
    stats = {t.__name__: 0 for t in tasks}
    wrong, errors = [], []
    lock = threading.Lock()
    stop = threading.Event()
    samples = []

    def worker(k):
        rng = random.Random(hash((label, k)))
        nrng = np.random.default_rng(rng.randrange(2**32))

        class R:          # random.choice over anything, numpy arrays from nrng
            choice = staticmethod(rng.choice)
            standard_normal = staticmethod(nrng.standard_normal)
            integers = staticmethod(nrng.integers)

        while not stop.is_set():
            task = rng.choice(tasks)
            try:
                ok = task(g, R, shared)
            except Exception:
                with lock:
                    errors.append(f"{task.__name__}: {traceback.format_exc(limit=3)}")
                continue
            with lock:
                stats[task.__name__] += 1
                if not ok:
                    wrong.append(task.__name__)

    t0 = time.monotonic()
    ts = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(n_threads)]
    for t in ts:
        t.start()
    baseline = None
    while time.monotonic() - t0 < seconds:
        time.sleep(sample_s)
        now = time.monotonic() - t0
        r = rss_bytes()
        samples.append((round(now, 1), r))
        if baseline is None and now >= warmup_s:
            baseline = r
    stop.set()
    for t in ts:
        t.join(60)
    final = rss_bytes()
    if baseline is None:
        baseline = samples[0][1] if samples else final
    after = [r for s, r in samples if s >= warmup_s] or [final]
    res = {"label": label, "pid": os.getpid(), "seconds": round(time.monotonic() - t0, 1),
           "threads": n_threads, "gpu": gpu, "calls": stats, "total_calls": sum(stats.values()),
           "wrong": len(wrong), "wrong_tasks": sorted(set(wrong)), "errors": len(errors),
           "first_errors": errors[:3], "rss_baseline_mb": round(baseline / 2**20, 1),
           "rss_final_mb": round(final / 2**20, 1),
           "rss_max_after_warmup_mb": round(max(after) / 2**20, 1),
           "rss_growth_mb": round((max(after[-3:]) - baseline) / 2**20, 1),
           "samples": len(samples)}
    with open(result_path, "w") as f:
        json.dump(res, f)
    return res


def _child(label, seconds, n_threads, warmup_s, sample_s, tmpdir, result_path):
    try:
        run_process(label, seconds, n_threads, warmup_s, sample_s, tmpdir, result_path)
    except BaseException:
        with open(result_path, "w") as f:
            json.dump({"label": label, "fatal": traceback.format_exc()}, f)
        raise


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--procs", type=int, default=3, help="processes, the main one included")
    ap.add_argument("--threads", type=int, default=4, help="Python threads per process")
    ap.add_argument("--max-growth-mb", type=float, default=64.0)
    ap.add_argument("--warmup-s", type=float, default=30.0)
    ap.add_argument("--sample-s", type=float, default=3.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    seconds = args.minutes * 60
    warmup = min(args.warmup_s, seconds / 3)
    import ggml_cy as g
    # the main process runs multithreaded calls before forking (the fork-safety case)
    a = np.ones(2_000_000, np.float32)
    assert np.array_equal(g.add(a, a, n_threads=2), a + a)
    tmp = tempfile.mkdtemp(prefix="ggml_cy_soak_")
    procs, paths = [], []
    for i in range(1, args.procs):
        method = "fork" if i % 2 == 1 else "spawn"
        path = os.path.join(tmp, f"proc{i}.json")
        p = mp.get_context(method).Process(
            target=_child, args=(f"{method}-{i}", seconds, args.threads, warmup,
                                 args.sample_s, tmp, path))
        p.start()
        procs.append((p, path, f"{method}-{i}"))
    main_path = os.path.join(tmp, "main.json")
    results = [run_process("main", seconds, args.threads, warmup, args.sample_s, tmp,
                           main_path)]
    for p, path, label in procs:
        p.join(seconds + 300)
        if p.is_alive():
            p.kill()
            results.append({"label": label, "fatal": "did not finish (hang?)"})
            continue
        try:
            with open(path) as f:
                r = json.load(f)
        except (OSError, ValueError):
            r = {"label": label, "fatal": f"no result (exit code {p.exitcode})"}
        if p.exitcode not in (0, None) and "fatal" not in r:
            r["fatal"] = f"exit code {p.exitcode}"
        results.append(r)
    failed = []
    print(f"ggml_cy soak: {args.procs} processes x {args.threads} threads, "
          f"{args.minutes:g} min, RSS bound {args.max_growth_mb:g} MiB after "
          f"{warmup:g} s warm-up")
    for r in results:
        if "fatal" in r:
            print(f"  {r['label']}: FATAL {r['fatal']}")
            failed.append(r["label"])
            continue
        calls = ", ".join(f"{k[2:]} {v}" for k, v in r["calls"].items())
        print(f"  {r['label']:8s} {r['total_calls']:8d} calls ({calls}); wrong {r['wrong']}, "
              f"errors {r['errors']}; RSS {r['rss_baseline_mb']} -> {r['rss_final_mb']} MiB "
              f"(max {r['rss_max_after_warmup_mb']}, growth {r['rss_growth_mb']}), "
              f"gpu {r['gpu']}")
        for e in r["first_errors"]:
            print("    error:", e.strip().splitlines()[-1])
        if r["wrong"] or r["errors"] or r["rss_growth_mb"] > args.max_growth_mb:
            failed.append(r["label"])
    total = sum(r.get("total_calls", 0) for r in results)
    print(f"  total {total} calls checked; {'FAILED: ' + ', '.join(failed) if failed else 'OK'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results, "ok": not failed}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
