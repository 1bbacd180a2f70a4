# budget: 150
# #14 item 3: misaligned weights in place vs copied into the aligned panel, interleaved
# A/B/A/B (the host is noisy), at 16 and 2 threads.
out=$1
for c in 0 1; do gcc -O3 -march=x86-64-v4 -fopenmp -I ggml_cy/cpu/csrc -DMMX_COPY_MISALIGNED=$c tools/device/amx_probe2.c -o /tmp/p6_$c -lm || exit 1; done
OMP_NUM_THREADS=16 timeout 30 /tmp/p6_1 2>&1 | grep -E "correct|NO|same" | tee "$out/correct.txt"
for t in 16 2; do
  for rep in 1 2 3; do
    for c in 0 1; do
      for off in 0 16; do
        [ $c = 0 ] || [ $off = 16 ] || continue
        echo -n "copy=$c " | tee -a "$out/amx6.txt"
        OMP_NUM_THREADS=$t OMP_PROC_BIND=close PROBE_SPEED_ONLY=1 PROBE_A_OFFSET=$off timeout 25 /tmp/p6_$c 2>&1 | grep mmx | head -2 | tr '\n' ' ' | tee -a "$out/amx6.txt"
        echo | tee -a "$out/amx6.txt"
      done
    done
  done
done
