"""Front end: ``ggml_cy.evaluate("a*b + c*d - e", a=..., ...)``, numpy arrays in, one fused
pass of the graph executor out (the parser, typing and compiler are in ``evaluate``)."""
from ggml_cy.expr.evaluate import evaluate, FUNCTIONS

__all__ = ["evaluate", "FUNCTIONS"]
