"""ggml's simple-ctx example in Python: two matrices, mul_mat, a graph, compute, print.

ggml's examples/simple/simple-ctx.cpp multiplies a 4x2 matrix A by a 3x2 matrix B in
ggml's convention: mul_mat(a, b) with a [K=2, M=4] and b [K=2, N=3] gives [M=4, N=3] in ne
order, i.e. the 3x4 numpy array B @ A.T.

Run: python examples/simple_ctx.py
"""
from typing import Any

import numpy as np
from numpy.typing import NDArray

import ggml_cy

ROWS_A, COLS_A = 4, 2
MATRIX_A = np.array([2, 8,
                     5, 1,
                     4, 2,
                     8, 6], dtype=np.float32).reshape(ROWS_A, COLS_A)
ROWS_B, COLS_B = 3, 2
MATRIX_B = np.array([10, 5,
                     9, 9,
                     5, 4], dtype=np.float32).reshape(ROWS_B, COLS_B)


def load_model() -> tuple[ggml_cy.Context, ggml_cy.Tensor, ggml_cy.Tensor]:
    """A context big enough for the two matrices, the result and a graph (ggml sizes
    it the same way: tensor overheads + data + graph overhead)."""
    ctx_size = (3 * ggml_cy.tensor_overhead() + MATRIX_A.nbytes + MATRIX_B.nbytes
                + ROWS_A * ROWS_B * 4 + ggml_cy.Context.graph_overhead() + 1024)
    ctx = ggml_cy.Context(ctx_size)
    a = ctx.new_tensor_2d("f32", COLS_A, ROWS_A)   # ne = [K, M]
    b = ctx.new_tensor_2d("f32", COLS_B, ROWS_B)   # ne = [K, N]
    a.numpy()[:] = MATRIX_A
    b.numpy()[:] = MATRIX_B
    return ctx, a, b


def build_graph(ctx: ggml_cy.Context, a: ggml_cy.Tensor,
                b: ggml_cy.Tensor) -> tuple[ggml_cy.Graph, ggml_cy.Tensor]:
    graph = ctx.new_graph()
    result = ctx.mul_mat(a, b)          # result = a * b^T in ggml's words
    graph.build_forward_expand(result)
    return graph, result


def main(n_threads: int = 1) -> NDArray[Any]:
    ctx, a, b = load_model()
    graph, result = build_graph(ctx, a, b)
    graph.compute(n_threads)
    out = result.numpy()                # ne [4, 3]: a (3, 4) numpy array
    ne0, ne1 = result.ne[0], result.ne[1]
    print(f"mul mat ({ne0} x {ne1}) (transposed result):")
    print("[")
    for row in out:                     # as ggml's example prints: ne1 rows of ne0 values
        print(" " + " ".join(f"{v:.2f}" for v in row))
    print("]")
    return out


if __name__ == "__main__":
    main()
