"""The last-level cache (LLC) this process can use, asked of the machine once at import.

Why it matters (issue 14): a non-temporal ("streaming") store skips the read-for-ownership
of each output line, which saves a quarter of the memory traffic of ``c = a + b`` when the
arrays live in DRAM, but it also writes the line out of every cache level. When a call's
arrays fit in the LLC (a 16-core Xeon has hundreds of MB of L3: 1e7-element arrays fit),
the same stores turn cache-speed work into DRAM-speed work. The kernels (``_kernels``) and
the fused executor (``_fused``) therefore stream only when the call's working set (bytes
read + written) exceeds the LLC measured here.

Sources, first that answers:
  1. ``GGML_CY_LLC_BYTES`` (bytes, or with a K/M/G suffix: "96M"); malformed values give a
     RuntimeWarning and are ignored;
  2. Linux sysfs ``/sys/devices/system/cpu/cpuN/cache/index*``: for every CPU this process
     may run on, its highest-level data/unified cache; distinct instances (one per socket
     or per core complex) are added up, since threads spread over them;
  3. ``sysconf(_SC_LEVEL3_CACHE_SIZE)`` (then level 2), which glibc answers from CPUID;
  4. an assumed 32 MiB.
"""
import os
import warnings

SYSFS_CPU = "/sys/devices/system/cpu"
ENV = "GGML_CY_LLC_BYTES"
DEFAULT_BYTES = 32 << 20
_MAX_CPUS_SCANNED = 1024
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text):
    """'32768K' -> 33554432; '96M', '1G', '4096' (bytes). ValueError when malformed."""
    if not isinstance(text, str):
        raise TypeError(f"cache size must be a str, not {type(text).__name__}")
    s = text.strip().upper()
    if s.endswith("IB"):
        s = s[:-2]
    elif s.endswith("B"):
        s = s[:-1]
    unit = s[-1:] if s[-1:] in ("K", "M", "G") else ""
    digits = s[:-1] if unit else s
    if not digits.isdigit():
        raise ValueError(f"not a cache size: {text!r}")
    value = int(digits) * _UNITS[unit]
    if value <= 0 or value > (1 << 50):
        raise ValueError(f"cache size out of range: {text!r}")
    return value


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _cpu_ids():
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = list(range(os.cpu_count() or 1))
    return cpus[:_MAX_CPUS_SCANNED]


def from_sysfs(cpus=None, root=SYSFS_CPU):
    """(bytes, description) of the last-level cache the given CPUs reach together, from
    sysfs; None when sysfs has no cache information."""
    if cpus is None:
        cpus = _cpu_ids()
    best_level, instances = 0, {}
    for cpu in cpus:
        base = os.path.join(root, f"cpu{cpu}", "cache")
        try:
            entries = [e for e in os.listdir(base) if e.startswith("index")]
        except OSError:
            continue
        top = None
        for e in entries:
            d = os.path.join(base, e)
            kind = _read(os.path.join(d, "type"))
            level = _read(os.path.join(d, "level"))
            size = _read(os.path.join(d, "size"))
            if kind not in ("Unified", "Data") or not level or not level.isdigit() or not size:
                continue
            try:
                nbytes = parse_size(size)
            except ValueError:
                continue
            shared = _read(os.path.join(d, "shared_cpu_list")) or f"cpu{cpu}"
            if top is None or int(level) > top[0]:
                top = (int(level), nbytes, shared)
        if top is None:
            continue
        if top[0] > best_level:
            best_level, instances = top[0], {}
        if top[0] == best_level:
            instances[top[2]] = top[1]
    if not instances:
        return None
    total = sum(instances.values())
    n = len(instances)
    each = next(iter(instances.values()))
    if n > 1:
        return total, f"sysfs: L{best_level} {_fmt(each)} x {n} instances"
    return total, f"sysfs: L{best_level} {_fmt(each)}, shared by CPUs {next(iter(instances))}"


def from_sysconf(sysconf_llc):
    """(bytes, description) from sysconf(_SC_LEVEL3/2_CACHE_SIZE) (``sysconf_llc()`` returns
    (level, bytes), the C call lives in _kernels), or None."""
    level, nbytes = sysconf_llc()
    if nbytes <= 0:
        return None
    return nbytes, f"sysconf: L{level} {_fmt(nbytes)}"


def _fmt(nbytes):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale and nbytes % (scale // 16 or 1) == 0:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes} bytes"


def detect(environ=None, sysconf_llc=None):
    """(bytes, description): the LLC the kernels plan with (see the module docstring)."""
    environ = os.environ if environ is None else environ
    raw = environ.get(ENV)
    if raw is not None and raw.strip():
        try:
            n = parse_size(raw)
            return n, f"{ENV}={raw.strip()}"
        except (TypeError, ValueError):
            warnings.warn(f"ggml_cy: ignoring {ENV}={raw!r} (expected a size in bytes, "
                          "optionally with a K/M/G suffix)", RuntimeWarning, stacklevel=2)
    sources = [from_sysfs]
    if sysconf_llc is not None:
        sources.append(lambda: from_sysconf(sysconf_llc))
    for source in sources:
        try:
            got = source()
        except Exception:       # a strange /sys must never stop the import
            got = None
        if got is not None:
            return got
    return DEFAULT_BYTES, f"assumed {_fmt(DEFAULT_BYTES)} (the machine did not say)"


def fmt(nbytes):
    """32 MiB, 1.5 GiB, ... (show_config)."""
    return _fmt(nbytes)
