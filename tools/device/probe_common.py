"""Shared pieces of the device probes (developer tools, not shipped): a timed block of calls
and the one-JSON-line-per-row output. The probes run as scripts (python3 tools/device/x.py),
so this folder is on sys.path and `import probe_common` finds this file."""
import contextlib
import json
import sys
import time


def block(f, calls):
    """Seconds per call of `calls` back-to-back calls of f."""
    t = time.perf_counter()
    for _ in range(calls):
        f()
    return (time.perf_counter() - t) / calls


def emit(rows, row):
    """Keeps the row and prints it as one JSON line (flushed: a killed run keeps its rows)."""
    rows.append(row)
    print(json.dumps(row), flush=True)


def save(rows):
    """Writes {"rows": rows} to the path given as the first argument, if any."""
    if len(sys.argv) > 1:
        json.dump({"rows": rows}, open(sys.argv[1], "w"), indent=1)


def medians(samples, scale):
    """{name: median of its samples x scale (1e6: microseconds), 3 decimals}."""
    return {k: round(sorted(v)[len(v) // 2] * scale, 3) for k, v in samples.items()}


@contextlib.contextmanager
def tuning_kept(kernels):
    """Runs the block with ggml_cy's size thresholds as the probe sets them, and puts the
    previous values back afterwards (also when the probe fails): yields the previous tuple."""
    old = kernels._set_tuning()
    try:
        yield old
    finally:
        kernels._set_tuning(*old)
