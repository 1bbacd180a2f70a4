#!/usr/bin/env bash
# One device round (developer tool, not shipped): build the tree in place once for the GPU
# machine, then run tools/device/jobs/*.sh (or the jobs named as arguments), each under its own
# time budget (a "# budget: SECONDS" line in the job), and pack every job's output into
# $OUT/res.tgz (the device tool returns at most 8 files). A job gets its output folder as $1,
# writes JSON/logs there, and must not rebuild. Usage on the device:
#   bash tools/device/run_all.sh [--no-build] [job ...]
set -u
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
RES=/tmp/devres; mkdir -p "$RES"
START=$(date +%s); DEADLINE_S=${DEADLINE_S:-560}   # the device tool's call limit is 600 s
built=$(ls ggml_cy/core/_core*.so 2>/dev/null | head -1)
if [ "${1:-}" = "--no-build" ] && [ -n "$built" ]; then shift; else
  [ "${1:-}" != "--no-build" ] || { shift; echo "--no-build: no build here (a fresh machine), building"; }
  t0=$(date +%s)
  GGML_CY_CUDA_ARCH=${GGML_CY_CUDA_ARCH:-90} python3 setup.py -q build_ext --inplace -j 16 \
    >"$RES/build.log" 2>&1 || { echo "BUILD FAILED"; tail -40 "$RES/build.log"; }
  echo "build: $(( $(date +%s) - t0 )) s"
fi
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=($(ls tools/device/jobs/*.sh 2>/dev/null | xargs -n1 basename | sed 's/\.sh$//'))
for j in "${jobs[@]}"; do
  f=tools/device/jobs/$j.sh
  [ -f "$f" ] || { echo "$j: no such job"; continue; }
  b=$(sed -n 's/^# budget: *\([0-9]*\).*/\1/p' "$f" | head -1); b=${b:-120}
  left=$(( DEADLINE_S - ($(date +%s) - START) ))
  if [ "$left" -lt 20 ]; then echo "$j: SKIPPED (no time left in this call)"; echo "$j" >>"$RES/skipped.txt"; continue; fi
  [ "$b" -le "$left" ] || b=$left
  mkdir -p "$RES/$j"; t0=$(date +%s)
  timeout -k 5 "$b" bash "$f" "$RES/$j" >"$RES/$j/log" 2>&1; rc=$?
  echo "$j: rc=$rc $(( $(date +%s) - t0 ))/$b s"; tail -5 "$RES/$j/log" | sed 's/^/   /'
done
nvidia-smi --query-gpu=name --format=csv,noheader >"$RES/gpu.txt" 2>&1
lscpu >"$RES/lscpu.txt" 2>&1
tar czf "${OUT:-/tmp}/res.tgz" -C "$RES" .
