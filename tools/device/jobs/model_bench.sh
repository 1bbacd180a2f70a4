# budget: 230
# issue 13 (model helper): python -m bench model on the GPU machine: 16 CPU threads
# (ggml_cy; llama.cpp when llama-cpp-python is installed), ggml_cy CUDA vs torch eager.
out=${1:-/tmp/model_bench_job}; mkdir -p "$out"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr -c 'A-Za-z0-9\n' '-' | sed 's/-*$//')
export GGML_CY_BENCH_CACHE=/tmp/ggml_cy_bench_model
python3 -c "import llama_cpp; print(llama_cpp.__version__, llama_cpp.llama_print_system_info())" 2>&1 | tail -2
python3 -m bench model --threads 16 --json "$out/model-${gpu:-gpu}.json" 2>&1 | tail -60
# decode step time per thread count (the executor's scaling), F16 and Q4_0 files from the bench
python3 tools/model_threads.py --cache "$GGML_CY_BENCH_CACHE" --types f16,q8_0,q4_0 --threads 1,4,8,16 2>&1 | tail -20
GGML_CY_SPINCOUNT=0 python3 tools/model_threads.py --cache "$GGML_CY_BENCH_CACHE" --types q8_0 --threads 16 2>&1 | tail -3
