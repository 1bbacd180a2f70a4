# budget: 120
# qcpu2 (issue 12, CPU): the quant bench on the GPU host's 16 cores (AVX-512 + VNNI on a
# Xeon: the avx512vnni dispatch level), not a target there; plus the level / mul_mat tests.
out="${1:?output folder}"
mkdir -p "$out"
python3 -c "import ggml_cy; ggml_cy.show_config()" > "$out/config.txt" 2>&1
grep -o "avx512_vnni\|avx512_bf16" /proc/cpuinfo | sort | uniq -c > "$out/cpu_flags.txt"
lscpu > "$out/lscpu.txt" 2>&1
timeout 40 python3 -m pytest -q -p no:cacheprovider tests/test_quant_mul_mat.py -k "simd_levels" \
    > "$out/tests.txt" 2>&1
timeout 70 python3 -m bench quant --quick --threads 16 --json "$out/quant-16.json" \
    > "$out/quant-16.txt" 2>&1
tail -40 "$out/quant-16.txt"
