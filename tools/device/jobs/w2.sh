# budget: 300
# #14 item 3, after w1: on the host our f32 kernel's rate moved from process to process
# (one thread, 1024^3: 63-136 GFLOP/s) while torch's stayed at 110-116. Is it the CPU a
# process lands on, or the cache footprint of the blocking? (A) every CPU in turn, pinned:
# mm_tune and torch at one thread; (B) blocking variants (NC 512 / 256 / 128, KC 128 / 384),
# 4 processes each, pinned to one CPU (1 thread) and one pair (2 threads), torch taking turns.
# No package build.
set -u
OUT=$1
mkdir -p "$OUT"
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
I="-Iggml_cy/cpu/csrc -Iggml_cy/core/csrc"
build() { gcc -O3 -march=x86-64-v4 -fopenmp "$@" $I bench/csrc/mm_tune.c -lm; }
build -o /tmp/mm_base || exit 1
build -DMM_NC=256 -o /tmp/mm_nc256 || exit 1
build -DMM_NC=128 -o /tmp/mm_nc128 || exit 1
build -DMM_KC=128 -o /tmp/mm_kc128 || exit 1
build -DMM_KC=384 -DMM_NC=256 -DMM_MC=144 -o /tmp/mm_kc384 || exit 1
tag() { sed "s/^{/{\"part\": \"$1\", \"variant\": \"$2\", \"cpu\": \"$3\", \"round\": $4, /"; }
for c in $(seq 0 $(( $(nproc) - 1 ))); do
  MM_TUNE_TYPES=f32 timeout 20 taskset -c $c /tmp/mm_base 1 1024 1024 1024 | tag A base $c 0 >> "$OUT/w2.jsonl"
  timeout 30 taskset -c $c python3 tools/device/torch_mm_time.py 1 1024 1024 1024 | tag A torch $c 0 >> "$OUT/w2.jsonl"
done
S="1024 1024 1024 4096 64 4096"
for t in 1 2; do
  cpus=5; [ $t = 2 ] && cpus=5,6
  for round in 1 2 3 4; do
    for v in base nc256 nc128 kc128 kc384; do
      MM_TUNE_TYPES=f32 timeout 30 taskset -c $cpus /tmp/mm_$v $t $S | tag B $v $cpus $round >> "$OUT/w2.jsonl"
    done
    timeout 60 taskset -c $cpus python3 tools/device/torch_mm_time.py $t $S | tag B torch $cpus $round >> "$OUT/w2.jsonl"
  done
done
python3 - "$OUT/w2.jsonl" <<'PY'
import json, sys, collections
tab = collections.defaultdict(list)
for line in open(sys.argv[1]):
    d = json.loads(line)
    key = (d["part"], d["threads"], d["M"], d["N"], d["variant"]) if d["part"] == "B" else ("A", d["variant"])
    tab[key].append(d["gflops"] if d["part"] == "B" else (d["cpu"], d["gflops"]))
for k in sorted(tab):
    print(k, tab[k])
PY
