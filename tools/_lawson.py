"""The weighted minimax fit the float64 kernel scripts share (tools/fit_log64.py,
tools/fit_expm1_64.py): Lawson-iterated least squares in mpmath. Each iteration solves the
weighted least-squares problem, then scales every point's weight by its error, which drives the
fit toward equal ripple (minimax) in the weighted error."""
import mpmath as mp


def lawson(xs, tgt, wt, deg, iters=40):
    """Coefficients c[0..deg] (mpmath, lowest order first) of the polynomial p minimizing
    max |p(x) - t| * w over the points (x, t, w) of xs, tgt, wt."""
    lw = [mp.mpf(1)] * len(xs)
    c = None
    for _ in range(iters):
        A = mp.matrix(len(xs), deg + 1)
        b = mp.matrix(len(xs), 1)
        for j, x in enumerate(xs):
            s = mp.sqrt(lw[j]) * wt[j]
            for k in range(deg + 1):
                A[j, k] = s * x ** k
            b[j] = s * tgt[j]
        c, _ = mp.qr_solve(A, b)
        err = [abs(sum(c[k] * x ** k for k in range(deg + 1)) - t) * w
               for x, t, w in zip(xs, tgt, wt)]
        tot = sum(l_ * e for l_, e in zip(lw, err))
        lw = [l_ * e / tot for l_, e in zip(lw, err)]
    return c


def chebyshev_nodes(R, n=100):
    """n Chebyshev points of [-R, R]: the fit's sample."""
    return [R * mp.cos(mp.pi * (j + 0.5) / n) for j in range(n)]


def horner(cf, x):
    """The polynomial with coefficients cf (lowest order first) at x, in mpmath."""
    p = mp.mpf(0)
    for c in reversed(cf):
        p = p * x + mp.mpf(c)
    return p


def worst_relative(R, exact, approx, n=800):
    """max |approx / exact - 1| over n + 1 evenly spaced points of [-R, R] (0 left out)."""
    w = mp.mpf(0)
    for j in range(n + 1):
        x = mp.mpf(R) * (2 * mp.mpf(j) / n - 1)
        if x != 0:
            w = max(w, abs(approx(x) / exact(x) - 1))
    return w
