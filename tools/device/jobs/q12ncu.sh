# budget: 200
# Issue 12: ncu's view of ggml_cy's Q4_0 x1 mat-vec kernel against the probe's ws2 (same
# source): name, duration, registers, instructions, stall reasons.
out=$1
export PYTHONPATH=.:${PYTHONPATH:-}
which ncu || exit 0
M="gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,smsp__inst_executed.sum,launch__shared_mem_per_block_dynamic,dram__bytes_read.sum,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio"
timeout 80 ncu --clock-control none -k regex:'mv|mmv' -c 4 --metrics $M python3 tools/device/q4mmv_profile.py Q4_0 > "$out/ncu_gc.txt" 2>&1
grep -E "k_m|mv_q|Duration|duration|registers|grid|block_size|inst_executed|dynamic|dram__bytes|stalled" "$out/ncu_gc.txt" | head -40
timeout 80 ncu --clock-control none -k regex:'^ws2$' -c 3 --metrics $M python3 tools/device/q4mv_probe.py > "$out/ncu_probe.txt" 2>&1
grep -E "ws2|duration|registers|grid|block_size|inst_executed|dynamic|dram__bytes|stalled" "$out/ncu_probe.txt" | head -30
