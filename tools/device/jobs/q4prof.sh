# budget: 100
# issue 12: the Q4_0 GPU mat-vec against torch's f16 mat-vec: back-to-back times, the empty
# kernel floor, and ncu's view of each kernel (duration, throughput, limiter).
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
timeout 30 python3 tools/device/q4mmv_profile.py Q4_0 Q8_0 2>&1 | tee "$out/times.txt"
which ncu || exit 0
timeout 60 ncu --clock-control none --set full -k 'regex:mmv|gemv|gemm|Kernel' -c 6 \
    python3 tools/device/q4mmv_profile.py Q4_0 > "$out/ncu.txt" 2>&1
grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|L2 Hit|Warp Cycles Per Issued|One or More Eligible|Block Size|Grid Size" "$out/ncu.txt" | head -120
