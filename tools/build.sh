#!/usr/bin/env bash
# Developer in-place build, serialized with a lock so that parallel work in one tree does
# not run two compilers over the same files. Usage: tools/build.sh [module,module...]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then export GGML_CY_ONLY="$1"; fi
exec flock /tmp/ggml_cy_build.lock python3 setup.py -q build_ext --inplace
