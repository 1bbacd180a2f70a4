# budget: 560
# #14: the package with shared packed panels (cpu/csrc/mul_mat_share.h) where tasks are
# dealt (16 threads): the share tests on the host CPU, the eager / one-step graph product
# shared vs private with torch taking turns (tools/device/mm_share_probe.py), then the
# matmul suites at 16 and 2 threads.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
python3 -m pytest -q -p no:cacheprovider tests/test_gemm_share.py tests/test_gemm_dealt.py \
  tests/test_gemm_thin.py tests/test_gemm_paths.py tests/test_graph_mul_mat.py 2>&1 | tail -3
timeout 200 python3 tools/device/mm_share_probe.py 16 60 f32:1024:1024:1024 f16:1024:1024:1024 \
  f32:2048:2048:2048 f32:1024:256:1024 f32:2048:512:2048 | tee "$OUT/share_pkg.jsonl"
bash tools/device/matmul_suites.sh "$OUT"
