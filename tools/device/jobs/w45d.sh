# budget: 200
# w45 / w45c: the suite past the kernel tests ran beyond 330-400 s on the 16-core host (the
# 2-core VM: ~300 s for all of it). Stopped with SIGINT after 175 s, pytest prints its slowest
# tests so far and where it was.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
first=(tests/test_kernels_*.py tests/test_layout.py tests/test_matvec_repack.py
       tests/test_models_llama.py tests/test_ops_concurrency.py tests/test_ops_hypothesis.py)
ign=(); for f in "${first[@]}"; do ign+=(--ignore="$f"); done
timeout -s INT -k 15 175 python3 -m pytest -v -p no:cacheprovider -m "not gpu" --durations=30 "${ign[@]}" tests \
  >"$OUT/pytest.log" 2>&1
grep -v " SKIPPED\| PASSED" "$OUT/pytest.log" | tail -70
grep " PASSED\| FAILED" "$OUT/pytest.log" | tail -3
