# budget: 120
# Lead (issue 12 item 5): the Q4_0 x1 GPU mat-vec variants of cuda/quant.cu (GGML_CY_Q4MMV):
# correctness per variant, then the timing table next to torch f16 and the copy ceiling.
for v in 0 u2 sf8 s88 psf8 ps88; do GGML_CY_Q4MMV=$v python3 -m pytest -q -x -p no:cacheprovider tests/test_cuda_quant.py -k "mul_mat and q4_0" 2>&1 | tail -1 | sed "s/^/$v: /"; done
OUT=$1 python3 tools/q4mmv_variants.py 0 u2 sf4 sf8 sf16 s84 s88 s816 psf8 ps88
