"""A view made in another Context (issue 17): after the base's context is reset() and
reused, the view must not read or write that memory any more (same-context views already
raised RuntimeError). Before the fix, v.numpy(), tensor_get/tensor_set and graph compute
all went on using the reused memory."""
import numpy as np
import pytest

import ggml_cy
from ggml_cy import backend as B


def _setup():
    a_ctx = ggml_cy.Context(1 << 20)
    b_ctx = ggml_cy.Context(1 << 20)
    base = a_ctx.tensor_from(np.arange(16, dtype=np.float32))
    v = b_ctx.view_1d(base, 8, 0)
    return a_ctx, b_ctx, base, v


def test_cross_context_view_refuses_after_base_reset():
    a_ctx, b_ctx, base, v = _setup()
    own = b_ctx.tensor_from(np.ones(4, np.float32))
    np.testing.assert_array_equal(v.numpy(), np.arange(8, dtype=np.float32))
    a_ctx.reset()
    reuse = a_ctx.tensor_from(np.full(64, 7, np.float32))      # same memory, new owner
    for use in (lambda: v.numpy(), lambda: B.tensor_get(v),
                lambda: B.tensor_set(v, np.zeros(8, np.float32)),
                lambda: v.data_ptr, lambda: b_ctx.add(v, v), lambda: np.asarray(v)):
        with pytest.raises(RuntimeError, match="reset"):
            use()
    np.testing.assert_array_equal(reuse.numpy(), np.full(64, 7, np.float32))   # untouched
    np.testing.assert_array_equal(own.numpy(), np.ones(4, np.float32))  # b_ctx's own data fine
    # resetting b_ctx forgets the stale view; new views of the new tensor work
    b_ctx.reset()
    w = b_ctx.view_1d(reuse, 4, 0)
    np.testing.assert_array_equal(w.numpy(), np.full(4, 7, np.float32))


@pytest.mark.parametrize("graph_in", ["view_ctx", "third_ctx"])
def test_graph_built_before_the_reset_refuses_to_compute(graph_in):
    a_ctx, b_ctx, base, v = _setup()
    r = b_ctx.add(v, v)
    g_ctx = b_ctx if graph_in == "view_ctx" else ggml_cy.Context(1 << 20)
    g = g_ctx.new_graph().build_forward_expand(r)
    g.compute(2)
    np.testing.assert_array_equal(r.numpy(), np.arange(8, dtype=np.float32) * 2)
    a_ctx.reset()
    a_ctx.tensor_from(np.full(64, 7, np.float32))
    with pytest.raises(RuntimeError, match="reset"):
        g.compute(2)


def test_unrelated_reset_does_not_disturb():
    a_ctx, b_ctx, base, v = _setup()
    c_ctx = ggml_cy.Context(1 << 16)
    c_ctx.tensor_from(np.zeros(4, np.float32))
    c_ctx.reset()
    np.testing.assert_array_equal(B.tensor_get(v), np.arange(8, dtype=np.float32))
    r = b_ctx.add(v, v)
    b_ctx.new_graph().build_forward_expand(r).compute(1)
    np.testing.assert_array_equal(r.numpy(), np.arange(8, dtype=np.float32) * 2)
