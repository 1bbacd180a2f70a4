# budget: 300
# #14 item 3 at 2 threads on the 16-core host: GEMMs alone in a fresh process
# (tools/device/mm_direct.py) against the same calls one by one after the bench's 0.25 s
# pause, alone and taking turns with torch and numpy (tools/device/mmseq_probe.py), then
# the matmul suite itself.
set -u
OUT=$1
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
timeout 60 python3 tools/device/mm_direct.py 2 2>&1 | tee "$OUT/direct.txt"
for dt in f32 bf16; do
  for libs in ggml ggml,torch,numpy torch; do
    timeout 40 python3 tools/device/mmseq_probe.py "$OUT/mmseq.jsonl" 2 $dt 1024 1024 1024 0.25 $libs
  done
done
timeout 40 python3 tools/device/mmseq_probe.py "$OUT/mmseq.jsonl" 2 f32 4096 4096 64 0.25 ggml,torch,numpy
timeout 120 python3 -m bench matmul --quick --threads 2 --json "$OUT/matmul-2.json" 2>&1 | grep -E "^mul_mat|targets:"
