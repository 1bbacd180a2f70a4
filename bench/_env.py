"""What a result depends on: the machine, the build of ggml_cy, library versions, threads.

Printed first by every suite and stored under "meta" in its JSON, so that two runs can be
compared knowing what differed. Every probe is best-effort: a missing file or tool gives
"unknown", never an exception.
"""
from __future__ import annotations

import datetime
import importlib
import os
import pathlib
import platform
import socket
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]

# CPU flags that decide which kernels a build can use (the full list is long and noisy).
SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
              "avx512_fp16", "avx512_bf16", "asimd", "sve")


def _read(path):
    try:
        return pathlib.Path(path).read_text()
    except OSError:
        return ""


def cpu_model():
    """'model name', plus family/model numbers when the name is vague ('AMD EPYC')."""
    fields = {}
    for line in _read("/proc/cpuinfo").splitlines():
        if ":" in line:
            key, value = (x.strip() for x in line.split(":", 1))
            fields.setdefault(key, value)
    name = fields.get("model name") or platform.processor() or platform.machine() or "unknown"
    if "cpu family" in fields and "model" in fields:
        name += f" (family {fields['cpu family']}, model {fields['model']})"
    return name


def cpu_flags():
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith(("flags", "Features")):
            have = set(line.split(":", 1)[1].split())
            return [f for f in SIMD_FLAGS if f in have]
    return []


def caches():
    """e.g. 'L1d 32K, L2 512K, L3 32768K' (per core / shared as the kernel reports)."""
    out = []
    base = pathlib.Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in sorted(base.glob("index*")):
        kind = _read(idx / "type").strip()
        if kind == "Instruction":
            continue
        level = _read(idx / "level").strip()
        size = _read(idx / "size").strip()
        out.append(f"L{level}{'d' if kind == 'Data' else ''} {size}")
    return ", ".join(out) or "unknown"


def memory_gib():
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal"):
            return round(int(line.split()[1]) / 2**20, 1)
    return None


def load_average():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def usable_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def git_revision():
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10)
        return rev.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def version_of(name):
    try:
        return importlib.import_module(name).__version__
    except Exception:
        return None


def blas_info():
    """numpy's BLAS (name, version, threads) through threadpoolctl, when installed."""
    try:
        import threadpoolctl
    except ImportError:
        return None
    try:
        import numpy  # noqa: F401  (loads the BLAS so that threadpoolctl sees it)
        for pool in threadpoolctl.threadpool_info():
            if pool.get("user_api") == "blas":
                return {k: pool.get(k) for k in ("internal_api", "version", "num_threads",
                                                  "architecture", "threading_layer")}
    except Exception:
        return None
    return None


def build_config(ggml_cy):
    """ggml_cy._build_config (written by setup.py) plus where the package was imported from."""
    info = {"path": os.path.dirname(getattr(ggml_cy, "__file__", "") or ""),
            "version": getattr(ggml_cy, "__version__", None)}
    info["in_place"] = info["path"].startswith(str(REPO))
    try:
        cfg = importlib.import_module("ggml_cy._build_config")
        for key in ("OPENMP", "SIMD", "MARCH_FLAGS", "CFLAGS", "DEBUG", "CUDA_BUILT",
                    "LEVEL_FLAGS"):
            info[key.lower()] = getattr(cfg, key, None)
        try:   # the CPU dispatch level the kernels run at (ggml_cy/core/_startup.py)
            info["dispatch_level"] = importlib.import_module(
                "ggml_cy.core._startup").dispatch_state.get("level")
        except ImportError:
            pass
    except ImportError:
        info["build_config"] = "missing (ggml_cy/_build_config.py is written by setup.py)"
    get = getattr(ggml_cy, "get_num_threads", None)
    if get is not None:
        try:
            info["default_threads"] = get()
        except Exception:
            pass
    return info


def environment(ggml_cy, threads, suite, argv=None, extra=None):
    """The "meta" record of a run."""
    meta = {
        "suite": suite,
        "command": "python -m bench " + " ".join(argv if argv is not None else sys.argv[1:]),
        "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git": git_revision(),
        "machine": {
            "hostname": socket.gethostname() or "local",
            "platform": platform.platform(),
            "cpu": cpu_model(),
            "logical_cores": os.cpu_count(),
            "usable_cores": usable_cores(),
            "simd_flags": cpu_flags(),
            "caches": caches(),
            "memory_gib": memory_gib(),
            "load_average_start": load_average(),
        },
        "build": build_config(ggml_cy) if ggml_cy is not None else None,
        "versions": {
            "python": platform.python_version(),
            "numpy": version_of("numpy"),
            "numexpr": version_of("numexpr"),
            "torch": version_of("torch"),
            "threadpoolctl": version_of("threadpoolctl"),
        },
        "blas": blas_info(),
        "threads": threads,
        # the user's OpenMP settings (ggml_cy's import leaves os.environ as it was)
        "env": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "GGML_CY_NUM_THREADS",
                                           "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                           "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "GGML_CY_SPINCOUNT")
                if k in os.environ},
    }
    if extra:
        meta.update(extra)
    return meta


def format_header(meta, notes=()):
    """The lines printed before a suite's table."""
    m, b, v = meta["machine"], meta.get("build") or {}, meta["versions"]
    load = m.get("load_average_start")
    lines = [
        f"== ggml_cy bench: {meta['suite']} ==  {meta['started_utc']}  git {meta.get('git')}",
        f"machine : {m['cpu']}, {m['logical_cores']} logical cores "
        f"({m['usable_cores']} usable), {m['memory_gib']} GiB, caches {m['caches']}",
        f"          SIMD flags: {' '.join(m['simd_flags']) or 'none found'};  "
        f"load average at start {load}  ({m['platform']})",
    ]
    if b:
        where = "in-place build" if b.get("in_place") else "installed"
        lines.append(f"ggml_cy : {b.get('version')} ({where}: {b.get('path')})")
        lines.append(f"build   : OpenMP {b.get('openmp')}, SIMD {' '.join(b.get('simd') or [])}, "
                     f"CFLAGS {' '.join((b.get('march_flags') or []) + (b.get('cflags') or []))}"
                     + (f", kernels at CPU level {b['dispatch_level']}"
                        if b.get("dispatch_level") else ""))
    else:
        lines.append("ggml_cy : not importable (see the message above)")
    vers = ", ".join(f"{k} {val}" for k, val in v.items() if val) + ", " + ", ".join(
        f"{k} not installed" for k, val in v.items() if not val)
    lines.append(f"versions: {vers.rstrip(', ')}")
    if meta.get("blas"):
        bl = meta["blas"]
        lines.append(f"BLAS    : {bl.get('internal_api')} {bl.get('version')} "
                     f"({bl.get('architecture')}, {bl.get('num_threads')} threads by default)")
    lines.append(f"threads : {meta['threads']} for every library that takes a thread count"
                 + (f"; env {meta['env']}" if meta.get("env") else ""))
    lines.extend(notes)
    return lines
