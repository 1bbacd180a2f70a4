"""Turning CaseResults into the printed table and the JSON record."""
from __future__ import annotations

import json
import os
import pathlib
import socket

RESULTS = pathlib.Path(__file__).resolve().parent / "results"

LIB_CELL = 17   # "  1.23 ms  25.1" : time, then GB/s (or GFLOP/s)
CASE_COL = 34
NOISY_SPREAD = 0.3  # interquartile range / median above this: the time is marked "~"


def default_json_path(suite, opts, tag=None):
    """bench/results/SUITE-TAG[-quick].json, TAG = the host name (or 'local'); a GPU suite
    passes its device name. Smoke runs write nothing unless --json is given."""
    if opts.smoke:
        return None
    tag = tag or socket.gethostname() or "local"
    tag = "".join(c if c.isalnum() or c in "-_." else "-" for c in tag.lower()).strip("-")
    suffix = "-quick" if opts.quick else ""
    return str(RESULTS / f"{suite}-{tag or 'local'}{suffix}.json")


def fmt_time(s):
    if s is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if s >= scale or unit == "ns":
            v = s / scale
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    return "-"


def fmt_rate(v):
    if v is None:
        return ""
    if v >= 100:
        return f"{v:.0f}"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}" if v >= 0.1 else f"{v:.3f}"


def _lib_cell(r, lib):
    if lib in r.errors:
        return "error"
    if lib not in r.timings:
        return "-"
    mark = "!" if lib in r.mismatches else ""
    if r.timings[lib].spread > NOISY_SPREAD:
        mark += "~"
    if r.flops:
        rate = fmt_rate(r.gflops(lib)) + "GF"
    else:
        rate = fmt_rate(r.gbps(lib))
    return f"{fmt_time(r.time(lib)) + mark:>10}{rate:>7}"


def _target_cell(r):
    out = []
    for t, v, ok in r.targets:
        verdict = "n/a" if ok is None else "PASS" if ok else "FAIL"
        out.append(f"{verdict} {t.label}")
    return "; ".join(out)


def format_table(results, libs, ratios, rate_label="GB/s"):
    """Rows of: case | per library: median time and rate | ratios | targets."""
    libs = [lib for lib in libs if any(lib in r.timings or lib in r.errors for r in results)]
    head1 = f"{'case':<{CASE_COL}}" + "".join(f"|{lib:^{LIB_CELL}}" for lib in libs)
    head2 = f"{'':<{CASE_COL}}" + "".join(f"|{'median':>10}{rate_label:>7}" for _ in libs)
    head1 += "|" + "".join(f"{x.header:>9}" for x in ratios) + " | targets"
    head2 += "|" + "".join(f"{'':>9}" for _ in ratios) + " |"
    lines = [head1, head2, "-" * len(head1)]
    group = None
    for r in results:
        if r.case.group != group and group is not None:
            lines.append("")
        group = r.case.group
        if "*" in r.skipped:
            lines.append(f"{r.case.name:<{CASE_COL}}| skipped: {r.skipped['*']}")
            continue
        row = f"{r.case.name:<{CASE_COL}}" + "".join(f"|{_lib_cell(r, lib):>{LIB_CELL}}"
                                                     for lib in libs)
        row += "|" + "".join(f"{fmt_rate(r.ratios.get(x.key)) or '-':>9}" for x in ratios)
        row += " | " + _target_cell(r)
        lines.append(row.rstrip())
    return lines


def format_footnotes(results):
    """Errors, mismatches, skipped libraries, notes, then the target summary."""
    lines = []
    grouped = {}  # (kind, library, message) -> case names: one line per distinct message
    for r in results:
        for kind, items in (("error", r.errors), ("MISMATCH", r.mismatches),
                            ("skipped", r.skipped)):
            for lib, msg in items.items():
                if lib != "*":
                    grouped.setdefault((kind, lib, msg), []).append(r.case.name)
        for note in r.notes:
            grouped.setdefault(("note", "", note), []).append(r.case.name)
    for (kind, lib, msg), names in grouped.items():
        where = names[0] if len(names) == 1 else f"{len(names)} cases ({names[0]}, ...)"
        tag = f" [{lib}]" if lib else ""
        mark = "  (marked '!')" if kind == "MISMATCH" else ""
        lines.append(f"  {kind:<9}{tag} {msg}{mark}: {where}")
    summary = target_summary(results)
    lines.append(f"targets: {summary['pass']} PASS, {summary['fail']} FAIL, "
                 f"{summary['n/a']} not measured")
    for name in summary["failed"]:
        lines.append(f"  FAIL {name}")
    return lines


def target_summary(results):
    s = {"pass": 0, "fail": 0, "n/a": 0, "failed": []}
    for r in results:
        for t, v, ok in r.targets:
            if ok is None:
                s["n/a"] += 1
            elif ok:
                s["pass"] += 1
            else:
                s["fail"] += 1
                s["failed"].append(f"{r.case.name}: {t.label} (measured {v:.3g})")
    return s


def result_record(r):
    return {
        "name": r.case.name,
        "group": r.case.group,
        "params": r.case.params,
        "nbytes": r.nbytes,
        "flops": r.flops,
        "per_op": r.per_op,
        "timings": {lib: {"median_s": t.median_s, "min_s": t.min_s, "q1_s": t.q1_s,
                          "q3_s": t.q3_s, "samples": t.samples, "calls_per_sample": t.inner}
                    for lib, t in r.timings.items()},
        "gbps": {lib: r.gbps(lib) for lib in r.timings if r.nbytes},
        "gflops": {lib: r.gflops(lib) for lib in r.timings if r.flops},
        "ratios": r.ratios,
        "targets": [{"label": t.label, "key": t.key, "threshold": t.threshold, "value": v,
                     "passed": ok} for t, v, ok in r.targets],
        "skipped": r.skipped,
        "errors": r.errors,
        "mismatches": r.mismatches,
        "notes": r.notes,
    }


def write_json(path, meta, results, libs, ratios, extra=None):
    """Write the run atomically (a .tmp file renamed into place)."""
    doc = {
        "meta": meta,
        "libs": list(libs),
        "ratios": [{"key": x.key, "header": x.header} for x in ratios],
        "results": [result_record(r) for r in results],
        "summary": target_summary(results),
    }
    if extra:
        doc.update(extra)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, default=_json_default)
        f.write("\n")
    os.replace(tmp, path)
    return doc


def _json_default(obj):
    try:
        import numpy as np
        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, np.ndarray):
            return obj.tolist()
    except ImportError:
        pass
    if isinstance(obj, (set, tuple)):
        return list(obj)
    return str(obj)


def finish(results, libs, ratios, meta, json_path, out, rate_label="GB/s", extra=None,
           preamble=()):
    """Print the table and its footnotes on `out`, write the JSON; returns the JSON doc."""
    lines = list(preamble) + [""] + format_table(results, libs, ratios, rate_label)
    lines += [""] + format_footnotes(results)
    print("\n".join(lines), file=out, flush=True)
    doc = None
    if json_path:
        doc = write_json(json_path, meta, results, libs, ratios, extra)
        print(f"results written to {json_path}", file=out, flush=True)
    return doc
