"""Kept for ``from ggml_cy.context import Context``: the graph API's Context lives in
ggml_cy.graph.context (ggml_cy.Context is the same class)."""
from ggml_cy.graph.context import Context

__all__ = ["Context"]
