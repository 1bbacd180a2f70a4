# budget: 300
# (Ran once at tree 8c4bda5; the GGML_CY_THP switch it compares was removed after this run:
# no difference between huge and 4 KiB pages there, bench/results/mmprobes-xeon-w.txt.)
# #14 item 3 after w5 (the graph path at one thread pinned: 100 GFLOP/s against torch's 151,
# while the same kernel on numpy's huge-page arrays ran 0.86-0.96x torch in w3/w4): work
# buffers and context pools on transparent huge pages (GGML_CY_THP, on by default now)
# against 4 KiB pages (GGML_CY_THP=0), 4 fresh processes each, taking turns; then the suite.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
for r in 1 2 3 4; do
  for thp in 1 0; do
    GGML_CY_THP=$thp timeout 30 taskset -c 5 python3 tools/device/mm_direct.py 1 2>&1 | grep f32 | sed "s/^/thp=$thp cpu5 /"
    GGML_CY_THP=$thp timeout 30 python3 tools/device/mm_direct.py 2 2>&1 | grep f32 | sed "s/^/thp=$thp /"
  done
  timeout 30 taskset -c 5 python3 tools/device/torch_mm_time.py 1 1024 1024 1024 | sed "s/^/cpu5 /"
  timeout 30 python3 tools/device/torch_mm_time.py 2 1024 1024 1024
done
timeout 150 python3 -m bench matmul --quick --threads 2 --json "$OUT/matmul-2.json" 2>&1 \
  | grep -E "^mul_mat|targets:" | cut -c1-160
