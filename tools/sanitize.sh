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
# GGML_CY_FUZZ_SECONDS (fuzz budget per fuzz test; 5 here unless set).
# How: the ASan runtime is preloaded into the Python process (LD_PRELOAD), Python's own
# allocator is off (PYTHONMALLOC=malloc) so ASan sees every allocation,
# allocator_may_return_null=1 keeps the huge-allocation tests' MemoryError, and
# tools/lsan_cpython.supp hides CPython's own process-lifetime allocations from the leak
# checker. RSS-growth tests are deselected (ASan's quarantine holds freed memory).
set -euo pipefail
mode="${1:-asan}"
shift || true
root="$(cd "$(dirname "$0")/.." && pwd)"
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

# 1. the source tree (tracked and new, not ignored files), synced into the build folder
(cd "$root" && git ls-files -z --cached --others --exclude-standard) |
    (cd "$root" && xargs -0 tar -cf - --ignore-failed-read 2>/dev/null) | tar -xif - -C "$src"

# 2. the sanitizer build (no CUDA: the CPU paths are what these runtimes check)
cc="gcc"
if command -v ccache >/dev/null; then cc="ccache gcc"; fi
(
    cd "$src"
    export GGML_CY_SANITIZE="$flags" GGML_CY_CUDA=0 CC="$cc"
    export CCACHE_BASEDIR="$src" CCACHE_NOHASHDIR=1
    flock /tmp/ggml_cy_build.lock python3 setup.py -q build_ext --inplace >"$logs/../build.log" 2>&1
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
           tests/test_rel_views.py tests/test_rel_threads.py tests/test_rel_align.py)
    for f in tests/test_gguf_read.py tests/test_gguf_badfiles.py tests/test_gguf_write.py \
             tests/test_gguf_fuzz.py tests/test_quant_*.py tests/test_fuzz_*.py; do
        [ -e "$src/$f" ] && tests+=("$f")
    done
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
        export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:$common:handle_abort=1"
        export LSAN_OPTIONS="suppressions=$root/tools/lsan_cpython.supp:print_suppressions=0"
        export UBSAN_OPTIONS="$common:halt_on_error=0"
        ;;
    ubsan)
        export UBSAN_OPTIONS="$common:halt_on_error=0"
        ;;
    tsan)
        export LD_PRELOAD="$(gcc -print-file-name=libtsan.so)"
        export TSAN_OPTIONS="$common:halt_on_error=0:second_deadlock_stack=1"
        export OMP_NUM_THREADS=1
        ;;
esac
rc=0
(cd "$src" && python3 -m pytest -q -x -p no:cacheprovider -k "not rss and not ru_maxrss" \
    "${existing[@]}") || rc=$?
unset LD_PRELOAD
end=$(date +%s)
reports=$(find "$logs" -type f -size +0 2>/dev/null | sort || true)
if [ -n "$reports" ]; then
    echo "sanitize[$mode]: REPORTS:"
    for f in $reports; do echo "== $f"; head -60 "$f"; done
    rc=1
fi
echo "sanitize[$mode]: tests $((end - built)) s, total $((end - start)) s, pytest rc=$rc"
exit "$rc"
