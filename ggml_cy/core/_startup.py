"""What ``import ggml_cy`` does before the first compiled module loads (pure Python).

* **OpenMP spin-wait.** libgomp reads ``GOMP_SPINCOUNT`` once, when the library loads. Its
  default (300 000 spins, milliseconds) lets an idle worker keep a core busy after every
  parallel region; on a machine whose cores are all in use (threads == cores, or a shared
  machine) the spinning worker then takes the core the Python thread needs, and a 2-thread
  call at 1e5-1e6 elements was seen taking 5-7 ms instead of ~20 us. ggml_cy therefore asks
  for a short spin (``GGML_CY_SPINCOUNT``, default 10000) *only while its extension modules
  load the OpenMP runtime*: the variable is put into the environment for the duration of that
  import and removed again, so ``os.environ`` (and every child process) is left exactly as it
  was. The setting is skipped when

  - the user chose OpenMP's own knobs (``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` is set),
  - ``GGML_CY_SPINCOUNT`` is ``default`` (keep libgomp's own spin count),
  - the OpenMP runtime is already loaded in the process (another library loaded it first:
    its settings stand), or the build has no OpenMP.

  libgomp is one runtime per process, so an OpenMP library that shares it and loads after
  ggml_cy sees the same spin count; set ``GGML_CY_SPINCOUNT=default`` to avoid that.
"""
import os
import platform
import warnings

SPIN_ENV = "GGML_CY_SPINCOUNT"
DEFAULT_SPINCOUNT = 10000

# What the last import did, for show_config(): (value applied or None, reason).
spin_applied = (None, "not loaded yet")
# The dispatch level chosen at import (filled in by select_level), for show_config().
dispatch_state = {}


def _openmp_runtime_loaded():
    """True when an OpenMP runtime (libgomp, possibly auditwheel's renamed copy) is mapped."""
    try:
        with open("/proc/self/maps") as f:
            return any("libgomp" in line for line in f)
    except OSError:
        return False


def spin_setting(environ, openmp_built=True, runtime_loaded=None):
    """(value to apply or None, why) for the environment ``environ``."""
    if not openmp_built:
        return None, "build without OpenMP"
    for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        if name in environ:
            return None, f"user's {name}={environ[name]!r}"
    raw = environ.get(SPIN_ENV)
    if raw is None or raw.strip() == "":
        value = DEFAULT_SPINCOUNT
    elif raw.strip().lower() == "default":
        return None, f"{SPIN_ENV}=default (libgomp's own)"
    else:
        try:
            value = int(raw.strip())
            if value < 0:
                raise ValueError
        except ValueError:
            warnings.warn(f"ggml_cy: ignoring {SPIN_ENV}={raw!r} (expected a non-negative "
                          "integer or 'default')", RuntimeWarning, stacklevel=3)
            value = DEFAULT_SPINCOUNT
    if runtime_loaded is None:
        runtime_loaded = _openmp_runtime_loaded()
    if runtime_loaded:
        return None, "OpenMP runtime already loaded by another library"
    return value, f"{SPIN_ENV}" if raw not in (None, "") else "ggml_cy's default"


def import_with_openmp_settings(load, openmp_built=True):
    """Run ``load()`` (the first import of a compiled module, which loads libgomp) with the
    spin-wait setting in the environment, and restore the environment afterwards."""
    global spin_applied
    value, why = spin_setting(os.environ, openmp_built)
    if value is None:
        spin_applied = (None, why)
        return load()
    os.environ["GOMP_SPINCOUNT"] = str(value)
    try:
        result = load()
    finally:
        del os.environ["GOMP_SPINCOUNT"]
    spin_applied = (value, why)
    return result


# ----------------------------------------------------------------------------- CPU features
# The compiler's feature macros (gcc -dM -E) and the Linux /proc/cpuinfo flag that says the
# running CPU (and the kernel) supports the same instructions.
MACRO_TO_CPUINFO = {
    "SSE3": "pni", "SSSE3": "ssse3", "SSE4_1": "sse4_1", "SSE4_2": "sse4_2",
    "POPCNT": "popcnt", "AVX": "avx", "AVX2": "avx2", "FMA": "fma", "F16C": "f16c",
    "BMI": "bmi1", "BMI2": "bmi2", "LZCNT": "abm", "MOVBE": "movbe",
    "AVX512F": "avx512f", "AVX512BW": "avx512bw", "AVX512CD": "avx512cd",
    "AVX512DQ": "avx512dq", "AVX512VL": "avx512vl", "AVX512VNNI": "avx512_vnni",
    "AVX512BF16": "avx512_bf16", "AVX512FP16": "avx512_fp16", "AVX512IFMA": "avx512ifma",
    "AVX512VBMI": "avx512vbmi", "AVX512VBMI2": "avx512_vbmi2",
    "AVX512BITALG": "avx512_bitalg", "AVX512VPOPCNTDQ": "avx512_vpopcntdq",
    "AVXVNNI": "avx_vnni", "GFNI": "gfni", "VAES": "vaes", "VPCLMULQDQ": "vpclmulqdq",
    "AES": "aes", "PCLMUL": "pclmulqdq", "SHA": "sha_ni", "ADX": "adx",
    "ARM_NEON": "asimd", "ARM_FEATURE_FP16_VECTOR_ARITHMETIC": "asimdhp",
    "ARM_FEATURE_DOTPROD": "asimddp",
}

# Dispatch levels, lowest first: name -> the /proc/cpuinfo flags the level's code needs.
X86_LEVELS = {
    "baseline": ("pni", "ssse3", "sse4_1", "sse4_2", "popcnt", "cx16"),      # x86-64-v2
    "avx2": ("avx", "avx2", "fma", "f16c", "bmi1", "bmi2", "abm", "movbe"),  # x86-64-v3
    "avx512": ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"),   # x86-64-v4
    # x86-64-v4 + AVX-512 VNNI (the int8 dot products of the quantized mul_mat); built for
    # the modules that use it only (_build_config.LEVEL_MODULES), the others load from avx512
    "avx512vnni": ("avx512_vnni",),
}
LEVEL_NAMES = tuple(X86_LEVELS)
LEVEL_ENV = "GGML_CY_CPU_FEATURES"

_cpu_flags_cache = None


def cpu_flags():
    """The running CPU's feature flags as Linux reports them (a frozenset; empty where
    /proc/cpuinfo is absent or unreadable)."""
    global _cpu_flags_cache
    if _cpu_flags_cache is None:
        flags = set()
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    if key.strip() in ("flags", "Features"):
                        flags.update(value.split())
                        break
        except OSError:
            pass
        _cpu_flags_cache = frozenset(flags)
    return _cpu_flags_cache


def is_x86():
    return platform.machine().lower() in ("x86_64", "amd64", "i686", "i386")


def cpu_level(flags=None):
    """The highest dispatch level the CPU supports (x86-64), else None."""
    flags = cpu_flags() if flags is None else flags
    best, need = None, set()
    for name, req in X86_LEVELS.items():
        need.update(req)
        if need <= flags:
            best = name
        else:
            break
    return best


def missing_features(macros, flags=None):
    """The compiler feature macros (e.g. ["AVX2", "FMA"]) the running CPU lacks."""
    flags = cpu_flags() if flags is None else flags
    if not flags:
        return []          # nothing known about this CPU: do not refuse
    return [m for m in macros if m in MACRO_TO_CPUINFO and MACRO_TO_CPUINFO[m] not in flags]


def cpu_features_named(flags=None):
    """The CPU's SIMD features, in the compiler's names (lower case), known ones only."""
    flags = cpu_flags() if flags is None else flags
    return [m.lower() for m, f in MACRO_TO_CPUINFO.items() if f in flags]


def check_build(simd):
    """Refuse, with an ImportError naming them, to load code built for instruction sets the
    running CPU lacks (``simd``: the build's lower-case feature names, _build_config.SIMD)."""
    missing = missing_features([name.upper() for name in simd])
    if missing:
        raise ImportError(
            "ggml_cy was compiled for instruction sets this CPU does not have: "
            + ", ".join(m.lower() for m in missing) + ". Rebuild from source on this machine, or "
            "build for a lower target (setup.py's GGML_CY_MARCH, e.g. x86-64-v2).")


# ----------------------------------------------------------------------------- dispatch
class _LevelFinder:
    """A meta-path finder that loads the canonical module names of the dispatched kernel
    modules (ggml_cy.cpu._kernels, ...) from their per-level builds (ggml_cy/cpu/_isa_avx2/
    _kernels*.so, compiled from the same C file, so PyInit__kernels matches). Cython's
    cimports resolve through the import system, so every module that cimports a kernel
    module gets the chosen level's functions. Installed only while ggml_cy imports them."""

    def __init__(self, paths):
        self.paths = paths

    def find_spec(self, fullname, path=None, target=None):
        where = self.paths.get(fullname)
        if where is None:
            return None
        import importlib.util
        return importlib.util.spec_from_file_location(fullname, where)


def _variant_path(pkg_dir, name, level):
    import importlib.machinery
    parts = name.split(".")[1:]                     # drop "ggml_cy"
    folder = os.path.join(pkg_dir, *parts[:-1], f"_isa_{level}")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(folder, parts[-1] + suffix)
        if os.path.exists(path):
            return path
    return None


def choose_level(built, environ=None, flags=None):
    """(level, reason): the best built level the CPU supports, capped by
    GGML_CY_CPU_FEATURES. ``built``: {level: the build's feature names} of the variants."""
    environ = os.environ if environ is None else environ
    flags = cpu_flags() if flags is None else flags
    cap = environ.get(LEVEL_ENV, "").strip().lower()
    if cap and cap not in LEVEL_NAMES:
        warnings.warn(f"ggml_cy: ignoring {LEVEL_ENV}={environ[LEVEL_ENV]!r} (choose from "
                      f"{', '.join(LEVEL_NAMES)})", RuntimeWarning, stacklevel=3)
        cap = ""
    if not built:
        return "baseline", "no per-level kernels in this build"
    cpu = cpu_level(flags) if flags else None
    if cpu is None:
        return "baseline", "CPU features unknown"
    limit = LEVEL_NAMES.index(cpu)
    why = f"best the CPU has ({cpu})"
    if cap and LEVEL_NAMES.index(cap) < limit:
        limit, why = LEVEL_NAMES.index(cap), f"capped by {LEVEL_ENV}={cap}"
    best = "baseline"
    for level in LEVEL_NAMES[1:limit + 1]:
        if level in built and not missing_features([m.upper() for m in built[level]], flags):
            best = level
    if best != LEVEL_NAMES[limit]:
        why += f"; {LEVEL_NAMES[limit]} kernels not built"
    return best, why


def module_levels(level, dispatched, built, level_modules=None):
    """{module: the level whose build it loads from}: ``level`` where that level built the
    module, else the highest lower built level that did (a level may build only some
    modules: ``level_modules`` {level: [modules]}, _build_config.LEVEL_MODULES; a level
    missing from it built them all), else "baseline"."""
    level_modules = level_modules or {}
    top = LEVEL_NAMES.index(level) if level in LEVEL_NAMES else 0
    out = {}
    for name in dispatched:
        pick = "baseline"
        for lv in LEVEL_NAMES[1:top + 1]:
            if lv in built and name in level_modules.get(lv, dispatched):
                pick = lv
        out[name] = pick
    return out


def install_dispatch(pkg_dir, build_config):
    """Choose the level and import the dispatched modules from its build (before anything
    else imports them); falls back to the baseline build if a variant does not load."""
    import importlib
    import sys
    dispatched = list(getattr(build_config, "DISPATCHED", []) or [])
    built = dict(getattr(build_config, "LEVELS", {}) or {})
    level, why = choose_level(built)
    per_module = module_levels(level, dispatched, built,
                               getattr(build_config, "LEVEL_MODULES", None))
    dispatch_state.update(level=level, reason=why, modules=dispatched, built=sorted(built),
                          module_levels=per_module)
    if level == "baseline" or not dispatched:
        return level
    paths = {name: _variant_path(pkg_dir, name, lv) for name, lv in per_module.items()
             if lv != "baseline"}
    missing = [n for n, p in paths.items() if p is None]
    if missing:
        dispatch_state.update(level="baseline", reason=f"{level} files missing: {missing}",
                              module_levels={n: "baseline" for n in dispatched})
        return "baseline"
    finder = _LevelFinder(paths)
    sys.meta_path.insert(0, finder)
    try:
        for name in dispatched:
            importlib.import_module(name)   # those left out of paths: the baseline build
    finally:
        sys.meta_path.remove(finder)
    return level
