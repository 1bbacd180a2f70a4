"""Tables and polynomials of the float32 log2 / log1p kernels (csrc/simd_math_log32.h).

x = 2^k z with z in [0.75, 1.5) (the bits of x minus those of 0.75: k = the exponent field,
the next 5 bits = the piece j, 32 pieces: 1/64 wide below 1, 1/32 above). Each piece has
invc = J/32 (J an integer) chosen so that |z invc - 1| < 2^-5 over the whole piece: then
r = z invc - 1 is a multiple of 2^-29 below 2^-5 (24 bits), exact in one FMA. log z =
-log(invc) + log(1 + r), the first from the table as hi (a multiple of 2^-16, so that
k + hi (log2) or k ln2hi + hi (log) is exact) and lo.

log(1 + r) on |r| < 2^-5: r + r^2 q(r) (natural), and for log2 r/ln2 = r ivl2hi + r ivl2lo
with r^2 q2(r); q, q2 of degree 3, fitted here (least squares on Chebyshev nodes in
float64 after a series for the reference, iterated with weights toward minimax, rounded to
float one coefficient at a time with the rest refitted).

Run: python tools/fit_log32.py  (prints the C tables).
"""
import math
from fractions import Fraction

import mpmath
import numpy as np

mpmath.mp.prec = 120
RMAX = 2.0 ** -5


def pieces():
    out = []
    for j in range(32):
        lo = Fraction(3, 4) + Fraction(j, 64) if j < 16 else 1 + Fraction(j - 16, 32)
        ulp = Fraction(1, 1 << 24) if j < 16 else Fraction(1, 1 << 23)
        hi = (lo + Fraction(1, 64) if j < 16 else lo + Fraction(1, 32)) - ulp
        best = None
        for J in range(16, 50):
            ic = Fraction(J, 32)
            m = max(abs(lo * ic - 1), abs(hi * ic - 1))
            lim = RMAX if j < 16 else 2 * RMAX     # z >= 1: z is a multiple of 2^-23
            if m < lim and (best is None or m < best[0]):
                best = (m, J)
        assert best, j
        out.append((j, lo, hi, best[1], float(best[0])))
    return out


def split16(v):
    h = mpmath.nint(v * 65536) / 65536
    return float(h), float(np.float32(float(v - h)))


def q_ref(r, base2):
    # (log(1+r) - r) / r^2 (natural) or (log2(1+r) - r/ln2) / r^2 (same over ln 2)
    s = sum((-1) ** (n + 1) * r ** (n - 2) / n for n in range(2, 30))
    return s / math.log(2) if base2 else s


def fit(base2, rmax, deg=3):
    n = 400
    t = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    r = t * rmax
    y = np.array([q_ref(v, base2) for v in r])
    w = np.ones(n)
    coef = None
    for _ in range(30):
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
    rmax = max(m for *_, m in ps) * 1.01
    print("/* pieces: j, [lo, hi], J, max|r| */")
    for j, lo, hi, J, m in ps:
        print(f"/* {j:2d} [{float(lo):.6f}, {float(hi):.6f}] J={J} r<={m:.5f} */")
    for base2, name in ((True, "l2"), (False, "ln")):
        inv = [float(Fraction(J, 32)) for _, _, _, J, _ in ps]
        inv = inv[16:] + inv[:16]
        L = [-(mpmath.log(mpmath.mpf(J) / 32, 2) if base2 else mpmath.log(mpmath.mpf(J) / 32))
             for _, _, _, J, _ in ps]
        # pieces below 1 (z = x 2^-(E+1) with E = floor(log2 x)): the table carries the 1 (ln 2),
        # so that hi = E + lh for every piece; rotated by 16 (index: the bits of z >> 18)
        L = [v + ((1 if base2 else mpmath.log(2)) if j < 16 else 0) for j, v in enumerate(L)]
        L = L[16:] + L[:16]
        hl = [split16(v) for v in L]
        fmt = lambda xs: ", ".join(hexf(v) for v in xs)
        print(f"static const float sm_{name}_t_lh[32] = {{{fmt([h for h, _ in hl])}}};")
        print(f"static const float sm_{name}_t_ll[32] = {{{fmt([l for _, l in hl])}}};")
        if base2:
            print(f"static const float sm_log32_t_invc[32] = {{{fmt(inv)}}};")
        for deg in (2, 3):
            c, err = fit(base2, rmax, deg)
            print(f"/* {name} q deg {deg}: {', '.join(hexf(v) for v in c)}  max |err|/|r| {err:.3e} = 2^{math.log2(err):.1f} */")


if __name__ == "__main__":
    main()
