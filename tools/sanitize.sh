#!/usr/bin/env bash
# Sanitizer run: builds ggml_cy a second time with -fsanitize=... (setup.py's
# GGML_CY_SANITIZE hunk: -O1 -g -fno-omit-frame-pointer instead of -O3; OpenMP flags and
# -march kept) in a separate folder, and runs a test subset under it. Any sanitizer report
# (or failing test) fails the run.
#
#   tools/sanitize.sh asan    AddressSanitizer + UndefinedBehaviorSanitizer (CI)
#   tools/sanitize.sh ubsan   UndefinedBehaviorSanitizer alone
#   tools/sanitize.sh tsan    ThreadSanitizer over the threading tests (on demand):
#                             Python threads plus ggml_cy's pool; OMP_NUM_THREADS=1
#   extra arguments go to pytest, e.g. tools/sanitize.sh asan tests/test_rel_strided_io.py
#
# Environment: GGML_CY_SANITIZE_DIR (build folder; default build/sanitize-<mode>),
# GGML_CY_BUILD_LOCK (the build lock tools/build.sh shares; empty: none),
# GGML_CY_FUZZ_SECONDS (fuzz budget per fuzz test; 5 here unless set).
# How: the ASan runtime is preloaded into the Python process (LD_PRELOAD), Python's own
# allocator is off (PYTHONMALLOC=malloc) so ASan sees every allocation,
# allocator_may_return_null=1 keeps the huge-allocation tests' MemoryError, and
# tools/lsan_cpython.supp hides CPython's own process-lifetime allocations from the leak
# checker. RSS-growth tests are deselected (ASan's quarantine holds freed memory).
set -euo pipefail
# bash reads a script as it runs: run from a copy, so that editing this file (or a git
# checkout) during a run cannot break the run
if [ -z "${GCY_SANITIZE_ROOT:-}" ]; then
    copy="$(mktemp)"
    cp "$0" "$copy"
    GCY_SANITIZE_ROOT="$(cd "$(dirname "$0")/.." && pwd)" exec bash "$copy" "$@"
fi
root="$GCY_SANITIZE_ROOT"
unset GCY_SANITIZE_ROOT
rm -f -- "$0"       # the copy (bash keeps reading it through its open descriptor)
mode="${1:-asan}"
shift || true
case "$mode" in
    asan) flags="address,undefined" ;;
    ubsan) flags="undefined" ;;
    tsan) flags="thread" ;;
    *) echo "usage: tools/sanitize.sh asan|ubsan|tsan [pytest args]" >&2; exit 2 ;;
esac
out="${GGML_CY_SANITIZE_DIR:-$root/build/sanitize-$mode}"
src="$out/src"
logs="$out/logs"
mkdir -p "$src"
rm -rf "$logs"
mkdir -p "$logs"
start=$(date +%s)
# the real interpreter (not a pyenv shim: shims are shell scripts, and the shell would run
# under the preloaded runtime too)
py="${PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}"

# 1. the source tree (tracked and new, not ignored files), synced into the build folder
(cd "$root" && git ls-files -z --cached --others --exclude-standard) |
    (cd "$root" && xargs -0 tar -cf - --ignore-failed-read 2>/dev/null) | tar -xif - -C "$src"

# 2. the sanitizer build (no CUDA: the CPU paths are what these runtimes check). A fresh
# environment (CI's venv) has the runtime and test dependencies only: add the build ones.
if ! "$py" -c "import Cython, setuptools, numpy" 2>/dev/null; then
    reqs=$("$py" -c "import tomllib; print(' '.join(tomllib.load(open('$root/pyproject.toml', 'rb'))['build-system']['requires']))")
    # shellcheck disable=SC2086
    "$py" -m pip install -q $reqs
fi
cc="gcc"
if command -v ccache >/dev/null; then cc="ccache gcc"; fi
(
    cd "$src"
    # one variant per module, for this CPU (GGML_CY_NATIVE: no per-level copies)
    export GGML_CY_SANITIZE="$flags" GGML_CY_CUDA=0 GGML_CY_NATIVE=1 CC="$cc"
    export CCACHE_BASEDIR="$src" CCACHE_NOHASHDIR=1
    lock="${GGML_CY_BUILD_LOCK-/tmp/ggml_cy_build.lock}"    # shared with tools/build.sh
    if [ -n "$lock" ]; then
        flock "$lock" "$py" setup.py -q build_ext --inplace >"$out/build.log" 2>&1
    else
        "$py" setup.py -q build_ext --inplace >"$out/build.log" 2>&1
    fi
) || { tail -40 "$out/build.log"; echo "sanitize: build failed" >&2; exit 1; }
built=$(date +%s)
echo "sanitize[$mode]: built in $((built - start)) s ($out)"

# 3. the tests
if [ $# -gt 0 ]; then
    tests=("$@")
elif [ "$mode" = tsan ]; then
    tests=(tests/test_rel_threads.py tests/test_ops_concurrency.py tests/test_eager_threads.py)
else
    tests=(tests/test_kernels_layout.py tests/test_kernels_ops.py tests/test_graph_fused.py
           tests/test_graph_evaluate.py tests/test_graph_backend.py tests/test_graph_mul_mat.py
           tests/test_graph_structure.py tests/test_expr_reliability.py tests/test_expr_fuzz.py
           tests/test_core_views.py tests/test_core_badinput.py tests/test_rel_strided_io.py
           tests/test_rel_views.py tests/test_rel_threads.py tests/test_rel_align.py
           tests/test_kernels_srun.py tests/test_gemm_paths.py tests/test_gemm_thin.py
           tests/test_gemm_ndeal.py)
    for f in tests/test_gguf_read.py tests/test_gguf_badfiles.py tests/test_gguf_write.py \
             tests/test_gguf_fuzz.py tests/test_quant_*.py tests/test_fuzz_*.py \
             tests/test_ops_norm_softmax.py; do
        [ -e "$src/$f" ] && tests+=("$f")
    done
    for f in tests/test_ops_rope.py tests/test_ops_shape.py; do       # issue 13 (ops2)
        [ -e "$src/$f" ] && tests+=("$f")
    done
    tests+=(tests/test_ops_rows_attn.py)    # issue 13: set_rows, flash_attn_ext (ops3)
fi
existing=()
for f in "${tests[@]}"; do
    case "$f" in -*) existing+=("$f"); continue ;; esac
    [ -e "$src/${f%%::*}" ] && existing+=("$f")
done

export PYTHONPATH="$src" PYTHONMALLOC=malloc PYTHONFAULTHANDLER=1
export GGML_CY_FUZZ_SECONDS="${GGML_CY_FUZZ_SECONDS:-5}" GGML_CY_SANITIZED="$mode"
common="print_stacktrace=1:log_path=$logs/report"
case "$mode" in
    asan)
        export LD_PRELOAD="$(gcc -print-file-name=libasan.so)"
        # leak checking in the pytest process only: its children (test subprocesses,
        # and whatever tools they run: sh, uname...) inherit detect_leaks=0 (below)
        # intercept_tls_get_addr=0: gcc <= 13's runtime takes a dynamic-TLS block that happens
        # to start 16 bytes past a page for a pre-2.25 glibc block with a header, reads the
        # two words before it as a range, and LSan's tracer then faults scanning that range
        # at exit ("Tracer caught signal 11", exit 1 with every test passed; seen once in CI
        # at 8ad0869). Without the interceptor LSan still scans each thread's static TLS and,
        # through the DTV there, the malloc'd dynamic blocks
        export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=0:intercept_tls_get_addr=0:$common:handle_abort=1"
        leak_opts="${ASAN_OPTIONS/detect_leaks=0/detect_leaks=1}"
        export LSAN_OPTIONS="suppressions=$root/tools/lsan_cpython.supp:print_suppressions=0"
        export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
        ;;
    ubsan)
        export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
        ;;
    tsan)
        export LD_PRELOAD="$(gcc -print-file-name=libtsan.so)"
        export TSAN_OPTIONS="$common:halt_on_error=0:second_deadlock_stack=1"
        export OMP_NUM_THREADS=1
        ;;
esac
rc=0
runner='import os, sys, pytest
os.environ["ASAN_OPTIONS"] = os.environ.pop("GCY_CHILD_ASAN_OPTIONS", "")
if not os.environ["ASAN_OPTIONS"]:
    del os.environ["ASAN_OPTIONS"]
sys.exit(pytest.main(sys.argv[1:]))'
(
    cd "$src"
    if [ "$mode" = asan ]; then
        export GCY_CHILD_ASAN_OPTIONS="$ASAN_OPTIONS" ASAN_OPTIONS="$leak_opts"
    fi
    # --capture=sys: reports written to the process's stderr by a sanitizer runtime (UBSan
    # ignores log_path next to ASan) stay visible; a report stops the process (the build
    # uses -fno-sanitize-recover=all), so the run fails
    "$py" -c "$runner" -q -p no:cacheprovider --capture=sys -k "not rss and not ru_maxrss" \
        "${existing[@]}" 2>&1 | tee "$logs/../pytest.log"
    exit "${PIPESTATUS[0]}"
) || rc=$?
unset LD_PRELOAD
end=$(date +%s)
reports=$(find "$logs" -type f -size +0 2>/dev/null | sort || true)
if grep -qE "runtime error:|ERROR: (Address|Thread|Leak)Sanitizer|WARNING: ThreadSanitizer" \
        "$out/pytest.log" 2>/dev/null; then
    grep -E -A12 "runtime error:|ERROR: (Address|Thread|Leak)Sanitizer|WARNING: ThreadSanitizer" \
        "$out/pytest.log" | head -80
    rc=1
fi
if [ -n "$reports" ]; then
    echo "sanitize[$mode]: REPORTS:"
    for f in $reports; do echo "== $f"; head -60 "$f"; done
    rc=1
fi
echo "sanitize[$mode]: tests $((end - built)) s, total $((end - start)) s, pytest rc=$rc"
exit "$rc"
