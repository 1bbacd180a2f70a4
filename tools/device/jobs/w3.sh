# budget: 200
# #14 item 3, after w2 (our f32 kernel at 107-110 GFLOP/s on some CPUs and 150-156 on
# others, pinned, while torch held 157-163 nearly everywhere): kernel variants and torch
# taking turns call by call on each CPU (tools/device/mm_ab_probe.py), so that a slow
# moment hits all of them. No package build.
set -u
OUT=$1
mkdir -p "$OUT"
bash tools/device/build_mm_ab.sh 2> "$OUT/build.err" || { cat "$OUT/build.err"; exit 1; }
ALL=$(seq -s, 0 $(( $(nproc) - 1 )))
timeout 150 python3 tools/device/mm_ab_probe.py 5 "$ALL" 1024 1024 1024 | tee "$OUT/ab1024.jsonl"
timeout 60 python3 tools/device/mm_ab_probe.py 4 0,3,5,8,10,14 4096 64 4096 | tee "$OUT/ab4096x64.jsonl"
