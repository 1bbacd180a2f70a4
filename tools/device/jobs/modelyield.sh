# budget: 200
# issue 13: the 16-thread CPU decode against llama.cpp (CPU libraries only, so the run is
# short) with the barrier waiters' yield phase (default) and without it (0).
out=$1
export GGML_CY_BENCH_CACHE=/tmp/ggml_cy_bench_model
for y in default 0; do
  echo "== GGML_CY_BARRIER_YIELD_US=$y"
  GGML_CY_BARRIER_YIELD_US=$y GGML_CY_BENCH_MODEL_LIBS=ggml_cy,llama.cpp timeout 95 \
      python3 -m bench model --threads 16 --json "$out/model-yield-$y.json" 2>&1 | grep -E "^decode|^prompt"
done
