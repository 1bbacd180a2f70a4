"""Tables and polynomials of the float32 log2 / log1p kernels (csrc/simd_math_log32.h).

x = 2^e z with z in [1, 2), the piece j = the top 4 mantissa bits (16 pieces, 1/16 wide).
Each piece has invc = J/32 (J an integer) with |z invc - 1| < 2^-4 over the whole piece:
then r = z invc - 1 is a multiple of 2^-28 below 2^-4 (24 bits), exact in one FMA. The
first piece takes invc = 1 and the last 1/2 (J = 32, 16), so that around x = 1 the result
is log(1 + r) alone; the others the J of least max |r| (|r| <= 0.039; the first piece's
r reaches 0.0625). log z = -log(invc) + log(1 + r), the first from the table as lh (a
multiple of 2^-16, so that e + lh (log2) or e ln2hi + lh (log) is exact) and ll.

log(1 + r) on r in [-0.039, 0.0625]: r + r^2 q(r) (natural), and for log2 r/ln2 + r^2 q2(r);
q, q2 of degree 3, fitted here (least squares on Chebyshev nodes in float64 after a series
for the reference, iterated with weights toward minimax, rounded to float one coefficient
at a time with the rest refitted). The header takes r/ln2 as r * float(1/ln2) (measured:
0.75 ulp over every input, 5% faster than carrying the low part).

Run: python tools/fit_log32.py  (prints the C tables).
"""
import math
from fractions import Fraction

import mpmath
import numpy as np

mpmath.mp.prec = 120
RMAX = 2.0 ** -5      # |r| < 2 RMAX: exact for z in [1, 2) and invc = J/32


def pieces():
    """16 pieces of [1, 2), 1/16 wide; invc = J/32 with |z invc - 1| < 2^-4 over the piece
    (r is then a multiple of 2^-28 below 2^-4: exact); the pieces at 1 and 2 take invc = 1
    and 1/2 (log z - log(1/invc) relative there), the others the J of least max |r|."""
    out = []
    for j in range(16):
        lo = 1 + Fraction(j, 16)
        hi = lo + Fraction(1, 16) - Fraction(1, 1 << 23)
        cands = [32] if j == 0 else [16] if j == 15 else range(14, 40)
        best = None
        for J in cands:
            ic = Fraction(J, 32)
            m = max(abs(lo * ic - 1), abs(hi * ic - 1))
            if m < 2 * RMAX and (best is None or m < best[0]):
                best = (m, J)
        assert best, j
        rlo = min(lo * Fraction(best[1], 32) - 1, hi * Fraction(best[1], 32) - 1)
        out.append((j, lo, hi, best[1], float(best[0]), float(rlo)))
    return out


def split16(v):
    h = mpmath.nint(v * 65536) / 65536
    return float(h), float(np.float32(float(v - h)))


def q_ref(r, base2):
    # (log(1+r) - r) / r^2 (natural) or (log2(1+r) - r/ln2) / r^2 (same over ln 2)
    s = sum((-1) ** (n + 1) * r ** (n - 2) / n for n in range(2, 30))
    return s / math.log(2) if base2 else s


def fit(base2, rlo, rhi, deg=3):
    n = 400
    t = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    r = rlo + (rhi - rlo) * (t + 1) / 2
    y = np.array([q_ref(v, base2) for v in r])
    w = np.ones(n)
    coef = None
    for _ in range(40):
        A = np.vander(r, deg + 1, increasing=True) * r[:, None] ** 2 * w[:, None]
        coef = np.linalg.lstsq(A, y * r * r * w, rcond=None)[0]
        e = np.abs(np.vander(r, deg + 1, increasing=True) @ coef - y) * r * r
        w = w * (e / e.max()) ** 0.3 + 1e-12
    # float rounding, one at a time, refit the rest
    fixed = []
    for i in range(deg + 1):
        A = np.vander(r, deg + 1, increasing=True) * r[:, None] ** 2
        rest = y * r * r - sum(c * A[:, k] for k, c in enumerate(fixed))
        c = np.linalg.lstsq(A[:, i:], rest, rcond=None)[0]
        fixed.append(float(np.float32(c[0])))
    e = np.abs(np.vander(r, deg + 1, increasing=True) @ np.array(fixed) - y) * r * r
    return fixed, (e / np.abs(r)).max()


def hexf(v):
    if v == 0:
        return "0.0f"
    m, e = float(np.float32(v)).hex().split("p")
    m = m.rstrip("0").rstrip(".")
    return f"{m}p{e}f"


def main():
    ps = pieces()
    rmax = max(m for _, _, _, _, m, _ in ps)
    rmin = min(rl for *_, rl in ps)
    print("/* pieces: j, [lo, hi], J, max|r| */")
    for j, lo, hi, J, m, rlo in ps:
        print(f"/* {j:2d} [{float(lo):.6f}, {float(hi):.6f}] J={J} |r|<={m:.5f} */")
    for base2, name in ((True, "l2"), (False, "ln")):
        inv = [float(Fraction(J, 32)) for _, _, _, J, _, _ in ps]
        L = [-(mpmath.log(mpmath.mpf(J) / 32, 2) if base2 else mpmath.log(mpmath.mpf(J) / 32))
             for _, _, _, J, _, _ in ps]
        hl = [split16(v) for v in L]
        fmt = lambda xs: ", ".join(hexf(v) for v in xs)
        print(f"static const float sm_{name}_t_lh[16] = {{{fmt([h for h, _ in hl])}}};")
        print(f"static const float sm_{name}_t_ll[16] = {{{fmt([l for _, l in hl])}}};")
        if base2:
            print(f"static const float sm_log32_t_invc[16] = {{{fmt(inv)}}};")
        for deg in (2, 3):
            c, err = fit(base2, rmin, rmax, deg)
            print(f"/* {name} q deg {deg}: {', '.join(hexf(v) for v in c)}  max |err|/|r| {err:.3e} = 2^{math.log2(err):.1f} */")


if __name__ == "__main__":
    main()
