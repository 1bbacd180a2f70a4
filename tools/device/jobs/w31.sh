# budget: 400
# Ran against commit c72943e (mul_mat_ndeal.h dealing every call: bench/results/
# mmndeal-xeon-w28-w32.txt); later commits deal only while the static split is seen to lag.
# #14: the package's float mul_mat with mul_mat_ndeal.h's dealt tasks against the static
# split (_kernels._set_mm_dealing), taking turns in one process (tools/device/mm_deal_probe.py),
# at 2 and 4 threads on the host.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
for th in 2 4; do
  timeout 170 python3 tools/device/mm_deal_probe.py $th 12 f32:1024:1024:1024 f16:1024:1024:1024 \
    f32:4096:64:4096 f16:4096:64:4096 f32:2048:512:1024 | tee -a "$OUT/w31.jsonl"
done
