#!/usr/bin/env python3
"""Runs numexpr's own test suite (numexpr/tests/test_numexpr.py) against ggml_cy.numexpr.

The test file is taken, in this order, from ``--source`` (the test file itself, a
folder holding it such as an unpacked sdist or a git checkout of pydata/numexpr, or the
sdist ``numexpr-X.Y.Z.tar.gz`` from ``pip download --no-binary :all: --no-deps
numexpr==2.14.2``), else from an installed numexpr package (its wheel ships the tests).
Only the imports are rewritten (``import numexpr`` -> ``import ggml_cy.numexpr as
numexpr`` and the like, also inside the subprocess scripts the tests run); the tests run
unchanged under pytest in a temporary folder.

Every failure is matched against KNOWN (test id pattern -> reason, also listed in
README's numexpr section); the script prints the counts and exits 1 when a test fails
that is not listed (or, with --strict-known, when a listed one passes).

    python tools/run_numexpr_suite.py                 # after tools/build.sh or pip install .
    python tools/run_numexpr_suite.py --source numexpr-2.14.2.tar.gz -- -x -q
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# test-id regex -> why it fails on ggml_cy.numexpr (kept in step with README)
KNOWN = {
    r"test_str_contains|test_strings::|test_sanitize": (
        "string arrays and contains(): not implemented (NotImplementedError)"),
    r"test_reductions|test_r0_reuse|test_disassemble": (
        "checks numexpr's bytecode with disassemble(); ggml_cy has no bytecode"),
    r"test_constant_deduplication|test_nan_constant|test_f32_constant": (
        "inspects numexpr's ConstantNode / compiled constants (internal classes)"),
    r"test_ex_uses_vml": "inspects numexpr.necompiler (numexpr's compiler module)",
    r"test_threading_config|test_max_threads|test_numexpr_num_threads|"
    r"test_omp_num_threads|test_vml_threads": (
        "NUMEXPR_MAX_THREADS / NUMEXPR_NUM_THREADS and the VML thread pool are numexpr's "
        "own; ggml_cy reads GGML_CY_NUM_THREADS / OMP_NUM_THREADS"),
}


def _find_source(arg):
    if arg:
        if os.path.isfile(arg) and arg.endswith(".py"):
            return open(arg).read(), arg
        if os.path.isdir(arg):
            for dirpath, _dirs, files in os.walk(arg):
                if "test_numexpr.py" in files:
                    p = os.path.join(dirpath, "test_numexpr.py")
                    return open(p).read(), p
            sys.exit(f"no test_numexpr.py under {arg}")
        if tarfile.is_tarfile(arg):
            with tarfile.open(arg) as tf:
                for m in tf.getmembers():
                    if m.name.endswith("numexpr/tests/test_numexpr.py") and m.isfile():
                        return tf.extractfile(m).read().decode(), f"{arg}:{m.name}"
            sys.exit(f"{arg} holds no numexpr/tests/test_numexpr.py")
        sys.exit(f"--source {arg}: not a file, folder or tarball")
    try:
        import importlib.util
        spec = importlib.util.find_spec("numexpr")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        p = os.path.join(os.path.dirname(spec.origin), "tests", "test_numexpr.py")
        if os.path.exists(p):
            return open(p).read(), p
    sys.exit("numexpr's test file was not found: pass --source (get it with "
             "`pip download --no-binary :all: --no-deps numexpr==2.14.2`)")


def rewrite(text):
    """numexpr imports -> ggml_cy.numexpr (nothing else changes)."""
    text = re.sub(r"^import numexpr$", "import ggml_cy.numexpr as numexpr", text, flags=re.M)
    text = re.sub(r"^from numexpr import", "from ggml_cy.numexpr import", text, flags=re.M)
    text = re.sub(r"^from numexpr\.utils import (.*)$",
                  r"from ggml_cy.numexpr import \1", text, flags=re.M)
    # internal classes ggml_cy does not have: the tests that use them fail, not the module
    text = re.sub(r"^from numexpr\.expressions import (\w+)$",
                  r"\1 = None  # numexpr.expressions.\1: not in ggml_cy.numexpr",
                  text, flags=re.M)
    # scripts run in subprocesses
    text = text.replace("import numexpr as ne", "import ggml_cy.numexpr as ne")
    text = text.replace('"import numexpr"', '"import ggml_cy.numexpr as numexpr"')
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", help="test_numexpr.py, a folder or the numexpr sdist")
    ap.add_argument("--json", help="write the outcome per test id here")
    ap.add_argument("--strict-known", action="store_true",
                    help="also fail when a test listed in KNOWN passes")
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args(argv)
    text, where = _find_source(args.source)
    with tempfile.TemporaryDirectory() as tmp:
        test = os.path.join(tmp, "test_numexpr_on_ggml_cy.py")
        with open(test, "w") as f:
            f.write(rewrite(text))
        with open(os.path.join(tmp, "conftest.py"), "w") as f:
            f.write("def pytest_configure(config):\n"
                    "    config.addinivalue_line('markers', 'thread_unsafe: numexpr mark')\n")
        report = os.path.join(tmp, "report.xml")
        env = dict(os.environ)
        # (pkg) the tree's in-place build when there is one, else the installed ggml_cy:
        # an unbuilt source tree must not shadow an install
        import glob
        where = ROOT
        if not glob.glob(os.path.join(ROOT, "ggml_cy", "core", "_core*.so")):
            import importlib.util
            spec = importlib.util.find_spec("ggml_cy")
            if spec is not None and spec.origin:
                where = os.path.dirname(os.path.dirname(spec.origin))
        env["PYTHONPATH"] = where + os.pathsep + env.get("PYTHONPATH", "")
        cmd = [sys.executable, "-m", "pytest", test, "-q", "-p", "no:cacheprovider",
               "--rootdir", tmp, f"--junitxml={report}", "-o", "addopts=",
               *args.pytest_args]
        print(f"numexpr suite: {where}\n$ {' '.join(cmd)}", flush=True)
        subprocess.run(cmd, env=env, cwd=tmp)
        outcomes = _read_junit(report)
    counts = {}
    unexpected, known_passing = [], []
    for tid, outcome in sorted(outcomes.items()):
        counts[outcome] = counts.get(outcome, 0) + 1
        reason = next((r for pat, r in KNOWN.items() if re.search(pat, tid)), None)
        if outcome == "failed" and reason is None:
            unexpected.append(tid)
        if outcome == "passed" and reason is not None:
            known_passing.append(tid)
    failed_known = [t for t, o in outcomes.items() if o == "failed"
                    and any(re.search(p, t) for p in KNOWN)]
    print("\nnumexpr suite on ggml_cy.numexpr: " +
          ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    by_reason = {}
    for t in failed_known:
        r = next(r for p, r in KNOWN.items() if re.search(p, t))
        by_reason.setdefault(r, []).append(t)
    for r, ts in by_reason.items():
        print(f"  known ({len(ts)}): {r}")
    if unexpected:
        print(f"UNEXPECTED failures ({len(unexpected)}):")
        for t in unexpected[:200]:
            print("  ", t)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"source": where, "counts": counts, "outcomes": outcomes}, f, indent=1)
    if unexpected or (args.strict_known and known_passing):
        return 1
    return 0


def _read_junit(path):
    import xml.etree.ElementTree as ET
    out = {}
    if not os.path.exists(path):
        return out
    for case in ET.parse(path).getroot().iter("testcase"):
        tid = f"{case.get('classname')}::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            out[tid] = "failed"
        elif case.find("skipped") is not None:
            out[tid] = "skipped"
        else:
            out[tid] = "passed"
    return out


if __name__ == "__main__":
    sys.exit(main())
