# budget: 500
# #14: the 2..4-thread float products choosing by the measured lag (mul_mat_ndeal.h): the
# package four ways taking turns (tools/device/mm_ndeal_probe.py: plain static, timed split,
# dealt, by the lag), at 2 and 4 threads, alone and with a busy process on CPU 1; its tests on
# the host; the matmul suite at 2 threads.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_gemm_ndeal.py tests/test_gemm_dealt.py \
  2>&1 | tail -2
S="f32:1024:1024:1024 f16:1024:1024:1024 f32:4096:64:4096 f32:2048:512:1024"
for th in 2 4; do
  timeout 120 python3 tools/device/mm_ndeal_probe.py $th 8 $S | tee -a "$OUT/w32.jsonl"
done
timeout 100 python3 tools/device/mm_ndeal_probe.py 2 8 --hog 1 $S | sed 's/^{/{"hog": 1, /' \
  | tee -a "$OUT/w32.jsonl"
timeout 170 python3 -m bench matmul --threads 2 --json "$OUT/matmul-2.json" 2>&1 \
  | grep -E "^mul_mat|targets:|FAIL" | cut -c1-60,140-
