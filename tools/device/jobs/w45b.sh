# budget: 470
# w45's suite stopped at its time limit with 4 failures at ~27-28% (names not printed): the
# modules around there first, their failures in full, then the rest of the suite after them.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
first=(tests/test_kernels_*.py tests/test_layout.py tests/test_matvec_repack.py
       tests/test_models_llama.py tests/test_ops_concurrency.py tests/test_ops_hypothesis.py)
timeout 200 python3 -m pytest -q -p no:cacheprovider -m "not gpu" -rf --tb=short "${first[@]}" 2>&1 \
  | grep -v "^SKIPPED\|^[.sF]\+ *\[" | tail -80
ign=(); for f in "${first[@]}"; do ign+=(--ignore="$f"); done
timeout 240 python3 -m pytest -q -p no:cacheprovider -m "not gpu" -rf --tb=short "${ign[@]}" tests 2>&1 \
  | grep -v "^SKIPPED\|^[.sF]\+ *\[" | tail -60
