"""Coefficient tables of csrc/simd_math_gelu32.h (float32 gelu_erf, AVX-512 form; issue 14
item 2). Prints the header's table block.

  G     G(a) = Q(a) e^(a^2/2), Q the upper normal tail: 32 pieces, eighth octaves of a + 1
        on [0, 15) (the header indexes them by bits(a + 1) >> 20: tables rotated by
        1016 mod 32 = 24), degree 4, expanded about points near each piece's middle
        where G / C is a float to 2^-12 of its ulp (Gal's accurate tables, as fit_erf.py),
        so c0 carries no rounding the other coefficients cannot absorb (a rounded c0 gave
        7e-8 here, this 6.1e-8, the fit's own limit in the widest pieces); c1..c4 fitted
        (relative weight) and rounded to float one at a time, lowest first. Degree 4 on
        eighth octaves costs what degree 5 on quarter octaves would less one lookup and one
        FMA, and is as accurate (6e-8 against 8e-8).
  C     the table of the exponent's 2^(j/16) holds C 2^(j/16) rounded, C in [1, 2) searched so
        that the 16 floats are nearest their values; G's pieces fit G / C (see exp2_scale).
  exp   e^(R/2) = 1 + R p(R), p = 1/2 + c1 R + c2 R^2, on |R| <= ln2/16 (+ the slack of the
        rounded exponent), R = 2r after the reduction by multiples of ln2/16 (the 2^(j/16)
        table); relative weight.

Lawson-weighted least squares (tools/fit_erf.py's, towards minimax) in float64 against
mpmath values. Usage: python tools/fit_gelu_erf32.py   (a few seconds)
"""
import math
import os
import sys

import mpmath as mp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_erf import emit, f32, fit_rounded, grid, hexf, mp_G  # noqa: E402


def exp2_scale():
    """The scale C in [1, 2) at which the 16 floats nearest C 2^(j/16) are nearest their
    values (max relative error 1.6e-8 instead of 4.7e-8 for C = 1): the table holds those,
    G's pieces are fitted to G / C, so the product is unchanged and one rounding (of half
    an ulp) is mostly gone. A search over C = 1 + i 2^-23."""
    b = 2.0 ** (np.arange(16) / 16)
    best = (1.0, 1.0)
    for s in range(0, 1 << 23, 1 << 20):
        C = 1.0 + np.arange(s, s + (1 << 20)) * 2.0 ** -23
        T = C[:, None] * b[None, :]
        e = (np.abs(T.astype(np.float32).astype(np.float64) - T) / T).max(1)
        i = int(np.argmin(e))
        if e[i] < best[0]:
            best = (float(e[i]), float(C[i]))
    return best[1], best[0]


def gal_mid(lo, hi, C):
    """The float nearest the centre of [lo, hi) at which G / C is a float to 2^-12 ulp (as
    tools/fit_erf.py's gal_mid, within the middle 40% of the piece)."""
    m0 = np.array([(lo + hi) / 2], np.float32).view(np.int32)[0]
    best = None
    for j in range(1 << 15):
        for sgn in (1, -1):
            m = float(np.array([m0 + sgn * j], np.int32).view(np.float32)[0])
            if not lo + 0.3 * (hi - lo) <= m <= hi - 0.3 * (hi - lo):
                continue
            g = 0.5 * math.erfc(m / math.sqrt(2)) * math.exp(m * m / 2) / C
            dd = abs(g - f32(g)) / float(np.spacing(np.float32(g)))
            if best is None or dd < best[0]:
                best = (dd, m)
            if dd < 2 ** -12:
                return m
    return best[1]


def G_tables(C, d=4, cap=14.6, n=800):
    parts, lo = [], 1.0
    for _ in range(32):
        step = 2.0 ** math.floor(math.log2(lo)) / 8
        parts.append((lo - 1, min(lo + step - 1, cap)))
        lo += step
    T = {k: [] for k in ["mid"] + ["c%d" % k for k in range(d + 1)]}
    worst = 0.0
    for lo, hi in parts:
        mid = gal_mid(lo, hi, C)
        c0 = f32(mp_G(mid) / C)
        a = grid(lo, hi, n)
        y = np.array([float(mp_G(t) / C) for t in a])
        v = a - mid
        cs = [c0] + fit_rounded(y - c0, 1 / y, v, list(range(1, d + 1)))
        p = sum(c * v ** k for k, c in enumerate(cs))
        worst = max(worst, np.max(np.abs(p - y) / y))
        T["mid"].append(mid)
        for k in range(d + 1):
            T["c%d" % k].append(cs[k])
    head = ("/* sm_g32_t: G / C (C = %.17g) in 32 pieces (eighth octaves of a + 1 on [0, 15), rotated by 1016 "
            "mod 32 = 24: the index is bits(a + 1) >> 20), degree %d, relative error (exact "
            "arithmetic) %.2e */" % (C, d, worst))
    return emit("sm_g32_t", T, head, 1016 % 32), worst


def exp_poly(slack=1.02):
    rmax = math.log(2) / 16 * slack
    R = grid(-rmax, rmax, 2000)
    R = R[R != 0]
    e = np.array([float(mp.exp(mp.mpf(t) / 2)) for t in R])
    y = np.array([float((mp.exp(mp.mpf(t) / 2) - 1) / mp.mpf(t)) for t in R]) - 0.5
    c1, c2 = fit_rounded(y, np.abs(R) / e, R, [1, 2])
    err = np.max(np.abs(1 + R * (0.5 + c1 * R + c2 * R * R) - e) / e)
    return c1, c2, err


if __name__ == "__main__":
    mp.mp.prec = 120
    C, ce = exp2_scale()
    tab, gw = G_tables(C)
    c1, c2, ew = exp_poly()
    T2 = [f32(C * 2.0 ** (j / 16)) for j in range(16)]
    sys.stdout.write(tab + "\n")
    sys.stdout.write("/* C 2^(j/16), j = 0..15, rounded to float (relative error %.2e) */\n" % ce)
    sys.stdout.write("static const float sm_g32_exp2t[16] = {\n")
    for j in range(0, 16, 8):
        sys.stdout.write("    " + ", ".join(hexf(x) for x in T2[j:j + 8]) + ("," if j < 8 else "};") + "\n")
    sys.stdout.write("/* e^(R/2) = 1 + R (1/2 + c1 R + c2 R^2) on |R| <= ln2/16: c1 = %s, c2 = %s, "
                     "relative error %.2e */\n" % (hexf(c1), hexf(c2), ew))
