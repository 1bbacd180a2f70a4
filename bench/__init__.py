"""ggml_cy's benchmarks: `python -m bench cpu|graph|gpu|all` from the repository root.

Suites: cpu (issue 3's eager functions), graph (issue 4's fused evaluation and mul_mat),
gpu (issue 5, bench/gpu.py on the frame in bench/gpu_frame.py). The shared pieces:
_harness (timing, the case model), _env (machine and build header), _report (table, JSON),
_libs (imports and thread counts). bench/README.md documents the harness API.
"""
