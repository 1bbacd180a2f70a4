# budget: 380
# issue 14 item 2 (pow16): the float32/float64 power's vector forms on the 16-core host:
# bench math (every function, power among them) at 1 and 16 threads, power at 1e3 by timeit
# (min of 15 x 2000 calls; the bench's median at that size moves by 20% between runs), the
# power tests at each dispatch level (rounds: df46dfd, the double-lane forms; b102e06,
# float32 in float lanes at avx512; then float64 with finite y only)
set -u
out="$1"
python3 -m bench math --quick --threads 1 --json "$out/math-1.json" 2>&1 | tail -70
python3 -m bench math --quick --threads 16 --json "$out/math-16.json" 2>&1 | grep -i "power\|pass\|fail" | tail -30
python3 - <<'PY'
import timeit, numpy as np, ggml_cy
rng = np.random.default_rng(0)
for dt in (np.float32, np.float64):
    a = (np.abs(3 * rng.standard_normal(1000)) + 1e-3).astype(dt)
    b = (3 * rng.standard_normal(1000)).astype(dt)
    o = np.empty_like(a)
    for _ in range(3):
        g = min(timeit.repeat(lambda: ggml_cy.power(a, b, out=o, n_threads=1), number=2000, repeat=15))
        p = min(timeit.repeat(lambda: np.power(a, b, out=o), number=2000, repeat=15))
        print(f"power {np.dtype(dt).name} 1e3 timeit-min: ggml_cy {g * 500:.3f} us numpy {p * 500:.3f} us -> {p / g:.2f}x")
PY
for lv in baseline avx2 avx512; do
  GGML_CY_CPU_FEATURES=$lv python3 -m pytest -q -p no:cacheprovider tests/test_simd_pow.py \
    tests/test_kernels_ops.py -k "pow or POW or power" 2>&1 | tail -3
done
