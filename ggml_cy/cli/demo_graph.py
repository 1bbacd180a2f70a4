"""`python -m ggml_cy demo`: the compute-graph sections (ggml's programming model)."""
import numpy as np

from ggml_cy.cli.demo import section


@section(order=40, title="a compute graph (ggml's simple-ctx: mul_mat)")
def demo_simple_ctx(out):
    import ggml_cy
    ctx = ggml_cy.Context(1 << 20)
    a = ctx.tensor_from(np.array([[2, 8], [5, 1], [4, 2], [8, 6]], np.float32))  # ne [2, 4]
    b = ctx.tensor_from(np.array([[10, 5], [9, 9], [5, 4]], np.float32))        # ne [2, 3]
    result = ctx.mul_mat(a, b)
    graph = ctx.new_graph()
    graph.build_forward_expand(result)
    graph.compute(n_threads=2)
    out("ctx.mul_mat(a [2, 4], b [2, 3]) ->", result.ne, "\n", result.numpy())


@section(order=41, title="graph of a*b + c*d - e: nodes, leafs, fused execution")
def demo_graph(out):
    import ggml_cy
    ctx = ggml_cy.Context(1 << 20)
    t = {k: ctx.tensor_from(np.arange(4, dtype=np.float32) + i) for i, k in enumerate("abcde")}
    r = ctx.sub(ctx.add(ctx.mul(t["a"], t["b"]), ctx.mul(t["c"], t["d"])), t["e"])
    graph = ctx.new_graph().build_forward_expand(r)
    out(graph.dump())
    plan = graph.plan(2)
    out("plan:", plan, "steps:", plan.steps)
    graph.compute(2)
    out("result:", r.numpy())


@section(order=42, title="ggml_cy.evaluate (fused expression on numpy arrays)")
def demo_evaluate(out):
    import ggml_cy
    x = np.linspace(0, 1, 5, dtype=np.float32)
    out('ggml_cy.evaluate("x*x + 2*x - 1", x=x) ->',
        ggml_cy.evaluate("x*x + 2*x - 1", x=x))


@section(order=43, title="a CPU backend with a no_alloc context")
def demo_backend(out):
    import ggml_cy
    from ggml_cy import backend
    cpu = backend.cpu_init(n_threads=2)
    ctx = ggml_cy.Context(1 << 16, no_alloc=True)
    a = ctx.new_tensor_1d("f32", 4)
    r = ctx.relu(ctx.scale(a, -2.0))
    buf = backend.alloc_ctx_tensors(ctx, cpu)
    backend.tensor_set(a, np.array([1, -2, 3, -4], np.float32))
    cpu.graph_compute(ggml_cy.Context(1 << 20).new_graph().build_forward_expand(r))
    out(cpu, buf, "relu(-2 * [1, -2, 3, -4]) ->", backend.tensor_get(r))
