"""Property tests: random broadcastable shapes (up to 6-D, zero-size dims included), random
views (steps, negative steps, transposes), random native dtypes; ggml_cy's answer is
numpy's (bitwise for exact ops, within 2 ulp for transcendentals), and where numpy raises,
ggml_cy raises the same error type (and, for shapes that do not broadcast, the same message).

Runs under the "ci" hypothesis profile of tests/conftest.py (derandomized, bounded).
"""
import numpy as np
from hypothesis import assume, given, note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ggml_cy
from _oracle import NATIVE_DTYPES, ULP_BOUND, compare_outcomes, random_values, run

MAX_ELEMENTS = 10_000

EXACT_BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod",
                "maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or",
                "logical_xor", "equal", "not_equal", "greater", "greater_equal", "less",
                "less_equal"]
EXACT_UNARY = ["negative", "absolute", "sign", "square", "floor", "ceil", "rint", "trunc",
               "logical_not"]
ULP_UNARY = ["sqrt", "exp", "expm1", "log", "log1p", "sin", "cos", "tanh"]


def _cy(name):
    fn = getattr(ggml_cy, name, None)
    if fn is None:
        import ggml_cy.ufuncs as uf
        fn = getattr(uf, name)
    return fn


dtypes = st.sampled_from(NATIVE_DTYPES)


@st.composite
def viewed_array(draw, shape, dtype, values=random_values):
    """An array of `shape` whose memory layout is random: each dim stepped by +-1/+-2 in a
    larger buffer, dims stored in a random order (a transpose), sometimes read-only or a
    broadcast view (zero strides)."""
    nd = len(shape)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["strided", "strided", "contiguous", "broadcast"]))
    if kind == "contiguous" or nd == 0:
        a = values(dtype, int(np.prod(shape)), rng).reshape(shape)
    elif kind == "broadcast":
        # broadcast one random dim from length 1 (a zero stride)
        d = draw(st.integers(0, nd - 1))
        small = list(shape)
        small[d] = 1
        base = values(dtype, int(np.prod(small)), rng).reshape(small)
        a = np.broadcast_to(base, shape)
    else:
        perm = draw(st.permutations(range(nd)))
        steps = [draw(st.sampled_from([1, 2, -1, -2])) for _ in range(nd)]
        base_shape = tuple(shape[perm[i]] * abs(steps[i]) for i in range(nd))
        base = values(dtype, int(np.prod(base_shape)), rng).reshape(base_shape)
        w = base[tuple(slice(None, None, s) for s in steps)]
        a = w.transpose(np.argsort(perm))
        assert a.shape == tuple(shape)
    if draw(st.booleans()) and isinstance(a, np.ndarray) and a.flags.writeable:
        a.setflags(write=False)
    return a


def shape_pairs(max_dims=6):
    return hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=max_dims,
                                             min_side=0, max_side=5).filter(
        lambda s: int(np.prod(s.result_shape)) <= MAX_ELEMENTS)


def _describe(a):
    a = np.asarray(a)
    return f"{a.dtype} shape={a.shape} strides={a.strides} writeable={a.flags.writeable}"


@given(data=st.data(), op=st.sampled_from(EXACT_BINARY + ["power"]), shapes=shape_pairs(),
       dt0=dtypes, dt1=dtypes, n_threads=st.sampled_from([None, 1, 2, 3]))
def test_binary_random_shapes_views_dtypes(data, op, shapes, dt0, dt1, n_threads):
    s0, s1 = shapes.input_shapes
    a = data.draw(viewed_array(s0, dt0), label="a")
    b = data.draw(viewed_array(s1, dt1), label="b")
    if op == "power" and np.result_type(a, b).kind in "iu":
        b = np.abs(b.astype(np.int64)) % 5 if b.dtype.kind != "b" else b
        b = b.astype(dt1) if dt1.kind != "b" else b
    note(f"a: {_describe(a)}; b: {_describe(b)}")
    expected = run(lambda: getattr(np, op)(a, b))
    got = run(lambda: _cy(op)(a, b, n_threads=n_threads))
    rdt = None if expected.exc else np.asarray(expected.value).dtype
    exact = op != "power" or rdt is None or rdt.kind != "f"
    compare_outcomes(got, expected, exact=exact,
                     max_ulp=ULP_BOUND.get(getattr(rdt, "name", ""), 2),
                     inputs=[("a", a), ("b", b)], what=f"{op}", op=op)


@given(data=st.data(), op=st.sampled_from(EXACT_BINARY), shapes=shape_pairs(4),
       dt=dtypes, out_kind=st.sampled_from(["fresh", "strided", "is_input"]))
def test_binary_out_argument(data, op, shapes, dt, out_kind):
    """out= of the broadcast shape (fresh, strided or an input itself): numpy's answer, or
    numpy's error when the shapes or the cast do not fit."""
    s0, s1 = shapes.input_shapes
    a = np.array(data.draw(viewed_array(s0, dt), label="a"))  # writable copies
    b = np.array(data.draw(viewed_array(s1, dt), label="b"))

    def make_out():
        ra = np.array(a)
        if out_kind == "is_input":
            return ra, ra
        try:
            with np.errstate(all="ignore"):
                rdt = getattr(np, op)(a[..., :0] if a.ndim else a, b[..., :0] if b.ndim else b)
            rdt = np.asarray(rdt).dtype
        except Exception:
            rdt = dt
        shape = shapes.result_shape
        if out_kind == "fresh":
            return ra, np.zeros(shape, rdt)
        big = np.zeros(tuple(2 * n for n in shape), rdt)
        return ra, big[tuple(slice(None, None, -2) for _ in shape)]

    a1, out1 = make_out()
    expected = run(lambda: getattr(np, op)(a1, b, out=out1))
    a2, out2 = make_out()
    got = run(lambda: _cy(op)(a2, b, out=out2))
    compare_outcomes(got, expected, inputs=[("a", a), ("b", b)], what=f"{op} out={out_kind}",
                     out=out2, check_message=True, op=op)


@given(data=st.data(), op=st.sampled_from(EXACT_UNARY + ULP_UNARY),
       shape=hnp.array_shapes(min_dims=0, max_dims=6, min_side=0, max_side=5).filter(
           lambda s: int(np.prod(s)) <= MAX_ELEMENTS),
       dt=dtypes, n_threads=st.sampled_from([None, 1, 2, 3]))
def test_unary_random_views(data, op, shape, dt, n_threads):
    x = data.draw(viewed_array(shape, dt), label="x")
    note(f"x: {_describe(x)}")
    expected = run(lambda: getattr(np, op)(x))
    got = run(lambda: _cy(op)(x, n_threads=n_threads))
    rdt = None if expected.exc else np.asarray(expected.value).dtype
    compare_outcomes(got, expected, exact=op in EXACT_UNARY,
                     max_ulp=ULP_BOUND.get(getattr(rdt, "name", ""), 2),
                     inputs=[("x", x)], what=op, check_warnings=op in EXACT_UNARY)


@given(data=st.data(), src=dtypes, dst=dtypes,
       shape=hnp.array_shapes(min_dims=0, max_dims=6, min_side=0, max_side=5).filter(
           lambda s: int(np.prod(s)) <= MAX_ELEMENTS))
def test_astype_random_views(data, src, dst, shape):
    def in_range(dtype, n, rng):
        """Values dst represents after truncation (C leaves the rest open; numpy's platform
        answer for those is in test_ops_matrix.py::test_astype_out_of_range)."""
        x = random_values(dtype, n, rng)
        if src.kind == "f" and dst.kind in "iu":
            ii = np.iinfo(dst)
            xf = x.astype(np.float64)
            ok = np.isfinite(xf) & (xf > float(ii.min) - 1) & (xf < float(ii.max) + 1)
            x = np.where(ok, x, np.zeros((), src))
        return x

    x = data.draw(viewed_array(shape, src, values=in_range), label="x")
    note(f"x: {_describe(x)}")
    expected = run(lambda: x.astype(dst))
    got = run(lambda: _cy("astype")(x, dst))
    compare_outcomes(got, expected, inputs=[("x", x)], what=f"astype {src}->{dst}")


non_broadcastable = st.tuples(
    hnp.array_shapes(min_dims=1, max_dims=6, min_side=0, max_side=5),
    hnp.array_shapes(min_dims=1, max_dims=6, min_side=0, max_side=5),
).filter(lambda p: not _broadcasts(*p))


def _broadcasts(s0, s1):
    try:
        np.broadcast_shapes(s0, s1)
        return True
    except ValueError:
        return False


@given(shapes=non_broadcastable, op=st.sampled_from(EXACT_BINARY + ["power"]), dt=dtypes)
def test_shapes_that_do_not_broadcast_raise_numpys_error(shapes, op, dt):
    a = np.zeros(shapes[0], dt)
    b = np.ones(shapes[1], dt)
    expected = run(lambda: getattr(np, op)(a, b))
    got = run(lambda: _cy(op)(a, b))
    assert expected.exc is not None
    compare_outcomes(got, expected, what=f"{op}{shapes}", check_message=True)


@given(shapes=shape_pairs(4), bad=st.sampled_from(["smaller", "extra_dim", "mismatch"]),
       op=st.sampled_from(["add", "multiply", "equal", "maximum"]))
def test_out_of_the_wrong_shape_raises_numpys_error(shapes, bad, op):
    s0, s1 = shapes.input_shapes
    r = shapes.result_shape
    a, b = np.ones(s0, np.float32), np.ones(s1, np.float32)
    if bad == "smaller":
        oshape = r[1:] if r else (2,)
    elif bad == "extra_dim":
        oshape = (2,) + r
    else:
        oshape = tuple(n + 1 for n in r) if r else (3,)
    assume(oshape != r)
    out = np.zeros(oshape, np.float32 if op != "equal" else bool)
    out2 = out.copy()
    expected = run(lambda: getattr(np, op)(a, b, out=out))
    got = run(lambda: _cy(op)(a, b, out=out2))
    compare_outcomes(got, expected, what=f"{op} out{oshape} for {r}", check_message=True,
                     out=out2 if expected.exc is None else None)


@given(op=st.sampled_from(EXACT_BINARY), dt=dtypes,
       scalar=st.one_of(st.integers(-300, 300), st.floats(allow_nan=True, allow_infinity=True,
                                                          width=32),
                        st.booleans()),
       first=st.booleans(), n=st.integers(0, 40))
def test_python_scalars_follow_nep50(op, dt, scalar, first, n):
    """Python scalars are weak (NEP 50): same result dtype, values, or OverflowError as numpy."""
    a = random_values(dt, n, np.random.default_rng(n))
    args = (scalar, a) if first else (a, scalar)
    expected = run(lambda: getattr(np, op)(*args))
    got = run(lambda: _cy(op)(*args))
    compare_outcomes(got, expected, inputs=[("a", a)],
                     what=f"{op}{'(s, a)' if first else '(a, s)'} s={scalar!r}")
