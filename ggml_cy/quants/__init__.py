"""ggml's quantized types from Python (issue 12). Layer 5.2: uses core/ and cpu/.

    ggml_cy.quantize(array, type, out=None, n_threads=None)  -> raw blocks (quants/quantize.py)
"""
from ggml_cy.quants.quantize import quantize, quantizable_types  # noqa: F401
