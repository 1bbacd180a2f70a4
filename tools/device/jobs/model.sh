# budget: 150
# issue 13 (model helper): the llama runner on the CUDA backend against the CPU backend and
# the float64 reference for every weight type, and transformers' LlamaForCausalLM as an
# oracle (F32/F16, CPU and CUDA). NMSE figures are printed (-s).
out=${1:-/tmp/model_job}; mkdir -p "$out"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)" 2>&1 | tail -1
python3 -m pytest -q -s -rs -p no:cacheprovider --junitxml="$out/junit.xml" \
    tests/test_models_llama_gpu.py 2>&1 | tail -80
python3 -m pytest -q -x -p no:cacheprovider tests/test_models_llama.py 2>&1 | tail -5
