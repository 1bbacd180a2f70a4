"""PNG charts of bench results (matplotlib: ``pip install 'ggml_cy[plot]'``).

    python -m bench cpu --plot                       # run, then chart this run
    python -m bench plot bench/results/*.json [--out DIR] [--scaling A.json B.json ...]

For each result file (one suite on one machine) it writes, under ``--out`` (default
bench/results/plots/):

* ``SUITE-HOST-speedup.png``: ggml_cy's speed-up against every peer per case (peer's
  median time / ggml_cy's, log scale; right of the line at 1 = ggml_cy faster);
* ``SUITE-HOST-roofline.png``: effective GB/s of every library per case against the
  roofline the run measured (plain and non-temporal STREAM add), when it has one;

and for the runs given with ``--scaling`` (the same suite at several ``--threads``),
``SUITE-HOST-scaling.png``: GB/s against the thread count for the largest cases. The
numbers are the JSON's own (medians of the run); nothing is measured here.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
DEFAULT_OUT = RESULTS / "plots"
COLORS = {"ggml_cy": "#1f77b4", "numpy": "#ff7f0e", "numexpr": "#2ca02c",
          "torch": "#d62728", "cupy": "#9467bd"}


def _mpl():
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("python -m bench --plot needs matplotlib: pip install "
                         "'ggml_cy[plot]' (or pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def load(path):
    with open(path) as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or "results" not in doc or "meta" not in doc:
        raise ValueError(f"{path}: not a bench result file (no 'meta'/'results')")
    return doc


def _tag(doc, path):
    stem = pathlib.Path(path).stem
    return stem


def _median(r, lib):
    t = r.get("timings", {}).get(lib)
    return None if not t else t.get("median_s")


def _title(doc, what):
    m = doc["meta"]
    mach = m.get("machine", {})
    dev = mach.get("cpu") or mach.get("gpu") or m.get("device", {}).get("name", "")
    when = (m.get("started_utc") or "")[:16].replace("T", " ")
    return (f"{what} - {m.get('suite', '?')} suite, {dev}, {m.get('threads', '?')} threads, "
            f"{when} UTC, git {m.get('git', '?')}")


def speedup_chart(doc, out_png):
    """Horizontal bars: ggml_cy's speed-up against each peer, per case."""
    plt = _mpl()
    peers = [lib for lib in doc["libs"] if lib != "ggml_cy"]
    rows = [r for r in doc["results"] if _median(r, "ggml_cy")]
    if not rows or not peers:
        return None
    h = max(3.0, 0.22 * len(rows) * max(1, len(peers)) + 1.5)
    fig, ax = plt.subplots(figsize=(10, h))
    bar = 0.8 / len(peers)
    for k, peer in enumerate(peers):
        ys, xs = [], []
        for i, r in enumerate(rows):
            mp, mg = _median(r, peer), _median(r, "ggml_cy")
            if mp and mg:
                ys.append(i + k * bar)
                xs.append(mp / mg)
        ax.barh(ys, xs, height=bar, color=COLORS.get(peer), label=f"vs {peer}")
    ax.axvline(1.0, color="black", lw=1)
    ax.set_xscale("log")
    ax.set_yticks([i + 0.4 - bar / 2 for i in range(len(rows))])
    ax.set_yticklabels([r["name"] for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("speed-up of ggml_cy (peer median time / ggml_cy median time; >1: faster)")
    ax.set_title(_title(doc, "ggml_cy speed-up"), fontsize=8)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)
    return out_png


def roofline_chart(doc, out_png):
    """GB/s per case for every library, with the run's roofline as horizontal lines."""
    roof = doc.get("roofline") or {}
    plain, nt = roof.get("plain_gbps"), roof.get("nontemporal_gbps")
    rows = [r for r in doc["results"] if r.get("gbps") and r.get("nbytes")]
    if not rows or not (plain or nt):
        return None
    plt = _mpl()
    libs = doc["libs"]
    fig, ax = plt.subplots(figsize=(max(8, 0.28 * len(rows) + 3), 5.5))
    width = 0.8 / len(libs)
    for k, lib in enumerate(libs):
        xs = [i + k * width for i, r in enumerate(rows) if r["gbps"].get(lib)]
        ys = [r["gbps"][lib] for r in rows if r["gbps"].get(lib)]
        ax.bar(xs, ys, width=width, color=COLORS.get(lib), label=lib)
    if plain:
        ax.axhline(plain, color="black", ls="--", lw=1, label=f"roofline {plain:.1f} GB/s")
    if nt:
        ax.axhline(nt, color="gray", ls=":", lw=1.2,
                   label=f"roofline non-temporal {nt:.1f} GB/s")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(rows))])
    ax.set_xticklabels([r["name"] for r in rows], rotation=75, ha="right", fontsize=6)
    ax.set_yscale("log")
    ax.set_ylabel("effective GB/s (bytes read + written / median time)")
    ax.set_title(_title(doc, "GB/s against the roofline"), fontsize=8)
    ax.legend(fontsize=7, ncol=3)
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)
    return out_png


def scaling_chart(docs, out_png, max_cases=8):
    """GB/s against threads for the largest cases common to every run (one line per
    library and case)."""
    docs = sorted(docs, key=lambda d: d["meta"].get("threads", 0))
    threads = [d["meta"].get("threads") for d in docs]
    if len(docs) < 2 or len(set(threads)) < 2:
        raise ValueError("thread scaling needs runs of one suite at two or more --threads")
    by_name = [{r["name"]: r for r in d["results"]} for d in docs]
    common = [n for n in by_name[0] if all(n in b for b in by_name)
              and by_name[0][n].get("nbytes")]
    common.sort(key=lambda n: by_name[0][n]["nbytes"], reverse=True)
    cases = common[:max_cases]
    if not cases:
        raise ValueError("the runs share no case with a byte count")
    plt = _mpl()
    libs = [lib for lib in docs[0]["libs"] if all(lib in d["libs"] for d in docs)]
    n = len(cases)
    cols = min(4, n)
    rows_ = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows_, cols, figsize=(3.2 * cols, 2.8 * rows_), squeeze=False)
    for ax, name in zip(axes.flat, cases):
        for lib in libs:
            ys = [b[name].get("gbps", {}).get(lib) for b in by_name]
            if any(y is None for y in ys):
                continue
            ax.plot(threads, ys, marker="o", color=COLORS.get(lib), label=lib)
        roof = [(d.get("roofline") or {}).get("plain_gbps") for d in docs]
        if all(roof):
            ax.plot(threads, roof, ls="--", color="black", lw=1, label="roofline")
        ax.set_title(name, fontsize=8)
        ax.set_xticks(threads)
        ax.set_xlabel("threads", fontsize=7)
        ax.set_ylabel("GB/s", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=6)
    m = docs[0]["meta"]
    fig.suptitle(f"thread scaling - {m.get('suite')} suite, "
                 f"{m.get('machine', {}).get('cpu', '')}, threads {threads}", fontsize=9)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)
    return out_png


def plot_docs(tagged, out_dir=DEFAULT_OUT):
    """Speed-up and roofline charts of (tag, result document) pairs; returns the PNGs."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for tag, doc in tagged:
        for fn, suffix in ((speedup_chart, "speedup"), (roofline_chart, "roofline")):
            png = fn(doc, out_dir / f"{tag}-{suffix}.png")
            if png:
                written.append(str(png))
    return written


def plot_files(paths, out_dir=DEFAULT_OUT, scaling=()):
    """Charts of each result file (and of the scaling runs); returns the PNG paths."""
    out_dir = pathlib.Path(out_dir)
    written = plot_docs([(_tag(None, p), load(p)) for p in paths], out_dir)
    if scaling:
        docs = [load(p) for p in scaling]
        m = docs[0]["meta"]
        tag = f"{m.get('suite', 'bench')}-{m.get('machine', {}).get('hostname', 'local')}"
        written.append(str(scaling_chart(docs, out_dir / f"{tag}-scaling.png")))
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m bench plot",
                                 description="PNG charts of bench result files")
    ap.add_argument("files", nargs="*", help="result JSON files (bench/results/*.json)")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNGs")
    ap.add_argument("--scaling", nargs="+", default=(),
                    help="runs of one suite at several --threads: a thread-scaling chart")
    args = ap.parse_args(argv)
    if not args.files and not args.scaling:
        ap.error("give result files and/or --scaling files")
    try:
        written = plot_files(args.files, args.out, args.scaling)
    except (OSError, ValueError) as e:
        print(f"python -m bench plot: {e}", file=sys.stderr)
        return 2
    for w in written:
        print(f"wrote {os.path.relpath(w)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
