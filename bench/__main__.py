"""Command line: python -m bench cpu|graph|gpu|gguf|quant|math|model|all [--quick] [--threads N] [--json PATH]
                                                   [--repeat K] [--smoke]

Run it from the repository root (`cd /path/to/repo && python -m bench cpu`): `bench` is not
installed by `pip install .`, only ggml_cy is. With an in-place build (tools/build.sh) the
source tree's ggml_cy is used; with an unbuilt tree and an installed ggml_cy, the installed one.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

from bench import _env, _harness, _libs

SUITES = ("cpu", "graph", "gpu", "gguf", "quant", "quant_quantize", "math", "matmul",
          "model",
          "gpu_overhead",   # gpu_overhead: issue 14 item 5 (host cost per eager GPU call)
          "scaling")        # scaling: issue 14 item 1 (1, 2, 4, 8, 16 threads)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m bench",
                                description="ggml_cy benchmarks; run from the repository root")
    p.add_argument("suite", choices=SUITES + ("all",))
    p.add_argument("--quick", action="store_true",
                   help="fewer sizes and samples (a first look; cpu under 30 s)")
    p.add_argument("--threads", type=int, default=_env.usable_cores(),
                   help="threads for every library (default: usable cores, here %(default)s)")
    p.add_argument("--json", metavar="PATH",
                   help="where to write the results (default bench/results/SUITE-HOST.json, "
                        "-quick.json with --quick; with 'all', each suite's default plus one "
                        "file holding every suite at PATH)")
    p.add_argument("--repeat", type=int, metavar="K",
                   help="minimum samples per library and case; the median is reported "
                        "(default 7, 3 with --quick)")
    p.add_argument("--plot", nargs="?", const=True, default=None, metavar="DIR",
                   help="after the run, write PNG charts of it (bench/plot.py; needs "
                        "matplotlib) to DIR (default bench/results/plots)")
    p.add_argument("--smoke", action="store_true",
                   help="tiny arrays, one sample: checks the harness runs (used by the tests)")
    args = p.parse_args(argv)
    if args.threads < 1:
        p.error("--threads must be >= 1")
    if args.repeat is not None and args.repeat < 1:
        p.error("--repeat must be >= 1")
    return args


def run_suite(suite, opts, json_path, argv):
    """Run bench/SUITE.py's run(opts, json_path, argv); json_path None: the suite's default
    (bench/results/SUITE-HOST.json, see _report.default_json_path)."""
    try:
        module = importlib.import_module(f"bench.{suite}")
    except ModuleNotFoundError as exc:
        if exc.name != f"bench.{suite}":
            raise
        print(f"bench {suite}: bench/{suite}.py is not there yet; skipped", file=sys.stderr)
        return None
    return module.run(opts, json_path, argv=argv)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["plot"]:                    # charts of existing result files
        from bench import plot
        return plot.main(argv[1:])
    args = parse_args(argv)
    if args.plot:
        from bench import plot
        plot._mpl()                             # fail before the run when matplotlib is absent
    opts = _harness.Options.make(args.threads, args.repeat, args.quick, args.smoke)
    try:
        if args.suite != "all":
            doc = run_suite(args.suite, opts, args.json, argv)
            if args.plot:
                _plot({args.suite: doc}, args)
            return 0
        docs = {}
        for suite in SUITES:
            docs[suite] = run_suite(suite, opts, None, argv)
            print(file=sys.stdout, flush=True)
        if args.plot:
            _plot(docs, args)
        if args.json:
            os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
            with open(args.json, "w") as f:
                json.dump(docs, f, indent=1, default=str)
            print(f"results of every suite written to {args.json}")
        return 0
    except _libs.GgmlCyMissing as exc:
        print(f"python -m bench: {exc}", file=sys.stderr)
        return 2


def _plot(docs, args):
    from bench import plot
    out = plot.DEFAULT_OUT if args.plot is True else args.plot
    for suite, doc in docs.items():
        if not doc:
            print(f"bench {suite}: no result document to plot (a --smoke run writes one "
                  "only with --json PATH)", file=sys.stderr)
            continue
        host = doc["meta"].get("machine", {}).get("hostname", "local")
        tag = (os.path.splitext(os.path.basename(args.json))[0]
               if args.json and args.suite != "all" else f"{suite}-{host}")
        for png in plot.plot_docs([(tag, doc)], out):
            print(f"chart written to {png}")


if __name__ == "__main__":
    sys.exit(main())
