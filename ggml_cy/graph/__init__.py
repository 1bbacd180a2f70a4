"""Layer 3, the graph: builders that record ``op``, ``src`` and ``op_params`` without
computing (``context.Context``: ``ctx.add``, ``ctx.mul_mat``, ...), and the compute graph
in the context's arena (``_graph.Graph``: ggml_cgraph, build_forward_expand, plan,
compute on N threads through ggml_cy.cpu's executor).
"""
