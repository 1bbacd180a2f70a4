# budget: 150
# issue 13: where a decode step spends its time at 16 threads (per op kind, the graph alone,
# and the Python around it), next to 1 and 4 threads; the bench's model files
# (model_bench writes them first).
export GGML_CY_BENCH_CACHE=/tmp/ggml_cy_bench_model
timeout 140 python3 tools/profile_decode.py --types q4_0,q8_0,f16 --threads 1,4,16 --steps 30 2>&1 | tail -90
