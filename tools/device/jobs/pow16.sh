# budget: 380
# issue 14 item 2 (pow16): the float32/float64 power's vector forms on the 16-core host:
# bench math (every function, power among them) at 1 and 16 threads, the power tests at each
# dispatch level (rounds: df46dfd, the double-lane forms; b102e06, float32 in float lanes at
# avx512)
set -u
out="$1"
python3 -m bench math --quick --threads 1 --json "$out/math-1.json" 2>&1 | tail -70
python3 -m bench math --quick --threads 16 --json "$out/math-16.json" 2>&1 | grep -i "power\|pass\|fail" | tail -30
for lv in baseline avx2 avx512; do
  GGML_CY_CPU_FEATURES=$lv python3 -m pytest -q -p no:cacheprovider tests/test_simd_pow.py \
    tests/test_kernels_ops.py -k "pow or POW or power" 2>&1 | tail -3
done
