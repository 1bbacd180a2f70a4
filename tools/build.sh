#!/usr/bin/env bash
# Developer in-place build, serialized with a lock so that parallel work in one tree (or in
# several worktrees of it) does not run two compilers at once on a small machine; ccache is
# used when installed. Usage: tools/build.sh [module,module...]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then export GGML_CY_ONLY="$1"; fi
if [ -z "${CC:-}" ] && command -v ccache >/dev/null; then export CC="ccache gcc"; fi
# Worktrees of one repo share the cache: paths below the parent folder hash as relative.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}" CCACHE_NOHASHDIR=1
# A developer build compiles the CUDA library for one GPU architecture (sm_90, the H100/H200
# the device rounds use) instead of the release list: half the nvcc time on a 2-core machine.
export GGML_CY_CUDA_ARCH="${GGML_CY_CUDA_ARCH:-90}"
exec flock /tmp/ggml_cy_build.lock python3 setup.py -q build_ext --inplace
