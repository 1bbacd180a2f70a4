# budget: 300
# #14 item 3 on the 16-core host: our f32 GEMM's one-core rate there moved between 94 and
# 144 GFLOP/s from round to round while torch's stayed at 137-152 (v3). A/B in one call,
# every variant taking turns with torch, 3 rounds at 1 and 2 threads: mm_tune (the shipped
# kernel) as is, with a software prefetch of the packed a panel (MM_PF_A 8 / 16 k-steps),
# with its scratch on huge pages (MM_TUNE_THP), and mm_mr_probe's 8 x 32 against 12 x 32.
# No package build.
set -u
OUT=$1
mkdir -p "$OUT"
export PYTHONPATH=.:tools/device:${PYTHONPATH:-}
{ lscpu; cat /sys/kernel/mm/transparent_hugepage/enabled;
  for c in /sys/devices/system/cpu/cpu[0-9]*; do echo "$(basename $c) siblings $(cat $c/topology/thread_siblings_list 2>/dev/null) core $(cat $c/topology/core_id 2>/dev/null)"; done; } > "$OUT/topo.txt" 2>&1
I="-Iggml_cy/cpu/csrc -Iggml_cy/core/csrc"
for pf in 0 8 16; do
  gcc -O3 -march=x86-64-v4 -fopenmp -DMM_PF_A=$pf $I bench/csrc/mm_tune.c -o /tmp/mmt$pf -lm || exit 1
done
for mr in 8 12; do
  gcc -O3 -march=x86-64-v4 -fopenmp -DMR=$mr bench/csrc/mm_mr_probe.c -o /tmp/mr$mr || exit 1
done
S="1024 1024 1024 4096 64 4096"
for round in 1 2 3; do
  for t in 1 2; do
    for v in pf0 pf8 pf16 thp; do
      case $v in
        thp) bin=/tmp/mmt0; thp=1 ;;
        *) bin=/tmp/mmt${v#pf}; thp=0 ;;
      esac
      MM_TUNE_THP=$thp MM_TUNE_TYPES=f32 OMP_NUM_THREADS=$t timeout 30 $bin $t $S \
        | sed "s/^{/{\"variant\": \"$v\", \"round\": $round, /" | tee -a "$OUT/w1.jsonl"
    done
    timeout 60 python3 tools/device/torch_mm_time.py $t $S \
      | sed "s/^{/{\"variant\": \"torch\", \"round\": $round, /" | tee -a "$OUT/w1.jsonl"
    for mr in 8 12; do
      OMP_NUM_THREADS=$t timeout 30 /tmp/mr$mr $t 1024 1176 1024 | sed "s/^/round $round /" | tee -a "$OUT/mr.txt"
    done
  done
done
