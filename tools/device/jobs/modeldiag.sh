# budget: 300
# issue 13: why ggml_cy's 16-thread decode is slower inside the model bench (R3: Q4_0 1.59 ms)
# than alone (tools/model_threads.py: 1.27 ms): the bench with only ggml_cy, with ggml_cy and
# llama.cpp, and the same with llama.cpp's OpenMP threads told to sleep when idle.
out=$1
export GGML_CY_BENCH_CACHE=/tmp/ggml_cy_bench_model
for v in "ggml_cy" "ggml_cy,llama.cpp"; do
  echo "== libs $v"
  GGML_CY_BENCH_MODEL_LIBS=$v timeout 90 python3 -m bench model --threads 16 \
      --json "$out/model-$(echo $v | tr -c 'a-z_\n' '-').json" 2>&1 | grep -E "^decode|^prompt"
done
echo "== libs ggml_cy,llama.cpp OMP_WAIT_POLICY=PASSIVE"
OMP_WAIT_POLICY=PASSIVE GGML_CY_BENCH_MODEL_LIBS=ggml_cy,llama.cpp timeout 90 python3 -m bench model \
    --threads 16 --json "$out/model-passive.json" 2>&1 | grep -E "^decode|^prompt"
