# budget: 150
# cuops2 (issue 13 item 1): CUDA rope / get_rows / set_rows / cpy / GQA mul_mat / flash_attn_ext
# against the CPU backend, the quantized get_rows/mul_mat paths, and a flash_attn_ext probe
# (NMSE vs CPU, time vs torch SDPA).
out=$1
python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_cuda_ops_attn.py --maxfail=20 -rf \
  --junitxml="$out/attn.xml" 2>&1 | tail -40
python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_cuda_quant.py -k "get_rows or mul_mat" 2>&1 | tail -8
PYTHONPATH=. timeout 50 python3 tools/device/jobs/cuops2_fa.py "$out/fa.json" 2>&1 | tail -12
GGML_CY_BENCH_GPU_GROUPS=attn timeout 40 python3 -m bench gpu --json "$out/gpu_attn.json" 2>&1 | tail -12
