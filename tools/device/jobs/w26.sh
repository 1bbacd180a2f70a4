# budget: 560
# #14: round w25 again after the shared panels' wait was bounded (a unit another thread
# claimed and did not pack within MM_SHARE_SPINS pauses: the task packs the block itself):
# the share tests on the host CPU, the package's product shared vs private without and with
# torch taking turns (tools/device/mm_share_probe.py), then the matmul suites.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
python3 -m pytest -q -p no:cacheprovider tests/test_gemm_share.py tests/test_gemm_dealt.py \
  tests/test_gemm_thin.py tests/test_gemm_paths.py tests/test_graph_mul_mat.py 2>&1 | tail -3
C="f32:1024:1024:1024 f16:1024:1024:1024 f32:2048:2048:2048 f32:1024:256:1024 f32:2048:512:2048"
MM_PROBE_NO_TORCH=1 timeout 130 python3 tools/device/mm_share_probe.py 16 60 $C | tee "$OUT/share_pkg.jsonl"
timeout 130 python3 tools/device/mm_share_probe.py 16 60 $C | tee -a "$OUT/share_pkg.jsonl"
bash tools/device/matmul_suites.sh "$OUT"
