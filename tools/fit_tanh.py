"""Coefficient tables of csrc/simd_math_tanh.h (float32 tanh; issue 14 item 2).

16 pieces indexed like simd_math_erf.h's G tables: quarter octaves of a + 1 (a = |x|), piece
j covering a + 1 in [2^(j/4) (1 + (j%4)/4), ... + 2^(j/4)/4), the header reading the piece
from bits(a + 1) >> 21 (tables rotated by 508 mod 16). a is clamped to 9.02 (tanh rounds
to 1 in float beyond 9.011), so pieces 14 and 15 are never reached (filled with piece 13).
tanh a = c0 + v q(v), v = a - mid, c0 = tanh(mid), mid chosen near the piece's centre where tanh is a float to
2^-12 of its ulp (piece 0: mid = c0 = 0, so the result is v q(v), relative near 0). Each piece's q is
fitted with tools/fit_erf.py's Lawson least squares and float rounding, lowest order first.

Usage: python tools/fit_tanh.py [degree]   (prints the table block; a few seconds)
"""
import importlib.util
import os
import sys

import mpmath as mp
import numpy as np

_spec = importlib.util.spec_from_file_location(
    "fit_erf", os.path.join(os.path.dirname(os.path.abspath(__file__)), "fit_erf.py"))
fe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fe)

CLAMP = 9.02


def piece(j):
    e, q = divmod(j, 4)
    lo = 2.0 ** e * (1 + q / 4) - 1
    return lo, lo + 2.0 ** e / 4


def accurate_mid(lo, hi):
    """The float nearest the centre of [lo, hi) at which tanh is a float to 2^-12 of its ulp
    (Gal's accurate tables: c0 then carries no rounding error of its own)."""
    m0 = np.array([(lo + hi) / 2], np.float32).view(np.int32)[0]
    best = None
    for j in range(1 << 16):
        for sgn in (1, -1):
            m = float(np.array([m0 + sgn * j], np.int32).view(np.float32)[0])
            if not lo + 0.3 * (hi - lo) <= m <= hi - 0.3 * (hi - lo):
                continue
            t = np.tanh(m)                          # float64: enough to 2^-12 of a float ulp
            d = abs(t - fe.f32(t)) / float(np.spacing(np.float32(t)))
            if best is None or d < best[0]:
                best = (d, m)
            if d < 2 ** -12:
                return m
    return best[1]


def tables(d):
    T = {k: [] for k in ["mid", "c0"] + ["c%d" % k for k in range(1, d + 1)]}
    worst = 0.0
    for j in range(14):
        lo, hi = piece(j)
        hi = min(hi, CLAMP + 0.01)
        a = fe.grid(lo, hi)
        a = a[a > 0]
        y = np.array([float(mp.tanh(mp.mpf(t))) for t in a])
        mid = 0.0 if j == 0 else accurate_mid(lo, hi)
        c0 = 0.0 if j == 0 else fe.f32(mp.tanh(mp.mpf(mid)))
        v = a - mid
        cs = fe.fit_rounded(y - c0, 1 / y, v, list(range(1, d + 1)))
        p = c0 + sum(c * v ** (k + 1) for k, c in enumerate(cs))
        worst = max(worst, float(np.max(np.abs(p - y) / y)))
        T["mid"].append(mid)
        T["c0"].append(c0)
        for k in range(1, d + 1):
            T["c%d" % k].append(cs[k - 1])
    for k in T:                                   # pieces 14, 15: never reached
        T[k] += [T[k][-1]] * 2
    return T, worst


def emit(T, d, worst):
    out = ["/* sm_tanh_t: 16 pieces (quarter octaves of |x| + 1), degree %d, max relative "
           "error (exact arithmetic) %.2e; tables rotated by 508 mod 16 */" % (d, worst)]
    for k, vals in T.items():
        rot = [vals[(i - 12) % 16] for i in range(16)]      # position (508 + j) % 16 = j + 12
        body = ", ".join(float(v).hex() + "f" if v else "0.0f"
                         for v in rot)
        out.append("static const float sm_tanh_t_%s[16] = {%s};" % (k, body))
    return "\n".join(out)


if __name__ == "__main__":
    deg = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    T, worst = tables(deg)
    print(emit(T, deg, worst))
