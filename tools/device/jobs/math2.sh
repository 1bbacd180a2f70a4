# budget: 120
# issue 14 item 2 (math2): the SIMD math functions on the 16-core host, ggml_cy vs numpy,
# numexpr and torch at 16 and 1 threads (bench/math.py); JSON into the output folder $1
set -u
out="$1"
python3 -m bench math --quick --threads 16 --json "$out/math-16.json" 2>&1 | tail -60
python3 -m bench math --quick --threads 1 --json "$out/math-1.json" 2>&1 | tail -60
python3 -m pytest -q -x tests/test_simd_math.py 2>&1 | tail -5
